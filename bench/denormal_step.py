"""Subnormal floats on the CPU: the Fashion-MNIST model's step with subnormal results kept and with them flushed to zero,
untrained and with trained weights (02_training, "Denormal numbers on the CPU").

A step is forward, loss and backward, with no optimizer step, so that every step sees the same weights; batch 20 of
Fashion-MNIST training images (fixed, the first 20 * steps of them). Median of --steps steps after one. Each setting runs
in its own process. The last two columns count, over the first step, the float32 and float64 tensors autograd saves
for the backward pass (the routes without votes compute in float64): the share of their entries that are subnormal
(nonzero and below 1.2e-38 in float32, 2.2e-308 in float64), i.e. what the slow path computes on when they are kept.

    python bench/denormal_step.py --data ../shared/data/fashion-mnist --threads 1 --out bench/results/denormal_step_cpu_1thread.md
"""
import argparse, json, platform, statistics, sys, time
from pathlib import Path
import torch
from routing_benchmark import at_least, make_out_folder, run_script   # bench/, this script's folder

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = {   # name: (parts, the committed state dict of `fashion_mnist_capsnet(n_iters=2, n_parts=parts)`, None: untrained, seed 0)
    '16 parts, untrained': (16, None),
    '16 parts, 20 epochs (03a)': (16, ROOT/'results'/'fashion_mnist'/'p16_it2'/'model.pt'),
    '16 parts, 50 epochs (03a)': (16, ROOT/'results'/'fashion_mnist'/'p16_it2_e50'/'model.pt'),
    '64 parts, untrained': (64, None),
    '64 parts, 50 epochs (03a)': (64, ROOT/'results'/'fashion_mnist'/'p64_it2_e50'/'model.pt'),
}

def child(weights:str, flush:bool, data:str, warmup:int, steps:int) -> dict:
    from capsule_routing.training import CapsuleCrossEntropy
    from capsule_routing.vision import fashion_mnist_capsnet, load_fashion_mnist
    torch.set_flush_denormal(flush); torch.manual_seed(0)
    n_parts, path = WEIGHTS[weights]
    model = fashion_mnist_capsnet(n_iters=2, n_parts=n_parts)
    if path is not None: model.load_state_dict(torch.load(path, weights_only=True))
    fm = load_fashion_mnist(data)
    n = 20 * (warmup + steps)
    images = torch.from_numpy(fm.train_images[:n]).float().div(255)[:, None]     # [n, 1, 28, 28] in [0, 1]
    labels = torch.from_numpy(fm.train_labels[:n])                                # [n]
    loss_func = CapsuleCrossEntropy()
    counts = {torch.float32: [0, 0], torch.float64: [0, 0]}                       # subnormal entries, all entries
    def count_saved(t):
        if t.dtype in counts:
            d = t.detach()
            counts[t.dtype][0] += int(((d != 0) & (d.abs() < torch.finfo(t.dtype).tiny)).sum()); counts[t.dtype][1] += d.numel()
        return t
    times = []
    for i in range(warmup + steps):
        x, y = images[20 * i: 20 * (i + 1)], labels[20 * i: 20 * (i + 1)]       # [20, 1, 28, 28], [20]
        t0 = time.perf_counter()
        if i == 0:
            with torch.autograd.graph.saved_tensors_hooks(count_saved, lambda t: t): loss = loss_func(model(x), y)
        else: loss = loss_func(model(x), y)
        loss.backward(); model.zero_grad(set_to_none=True)
        if i >= warmup: times.append(time.perf_counter() - t0)
    share = lambda dtype: counts[dtype][0] / counts[dtype][1] if counts[dtype][1] else float('nan')
    return dict(seconds=statistics.median(times), float32=share(torch.float32), float64=share(torch.float64))

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--data', required=True, help='folder of the Fashion-MNIST IDX files')
    p.add_argument('--threads', type=at_least(1), default=1); p.add_argument('--warmup', type=at_least(1), default=1)
    p.add_argument('--steps', type=at_least(1), default=5); p.add_argument('--out', default=None)
    p.add_argument('--weights', nargs='+', choices=list(WEIGHTS), default=list(WEIGHTS))
    p.add_argument('--child', default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    if args.child: return print(json.dumps(child(*json.loads(args.child), args.data, args.warmup, args.steps)))
    if not Path(args.data).expanduser().is_dir(): p.error(f'argument --data: {args.data} is not a folder')
    if missing := [w for w in args.weights if WEIGHTS[w][1] is not None and not WEIGHTS[w][1].exists()]:
        p.error(f"no committed weights for {missing} (run from a clone of the repository)")
    make_out_folder(args.out)
    lines = [f'Fashion-MNIST capsule network (2 iterations), forward + loss + backward at batch 20 of training images, '
             f'CPU ({platform.processor() or platform.machine()}, {args.threads} thread(s)), torch {torch.__version__}; median of '
             f'{args.steps} steps after {args.warmup}.', '',
             '| weights | subnormals kept | flushed to zero | kept / flushed | subnormal share of saved entries, float32 | float64 |',
             '|---|---|---|---|---|---|']
    print('\n'.join(lines), flush=True)
    for weights in args.weights:
        res = {}
        for flush in (False, True):
            cmd = [sys.executable, __file__, '--child', json.dumps([weights, flush]), '--data', args.data,
                   '--threads', str(args.threads), '--warmup', str(args.warmup), '--steps', str(args.steps)]
            res[flush] = json.loads(run_script(cmd).strip().splitlines()[-1])
        kept, flushed = res[False]['seconds'], res[True]['seconds']
        lines.append(f"| {weights} | {1000 * kept:.0f} ms | {1000 * flushed:.0f} ms | {kept / flushed:.2f} | {res[False]['float32']:.2e} | {res[False]['float64']:.2e} |")
        print(lines[-1], flush=True)
    if args.out: open(args.out, 'w').write('\n'.join(lines) + '\n')

if __name__ == '__main__': main()
