"""Execute notebooks in place, as a reader would see them, keeping the saved outputs of cells tagged with a flag.

    python tools/execute_notebook.py nbs/03_smallnorb.ipynb [more.ipynb ...] [--run slow]

Cells tagged `#| slow` or `#| cuda` (settings.ini's tst_flags) are not run unless named with --run: their outputs
from an earlier execution stay as they were. Cells marked `#| eval: false` never run, as under nbdev_test, and
keep their outputs too. Every other code cell's outputs are replaced (cleared first, so a cell
that now prints nothing shows nothing). Stops at the first failing cell. Run `nbdev_clean` afterwards.
"""
import argparse, os, re, sys, time
from pathlib import Path
from execnb.nbio import read_nb, write_nb
from execnb.shell import CaptureShell

ROOT = Path(__file__).resolve().parent.parent

def directives(source: str) -> list[list[str]]:
    "The words of each of a cell's `#| ...` lines (nbdev's directives, e.g. `slow`, `export`, `eval: false`)"
    return [m.group(1).split() for line in source.splitlines() if (m := re.match(r'\s*#\s*\|\s*(.*)', line))]

def cell_flags(source: str) -> set[str]:
    "The flags of a cell's `#| flag` lines (e.g. slow, cuda, export)"
    return {w for words in directives(source) for w in words}

def evaluated(source: str) -> bool:
    "False for a cell marked `#| eval: false`, by nbdev_test's rule: a directive `eval:` whose first value is false, in any case"
    return not any(len(words) > 1 and words[0] == 'eval:' and words[1].lower() == 'false' for words in directives(source))

def execute(path: Path, run_flags: set[str], skip_flags: set[str]) -> float:
    nb = read_nb(path)
    shell, t0 = CaptureShell(path), time.time()
    cwd = os.getcwd(); os.chdir(path.parent)
    try:
        for cell in nb.cells:
            if cell.cell_type != 'code' or not evaluated(cell.source) or (cell_flags(cell.source) & (skip_flags - run_flags)): continue
            cell.outputs = []
            shell.cell(cell)
            if shell.exc: raise RuntimeError(f"{path.name}, cell {cell.idx_}:\n{cell.source}") from shell.exc
    finally: os.chdir(cwd)
    write_nb(nb, path)
    return time.time() - t0

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('notebooks', nargs='+', type=Path)
    ap.add_argument('--run', nargs='*', default=[], help='flags whose cells run too (e.g. slow)')
    args = ap.parse_args()
    from nbdev.config import get_config
    skip = set(get_config(path=ROOT).tst_flags.split())
    for p in args.notebooks:
        print(f'{p}: executed in {execute(p.resolve(), set(args.run), skip):.0f} s', flush=True)
