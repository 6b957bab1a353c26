"""Copy finished training runs' small files into a results folder, one folder a run: results.json and history.csv,
and for seed 0 (a run named ..._s0) the chosen weights of best.pth as model.pt.

    python tools/collect_runs.py runs/fashion_lineage results/fashion_lineage heinsen_s0 heinsen_s1 ...

Used by tools/fashion_mnist_routings.sh, tools/fashion_mnist_losses.sh and tools/fashion_mnist_em_formed.py
(the SST runs have their own collector, `python -m capsule_routing.sst_analysis collect`, which also writes predictions).
"""
import shutil, sys
from pathlib import Path
from capsule_routing.training import load_checkpoint, atomic_save

def needed_files(name:str) -> list[str]:
    "The files `collect_runs` copies from run `name`: seed 0's chosen weights too"
    return ['results.json', 'history.csv'] + (['best.pth'] if name.endswith('_s0') else [])

def collect_runs(runs:Path, results:Path, names:list[str]):
    "Copy each named run of `runs` into `results/<name>/`; if any run lacks a file (not finished?), nothing is copied"
    missing = [str(Path(runs)/name/file) for name in names for file in needed_files(name) if not (Path(runs)/name/file).exists()]
    if missing: raise FileNotFoundError("nothing collected: these files do not exist (are the runs finished?):\n  " + '\n  '.join(missing))
    for name in names:
        src, dst = Path(runs)/name, Path(results)/name
        dst.mkdir(parents=True, exist_ok=True)
        for file in ('results.json', 'history.csv'): shutil.copy(src/file, dst/file)
        if name.endswith('_s0'): atomic_save(load_checkpoint(src/'best.pth')['model'], dst/'model.pt')
    print(f"collected {len(names)} runs into {results}")

if __name__ == '__main__':
    if len(sys.argv) < 4: sys.exit(__doc__)
    collect_runs(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
