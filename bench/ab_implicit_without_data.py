"""A/B in one process, not adopted: `route_with_implicit_votes` as it is (A) against a variant (B) that never
concatenates its features and never forms `data` = [features, 1] * f(a): the E-step takes two products (pairs, pose
entries) and the M-step sums D = f(a) R times each, D's column sum standing for the 1.

    python bench/ab_implicit_without_data.py

Measured 2026-11-27 00:15 UTC on the 2-core CI-class machine, otherwise idle, 1 thread, forward + backward in float64
(`in_float64`), median of 5 alternating calls after a warm-up, the benchmark's shapes (`implicit_votes_crossover.make`):

    matrix_4x4 J=1: A 0.3384 s, B 0.1735 s, B/A 0.51
    matrix_4x4 J=16: A 0.4642 s, B 0.3366 s, B/A 0.73
    matrix_4x4 J=64: A 0.8864 s, B 1.1070 s, B/A 1.25
    vector_8_to_16 J=10: A 0.0451 s, B 0.0440 s, B/A 0.98
    sst_64_to_2 J=64: A 5.9106 s, B 3.4099 s, B/A 0.58

B halves the fixed cost per input (J=1) but is a quarter slower at the smallNORB model's first routing (J=64), where
f(a) R is as large as `data` and is formed twice, and two products with inner sizes 40 and 16 run slower than one
of 56. So A stays; B would move the crossover (`route_costs`) to fewer outputs.
"""
import sys, time, statistics, torch, torch.nn.functional as F
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
torch.set_num_threads(1); torch.set_flush_denormal(True)
from capsule_routing.routing import (route_with_implicit_votes, in_float64, pose_pairs, vote_column_products, symmetry_breaking_bias)
from implicit_votes_crossover import make
from routing_benchmark import max_rel_diff

def features(f_a, mu_inp, W, B, eps):
    center = (f_a[..., None] * mu_inp).sum(-3) / (f_a.sum(-2)[..., None] + eps)
    delta = mu_inp - center[..., None, :, :]
    V_center = torch.einsum('...cd,jdh->...jch', center, W) + B
    d_idx, e_idx = pose_pairs(delta.shape[-1], delta.device)
    return (delta[..., d_idx] * delta[..., e_idx]).flatten(-2), delta.flatten(-2), V_center

def e_step(pairs, lin, V_center, W, a_out, mu_out, sig2_out):
    inv_s, e = 1 / sig2_out, V_center - mu_out
    H = torch.einsum('jph,...jch->...jcp', vote_column_products(W), inv_s).flatten(-2)
    G = torch.einsum('jdh,...jch->...jcd', W, e * inv_s).flatten(-2)
    const = F.logsigmoid(a_out) - 0.5 * ((e * e * inv_s).sum((-2, -1)) + torch.log(sig2_out).sum((-2, -1)))
    return F.softmax(torch.baddbmm(const[..., None, :], pairs, -0.5 * H.transpose(-1, -2)) - lin @ G.transpose(-1, -2), dim=-1)

def moments(D, pairs, lin, V_center, W, eps):
    (J, c, _), d = V_center.shape[-3:], W.shape[1]
    P = d * (d + 1) // 2
    if D.shape[-1] == 1:   # equal shares: f_a / J
        S2, S1, S0 = [(D.transpose(-1, -2) @ x / J).expand(*x.shape[:-2], J, -1) for x in (pairs, lin)] + [(D.sum(-2) / J).expand(*D.shape[:-2], J)]
    else: S2, S1, S0 = D.transpose(-1, -2) @ pairs, D.transpose(-1, -2) @ lin, D.sum(-2)
    S2, S1 = S2.unflatten(-1, (c, P)), S1.unflatten(-1, (c, d))
    used = (S0 + eps)[..., None, None]
    S1W = torch.einsum('...jcd,jdh->...jch', S1, W)
    mu_out = (S1W + S0[..., None, None] * V_center) / used
    e = V_center - mu_out
    spread = torch.einsum('...jcp,jph->...jch', S2, vote_column_products(W)) + 2 * e * S1W + S0[..., None, None] * e * e
    return S0, mu_out, (spread / used).clamp(min=0) + eps

def route_b(a_inp, mu_inp, W, B, beta_use, beta_ign, n_iters=3, p_model='gaussian', eps=1e-5, B_brk=None, n_out=None):
    J, d, h = B.shape[1], mu_inp.shape[-1], W.shape[-1]
    W, B = W[0].expand(J, d, h), B[0]
    f_a = torch.sigmoid(a_inp)[..., None]
    f_total = f_a.sum(-2)
    pairs, lin, V_center = features(f_a, mu_inp, W, B, eps)
    R = None
    for it in range(n_iters):
        if it > 0: R = e_step(pairs, lin, V_center, W, a_out, mu_out, sig2_out)
        S0, mu_out, sig2_out = moments(f_a if R is None else f_a * R, pairs, lin, V_center, W, eps)
        a_out = beta_use[0] * S0 - beta_ign[0] * (f_total - S0)
    return a_out, mu_out, sig2_out, R

A, Bn = in_float64(route_with_implicit_votes), in_float64(route_b)
for sweep, J in [('matrix_4x4', 1), ('matrix_4x4', 16), ('matrix_4x4', 64), ('vector_8_to_16', 10), ('sst_64_to_2', 64)]:
    layer, a, mu = make(sweep, J, 'cpu')
    args = lambda: (a, mu, layer.W, layer.B, layer.beta_use, layer.beta_ign, layer.n_iters)
    outs = {}
    for name, route in (('A', A), ('B', Bn)):
        out = route(*args())[:3]
        g = torch.autograd.grad(sum(o.sum() for o in out), [mu, layer.W])
        outs[name] = [o.detach() for o in out] + list(g)
    diff = max_rel_diff(zip(outs['A'], outs['B']))
    times = {'A': [], 'B': []}
    def run(route):
        out = route(*args())[:3]; sum(o.float().sum() for o in out).backward()
    for name in 'AB': run(A if name == 'A' else Bn)
    for rep in range(5):
        for name in ('AB' if rep % 2 == 0 else 'BA'):
            t = time.perf_counter(); run(A if name == 'A' else Bn); times[name].append(time.perf_counter() - t)
    a_s, b_s = statistics.median(times['A']), statistics.median(times['B'])
    print(f"{sweep} J={J}: A {a_s:.4f} s, B {b_s:.4f} s, B/A {b_s / a_s:.2f}, max rel diff {diff:.1e}", flush=True)
