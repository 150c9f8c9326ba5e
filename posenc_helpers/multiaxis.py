"""RoPE over more than one axis: image patches (row, column) and Qwen2-VL's (time, height, width).

A token of an image or a video has more than one coordinate. Both schemes
here give each coordinate its own share of the frequency pairs and turn
those pairs by that coordinate alone, so an attention score depends only on
the differences of the coordinates, one axis at a time.

Taught in notebooks/11-rope-as-shipped.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import _validate as v
from .core import rope

__all__ = ["axial_rope_2d", "mrope", "mrope_angles"]


def axial_rope_2d(x, row, col, base=10000.0) -> np.ndarray:
    """Axial 2D RoPE for image patches: the first half of x turns by ``row``, the second by ``col``.

    x = [x_row | x_col], each of length D/2, and each half is ordinary
    :func:`~posenc_helpers.core.rope` (interleaved pairs) over D/2 dimensions:
    pair k of a half has ω_k = base^(−2k/(D/2)) and turns by row·ω_k or
    col·ω_k. D must be a multiple of 4 (ValueError otherwise). The score of a
    query at (r₁, c₁) and a key at (r₂, c₂) is the sum of the two halves'
    scores, and each half depends only on its own difference, so the score
    depends only on (r₁ − r₂, c₁ − c₂). Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> axial_rope_2d([1.0, 0.0, 1.0, 0.0], row=1.0, col=0.0).round(4)   # the row half turns by 1 rad, the column half stays
    array([0.5403, 0.8415, 1.    , 0.    ])
    """
    x = v.vector_array("x", x)
    dim = x.shape[-1]
    if dim % 4:
        raise ValueError(
            f"x must have a last axis that is a multiple of 4 for axial 2D RoPE (two halves of pairs), got D = {dim}"
        )
    half = dim // 2
    # [rope(x_row, row) | rope(x_col, col)], each over D/2 dimensions
    return np.concatenate([rope(x[..., :half], row, base), rope(x[..., half:], col, base)], axis=-1)


def _section(mrope_section, dim: int) -> tuple[int, int, int]:
    if isinstance(mrope_section, (str, bytes)) or not hasattr(mrope_section, "__len__") or len(mrope_section) != 3:
        raise ValueError(f"mrope_section must list three pair counts (t, h, w), got {v._show(mrope_section)}")
    counts = tuple(v.positive_int("mrope_section", c) for c in mrope_section)
    if sum(counts) != dim // 2:
        raise ValueError(
            f"mrope_section must add up to the number of pairs D/2 = {dim // 2}, got {list(counts)} (sum {sum(counts)})"
        )
    return counts


def mrope_angles(t, h, w, dim, mrope_section, base=10000.0) -> np.ndarray:
    """The angle of every pair under Qwen2-VL's multimodal RoPE: θ_k = p_axis(k)·ω_k.

    ω_k = base^(−2k/D) for k = 0 … D/2 − 1, as in 1D RoPE. ``mrope_section``
    = (n_t, n_h, n_w) splits the pairs in order: the first n_t pairs take the
    temporal id t, the next n_h the height id h, the last n_w the width id w.
    Returns shape ``broadcast(t, h, w).shape + (D/2,)``.
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> mrope_angles(1.0, 2.0, 3.0, 8, [1, 2, 1], base=100.0).round(4)   # ω = 1, 0.3162, 0.1, 0.0316
    array([1.    , 0.6325, 0.2   , 0.0949])
    """
    dim = v.positive_int("dim", dim)
    if dim % 2:
        raise ValueError(f"dim must be even for multimodal RoPE (half-split pairs), got {dim}")
    n_t, n_h, n_w = _section(mrope_section, dim)
    base = v.base_value(base)
    ids = [v.real_array(name, value) for name, value in (("t", t), ("h", h), ("w", w))]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in ids))
    except ValueError:
        raise ValueError(
            f"t, h and w must broadcast against each other, got shapes {[a.shape for a in ids]}"
        ) from None
    omega = base ** (-2.0 * np.arange(dim // 2, dtype=np.float64) / dim)
    # axis of pair k: t for k < n_t, h for the next n_h, w for the last n_w
    axis = np.repeat([0, 1, 2], [n_t, n_h, n_w])
    pos = np.stack([np.broadcast_to(a, shape) for a in ids], axis=-1)
    # θ_k = p_axis(k) · ω_k
    return pos[..., axis] * omega


def mrope(x, t, h, w, mrope_section, base=10000.0) -> np.ndarray:
    """Multimodal RoPE as Qwen2-VL ships it: half-split pairs, split between (t, h, w) by ``mrope_section``.

    Pair k = (x[k], x[k + D/2]) turns by θ_k from :func:`mrope_angles`,
    exactly as in Hugging Face's ``apply_multimodal_rotary_pos_emb``: the cos
    and sin tables of the three ids are cut into sections
    ``mrope_section * 2`` = [n_t, n_h, n_w, n_t, n_h, n_w] along the head
    dimension and section i is taken from id i mod 3. Qwen2-VL's config has
    ``mrope_section`` = [16, 24, 24] for D = 128. Text tokens get t = h = w,
    and then this is exactly :func:`~posenc_helpers.conventions.rope_half_split`
    at that position. Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> mrope([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], 1.0, 5.0, 9.0, [1, 1, 1], base=100.0).round(4)
    array([0.5403, 0.4738, 0.914 , 0.8415, 0.8806, 0.4057])
    >>> # ω = 1, 100^(−1/3), 100^(−2/3); θ = 1·1, 5·0.2154, 9·0.0464; output [cos θ | sin θ]
    """
    x = v.vector_array("x", x)
    dim = x.shape[-1]
    theta = mrope_angles(t, h, w, dim, mrope_section, base)
    try:
        np.broadcast_shapes(theta.shape[:-1], x.shape[:-1])
    except ValueError:
        raise ValueError(
            f"the ids (shape {theta.shape[:-1]}) do not broadcast against x.shape[:-1] = {x.shape[:-1]}"
        ) from None
    half = dim // 2
    cos, sin = np.cos(theta), np.sin(theta)
    a, b = x[..., :half], x[..., half:]
    # (a, b) -> (a cos θ − b sin θ, a sin θ + b cos θ), with a = x[k], b = x[k + D/2]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)



# ---- Interleaved multimodal RoPE (Qwen3-VL) -------------------------------------------------------------------
# One contiguous block, appended: the pair-to-axis assignment of Qwen2-VL (blocks) and Qwen3-VL (interleaved).
# Taught in notebooks/14-position-per-layer.ipynb.

__all__ += ["mrope_axes", "mrope_interleaved_angles", "mrope_interleaved"]


def mrope_axes(mrope_section, pairs=None, interleaved=False) -> np.ndarray:
    """Which position id turns each pair: 0 = t (time), 1 = h (height), 2 = w (width), one entry per pair.

    Blocks (Qwen2-VL, ``interleaved=False``): the first n_t pairs take t, the
    next n_h take h, the last n_w take w. Interleaved (Qwen3-VL,
    ``mrope_interleaved``), as transformers' ``Qwen3VLTextRotaryEmbedding.
    recomposition_frequencies`` builds it: every pair starts on t, then pairs
    1, 4, 7, … below 3·n_h take h and pairs 2, 5, 8, … below 3·n_w take w.
    So pair k takes axis k mod 3 while k < 3·n_h (and 3·n_w), and the pairs
    past that stay on t. ``pairs`` defaults to n_t + n_h + n_w and must equal
    it. Taught in notebooks/14-position-per-layer.ipynb.

    >>> mrope_axes([2, 1, 1]), mrope_axes([2, 1, 1], interleaved=True)   # 4 pairs
    (array([0, 0, 1, 2]), array([0, 1, 2, 0]))
    """
    if not isinstance(interleaved, (bool, np.bool_)):
        raise TypeError(f"interleaved must be True or False, got {v._show(interleaved)}")
    if isinstance(mrope_section, (str, bytes)) or not hasattr(mrope_section, "__len__") or len(mrope_section) != 3:
        raise ValueError(f"mrope_section must list three pair counts (t, h, w), got {v._show(mrope_section)}")
    counts = [v.positive_int("mrope_section", c) for c in mrope_section]
    pairs = sum(counts) if pairs is None else v.positive_int("pairs", pairs)
    if sum(counts) != pairs:
        raise ValueError(f"mrope_section must add up to the number of pairs {pairs}, got {counts} (sum {sum(counts)})")
    if not interleaved:
        # axis of pair k: t for k < n_t, h for the next n_h, w for the last n_w
        return np.repeat([0, 1, 2], counts)
    axes = np.zeros(pairs, dtype=np.int64)
    for axis in (1, 2):
        # pairs axis, axis + 3, axis + 6, … below 3·n_axis take that axis
        axes[axis : 3 * counts[axis] : 3] = axis
    return axes


def mrope_interleaved_angles(t, h, w, dim, mrope_section, base=10000.0) -> np.ndarray:
    """The angle of every pair under Qwen3-VL's interleaved multimodal RoPE: θ_k = p_axis(k)·ω_k.

    ω_k = base^(−2k/D) as in 1D RoPE; axis(k) from
    :func:`mrope_axes` with ``interleaved=True``. Returns shape
    ``broadcast(t, h, w).shape + (D/2,)``. Taught in notebooks/14-position-per-layer.ipynb.

    >>> mrope_interleaved_angles(1.0, 2.0, 3.0, 8, [2, 1, 1], base=100.0).round(4)   # axes t, h, w, t
    array([1.    , 0.6325, 0.3   , 0.0316])
    """
    dim = v.positive_int("dim", dim)
    if dim % 2:
        raise ValueError(f"dim must be even for multimodal RoPE (half-split pairs), got {dim}")
    axes = mrope_axes(mrope_section, dim // 2, interleaved=True)
    base = v.base_value(base)
    ids = [v.real_array(name, value) for name, value in (("t", t), ("h", h), ("w", w))]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in ids))
    except ValueError:
        raise ValueError(
            f"t, h and w must broadcast against each other, got shapes {[a.shape for a in ids]}"
        ) from None
    omega = base ** (-2.0 * np.arange(dim // 2, dtype=np.float64) / dim)
    pos = np.stack([np.broadcast_to(a, shape) for a in ids], axis=-1)
    # θ_k = p_axis(k) · ω_k
    return pos[..., axes] * omega


def mrope_interleaved(x, t, h, w, mrope_section, base=10000.0) -> np.ndarray:
    """Qwen3-VL's interleaved multimodal RoPE: half-split pairs, pair k turned by the id of :func:`mrope_axes`.

    Pair k = (x[k], x[k + D/2]) turns by θ_k from :func:`mrope_interleaved_angles`,
    as transformers' ``apply_rotary_pos_emb`` does with the cos and sin that
    ``recomposition_frequencies`` builds. Text tokens (t = h = w) get exactly
    :func:`~posenc_helpers.conventions.rope_half_split`, as with Qwen2-VL's
    blocks. Taught in notebooks/14-position-per-layer.ipynb.

    >>> mrope_interleaved([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], 1.0, 5.0, 9.0, [1, 1, 1], base=100.0).round(4)
    array([0.5403, 0.4738, 0.914 , 0.8415, 0.8806, 0.4057])
    >>> # three pairs interleave as t, h, w: the same as Qwen2-VL's blocks [1, 1, 1]
    """
    x = v.vector_array("x", x)
    dim = x.shape[-1]
    theta = mrope_interleaved_angles(t, h, w, dim, mrope_section, base)
    try:
        np.broadcast_shapes(theta.shape[:-1], x.shape[:-1])
    except ValueError:
        raise ValueError(
            f"the ids (shape {theta.shape[:-1]}) do not broadcast against x.shape[:-1] = {x.shape[:-1]}"
        ) from None
    half = dim // 2
    cos, sin = np.cos(theta), np.sin(theta)
    a, b = x[..., :half], x[..., half:]
    # (a, b) -> (a cos θ − b sin θ, a sin θ + b cos θ), with a = x[k], b = x[k + D/2]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
