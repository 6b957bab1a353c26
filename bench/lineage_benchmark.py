"""Speed and memory of the four routing algorithms (`ROUTINGS`), forward + backward, at the paper's shapes.

Each measurement runs in a fresh process (so peak memory is that of one configuration alone), with the same inputs
for all four algorithms and every parameter drawn at random. Peak memory and subnormal floats (flushed to zero on the
CPU unless `--keep_subnormals`) as in `routing_benchmark.py`.

    python bench/lineage_benchmark.py --threads 1 --out bench/results/lineage_cpu_1thread.md
    python bench/lineage_benchmark.py --shapes sst_1 sst_1_pose8     # some shapes only

Where a layer leaves its votes unformed (`forms_votes()` is False), it is also measured with `implicit_votes = False`,
so that the table shows what leaving them unformed buys.
"""
import json, os, platform, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import routing_benchmark
from routing_benchmark import (time_and_peak, benchmark_parser, shape_label, write_table, make_out_folder, as_training_on, subnormals_note,
                               run_in_child)
from capsule_routing.lineage import ROUTINGS

SHAPES = {**routing_benchmark.SHAPES,  # name: (batch, n_inp, n_out, d_cov, d_inp, d_out, n_inp_fixed)
          'sst_1_pose8': (20, 925, 64, 1, 64, 8, False)}   # sst_1 with parts of 1 x 8

def make(routing, shape, device, seed=0, formed=False):
    b, n_inp, n_out, c, d, h, fixed = SHAPES[shape]
    torch.manual_seed(seed)
    a_inp = torch.randn(b, n_inp, device=device, requires_grad=True)
    mu_inp = torch.randn(b, n_inp, c, d, device=device, requires_grad=True)
    layer = ROUTINGS[routing](d_cov=c, d_inp=d, d_out=h, n_inp=n_inp if fixed else -1, n_out=n_out, n_iters=3).to(device)
    if formed: layer.implicit_votes = False
    with torch.no_grad():   # no parameter left at a special value (zero betas, unit LayerNorm)
        for p in layer.parameters(): p.add_(0.1 * torch.randn_like(p))
    return layer, a_inp, mu_inp

def step(layer, a_inp, mu_inp):
    out = [o for o in layer(a_inp, mu_inp) if o is not None]
    loss = sum(o.mul(torch.linspace(-1, 1, o.numel(), device=o.device).view_as(o)).sum() for o in out)
    loss.backward()

def measure(routing, shape, device, repeats, formed):
    "Runs in a child process: median seconds of forward+backward, peak memory growth in MiB, whether the votes were formed"
    layer, a_inp, mu_inp = make(routing, shape, device, formed=formed)
    measured = time_and_peak(lambda: step(layer, a_inp, mu_inp), (a_inp, mu_inp, *layer.parameters()), device, repeats)
    return measured | dict(n_params=sum(p.numel() for p in layer.parameters()), formed=layer.forms_votes(device_type=torch.device(device).type))

def run_child(routing, shape, device, repeats, formed=False, keep_subnormals=False):
    child_args = ['--child-routing', routing, '--child-shape', shape] + (['--child-formed'] if formed else [])
    return run_in_child(__file__, child_args, device, repeats, keep_subnormals)

def main():
    p = benchmark_parser(__doc__, SHAPES)
    p.add_argument('--routings', nargs='+', default=list(ROUTINGS), choices=list(ROUTINGS))
    p.add_argument('--child-routing'); p.add_argument('--child-formed', action='store_true')
    args = p.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    if args.child_routing:
        as_training_on(args.device, args.keep_subnormals)
        return print(json.dumps(measure(args.child_routing, args.child_shape, args.device, args.repeats, args.child_formed)))
    make_out_folder(args.out)
    threads = torch.get_num_threads()
    lines = [f"Forward + backward, 3 iterations, float32 inputs, median of {args.repeats} after a warm-up (shapes: batch x inputs "
             "[capsule] -> outputs [capsule], * a variable number of inputs; peak memory growth in MiB; time and memory also "
             f"relative to Heinsen's `Routing` as it routes by default; votes: whether the layer forms them, by its own rule or "
             f"forced); torch {torch.__version__}, {platform.processor() or platform.machine()}, "
             f"{threads} thread{'s' if threads != 1 else ''}, {subnormals_note(args.keep_subnormals)}." + (f" {args.note}" if args.note else ''), "",
             "| shape | algorithm | votes | parameters | seconds | x Routing | MiB | x Routing |", "|---|---|---|---|---|---|---|---|"]
    print('\n'.join(lines), flush=True)
    for device in args.devices:
        dev_name = 'cpu' if device == 'cpu' else torch.cuda.get_device_name()
        for shape in args.shapes:
            label = shape_label(shape, SHAPES, dev_name)
            run = lambda routing, formed=False: run_child(routing, shape, device, args.repeats, formed, args.keep_subnormals)
            ref = run('heinsen')
            for routing in args.routings:
                got = ref if routing == 'heinsen' else run(routing)
                runs = [(got, 'formed' if got['formed'] else 'not formed')]
                if not got['formed']: runs.append((run(routing, formed=True), 'formed (forced)'))
                for got, votes in runs:
                    line = (f"| {label} | {ROUTINGS[routing].__name__} | {votes} | {got['n_params']:,} | {got['seconds']:.3f} | "
                            f"{got['seconds'] / ref['seconds']:.2f} | {got['peak_mib']:.0f} | {got['peak_mib'] / max(ref['peak_mib'], 1e-9):.2f} |")
                    lines.append(line); print(line, flush=True)
    if args.out: write_table(lines, args.out)

if __name__ == '__main__': main()
