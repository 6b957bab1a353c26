"""A/B in one process: `UseWeightedMoments.backward` with its former eps * mu (old, as of commit af12ef7) against sum_i D delta
summed from the deviations (new, 0870264), forward + backward of `Routing` with its votes formed, 1 thread.

    python bench/ab_moments_backward.py smallnorb_1    # 20 x 5184 [4x4] -> 64 [4x4], votes forced
    python bench/ab_moments_backward.py sst_1          # 20 x 925 [1x64] -> 64 [1x2]

Measured 2026-11-25: smallnorb_1 3.558 -> 3.766 s, sst_1 0.112 -> 0.116 s (medians of 5 and 11 alternating runs)."""
import argparse, time, torch, statistics
import capsule_routing.routing as R
from capsule_routing.routing import Routing, first_order_only
torch.set_num_threads(1); torch.set_flush_denormal(True)
new = R.UseWeightedMoments.backward
@staticmethod
@first_order_only
def old(ctx, g_mu, g_sig2):
    V, D, used, mu, s = ctx.saved_tensors
    g_s = g_sig2 / used
    g_mu = g_mu - 2 * ctx.eps * g_s * mu
    g_m = g_mu / used
    grad_used = -(g_sig2 * s).sum(-1, keepdim=True) / used**2 - (g_mu * mu).sum(-1, keepdim=True) / used
    grad_D = (torch.bmm(g_m[:, None, :], V) + torch.bmm(g_s[:, None, :], ctx.ws.sq_dev(V, mu))).squeeze(1)
    if ctx.needs_input_grad[0]:
        g_delta = torch.addcmul(g_m[:, :, None], ctx.ws.dev(V, mu), (2 * g_s)[:, :, None], out=ctx.ws.get(V))
        ctx.ws.add_grad(g_delta, D[:, None, :])
    ctx.ws.done()
    return None, grad_D, grad_used, None, None, None
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument('shape', nargs='?', default='smallnorb_1', choices=['smallnorb_1', 'sst_1'])   # any other name would time smallnorb_1 under it
shape = p.parse_args().shape
torch.manual_seed(0)
if shape == 'sst_1': layer, a, mu = Routing(1, 64, 2, n_out=64), torch.randn(20, 925), torch.randn(20, 925, 1, 64, requires_grad=True)
else:
    layer, a, mu = Routing(4, 4, 4, n_out=64), torch.randn(20, 5184), torch.randn(20, 5184, 4, 4, requires_grad=True)
    layer.implicit_votes = False   # form the votes: the step-by-step kernels are what changed
def step():
    t = time.perf_counter(); sum(x.sum() for x in layer(a, mu)).backward(); return time.perf_counter() - t
times = {'old': [], 'new': []}
for rep in range(12 if shape == 'sst_1' else 6):
    for name, fn in (('old', old), ('new', new)):
        R.UseWeightedMoments.backward = fn; step() if rep == 0 else times[name].append(step())
for k, v in times.items(): print(shape, k, 'median %.3f s' % statistics.median(v), [round(x, 3) for x in v])
