"""Speed of the math core, as ratios measured in one run on one machine.

    python benchmarks/bench_core.py          (or: make bench)

Each figure is a median over repeated runs; the ratios, not the absolute
times, are what carry from one machine to another. Targets (issue 2):

  (a) sinusoidal(arange(8192), 512) / numpy floor (angle table, one sin, one cos)   <= 1.5
  (b) literal per-element loop / sinusoidal                                         >= 50
  (c) rope on (8192, 128) / numpy rotate_half with full-width cos, sin tables      <= 1.0
"""

from __future__ import annotations

import math
import statistics
import sys
import time

import numpy as np

from posenc_helpers import rope, sinusoidal


def median_seconds(fn, repeats: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_floor(pos: np.ndarray, dim: int, base: float = 10000.0):
    """The least work any sinusoidal table needs: the angles, one sin, one cos."""
    omega = base ** (-np.arange(0, dim, 2) / dim)
    angle = pos[:, None] * omega
    return np.sin(angle), np.cos(angle)


def literal_loop(pos_values, dim: int, base: float = 10000.0) -> list[list[float]]:
    """PE straight from the formula, one element at a time."""
    rows = []
    for pos in pos_values:
        row = []
        for i in range(dim):
            k = i // 2
            angle = pos / base ** (2 * k / dim)
            row.append(math.sin(angle) if i % 2 == 0 else math.cos(angle))
        rows.append(row)
    return rows


def rotate_half_rope(x: np.ndarray, pos: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """The GPT-NeoX / Hugging Face layout: pairs (i, i + D/2), full-width cos and sin tables."""
    dim = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    freqs = pos[:, None] * inv_freq
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)
    half = dim // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def main() -> int:
    ok = True
    pos = np.arange(8192)
    dim = 512

    t_ours = median_seconds(lambda: sinusoidal(pos, dim), repeats=25)
    t_floor = median_seconds(lambda: numpy_floor(pos.astype(np.float64), dim), repeats=25)
    ratio_a = t_ours / t_floor
    ok &= ratio_a <= 1.5
    print(f"(a) sinusoidal(arange(8192), 512) / numpy floor      = {ratio_a:6.2f}   target <= 1.5   "
          f"({t_ours * 1e3:.1f} ms vs {t_floor * 1e3:.1f} ms)")

    small = np.arange(256)
    t_loop = median_seconds(lambda: literal_loop(small, dim), repeats=5, warmup=1)
    t_vec = median_seconds(lambda: sinusoidal(small, dim), repeats=25)
    ratio_b = t_loop / t_vec
    ok &= ratio_b >= 50
    print(f"(b) literal loop / sinusoidal (256 positions x 512)  = {ratio_b:6.0f}   target >= 50    "
          f"({t_loop * 1e3:.1f} ms vs {t_vec * 1e3:.2f} ms)")

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8192, 128))
    posf = np.arange(8192, dtype=np.float64)
    t_rope = median_seconds(lambda: rope(x, posf), repeats=25)
    t_half = median_seconds(lambda: rotate_half_rope(x, posf), repeats=25)
    ratio_c = t_rope / t_half
    ok &= ratio_c <= 1.0
    print(f"(c) rope (8192, 128) / numpy rotate_half             = {ratio_c:6.2f}   target <= 1.0   "
          f"({t_rope * 1e3:.1f} ms vs {t_half * 1e3:.1f} ms)")

    print("all three within target" if ok else "OUT OF TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
