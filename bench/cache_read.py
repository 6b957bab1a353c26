"""Random reads from an embedding cache: through the memory map (`np.array(cache[i])`) against `cache.read(i)`.

    python bench/cache_read.py CACHE_FOLDER [--n 300] [--seed 0] [--drop_caches]

Prints one row per way: texts read, seconds, texts a second, bytes the process read from the device per byte it
needed (from /proc/self/io; Linux). --drop_caches empties the page cache before each way (root only), so both start
cold; without it, whatever the page cache holds is served from memory. Each way reads its own random texts.
"""
import argparse, os, time
from pathlib import Path
import numpy as np
from capsule_routing.embeddings import EmbeddingCache

def device_bytes() -> int:
    for line in Path('/proc/self/io').read_text().splitlines():
        if line.startswith('read_bytes:'): return int(line.split()[1])
    raise RuntimeError('no read_bytes in /proc/self/io')

def drop_page_cache():
    os.sync(); Path('/proc/sys/vm/drop_caches').write_text('1\n')

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('cache'); ap.add_argument('--n', type=int, default=300); ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--drop_caches', action='store_true')
    a = ap.parse_args()
    if not Path(a.cache).is_dir(): ap.error(f'argument cache: {a.cache} is not a folder')   # the cache would say its build did not finish
    if a.n < 1: ap.error(f'argument --n: expected a number of texts of at least 1, got {a.n}')
    cache = EmbeddingCache(a.cache)
    rng = np.random.default_rng(a.seed)
    ways = {'memory map: np.array(cache[i])': lambda i: np.array(cache[i]), 'cache.read(i)': cache.read}
    windows = {p.parent.parent.name: p.read_text().strip() for p in Path('/sys/block').glob('*/queue/read_ahead_kb')}   # for the record
    print(f"{cache}\nreadahead (KiB) by device: {windows}; page cache {'dropped before each way' if a.drop_caches else 'as found'}")
    print(f"| way | texts | seconds | texts/s | device bytes / needed bytes |\n|---|---|---|---|---|")
    for name, fn in ways.items():
        idxs = rng.integers(0, len(cache), a.n)
        if a.drop_caches: drop_page_cache()
        b0, t0, needed = device_bytes(), time.perf_counter(), 0
        for i in idxs: needed += fn(int(i)).nbytes
        dt, got = time.perf_counter() - t0, device_bytes() - b0
        print(f"| {name} | {a.n} | {dt:.2f} | {a.n / dt:.0f} | {got / needed:.1f} |")

if __name__ == '__main__': main()
