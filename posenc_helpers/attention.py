"""A tiny single-head self-attention in numpy, to see what attention does with word order.

One head, no batch, no positions: ``x`` holds one row per token. The math is
the scaled dot-product attention of Vaswani et al. (2017), written out:

* queries, keys, values: Q = X·W_q, K = X·W_k, V = X·W_v;
* scores s_ij = q_i·k_j / √d_head;
* weights A_ij = softmax over j of s_ij (only over j ≤ i with a causal mask);
* output row i = Σ_j A_ij·v_j.

Taught in notebooks/00-why-positions.ipynb.
"""

from __future__ import annotations

import zlib

import numpy as np

from . import _validate as v

__all__ = ["causal_mask", "attention_weights", "self_attention", "random_head", "embed_words"]


def _flag(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {v._show(value)}")
    return bool(value)


def _seed(value) -> int:
    if not v._is_int(value) or value < 0:
        raise (TypeError if not v._is_int(value) else ValueError)(
            f"seed must be a non-negative integer, got {v._show(value)}")
    return int(value)


def _tokens(x) -> np.ndarray:
    x = v.real_array("x", x)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"x must have shape (tokens, d_model) with both at least 1, got shape {x.shape}")
    return x


def _projection(name: str, w, d_model: int) -> np.ndarray:
    w = v.real_array(name, w)
    if w.ndim != 2 or w.shape[0] != d_model or w.shape[1] == 0:
        raise ValueError(f"{name} must have shape (d_model, d_head) = ({d_model}, d_head ≥ 1), got shape {w.shape}")
    return w


def causal_mask(seq_len) -> np.ndarray:
    """The causal mask: True where query i may read key j, that is where j ≤ i.

    Taught in notebooks/00-why-positions.ipynb.

    >>> causal_mask(3)            # row i = query position, column j = key position
    array([[ True, False, False],
           [ True,  True, False],
           [ True,  True,  True]])
    """
    seq_len = v.positive_int("seq_len", seq_len)
    # allowed[i, j] = (j ≤ i)
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


def _scores(x, w_q, w_k, causal) -> np.ndarray:
    """The checked scores s_ij = q_i·k_j / √d_head, with −∞ on later keys if ``causal``."""
    causal = _flag("causal", causal)
    x = _tokens(x)
    w_q = _projection("w_q", w_q, x.shape[1])
    w_k = _projection("w_k", w_k, x.shape[1])
    if w_k.shape != w_q.shape:
        raise ValueError(f"w_k must have the shape of w_q, {w_q.shape}, got shape {w_k.shape}")
    # Q = X·W_q, K = X·W_k
    q, k = x @ w_q, x @ w_k
    # s_ij = q_i·k_j / √d_head
    scores = q @ k.T / np.sqrt(w_q.shape[1])
    if causal:
        # key j > i is not allowed: e^(−∞) = 0
        scores = np.where(causal_mask(len(x)), scores, -np.inf)
    return scores


def attention_weights(x, w_q, w_k, causal=False) -> np.ndarray:
    """The attention weights A (tokens × tokens): softmax over keys of q_i·k_j / √d_head.

    Each row sums to 1. With ``causal=True`` the weights on later keys
    (j > i) are exactly 0. Taught in notebooks/00-why-positions.ipynb.

    >>> x = np.eye(2)                      # two tokens, d_model = 2
    >>> attention_weights(x, np.eye(2), np.eye(2)).round(4)
    array([[0.6698, 0.3302],
           [0.3302, 0.6698]])
    >>> # row 0: scores (1/√2, 0), so e^0.7071 / (e^0.7071 + e^0) = 2.0281 / 3.0281 = 0.6698
    >>> attention_weights(x, np.eye(2), np.eye(2), causal=True).round(4)
    array([[1.    , 0.    ],
           [0.3302, 0.6698]])
    """
    scores = _scores(x, w_q, w_k, causal)
    # A_ij = e^(s_ij) / Σ_l e^(s_il), shifted by the row's maximum (softmax ignores a constant per row)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def self_attention(x, w_q, w_k, w_v, causal=False) -> np.ndarray:
    """One head of self-attention: output row i = Σ_j A_ij·(x_j·W_v), shape (tokens, d_v).

    Taught in notebooks/00-why-positions.ipynb.

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> self_attention(x, np.eye(2), np.eye(2), np.eye(2), causal=True).round(4)
    array([[1.    , 0.    ],
           [0.3302, 0.6698]])
    >>> # causal: token 0 reads only itself, so its output is its own value v_0 = (1, 0)
    """
    x = _tokens(x)
    w_v = _projection("w_v", w_v, x.shape[1])
    weights = attention_weights(x, w_q, w_k, causal)
    # out_i = Σ_j A_ij·v_j, with V = X·W_v
    return weights @ (x @ w_v)


def random_head(d_model, d_head, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded random projections (w_q, w_k, w_v), each (d_model, d_head), entries of standard deviation 1/√d_model.

    A stand-in for a trained head: nothing here depends on training.
    Taught in notebooks/00-why-positions.ipynb.

    >>> w_q, w_k, w_v = random_head(8, 4)
    >>> w_q.shape, np.array_equal(w_q, random_head(8, 4)[0])     # same seed, same head
    ((8, 4), True)
    """
    d_model = v.positive_int("d_model", d_model)
    d_head = v.positive_int("d_head", d_head)
    rng = np.random.default_rng(_seed(seed))
    # W[i, j] ~ Normal(0, 1/d_model)
    w = rng.standard_normal((3, d_model, d_head)) / np.sqrt(d_model)
    return w[0], w[1], w[2]


def embed_words(words, d_model, seed: int = 0) -> np.ndarray:
    """A toy embedding: one row per word, shape (len(words), d_model); the same word always gets the same row.

    Each distinct word's vector is drawn from Normal(0, 1) with a generator
    seeded by its spelling (CRC-32) and ``seed``, so it does not depend on
    the sentence or on the order of the words. ``words`` is a list of
    strings or one string split at spaces.
    Taught in notebooks/00-why-positions.ipynb.

    >>> x = embed_words("dog bites man", 4)
    >>> y = embed_words("man bites dog", 4)
    >>> np.array_equal(x[0], y[2]), x.shape      # "dog" is row 0 in one, row 2 in the other
    (True, (3, 4))
    """
    if isinstance(words, str):
        words = words.split()
    if not isinstance(words, (list, tuple)) or not words or not all(isinstance(w, str) and w for w in words):
        raise TypeError(f"words must be a non-empty string or a non-empty list of non-empty strings, got {v._show(words)}")
    d_model = v.positive_int("d_model", d_model)
    seed = _seed(seed)
    rows = []
    for word in words:
        # one generator per word, seeded by its spelling
        rng = np.random.default_rng([zlib.crc32(word.encode("utf-8")), seed])
        rows.append(rng.standard_normal(d_model))
    return np.array(rows)


# ---- A learned sink logit (gpt-oss) ---------------------------------------------------------------------------
# One block, appended. Taught in notebooks/14-position-per-layer.ipynb.

__all__ += ["softmax_with_sink", "attention_weights_with_sink"]


def softmax_with_sink(scores, sink) -> np.ndarray:
    """Softmax over the last axis with one extra logit, the sink, whose weight is then dropped.

    A_j = e^(s_j) / (e^(sink) + Σ_l e^(s_l)). The weights on the real keys
    sum to 1 − e^(sink)/(e^(sink) + Σ_l e^(s_l)) < 1, so a row can put most
    of its weight "nowhere". This is gpt-oss's eager attention in
    transformers: the per-head ``sinks`` are appended as one more column of
    logits, softmaxed with them, and that column is dropped. ``scores`` may
    hold −inf (masked keys); ``sink`` is a number or an array that
    broadcasts against ``scores.shape[:-1]``. Taught in notebooks/14-position-per-layer.ipynb.

    >>> softmax_with_sink([0.0, 0.0], np.log(2.0)).round(4)   # e^0 / (2 + 1 + 1) for each key
    array([0.25, 0.25])
    """
    if isinstance(scores, (str, bytes)):
        raise TypeError(f"scores must be an array of numbers, got {v._show(scores)}")
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 0 or scores.shape[-1] == 0 or np.isnan(scores).any() or (scores == np.inf).any():
        raise ValueError(f"scores must have a non-empty last axis of numbers or −inf, got {v._show(scores)}")
    sink = v.real_array("sink", sink)
    try:
        sink = np.broadcast_to(sink, scores.shape[:-1])[..., None]
    except ValueError:
        raise ValueError(
            f"sink of shape {sink.shape} does not broadcast against scores.shape[:-1] = {scores.shape[:-1]}"
        ) from None
    # shift by the row's maximum over keys and sink (softmax ignores a constant per row)
    top = np.maximum(scores.max(axis=-1, keepdims=True), sink)
    e, e_sink = np.exp(scores - top), np.exp(sink - top)
    # A_j = e^(s_j) / (e^(sink) + Σ_l e^(s_l))
    return e / (e_sink + e.sum(axis=-1, keepdims=True))


def attention_weights_with_sink(x, w_q, w_k, sink, causal=False) -> np.ndarray:
    """:func:`attention_weights` with a sink logit: rows sum to less than 1, the rest goes to the sink.

    Scores s_ij = q_i·k_j / √d_head as in :func:`attention_weights` (with the
    causal mask if asked), then :func:`softmax_with_sink`. The lower the sink
    logit, the closer this is to the plain softmax.
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> x = np.eye(2)
    >>> attention_weights_with_sink(x, np.eye(2), np.eye(2), sink=0.0).round(4)
    array([[0.5035, 0.2483],
           [0.2483, 0.5035]])
    >>> # row 0: scores (1/√2, 0), sink 0: e^0.7071 / (e^0.7071 + e^0 + e^0) = 2.0281 / 4.0281 = 0.5035
    """
    return softmax_with_sink(_scores(x, w_q, w_k, causal), sink)
