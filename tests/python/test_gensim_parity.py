"""Parity with gensim 4 KeyedVectors on a word2vec binary gensim wrote at test time: identical
neighbour keys and order, scores within 1e-6, identical evaluation results."""
import numpy as np
import pytest

TOL = 1e-6


def assert_same_neighbours(ours, theirs):
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=TOL, rtol=0)


def test_shape_and_keys(kv_pair):
    kv, g = kv_pair
    assert len(kv) == len(g)
    assert kv.vector_size == g.vector_size
    assert kv.index_to_key == g.index_to_key
    assert kv.key_to_index == g.key_to_index
    np.testing.assert_array_equal(kv.vectors, g.vectors)
    np.testing.assert_array_equal(kv["king"], g["king"])
    np.testing.assert_array_equal(kv[["king", "queen"]], g[["king", "queen"]])
    np.testing.assert_array_equal(kv[5], g[5])
    np.testing.assert_allclose(kv.get_vector("cat", norm=True), g.get_vector("cat", norm=True), atol=TOL)
    np.testing.assert_allclose(kv.get_normed_vectors(), g.get_normed_vectors(), atol=TOL)
    assert "king" in kv and "nope" not in kv and ("nope" in g) is False
    assert kv.get_index("dog") == g.get_index("dog")


@pytest.mark.parametrize("word", ["king", "computer", "paris", "w17", "cereal"])
def test_most_similar_single(kv_pair, word):
    kv, g = kv_pair
    assert_same_neighbours(kv.most_similar(word, topn=10), g.most_similar(word, topn=10))
    assert_same_neighbours(kv.similar_by_word(word, topn=7), g.similar_by_word(word, topn=7))


def test_most_similar_analogy_weights_restrict(kv_pair):
    kv, g = kv_pair
    assert_same_neighbours(kv.most_similar(positive=["woman", "king"], negative=["man"], topn=10),
                           g.most_similar(positive=["woman", "king"], negative=["man"], topn=10))
    assert_same_neighbours(kv.most_similar(positive=[("paris", 2.0), "germany"], negative=[("france", -0.5)], topn=5),
                           g.most_similar(positive=[("paris", 2.0), "germany"], negative=[("france", -0.5)], topn=5))
    assert_same_neighbours(kv.most_similar("dog", topn=5, restrict_vocab=40),
                           g.most_similar("dog", topn=5, restrict_vocab=40))
    assert_same_neighbours(kv.most_similar(3, topn=5), g.most_similar(3, topn=5))
    np.testing.assert_allclose(kv.most_similar("cat", topn=None), g.most_similar("cat", topn=None), atol=TOL)
    assert kv.most_similar("cat", topn=0) == g.most_similar("cat", topn=0) == []


def test_most_similar_vectors(kv_pair):
    kv, g = kv_pair
    v = g["king"] - g["man"] + g["woman"]
    assert_same_neighbours(kv.similar_by_vector(v, topn=10), g.similar_by_vector(v, topn=10))
    assert_same_neighbours(kv.most_similar(positive=["queen", v], topn=10), g.most_similar(positive=["queen", v], topn=10))


def test_cosmul(kv_pair):
    kv, g = kv_pair
    assert_same_neighbours(kv.most_similar_cosmul(positive=["woman", "king"], negative=["man"], topn=10),
                           g.most_similar_cosmul(positive=["woman", "king"], negative=["man"], topn=10))


def test_pairwise(kv_pair):
    kv, g = kv_pair
    for a, b in [("king", "queen"), ("cat", "computer"), ("w1", "w2")]:
        assert abs(kv.similarity(a, b) - g.similarity(a, b)) < TOL
        assert abs(kv.distance(a, b) - g.distance(a, b)) < TOL
        assert kv.rank(a, b) == g.rank(a, b)
    assert abs(kv.n_similarity(["king", "man"], ["queen", "woman"]) - g.n_similarity(["king", "man"], ["queen", "woman"])) < TOL
    np.testing.assert_allclose(kv.distances("king", ["queen", "cat", "w5"]), g.distances("king", ["queen", "cat", "w5"]), atol=TOL)
    np.testing.assert_allclose(kv.distances("king"), g.distances("king"), atol=TOL)
    np.testing.assert_allclose(kv.distances(g["cat"]), g.distances(g["cat"]), atol=TOL)
    assert kv.closer_than("king", "prince") == g.closer_than("king", "prince")


def test_doesnt_match(kv_pair):
    kv, g = kv_pair
    for ws in (["breakfast", "lunch", "dinner", "cat"], ["red", "green", "paris", "blue"],
               ["king", "queen", "prince", "keyboard", "missingword"]):
        assert kv.doesnt_match(ws) == g.doesnt_match(ws)


def test_evaluate_word_pairs(kv_pair, w2v_files):
    kv, g = kv_pair
    pairs = str(w2v_files[2])
    ours = kv.evaluate_word_pairs(pairs)
    theirs = g.evaluate_word_pairs(pairs)
    assert abs(ours[0][0] - theirs[0][0]) < 1e-6
    assert abs(ours[1][0] - theirs[1].correlation) < 1e-6
    assert abs(ours[2] - theirs[2]) < 1e-9
    assert abs(ours[0][1] - theirs[0][1]) < 1e-6
    assert abs(ours[1][1] - theirs[1].pvalue) < 1e-6


def test_evaluate_word_analogies(kv_pair, w2v_files):
    kv, g = kv_pair
    path = str(w2v_files[3])
    score, sections = kv.evaluate_word_analogies(path)
    gscore, gsections = g.evaluate_word_analogies(path)
    assert abs(score - gscore) < 1e-12
    assert [s["section"] for s in sections] == [s["section"] for s in gsections]
    # The questions themselves, in gensim's order, right and wrong.
    for ours, theirs in zip(sections, gsections):
        assert [tuple(q) for q in ours["correct"]] == [tuple(q) for q in theirs["correct"]], ours["section"]
        assert [tuple(q) for q in ours["incorrect"]] == [tuple(q) for q in theirs["incorrect"]], ours["section"]
    assert len(sections[-1]["correct"]) + len(sections[-1]["incorrect"]) > 0


def test_text_format_same_as_binary(es, kv_pair, w2v_files):
    kv, _ = kv_pair
    t = es.KeyedVectors.load_word2vec_format(str(w2v_files[1]), binary=False)
    assert t.index_to_key == kv.index_to_key
    assert [k for k, _ in t.most_similar("king")] == [k for k, _ in kv.most_similar("king")]


def test_missing_word_keyerror(kv_pair):
    kv, g = kv_pair
    for f in (lambda m: m.most_similar("missingword"), lambda m: m["missingword"],
              lambda m: m.similarity("king", "missingword"), lambda m: m.rank("missingword", "king"),
              lambda m: m.get_vector("missingword")):
        with pytest.raises(KeyError):
            f(g)
        with pytest.raises(KeyError, match="missingword"):
            f(kv)


@pytest.mark.parametrize("binary", [True, False])
def test_save_word2vec_read_by_gensim(kv_pair, tmp_path, binary):
    from gensim.models import KeyedVectors as GKV
    kv, g = kv_pair
    p = tmp_path / ("out.bin" if binary else "out.txt")
    kv.save_word2vec_format(str(p), binary=binary)
    back = GKV.load_word2vec_format(str(p), binary=binary)
    assert back.index_to_key == g.index_to_key
    np.testing.assert_allclose(back.vectors, g.vectors, rtol=1e-6 if not binary else 0, atol=1e-6 if not binary else 0)


def test_save_safetensors_round_trip(es, kv_pair, tmp_path):
    kv, _ = kv_pair
    p = tmp_path / "out.safetensors"
    kv.save(str(p))
    back = es.load(str(p))
    assert back.index_to_key == kv.index_to_key
    np.testing.assert_array_equal(back.vectors, kv.vectors)
    assert back.most_similar("king") == kv.most_similar("king")


def test_stats_against_numpy(kv_pair):
    kv, g = kv_pair
    st = kv.stats(n_queries=100)
    norms = np.linalg.norm(g.vectors.astype(np.float64), axis=1)
    assert st["rows"] == len(g) and st["dim"] == g.vector_size
    assert abs(st["norms"]["mean"] - norms.mean()) < 1e-4 * norms.mean()
    assert abs(st["norms"]["max"] - norms.max()) < 1e-4 * norms.max()
    mean = g.vectors.astype(np.float64).mean(axis=0)
    cos = (g.vectors @ mean) / (norms * np.linalg.norm(mean))
    assert abs(st["anisotropy"]["mean_cos_to_mean"] - cos.mean()) < 1e-4
    assert len(st["pca_explained"]) == 10


def test_compare_with_itself_and_a_copy(es, kv_pair, tmp_path):
    kv, _ = kv_pair
    p = tmp_path / "copy.npy"
    np.save(p, kv.vectors * 2.0)
    r = kv.compare(kv, k=5)
    assert r["mean_overlap"] == 1.0 and r["aligned"] and r["mean_drift"] < 1e-5
    r2 = kv.compare(es.load(str(p)), k=5)
    assert r2["matched_by"] == "row id" and r2["mean_overlap"] == 1.0
