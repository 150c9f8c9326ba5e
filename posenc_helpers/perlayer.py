"""Position per layer: the small formulas behind today's mixed designs.

* the weight a softmax can keep on one key as the context grows, with and
  without a query temperature (Llama 4's is
  :func:`posenc_helpers.configs.llama4_query_temperature`);
* how many RoPE pairs finish a turn within a window or a context (a pair
  with ω = 0, as in "proportional" RoPE, never does);
* why RoPE stops a key projection from being folded into the query side
  (multi-head latent attention): the rotation matrix R_p, the bilinear form
  of a score, and the best single matrix that could replace it;
* QK-norm: the RMS norm models apply to queries and keys (:func:`rms_norm`),
  and the bound it puts on every logit the rotation then modulates
  (:func:`qk_norm_bound`).

Taught in notebooks/14-position-per-layer.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import _validate as v
from .core import rope

__all__ = [
    "key_weight",
    "pairs_finishing",
    "rope_matrix",
    "score_matrix",
    "fold_residual",
    "rms_norm",
    "qk_norm_bound",
]


def _positive_real(name: str, value) -> float:
    out = v.real_scalar(name, value)
    if out <= 0:
        raise ValueError(f"{name} must be a positive number, got {v._show(value)}")
    return out


def key_weight(gap, n_keys, temperature=1.0) -> np.ndarray:
    """The softmax weight on one key whose logit is ``gap`` above each of the other n − 1 keys.

    w = e^(τ·Δ) / (e^(τ·Δ) + n − 1): the query is multiplied by τ, so every
    logit is, and the gap Δ becomes τ·Δ. With τ = 1 the weight falls like
    e^Δ/n as the number of keys n grows: a layer whose logits do not depend
    on position must spread its attention over more keys the longer the
    context. Arguments broadcast. Taught in notebooks/14-position-per-layer.ipynb.

    >>> key_weight(0.0, 4).round(4), key_weight(np.log(3.0), 4).round(4)   # equal logits: 1/4; e^Δ = 3: 3/6
    (np.float64(0.25), np.float64(0.5))
    """
    gap = v.real_array("gap", gap)
    n_keys = v.real_array("n_keys", n_keys)
    if (n_keys < 1).any():
        raise ValueError(f"n_keys must be ≥ 1, got {v._show(n_keys)}")
    temperature = v.real_array("temperature", temperature)
    # w = e^(τΔ) / (e^(τΔ) + n − 1) = 1 / (1 + (n − 1)·e^(−τΔ))
    return 1.0 / (1.0 + (n_keys - 1.0) * np.exp(-temperature * gap))


def pairs_finishing(inv_freq, length) -> int:
    """How many pairs complete at least one turn within ``length`` tokens: λ_k = 2π/ω_k ≤ length.

    A pair with ω_k = 0 (a position-free pair of "proportional" RoPE) never
    turns. Taught in notebooks/14-position-per-layer.ipynb.

    >>> pairs_finishing([1.0, 0.01, 0.001, 0.0], 1000)   # λ = 6.3, 628, 6283 and ∞ tokens
    2
    """
    inv_freq = v.vector_array("inv_freq", inv_freq)
    if inv_freq.ndim != 1 or (inv_freq < 0).any():
        raise ValueError(f"inv_freq must be a 1-D array of frequencies ≥ 0, got {v._show(inv_freq)}")
    length = _positive_real("length", length)
    turning = inv_freq[inv_freq > 0]
    # λ_k = 2π / ω_k ≤ L
    return int(np.count_nonzero(2.0 * np.pi / turning <= length))


def rope_matrix(dim, pos, base=10000.0) -> np.ndarray:
    """The matrix R_p with R_p·x = rope(x, p) for every x of length ``dim`` (interleaved pairs).

    Block diagonal, one 2×2 rotation [[cos θ_k, −sin θ_k], [sin θ_k, cos θ_k]]
    per pair, θ_k = p·ω_k. Orthogonal, and R_mᵀ·R_n = R_(n−m).
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> rope_matrix(2, np.pi / 2).round(4)          # a quarter turn: (1, 0) -> (0, 1)
    array([[ 0., -1.],
           [ 1.,  0.]])
    """
    dim = v.positive_int("dim", dim)
    pos = v.real_scalar("pos", pos)
    # column j of R_p is rope(e_j, p)
    return rope(np.eye(dim), pos, base).T


def score_matrix(w_q, w_k, m=None, n=None, base=10000.0) -> np.ndarray:
    """The matrix B with score = x_m·B·x_nᵀ, for q = x·W_q and k = x·W_k, with or without RoPE.

    Without positions (m and n None): B = W_q·W_kᵀ, one fixed matrix, so the
    key side can be folded into the query side. With RoPE on q at m and on
    k at n: B(m, n) = W_q·R_mᵀ·R_n·W_kᵀ = W_q·R_(n−m)·W_kᵀ, which changes with
    n − m. ``w_q`` and ``w_k`` are (d_model, d_head).
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> w = np.eye(2)
    >>> score_matrix(w, w).tolist(), score_matrix(w, w, 3.0, 3.0).round(12).tolist()   # m = n: R_0 = I
    ([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    """
    w_q, w_k = v.real_array("w_q", w_q), v.real_array("w_k", w_k)
    if w_q.ndim != 2 or w_k.shape != w_q.shape:
        raise ValueError(f"w_q and w_k must be matrices of one shape, got {w_q.shape} and {w_k.shape}")
    if (m is None) != (n is None):
        raise ValueError(f"give both m and n (RoPE) or neither (no positions), got m={m!r}, n={n!r}")
    if m is None:
        # B = W_q·W_kᵀ
        return w_q @ w_k.T
    dim = w_q.shape[1]
    # B(m, n) = W_q·R_mᵀ·R_n·W_kᵀ
    return w_q @ rope_matrix(dim, m, base).T @ rope_matrix(dim, n, base) @ w_k.T


def fold_residual(q, c, scores) -> float:
    """How much of a score table no single matrix A explains: min over A of ‖S − Q·A·Cᵀ‖ / ‖S‖.

    ``q`` is (queries, d_q), ``c`` is (keys, d_c) and ``scores`` is
    (queries, keys). If every score is q_iᵀ·A·c_j for one fixed A, the
    residual is 0 (to rounding): the key side can be folded into the query
    side. The least-squares A is Q⁺·S·(Cᵀ)⁺ (pseudo-inverses).
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> rng = np.random.default_rng(0)
    >>> q, c, a = rng.standard_normal((6, 2)), rng.standard_normal((5, 3)), rng.standard_normal((2, 3))
    >>> fold_residual(q, c, q @ a @ c.T) < 1e-12
    True
    """
    q, c, scores = v.real_array("q", q), v.real_array("c", c), v.real_array("scores", scores)
    if q.ndim != 2 or c.ndim != 2 or scores.shape != (q.shape[0], c.shape[0]):
        raise ValueError(
            f"q (queries, d_q), c (keys, d_c) and scores (queries, keys) must match, got shapes "
            f"{q.shape}, {c.shape} and {scores.shape}"
        )
    norm = np.linalg.norm(scores)
    if norm == 0:
        raise ValueError("scores must not be all zero")
    # A = Q⁺·S·(Cᵀ)⁺, the least-squares fit of S ≈ Q·A·Cᵀ
    a = np.linalg.pinv(q) @ scores @ np.linalg.pinv(c.T)
    return float(np.linalg.norm(scores - q @ a @ c.T) / norm)


def rms_norm(x, weight=None, *, one_plus=False, eps=1e-6) -> np.ndarray:
    """RMSNorm over the last axis: x / √(mean(x²) + eps), times ``weight`` (or 1 + ``weight``).

    What Qwen3, Gemma and OLMo apply to each query and key (the record's
    :class:`~posenc_helpers.configs.QKNorm` says where): without a weight the
    result has mean square just under 1, so its Euclidean norm is just under
    √d for d entries. ``one_plus=True`` is Gemma 3's form, weight × (1 + w) with w
    initialised to zeros. Taught in notebooks/14-position-per-layer.ipynb.

    >>> rms_norm([3.0, 4.0], eps=0.0)                    # rms = √(25/2): the norm becomes √2
    array([0.84852814, 1.13137085])
    >>> rms_norm([3.0, 4.0], [2.0, 0.5], eps=0.0), rms_norm([3.0, 4.0], [1.0, -0.5], one_plus=True, eps=0.0)
    (array([1.69705627, 0.56568542]), array([1.69705627, 0.56568542]))
    """
    x = v.vector_array("x", x)
    eps = v.real_scalar("eps", eps)
    if eps < 0:
        raise ValueError(f"eps must be ≥ 0, got {eps!r}")
    # x / √(mean(x²) + eps)
    ms = np.mean(x * x, axis=-1, keepdims=True) + eps
    if (ms == 0).any():
        raise ValueError("x has an all-zero row and eps is 0: its RMS norm divides by zero (give eps > 0)")
    out = x / np.sqrt(ms)
    if weight is None:
        return out
    weight = v.vector_array("weight", weight)
    if weight.shape != x.shape[-1:]:
        raise ValueError(f"weight must have one entry per channel ({x.shape[-1]}), got shape {weight.shape}")
    return out * (1.0 + weight if one_plus else weight)


def qk_norm_bound(weight_q, weight_k) -> float:
    """The largest |logit| RMS-normalised q and k can give: max|g_q|·max|g_k|·√d, softmax scale 1/√d included.

    With q̂ = g_q ⊙ q/rms(q): ‖q/rms(q)‖ ≤ √d, so ‖q̂‖ ≤ max|g_q|·√d, and the
    same for k̂. A rotation keeps lengths, so whatever positions turn them,
    |q̂ᵀR_(n−m)k̂|/√d ≤ ‖q̂‖·‖k̂‖/√d ≤ max|g_q|·max|g_k|·√d, however large q and
    k were before the norm. For weights in the form 1 + w give 1 + w.
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> qk_norm_bound(np.ones(64), np.ones(64))           # no learned weight, head of 64: √64
    8.0
    """
    weight_q, weight_k = v.vector_array("weight_q", weight_q), v.vector_array("weight_k", weight_k)
    if weight_q.ndim != 1 or weight_q.shape != weight_k.shape:
        raise ValueError(f"weight_q and weight_k must be vectors of one length, got shapes {weight_q.shape} and "
                         f"{weight_k.shape}")
    # max|g_q| · max|g_k| · √d
    return float(np.abs(weight_q).max() * np.abs(weight_k).max() * np.sqrt(weight_q.size))
