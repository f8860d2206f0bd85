"""embedscope.train: the library's trainer; one thread + a seed gives the same table as
`embedscope train` with the same options."""
import subprocess

import numpy as np
import pytest

from conftest import GROUPS, cli_path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = np.random.default_rng(4)
    p = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    with open(p, "w") as f:
        for _ in range(3000):
            g = GROUPS[rng.integers(0, len(GROUPS))]
            f.write(" ".join(rng.choice(g, 8)) + "\n")
    return p


OPTS = dict(dim=16, epochs=2, min_count=1, threads=1, seed=3, window=3, negative=4)


def test_train_returns_keyed_vectors(es, corpus):
    calls = []
    kv = es.train(str(corpus), progress=calls.append, progress_interval=0.0, **OPTS)
    assert len(kv) == sum(len(g) for g in GROUPS) and kv.vector_size == 16
    assert kv.train_info["corpus_words"] == 3000 * 8
    assert calls and calls[-1]["done"] > 0 and "unit" in calls[-1]
    # words of a group end up nearer each other than the other groups' words
    top = [w for w, _ in kv.most_similar("king", topn=5)]
    assert sum(w in GROUPS[0] for w in top) >= 3, top


def test_train_same_table_as_cli(es, corpus, tmp_path):
    cli = cli_path()
    if not cli:
        pytest.skip("CLI not built")
    kv = es.train(str(corpus), **OPTS)
    out = tmp_path / "cli.safetensors"
    args = [cli, "train", str(corpus), "-o", str(out), "-q"]
    for k, v in OPTS.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    subprocess.run(args, check=True, capture_output=True, timeout=120)
    ref = es.load(str(out))
    assert ref.index_to_key == kv.index_to_key
    np.testing.assert_array_equal(ref.vectors, kv.vectors)
    p = tmp_path / "py.safetensors"
    kv.save(str(p))
    np.testing.assert_array_equal(es.load(str(p)).vectors, ref.vectors)


def test_train_errors(es, corpus, tmp_path):
    with pytest.raises(ValueError, match="arch='rnn'"):
        es.train(str(corpus), arch="rnn")
    with pytest.raises(ValueError):
        es.train(str(corpus), dim=0)
    with pytest.raises(FileNotFoundError):
        es.train(str(tmp_path / "missing.txt"))

    def boom(p):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        es.train(str(corpus), progress=boom, progress_interval=0.0, **OPTS)
