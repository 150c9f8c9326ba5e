"""The same math in other layouts: how real code bases arrange sinusoids and RoPE.

The paper (Vaswani et al.) and Meta's Llama keep each (sin, cos) or (a, b)
pair side by side: elements (2k, 2k+1). tensor2tensor's sinusoids and the
GPT-NeoX / Hugging Face ``rotate_half`` RoPE keep the two halves apart: pair k
is (k, k + D/2). One fixed permutation P of the last axis turns one layout
into the other:

    P x = [x0, x2, x4, …, x1, x3, x5, …]      (evens first, then odds)

so ``rope_half_split(P x, pos) == P rope(x, pos)`` and, because P only
reorders coordinates, (P q)·(P k) = q·k: attention scores do not change.

The half-split layout only exists for an even D (there is no "other half" to
pair with otherwise), so every function here that uses it raises ValueError
for an odd D. :func:`rope_complex` follows :func:`~posenc_helpers.core.rope`
instead: an odd last element passes through unchanged.

Taught in notebooks/07-conventions.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate as v
from .core import rotary_width, rotation_setup

__all__ = [
    "interleaved_to_half_split",
    "half_split_to_interleaved",
    "rope_half_split",
    "rope_complex",
    "sinusoidal_concat",
]


def _even_vector(name: str, value, layout: str = "the half-split layout") -> np.ndarray:
    """``value`` as a float64 array whose last axis has an even, non-zero length."""
    arr = v.vector_array(name, value)
    dim = arr.shape[-1]
    if dim % 2:
        raise ValueError(
            f"{name} must have an even last axis for {layout}, got D = {dim} (shape {arr.shape}): "
            f"pair k is (k, k + D/2), so an odd D leaves one element with no partner"
        )
    return arr


def interleaved_to_half_split(x) -> np.ndarray:
    """The permutation P: interleaved pairs (2k, 2k+1) to half-split pairs (k, k + D/2).

    (P x)[k] = x[2k] and (P x)[k + D/2] = x[2k+1] for k = 0 … D/2 − 1: the even
    elements first, then the odd ones. Works on the last axis of any array;
    D must be even (ValueError otherwise). Inverse:
    :func:`half_split_to_interleaved`. Taught in notebooks/07-conventions.ipynb.

    >>> interleaved_to_half_split([0, 1, 2, 3, 4, 5])   # evens 0, 2, 4 then odds 1, 3, 5
    array([0., 2., 4., 1., 3., 5.])
    >>> interleaved_to_half_split([[10, 11, 12, 13]])   # any leading axes: pairs (10, 11), (12, 13)
    array([[10., 12., 11., 13.]])
    >>> interleaved_to_half_split([1, 2, 3])   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: x must have an even last axis for the half-split layout, got D = 3 (shape (3,)): ...
    """
    x = _even_vector("x", x)
    # (P x)[k] = x[2k],  (P x)[k + D/2] = x[2k+1]
    return np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)


def half_split_to_interleaved(x) -> np.ndarray:
    """The inverse permutation P⁻¹: half-split pairs (k, k + D/2) back to (2k, 2k+1).

    (P⁻¹ y)[2k] = y[k] and (P⁻¹ y)[2k+1] = y[k + D/2]. D must be even.
    Taught in notebooks/07-conventions.ipynb.

    >>> half_split_to_interleaved([0, 2, 4, 1, 3, 5])   # undoes interleaved_to_half_split
    array([0., 1., 2., 3., 4., 5.])
    """
    y = _even_vector("x", x)
    half = y.shape[-1] // 2
    out = np.empty_like(y)
    # (P⁻¹ y)[2k] = y[k],  (P⁻¹ y)[2k+1] = y[k + D/2]
    out[..., 0::2] = y[..., :half]
    out[..., 1::2] = y[..., half:]
    return out


def rope_half_split(x, pos, base=10000.0, *, rotary_dim=None) -> np.ndarray:
    """RoPE in the GPT-NeoX / Hugging Face ``rotate_half`` layout: pair k is (k, k + D/2).

    With h = D/2, each pair (a, b) = (x[k], x[k+h]) becomes

        (a·cos θ_k − b·sin θ_k,  a·sin θ_k + b·cos θ_k),   θ_k = pos·ω_k,  ω_k = base^(−2k/D),

    the same rotation :func:`~posenc_helpers.core.rope` applies to (x[2k], x[2k+1]).
    In Hugging Face's words: ``x·cos + rotate_half(x)·sin`` with
    ``rotate_half(x) = [−x[h:], x[:h]]`` and the angles repeated as [θ | θ].
    Hence rope_half_split(P x, pos) = P rope(x, pos) with P =
    :func:`interleaved_to_half_split`. ``x`` has shape (..., D) with D even
    (ValueError otherwise); ``pos`` broadcasts against ``x.shape[:-1]``.

    With ``rotary_dim`` = r (even, 2 ≤ r ≤ D) only the first r elements turn,
    in this layout among themselves: pair k is (k, k + r/2) and
    ω_k = base^(−2k/r). The last D − r elements pass through unchanged, and D
    itself may then be odd. That is GPT-NeoX's partial rotary
    (``rotary_pct``): ``x[..., :r]`` goes through ``rotate_half``, ``x[..., r:]``
    is concatenated back untouched. Taught in notebooks/07-conventions.ipynb
    and 11-rope-as-shipped.ipynb.

    >>> rope_half_split([1.0, 0.0], 0.1).round(4)           # D = 2: one pair (x[0], x[1]), as in rope
    array([0.995 , 0.0998])
    >>> rope_half_split([1.0, 1.0, 0.0, 0.0], 2).round(4)   # pairs (x0, x2) turn by 2 and (x1, x3) by 0.02
    array([-0.4161,  0.9998,  0.9093,  0.02  ])
    >>> rope_half_split([1.0, 0.0, 7.0], 0.1, rotary_dim=2).round(4)   # one pair (x0, x1); x2 passes
    array([0.995 , 0.0998, 7.    ])
    """
    base = v.base_value(base)
    if rotary_dim is None:
        x = _even_vector("x", x)
    else:
        x = v.vector_array("x", x)
    pos = v.real_array("pos", pos)
    batch = v.broadcast_positions("pos", pos, "x", x)
    dim = x.shape[-1]
    width = rotary_width(rotary_dim, dim)
    half = width // 2
    # ω_k = base^(−2k/r), θ_k = pos·ω_k, r = the number of rotated dimensions
    omega = base ** (-2.0 * np.arange(half, dtype=np.float64) / width)
    theta = pos[..., None] * omega
    cos, sin = np.cos(theta), np.sin(theta)
    a, b = x[..., :half], x[..., half:width]
    # (a, b) -> (a cos θ − b sin θ, a sin θ + b cos θ), with a = x[k], b = x[k + r/2]
    turned = [a * cos - b * sin, a * sin + b * cos]
    if width == dim:
        return np.concatenate(turned, axis=-1)
    # the tail x[r:] passes through unchanged
    tail = np.broadcast_to(x[..., width:], batch + (dim - width,))
    return np.concatenate(turned + [tail], axis=-1)


def rope_complex(x, pos, base=10000.0, *, rotary_dim=None) -> np.ndarray:
    """RoPE as Meta's Llama writes it: each pair is a complex number, turned by e^{iθ}.

    Pair k becomes z_k = x[2k] + i·x[2k+1] and is multiplied by e^{iθ_k}, with
    θ_k = pos·ω_k and ω_k = base^(−2k/D). Since

        (a + ib)(cos θ + i sin θ) = (a cos θ − b sin θ) + i(a sin θ + b cos θ),

    the real and imaginary parts, interleaved back, are exactly
    :func:`~posenc_helpers.core.rope`. Returns that real float64 array, shape
    ``broadcast(pos, x[..., 0]).shape + (D,)``. As in ``rope``, an odd D's
    last element has no partner and passes through unchanged. With
    ``rotary_dim`` = r (even, 2 ≤ r ≤ D) only the first r/2 complex numbers
    turn, with ω_k = base^(−2k/r), and the rest pass through: GPT-J's partial
    rotary. Taught in notebooks/07-conventions.ipynb and 11-rope-as-shipped.ipynb.

    >>> rope_complex([1.0, 0.0], 0.1).round(4)    # 1·e^{0.1i} = cos 0.1 + i sin 0.1
    array([0.995 , 0.0998])
    >>> rope_complex([0.0, 1.0, 1.0, 0.0], 2).round(4)   # i·e^{2i} = −sin 2 + i cos 2;  1·e^{0.02i}
    array([-0.9093, -0.4161,  0.9998,  0.02  ])
    """
    # θ_k = pos·ω_k with ω_k = base^(−2k/r); the elements that do not turn are already copied to out
    x, out, theta = rotation_setup(x, pos, base, rotary_dim=rotary_dim)
    if theta is None:
        return out
    half = theta.shape[-1]
    # z_k = x[2k] + i·x[2k+1]
    z = x[..., 0 : 2 * half : 2] + 1j * x[..., 1 : 2 * half : 2]
    # z_k · e^{iθ_k}
    turned = z * np.exp(1j * theta)
    out[..., 0 : 2 * half : 2] = turned.real
    out[..., 1 : 2 * half : 2] = turned.imag
    return out


def sinusoidal_concat(pos, dim, min_timescale=1.0, max_timescale=1.0e4) -> np.ndarray:
    """Sinusoids in tensor2tensor's layout (``get_timing_signal_1d``): [sin | cos].

    With n = dim // 2 timescales, spread geometrically from ``min_timescale``
    to ``max_timescale`` over n − 1 steps (one step if n = 1):

        timescale_k = min_timescale·(max_timescale/min_timescale)^(k / max(n − 1, 1)),
        PE(pos) = [sin(pos/timescale_0), …, sin(pos/timescale_{n−1}),
                   cos(pos/timescale_0), …, cos(pos/timescale_{n−1})].

    Two differences from the paper: the layout is half-split (all sines, then
    all cosines) and the slowest frequency is exactly 1/max_timescale, while
    the paper's slowest is 10000^(−(D−2)/D). With the defaults this equals
    P·sinusoidal(pos, dim, base=10000^(dim/(dim − 2))) for even dim ≥ 4.
    As in tensor2tensor, an odd ``dim`` gets a zero appended at the end.
    (tensor2tensor's code writes the inverse timescale as
    ``min_timescale·exp(−k·increment)``, which equals 1/timescale_k only for
    the default min_timescale = 1; this function follows the documented
    timescales.) ``pos`` may be a scalar or an array; the result has shape
    ``pos.shape + (dim,)``. Taught in notebooks/07-conventions.ipynb.

    >>> sinusoidal_concat(2, 4).round(4).tolist()   # timescales 1, 10^4: [sin 2, sin 0.0002, cos 2, cos 0.0002]
    [0.9093, 0.0002, -0.4161, 1.0]
    >>> sinusoidal_concat(0, 5)            # pos 0: sines 0, cosines 1, then the zero pad of an odd dim
    array([0., 0., 1., 1., 0.])
    """
    dim = v.positive_int("dim", dim)
    min_timescale = v.real_scalar("min_timescale", min_timescale)
    max_timescale = v.real_scalar("max_timescale", max_timescale)
    if min_timescale <= 0:
        raise ValueError(f"min_timescale must be positive, got {min_timescale!r}")
    if max_timescale < min_timescale:
        raise ValueError(
            f"max_timescale must be at least min_timescale = {min_timescale!r}, got {max_timescale!r}"
        )
    pos = v.real_array("pos", pos)
    n = dim // 2
    # increment = ln(max/min) / max(n − 1, 1)
    increment = math.log(max_timescale / min_timescale) / max(n - 1, 1)
    # 1/timescale_k = exp(−k·increment) / min_timescale
    inv_timescale = np.exp(-increment * np.arange(n, dtype=np.float64)) / min_timescale
    angle = pos[..., None] * inv_timescale
    out = np.zeros(pos.shape + (dim,), dtype=np.float64)
    # [sin(pos/timescale_k) for k] | [cos(pos/timescale_k) for k] | zero pad if dim is odd
    out[..., :n] = np.sin(angle)
    out[..., n : 2 * n] = np.cos(angle)
    return out
