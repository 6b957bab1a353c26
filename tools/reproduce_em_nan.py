"""Reproduce the NaN that stopped EM routing's first Fashion-MNIST run (03b, 01): run against the code before the clamp.

    git worktree add /tmp/pre_clamp 536bf7e     # the parent of 1caa79d, the commit that clamps the variance at zero
    cd /tmp/pre_clamp && PYTHONPATH=. python /path/to/tools/reproduce_em_nan.py --data /path/to/shared/data/fashion-mnist

Trains 03b's EM model as its command does (seed 0, 16 parts, 2 iterations, batch 20, lr_max 1e-2, pad 2) with two
spies: a count of training steps, and a look at every variance `implicit_moments` gives. The first variance at or
below zero (its logarithm, in EM's score, is NaN or -inf) is printed with its step, its place, the variance before
eps is added (float32) and the same moments computed again in float64 from the same inputs. Then the step where
training stopped. The result depends on the CPU's floating-point sums, so on the thread count (--threads).
(The current code computes these moments in float64 and clamps them at zero: `bench/clamp_count.py` counts the clamps.)
"""
import argparse, sys, tempfile
import torch

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument('--data', required=True, help='folder of the Fashion-MNIST IDX files')
ap.add_argument('--threads', type=int, default=2, help="torch's CPU threads (the first run's: 2, this machine's cores)")
ap.add_argument('--epochs', type=int, default=3)
args = ap.parse_args()
if args.threads < 1: ap.error(f'argument --threads: expected a whole number of at least 1, got {args.threads}')
torch.set_num_threads(args.threads)

import fastai.learner
from capsule_routing import lineage, routing, vision

steps, first_bad = [0], []

def counted_batch(self, _orig=fastai.learner.Learner._do_one_batch):
    if self.training: steps[0] += 1
    return _orig(self)
fastai.learner.Learner._do_one_batch = counted_batch

def watched_moments(R, data, V_center, W, eps=1e-5, _orig=lineage.implicit_moments):
    S0, mu_out, sig2_out = _orig(R, data, V_center, W, eps)
    if not first_bad and bool((sig2_out <= 0).any()):
        with torch.no_grad():
            exact = _orig(*(t.detach().double() for t in (R, data, V_center, W)), eps)[2]   # the same sums in float64
        sig2 = sig2_out.detach()
        where = tuple((sig2 <= 0).nonzero()[0].tolist())                                   # (b, j, c, h)
        first_bad.append(where)
        print(f"step {steps[0]}: variance {float(sig2[where]):.3g} at (sample, output, row, column) {where}; "
              f"before eps: {float(sig2[where]) - eps:.3g} (float32), {float(exact[where]) - eps:.3g} "
              f"(float64 from the same inputs); eps = {eps:g}", flush=True)
    return S0, mu_out, sig2_out
lineage.implicit_moments = watched_moments   # EM routing's name for it (lineage imports it from routing)

print(f"code: {routing.__file__}; torch {torch.__version__}, {torch.get_num_threads()} threads", flush=True)
try:
    vision.fashion_mnist_main(data=args.data, out=tempfile.mkdtemp(), epochs=args.epochs, bs=20, pad=2, lr_max=1e-2,
                              n_parts=16, n_iters=2, routing='em', seed=0, cpu=True, quiet=True)
    print(f"finished after {steps[0]} training steps", flush=True)
except Exception as e:
    print(f"stopped at training step {steps[0]}: {type(e).__name__}: {str(e)[:200]}", flush=True)
    sys.exit(1)
