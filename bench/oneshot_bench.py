#!/usr/bin/env python3
"""One-shot query in a fresh process: embedscope against the memory-bandwidth floor and torch.

For each table (100k, 400k, 1.6M rows x 300 float32, random normal, seed 1, written as .npy
once into --dir), with the file warm in the page cache (evicted and read once, see warm()):

  ours    wall time of `embedscope neighbors TABLE --batch Q --threads T -k 10 --json` where
          Q holds one query ("#7"), in a fresh process each run (median of --runs), and the
          search time it reports itself on stderr ("batch: ... ms").
  floor   table bytes / the T-thread memory-read bandwidth (torch's sum over a resident
          array of the table's size, T threads, best of 5): the least time any exact scan of
          the table on T threads can take once it is mapped.
  fresh   wall time of bench/oneshot_floor (built beside embedscope) on the table: a fresh
          process that maps the file and reads every byte once on T threads, nothing else
          (median of --runs). What a fresh process cannot avoid: exec, mapping, one read.
  torch   a fresh python3 that loads the table (numpy mmap), torch.from_numpy, normalises,
          matmul, topk(10); the time from load to answer measured inside it (imports excluded:
          python3 + torch import alone take ~1 s), median of --runs.

ours, fresh and the baseline run in turn, once per round, with a pause after each (a detached
child of ours unmaps its table after its caller has the answer; the next run should not share
the CPUs with that).

Prints one markdown row per table: figure | floor | fresh | torch | ours (wall, search) |
ours/floor | ours/fresh; with --baseline CLI, that binary's wall time too (before / after).

  /usr/bin/python3 bench/oneshot_bench.py --cli build/bin/embedscope --dir /tmp/oneshot
  /usr/bin/python3 bench/oneshot_bench.py --cli build/bin/embedscope --baseline /tmp/old/embedscope
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = [100_000, 400_000, 1_600_000]
DIM = 300

TORCH_SCRIPT = r"""
import sys, time
import numpy as np, torch
torch.set_num_threads(int(sys.argv[2]))
t0 = time.perf_counter()
a = np.load(sys.argv[1], mmap_mode="r")
x = torch.from_numpy(np.asarray(a))
q = x[7]
n = torch.linalg.vector_norm(x, dim=1)
s = (x @ q) / (n * torch.linalg.vector_norm(q))
v, i = torch.topk(s, 10)
t1 = time.perf_counter()
print((t1 - t0) * 1e3, int(i[0]))
"""


def make_table(path, n):
    if os.path.exists(path) and os.path.getsize(path) > n * DIM * 4:
        return
    rng = np.random.default_rng(1)
    a = np.lib.format.open_memmap(path + ".tmp", mode="w+", dtype=np.float32, shape=(n, DIM))
    for b in range(0, n, 100_000):
        e = min(n, b + 100_000)
        a[b:e] = rng.standard_normal((e - b, DIM), dtype=np.float32)
    a.flush()
    del a
    os.replace(path + ".tmp", path)


def warm(path):
    """The file as the page cache holds it after one sequential read: evicted, then read.

    How a cached file is held (in 2 MB folios that a mapping takes in one page-table entry each,
    or split into 4 KB pages) decides most of a fresh process's mapping cost, and a file cached
    long ago may have been split since; re-reading it makes every run start from the same state.
    """
    with open(path, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while f.read(1 << 24):
            pass


def bandwidth(nbytes, threads):
    import torch

    torch.set_num_threads(threads)
    x = torch.ones(nbytes // 4, dtype=torch.float32)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        x.sum()
        best = min(best, time.perf_counter() - t0)
    return nbytes / best


def timed(cmd):
    """Wall ms of one fresh process, and its stderr. Then a pause: a detached child (ours)
    unmaps its table after the caller has its answer, and the next run must not share the
    CPUs with that."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = (time.perf_counter() - t0) * 1e3
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr}")
    time.sleep(0.1)
    return wall, p.stderr


def run_interleaved(cmds, runs):
    """Median wall ms of each command, and of our reported search time, over `runs` rounds
    that run each command once in turn (so a drift of the machine's pace hits all alike); a
    first round warms the binaries and their libraries."""
    walls = {name: [] for name in cmds}
    searches = []
    for r in range(runs + 1):
        for name, cmd in cmds.items():
            wall, err = timed(cmd)
            if r == 0:
                continue
            walls[name].append(wall)
            m = re.search(r"batch: \d+ queries in ([0-9.]+) ms", err)
            if name == "ours" and m:
                searches.append(float(m.group(1)))
    med = {name: statistics.median(w) for name, w in walls.items()}
    return med, (statistics.median(searches) if searches else float("nan"))


def run_torch(table, threads, runs):
    times = []
    for r in range(runs + 1):
        p = subprocess.run([sys.executable, "-c", TORCH_SCRIPT, table, str(threads)],
                           capture_output=True, text=True, check=True)
        if r:
            times.append(float(p.stdout.split()[0]))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/bin/embedscope")
    ap.add_argument("--dir", default="/tmp/embedscope-oneshot")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--floor-probe", default=None,
                    help="oneshot_floor binary (default: bin/oneshot_floor beside --cli)")
    ap.add_argument("--baseline", default=None, help="another embedscope to time the same way")
    a = ap.parse_args()
    probe = a.floor_probe or os.path.join(os.path.dirname(a.cli), "oneshot_floor")
    if not os.access(probe, os.X_OK):
        sys.exit(f"{probe}: not found; build it (cmake --build build --target oneshot_floor)")
    os.makedirs(a.dir, exist_ok=True)
    qfile = os.path.join(a.dir, "one_query.txt")
    with open(qfile, "w") as f:
        f.write("#7\n")
    print("| table | floor ms | fresh-process floor ms | torch ms (in-process) | ours ms (wall) | "
          "ours search ms | ours / floor | ours / fresh floor |" +
          (" baseline ms (wall) |" if a.baseline else ""))
    print("|---|---|---|---|---|---|---|---|" + ("---|" if a.baseline else ""))
    for n in map(int, a.sizes.split(",")):
        path = os.path.join(a.dir, f"t{n}x{DIM}.npy")
        make_table(path, n)
        warm(path)
        nbytes = n * DIM * 4
        floor = nbytes / bandwidth(nbytes, a.threads) * 1e3
        query = ["neighbors", path, "--batch", qfile, "--threads", str(a.threads), "-k", "10",
                 "--json"]
        cmds = {"fresh": [probe, path, "--threads", str(a.threads)], "ours": [a.cli] + query}
        if a.baseline:
            cmds["baseline"] = [a.baseline] + query
        med, search = run_interleaved(cmds, a.runs)
        fresh, wall, base = med["fresh"], med["ours"], med.get("baseline")
        tt = run_torch(path, a.threads, a.runs)
        print(f"| {n} x {DIM} f32 ({nbytes / 1e6:.0f} MB) | {floor:.1f} | {fresh:.1f} | "
              f"{tt:.1f} | {wall:.1f} | {search:.1f} | {wall / floor:.2f}x | "
              f"{wall / fresh:.2f}x |" + (f" {base:.1f} |" if base is not None else ""),
              flush=True)


if __name__ == "__main__":
    main()
