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


def _rotate_half_split(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Turn pair k = (x[k], x[k + D/2]) by theta[..., k] (the rotation both M-RoPE layouts share)."""
    try:
        np.broadcast_shapes(theta.shape[:-1], x.shape[:-1])
    except ValueError:
        raise ValueError(
            f"the ids (shape {theta.shape[:-1]}) do not broadcast against x.shape[:-1] = {x.shape[:-1]}"
        ) from None
    half = x.shape[-1] // 2
    cos, sin = np.cos(theta), np.sin(theta)
    a, b = x[..., :half], x[..., half:]
    # (a, b) -> (a cos θ − b sin θ, a sin θ + b cos θ), with a = x[k], b = x[k + D/2]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


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
    return _rotate_half_split(x, theta)



# --- Qwen2-VL's position ids for a sequence of text and images (notebook 11) -------------------------------------
# One block: the pair → axis map and the (t, h, w) ids that Qwen2-VL's get_rope_index gives a mixed sequence.

__all__ += ["mrope_pair_axis", "mrope_position_ids"]

#: The names of the three axes of multimodal RoPE, in the order of ``mrope_section``.
MROPE_AXES = ("t", "h", "w")


def mrope_pair_axis(mrope_section) -> np.ndarray:
    """Which id turns each pair under Qwen2-VL's multimodal RoPE: 0 for t, 1 for h, 2 for w.

    The pairs are split in order: the first n_t take t, the next n_h take h,
    the last n_w take w (``mrope_section`` = (n_t, n_h, n_w)). This is the
    map :func:`mrope_angles` uses; :func:`mrope_axes` also gives Qwen3-VL's
    interleaved one. Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> mrope_pair_axis([1, 2, 1])                   # pair 0 → t, pairs 1 and 2 → h, pair 3 → w
    array([0, 1, 1, 2])
    >>> np.bincount(mrope_pair_axis([16, 24, 24]))   # Qwen2-VL's 64 pairs
    array([16, 24, 24])
    """
    # the blocks assignment of mrope_axes: t for k < n_t, h for the next n_h, w for the last n_w
    return mrope_axes(mrope_section)


def _segment(item, index: int, merge: int):
    """One entry of ``segments``: ("text", n) or ("image", (t, h, w) after merging)."""
    if v._is_int(item):
        if item < 0:
            raise ValueError(f"segments[{index}] must be a text length >= 0 or an image grid (t, h, w), got {item}")
        return "text", int(item)
    if isinstance(item, (tuple, list, np.ndarray)) and len(item) == 3 and all(v._is_int(n) and n >= 1 for n in item):
        t, h, w = (int(n) for n in item)
        if t != 1:
            raise ValueError(
                f"segments[{index}] must be an image grid with t = 1, got (t, h, w) = {(t, h, w)}; videos "
                "(t > 1) are not read here, because transformers releases place the text after a video differently"
            )
        if h % merge or w % merge:
            raise ValueError(
                f"segments[{index}] must have h and w divisible by spatial_merge_size = {merge}, got (t, h, w) = "
                f"{(t, h, w)}"
            )
        return "image", (h // merge, w // merge)
    raise TypeError(
        f"segments[{index}] must be an int (a run of text tokens) or an image grid (t, h, w) of positive ints, "
        f"got {v._show(item)}"
    )


def mrope_position_ids(segments, spatial_merge_size=2) -> np.ndarray:
    """The (t, h, w) ids Qwen2-VL gives a sequence of text runs and images: an int array of shape (3, N).

    ``segments`` lists the sequence in order. An int n is a run of n text
    tokens (the vision start and end markers around an image are text tokens
    too); a tuple (t, h, w) is one image's ``image_grid_thw`` as the processor
    gives it, in patches before merging, with t = 1. An image becomes
    (h/m)·(w/m) tokens, m = ``spatial_merge_size`` (2 in Qwen2-VL), in row
    order. With p the id the segment starts at:

    * text: token i of the run gets t = h = w = p + i;
    * image: the token in merged row r and column c gets (p, p + r, p + c).

    The first segment starts at p = 0 and each next one at the largest id used
    so far plus one: after a text run, p + n; after an image, p + max(h/m, w/m).
    So text after an image does not resume at its token count. This is
    Qwen2VLModel.get_rope_index in transformers (modeling_qwen2_vl.py): 5.0.0
    writes the rule as "largest id used plus one", 5.23.0 as
    p + max(h/m, w/m); the two agree for images, and differ for videos, which
    is why a grid with t > 1 is refused. Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> mrope_position_ids([2, (1, 2, 4), 1])        # text ×2, a 2 × 4 patch image (1 × 2 tokens), text ×1
    array([[0, 1, 2, 2, 4],
           [0, 1, 2, 2, 4],
           [0, 1, 2, 3, 4]])
    >>> # the image starts at p = 2: ids (2, 2, 2) and (2, 2, 3); the largest is 3, so the text resumes at 4
    """
    merge = v.positive_int("spatial_merge_size", spatial_merge_size)
    if isinstance(segments, (str, bytes)) or not hasattr(segments, "__iter__"):
        raise TypeError(f"segments must be a list of text lengths and image grids (t, h, w), got {v._show(segments)}")
    columns, start = [], 0
    for index, item in enumerate(segments):
        kind, size = _segment(item, index, merge)
        if kind == "text":
            # t = h = w = p + i
            ids = np.broadcast_to(start + np.arange(size), (3, size))
        else:
            rows, cols = size
            r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
            # (t, h, w) = (p, p + r, p + c), rows first
            ids = np.stack([np.zeros(rows * cols, dtype=int), r.ravel(), c.ravel()]) + start
        columns.append(ids)
        if ids.size:
            # the next segment starts at the largest id used plus one
            start = int(ids.max()) + 1
    if not columns:
        return np.zeros((3, 0), dtype=np.int64)
    return np.concatenate(columns, axis=1).astype(np.int64)


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
    return _rotate_half_split(x, theta)
