"""How often the clamp of `implicit_moments` acts while a model trains on Fashion-MNIST.

A variance computed without forming the votes is clamped at zero before eps is added (a sum of squares is not
negative; rounding in float32 can make the rearranged sum so). This trains the Fashion-MNIST model of
`nbs/03b_fashion_mnist_routings.ipynb` (16 parts, 2 iterations, peak rate 1e-2, 3-epoch schedule, seed 0) for its
first epoch and counts the variances the clamp raised from below zero (it watches the one `clamp` call inside
`implicit_moments`), for each routing named (em and heinsen: the two routings that use implicit_moments).
Both routes compute in float64 since 2026-11-25; `--float32` routes them in float32, as before. The counts depend on
the features the route sums: bench/results/clamp_count.md was measured with features holding both orders of each pair
of pose columns (the route the committed EM runs trained with; the code of 83f3fd7 and before); since 47bf5a0 they
hold each pair once, and the same command gives bench/results/clamp_count_float32_pairs_once.md. Tables measured
since name their commit.

    OMP_NUM_THREADS=1 python bench/clamp_count.py em heinsen --float32 --threads 1 --out bench/results/clamp_count_float32_pairs_once.md
    OMP_NUM_THREADS=1 python bench/clamp_count.py em heinsen --threads 1 --out bench/results/clamp_count_float64.md
"""
import argparse, platform, shlex, subprocess, sys, torch, warnings
from datetime import datetime, timezone
from pathlib import Path
from capsule_routing.core import import_fastai_quietly
import_fastai_quietly()   # fastai's import raises torch's torch.jit.script notice; hidden for that import only
from fastai.callback.core import Callback, CancelFitException
import capsule_routing.routing as routing, capsule_routing.lineage as lineage
from capsule_routing.training import capsule_learner, fit_paper, OPTIMIZERS, set_seed
from capsule_routing.vision import fashion_mnist_dataloaders, fashion_mnist_capsnet, load_fashion_mnist
from routing_benchmark import at_least, make_out_folder   # bench/, this script's folder

def count_clamps(routing_name, data, steps, float32=False):
    "Train `routing_name`'s model for `steps` steps; the counts of the variances `implicit_moments` clamped from below zero."
    counts = dict(calls=0, variances=0, clamped=0, calls_with_any=0)
    moments, clamp = routing.implicit_moments, torch.Tensor.clamp
    def watched_clamp(x, *args, **kwargs):   # implicit_moments clamps once: its variances before eps is added
        n = int((x < 0).sum())
        counts.update(calls=counts['calls'] + 1, variances=counts['variances'] + x.numel(),
                      clamped=counts['clamped'] + n, calls_with_any=counts['calls_with_any'] + (n > 0))
        return clamp(x, *args, **kwargs)
    def counted(*args, **kwargs):
        torch.Tensor.clamp = watched_clamp
        try: return moments(*args, **kwargs)
        finally: torch.Tensor.clamp = clamp
    routing.implicit_moments = lineage.implicit_moments = counted   # the names the two routes call
    in_float64 = routing.route_with_implicit_votes_in_float64, lineage.route_by_em_with_implicit_votes_in_float64
    if float32:   # the routes as the layers call them, without their float64 wrappers
        routing.route_with_implicit_votes_in_float64 = routing.route_with_implicit_votes
        lineage.route_by_em_with_implicit_votes_in_float64 = lineage.route_by_em_with_implicit_votes
    class Stop(Callback):
        def after_batch(self):
            if self.training and self.learn.train_iter >= steps: raise CancelFitException
    try:
        set_seed(0, reproducible=True); torch.set_flush_denormal(True)
        dls, _ = fashion_mnist_dataloaders(Path(data), bs=20, device='cpu')
        model = fashion_mnist_capsnet(n_iters=2, n_parts=16, routing=routing_name)
        out = Path('/tmp/clamp_count')/routing_name
        learn = capsule_learner(dls, model, device=torch.device('cpu'), path=out, model_dir='.', opt_func=OPTIMIZERS['paper_radam'], pad=2)
        fit_paper(learn, 3, lr_max=1e-2, lr_min=1e-5, ckpt_dir=out, show_progress=False, cbs=[Stop()])
    finally:
        routing.implicit_moments = lineage.implicit_moments = moments
        routing.route_with_implicit_votes_in_float64, lineage.route_by_em_with_implicit_votes_in_float64 = in_float64
    return counts

def commit() -> str:
    "The checkout's commit, marked `+changes` when tracked files differ from it"
    git = lambda *a: subprocess.run(['git', *a], capture_output=True, text=True, cwd=Path(__file__).parent).stdout.strip()
    return (git('rev-parse', '--short', 'HEAD') or 'unknown') + ('+changes' if git('status', '--porcelain', '--untracked-files=no') else '')

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('routings', nargs='+', choices=['heinsen', 'em'])
    p.add_argument('--data', default='../shared/data/fashion-mnist')
    p.add_argument('--steps', type=at_least(1), default=2750, help='training steps to count over (an epoch: 2,750)')
    p.add_argument('--threads', type=at_least(1), default=1)
    p.add_argument('--out', default=None, help='a markdown file to write the table to')
    p.add_argument('--float32', action='store_true', help='route in float32, as the library did before 2026-11-25')
    args = p.parse_args()
    try: load_fashion_mnist(args.data, verify=False)   # before the first run, as one line rather than a traceback
    except (FileNotFoundError, ValueError) as e: p.error(f'argument --data: {e}')
    make_out_folder(args.out)
    warnings.filterwarnings('ignore'); torch.set_num_threads(args.threads)
    lines = [f'Variances clamped from below zero by `implicit_moments` while the Fashion-MNIST model of 03b (16 parts, '
             f'2 iterations, peak rate 1e-2, 3-epoch schedule, seed 0) trains for {args.steps:,} steps at batch 20 on the CPU '
             f'({platform.processor() or platform.machine()}, {args.threads} thread{"s" if args.threads > 1 else ""}), '
             f'torch {torch.__version__}, the routes computed in {"float32" if args.float32 else "float64"}. '
             f'Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC at commit {commit()} by '
             f'`python bench/clamp_count.py {shlex.join(sys.argv[1:])}`.', '',   # as given: its defaults (--steps, --data) may change
             '| routing | variances clamped | variances | share | calls with a clamped variance | calls |', '|---|---|---|---|---|---|']
    for name in args.routings:
        c = count_clamps(name, args.data, args.steps, args.float32)
        print(f"{name}: {c['clamped']:,} of {c['variances']:,} variances clamped from below zero "
              f"({100 * c['clamped'] / c['variances']:.3f}%), in {c['calls_with_any']:,} of {c['calls']:,} calls "
              f"of implicit_moments, over {args.steps:,} training steps", flush=True)
        lines.append(f"| {name} | {c['clamped']:,} | {c['variances']:,} | {100 * c['clamped'] / c['variances']:.3f}% | "
                     f"{c['calls_with_any']:,} | {c['calls']:,} |")
    if args.out: Path(args.out).write_text('\n'.join(lines) + '\n')

if __name__ == '__main__': main()
