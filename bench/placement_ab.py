#!/usr/bin/python3
"""Two-thread speed of one or more builds, told apart by where the host put the two vCPUs.

On these VMs the one-way cache-line hand-over between the two vCPUs (bench/vcpu_pingpong) is
either ~30-95 ns ("near": they share a cache) or ~200-260 ns ("far"), and it changes every few
tens of seconds. A trainer whose threads write the same rows is fast in one placement and slow in
the other, so a plain median mixes two populations. This script alternates the builds' N-thread
runs with a probe before and after each, adds a 1-thread run of the first build every round as
the yardstick, and reports medians per placement (a run whose two probes disagree is "mixed" and
left out of the per-placement medians).

Training settings are compare_train.py's (skip-gram, dim 100, window 5, negative 5, sample 1e-3,
min_count 5, lr 0.025) with --epochs (default 1, so the placement rarely changes during a run);
times are the training loop's (`train --json` "seconds").

Usage (from the repository root, after building):
  /usr/bin/python3 bench/placement_ab.py --cli build/bin/embedscope --cli /tmp/main/embedscope \\
      --repeat 5 --minutes 10
  /usr/bin/python3 bench/placement_ab.py --cli build/bin/embedscope --extra=--shared-negatives ...
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_train  # noqa: E402  (the corpus and the near/far thresholds)

NEAR, FAR = compare_train.PP_NEAR_NS, compare_train.PP_FAR_NS


def probe(pp):
    out = subprocess.run([pp, "--round-trips", "50000", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{pp} failed: {out.stderr.strip()}")
    return float(json.loads(out.stdout)["one_way_ns"])


def placement(p0, p1):
    return "near" if max(p0, p1) <= NEAR else "far" if min(p0, p1) >= FAR else "mixed"


def train(cli, corpus, threads, seed, epochs, extra, work):
    cmd = [cli, "train", corpus, "-o", os.path.join(work, "ab.bin"), "--dim", "100", "--window", "5",
           "--negative", "5", "--sample", "1e-3", "--min-count", "5", "--epochs", str(epochs),
           "--lr", "0.025", "--threads", str(threads), "--seed", str(seed), "-q", "--json"] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    j = json.loads(r.stdout)
    return j["seconds"], j["final_loss"]


def median(xs):
    s = sorted(xs)
    n = len(s)
    return None if n == 0 else s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", action="append", required=True,
                    help="an embedscope binary (repeat to compare builds; the first gives the 1-thread yardstick)")
    ap.add_argument("--extra", action="append", default=[], help="an extra train flag for every run")
    ap.add_argument("--repeat", type=int, default=5, help="Brown corpus repeated N times")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--minutes", type=float, default=10, help="stop starting rounds after this long")
    ap.add_argument("--pingpong", default=os.path.join(HERE, "../build/bin/vcpu_pingpong"))
    a = ap.parse_args()
    for path in a.cli + [a.pingpong]:
        if not os.access(path, os.X_OK):
            sys.exit(f"not an executable: {path}")
    work = tempfile.mkdtemp(prefix="placement_ab.")
    corpus = os.path.join(work, "brown.txt")
    n_words = compare_train.make_corpus(corpus, a.repeat)
    names = [f"build{i + 1}" for i in range(len(a.cli))]
    print(f"corpus: Brown x{a.repeat}, {n_words} words; {a.epochs} epoch(s); {a.threads} threads; "
          + "; ".join(f"{n} = {c}" for n, c in zip(names, a.cli)), flush=True)
    runs = {n: [] for n in names}  # (seconds, loss, placement, p0, p1)
    one = []
    t_end = time.time() + 60 * a.minutes
    rnd = 0
    while time.time() < t_end:
        rnd += 1
        order = names if rnd % 2 else names[::-1]  # ABBA: neither build always runs first
        line = []
        for n in order:
            p0 = probe(a.pingpong)
            s, loss = train(a.cli[names.index(n)], corpus, a.threads, rnd, a.epochs, a.extra, work)
            p1 = probe(a.pingpong)
            runs[n].append((s, loss, placement(p0, p1), p0, p1))
            line.append(f"{n} {s:.2f} s loss {loss:.4f} [{p0:.0f}/{p1:.0f} ns {placement(p0, p1)}]")
        s1, _ = train(a.cli[0], corpus, 1, rnd, a.epochs, a.extra, work)
        one.append(s1)
        print(f"  round {rnd}: " + "; ".join(line) + f"; 1 thread {s1:.2f} s", flush=True)
    m1 = median(one)
    print(f"\n1 thread ({names[0]}): median {m1:.2f} s over {len(one)} rounds "
          f"(all: {', '.join(f'{x:.2f}' for x in one)})")
    print(f"| build | placement | runs | {a.threads} threads median s | speed-up vs 1 thread | all s |")
    print("|---|---|---|---|---|---|")
    for n in names:
        for ph in ("near", "far", "mixed"):
            xs = [r[0] for r in runs[n] if r[2] == ph]
            if xs:
                print(f"| {n} | {ph} | {len(xs)} | {median(xs):.2f} | {m1 / median(xs):.2f}x | "
                      + ", ".join(f"{x:.2f}" for x in xs) + " |")


if __name__ == "__main__":
    main()
