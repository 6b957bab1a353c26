"""Speed and memory of `Routing` against the literal transcription `route_by_the_equations`.

Where `Routing` routes without forming the votes (`uses_implicit_votes`), its step-by-step kernels (which form them)
are timed too, as the middle column; elsewhere that column repeats `Routing`'s own figures.

Forward + backward at the paper's shapes, each measurement in a fresh process (so peak memory is that of one
configuration alone), plus a check that both give the same outputs and gradients.

    python bench/routing_benchmark.py                 # all shapes, CPU (and GPU if there is one)
    python bench/routing_benchmark.py --shapes sst_1  # one shape
    python bench/routing_benchmark.py --out bench/results/routing_cpu.md

On the CPU, subnormal floats are flushed to zero (`torch.set_flush_denormal(True)`), as `train_main` does when it
trains there: x86 computes with them many times slower, and how many a pass meets depends on the random parameters.
At smallnorb_1 `Routing` took 1.6 times as long with them kept (1.495 s against 0.942 s, one thread,
bench/results/subnormals_kept_routing_cpu_1thread.md), traced to the second iteration's E-step, where two outputs'
log f(a_out) of -701 to -727 put all their routing probabilities below float64's smallest normal number, e^-708.
`--keep_subnormals` measures with them kept.

Peak memory: on the CPU, the peak resident set over the warm-up and measured steps less the resident set before
them (inputs and parameters already allocated; Linux /proc); on a GPU, torch.cuda.max_memory_allocated during the steps.
"""
import argparse, json, os, platform, statistics, subprocess, sys, time
import torch
from capsule_routing.routing import Routing, route_by_the_equations, uses_implicit_votes

SHAPES = {  # name: (batch, n_inp, n_out, d_cov, d_inp, d_out, n_inp_fixed)
    'smallnorb_1': (20, 5184, 64, 4, 4, 4, False),   # 64 parts x 81 positions -> 64 parts
    'smallnorb_2': (20, 64, 5, 4, 4, 4, True),       # 64 parts -> 5 classes
    'sst_1':       (20, 925, 64, 1, 64, 2, False),   # 25 tokens x 37 depths -> 64 parts
}

def make(shape, device, seed=0, batch=None):
    b, n_inp, n_out, c, d, h, fixed = SHAPES[shape]
    b = batch or b
    torch.manual_seed(seed)
    layer = Routing(c, d, h, n_inp=n_inp if fixed else -1, n_out=n_out).to(device)
    with torch.no_grad():   # nonzero betas and biases, so every term of the algorithm matters
        for p in (layer.beta_use, layer.beta_ign, layer.B): p.normal_(0, 0.5)
    a_inp = torch.randn(b, n_inp, device=device, requires_grad=True)
    mu_inp = torch.randn(b, n_inp, c, d, device=device, requires_grad=True)
    return layer, a_inp, mu_inp

def step(impl, layer, a_inp, mu_inp):
    if impl in ('Routing', 'step'):   # 'step': the step-by-step kernels, votes formed even where Routing would not
        layer.implicit_votes = impl == 'Routing'
        out = layer(a_inp, mu_inp)
    else: out = route_by_the_equations(a_inp, mu_inp, layer.W, layer.B, layer.beta_use, layer.beta_ign, layer.n_iters)[:3]
    loss = sum(o.float().mul(torch.linspace(-1, 1, o.numel(), device=o.device).view_as(o)).sum() for o in out)
    loss.backward()
    return out

def _status_kib(field):
    for line in open('/proc/self/status'):
        if line.startswith(field + ':'): return int(line.split()[1])

def reset_peak_rss():
    "Reset the process's peak resident set (Linux: write 5 to /proc/self/clear_refs); return the current one, bytes"
    with open('/proc/self/clear_refs', 'w') as f: f.write('5')
    return _status_kib('VmRSS') * 1024

def peak_rss(): return _status_kib('VmHWM') * 1024

def time_and_peak(run_step, tensors, device, repeats):
    "Median seconds of `run_step()` after a warm-up (the grads of `tensors` cleared before each), and the growth of peak memory in MiB"
    sync = torch.cuda.synchronize if device == 'cuda' else (lambda: None)
    if device == 'cuda': torch.cuda.reset_peak_memory_stats(); base = torch.cuda.memory_allocated()
    else: base = reset_peak_rss()                                  # inputs and parameters already allocated
    run_step(); sync()                                             # warm-up
    times = []
    for _ in range(repeats):
        for t in tensors: t.grad = None
        sync(); t0 = time.perf_counter(); run_step(); sync(); times.append(time.perf_counter() - t0)
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20 if device == 'cuda' else (peak_rss() - base) / 2**20
    return dict(seconds=statistics.median(times), peak_mib=peak)

def measure(impl, shape, device, repeats):
    "Runs in a child process: median seconds of forward+backward, and peak memory in MiB"
    layer, a_inp, mu_inp = make(shape, device)
    return time_and_peak(lambda: step(impl, layer, a_inp, mu_inp), (a_inp, mu_inp, *layer.parameters()), device, repeats)

def agreement(shape, device):
    "Largest relative difference between Routing and the literal equations, over outputs and all gradients, in float64 (batch 4)"
    results = []
    for impl in ('Routing', 'literal'):
        layer, a_inp, mu_inp = make(shape, device, batch=4)
        layer.double(); a_inp, mu_inp = [t.detach().double().requires_grad_() for t in (a_inp, mu_inp)]
        out = step(impl, layer, a_inp, mu_inp)
        results.append([o.detach() for o in out] + [a_inp.grad, mu_inp.grad] + [p.grad for p in layer.parameters()])
    return max_rel_diff(zip(*results))

def max_rel_diff(pairs) -> float:
    "Largest of |x - y|.max() / |y|.max() over pairs of tensors: nan if any is (Python's `max(worst, nan)` keeps `worst`)"
    rel = lambda x, y: (x - y).abs().max() / y.abs().max().clamp_min(torch.finfo(y.dtype).tiny)   # two zero tensors agree: 0
    return torch.stack([rel(x, y).double().cpu() for x, y in pairs]).max().item()   # torch's max propagates nan

def as_training_on(device, keep_subnormals=False):
    "In a child process: flush subnormal floats to zero on the CPU, as `train_main` does when it trains there"
    if device == 'cpu' and not keep_subnormals: torch.set_flush_denormal(True)

def child(args):
    as_training_on(args.device, args.keep_subnormals)
    print(json.dumps(measure(args.child_impl, args.child_shape, args.device, args.repeats)))

def run_in_child(script, child_args:list, device, repeats, keep_subnormals=False) -> dict:
    "Run `script` with `child_args` in a fresh process (so its peak memory is its own) with this process's threads and the common options; the JSON it prints last"
    cmd = [sys.executable, script, *child_args, '--device', device, '--repeats', str(repeats), '--threads', str(torch.get_num_threads())]
    return json.loads(run_script(cmd + (['--keep_subnormals'] if keep_subnormals else [])).strip().splitlines()[-1])

def run_script(cmd:list) -> str:
    "What `cmd` prints; if it fails, exit with the end of its stderr (its own error, which its captured output would hide)"
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        tail = '\n'.join(p.stderr.strip().splitlines()[-15:])
        sys.exit(f"a measurement failed (exit status {p.returncode}): {' '.join(cmd)}\n{tail}")
    return p.stdout

def run_child(impl, shape, device, repeats, keep_subnormals=False):
    return run_in_child(__file__, ['--child-impl', impl, '--child-shape', shape], device, repeats, keep_subnormals)

def at_least(minimum:int):
    "An argparse type: a whole number no smaller than `minimum` (a count of repeats, steps or outputs)"
    def whole_number(text):
        n = int(text)
        if n < minimum: raise argparse.ArgumentTypeError(f'expected a whole number of at least {minimum}, got {n}')
        return n
    return whole_number

def device_name(text):
    "An argparse type: 'cpu', or 'cuda' where there is a GPU (the timing and the peak memory know these two)"
    if text not in ('cpu', 'cuda'): raise argparse.ArgumentTypeError(f"expected 'cpu' or 'cuda', got {text!r}")
    if text == 'cuda' and not torch.cuda.is_available(): raise argparse.ArgumentTypeError("'cuda' given, but torch sees no GPU")
    return text

def make_out_folder(out):
    "Make the folder of `--out` before measuring, so that a table is not lost at the end for want of it"
    if out: os.makedirs(os.path.dirname(out) or '.', exist_ok=True)

def benchmark_parser(doc, shapes):
    "The options every routing benchmark takes: shapes, devices, repeats, threads, the table's file and note, a child's device"
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--shapes', nargs='+', default=list(shapes), choices=list(shapes))
    p.add_argument('--devices', nargs='+', type=device_name, default=['cpu'] + (['cuda'] if torch.cuda.is_available() else []))
    p.add_argument('--repeats', type=at_least(1), default=3)
    p.add_argument('--threads', type=at_least(1), default=None, help='torch threads (default: torch\'s choice)')
    p.add_argument('--out', help='also write the markdown table to this file')
    p.add_argument('--note', default='', help='context to print with the table: when, on what, under what load')
    p.add_argument('--keep_subnormals', action='store_true', help='on the CPU, compute with subnormal floats (default: flushed to zero, as training does)')
    p.add_argument('--child-shape'); p.add_argument('--device', type=device_name, default='cpu')
    return p

def subnormals_note(keep_subnormals):
    return 'subnormal floats kept on the CPU' if keep_subnormals else 'subnormal floats flushed to zero on the CPU, as in training'

def shape_label(shape, shapes, dev_name):
    "A table's first column: name, device, batch x inputs [capsule] -> outputs [capsule], * for a variable number of inputs"
    b, n_inp, n_out, c, d, h, fixed = shapes[shape]
    return f"{shape} ({dev_name}): {b} x {n_inp}{'' if fixed else '*'} [{c}x{d}] -> {n_out} [{c}x{h}]"

def write_table(lines, out):
    "The table's lines to `out` (its folder made by `make_out_folder` before measuring)"
    open(out, 'w').write('\n'.join(lines) + '\n')

def main():
    p = benchmark_parser(__doc__, SHAPES)
    p.add_argument('--child-impl')
    args = p.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    if args.child_impl: return child(args)
    make_out_folder(args.out)
    threads = torch.get_num_threads()
    lines = [f"Forward + backward, 3 routing iterations, float32 inputs, median of {args.repeats} after a warm-up "
             "(shapes: batch x inputs [capsule] -> outputs [capsule], * a variable number of inputs; peak memory growth in MiB; "
             "last column: largest relative difference of outputs and gradients, float64, batch 4); "
             f"torch {torch.__version__}, {platform.processor() or platform.machine()}, {threads} thread{'s' if threads != 1 else ''}, "
             f"{subnormals_note(args.keep_subnormals)}." + (f" {args.note}" if args.note else ''), "",
             "| shape | literal s | step by step s | Routing s | speed-up | literal MiB | step by step MiB | Routing MiB | memory | max rel. diff. |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    print('\n'.join(lines), flush=True)
    for device in args.devices:
        dev_name = 'cpu' if device == 'cpu' else torch.cuda.get_device_name()
        for shape in args.shapes:
            b, n_inp, n_out, c, d, h, fixed = SHAPES[shape]
            lit, fast = run_child('literal', shape, device, args.repeats, args.keep_subnormals), run_child('Routing', shape, device, args.repeats, args.keep_subnormals)
            layer = make(shape, 'cpu', batch=1)[0]
            stepwise = run_child('step', shape, device, args.repeats, args.keep_subnormals) if uses_implicit_votes(layer, n_out, device_type=device) else fast
            diff = agreement(shape, device)
            line = (f"| {shape_label(shape, SHAPES, dev_name)} | {lit['seconds']:.3f} | {stepwise['seconds']:.3f} | {fast['seconds']:.3f} | {lit['seconds'] / fast['seconds']:.1f}x | "
                    f"{lit['peak_mib']:.0f} | {stepwise['peak_mib']:.0f} | {fast['peak_mib']:.0f} | {fast['peak_mib'] / max(lit['peak_mib'], 1e-9):.2f} | {diff:.1e} |")
            lines.append(line); print(line, flush=True)
    if args.out: write_table(lines, args.out)

if __name__ == '__main__': main()
