"""Independent literal implementations, written straight from the formulas, one element at a time.

The tests compare posenc_helpers against these. They share nothing with the
package: plain Python floats and the math module, no numpy.
"""

from __future__ import annotations

import math


def literal_pe(pos: float, dim: int, base: float = 10000.0) -> list[float]:
    """PE(pos): element i = sin (even i) or cos (odd i) of pos / base^(2k/D), with k = i // 2."""
    out = []
    for i in range(dim):
        k = i // 2
        angle = pos / base ** (2 * k / dim)
        out.append(math.sin(angle) if i % 2 == 0 else math.cos(angle))
    return out


def literal_rope(x, pos: float, base: float = 10000.0) -> list[float]:
    """RoPE: each pair (a, b) → (a cos θ − b sin θ, a sin θ + b cos θ), θ = pos / base^(2k/D), D = len(x)."""
    dim = len(x)
    out = [float(value) for value in x]
    for k in range(dim // 2):
        theta = pos / base ** (2 * k / dim)
        a, b = x[2 * k], x[2 * k + 1]
        out[2 * k] = a * math.cos(theta) - b * math.sin(theta)
        out[2 * k + 1] = a * math.sin(theta) + b * math.cos(theta)
    return out


def literal_alibi_slopes(n: int) -> list[float]:
    """Press et al.'s reference get_slopes, transcribed from the paper's code."""

    def power_of_2(count):
        start = 2 ** (-(2 ** -(math.log2(count) - 3)))
        return [start * start**i for i in range(count)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + literal_alibi_slopes(2 * closest)[0::2][: n - closest]
