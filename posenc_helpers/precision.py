"""RoPE in low precision: positions, angles and cos/sin tables in float32, float16 and bfloat16.

A float keeps a fixed number of significant bits (its mantissa), so the gap
between neighbouring representable numbers grows with their size. bfloat16
keeps 8 significant bits: every integer up to 2^8 = 256 is exact, and 257
already rounds to 256. A RoPE angle θ = pos·ω_k computed in such a format is
off by up to half a gap, and once that is a sizeable fraction of 2π the
cos/sin of the angle are meaningless.

Values here are float64 arrays that hold numbers representable in the chosen
format: rounding happens where a real low-precision kernel would round, and
everything after it is exact, so the errors shown are the format's alone.
bfloat16 comes from the ``ml_dtypes`` package (imported when first needed).
Taught in notebooks/10-precision.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import _validate as v
from .core import frequencies

__all__ = ["DTYPE_NAMES", "dtype_of", "round_to", "rope_angles", "rope_tables", "rope_with_tables", "rope_score_lowp"]

#: The formats these helpers know, widest first.
DTYPE_NAMES = ("float64", "float32", "float16", "bfloat16")


def dtype_of(name) -> np.dtype:
    """The numpy dtype for a format name; ``"bfloat16"`` comes from ml_dtypes.

    Taught in notebooks/10-precision.ipynb.

    >>> dtype_of("float16")
    dtype('float16')
    >>> dtype_of("bfloat16")
    dtype(bfloat16)
    >>> dtype_of("float8")
    Traceback (most recent call last):
    ...
    ValueError: dtype must be one of 'float64', 'float32', 'float16', 'bfloat16', got 'float8'
    """
    if not isinstance(name, str) or name not in DTYPE_NAMES:
        raise ValueError(f"dtype must be one of 'float64', 'float32', 'float16', 'bfloat16', got {name!r}")
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def round_to(x, dtype) -> np.ndarray:
    """The values of ``x`` rounded to the nearest number of format ``dtype``, returned as float64.

    Ties go to the neighbour with an even last bit (IEEE round-half-to-even).
    Values beyond the format's largest finite number become ±inf (float16
    stops at 65504). Taught in notebooks/10-precision.ipynb.

    >>> round_to([255, 256, 257, 258], "bfloat16")   # 8 significant bits: above 256 the gap is 2
    array([255., 256., 256., 258.])
    >>> round_to(2049, "float16")                     # 11 significant bits: above 2048 the gap is 2
    array(2048.)
    """
    dt = dtype_of(dtype)
    x = v.real_array("x", x)
    with np.errstate(over="ignore"):
        return x.astype(dt).astype(np.float64)


def rope_angles(pos, dim, base=10000.0, dtype="float64") -> np.ndarray:
    """The RoPE angle table θ[..., k] = pos·ω_k, computed in format ``dtype``.

    As a kernel in that format would: the positions and the frequencies
    ω_k = base^(−2k/D) are stored in ``dtype`` (ω_k itself computed in float64
    first), and their product is rounded to ``dtype``. Shape ``pos.shape + (D/2,)``.
    Taught in notebooks/10-precision.ipynb.

    >>> rope_angles(257, 4, dtype="bfloat16")    # 257 → 256;  ω_1 = 0.01 → 0.010009765625;  256·that → 2.5625
    array([256.    ,   2.5625])
    >>> rope_angles(257, 4)                       # float64: 257 and 2.57
    array([257.  ,   2.57])
    """
    dim = v.positive_int("dim", dim)
    if dim % 2:
        raise ValueError(f"dim must be even (RoPE turns pairs of elements), got {dim}")
    dt = dtype_of(dtype)
    omega = frequencies(dim, base)
    pos = v.real_array("pos", pos)
    with np.errstate(over="ignore", invalid="ignore"):
        # θ = pos·ω_k, each factor and the product rounded to dtype
        angle = pos.astype(dt)[..., None] * omega.astype(dt)
    return angle.astype(dt).astype(np.float64)


def rope_tables(pos, dim, base=10000.0, *, angle_dtype="float32", table_dtype="bfloat16"):
    """The cos and sin tables RoPE multiplies by: angles in ``angle_dtype``, stored in ``table_dtype``.

    ``angle_dtype="bfloat16"`` is what happened in Hugging Face's Llama and
    Gemma under bfloat16 autocast before huggingface/transformers PR #29285;
    ``angle_dtype="float32"`` with ``table_dtype="bfloat16"`` is the fix:
    compute the angles in float32, take cos and sin, and only then cast.
    Returns ``(cos, sin)``, float64 arrays of shape ``pos.shape + (D/2,)``.
    Taught in notebooks/10-precision.ipynb.

    >>> cos, sin = rope_tables(257, 2, angle_dtype="bfloat16")    # the angle 257 became 256
    >>> float(cos[0]), round(float(np.cos(256)), 6)             # cos 256, stored in bfloat16
    (-0.039794921875, -0.039791)
    >>> cos, sin = rope_tables(257, 2, angle_dtype="float32")     # cos 257 ≈ 0.8193, then cast: 210/256
    >>> float(cos[0]), round(float(np.cos(257)), 4)
    (0.8203125, 0.8193)
    """
    angle = rope_angles(pos, dim, base, angle_dtype)
    # cos and sin of the stored angle, then rounded to the table's format
    return round_to(np.cos(angle), table_dtype), round_to(np.sin(angle), table_dtype)


def rope_with_tables(x, cos, sin) -> np.ndarray:
    """Rotate each pair (x[2k], x[2k+1]) by the angle whose cos and sin are given.

    (a, b) → (a·cos θ − b·sin θ, a·sin θ + b·cos θ), the rotation of
    :func:`posenc_helpers.rope`, with the tables supplied instead of computed.
    ``cos`` and ``sin`` have shape (..., D/2). Taught in notebooks/10-precision.ipynb.

    >>> rope_with_tables([1.0, 0.0], [0.0], [1.0])     # a quarter turn: (1, 0) → (0, 1)
    array([0., 1.])
    """
    x = v.vector_array("x", x)
    cos = v.real_array("cos", cos)
    sin = v.real_array("sin", sin)
    if x.shape[-1] % 2:
        raise ValueError(f"x must have an even last axis (pairs), got shape {x.shape}")
    if cos.shape != sin.shape or cos.shape[-1:] != (x.shape[-1] // 2,):
        raise ValueError(
            f"cos and sin must have the same shape ending in D/2 = {x.shape[-1] // 2}, "
            f"got cos.shape={cos.shape} and sin.shape={sin.shape}"
        )
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty(np.broadcast_shapes(x.shape[:-1], cos.shape[:-1]) + x.shape[-1:])
    # (a, b) → (a cos θ − b sin θ, a sin θ + b cos θ)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def rope_score_lowp(q, k, m, n, base=10000.0, *, angle_dtype="float32", table_dtype="bfloat16"):
    """The RoPE score rope(q, m)·rope(k, n) with the tables of :func:`rope_tables`.

    Everything except the tables is exact, so the difference from
    :func:`posenc_helpers.rope_score` is the tables' rounding alone. ``m`` and
    ``n`` may be arrays that broadcast together. Taught in notebooks/10-precision.ipynb.

    >>> q = k = [1.0, 0.0]
    >>> float(rope_score_lowp(q, k, 257, 256, angle_dtype="bfloat16"))   # 257 → 256: the offset vanishes
    1.0
    >>> round(float(rope_score_lowp(q, k, 257, 256, angle_dtype="float32")), 2)   # ≈ cos 1 = 0.54
    0.54
    """
    q = v.vector_array("q", q)
    k = v.vector_array("k", k)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last axis, got q.shape={q.shape} and k.shape={k.shape}")
    dim = q.shape[-1]
    cos_m, sin_m = rope_tables(m, dim, base, angle_dtype=angle_dtype, table_dtype=table_dtype)
    cos_n, sin_n = rope_tables(n, dim, base, angle_dtype=angle_dtype, table_dtype=table_dtype)
    score = np.sum(rope_with_tables(q, cos_m, sin_m) * rope_with_tables(k, cos_n, sin_n), axis=-1)
    return score[()] if score.ndim == 0 else score
