"""Writes the browser test's model: a word2vec text file (numpy) with planted neighbourhoods.

    /usr/bin/python3 make_fixture.py OUT.txt

"computer" with close variants and relatives, a few other clusters of real words (so WordNet
labels them), the king - man + woman structure for the analogy panel, and fillers.
"""
import sys

import numpy as np

rng = np.random.default_rng(0)
dim = 32
words = []


def cluster(centre_word, near, spread):
    c = rng.normal(size=dim)
    words.append((centre_word, c))
    for w, s in near:
        words.append((w, c + s * rng.normal(size=dim) * spread))


cluster("computer", [("computers", 0.05), ("Computer", 0.1), ("calculator", 0.2),
                     ("machine", 0.3), ("laptop", 0.35), ("software", 0.4)], np.sqrt(dim) / 3)
cluster("dog", [("dogs", 0.05), ("puppy", 0.2), ("cat", 0.3), ("animal", 0.35)], np.sqrt(dim) / 3)
cluster("banana", [("bananas", 0.05), ("apple", 0.3), ("fruit", 0.3), ("orange", 0.35)],
        np.sqrt(dim) / 3)
man, royal, fem = rng.normal(size=dim), rng.normal(size=dim) * 2, rng.normal(size=dim) * 2
for w, v in [("man", man), ("king", man + royal), ("woman", man + fem),
             ("queen", man + royal + fem)]:
    words.append((w, v + 0.05 * rng.normal(size=dim)))
# reliability.md H7: tokens that are markup must show as text.
words.append(("<b>bold</b>", rng.normal(size=dim) * 3))
words.append(("<img/src=x/onerror=window.__pwned=1>", rng.normal(size=dim) * 3))
words += [("filler%d" % i, rng.normal(size=dim) * 3) for i in range(400)]
with open(sys.argv[1], "w") as f:
    f.write("%d %d\n" % (len(words), dim))
    for w, v in words:
        f.write(w + " " + " ".join("%.6f" % x for x in v) + "\n")
