"""A/B in one process: `data_fingerprint` (a container many items hold is read at most twice) against the same data
read in full, every item hashed anew (as before 2026-11-27 06:30 UTC); both give the same digest, which is checked.

    python bench/fingerprint_shared.py

Cases: 1,000 records (objects of the user's own), or tuples, holding one 10,000-word vocabulary; and, for the cost of
remembering what was met where nothing is shared, 100,000 (str, int) tuples and 20,000 (100 floats, int) tuples.

Measured 2026-11-27 06:36 UTC on the idle 2-core machine (read in full -> data_fingerprint): records 50.45 -> 0.54 s,
tuples 49.96 -> 0.53 s, (str, int) 0.56 -> 0.65 s, (100 floats, int) 0.37 -> 0.38 s; the same digest in every case.
Measured again 2026-11-28 (a slower run of the same machine class), table committed in bench/results/fingerprint_shared.md:
records 71.34 -> 0.67 s, tuples 72.83 -> 0.65 s, (str, int) 0.75 -> 0.82 s, (100 floats, int) 0.54 -> 0.56 s."""
import hashlib, time, warnings
from torch.utils.data import DataLoader
warnings.filterwarnings('ignore', category=FutureWarning)   # fastai's import notes torch.jit.script's deprecation
from fastai.data.core import DataLoaders
from capsule_routing.training import data_fingerprint, _hash_data_set

class Holder:
    def __init__(self, vocab, i): self.vocab, self.i = vocab, i

def read_in_full(train, valid):   # data_fingerprint's own reading of each set, outside it: nothing remembered
    h = hashlib.sha256()
    for ds in (train, valid): _hash_data_set(h, ds, contents=True, legacy=False)
    return h.hexdigest()

def timed(f):
    t = time.perf_counter(); out = f(); return out, time.perf_counter() - t

vocab = {f'word{i}': i for i in range(10_000)}
cases = {'1,000 records holding a 10,000-word vocabulary': [Holder(vocab, i) for i in range(1000)],
         '1,000 tuples (vocabulary, label)': [(vocab, i) for i in range(1000)],
         '100,000 tuples (str, int), nothing shared': [(f'file{i}.png', i % 10) for i in range(100_000)],
         '20,000 tuples (100 floats, int), nothing shared': [([float(j) for j in range(i, i + 100)], i % 10) for i in range(20_000)]}
print(f"| case | read in full (s) | data_fingerprint (s) | same digest |\n|---|---|---|---|")
for name, train in cases.items():
    valid = train[:10]
    full, t_full = timed(lambda: read_in_full(train, valid))
    fingerprint, t_fp = timed(lambda: data_fingerprint(DataLoaders(DataLoader(train), DataLoader(valid))))
    print(f'| {name} | {t_full:.2f} | {t_fp:.2f} | {full == fingerprint} |', flush=True)
