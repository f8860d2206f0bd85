#!/usr/bin/env python3
"""PCA and UMAP of every row: `embedscope project` against numpy / scikit-learn (PCA) and
umap-learn 0.5.3 (UMAP) on the same table, side by side in one run.

Usage (Debian's python, which has numpy, sklearn and umap-learn):
  /usr/bin/python3 bench/projection_bench.py --cli build/bin/embedscope [--table T.npy]
      [--out DIR] [--reuse-peer] [--skip-umap] [--exact-knn]

Without --table it writes a structured synthetic 50,257 x 768 float32 table (GPT-2's shape;
no GPT-2 weights are available offline): 300 Gaussian clusters whose centres lie on a random
32-dimensional subspace, plus isotropic noise, so neighbourhoods are real and trustworthiness
means something. --table takes any .npy (e.g. the default model exported with
`embedscope convert`).

Measured: wall and CPU seconds (all threads) of the whole command for ours (process start, mmap,
compute, atomic .npy write) and of the in-process call for the peers (fit_transform / eigh;
loading excluded; umap-learn's includes its numba compilation, as a user's first call does).
CPU seconds are the fairer figure on a shared, loaded machine. And
trustworthiness@10 (sklearn.manifold.trustworthiness, cosine) of both UMAP outputs on the same
seeded 5,000-row sample. Same n_neighbors (15), min_dist (0.1), metric (cosine) and seed (42).
umap-learn runs single-threaded when given a seed (its documented behaviour; without one it
is not reproducible); ours uses all cores and stays reproducible. Both build the kNN graph by
NN-descent above 4096 rows (ours: random-projection trees + NN-descent, umap_knn_approx in
analysis/projection.h); --exact-knn runs ours on the exact graph instead. --reuse-peer reuses
umap-learn's coordinates and time from an earlier run on the same table (a umap-learn run
takes minutes). Prints one JSON document.
"""
import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np


def make_table(path, n=50257, d=768, seed=0):
    rng = np.random.default_rng(seed)
    basis = rng.normal(size=(32, d)).astype(np.float32) / np.sqrt(32)
    centres = rng.normal(size=(300, 32)).astype(np.float32) @ basis * 3.0
    labels = rng.integers(300, size=n)
    X = centres[labels] + rng.normal(size=(n, d)).astype(np.float32) * 0.6
    np.save(path, X.astype(np.float32))


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_ours(cli, table, method, out, threads, extra=()):
    """(wall seconds, CPU seconds of all its threads)"""
    cmd = [cli, "project", table, "--method", method, "--dims", "2", "--no-cache", "-q", "-o", out,
           *extra]
    if threads:
        cmd += ["--threads", str(threads)]
    t, c = time.perf_counter(), child_cpu()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t, child_cpu() - c


def timed(fn):
    """(result, wall seconds, CPU seconds of this process's threads)"""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--table")
    ap.add_argument("--out", default="/tmp/embedscope-projection-bench")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--reuse-peer", action="store_true")
    ap.add_argument("--skip-umap", action="store_true")
    ap.add_argument("--exact-knn", action="store_true", help="ours on the exact kNN graph")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    table = a.table or os.path.join(a.out, "synthetic_50257x768.npy")
    if not a.table and not os.path.exists(table):
        make_table(table)
    X = np.load(table).astype(np.float32)
    digest = hashlib.sha256(X.tobytes()).hexdigest()[:16]
    res = {"table": table, "rows": X.shape[0], "dim": X.shape[1], "sha256_16": digest,
           "cores": os.cpu_count(), "load_avg_at_start": os.getloadavg()}

    # PCA: ours (exact, covariance + LAPACK) vs numpy's exact covariance + eigh and
    # scikit-learn's PCA (svd_solver auto: randomized for this shape).
    res["pca_ours_s"], res["pca_ours_cpu_s"] = run_ours(
        a.cli, table, "pca", os.path.join(a.out, "pca_ours.npy"), a.threads)

    def numpy_pca():
        C = X.astype(np.float64)
        C -= C.mean(axis=0)
        w, V = np.linalg.eigh(C.T @ C / (len(C) - 1))
        return C @ V[:, ::-1][:, :2]
    Y_np, res["pca_numpy_eigh_s"], res["pca_numpy_eigh_cpu_s"] = timed(numpy_pca)
    from sklearn.decomposition import PCA
    _, res["pca_sklearn_auto_s"], res["pca_sklearn_auto_cpu_s"] = timed(
        lambda: PCA(n_components=2, random_state=0).fit_transform(X))
    Y_ours = np.load(os.path.join(a.out, "pca_ours.npy"))
    res["pca_max_abs_diff_vs_numpy_up_to_sign"] = float(
        min(np.abs(Y_ours - s * Y_np).max() for s in (np.array([1, 1]), np.array([1, -1]),
                                                       np.array([-1, 1]), np.array([-1, -1]))))

    if not a.skip_umap:
        from sklearn.manifold import trustworthiness
        res["umap_ours_s"], res["umap_ours_cpu_s"] = run_ours(
            a.cli, table, "umap", os.path.join(a.out, "umap_ours.npy"), a.threads,
            ["--exact-knn"] if a.exact_knn else [])
        res["umap_ours_knn"] = "exact" if a.exact_knn else "nn-descent"
        peer_y = os.path.join(a.out, f"umap_learn_{digest}.npy")
        peer_t = os.path.join(a.out, f"umap_learn_{digest}.json")
        if a.reuse_peer and os.path.exists(peer_y) and os.path.exists(peer_t):
            peer = json.load(open(peer_t))
            res["umap_learn_s"], res["umap_learn_cpu_s"] = peer["seconds"], peer["cpu_seconds"]
            res["umap_learn_reused"] = True
            Y_peer = np.load(peer_y)
        else:
            import warnings
            warnings.filterwarnings("ignore")
            import umap
            res["umap_learn_version"] = umap.__version__ if hasattr(umap, "__version__") else "?"
            Y_peer, res["umap_learn_s"], res["umap_learn_cpu_s"] = timed(
                lambda: umap.UMAP(n_neighbors=15, min_dist=0.1, metric="cosine",
                                  random_state=42).fit_transform(X))
            np.save(peer_y, Y_peer)
            json.dump({"seconds": res["umap_learn_s"], "cpu_seconds": res["umap_learn_cpu_s"]},
                      open(peer_t, "w"))
        Y = np.load(os.path.join(a.out, "umap_ours.npy"))
        sample = np.random.default_rng(0).choice(len(X), size=min(5000, len(X)), replace=False)
        res["trust10_ours"] = float(trustworthiness(X[sample], Y[sample], n_neighbors=10,
                                                    metric="cosine"))
        res["trust10_umap_learn"] = float(trustworthiness(X[sample], Y_peer[sample],
                                                          n_neighbors=10, metric="cosine"))
        res["umap_speedup_wall"] = res["umap_learn_s"] / res["umap_ours_s"]
        res["umap_speedup_cpu"] = res["umap_learn_cpu_s"] / res["umap_ours_cpu_s"]
    res["load_avg_at_end"] = os.getloadavg()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    sys.exit(main())
