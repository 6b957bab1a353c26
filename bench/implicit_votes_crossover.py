"""Where routing without votes pays: a layer's two routes timed on both sides of where its choice between them changes.

With weights shared over inputs, `Routing` either forms the votes (the step-by-step kernels, float32) or routes without
them (`route_with_implicit_votes`, float64); `EMRouting` likewise (`route_by_em` on formed votes, or
`route_by_em_with_implicit_votes`). The route without votes carries d_inp (d_inp + 3) / 2 features per row of each input
(the products of each pair of a pose's entries, and the entries), the votes n_out * d_out entries per row. Counting
those (the rule this project used first: without votes where the votes have more) knows nothing of float64 against
float32 or of the kernels' speeds. This script measures both routes at each point of a sweep over n_out, for four
capsule shapes:

- matrix capsules of 4 x 4 from 5,184 inputs (the smallNORB model's first routing: 14 features a row),
- vector capsules of 1 x 8 to 1 x 16 from 1,152 inputs (Sabour et al.'s primary capsules to digit capsules: 44),
- vector capsules of 1 x 16 to 1 x 4 from 925 inputs (152 features a row),
- the SST model's capsules, 1 x 64 to 1 x 2, from 925 inputs (2,144 features a row).

Each measurement is one forward + backward pass (3 iterations, batch 20, float32 inputs), the median of `--repeats`
after a warm-up, in a fresh process (so the peak memory is its own), as `routing_benchmark.py` measures. Both routes
include the layer's checks of its inputs; `Routing`'s tables here (one thread, 2026-11-26; two threads, 2026-11-27)
were measured with the route without votes skipping them, which favoured it by at most about 2% (8 ms of 0.39 s or
more at the 4 x 4 shape, measured on its own). Each row also says which route the counting rule took
(`counting_rule_without_votes`); which route the layer takes now is `route_costs`'s choice with the layer's constants
(`ROUTE_COSTS_NS`, `EM_ROUTE_COSTS_NS`), fitted to these tables.

    python bench/implicit_votes_crossover.py --threads 1 --out bench/results/implicit_votes_crossover_cpu_1thread.csv
    python bench/implicit_votes_crossover.py --layer em --threads 1 --out bench/results/implicit_votes_crossover_em_cpu_1thread.csv

write one CSV row per point (the notebooks 01_routing and 01a_routing_lineage fit `route_costs`'s constants to them and
plot them) and print a markdown table (also written beside the CSV, as .md). At two threads, near the crossings only:

    python bench/implicit_votes_crossover.py --threads 2 --sweeps matrix_4x4 vector_8_to_16 --n_outs 6 8 12 16 24 \
        --out bench/results/implicit_votes_crossover_cpu_2threads.csv
"""
import argparse, csv, json, os, platform, sys, time
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routing_benchmark import time_and_peak, run_in_child, as_training_on, subnormals_note, max_rel_diff, at_least, device_name, make_out_folder
from capsule_routing.routing import Routing, route_with_implicit_votes_in_float64
from capsule_routing.lineage import EMRouting

SWEEPS = {  # name: (n_inp, d_cov, d_inp, d_out, n_out values)
    'matrix_4x4': (5184, 4, 4, 4, (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64)),        # the smallNORB model's first routing at 64
    'vector_8_to_16': (1152, 1, 8, 16, (1, 2, 3, 4, 6, 8, 10, 16, 32, 64, 128)),  # Sabour et al.'s 1,152 primary capsules to 10 digits at 10
    'vector_16_to_4': (925, 1, 16, 4, (8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512)),
    'sst_64_to_2': (925, 1, 64, 2, (64, 256, 1024, 2048)),                        # the SST model's first routing at 64
}
EM_N_OUTS = {  # EMRouting's sweeps: its formed route is the slower, so its routes cross at fewer outputs
    'matrix_4x4': (1, 2, 3, 4, 6, 8, 16, 32, 64), 'vector_8_to_16': (1, 2, 3, 4, 8, 16, 32, 64),
    'vector_16_to_4': (1, 2, 4, 8, 16, 32, 64, 128), 'sst_64_to_2': (2, 8, 64, 256)}
LAYERS = {'routing': Routing, 'em': EMRouting}
BATCH = 20

def features_per_row(d_inp): return d_inp * (d_inp + 3) // 2

def make(sweep, n_out, device, seed=0, layer_name='routing'):
    n_inp, c, d, h, _ = SWEEPS[sweep]
    torch.manual_seed(seed)
    layer = LAYERS[layer_name](c, d, h, n_out=n_out).to(device)   # a variable number of inputs, weights shared over them
    with torch.no_grad():   # nonzero betas and biases, as routing_benchmark.py sets them
        if layer_name == 'routing':
            for p in (layer.beta_use, layer.beta_ign, layer.B): p.normal_(0, 0.5)
        else:
            for p in (layer.beta_v, layer.beta_a): p.normal_(0, 0.5)
    a_inp = torch.randn(BATCH, n_inp, device=device, requires_grad=True)
    mu_inp = torch.randn(BATCH, n_inp, c, d, device=device, requires_grad=True)
    return layer, a_inp, mu_inp

def routed(route, layer, a_inp, mu_inp):
    "The layer's outputs by `route`: 'implicit' (no votes, float64, whatever the layer would choose) or 'formed' (the votes formed)"
    if isinstance(layer, EMRouting):
        layer.forms_votes = lambda **_: route == 'formed'   # the one switch `EMRouting.forward` reads
        return layer(a_inp, mu_inp)
    if route == 'implicit':   # the branch `forward` takes, after the same checks of the inputs
        n_out = layer._check_inputs(a_inp, mu_inp, None)
        return layer._by_the_equations(a_inp, layer._remove_masked_nonfinite(a_inp, mu_inp), n_out, route_with_implicit_votes_in_float64)[:3]
    layer.implicit_votes = False
    return layer(a_inp, mu_inp)   # the step-by-step kernels

def step(route, layer, a_inp, mu_inp):
    "One forward and backward pass by `route`"
    out = routed(route, layer, a_inp, mu_inp)
    loss = sum(o.float().mul(torch.linspace(-1, 1, o.numel(), device=o.device).view_as(o)).sum() for o in out)
    loss.backward()

def child(args):
    as_training_on(args.device, args.keep_subnormals)
    layer, a_inp, mu_inp = make(args.child_sweep, args.child_n_out, args.device, layer_name=args.layer)
    print(json.dumps(time_and_peak(lambda: step(args.child_route, layer, a_inp, mu_inp), (a_inp, mu_inp, *layer.parameters()), args.device, args.repeats)))

def agree(sweep, n_out, layer_name) -> float:
    "Largest relative difference of the two routes' outputs (float32 inputs, batch 20): the routes compared are the same function"
    with torch.no_grad():
        implicit, formed = (routed(route, *make(sweep, n_out, 'cpu', layer_name=layer_name)) for route in ('implicit', 'formed'))
    return max_rel_diff(zip(implicit, formed))

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--layer', default='routing', choices=list(LAYERS), help="Heinsen's `Routing` or `EMRouting`")
    p.add_argument('--sweeps', nargs='+', default=list(SWEEPS), choices=list(SWEEPS))
    p.add_argument('--n_outs', nargs='+', type=at_least(1), help="numbers of outputs to measure in every sweep chosen (default: each sweep's own)")
    p.add_argument('--repeats', type=at_least(1), default=3)
    p.add_argument('--threads', type=at_least(1), default=None, help="torch threads (default: torch's choice)")
    p.add_argument('--out', help='write the rows to this CSV file (and the markdown table beside it, .md)')
    p.add_argument('--keep_subnormals', action='store_true', help='compute with subnormal floats (default: flushed to zero, as training does)')
    p.add_argument('--device', type=device_name, default='cpu')
    p.add_argument('--child-route'); p.add_argument('--child-sweep'); p.add_argument('--child-n_out', type=int)
    args = p.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    if args.child_route: return child(args)
    make_out_folder(args.out)
    threads = torch.get_num_threads()
    note = (f"Forward + backward of `{LAYERS[args.layer].__name__}`, 3 iterations, batch {BATCH}, float32 inputs, median of {args.repeats} after a warm-up, "
            f"each in a fresh process; peak memory growth in MiB; torch {torch.__version__}, {platform.processor() or platform.machine()}, "
            f"{args.device}, {threads} thread{'s' if threads != 1 else ''}, {subnormals_note(args.keep_subnormals)}; "
            f"started {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.")
    fields = ['sweep', 'n_inp', 'd_cov', 'd_inp', 'd_out', 'n_out', 'features_per_row', 'vote_entries_per_row', 'counting_rule_without_votes',
              'implicit_s', 'formed_s', 'implicit_mib', 'formed_mib', 'max_rel_diff']
    lines = [note, '', '| ' + ' | '.join(fields) + ' |', '|' + '---|' * len(fields)]
    print('\n'.join(lines), flush=True)
    rows = []
    for sweep in args.sweeps:
        n_inp, c, d, h, n_outs = SWEEPS[sweep]
        for n_out in args.n_outs or (n_outs if args.layer == 'routing' else EM_N_OUTS[sweep]):
            measured = {route: run_in_child(__file__, ['--child-route', route, '--child-sweep', sweep, '--child-n_out', str(n_out), '--layer', args.layer],
                                            args.device, args.repeats, args.keep_subnormals) for route in ('implicit', 'formed')}
            row = dict(sweep=sweep, n_inp=n_inp, d_cov=c, d_inp=d, d_out=h, n_out=n_out, features_per_row=features_per_row(d),
                       vote_entries_per_row=n_out * h,
                       counting_rule_without_votes=features_per_row(d) < n_out * h,
                       implicit_s=round(measured['implicit']['seconds'], 4), formed_s=round(measured['formed']['seconds'], 4),
                       implicit_mib=round(measured['implicit']['peak_mib'], 1), formed_mib=round(measured['formed']['peak_mib'], 1),
                       max_rel_diff=f"{agree(sweep, n_out, args.layer):.1e}")
            rows.append(row)
            line = '| ' + ' | '.join(str(row[f]) for f in fields) + ' |'
            lines.append(line); print(line, flush=True)
    if args.out:
        with open(args.out, 'w', newline='') as f:
            f.write(f"# {note}\n")
            w = csv.DictWriter(f, fieldnames=fields); w.writeheader(); w.writerows(rows)
        open(os.path.splitext(args.out)[0] + '.md', 'w').write('\n'.join(lines) + '\n')

if __name__ == '__main__': main()
