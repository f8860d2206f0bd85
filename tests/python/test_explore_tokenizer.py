"""explore() is the library's JSON document (identical to `embedscope explore WORD --json`), and
the tokenizer round-trips."""
import json
import os
import subprocess

import numpy as np
import pytest

from conftest import cli_path


def test_explore_equals_cli(es, w2v_files):
    cli = cli_path()
    if not cli:
        pytest.skip("CLI not built (build/bin/embedscope)")
    if not os.path.exists("/usr/share/wordnet/index.noun"):
        pytest.skip("WordNet not installed (scripts/setup.sh)")
    path = str(w2v_files[0])
    kv = es.load(path)
    for word, k in (("king", 5), ("computer", 10)):
        ours = kv.explore(word, k=k)
        r = subprocess.run([cli, "explore", word, "--model", path, "-k", str(k), "--json"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert ours == json.loads(r.stdout)
        assert len(ours["neighbors"]) == k


def test_explore_bad_k(es, w2v_files):
    kv = es.load(str(w2v_files[0]))
    with pytest.raises(ValueError):
        kv.explore("king", k=0)


def test_tokenizer_round_trip(es, tmp_path):
    """A GPT-2-shaped table gets GPT-2's tokenizer (when setup.sh installed its files)."""
    from conftest import write_safetensors
    p = tmp_path / "gpt2shape.safetensors"
    write_safetensors(p, "wte.weight", np.random.default_rng(0).normal(size=(50257, 4)).astype(np.float32))
    kv = es.load(str(p))
    try:
        tok = kv.tokenizer
    except ValueError:
        pytest.skip("GPT-2 tokenizer files not installed")
    ids = tok.encode("Hello world, computer!")
    assert tok.decode(ids) == "Hello world, computer!"
    assert tok.encode(" computer") == [3644]
    ids2, offs = tok.encode_with_offsets("Hello world")
    assert ids2 == [15496, 995] and offs == [0, 5]
    assert tok.pieces("Hello world") == ["Hello", "␣world"]
    assert tok.decode_bytes([15496]) == b"Hello"
    assert len(tok) == 50257
    # keys are the exact token texts (gensim: get_index(index_to_key[i]) == i) ...
    keys = kv.index_to_key
    assert keys[3644] == " computer" and kv.get_index(" computer") == 3644
    assert all(kv.get_index(keys[i]) == i for i in range(0, 50257, 97))
    np.testing.assert_array_equal(kv[" computer"], kv.vectors[3644])
    # ... and a word that is no token resolves the library's way: the mean of its pieces
    pieces = tok.encode(" embedscopeness")
    assert len(pieces) > 1 and "embedscopeness" in kv
    np.testing.assert_allclose(kv["embedscopeness"], kv.vectors[pieces].mean(axis=0), rtol=1e-6)
    with pytest.raises(IndexError):
        tok.decode([10**6])


def test_neighbors_equals_cli(es, w2v_files):
    cli = cli_path()
    if not cli:
        pytest.skip("CLI not built")
    path = str(w2v_files[0])
    kv = es.load(path)
    for args, kwargs in ((["king"], {}), (["KING"], {}), (["#3"], {}),
                         (["king - man + woman"], {"expression": True}), (["cat"], {"mode": "fast", "k": 3})):
        ours = kv.neighbors(args[0], **kwargs)
        q = ["--expr", args[0]] if kwargs.get("expression") else [args[0]]
        cmd = [cli, "neighbors", *q, "--model", path, "--json", "-k", str(kwargs.get("k", 10))]
        if kwargs.get("mode"):
            cmd += ["--mode", kwargs["mode"]]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        theirs = json.loads(r.stdout)
        for d in (ours, theirs):
            d.pop("elapsed_ms", None)
            d.pop("threads", None)
        assert ours == theirs, (args, ours, theirs)
    # a vector query: the row itself comes first
    d = kv.neighbors(kv.vectors[5], k=3)
    assert d["neighbors"][0]["id"] == 5
