"""Zero copy, read-only views and lifetime (reliability.md P3), batch search against numpy, and
threads (P4)."""
import gc
import threading

import numpy as np
import pytest

from conftest import write_safetensors


def mapping_of(path):
    """(start, end) address ranges of `path` in /proc/self/maps."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == str(path):
                a, b = (int(x, 16) for x in parts[0].split("-"))
                out.append((a, b))
    return out


def data_address(arr):
    return arr.__array_interface__["data"][0]


@pytest.mark.parametrize("fmt", ["npy", "safetensors"])
def test_vectors_zero_copy_read_only_lifetime(es, tmp_path, fmt):
    rng = np.random.default_rng(1)
    ref = rng.normal(size=(500, 32)).astype(np.float32)
    p = tmp_path / ("t." + fmt)
    if fmt == "npy":
        np.save(p, ref)
    else:
        write_safetensors(p, "weight", ref)
    kv = es.load(str(p))
    v = kv.vectors
    assert v.dtype == np.float32 and v.shape == ref.shape
    # zero copy: the array's memory lies inside the file's mapping; two takes share it
    ranges = mapping_of(p.resolve())
    assert ranges, "file is not mapped"
    addr = data_address(v)
    assert any(a <= addr and addr + v.nbytes <= b for a, b in ranges)
    assert np.shares_memory(v, kv.vectors)
    assert v.base is not None
    # read-only
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0, 0] = 1.0
    with pytest.raises(ValueError):
        v.setflags(write=True)
    row = kv.get_vector(3)
    assert np.shares_memory(row, v) and not row.flags.writeable
    # lifetime: valid after the model object is gone
    del kv, row
    gc.collect()
    np.testing.assert_array_equal(v, ref)
    assert mapping_of(p.resolve())
    del v
    gc.collect()
    assert not mapping_of(p.resolve())


def test_vectors_float16_view(es, tmp_path):
    ref = np.random.default_rng(2).normal(size=(100, 16)).astype(np.float16)
    p = tmp_path / "h.safetensors"
    write_safetensors(p, "weight", ref)
    kv = es.load(str(p))
    v = kv.vectors
    assert v.dtype == np.float16
    np.testing.assert_array_equal(v, ref)
    addr = data_address(v)
    assert any(a <= addr < b for a, b in mapping_of(p.resolve()))


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def test_no_rss_growth_taking_vectors_of_154mb_table(es, tmp_path):
    p = tmp_path / "big.npy"
    arr = np.lib.format.open_memmap(p, mode="w+", dtype=np.float32, shape=(50257, 768))
    arr[::997] = 1.0
    arr.flush()
    del arr
    gc.collect()
    kv = es.load(str(p))
    before = rss_kib()
    vs = [kv.vectors for _ in range(5)]
    after = rss_kib()
    assert vs[0].nbytes == 50257 * 768 * 4
    assert after - before < 8 * 1024, f"RSS grew by {after - before} KiB"


def test_search_matches_numpy(es, npy_model):
    p, arr = npy_model
    kv = es.load(str(p))
    Q = np.ascontiguousarray(arr[:20] + 0.1)
    D, I = kv.search(Q, 5)
    assert D.shape == (20, 5) and I.shape == (20, 5) and D.dtype == np.float32 and I.dtype == np.int64
    qn = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    wn = arr / np.linalg.norm(arr, axis=1, keepdims=True)
    S = qn @ wn.T
    ref_i = np.argsort(-S, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(I, ref_i)
    np.testing.assert_allclose(D, np.take_along_axis(S, ref_i, axis=1), atol=1e-5)
    Dd, Id = kv.search(Q, 5, metric="dot")
    ref_d = np.argsort(-(Q @ arr.T), axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(Id, ref_d)
    Df, If = kv.search(Q, 5, mode="fast")
    np.testing.assert_array_equal(If, I)
    D16, I16 = kv.search(Q.astype(np.float16), 5)
    assert I16.shape == (20, 5)


@pytest.mark.parametrize("n_threads", [4, 8])
def test_threads_same_results_as_one(es, npy_model, n_threads):
    p, arr = npy_model
    kv = es.load(str(p))
    rng = np.random.default_rng(5)
    Qs = [np.ascontiguousarray(rng.normal(size=(64, arr.shape[1])).astype(np.float32)) for _ in range(n_threads)]
    single = [kv.search(Q, 10) for Q in Qs]
    sims = [kv.most_similar(i, topn=5) for i in range(n_threads)]
    fast = [kv.search(Q[:4].copy(), 5, mode="fast") for Q in Qs]
    pair = [kv.similarity(i, i + 1) for i in range(n_threads)]
    results = [None] * n_threads
    errors = []

    def work(i):
        try:
            out = []
            for _ in range(4):
                out.append((kv.search(Qs[i], 10), kv.most_similar(i, topn=5),
                            kv.search(Qs[i][:4].copy(), 5, mode="fast"), kv.similarity(i, i + 1)))
            results[i] = out
        except Exception as e:  # noqa: BLE001  re-raised below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for i in range(n_threads):
        for (D, I), ms, (Df, If), sim in results[i]:
            np.testing.assert_array_equal(I, single[i][1])
            np.testing.assert_array_equal(D, single[i][0])
            np.testing.assert_array_equal(If, fast[i][1])
            assert ms == sims[i] and sim == pair[i]


def test_exception_raised_in_threads(es, npy_model):
    p, arr = npy_model
    kv = es.load(str(p))
    caught = []

    def work(i):
        q = np.ones((4, arr.shape[1]), dtype=np.float32)
        q[i % 4, 3] = np.nan  # detected with the GIL released
        try:
            kv.search(q, 5)
        except ValueError as e:
            caught.append((i, str(e)))
        try:
            kv.search(np.zeros((2, 3), dtype=np.float32), 5)
        except ValueError as e:
            caught.append((i, str(e)))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(caught) == 16
    for i, msg in caught:
        assert f"Q[{i % 4}, 3] is not finite" in msg or "3 columns" in msg


def test_hnsw_mode_recall(es, w2v_files):
    kv = es.load(str(w2v_files[0]))
    Q = np.ascontiguousarray(kv.vectors[:200])
    De, Ie = kv.search(Q, 10)
    assert kv.build_hnsw() == len(kv)
    Dh, Ih = kv.search(Q, 10, mode="hnsw", ef=200)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(Ie, Ih)])
    assert recall >= 0.95, recall
    # scores are exact cosines of the rows returned
    same = Ie[:, 0] == Ih[:, 0]
    np.testing.assert_allclose(Dh[same, 0], De[same, 0], atol=1e-5)


def test_bfloat16_and_float16_tables(es, tmp_path):
    """F16: a float16 view; BF16 (numpy has no bfloat16): a float32 copy. Search reads both."""
    import json
    import struct
    torch = pytest.importorskip("torch")
    ref = torch.randn(300, 32, generator=torch.Generator().manual_seed(0))
    for dt, name in ((torch.bfloat16, "BF16"), (torch.float16, "F16")):
        t = ref.to(dt)
        raw = t.view(torch.int16).numpy().tobytes()
        h = json.dumps({"w": {"dtype": name, "shape": [300, 32], "data_offsets": [0, len(raw)]}}).encode()
        h += b" " * ((8 - len(h) % 8) % 8)
        p = tmp_path / f"{name}.safetensors"
        p.write_bytes(struct.pack("<Q", len(h)) + h + raw)
        kv = es.load(str(p))
        v = kv.vectors
        np.testing.assert_array_equal(v.astype(np.float32), t.float().numpy())
        assert v.dtype == (np.float32 if name == "BF16" else np.float16)
        assert not v.flags.writeable
        W = t.float().numpy()
        Q = np.ascontiguousarray(W[:10])
        D, I = kv.search(Q, 3, metric="dot")
        np.testing.assert_array_equal(I, np.argsort(-(Q @ W.T), axis=1, kind="stable")[:, :3])
        assert [k for k, _ in kv.most_similar(0, topn=3)] == [kv.index_to_key[i] for i in
                                                              np.argsort(-(W @ W[0]) / np.linalg.norm(W, axis=1), kind="stable")[1:4]]
