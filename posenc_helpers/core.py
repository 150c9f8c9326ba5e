"""The math core: sinusoidal encodings, the shift matrix, RoPE and ALiBi.

Angles are float64 and every function is vectorised: no Python loop runs over
positions or dimensions. Names follow the lessons: ``pos`` is a position,
``dim`` the vector length D, ``k`` a pair index, ``i`` an element index,
``m`` and ``n`` the query and key positions.
"""

from __future__ import annotations

import numpy as np

from . import _validate as v

__all__ = [
    "frequencies",
    "wavelengths",
    "sinusoidal",
    "shift_matrix",
    "rope",
    "rope_score",
    "alibi_slopes",
    "alibi_bias",
]


def frequencies(dim, base=10000.0) -> np.ndarray:
    """Angular frequency of each (sin, cos) pair: ω_k = base^(−2k/dim).

    There is one frequency per pair, k = 0 … ceil(dim/2) − 1; with an odd
    ``dim`` the last pair has only its sine. Taught in
    notebooks/01-clock-hands.ipynb.

    >>> frequencies(4)            # 10000^(-0/4) = 1,  10000^(-2/4) = 1/100
    array([1.  , 0.01])
    >>> frequencies(5).shape      # pairs k = 0, 1, 2: the last one is a lone sine
    (3,)
    """
    dim = v.positive_int("dim", dim)
    base = v.base_value(base)
    k = np.arange((dim + 1) // 2, dtype=np.float64)
    # ω_k = base^(−2k/dim)
    return base ** (-2.0 * k / dim)


def wavelengths(dim, base=10000.0) -> np.ndarray:
    """Positions per full turn of each pair: λ_k = 2π / ω_k.

    Taught in notebooks/01-clock-hands.ipynb.

    >>> wavelengths(4).round(1)    # 2π ≈ 6.3 and 2π·100 = 200π ≈ 628.3
    array([  6.3, 628.3])
    """
    # λ_k = 2π / ω_k
    return 2.0 * np.pi / frequencies(dim, base)


def sinusoidal(pos, dim, base=10000.0) -> np.ndarray:
    """The sinusoidal position vector PE(pos) of Vaswani et al.

    PE(pos, 2k) = sin(pos·ω_k) and PE(pos, 2k+1) = cos(pos·ω_k), so even
    indices hold sines, odd indices cosines, and each (sin, cos) pair shares
    one angle. ``pos`` may be a scalar (result shape ``(dim,)``) or an array
    of any shape (result shape ``pos.shape + (dim,)``). With an odd ``dim``
    the last element is the sine of a pair that has lost its cosine.
    Taught in notebooks/01-clock-hands.ipynb and 02-pos2-trace.ipynb.

    >>> sinusoidal(2, 4).round(4)   # [sin 2, cos 2, sin 0.02, cos 0.02]
    array([ 0.9093, -0.4161,  0.02  ,  0.9998])
    >>> sinusoidal(0, 6)            # every angle is 0: sin 0 = 0, cos 0 = 1
    array([0., 1., 0., 1., 0., 1.])
    >>> sinusoidal([[0, 1], [2, 3]], 5).shape
    (2, 2, 5)
    """
    omega = frequencies(dim, base)
    dim = int(dim)
    pos = v.real_array("pos", pos)
    # angle[..., k] = pos · ω_k
    angle = pos[..., None] * omega
    out = np.empty(pos.shape + (dim,), dtype=np.float64)
    # even i = 2k: sin(pos·ω_k);  odd i = 2k+1: cos(pos·ω_k)
    np.sin(angle, out=out[..., 0::2])
    np.cos(angle[..., : dim // 2], out=out[..., 1::2])
    return out


def shift_matrix(offset, dim, base=10000.0) -> np.ndarray:
    """The matrix T with T @ PE(p) = PE(p + offset) for every position p.

    T is block diagonal; the block of pair k acts on its (sin, cos) pair:

        [[ cos(ω_k·offset), sin(ω_k·offset)],
         [−sin(ω_k·offset), cos(ω_k·offset)]]

    by the angle-addition formulas sin(a+b) = sin a cos b + cos a sin b and
    cos(a+b) = cos a cos b − sin a sin b. An odd ``dim`` raises ValueError:
    the last element would be a lone sine, and sin(ω(p + offset)) cannot be
    computed from sin(ωp) alone by any fixed matrix. Taught in
    notebooks/03-shift-matrix.ipynb.

    >>> T = shift_matrix(1, 4)
    >>> T.round(5)                  # pair 0 turns by 1 rad, pair 1 by 0.01 rad
    array([[ 0.5403 ,  0.84147,  0.     ,  0.     ],
           [-0.84147,  0.5403 ,  0.     ,  0.     ],
           [ 0.     ,  0.     ,  0.99995,  0.01   ],
           [ 0.     ,  0.     , -0.01   ,  0.99995]])
    >>> (T @ sinusoidal(2, 4)).round(4)   # PE(3) = [sin 3, cos 3, sin 0.03, cos 0.03]
    array([ 0.1411, -0.99  ,  0.03  ,  0.9996])
    """
    omega = frequencies(dim, base)
    dim = int(dim)
    offset = v.real_scalar("offset", offset)
    if dim % 2:
        raise ValueError(
            f"dim must be even for a shift matrix, got {dim}: the last element would be a lone sine, "
            "and sin(ω·(p + offset)) needs cos(ω·p) too, so no fixed matrix can move it"
        )
    c = np.cos(omega * offset)
    s = np.sin(omega * offset)
    T = np.zeros((dim, dim))
    idx = np.arange(0, dim, 2)
    # [[cos, sin], [−sin, cos]] on each (sin, cos) pair
    T[idx, idx] = c
    T[idx, idx + 1] = s
    T[idx + 1, idx] = -s
    T[idx + 1, idx + 1] = c
    return T


def rope(x, pos, base=10000.0, *, rotary_dim=None) -> np.ndarray:
    """Rotary position embedding: rotate each pair of x by its position's angle.

    Each pair (a, b) = (x[2k], x[2k+1]) becomes

        (a·cos θ − b·sin θ,  a·sin θ + b·cos θ),   θ = pos·ω_k,

    a counter-clockwise turn by θ, with ω_k = base^(−2k/D) where D is the
    number of *rotated* dimensions. By default that is all of
    D = x.shape[-1], and with an odd D the last element has no partner and
    passes through unchanged. With ``rotary_dim`` = r (even, 2 ≤ r ≤ D) only
    the first r elements turn, with ω_k = base^(−2k/r), and the last D − r
    pass through unchanged: the partial rotary of GPT-J (interleaved pairs,
    as here) and GPT-NeoX (see :func:`~posenc_helpers.conventions.rope_half_split`).
    ``x`` has shape (..., D); ``pos`` is a scalar or an array that broadcasts
    against ``x.shape[:-1]``. Taught in notebooks/04-rope.ipynb and
    11-rope-as-shipped.ipynb.

    >>> rope([1.0, 0.0], 0.1).round(4)    # (cos 0.1, sin 0.1): the second coordinate rises
    array([0.995 , 0.0998])
    >>> rope([1.0, 0.0, 1.0, 0.0], 2).round(4)   # pair 0 turns by 2, pair 1 by 0.02
    array([-0.4161,  0.9093,  0.9998,  0.02  ])
    >>> float(rope([3.0, 4.0, 7.0], 1.0)[2])   # odd D: the lone last element is untouched
    7.0
    >>> rope([1.0, 0.0, 1.0, 0.0, 5.0, 6.0], 2, rotary_dim=4).round(4)   # ω = 1, 10000^(-2/4); the tail 5, 6 stays
    array([-0.4161,  0.9093,  0.9998,  0.02  ,  5.    ,  6.    ])
    """
    x, out, theta = rotation_setup(x, pos, base, rotary_dim=rotary_dim)
    if theta is None:
        return out
    cos, sin = np.cos(theta), np.sin(theta)
    pairs = slice(0, 2 * theta.shape[-1])
    a, b = x[..., pairs][..., 0::2], x[..., pairs][..., 1::2]
    # (a, b) -> (a cos θ − b sin θ, a sin θ + b cos θ)
    np.subtract(a * cos, b * sin, out=out[..., pairs][..., 0::2])
    np.add(a * sin, b * cos, out=out[..., pairs][..., 1::2])
    return out


def rotary_width(rotary_dim, dim: int) -> int:
    """The number of rotated dimensions: ``dim`` if ``rotary_dim`` is None, else a checked ``rotary_dim``.

    ``rotary_dim`` must be an even integer with 2 ≤ rotary_dim ≤ D; anything
    else raises an error that names ``rotary_dim``, its value and D.
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> rotary_width(None, 128), rotary_width(32, 128)
    (128, 32)
    >>> rotary_width(3, 8)
    Traceback (most recent call last):
    ...
    ValueError: rotary_dim must be an even integer with 2 <= rotary_dim <= D, got rotary_dim=3 with D = 8
    """
    if rotary_dim is None:
        return int(dim)
    if not v._is_int(rotary_dim):
        raise TypeError(
            f"rotary_dim must be an even integer with 2 <= rotary_dim <= D, "
            f"got rotary_dim={v._show(rotary_dim)} with D = {dim}"
        )
    if rotary_dim % 2 or not 2 <= rotary_dim <= dim:
        raise ValueError(
            f"rotary_dim must be an even integer with 2 <= rotary_dim <= D, got rotary_dim={int(rotary_dim)} with D = {dim}"
        )
    return int(rotary_dim)


def rotation_setup(x, pos, base, rotary_dim=None):
    """Check a rotation's inputs; return ``(x, out, theta)`` for the pair-by-pair turn.

    ``x`` comes back as a float64 array, ``out`` as the empty result (batch
    shape of ``pos`` and ``x`` broadcast, last axis D) with the elements that
    do not turn already copied (an odd D's lone last element, or everything
    from ``rotary_dim`` on), and ``theta[..., k] = pos·ω_k`` with
    ω_k = base^(−2k/r), r = ``rotary_dim`` or D = x.shape[-1]; ``theta`` is
    None when nothing turns (D = 1). Shared by :func:`rope` and the other
    layouts of :mod:`posenc_helpers.conventions`, so all check their input alike.

    >>> x, out, theta = rotation_setup([1.0, 0.0, 1.0, 0.0, 5.0], [0.0, 2.0], 10000.0)
    >>> out.shape, out[:, 4], theta.round(4)      # ω = 10000^(0/5), 10000^(-2/5)
    ((2, 5), array([5., 5.]), array([[0.    , 0.    ],
           [2.    , 0.0502]]))
    """
    base = v.base_value(base)
    x = v.vector_array("x", x)
    pos = v.real_array("pos", pos)
    batch = v.broadcast_positions("pos", pos, "x", x)
    dim = x.shape[-1]
    width = rotary_width(rotary_dim, dim)
    half = width // 2
    out = np.empty(batch + (dim,), dtype=np.float64)
    # the elements that do not turn: an odd D's last one, or the tail past rotary_dim
    out[..., 2 * half :] = x[..., 2 * half :]
    if half == 0:
        return x, out, None
    # ω_k = base^(−2k/r), r = the number of rotated dimensions
    omega = base ** (-2.0 * np.arange(half, dtype=np.float64) / width)
    return x, out, pos[..., None] * omega


def rope_score(q, k, m, n, base=10000.0) -> np.ndarray | float:
    """Attention score between a query at position m and a key at position n.

    score = rope(q, m) · rope(k, n), summed over the last axis. Because both
    pairs turn by the same frequencies, the score depends on m − n only.
    Taught in notebooks/04-rope.ipynb.

    >>> round(float(rope_score([1, 0], [1, 0], 5, 3)), 4)   # cos(5 − 3) = cos 2
    -0.4161
    >>> round(float(rope_score([1, 0], [1, 0], 9, 7)), 4)   # the same offset, the same score
    -0.4161
    """
    q = v.vector_array("q", q)
    k = v.vector_array("k", k)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last axis, got q.shape={q.shape} and k.shape={k.shape}")
    m = v.real_array("m", m)
    n = v.real_array("n", n)
    rq = rope(q, m, base)
    rk = rope(k, n, base)
    try:
        score = np.einsum("...d,...d->...", rq, rk)
    except ValueError:
        raise ValueError(
            f"q at m (shapes {q.shape}, {m.shape}) and k at n (shapes {k.shape}, {n.shape}) give rotated "
            f"vectors of shapes {rq.shape} and {rk.shape}, which do not broadcast against each other"
        ) from None
    return score[()] if score.ndim == 0 else score


def alibi_slopes(n_heads) -> np.ndarray:
    """ALiBi head slopes (Press et al., 2022).

    For a power of two n, the geometric sequence that starts at 2^(−8/n) and
    has that same ratio: slope_h = 2^(−8(h+1)/n) for h = 0 … n−1. For any
    other n: the slopes for the largest power of two c below n, then every
    other slope of the 2c sequence, the first n − c of them. Taught in
    notebooks/08-other-schemes.ipynb.

    >>> alibi_slopes(8) * 256      # 1/2, 1/4, …, 1/256
    array([128.,  64.,  32.,  16.,   8.,   4.,   2.,   1.])
    >>> alibi_slopes(6) * 256      # the 4-head slopes 1/4 … 1/256, then 2^-1 and 2^-3 from the 8-head ones
    array([ 64.,  16.,   4.,   1., 128.,  32.])
    """
    n = v.positive_int("n_heads", n_heads)

    def power_of_two(count: int) -> np.ndarray:
        # slope_h = (2^(−8/count))^(h+1)
        return 2.0 ** (-8.0 * np.arange(1, count + 1) / count)

    c = 1 << (n.bit_length() - 1)  # the largest power of two ≤ n
    if c == n:
        return power_of_two(n)
    return np.concatenate([power_of_two(c), power_of_two(2 * c)[0::2][: n - c]])


def alibi_bias(seq_len, n_heads) -> np.ndarray:
    """The ALiBi bias added to attention scores: bias[h, i, j] = −slope_h·|i − j|.

    Shape (n_heads, seq_len, seq_len). A causal model only reads j ≤ i.
    Taught in notebooks/08-other-schemes.ipynb.

    >>> alibi_bias(3, 1)           # one head, slope 2^-8 = 1/256
    array([[[ 0.        , -0.00390625, -0.0078125 ],
            [-0.00390625,  0.        , -0.00390625],
            [-0.0078125 , -0.00390625,  0.        ]]])
    """
    seq_len = v.positive_int("seq_len", seq_len)
    slopes = alibi_slopes(n_heads)
    i = np.arange(seq_len)
    # bias[h, i, j] = −slope_h · |i − j|
    distance = np.abs(i[:, None] - i[None, :])
    # bias[h, i, j] = −slope_h · |i − j|   (0.0 − … keeps the diagonal at +0.0, not −0.0)
    return 0.0 - slopes[:, None, None] * distance
