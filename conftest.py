"""Collect every numbered notebook in nbs/ as a pytest test, run the way `nbdev_test` runs it.

Cells tagged with a flag in settings.ini's `tst_flags` (`slow`, `cuda`) are skipped, unless the flag is
passed with `--nbflags "slow cuda"`. Each notebook is one test item, run in an interpreter of its own, so `pytest`
prints `N passed, M failed`.
"""
import os, subprocess, sys, tempfile
from pathlib import Path
import pytest

ROOT = Path(__file__).parent

SKIP_LOG = 'CAPSULE_ROUTING_SKIP_LOG'   # `core.report_skip` appends what was not found (a notebook's output is not shown here)

def pytest_configure(config):
    if not hasattr(config, 'workerinput') and SKIP_LOG not in os.environ:   # the main process: xdist workers inherit the variable
        fd, config._skip_log = tempfile.mkstemp(prefix='capsule_routing_skips_', suffix='.txt'); os.close(fd)
        os.environ[SKIP_LOG] = config._skip_log

def pytest_terminal_summary(terminalreporter, config):
    "List what was not found (shared files, embedding caches), so that skipped checks are seen"
    log = getattr(config, '_skip_log', None)
    missing = sorted(set(Path(log).read_text().splitlines())) if log and Path(log).exists() else []
    if missing:
        terminalreporter.write_sep('-', f"{len(missing)} files or caches not found: the checks that need them were skipped")
        for line in missing: terminalreporter.write_line(line)

def pytest_unconfigure(config):
    if log := getattr(config, '_skip_log', None):
        Path(log).unlink(missing_ok=True); os.environ.pop(SKIP_LOG, None)

def pytest_addoption(parser):
    parser.addoption('--nbflags', default='', help='space-separated notebook test flags to run (e.g. "slow cuda")')

def pytest_collect_file(file_path, parent):
    p = Path(file_path)
    if p.suffix == '.ipynb' and p.parent == ROOT/'nbs' and not p.name.startswith(('_', '.')):
        return NotebookFile.from_parent(parent, path=p)

class NotebookFile(pytest.File):
    def collect(self): yield NotebookItem.from_parent(self, name=self.path.stem)

class NotebookError(Exception): pass

RUN_ONE = """import sys
from pathlib import Path
from nbdev.config import get_config
from nbdev.test import test_nb
ok, secs = test_nb(Path(sys.argv[1]), skip_flags=get_config().tst_flags.split(), force_flags=sys.argv[2].split(), basepath=Path(sys.argv[3]))
sys.exit(0 if ok else 1)"""

class NotebookItem(pytest.Item):
    def runtest(self):
        # a fresh interpreter per notebook, as a reader runs one: what an earlier notebook imported or set (fastai's patches
        # of torch, a default dtype, a class attribute) must not make this one pass
        r = subprocess.run([sys.executable, '-c', RUN_ONE, str(self.path), self.config.getoption('--nbflags'), str(ROOT)],
                           cwd=self.path.parent, capture_output=True, text=True)
        if r.returncode:
            said = '\n'.join(l for l in (r.stdout + r.stderr).splitlines() if not l.lstrip().startswith('DEBUG'))
            raise NotebookError(f'{self.path.name} failed (in a fresh interpreter):\n{said[-6000:]}')

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, NotebookError): return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self): return self.path, 0, f'notebook {self.path.name}'
