"""A/B in one process: dynamic routing's scores as Sabour et al.'s rounds give them (old) against the current
`route_dynamically`, which takes an underflowed score again from the log-shares (0db0b38), forward + backward, 1 thread.

    python bench/ab_dynamic_scores.py sst_1         # 20 x 925 [1x64] -> 64 [1x2]
    python bench/ab_dynamic_scores.py smallnorb_1   # 20 x 5184 [4x4] -> 64 [4x4]

Measured 2026-11-25: 0.226 s against 0.227 s at smallnorb_1 and 0.057 s against 0.056 s at sst_1 (new against old, within noise); the
first version of the fix (d08de53, measured with that commit checked out), which summed every round from the log-shares,
took 0.433 s against 0.200 s, and 0.086 s against 0.052 s. `branch_free`: the scores taken again after every call, as a
layer traced by torch.compile, torch.export or vmap does (no branch on a value). Measured 2026-11-28: branch_free 0.093 s
against 0.065 s (new) at sst_1, and 0.380 s against 0.224 s at smallnorb_1: so eager calls keep the branch.
Measured again 2026-11-29 with every output whose shares all fall below the smallest normal float scored again:
bench/results/ab_dynamic_scores_cpu_1thread.md. `copy_check`: the library before 2026-11-29's second change, which found
those outputs through a masked [b, i, j] copy of the shares rather than the kept inputs' total share; `--forward` times
the forward pass alone (no gradient), where that check's cost is not hidden by the backward pass:
bench/results/ab_dynamic_check_cpu_1thread.md."""
import argparse, time, statistics, torch, torch.nn.functional as F
import capsule_routing.lineage as L
torch.set_num_threads(1); torch.set_flush_denormal(True)
new = L.route_dynamically
def old(V, n_iters, kept=None, branch_free=False):
    logits = V.new_zeros(V.shape[:3])
    for it in range(n_iters):
        c = F.softmax(logits, dim=-1); s = V.pooled(c); v = L.squash(s)
        if it < n_iters - 1: logits = logits + V.agreement(v)
    return L.squashed_length_logit(s), v, c
def copy_check(V, n_iters, kept=None, branch_free=False):   # `new` as it was, with the masked copy
    logits = V.new_zeros(V.shape[:3])
    for it in range(n_iters):
        c = F.softmax(logits, dim=-1); s = V.pooled(c); v = L.squash(s)
        if it < n_iters - 1: logits = logits + V.agreement(v)
    a = L.squashed_length_logit(s)
    gets_inputs = torch.ones_like(a, dtype=torch.bool) if kept is None else kept.any(1, keepdim=True).expand_as(a)
    shares = c if kept is None else c.masked_fill(~kept[..., None], 0)
    underflowed = (torch.isneginf(a) | (shares.amax(1) < torch.finfo(c.dtype).tiny)) & gets_inputs
    if branch_free or bool(underflowed.any()):
        log_c = F.log_softmax(logits, dim=-1)
        if kept is not None: log_c = log_c.masked_fill(~kept[..., None], float('-inf'))
        log_top = log_c.amax(1).nan_to_num(neginf=0.)
        a = torch.where(underflowed, L.squashed_length_logit(V.pooled(torch.exp(log_c - log_top[:, None]))) + 2 * log_top, a)
    return a, v, c
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument('shape', nargs='?', default='sst_1', choices=['sst_1', 'smallnorb_1'])   # any other name would time smallnorb_1 under it
p.add_argument('--forward', action='store_true', help='time the forward pass alone, without gradients')
args = p.parse_args(); shape = args.shape
torch.manual_seed(0)
if shape == 'sst_1': layer, a, mu = L.DynamicRouting(1, 64, 2, n_out=64), torch.randn(20, 925), torch.randn(20, 925, 1, 64, requires_grad=True)
else: layer, a, mu = L.DynamicRouting(4, 4, 4, n_out=64), torch.randn(20, 5184), torch.randn(20, 5184, 4, 4, requires_grad=True)
def step():
    t = time.perf_counter()
    if args.forward:
        with torch.no_grad(): layer(a, mu)
    else: out = layer(a, mu); (out[0].sum() + out[1].sum()).backward()
    return time.perf_counter() - t
def branch_free(V, n_iters, kept=None, branch_free=False): return new(V, n_iters, kept, branch_free=True)   # a layer with check_finite=False
variants = {'old': old, 'new': new, 'copy_check': copy_check, 'branch_free': branch_free}
times = {name: [] for name in variants}
for rep in range(12):
    for name, fn in variants.items():
        L.route_dynamically = fn; step() if rep == 0 else times[name].append(step())
for k, v in times.items(): print(shape, 'forward' if args.forward else 'forward+backward', k, 'median %.4f s' % statistics.median(v))
