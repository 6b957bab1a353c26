"""Where the time of a training step goes on a GPU: the smallNORB model alone (forward, backward, an Adam step) under
each way of routing, the agreement of the compiled and step-by-step routes, and a kernel profile.

    python bench/gpu_probe.py              # the table of 01_routing's section "On a GPU"
    python bench/gpu_probe.py --profile    # and the kernels of a compiled step

Each row builds a fresh model; times are medians of 30 steps after 8 warm-up steps (compiling happens in those),
each step timed from its start to a CUDA synchronisation; peak memory is torch.cuda.max_memory_allocated.
"""
import argparse, statistics, time
import torch
import capsule_routing.routing as routing
from capsule_routing.routing import Routing
from capsule_routing.smallnorb import SmallNORBCapsNet
from capsule_routing.training import CapsuleCrossEntropy
from routing_benchmark import max_rel_diff   # bench/, this script's folder

def make_step(model, x, y, opt):
    loss_func = CapsuleCrossEntropy()
    def step():
        loss = loss_func(model(x), y); loss.backward()
        opt.step(); opt.zero_grad(set_to_none=True)
    return step

def time_steps(step, n_warmup=8, n_steps=30):
    for _ in range(n_warmup): step()
    torch.cuda.synchronize(); times = []
    for _ in range(n_steps):
        t0 = time.perf_counter(); step(); torch.cuda.synchronize(); times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times)

def run(name, x, y, compile_model=None):
    torch.manual_seed(0)
    model = SmallNORBCapsNet().cuda()
    if compile_model: model = torch.compile(model, mode=compile_model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-5)
    torch.cuda.reset_peak_memory_stats()
    ms = time_steps(make_step(model, x, y, opt))
    print(f'| {name} | {ms:.1f} ms | {torch.cuda.max_memory_allocated()/2**20:,.0f} MiB |', flush=True)

def agreement(x, y, implicit_votes):
    "Largest relative difference of outputs and parameter gradients, compiled vs step by step (votes formed), same weights and inputs"
    torch.manual_seed(0); model = SmallNORBCapsNet().cuda()
    res = []
    for compiled, implicit in ((False, False), (True, implicit_votes)):
        Routing.compile_on_gpu, Routing.implicit_votes = compiled, implicit; model.zero_grad()
        (routing.ROUTE_COSTS_DEVICES.add if implicit else routing.ROUTE_COSTS_DEVICES.discard)('cuda')   # the layer forms its votes on a GPU unless told the estimate holds there
        out = model(x); CapsuleCrossEntropy()(out, y).backward()
        res.append([o.detach().clone() for o in out] + [p.grad.clone() for p in model.parameters()])
    Routing.implicit_votes = True; routing.ROUTE_COSTS_DEVICES.discard('cuda')
    return max_rel_diff(zip(res[1], res[0]))

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0]); p.add_argument('--profile', action='store_true')
    args = p.parse_args()
    x = torch.randint(0, 256, (20, 2, 96, 96), dtype=torch.uint8, device='cuda')   # [20, 2, 96, 96] stereo pairs
    y = torch.randint(0, 5, (20,), device='cuda')
    print(f'{torch.cuda.get_device_name()}, torch {torch.__version__}\n')
    print(f'compiled vs step by step, largest relative difference of outputs and gradients: {agreement(x, y, False):.1e}')
    print(f'compiled implicit votes vs step by step: {agreement(x, y, True):.1e}\n')
    print('| smallNORB model, batch 20 | step | peak GPU memory |\n|---|---|---|')
    one_product, unrolled = routing.votes_in_one_product, routing.compute_votes_unrolled
    Routing.compile_on_gpu, Routing.implicit_votes = False, False     # the rows before implicit votes
    routing.votes_in_one_product = lambda d, h, n_out, device: n_out > 1 and d > h    # the CPU's choice
    run('step by step, one product per output', x, y)
    routing.votes_in_one_product = one_product
    run('step by step', x, y)
    Routing.compile_on_gpu = True
    routing.compute_votes_unrolled = routing.compute_votes                                # what the compiled route calls
    run('compiled equations, `compute_votes` (`einsum`)', x, y)
    routing.compute_votes_unrolled = unrolled
    run('compiled equations, `compute_votes_unrolled`', x, y)
    Routing.check_finite = False
    run('the same with `Routing.check_finite = False`', x, y)
    run('the whole model compiled, `check_finite = False`', x, y, compile_model='default')
    run("the same, `mode='reduce-overhead'` (CUDA graphs)", x, y, compile_model='reduce-overhead')
    Routing.check_finite, Routing.implicit_votes = True, True
    routing.ROUTE_COSTS_DEVICES.add('cuda')   # the CPU's estimate applied on the GPU: the first routing leaves its votes unformed
    run('first routing with implicit votes, compiled', x, y)
    Routing.check_finite = False
    run('the same with `Routing.check_finite = False`', x, y)
    run('the whole model compiled, `check_finite = False`', x, y, compile_model='default')
    run("the same, `mode='reduce-overhead'` (CUDA graphs)", x, y, compile_model='reduce-overhead')
    Routing.check_finite = True
    if args.profile:
        from torch.profiler import profile, ProfilerActivity
        torch.manual_seed(0); model = SmallNORBCapsNet().cuda()
        step = make_step(model, x, y, torch.optim.Adam(model.parameters(), lr=1e-5))
        time_steps(step, 3, 3)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof: time_steps(step, 0, 5)
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        print(f'\ncompiled route: {len(kernels)/5:.0f} GPU kernels a step, {sum(e.device_time for e in kernels)/5/1000:.2f} ms of kernel time a step')
        print(prof.key_averages().table(sort_by='cuda_time_total', row_limit=15))

if __name__ == '__main__': main()
