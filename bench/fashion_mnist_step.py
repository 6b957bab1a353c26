"""A training step of the 28x28 Fashion-MNIST capsule network on the CPU, by configuration: routing parts and iterations,
eager or compiled (`compile_whole_model`), implicit votes or votes formed.

The model alone: forward, the loss on softmax(a_out), backward and a `torch.optim.Adam` step, batch 20 of random 28x28
images (a step's time does not depend on pixel values); median of `--steps` steps after `--warmup` (compiling happens
in those). Each configuration runs in its own process.

    python bench/fashion_mnist_step.py --threads 2 --out bench/results/fashion_mnist_cpu_step.md
"""
import argparse, json, platform, statistics, sys, time
import torch
from routing_benchmark import at_least, make_out_folder, run_script   # bench/, this script's folder

CONFIGS = [  # (n_parts, n_iters, compiled, implicit votes)
    (16, 2, False, False), (16, 2, False, True), (16, 2, True, True),
    (64, 3, False, False), (64, 3, False, True), (64, 3, True, True)]

def child(n_parts, n_iters, compiled, implicit, warmup, steps):
    from capsule_routing.routing import Routing
    from capsule_routing.training import CapsuleCrossEntropy, compile_whole_model
    from capsule_routing.vision import fashion_mnist_capsnet
    torch.set_flush_denormal(True); torch.manual_seed(0)
    Routing.implicit_votes = implicit
    model = fashion_mnist_capsnet(n_iters=n_iters, n_parts=n_parts)
    if compiled: compile_whole_model(model)
    x, y = torch.rand(20, 1, 28, 28), torch.randint(0, 10, (20,))            # [20, 1, 28, 28], [20]
    opt, loss_func = torch.optim.Adam(model.parameters(), 1e-3), CapsuleCrossEntropy()
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        loss = loss_func(model(x), y); loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        if i >= warmup: times.append(time.perf_counter() - t0)
    return statistics.median(times)

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--threads', type=at_least(1), default=2); p.add_argument('--warmup', type=at_least(0), default=3)
    p.add_argument('--steps', type=at_least(1), default=20); p.add_argument('--out', default=None)
    p.add_argument('--configs', nargs='+', type=int, choices=range(len(CONFIGS)), default=None, help=f'indices into CONFIGS to measure (default: all {len(CONFIGS)})')
    p.add_argument('--child', default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    if args.child: return print(json.dumps(child(*json.loads(args.child), args.warmup, args.steps)))
    make_out_folder(args.out)
    lines = [f'Fashion-MNIST capsule network, training step at batch 20 (model, loss, backward, Adam), CPU '
             f'({platform.processor() or platform.machine()}, {args.threads} threads), torch {torch.__version__}; '
             f'median of {args.steps} steps after {args.warmup}.', '',
             '| parts | routing iterations | model | votes | step | 2,750 steps (an epoch of 55,000 images) |', '|---|---|---|---|---|---|']
    print('\n'.join(lines), flush=True)
    for cfg in [CONFIGS[i] for i in args.configs] if args.configs is not None else CONFIGS:
        cmd = [sys.executable, __file__, '--child', json.dumps(cfg), '--threads', str(args.threads),
               '--warmup', str(args.warmup), '--steps', str(args.steps)]
        seconds = json.loads(run_script(cmd).strip().splitlines()[-1])
        n_parts, n_iters, compiled, implicit = cfg
        lines.append(f"| {n_parts} | {n_iters} | {'compiled' if compiled else 'eager'} | {'implicit' if implicit else 'formed'} | "
                     f"{1000 * seconds:.0f} ms | {2750 * seconds / 60:.1f} min |")
        print(lines[-1], flush=True)
    if args.out: open(args.out, 'w').write('\n'.join(lines) + '\n')

if __name__ == '__main__': main()
