"""Fixtures for the Python module's tests: every model is written at test time by the real
tools (gensim for word2vec files, numpy for .npy, a plain safetensors writer), never taken from
the repository or ../shared."""
import json
import os
import pathlib
import struct
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The build tree's module and the package sources, when not already importable.
for p in (ROOT / "build" / "python", ROOT / "python"):
    if p.is_dir() and str(p) not in sys.path:
        sys.path.append(str(p))

# Real English words (WordNet knows them, so explore labels them) in a few topical groups, then
# filler words; vectors are group centres plus noise so neighbour lists are meaningful.
GROUPS = [
    ["king", "queen", "prince", "princess", "monarch", "throne", "crown", "royal"],
    ["man", "woman", "boy", "girl", "father", "mother", "son", "daughter"],
    ["cat", "dog", "horse", "cow", "sheep", "goat", "mouse", "rabbit"],
    ["computer", "keyboard", "software", "program", "network", "server", "laptop", "printer"],
    ["breakfast", "lunch", "dinner", "cereal", "bread", "butter", "cheese", "soup"],
    ["red", "green", "blue", "yellow", "purple", "orange", "black", "white"],
    ["paris", "london", "berlin", "rome", "madrid", "vienna", "prague", "dublin"],
    ["france", "england", "germany", "italy", "spain", "austria", "bohemia", "ireland"],
]
N_FILLER = 1200
DIM = 48


def make_vocab_and_vectors(seed=7, dim=DIM):
    rng = np.random.default_rng(seed)
    words, vecs = [], []
    centres = rng.normal(size=(len(GROUPS), dim)).astype(np.float32)
    for g, group in enumerate(GROUPS):
        for w in group:
            words.append(w)
            vecs.append(centres[g] + 0.6 * rng.normal(size=dim))
    for i in range(N_FILLER):
        words.append(f"w{i}")
        vecs.append(rng.normal(size=dim) * rng.uniform(0.5, 2.0))
    return words, np.asarray(vecs, dtype=np.float32)


def write_safetensors(path, name, arr):
    arr = np.ascontiguousarray(arr)
    dt = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16"}[arr.dtype]
    header = {name: {"dtype": dt, "shape": list(arr.shape), "data_offsets": [0, arr.nbytes]}}
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        f.write(arr.tobytes())


@pytest.fixture(scope="session")
def es():
    import embedscope
    return embedscope


@pytest.fixture(scope="session")
def w2v_files(tmp_path_factory):
    """(binary path, text path, pairs path, analogies path, words), written by gensim."""
    from gensim.models import KeyedVectors as GKV
    d = tmp_path_factory.mktemp("w2v")
    words, vecs = make_vocab_and_vectors()
    g = GKV(vector_size=vecs.shape[1])
    g.add_vectors(words, vecs)
    binp, txtp = d / "vectors.bin", d / "vectors.txt"
    g.save_word2vec_format(str(binp), binary=True)
    g.save_word2vec_format(str(txtp), binary=False)
    rng = np.random.default_rng(3)
    pairs = d / "pairs.tsv"
    with open(pairs, "w") as f:
        f.write("# word1\tword2\tscore\n")
        for _ in range(60):
            a, b = rng.choice(words[:64], 2, replace=False)
            f.write(f"{a}\t{b}\t{rng.uniform(0, 10):.2f}\n")
        f.write("king\tunknownword\t5.0\n")
    analogies = d / "questions.txt"
    with open(analogies, "w") as f:
        for s, (ga, gb) in enumerate([(0, 1), (6, 7), (2, 3)]):
            f.write(f": section-{s}\n")
            for i in range(6):
                a, b, c, e = GROUPS[ga][i], GROUPS[gb][i], GROUPS[ga][i + 1], GROUPS[gb][i + 1]
                f.write(f"{a} {b} {c} {e}\n")
        f.write("king queen missingword prince\n")
    return binp, txtp, pairs, analogies, words


@pytest.fixture(scope="session")
def kv_pair(w2v_files, es):
    from gensim.models import KeyedVectors as GKV
    binp = str(w2v_files[0])
    return es.KeyedVectors.load_word2vec_format(binp, binary=True), GKV.load_word2vec_format(binp, binary=True)


@pytest.fixture(scope="session")
def npy_model(tmp_path_factory, es):
    """A float32 .npy table (zero-copy mapped by embedscope)."""
    d = tmp_path_factory.mktemp("npy")
    rng = np.random.default_rng(11)
    arr = rng.normal(size=(3000, 64)).astype(np.float32)
    p = d / "table.npy"
    np.save(p, arr)
    return p, arr


def cli_path():
    p = os.environ.get("ES_CLI") or str(ROOT / "build" / "bin" / "embedscope")
    return p if os.path.exists(p) else None
