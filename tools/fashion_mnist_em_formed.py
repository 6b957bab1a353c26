"""EM routing on Fashion-MNIST with its votes formed, in the configuration of nbs/03b_fashion_mnist_routings.ipynb.

03b's EM runs leave the first routing's votes unformed (`EMRouting.forms_votes`): their variances come from
rearranged sums, clamped at zero where rounding makes them negative (in float32 when those runs trained, 2026-11-24:
1.15% of the variances over seed 0's first epoch, bench/results/clamp_count.md; the route computes in float64 since
2026-11-25, where bench/results/clamp_count_float64.md counts none). These runs form every vote
(`implicit_votes = False`), so the variances are sums of squares, with nothing to clamp. Everything else is 03b's:
16 parts, 2 iterations, peak rate 1e-2, 3 epochs, pad 2, MixUp, cross-entropy.

    OMP_NUM_THREADS=1 python tools/fashion_mnist_em_formed.py --seed 0    # -> runs/fashion_em_formed/em_formed_s0
    python tools/fashion_mnist_em_formed.py --collect                      # -> results/fashion_em_formed/
A finished run is not trained again; an interrupted one continues from its last epoch.
"""
import argparse, os
from pathlib import Path
from capsule_routing.training import train_main
from capsule_routing.vision import fashion_mnist_dataloaders, fashion_mnist_capsnet
from collect_runs import collect_runs   # tools/collect_runs.py, beside this script

RUNS, RESULTS = Path('runs/fashion_em_formed'), Path('results/fashion_em_formed')

def em_with_formed_votes(dls=None):
    "03b's EM model, every routing forming its votes"
    model = fashion_mnist_capsnet(n_iters=2, n_parts=16, routing='em')
    for layer in model.routings: layer.implicit_votes = False
    assert all(layer.forms_votes() for layer in model.routings)
    return model

def train(seed:int, data:str):
    out = RUNS/f'em_formed_s{seed}'
    if (out/'results.json').exists(): return
    dls_fn = lambda data, bs, device: fashion_mnist_dataloaders(data, bs, device, n_valid_per_class=500, seed=seed)
    train_main(dls_fn, em_with_formed_votes, data=data, epochs=3, bs=20, lr_max=1e-2, lr_min=1e-5, out=str(out), resume=True,
               seed=seed, cpu=True, quiet=True, learner_kwargs=dict(pad=2),
               settings=dict(n_parts=16, n_iters=2, width=64, routing='em', pad=2, n_valid_per_class=500, formed_votes=True))

def collect(): collect_runs(RUNS, RESULTS, [f'em_formed_s{seed}' for seed in range(3)])

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--data', default=None, help='the Fashion-MNIST folder (default: ../shared/data/fashion-mnist beside the repository)')
    p.add_argument('--collect', action='store_true', help='copy the finished runs\' small files into results/fashion_em_formed')
    args = p.parse_args()
    data = os.path.abspath(args.data) if args.data else None   # a path given is the caller's, from where they are
    os.chdir(Path(__file__).resolve().parents[1])   # runs/ and results/ of the repository, from wherever it is called (as the .sh scripts do)
    collect() if args.collect else train(args.seed, os.path.relpath(data) if data else '../shared/data/fashion-mnist')
