#!/usr/bin/python3
"""Side-by-side nearest-neighbour benchmark: embedscope vs torch, numpy, faiss, hnswlib, gensim.

One process tree: this script makes the matrices, runs each peer in a child Python process per
thread count (so BLAS/OpenMP thread counts are set before import), runs embedscope's
bench/search_bench --compare (in-process timing in C++), and writes the "## search" section of
bench/RESULTS.md.

  /usr/bin/python3 bench/compare_search.py --bench build/bin/search_bench [--threads 1 2]

Matrices: random N(0,1) 50257 x 768 float32, and a "trained-like" structured one of the same
shape (anisotropic: a shared offset, 2000 clusters, low-rank noise), the structure trained
embeddings have and random Gaussian data lacks. Queries: 1000 noisy rows of each matrix.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

N, DIM, NQ, K = 50257, 768, 1000, 10


def make_matrices(d):
    import numpy as np
    rng = np.random.default_rng(0)
    W = rng.standard_normal((N, DIM), dtype=np.float32)
    W.tofile(f"{d}/random.f32")
    idx = rng.choice(N, NQ, replace=False)
    (W[idx] + 0.3 * rng.standard_normal((NQ, DIM), dtype=np.float32)).tofile(f"{d}/random_q.f32")
    offset = rng.standard_normal(DIM, dtype=np.float32) * 2.0
    centres = rng.standard_normal((2000, DIM), dtype=np.float32)
    basis = rng.standard_normal((64, DIM), dtype=np.float32) / 8.0
    T = (offset + centres[rng.integers(0, 2000, N)]
         + rng.standard_normal((N, 64), dtype=np.float32) @ basis
         + 0.2 * rng.standard_normal((N, DIM), dtype=np.float32)).astype(np.float32)
    T.tofile(f"{d}/trained.f32")
    (T[idx] + 0.05 * rng.standard_normal((NQ, DIM), dtype=np.float32)).astype(np.float32).tofile(f"{d}/trained_q.f32")


def peer_main(d, name, threads, with_hnsw):
    """Runs inside a child process whose BLAS/OpenMP thread env is already set."""
    import numpy as np, torch, faiss
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)
    W = np.fromfile(f"{d}/{name}.f32", dtype=np.float32).reshape(N, DIM)
    Q = np.fromfile(f"{d}/{name}_q.f32", dtype=np.float32).reshape(NQ, DIM)
    res = {}

    def med(f, reps):
        f(0)
        ts = []
        for r in range(reps):
            t0 = time.perf_counter(); f(r); ts.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ts)

    Wt, Qt = torch.from_numpy(W), torch.from_numpy(Q)
    res["torch_snippet_ms"] = med(lambda r: F.cosine_similarity(Wt, Qt[r].unsqueeze(0)).topk(K), 3)
    Wn = Wt / Wt.norm(dim=1, keepdim=True)
    Qn = Qt / Qt.norm(dim=1, keepdim=True)
    res["torch_matvec_ms"] = med(lambda r: (Wn @ Qn[r]).topk(K), 30)
    Wnn, Qnn = Wn.numpy(), Qn.numpy()
    def np_q(r):
        s = Wnn @ Qnn[r]
        i = np.argpartition(-s, K)[:K]
        return i[np.argsort(-s[i])]
    res["numpy_ms"] = med(np_q, 30)
    ix = faiss.IndexFlatIP(DIM); ix.add(Wnn)
    res["faiss_flatip_ms"] = med(lambda r: ix.search(Qnn[r:r + 1], K), 30)
    from gensim.models import KeyedVectors
    kv = KeyedVectors(DIM); kv.add_vectors([str(i) for i in range(N)], W); kv.fill_norms()
    res["gensim_ms"] = med(lambda r: kv.most_similar(positive=[Q[r]], topn=K), 30)
    res["torch_batch_ms"] = med(lambda r: (Wn @ Qn.T).topk(K, dim=0), 2)
    if with_hnsw:
        import hnswlib
        h = hnswlib.Index(space="ip", dim=DIM); h.init_index(max_elements=N, M=16, ef_construction=100)
        h.set_num_threads(threads)
        t0 = time.perf_counter(); h.add_items(Wnn); res["hnswlib_build_s"] = time.perf_counter() - t0
        h.set_num_threads(1)
        truth = [set(np.argsort(-(Wnn @ Qnn[r]))[:K].tolist()) for r in range(200)]
        runs = []
        for ef in (16, 32, 64, 128):
            h.set_ef(ef)
            hit = sum(len(truth[r] & set(h.knn_query(Qnn[r:r + 1], k=K)[0][0].tolist())) for r in range(200))
            runs.append({"ef": ef, "recall_at_10": hit / 2000,
                         "ms": med(lambda r: h.knn_query(Qnn[r:r + 1], k=K), 200)})
        res["hnswlib"] = runs
    print(json.dumps(res))


def run_peer(d, name, threads, with_hnsw):
    env = dict(os.environ)
    for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(v, None)  # fair to numpy/torch: let OpenBLAS pick its own kernels
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[v] = str(threads)
    out = subprocess.run([sys.executable, __file__, "--peer", d, name, str(threads), str(int(with_hnsw))],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_ours(bench, d, name, threads, with_hnsw):
    cmd = [bench, "--compare", f"{d}/{name}.f32", str(N), str(DIM), f"{d}/{name}_q.f32", str(NQ), str(threads), "--f16"]
    if with_hnsw:
        cmd.append("--hnsw")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def section(results, cmdline):
    L = ["## search", "", f"Command: `{cmdline}` (one process tree; peers in child Pythons with",
         "their thread env set; embedscope timed in-process by bench/search_bench --compare).",
         f"Matrices {N} x {DIM} float32 ({N * DIM * 4 / 1e6:.0f} MB); single-query figures are medians",
         "over 30 queries (k = 10); batch = 1000 queries incl. top-k. Bandwidth bound = matrix bytes /",
         "measured read bandwidth; sgemm GFLOP/s measured on the same 1000 x 768 x 50257 product.", ""]
    for name, per_t in results.items():
        L.append(f"### {name} matrix")
        L.append("")
        L.append("| figure | " + " | ".join(f"{t} thread{'s' if t > 1 else ''}" for t in per_t) + " |")
        L.append("|---|" + "---|" * len(per_t))
        def row(label, f):
            L.append(f"| {label} | " + " | ".join(f(r) for r in per_t.values()) + " |")
        row("SIMD target", lambda r: r["ours"]["target"])
        row("read bandwidth GB/s", lambda r: f"{r['ours']['read_bandwidth_gbs']:.1f}")
        row("bandwidth bound, f32 scan ms", lambda r: f"{N * DIM * 4 / r['ours']['read_bandwidth_gbs'] / 1e6:.2f}")
        row("sgemm GFLOP/s (OpenBLAS)", lambda r: f"{r['ours']['sgemm_gflops']:.0f}")
        row("torch copied snippet ms", lambda r: f"{r['peer']['torch_snippet_ms']:.1f}")
        row("torch normalised matvec+topk ms", lambda r: f"{r['peer']['torch_matvec_ms']:.2f}")
        row("numpy dot+argpartition ms", lambda r: f"{r['peer']['numpy_ms']:.2f}")
        row("faiss IndexFlatIP ms", lambda r: f"{r['peer']['faiss_flatip_ms']:.2f}")
        row("gensim most_similar ms", lambda r: f"{r['peer']['gensim_ms']:.2f}")
        def ratio_bw(r):
            bound = N * DIM * 4 / r['ours']['read_bandwidth_gbs'] / 1e6
            return f"{r['ours']['exact_ms']:.2f} ({r['ours']['exact_ms'] / bound:.2f}x bound, {r['peer']['torch_matvec_ms'] / r['ours']['exact_ms']:.2f}x torch)"
        row("**embedscope exact f32 ms**", ratio_bw)
        row("embedscope exact F16 / BF16 ms", lambda r: f"{r['ours']['exact_F16_ms']:.2f} / {r['ours']['exact_BF16_ms']:.2f}")
        row("**embedscope fast ms** (x torch matvec)", lambda r: f"{r['ours']['fast_ms']:.2f} ({r['peer']['torch_matvec_ms'] / r['ours']['fast_ms']:.2f}x)")
        row("fast top-10 identical to exact", lambda r: f"{100 * r['ours']['fast_identical_top10']:.1f}% of 200")
        row("torch batched W@Q.T+topk ms (1000 q)", lambda r: f"{r['peer']['torch_batch_ms']:.0f}")
        def batch(r):
            gf = 2.0 * N * DIM * NQ / (r['ours']['batch_ms'] / 1e3) / 1e9
            return f"{r['ours']['batch_ms']:.0f} ({gf:.0f} GFLOP/s = {100 * gf / r['ours']['sgemm_gflops']:.0f}% sgemm, {r['peer']['torch_batch_ms'] / r['ours']['batch_ms']:.2f}x torch)"
        row("**embedscope batch ms (1000 q)**", batch)
        if any("hnsw" in r["ours"] for r in per_t.values()):
            for i, ef in enumerate((16, 32, 64, 128)):
                def hn(r, i=i):
                    if "hnsw" not in r["ours"]:
                        return "-"
                    o, p = r["ours"]["hnsw"][i], r["peer"]["hnswlib"][i]
                    return (f"ours r@10 {o['recall_at_10']:.3f} {o['ms']:.3f} ms ({r['ours']['exact_ms'] / o['ms']:.0f}x exact); "
                            f"hnswlib r@10 {p['recall_at_10']:.3f} {p['ms']:.3f} ms")
                row(f"HNSW ef={ef} (M 16, efC 100)", hn)
            row("HNSW build s (ours / hnswlib)", lambda r: f"{r['ours']['hnsw_build_s']:.0f} / {r['peer']['hnswlib_build_s']:.0f}" if "hnsw" in r["ours"] else "-")
        L.append("")
    return "\n".join(L) + "\n"


def write_section(path, text):
    old = open(path).read() if os.path.exists(path) else "# Benchmark results\n\n"
    start = old.find("## search\n")
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + 1)
        new = old[:start] + text + (old[end + 1:] if end >= 0 else "")
    open(path, "w").write(new)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--peer":
        d, name, t, h = sys.argv[2:6]
        return peer_main(d, name, int(t), h == "1")
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/bin/search_bench")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"))
    ap.add_argument("--no-hnsw", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        make_matrices(d)
        results = {}
        for name in ("random", "trained"):
            results[name] = {}
            for t in a.threads:
                h = (not a.no_hnsw) and name == "trained" and t == max(a.threads)
                peer = run_peer(d, name, t, h)
                ours = run_ours(a.bench, d, name, t, h)
                results[name][t] = {"peer": peer, "ours": ours}
                print(name, t, json.dumps({"peer": peer, "ours": ours}), flush=True)
    text = section(results, "/usr/bin/python3 bench/compare_search.py " + " ".join(sys.argv[1:]))
    print(text)
    write_section(a.results, text)


if __name__ == "__main__":
    main()
