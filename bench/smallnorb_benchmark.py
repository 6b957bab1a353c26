"""Training speed and memory of the paper's smallNORB model, through the same fastai Learner as real training.

smallNORB-shaped inputs (stereo pairs of 96x96 uint8 pixels, labels 0-4) with random pixel values: a step's time
does not depend on them. Each training step is the real one: 16-pixel edge padding and a random 96x96 crop on the
device, MixUp Beta(0.2, 0.2), the forward pass, the loss on softmax(a_out), the backward pass, RAdam, with the
paper's one-cycle schedule.

    python bench/smallnorb_benchmark.py                        # training steps (GPU if there is one, else CPU)
    python bench/smallnorb_benchmark.py --epochs 3             # and three epochs of 24,300 pairs (1,215 steps each)
    python bench/smallnorb_benchmark.py --epochs 3 --out bench/results/smallnorb_gpu.md
    python bench/smallnorb_benchmark.py --step_by_step         # on a GPU: the step-by-step routing kernels, not compiled
    python bench/smallnorb_benchmark.py --explicit_votes       # every routing forms its votes (no implicit votes)
    python bench/smallnorb_benchmark.py --optimizer foreach_radam   # torch's multi-tensor RAdam instead of fastai's
    python bench/smallnorb_benchmark.py --routing dynamic      # the model with another routing algorithm (`ROUTINGS`)

Step time: the median over `--steps` measured steps after `--warmup` steps, each timed from the start of its batch
(crop, MixUp) to the end of the optimizer step, synchronizing the GPU at both ends. Epochs: wall time of each
`Learner.fit` epoch over `--n_pairs` training pairs plus validation on `--n_valid` pairs (smallNORB's held-out toys,
one per category: 4,860 pairs). On a GPU the routing compiles in the short fit of the step timing (its warm-up steps
and its one validation batch), so the epochs time compiled code. Peak memory: on a GPU torch.cuda.max_memory_allocated
over the run (model, optimizer state, data and activations); on the CPU the peak resident set of the process.
The paper's own code: about 38 ms a step and 6 GiB on an H100 (50 epochs in about 38 minutes); the project's target
is 50 epochs in under 10 minutes. Tables measured on an H100: bench/results/smallnorb_gpu*.md.
"""
import argparse, platform, statistics, tempfile, time
from pathlib import Path
import torch
from capsule_routing.core import import_fastai_quietly
import_fastai_quietly()   # fastai's import raises torch's torch.jit.script notice; hidden for that import only
from fastai.callback.core import Callback
from capsule_routing.core import default_device
from capsule_routing.routing import Routing
from capsule_routing.lineage import ROUTINGS, LineageLayer
from capsule_routing.smallnorb import SmallNORBCapsNet
from capsule_routing.training import OPTIMIZERS, capsule_learner, compile_whole_model, fit_paper, quiet_learner
from capsule_routing.vision import tensor_dataloaders
from routing_benchmark import at_least, make_out_folder   # bench/, this script's folder

class StepTimer(Callback):
    "Wall time of each training batch, from before the augmentation callbacks to after the optimizer step"
    order = -10                                   # before PadCropCallback (-5) and MixUp (0)
    def __init__(self, sync): self.sync, self.times = sync, []
    def before_batch(self):
        if self.training: self.sync(); self.t0 = time.perf_counter()
    def after_step(self): self.sync(); self.times.append(time.perf_counter() - self.t0)

def random_pairs(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 256, (n, 2, 96, 96), dtype=torch.uint8, generator=g),   # [n, 2, 96, 96] stereo pairs
            torch.randint(0, 5, (n,), generator=g))                                   # [n] categories

def peak_memory_mib(device):
    if device.type == 'cuda': return torch.cuda.max_memory_allocated() / 2**20
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'): return int(line.split()[1]) / 1024

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--device', default=None, help="'cuda' or 'cpu' (default: the GPU if there is one)")
    p.add_argument('--bs', type=at_least(1), default=20)
    p.add_argument('--warmup', type=at_least(0), default=5, help='training steps not timed')
    p.add_argument('--steps', type=at_least(1), default=20, help='training steps timed')
    p.add_argument('--epochs', type=at_least(0), default=0, help='also time this many epochs of --n_pairs pairs')
    p.add_argument('--n_pairs', type=at_least(1), default=24_300, help="training pairs of an epoch (smallNORB's: 24,300)")
    p.add_argument('--n_valid', type=at_least(1), default=4_860, help="validation pairs of an epoch (5 held-out toys: 4,860)")
    p.add_argument('--compile_model', action='store_true', help='compile the whole model (compile_whole_model: no finite check, a GPU sync)')
    p.add_argument('--step_by_step', action='store_true', help='on a GPU, route with the step-by-step kernels (Routing.compile_on_gpu = False)')
    p.add_argument('--compile_mode', default=None, help="torch.compile mode for --compile_model, e.g. 'reduce-overhead' (CUDA graphs)")
    p.add_argument('--explicit_votes', action='store_true', help='form the votes in every routing (Routing.implicit_votes = False), as all routing did before implicit votes')
    p.add_argument('--optimizer', default='paper_radam', choices=list(OPTIMIZERS), help="as the training command lines: 'foreach_radam' is torch.optim.RAdam's multi-tensor update, 'paper_radam' fastai's per-parameter RAdam")
    p.add_argument('--routing', default='heinsen', choices=list(ROUTINGS), help="the routing algorithm of both routings (default: the paper's)")
    p.add_argument('--threads', type=at_least(1), default=None, help='CPU threads (torch.set_num_threads)')
    p.add_argument('--out', default=None, help='also write the table (markdown) to this file')
    args = p.parse_args()
    if args.n_pairs < args.bs:   # an epoch drops its last partial batch: it would have no step, and "50 epochs" would take 0 min
        p.error(f'argument --n_pairs: {args.n_pairs} pairs are fewer than one batch (--bs {args.bs}), so an epoch would have no training step')
    if args.threads: torch.set_num_threads(args.threads)
    device = torch.device(args.device) if args.device else default_device()
    if device.type == 'cuda' and not torch.cuda.is_available(): p.error(f"argument --device: {args.device!r} given, but torch sees no GPU")
    make_out_folder(args.out)
    sync = torch.cuda.synchronize if device.type == 'cuda' else (lambda: None)
    if device.type == 'cpu': torch.set_flush_denormal(True)      # as train_main does for CPU training
    if args.step_by_step: Routing.compile_on_gpu = False
    if args.explicit_votes: Routing.implicit_votes = LineageLayer.implicit_votes = False
    data_device = device if device.type == 'cuda' else None     # as smallnorb_dataloaders: arrays on the GPU

    def learner(n_train, n_valid):
        torch.manual_seed(0)
        dls = tensor_dataloaders(random_pairs(n_train), random_pairs(n_valid, seed=1), args.bs, device, data_device)
        model = SmallNORBCapsNet(routing=args.routing)
        if args.compile_model: compile_whole_model(model, mode=args.compile_mode)
        return capsule_learner(dls, model, pad=16, device=device, opt_func=OPTIMIZERS[args.optimizer])

    rows = []
    if device.type == 'cuda': torch.cuda.reset_peak_memory_stats()
    n_steps = args.warmup + args.steps
    learn, timer = learner(n_steps * args.bs, args.bs), StepTimer(sync)
    with quiet_learner(learn): fit_paper(learn, 1, ckpt_dir=Path(tempfile.mkdtemp()), show_progress=False, cbs=[timer])
    assert len(timer.times) == n_steps, (len(timer.times), n_steps)
    step_ms = [1000 * t for t in timer.times[args.warmup:]]
    med = statistics.median(step_ms)
    rows.append(('training step, batch %d' % args.bs, f'{med:.1f} ms (min {min(step_ms):.1f}, max {max(step_ms):.1f}; {args.steps} steps)',
                 f'{peak_memory_mib(device):,.0f} MiB'))
    steps_epoch = args.n_pairs // args.bs
    rows.append((f'50 epochs of {steps_epoch:,} steps at the median step (steps only)', f'{50 * steps_epoch * med / 60000:.1f} min', ''))
    if args.epochs:
        if device.type == 'cuda': torch.cuda.reset_peak_memory_stats()
        learn = learner(args.n_pairs, args.n_valid)
        with quiet_learner(learn): fit_paper(learn, args.epochs, ckpt_dir=Path(tempfile.mkdtemp()), show_progress=False)
        first, later = learn.epoch_seconds[0], learn.epoch_seconds[1:]
        what = f'{args.n_pairs:,} training pairs ({steps_epoch:,} steps) + {args.n_valid:,} validation pairs'
        rows.append((f'first epoch through the Learner, {what}', f'{first:.1f} s', f'{peak_memory_mib(device):,.0f} MiB'))
        if later:
            rows.append((f'each later epoch (mean of {len(later)})', f'{statistics.mean(later):.1f} s (min {min(later):.1f}, max {max(later):.1f})', ''))
            rows.append(('50 epochs: the first, then 49 at the later mean', f'{(first + 49 * statistics.mean(later)) / 60:.1f} min', ''))
        else: rows.append(('50 epochs at the first epoch\'s rate', f'{50 * first / 60:.1f} min', ''))
    if args.routing == 'heinsen':
        routing_kind = 'compiled equations (TorchInductor)' if device.type == 'cuda' and Routing.compile_on_gpu else 'step-by-step kernels'
    else: routing_kind = ROUTINGS[args.routing].__name__
    routing_kind += ', first routing with implicit votes' if Routing.implicit_votes else ', votes formed'
    if args.compile_model: routing_kind += ', whole model compiled' + (f' (mode {args.compile_mode})' if args.compile_mode else '') + ', no finite check'
    if args.optimizer == 'foreach_radam': routing_kind += "; optimizer: torch.optim.RAdam(foreach=True)"
    name = torch.cuda.get_device_name() if device.type == 'cuda' else f'{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads'
    table = '\n'.join([f'smallNORB model ({sum(p.numel() for p in learn.model.parameters()):,} parameters), '
                       f'{device.type} ({name}), torch {torch.__version__}, routing: {routing_kind}', '',
                       '| measurement | time | peak memory |', '|---|---|---|'] + [f'| {a} | {b} | {c} |' for a, b, c in rows])
    print(table)
    if args.out:
        with open(args.out, 'w') as f: f.write(table + '\n')

if __name__ == '__main__': main()
