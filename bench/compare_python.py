#!/usr/bin/python3
"""embedscope's Python module side by side with gensim, faiss and torch, in one process.

  PYTHONPATH=build/python:python /usr/bin/python3 bench/compare_python.py [--threads 1] [--reps 5]

Table: 50257 x 768 float32, random but structured: 2000 cluster centres N(0, 1), each row a
centre plus N(0, 0.5^2) noise (so neighbour lists have real near neighbours), seed 0; written
as .npy (embedscope, numpy) and a torch .pt (torch.load) in a temporary folder.

Measured (median of --reps runs, after one warm-up):
  most_similar   kv.most_similar(row, topn=10) for 100 rows, per call: embedscope vs gensim 4
                 (gensim's KeyedVectors over the same array, norms precomputed). embedscope's
                 exact mode answers through the bounded int8 scan after its 8th query (the
                 warm-up), with the float scan's answer; "rows rescored" is its price per query.
                 Then the same 100 calls from 2 Python threads at once vs one thread running
                 both halves (calls run in parallel on separate searcher lanes).
  search         1000 queries (rows + N(0, 0.3^2) noise), k = 10, inner product:
                 embedscope kv.search(Q, 10, metric="dot") vs faiss IndexFlatIP.search vs
                 torch (Q @ W.T).topk(10); also embedscope's cosine search
  load           embedscope.load(npy) (mmap) vs numpy.load vs torch.load, page cache warm
Thread counts are fixed before the libraries load (OPENBLAS/OMP env, torch, faiss, embedscope).
"""
import argparse
import os
import statistics
import sys
import threading
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--reps", type=int, default=5)
args = ap.parse_args()
for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = str(args.threads)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import faiss  # noqa: E402
from gensim.models import KeyedVectors as GKV  # noqa: E402

sys.path[:0] = [p for p in (os.path.join(os.path.dirname(__file__), "..", "build", "python"),
                            os.path.join(os.path.dirname(__file__), "..", "python")) if os.path.isdir(p)]
import embedscope  # noqa: E402

torch.set_num_threads(args.threads)
faiss.omp_set_num_threads(args.threads)
embedscope.set_threads(args.threads)

N, DIM, NQ, K = 50257, 768, 1000, 10


def med(fn, reps=args.reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def main():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(2000, DIM)).astype(np.float32)
    W = (centres[rng.integers(0, 2000, N)] + 0.5 * rng.normal(size=(N, DIM))).astype(np.float32)
    Q = np.ascontiguousarray(W[rng.integers(0, N, NQ)] + 0.3 * rng.normal(size=(NQ, DIM)).astype(np.float32))
    rows = [int(x) for x in rng.integers(0, N, 100)]
    out = {}
    with tempfile.TemporaryDirectory() as d:
        npy, pt = os.path.join(d, "w.npy"), os.path.join(d, "w.pt")
        np.save(npy, W)
        torch.save(torch.from_numpy(W), pt)

        out["load embedscope.load (ms)"] = med(lambda: embedscope.load(npy).vectors)
        out["load embedscope.load + one row read (ms)"] = med(lambda: float(embedscope.load(npy).vectors[N - 1].sum()))
        out["load numpy.load (ms)"] = med(lambda: np.load(npy))
        out["load torch.load (ms)"] = med(lambda: torch.load(pt))

        kv = embedscope.load(npy)
        g = GKV(vector_size=DIM)
        g.add_vectors([f"w{i}" for i in range(N)], W)
        g.fill_norms()
        for r in rows[:10]:  # same answers before timing
            a = [k for k, _ in kv.most_similar(r, topn=10)]
            b = [g.get_index(k) for k, _ in g.most_similar(r, topn=10)]
            assert [int(x) for x in (kv.get_index(k) for k in a)] == b, (r, a, b)
        out["most_similar embedscope (ms/call)"] = med(lambda: [kv.most_similar(r, topn=10) for r in rows]) / len(rows)
        out["most_similar embedscope mode=fast (ms/call)"] = med(lambda: [kv.most_similar(r, topn=10, mode="fast") for r in rows]) / len(rows)
        out["most_similar gensim (ms/call)"] = med(lambda: [g.most_similar(r, topn=10) for r in rows]) / len(rows)
        st = kv._m.prefilter_stats()
        out["most_similar exact: int8-prefiltered queries"] = st["queries"]
        out["most_similar exact: rows rescored per query"] = st["rescored"] / max(1, st["queries"])

        def two_threads():
            ts = [threading.Thread(target=lambda h=h: [kv.most_similar(r, topn=10) for r in h])
                  for h in (rows[:50], rows[50:])]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        out["most_similar 100 calls, 1 Python thread (ms)"] = med(lambda: [kv.most_similar(r, topn=10) for r in rows])
        out["most_similar 100 calls, 2 Python threads (ms)"] = med(two_threads)

        index = faiss.IndexFlatIP(DIM)
        index.add(W)
        Wt = torch.from_numpy(W)
        Qt = torch.from_numpy(Q)
        De, Ie = kv.search(Q, K, metric="dot")
        Df, If = index.search(Q, K)
        agree = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(Ie, If)]))
        out["search agreement embedscope/faiss (top-10 overlap)"] = agree
        out["search embedscope dot (ms, 1000 q)"] = med(lambda: kv.search(Q, K, metric="dot"))
        out["search embedscope cosine (ms, 1000 q)"] = med(lambda: kv.search(Q, K))
        out["search embedscope dot mode=fast (ms, 1000 q)"] = med(lambda: kv.search(Q, K, metric="dot", mode="fast"))
        Dq, Iq = kv.search(Q, K, metric="dot", mode="fast")
        out["search agreement fast/exact (top-10 overlap)"] = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(Iq, Ie)]))
        out["search faiss IndexFlatIP (ms, 1000 q)"] = med(lambda: index.search(Q, K))
        out["search torch Q@W.T+topk (ms, 1000 q)"] = med(lambda: torch.topk(Qt @ Wt.T, K, dim=1))
    print(f"threads={args.threads} reps={args.reps} table={N}x{DIM} float32")
    for k, v in out.items():
        print(f"{k:55s} {v:10.3f}")
    s = out
    print(f"most_similar speed-up vs gensim: {s['most_similar gensim (ms/call)'] / s['most_similar embedscope (ms/call)']:.2f}x")
    print(f"search speed-up vs faiss: {s['search faiss IndexFlatIP (ms, 1000 q)'] / s['search embedscope dot (ms, 1000 q)']:.2f}x, "
          f"vs torch: {s['search torch Q@W.T+topk (ms, 1000 q)'] / s['search embedscope dot (ms, 1000 q)']:.2f}x")


if __name__ == "__main__":
    main()
