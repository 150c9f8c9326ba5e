"""Literal loops for posenc_helpers.base_bound: Men et al.'s B_{m,θ}, one cosine at a time.

Plain Python floats and the math module; no numpy, nothing shared with the package.
"""

from __future__ import annotations

import math


def literal_thetas(base: float, head_dim: int) -> list[float]:
    """θ_i = base^(−2i/d) for i = 0 … d/2 − 1 (Men et al. 2024, §2.1)."""
    return [base ** (-2 * i / head_dim) for i in range(head_dim // 2)]


def literal_sum(thetas, m: float) -> float:
    """B_{m,θ} = Σ_i cos(m·θ_i) (their Eq. 9)."""
    total = 0.0
    for theta in thetas:
        total += math.cos(m * theta)
    return total


def literal_first_negative(thetas, context: int):
    """The first integer m = 0, 1, …, context with B_{m,θ} < 0, or None."""
    for m in range(context + 1):
        if literal_sum(thetas, m) < 0:
            return m
    return None


def literal_min_abs(thetas, context: int) -> float:
    """min over m = 0 … context of |B_{m,θ}|: how close the check comes to a tie."""
    return min(abs(literal_sum(thetas, m)) for m in range(context + 1))
