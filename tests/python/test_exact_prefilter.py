"""The exact scan's int8 prefilter (search/searcher.h, ExactScan): after a few queries a model's
exact most_similar / similar_by_vector answers through a bounded int8 scan plus a float32
rescore. Its answers must be numpy's (float64), ids and order, ties by id, on tables built to
trip an int8 scan: near-ties 100x closer than the int8 step, duplicate rows, zero rows, huge
outlier dimensions. And concurrent calls from Python threads must equal the single-thread ones.
"""
import threading

import numpy as np
import pytest

N, DIM = 6000, 64  # above kPrefilterMinRows (4096), so the prefilter switches on


def table(kind):
    rng = np.random.default_rng({"random": 1, "near_ties": 2, "duplicates": 3, "zeros": 4,
                                 "outliers": 5}[kind])
    W = rng.normal(size=(N, DIM))
    if kind == "near_ties":
        # 60 directions with 100 rows each within a band of ~0.04 cosine (neighbours ~4e-4
        # apart): far below the int8 rounding error (~1e-2 of a cosine), above float32's (~1e-7)
        base = W[:60].copy()
        eps = rng.uniform(0.02, 0.2, size=N)
        for i in range(60, N):
            W[i] = base[i % 60] + eps[i] * rng.normal(size=DIM)
    elif kind == "duplicates":
        W[1::2] = W[(np.arange(1, N, 2) % 151)]  # odd rows copy one of the first 151
    elif kind == "zeros":
        W[::9] = 0.0
    elif kind == "outliers":
        W[:, 7] = 25.0 * rng.normal(size=N)  # varies by row: the int8 step stays coarse
        W[:, 30] = -35.0 * (np.arange(N) % 2) + rng.normal(size=N)
    return W.astype(np.float32)


def assert_same_ranking(got, want, s, what, tol=2e-6):
    """got (ids, in our order) is numpy's top k (`want` holds k + 1: the first row left out too;
    s: float64 scores): equal scores at every rank, and equal ids at every rank that numpy
    separates from its neighbours (the row after the k-th included) by more than float32 can
    resolve (2e-6). Exact float64 ties (duplicate rows) are ordered by id in both."""
    k = len(got)
    assert len(want) in (k, k + 1), what
    np.testing.assert_allclose(s[got], s[want[:k]], atol=tol, err_msg=str(what))
    ws = s[want]
    n_checked = 0
    for i in range(k):
        close = [j for j in (i - 1, i + 1) if 0 <= j < len(want) and 0 < abs(ws[j] - ws[i]) < tol]
        if not close:
            assert got[i] == want[i], (what, i, got, want)
            n_checked += 1
    return n_checked


def numpy_top(W64, norms, q, k, exclude=()):
    """Cosine top-k by float64 numpy (W64: the table as float64, norms: its row norms): zero
    rows never returned, ties by smaller id."""
    q64 = q.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = (W64 @ q64) / (norms * np.linalg.norm(q64))
    s[norms == 0] = -np.inf
    s[list(exclude)] = -np.inf
    top = np.argpartition(-s, k)[: k + 1]  # then a full sort of the few that matter
    cut = np.sort(s[top])[-k]
    idx = np.nonzero(s >= cut)[0]
    order = idx[np.lexsort((idx, -s[idx]))][:k]
    return [int(i) for i in order if np.isfinite(s[i])], s


@pytest.mark.parametrize("kind", ["random", "near_ties", "duplicates", "zeros", "outliers"])
def test_most_similar_through_the_prefilter_equals_numpy(es, tmp_path, kind):
    W = table(kind)
    p = tmp_path / f"{kind}.npy"
    np.save(p, W)
    kv = es.load(str(p))
    rng = np.random.default_rng(9)
    W64 = W.astype(np.float64)
    norms = np.linalg.norm(W64, axis=1)
    rows = [int(r) for r in rng.integers(1, N, 24) if np.any(W[r])]
    checked = total = 0
    for n, r in enumerate(rows):
        k = (10, 1, 30)[n % 3]
        got = kv.most_similar(r, topn=k)
        want, s = numpy_top(W64, norms, W[r], k + 1, exclude=[r])
        checked += assert_same_ranking([kv.get_index(key) for key, _ in got], want, s, (kind, r))
        np.testing.assert_allclose([x for _, x in got], s[want[:k]], atol=2e-6)
        v = W[r] + np.float32(0.01) * rng.normal(size=DIM).astype(np.float32)
        got = kv.similar_by_vector(v, topn=k)
        want, s = numpy_top(W64, norms, v, k + 1)
        checked += assert_same_ranking([kv.get_index(key) for key, _ in got], want, s,
                                       (kind, r, "vector"))
        total += 2 * k
    assert checked >= 0.95 * total, (checked, total)  # float32-resolution ties are rare
    st = kv._m.prefilter_stats()
    # all but the first few queries went through the int8 prefilter; each rescored >= k rows
    assert st["queries"] >= 2 * len(rows) - 10, st
    assert st["rescored"] >= st["queries"], st


@pytest.mark.parametrize("kind", ["near_ties", "duplicates", "outliers"])
def test_batch_search_through_the_prefilter_equals_numpy(es, tmp_path, kind):
    """search(Q, k) on a table of 4096+ rows answers through the u8 x i8 batch kernel (where the
    CPU has AVX-512 VNNI, else sgemm): numpy's ranking either way."""
    W = table(kind)
    p = tmp_path / f"{kind}.npy"
    np.save(p, W)
    kv = es.load(str(p))
    rng = np.random.default_rng(4)
    Q = np.ascontiguousarray(W[rng.integers(0, N, 40)] + 0.01 * rng.normal(size=(40, DIM)),
                             dtype=np.float32)
    W64 = W.astype(np.float64)
    norms = np.linalg.norm(W64, axis=1)
    checked = total = 0
    for metric in ("cosine", "dot"):
        D, I = kv.search(Q, 10, metric=metric)
        for qi in range(len(Q)):
            if metric == "cosine":
                want, s = numpy_top(W64, norms, Q[qi], 11)
            else:
                s = W64 @ Q[qi].astype(np.float64)
                want = [int(i) for i in np.lexsort((np.arange(N), -s))[:11]]
            tol = 2e-6 * max(1.0, float(np.abs(s[want]).max()))  # float32's resolution
            checked += assert_same_ranking([int(i) for i in I[qi]], want, s, (kind, metric, qi),
                                           tol)
            total += 10
            np.testing.assert_allclose(D[qi], s[want[:10]], atol=tol)
    assert checked >= 0.95 * total, (checked, total)
    st = kv._m.prefilter_stats()
    if st["batch_kernel"]:
        assert st["queries"] >= len(Q), st  # the second batch at least (the first is sgemm)


def test_threads_through_the_prefilter_equal_one_thread(es, tmp_path):
    W = table("near_ties")
    p = tmp_path / "t.npy"
    np.save(p, W)
    kv = es.load(str(p))
    rows = list(range(1, 400, 7))
    single = [kv.most_similar(r, topn=10) for r in rows]
    results, errors = [None] * 6, []

    def work(t):
        try:
            results[t] = [kv.most_similar(r, topn=10) for r in rows]
        except Exception as e:  # noqa: BLE001  re-raised below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for t in range(6):
        assert results[t] == single, t
    assert kv._m.prefilter_stats()["queries"] >= 6 * len(rows)
