"""Bad input from Python (reliability.md 6.8 P1, P2, P5, P6 and the issue's search cases): a
Python exception with a clear message, never a crash."""
import os

import numpy as np
import pytest


@pytest.fixture(scope="module")
def kv(es, npy_model):
    return es.load(str(npy_model[0]))


# --- search arguments (P2) ---------------------------------------------------------------------
def test_search_wrong_dtype(kv):
    with pytest.raises(ValueError, match="dtype float64.*C-contiguous float32"):
        kv.search(np.zeros((2, 64)), 5)
    with pytest.raises(ValueError, match="dtype int32"):
        kv.search(np.zeros((2, 64), dtype=np.int32), 5)


def test_search_non_contiguous(kv):
    q = np.zeros((64, 4), dtype=np.float32).T  # Fortran order
    with pytest.raises(ValueError, match="not C-contiguous"):
        kv.search(np.zeros((4, 128), dtype=np.float32)[:, ::2], 5)
    with pytest.raises(ValueError, match="not C-contiguous"):
        kv.search(q, 5)


def test_search_wrong_dim(kv):
    with pytest.raises(ValueError, match="63 columns but the model's vectors have 64"):
        kv.search(np.zeros((3, 63), dtype=np.float32), 5)
    with pytest.raises(ValueError, match="1 dimension.*reshape"):
        kv.search(np.zeros(64, dtype=np.float32), 5)
    with pytest.raises(ValueError, match="3 dimension"):
        kv.search(np.zeros((1, 2, 64), dtype=np.float32), 5)
    with pytest.raises(ValueError, match="no rows"):
        kv.search(np.zeros((0, 64), dtype=np.float32), 5)


def test_search_nan(kv):
    q = np.ones((3, 64), dtype=np.float32)
    q[1, 7] = np.nan
    with pytest.raises(ValueError, match=r"Q\[1, 7\] is not finite"):
        kv.search(q, 5)
    q[1, 7] = np.inf
    with pytest.raises(ValueError, match="not finite"):
        kv.search(q, 5)


def test_search_bad_k(kv):
    q = np.ones((1, 64), dtype=np.float32)
    for k in (0, -3):
        with pytest.raises(ValueError, match="k must be at least 1"):
            kv.search(q, k)
    with pytest.raises(ValueError, match="exceeds the model's 3000 searchable rows"):
        kv.search(q, 3001)
    with pytest.raises(ValueError, match="k must be an int"):
        kv.search(q, 2.5)
    with pytest.raises(ValueError, match="mode='ivf'"):
        kv.search(q, 3, mode="ivf")
    with pytest.raises(ValueError, match="mode='hnsw' searches by cosine"):
        kv.search(q, 3, mode="hnsw", metric="dot")
    D, I = kv.search(q, 3000)  # k == rows is fine
    assert sorted(I[0]) == list(range(3000))


def test_wrong_argument_types(es, kv):
    with pytest.raises(ValueError, match="numpy array"):
        kv.search([[1.0] * 64], 5)
    with pytest.raises(ValueError, match="numpy array"):
        kv.search(None, 5)
    with pytest.raises(TypeError):
        es.load(None)
    with pytest.raises(TypeError):
        kv.most_similar(3.5)
    with pytest.raises(TypeError):
        kv.most_similar(0, topn="3")
    with pytest.raises(ValueError, match="1-D array of 64 values"):
        kv.similar_by_vector(np.zeros(10, dtype=np.float32))
    with pytest.raises(ValueError, match="NaN"):
        kv.similar_by_vector(np.full(64, np.nan, dtype=np.float32))
    with pytest.raises(KeyError):
        kv[3000]
    with pytest.raises(KeyError):
        kv[-1]


# --- loaders (P1) --------------------------------------------------------------------------------
def test_missing_file(es, tmp_path):
    missing = tmp_path / "nope.bin"
    with pytest.raises(FileNotFoundError, match="nope.bin"):
        es.load(str(missing))
    with pytest.raises(FileNotFoundError, match="nope.bin"):
        es.KeyedVectors.load_word2vec_format(str(missing), binary=True)


def test_corrupt_files_raise_format_error(es, tmp_path):
    cases = {
        "truncated.bin": b"3 4\nab " + b"\x00" * 9,                   # W6: binary cut mid-vector
        "header.txt": b"1000000000 1000000000\nthe 0.1 0.2\n",        # W3: declared size > file
        "short.txt": b"2 3\nthe 0.1 0.2 0.3\ncat 0.1 0.2\n",          # W8: too few values
        "bad.npy": b"\x93NUMPY\x04\x00" + b"\x00" * 60,               # N2: unsupported version
        "bad.safetensors": b"\xff" * 8 + b"{}",                        # header length past EOF
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises((es.FormatError, es.UnsupportedError, ValueError)) as e:
            if name.endswith(".bin"):
                es.KeyedVectors.load_word2vec_format(str(p), binary=True)
            elif name.endswith(".txt"):
                es.KeyedVectors.load_word2vec_format(str(p), binary=False)
            else:
                es.load(str(p))
        assert name in str(e.value), (name, str(e.value))
    assert issubclass(es.FormatError, ValueError)


def test_message_identical_to_cli(es, tmp_path):
    """P1: the Python exception's message is the C++ library's (the CLI prints the same)."""
    import subprocess
    from conftest import cli_path
    cli = cli_path()
    if not cli:
        pytest.skip("CLI not built")
    p = tmp_path / "trunc.bin"
    p.write_bytes(b"3 4\nab " + b"\x00" * 9)
    with pytest.raises(ValueError) as e:
        es.load(str(p))
    r = subprocess.run([cli, "info", str(p)], capture_output=True, text=True)
    assert r.returncode != 0
    assert str(e.value) in r.stderr


def test_random_bytes_only_documented_exceptions(es, tmp_path):
    """P6: random bytes through the loaders raise only documented exception types."""
    rng = np.random.default_rng(0)
    allowed = (ValueError, OSError, IndexError)
    prefixes = [b"", b"\x93NUMPY\x01\x00", b"5 3\n", b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":"]
    for i in range(60):
        data = prefixes[i % len(prefixes)] + rng.bytes(int(rng.integers(0, 300)))
        p = tmp_path / f"r{i}.{['bin', 'npy', 'txt', 'safetensors'][i % 4]}"
        p.write_bytes(data)
        for load in (lambda: es.load(str(p)),
                     lambda: es.KeyedVectors.load_word2vec_format(str(p), binary=True),
                     lambda: es.KeyedVectors.load_word2vec_format(str(p), binary=False)):
            try:
                kv = load()
                kv.most_similar(0, topn=1) if len(kv) > 1 else None
            except allowed:
                pass


# --- after close (P5) ----------------------------------------------------------------------------
def test_calls_after_close(es, npy_model):
    kv = es.load(str(npy_model[0]))
    v = kv.vectors
    kv.close()
    for f in (lambda: kv.vectors, lambda: kv.most_similar(0), lambda: kv.search(np.ones((1, 64), np.float32), 2),
              lambda: len(kv), lambda: kv[0], lambda: kv.similarity(0, 1)):
        with pytest.raises(ValueError, match="closed"):
            f()
    assert "closed" in repr(kv)
    assert float(v[0, 0]) == float(npy_model[1][0, 0])


def test_no_tokenizer(es, kv):
    with pytest.raises(ValueError, match="no tokenizer"):
        kv.tokenizer
