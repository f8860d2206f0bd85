"""embedscope: nearest neighbours, analogies and exploration of token-embedding matrices.

A gensim-4-compatible ``KeyedVectors`` over embedscope's memory-mapped tables, a faiss-style
batch ``search(Q, k) -> (D, I)``, the model's tokenizer and ``explore``.

>>> import embedscope
>>> kv = embedscope.load()                      # the default model ("" ), a hub id, a folder or a file
>>> kv.most_similar("computer", topn=3)         # [(word, cosine), ...]
>>> D, I = kv.search(Q, 10)                     # Q: C-contiguous float32 (n, dim)

Every operation is the C++ library's (the same numbers as the ``embedscope`` CLI); the GIL is
released while it runs. See docs/python.md.
"""

from __future__ import annotations

import json as _json
import math as _math
from numbers import Integral as _Integral

import numpy as _np

try:  # installed package: the extension sits beside this file
    from . import _embedscope as _core
except ImportError:  # build tree: build/python/_embedscope*.so on PYTHONPATH
    import _embedscope as _core

__version__ = "0.1.0"

NotFoundError = _core.NotFoundError
FormatError = _core.FormatError
UnsupportedError = _core.UnsupportedError

__all__ = ["load", "train", "KeyedVectors", "Tokenizer", "set_threads", "threads",
           "NotFoundError", "FormatError", "UnsupportedError"]


def set_threads(n: int) -> None:
    """Threads every parallel operation uses (0 = all cores). Call before the first search:
    the process's thread pool is sized once, and after its first use another count raises
    ValueError (the same count again is accepted).

    >>> embedscope.set_threads(2)
    """
    if not isinstance(n, _Integral) or n < 0:
        raise ValueError(f"set_threads: expected an int >= 0, got {n!r}")
    _core.set_threads(int(n))


def threads() -> int:
    """The number of threads parallel operations use."""
    return _core.threads()


def load(ref: str = "", tokenizer: str = "auto", matrix: str = "input") -> "KeyedVectors":
    """Open a model: ``""`` = the default model, a hub id ("gpt2", from the Hugging Face cache,
    never the network), a Hugging Face folder, or a file (safetensors, npy, word2vec, GloVe,
    fastText .vec, PyTorch, GGUF). The matrix is memory-mapped, not copied.

    >>> kv = embedscope.load("gpt2")
    >>> kv.vectors.shape
    (50257, 768)
    """
    if not isinstance(ref, str):
        raise TypeError(f"load: ref must be a str (a path, hub id or '' for the default model), got {type(ref).__name__}")
    return KeyedVectors(_core.open(ref, tokenizer, matrix))


def train(corpus, *, arch="skipgram", dim=100, window=5, negative=5, hs=False,
          shared_negatives=False, sample=1e-3, min_count=5, max_vocab=0, epochs=5, lr=0.0,
          threads=0, seed=1, tokenizer=None, progress=None, progress_interval=1.0) -> "KeyedVectors":
    """Train word2vec (the library's trainer, `embedscope train`'s options) over text files or
    folders (one sentence per line) and return the vectors as KeyedVectors (kv.train_info holds
    the run's figures; kv.save(path) writes them). tokenizer="gpt2" (or a tokenizer folder /
    tokenizer.json) trains over token ids. threads=0: set_threads()'s count; threads=1 with a
    seed is reproducible. progress: a callable taking a dict (done, total, unit, rate,
    eta_seconds, extra), or True for a tqdm bar (a line on stderr without tqdm).

    >>> kv = embedscope.train("corpus.txt", dim=100, epochs=5, min_count=5, progress=True)
    >>> kv.most_similar("king")
    """
    inputs = [str(corpus)] if isinstance(corpus, (str, bytes)) or hasattr(corpus, "__fspath__") else [str(c) for c in corpus]
    bar = None
    if progress is True:
        try:
            from tqdm import tqdm
            bar = tqdm(unit="word", unit_scale=True)

            def progress(p):
                if p["total"]:
                    bar.total = int(p["total"])
                bar.n = int(p["done"])
                bar.set_postfix_str(p["extra"], refresh=False)
                bar.refresh()
        except ImportError:
            import sys

            def progress(p):
                pct = 100.0 * p["done"] / p["total"] if p["total"] else 0.0
                print(f"\rtraining {pct:5.1f}%  {p['rate']:.0f} {p['unit']}/s  {p['extra']}",
                      end="", file=sys.stderr, flush=True)
    elif progress is not None and not callable(progress):
        raise TypeError("train: progress must be a callable, True or None")
    try:
        model, info = _core.train(inputs, arch, int(dim), int(window), int(negative), bool(hs),
                                  bool(shared_negatives), float(sample), int(min_count), int(max_vocab),
                                  int(epochs), float(lr), int(threads), int(seed), tokenizer or "",
                                  progress, float(progress_interval))
    finally:
        if bar is not None:
            bar.close()
    kv = KeyedVectors(model)
    kv.train_info = info
    return kv


def _ensure_list(value):
    if value is None:
        return []
    if isinstance(value, (str, _Integral, _np.ndarray)):
        return [value]
    return list(value)


def _is_key(x):
    return isinstance(x, (str, _Integral, _np.integer))


class Tokenizer:
    """The model's tokenizer (GPT-2 byte-level BPE or the model's own).

    >>> tok = embedscope.load("gpt2").tokenizer
    >>> tok.encode(" computer")
    [3644]
    >>> tok.decode([3644])
    ' computer'
    """

    def __init__(self, model):
        self._m = model

    def encode(self, text: str, allow_special: bool = False) -> list:
        """Token ids of `text` (special tokens are plain text unless allow_special).

        >>> tok.encode("Hello world")
        [15496, 995]
        """
        return self._m.encode(text, allow_special, False)

    def encode_with_offsets(self, text: str, allow_special: bool = False):
        """(ids, offsets): offsets[i] is the byte offset in text.encode() where token i starts.

        >>> tok.encode_with_offsets("Hello world")
        ([15496, 995], [0, 5])
        """
        return self._m.encode(text, allow_special, True)

    def decode(self, ids) -> str:
        """Text of ids (invalid UTF-8 becomes U+FFFD). IndexError for an unknown id.

        >>> tok.decode([15496, 995])
        'Hello world'
        """
        return self._m.decode([int(i) for i in ids], False)

    def decode_bytes(self, ids) -> bytes:
        """Exact bytes of ids.

        >>> tok.decode_bytes([15496])
        b'Hello'
        """
        return self._m.decode([int(i) for i in ids], True)

    def pieces(self, text_or_ids) -> list:
        """Readable token strings ("␣computer"): of a text's tokens, or of a list of ids.

        >>> tok.pieces("Hello world")
        ['Hello', '␣world']
        """
        ids = self.encode(text_or_ids) if isinstance(text_or_ids, str) else text_or_ids
        return [self._m.display(int(i)) for i in ids]

    def __len__(self):
        return self._m.token_vocab_size()


class KeyedVectors:
    """gensim-4-style word vectors over an embedscope model.

    Keys are exact, as in gensim: the vocabulary's words, or for token models (GPT-2 and others
    with a tokenizer) the raw token texts (" computer" is GPT-2's row 3644, "computer" the bare
    token), so get_index(index_to_key[i]) == i. For token models a key that is no token is
    looked up the library's way (handle/word_lookup.h): " key" as one token, else a case
    variant, else the mean of its pieces.

    >>> kv = embedscope.KeyedVectors.load_word2vec_format("vectors.bin", binary=True)
    >>> kv.most_similar(positive=["king", "woman"], negative=["man"], topn=1)
    [('queen', 0.71...)]
    """

    def __init__(self, model):
        self._model = model
        self._vectors = None
        self._index_to_key = None
        self._key_to_index = None

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def load_word2vec_format(cls, fname, fvocab=None, binary=False, encoding="utf8",
                             unicode_errors="strict", limit=None, datatype=None, no_header=False):
        """Load a word2vec text (binary=False) or binary (binary=True) file, as gensim does; the
        vectors are memory-mapped where the layout allows. Only the arguments gensim users pass
        for standard files are supported (fvocab/limit/datatype/no_header raise ValueError).

        >>> kv = embedscope.KeyedVectors.load_word2vec_format("GoogleNews.bin", binary=True)
        """
        if fvocab is not None or limit is not None or datatype is not None or no_header:
            raise ValueError("load_word2vec_format: fvocab, limit, datatype and no_header are not "
                             "supported; embedscope.load(path) reads header-less GloVe files")
        if encoding.lower().replace("-", "") != "utf8":
            raise ValueError(f"load_word2vec_format: only utf8 is supported, got {encoding!r}")
        return cls(_core.open_word2vec(str(fname), bool(binary)))

    def save(self, path, format=None):
        """Write the table (and its vocabulary) atomically: format "safetensors", "npy",
        "word2vec" (text) or "word2vec-bin"; None = from the extension (.safetensors, .npy, .bin,
        else word2vec text). word2vec formats need a vocabulary.

        >>> kv.save("vectors.safetensors")
        """
        self._m.save(str(path), "" if format is None else str(format))

    def save_word2vec_format(self, fname, binary=False):
        """gensim's save_word2vec_format for the common case (the whole vocabulary, in row order).

        >>> kv.save_word2vec_format("vectors.bin", binary=True)
        """
        self.save(fname, "word2vec-bin" if binary else "word2vec")

    def close(self):
        """Release the model (arrays taken from it stay valid). Any later call raises ValueError."""
        self._model.close()
        self._vectors = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def _m(self):
        if self._model.closed:
            raise ValueError("this embedscope model is closed (close() was called)")
        return self._model

    # --- attributes ---------------------------------------------------------------------------
    @property
    def vectors(self) -> _np.ndarray:
        """The (rows, dim) table as a read-only numpy array. float32 tables: a view of the
        memory-mapped file (zero copy; it keeps the mapping alive after the model is gone);
        float16: a float16 view; bfloat16 (numpy has none): a float32 copy.

        >>> kv.vectors.flags.writeable
        False
        """
        if self._vectors is None or self._model.closed:
            self._vectors = self._m.vectors()
        return self._vectors

    @property
    def index_to_key(self) -> list:
        """Row -> key (word or raw token text; bytes that are not UTF-8 are surrogate-escaped).

        >>> kv.index_to_key[:3]
        ['the', ',', '.']
        """
        if self._index_to_key is None:
            self._index_to_key = self._m.keys()
        return self._index_to_key

    @property
    def key_to_index(self) -> dict:
        """Key -> row (the first row holding a key, as gensim).

        >>> kv.key_to_index["the"]
        0
        """
        if self._key_to_index is None:
            d = {}
            for i, k in enumerate(self.index_to_key):
                d.setdefault(k, i)
            self._key_to_index = d
        return self._key_to_index

    @property
    def vector_size(self) -> int:
        """Dimension of the vectors.

        >>> kv.vector_size
        768
        """
        return self._m.dim

    @property
    def norms(self) -> _np.ndarray:
        """L2 norm of every row (read-only float32, computed once)."""
        return self._m.norms()

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer; ValueError when the model has none.

        >>> kv.tokenizer.encode(" computer")
        [3644]
        """
        if not self._m.has_tokenizer:
            raise ValueError(f"model {self._m.name!r} has no tokenizer")
        return Tokenizer(self._m)

    def __len__(self):
        return self._m.n_rows

    def __repr__(self):
        if self._model.closed:
            return "<embedscope.KeyedVectors (closed)>"
        m = self._model
        return f"<embedscope.KeyedVectors {m.name or 'default'!r}: {m.n_rows} x {m.dim} {m.dtype}>"

    # --- keys ---------------------------------------------------------------------------------
    def _ids(self, key):
        return self._m.lookup(key)

    def get_index(self, key, default=None):
        """The row of a key (an int row is returned as is). KeyError when missing and no default.

        >>> kv.get_index("king")
        """
        try:
            ids = self._ids(key)
        except KeyError:
            if default is not None:
                return default
            raise
        if len(ids) != 1:
            if default is not None:
                return default
            raise KeyError(f"Key '{key}' is not a single row (it is made of {len(ids)} pieces)")
        return ids[0]

    def has_index_for(self, key) -> bool:
        """Whether `key` names rows of this model."""
        try:
            self._ids(key)
            return True
        except (KeyError, TypeError):
            return False

    def __contains__(self, key):
        return self.has_index_for(key)

    def get_vector(self, key, norm=False) -> _np.ndarray:
        """The key's vector (read-only; a view of the table for float32 tables). norm=True: unit
        length. A word of several tokens gives the mean of their rows.

        >>> kv.get_vector("king", norm=True)
        """
        ids = self._ids(key)
        if len(ids) == 1:
            v = self.vectors[ids[0]]
            if v.dtype != _np.float32:
                v = v.astype(_np.float32)
        else:
            v = self.vectors[ids].astype(_np.float32).mean(axis=0)
        if norm:
            v = v / _np.linalg.norm(v)
        v.setflags(write=False)
        return v

    def __getitem__(self, key_or_keys):
        """kv["king"] -> vector; kv[["king", "queen"]] -> (2, dim) array; kv[12] -> row 12.

        >>> kv[["king", "queen"]].shape
        (2, 300)
        """
        if _is_key(key_or_keys):
            return self.get_vector(key_or_keys)
        return _np.vstack([self.get_vector(k) for k in key_or_keys])

    def get_normed_vectors(self) -> _np.ndarray:
        """Every row divided by its L2 norm (a new float32 array).

        >>> kv.get_normed_vectors().shape
        """
        return self._m.normed()

    # --- similarity ---------------------------------------------------------------------------
    def _key(self, i):
        return self.index_to_key[i]

    def _terms(self, positive, negative):
        positive = _ensure_list(positive)
        negative = _ensure_list(negative)
        keys, vecs = [], []
        for sign, items in ((1.0, positive), (-1.0, negative)):
            for item in items:
                if _is_key(item) or isinstance(item, _np.ndarray):
                    k, w = item, sign
                else:
                    k, w = item[0], item[1]
                if isinstance(k, _np.ndarray):
                    vecs.append((k, float(w)))
                else:
                    keys.append((self._ids(k), float(w)))
        return keys, vecs

    @staticmethod
    def _topn(topn):
        if topn is None:
            return 0
        if not isinstance(topn, _Integral):
            raise TypeError(f"topn must be an int or None, got {type(topn).__name__}")
        return int(topn)

    @staticmethod
    def _restrict(restrict_vocab):
        if restrict_vocab is None:
            return 0
        if not isinstance(restrict_vocab, _Integral) or restrict_vocab < 0:
            raise ValueError(f"restrict_vocab must be a non-negative int or None, got {restrict_vocab!r}")
        return int(restrict_vocab)

    def most_similar(self, positive=None, negative=None, topn=10, restrict_vocab=None, mode="exact"):
        """Top-N keys by cosine to the mean of the unit vectors of `positive` minus `negative`
        (gensim 4: keys, ints, vectors or (key, weight) pairs; inputs are left out).
        topn=None returns every score as an array. mode="fast": int8 scan + exact re-rank.

        >>> kv.most_similar(positive=["woman", "king"], negative=["man"], topn=3)
        [('queen', 0.7118...), ...]
        """
        n = self._topn(topn)
        if topn is not None and n < 1:
            return []
        keys, vecs = self._terms(positive, negative)
        if not keys and not vecs:
            raise ValueError("cannot compute mean with no input")
        r = self._m.most_similar(keys, vecs, n, self._restrict(restrict_vocab), mode)
        if n == 0:
            return r
        return [(self._key(i), float(s)) for i, s in r]

    def similar_by_word(self, word, topn=10, restrict_vocab=None):
        """most_similar(positive=[word]).

        >>> kv.similar_by_word("cat", topn=5)
        """
        return self.most_similar(positive=[word], topn=topn, restrict_vocab=restrict_vocab)

    similar_by_key = similar_by_word

    def similar_by_vector(self, vector, topn=10, restrict_vocab=None):
        """Top-N keys by cosine to a vector (no key is left out).

        >>> kv.similar_by_vector(kv["king"] - kv["man"] + kv["woman"], topn=3)
        """
        if not isinstance(vector, _np.ndarray):
            vector = _np.asarray(vector, dtype=_np.float32)
        return self.most_similar(positive=[vector], topn=topn, restrict_vocab=restrict_vocab)

    def most_similar_cosmul(self, positive=None, negative=None, topn=10, restrict_vocab=None):
        """3CosMul (Levy & Goldberg), gensim semantics; keys only.

        >>> kv.most_similar_cosmul(positive=["woman", "king"], negative=["man"], topn=1)
        """
        n = self._topn(topn)
        if topn is not None and n < 1:
            return []
        if n == 0:
            raise ValueError("most_similar_cosmul: topn=None is not supported; pass an int")
        keys, vecs = self._terms(positive, negative)
        if vecs:
            raise TypeError("most_similar_cosmul: pass keys, not vectors")
        if not any(w > 0 for _, w in keys):
            raise ValueError("cannot compute similarity with no input")
        r = self._m.most_similar_cosmul(keys, n, self._restrict(restrict_vocab))
        return [(self._key(i), float(s)) for i, s in r]

    def similarity(self, w1, w2) -> float:
        """Cosine similarity of two keys.

        >>> kv.similarity("woman", "man")
        0.73...
        """
        return float(self._m.similarity(self._ids(w1), self._ids(w2)))

    def n_similarity(self, ws1, ws2) -> float:
        """Cosine similarity of the means of two lists of keys.

        >>> kv.n_similarity(["sushi", "shop"], ["japanese", "restaurant"])
        """
        if not (len(ws1) and len(ws2)):
            raise ZeroDivisionError("At least one of the passed list is empty.")
        a = [i for w in ws1 for i in self._ids(w)]
        b = [i for w in ws2 for i in self._ids(w)]
        return float(self._m.similarity(a, b))

    def distance(self, w1, w2) -> float:
        """1 - similarity(w1, w2).

        >>> kv.distance("king", "queen")
        """
        return 1.0 - self.similarity(w1, w2)

    def distances(self, word_or_vector, other_words=()) -> _np.ndarray:
        """Cosine distances from a key or vector to `other_words` (default: every row).

        >>> kv.distances("king", ["queen", "man"])
        array([0.34, 0.77], dtype=float32)
        """
        if isinstance(word_or_vector, _np.ndarray):
            q = word_or_vector
        else:
            q = list(self._ids(word_or_vector))
        others = [self.get_index(w) for w in other_words] if len(other_words) else None
        return (1.0 - self._m.cosines(q, others)).astype(_np.float32)

    def closer_than(self, key1, key2) -> list:
        """Keys closer to key1 than key2 is.

        >>> kv.closer_than("king", "queen")
        """
        d = self.distances(key1)
        e1, e2 = self.get_index(key1), self.get_index(key2)
        return [self._key(i) for i in _np.where(d < d[e2])[0] if i != e1]

    def rank(self, key1, key2) -> int:
        """1 + the number of keys closer to key1 than key2 is.

        >>> kv.rank("king", "queen")
        """
        return int(self._m.rank(self._ids(key1), self._ids(key2)))

    def doesnt_match(self, words):
        """The word furthest from the mean of the others (missing words are ignored, as gensim).

        >>> kv.doesnt_match(["breakfast", "cereal", "dinner", "lunch"])
        'cereal'
        """
        used, ids = [], []
        for w in words:
            try:
                ids.append(self._ids(w))
                used.append(w)
            except KeyError:
                pass
        if not used:
            raise ValueError("cannot select a word from an empty list")
        return used[self._m.doesnt_match(ids)]

    # --- evaluation ---------------------------------------------------------------------------
    def evaluate_word_pairs(self, pairs, delimiter="\t", encoding="utf8", restrict_vocab=300000,
                            case_insensitive=True, dummy4unknown=False):
        """Pearson and Spearman correlation of cosines with human scores (wordsim353 format),
        gensim's shape: ((pearson, p), (spearman, p), oov_ratio). p-values come from scipy when
        it is installed (else NaN).

        >>> kv.evaluate_word_pairs("wordsim353.tsv")
        ((0.62, 1e-30), (0.66, 1e-40), 0.56)
        """
        if delimiter != "\t":
            raise ValueError("evaluate_word_pairs: only TAB-separated files are supported")
        r = self._m.evaluate_word_pairs(str(pairs), self._restrict(restrict_vocab) or 300000,
                                        bool(case_insensitive), bool(dummy4unknown))
        n = r["n_pairs"]
        return ((r["pearson"], _pvalue(r["pearson"], n)), (r["spearman"], _pvalue(r["spearman"], n)),
                r["oov_ratio"])

    def evaluate_word_analogies(self, analogies, restrict_vocab=300000, case_insensitive=True,
                                dummy4unknown=False):
        """Accuracy on a questions-words file, gensim's semantics: (score, sections). Each section
        is {"section", "correct", "incorrect"}, the latter two lists of (a, b, c, expected)
        tuples (upper-cased when case_insensitive), as gensim's; the last is "Total accuracy".

        >>> score, sections = kv.evaluate_word_analogies("questions-words.txt")
        """
        r = self._m.evaluate_word_analogies(str(analogies), self._restrict(restrict_vocab) or 300000,
                                            bool(case_insensitive), bool(dummy4unknown))
        return r["score"], r["sections"]

    # --- batch search, explore ----------------------------------------------------------------
    def search(self, Q, k, mode="exact", metric="cosine", ef=64):
        """faiss-style batch search: Q is a C-contiguous float32 (n, dim) array (read in place,
        never copied; float16 is widened). Returns (D, I): float32 scores and int64 rows, each
        (n, k), best first (I = -1, D = -inf where fewer than k rows qualify). metric: "cosine",
        "dot" (faiss IndexFlatIP) or "l2" (D = distance). mode: "exact", "fast" (int8 scan +
        exact re-rank) or "hnsw" (approximate, cosine only; the index is built on first use, or
        by build_hnsw(); ef = candidates examined, higher = better recall).

        >>> D, I = kv.search(np.ascontiguousarray(kv.vectors[:5]), 10)
        """
        if not isinstance(Q, _np.ndarray):
            raise ValueError(f"search: Q must be a numpy array, got {type(Q).__name__}; pass "
                             f"np.ascontiguousarray(Q, dtype=np.float32) of shape (n, {self.vector_size})")
        if isinstance(k, bool) or not isinstance(k, _Integral):
            raise ValueError(f"search: k must be an int, got {k!r}")
        if isinstance(ef, bool) or not isinstance(ef, _Integral):
            raise ValueError(f"search: ef must be an int, got {ef!r}")
        return self._m.search(Q, int(k), mode, metric, int(ef))

    def build_hnsw(self, M=16, ef_construction=200) -> int:
        """Build the HNSW index search(mode="hnsw") uses (once per model; later calls return the
        existing one). Returns the number of rows indexed.

        >>> kv.build_hnsw(M=16, ef_construction=200)
        50257
        """
        return self._m.build_hnsw(int(M), int(ef_construction))

    def neighbors(self, query, k=10, metric="cosine", mode="exact", include_query=False,
                  center=False, csls_k=0, token_class="any", regex="", top_n=0, expression=False) -> dict:
        """The library's neighbour search for one query, as `embedscope neighbors QUERY --json`
        (a dict): a word resolved the CLI's way (token models: " word" as one token first, else
        the bare token, a case variant or the mean of its pieces; the query's variants are left
        out), "#N" or an int row, a vector, or with expression=True "king - man + woman".
        token_class ("word", "alpha", "nospecial"), regex and top_n filter the answers;
        center=True subtracts the mean row; csls_k > 0 re-ranks by CSLS.

        >>> d = embedscope.load().neighbors("computer", k=3)
        >>> d["resolved"]
        {'how': 'token', 'ids': [3644], 'pieces': ['␣computer']}
        >>> [(n["token"], n["score"]) for n in d["neighbors"]]
        """
        if isinstance(k, bool) or not isinstance(k, _Integral) or k <= 0:
            raise ValueError(f"neighbors: k must be a positive int, got {k!r}")
        if isinstance(query, _np.integer):
            query = int(query)
        return _json.loads(self._m.neighbors(query, bool(expression), int(k), metric, mode,
                                             bool(include_query), bool(center), int(csls_k),
                                             token_class, regex, int(top_n)))

    def stats(self, n_pairs=20000, hub_k=10, n_queries=2000, n_components=10, seed=42) -> dict:
        """Whole-table diagnostics (`embedscope stats`): norms, anisotropy, hubness, PCA.

        >>> kv.stats()["anisotropy"]["mean_cos_to_mean"]
        """
        return self._m.stats(int(n_pairs), int(hub_k), int(n_queries), int(n_components), int(seed))

    def compare(self, other, k=10, n_words=1000, n_moved=20, seed=42) -> dict:
        """Neighbour overlap@k and Procrustes drift against another model sharing the vocabulary
        (or the row count) (`embedscope compare`).

        >>> kv.compare(embedscope.load("other.bin"))["mean_overlap"]
        """
        if not isinstance(other, KeyedVectors):
            raise TypeError(f"compare: expected a KeyedVectors, got {type(other).__name__}")
        return self._m.compare(other._m, int(k), int(n_words), int(n_moved), int(seed))

    def explore(self, word, k=10, seed=42, all_tokens=False, init=""):
        """A word's labelled neighbours against a random baseline: the library's JSON document as
        a dict (the same as `embedscope explore WORD --json`). Needs WordNet (scripts/setup.sh).

        >>> kv.explore("computer", k=5)["verdict"]
        """
        if not isinstance(k, _Integral) or k <= 0:
            raise ValueError(f"explore: k must be a positive int, got {k!r}")
        return _json.loads(self._m.explore(word, int(k), int(seed), bool(all_tokens), init))


def _pvalue(r, n):
    """Two-sided p-value of a correlation r over n pairs (scipy's t-test), NaN without scipy."""
    try:
        from scipy import stats
    except ImportError:
        return float("nan")
    if n < 3 or not _math.isfinite(r):
        return float("nan")
    if abs(r) >= 1.0:
        return 0.0
    t = r * _math.sqrt((n - 2) / ((1.0 - r) * (1.0 + r)))
    return float(2 * stats.t.sf(abs(t), n - 2))
