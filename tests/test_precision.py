"""posenc_helpers.precision against a literal round-to-nearest-even, properties, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import rope, rope_score
from posenc_helpers.precision import (
    dtype_of,
    rope_angles,
    rope_score_lowp,
    rope_tables,
    rope_with_tables,
    round_to,
)

#: Significant bits (stored mantissa + the implicit leading 1) of each format.
SIGNIFICANT_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def literal_round(x: float, dtype: str) -> float:
    """Round x to `p` significant bits, ties to even, written from the definition (normal numbers only)."""
    if x == 0.0:
        return 0.0
    p = SIGNIFICANT_BITS[dtype]
    m, e = math.frexp(x)  # x = m·2^e with 0.5 <= |m| < 1
    # Python's round() on a float rounds half to even
    return math.ldexp(round(math.ldexp(m, p)), e - p)


def literal_angles(pos: float, dim: int, base: float, dtype: str) -> list[float]:
    out = []
    for k in range(dim // 2):
        omega = base ** (-2 * k / dim)
        out.append(literal_round(literal_round(pos, dtype) * literal_round(omega, dtype), dtype))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@given(x=st.floats(1e-3, 6e4))
@settings(max_examples=150, deadline=None)
def test_round_to_matches_literal(dtype, x):
    assert float(round_to(x, dtype)) == literal_round(x, dtype)


def test_integers_near_the_limits():
    # 2^(p) is the last point where every integer is exact: bf16 256, fp16 2048, fp32 16,777,216
    assert round_to([256, 257, 258, 259], "bfloat16").tolist() == [256, 256, 258, 260]
    assert round_to([2048, 2049, 2050], "float16").tolist() == [2048, 2048, 2050]
    assert round_to([2**24, 2**24 + 1], "float32").tolist() == [2**24, 2**24]
    assert np.array_equal(round_to(np.arange(257), "bfloat16"), np.arange(257))
    assert float(round_to(70000, "float16")) == math.inf  # float16 stops at 65504


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("pos", [0, 1, 7, 199, 257, 1000, 4097, 30001])
def test_rope_angles_match_literal(dtype, pos):
    got = rope_angles(pos, 16, 10000.0, dtype)
    np.testing.assert_array_equal(got, literal_angles(pos, 16, 10000.0, dtype))


def test_rope_angles_shape_and_float64():
    pos = np.arange(6).reshape(2, 3)
    out = rope_angles(pos, 8, dtype="bfloat16")
    assert out.shape == (2, 3, 4) and out.dtype == np.float64
    np.testing.assert_array_equal(out[1, 2], literal_angles(5, 8, 10000.0, "bfloat16"))


@pytest.mark.parametrize("angle_dtype, table_dtype", [("bfloat16", "bfloat16"), ("float32", "bfloat16"), ("float16", "float16")])
def test_rope_tables_match_literal(angle_dtype, table_dtype):
    for pos in (3, 257, 5000):
        cos, sin = rope_tables(pos, 8, angle_dtype=angle_dtype, table_dtype=table_dtype)
        angles = literal_angles(pos, 8, 10000.0, angle_dtype)
        assert cos.tolist() == [literal_round(math.cos(a), table_dtype) for a in angles]
        assert sin.tolist() == [literal_round(math.sin(a), table_dtype) for a in angles]


@given(
    x=st.lists(st.floats(-10, 10), min_size=2, max_size=16).filter(lambda v: len(v) % 2 == 0),
    pos=st.floats(0, 1e5),
)
@settings(max_examples=60, deadline=None)
def test_float64_tables_reproduce_rope(x, pos):
    cos, sin = rope_tables(pos, len(x), angle_dtype="float64", table_dtype="float64")
    np.testing.assert_allclose(rope_with_tables(x, cos, sin), rope(x, pos), rtol=1e-9, atol=1e-9)


def test_float64_score_matches_rope_score():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal(32), rng.standard_normal(32)
    m = np.array([5.0, 300.0, 20000.0])
    got = rope_score_lowp(q, k, m, m - 3, angle_dtype="float64", table_dtype="float64")
    np.testing.assert_allclose(got, [rope_score(q, k, mi, mi - 3) for mi in m], rtol=1e-9)


def test_bf16_positions_256_and_257_rotate_identically():
    x = np.random.default_rng(2).standard_normal(64)
    t256 = rope_tables(256, 64, angle_dtype="bfloat16")
    t257 = rope_tables(257, 64, angle_dtype="bfloat16")
    assert np.array_equal(rope_with_tables(x, *t256), rope_with_tables(x, *t257))
    f256 = rope_tables(256, 64, angle_dtype="float32")
    f257 = rope_tables(257, 64, angle_dtype="float32")
    assert not np.array_equal(rope_with_tables(x, *f256), rope_with_tables(x, *f257))


def test_fp32_angles_stay_within_the_rounding_bound():
    # float32 angles are off by at most Δθ_k = pos·ω_k·2^-23 (ω_k and the product each rounded once);
    # bf16 tables then add at most u = 2^-8 to each cos/sin. So each entry of a pair's rotation is off by
    # at most u + Δθ_k, the rotation by at most e_k = 2(u + Δθ_k) in norm, and the score by at most
    # Σ_k |q_k||k_k|·(e_k(m) + e_k(n) + e_k(m)·e_k(n)), here with m, n ≤ 32768.
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal(64), rng.standard_normal(64)
    u = 2.0**-8
    omega = 10000.0 ** (-np.arange(32) / 32)
    e = 2 * (u + 32768 * omega * 2.0**-23)
    pair_norms = np.hypot(q[0::2], q[1::2]) * np.hypot(k[0::2], k[1::2])
    bound = float(np.sum(pair_norms * (2 * e + e * e)))
    m = np.arange(4, 32768, 97, dtype=float)
    exact = rope_score(q, k, 4, 0)
    err32 = np.abs(rope_score_lowp(q, k, m, m - 4, angle_dtype="float32") - exact)
    err16 = np.abs(rope_score_lowp(q, k, m, m - 4, angle_dtype="bfloat16") - exact)
    assert err32.max() <= bound
    assert err16.max() > 2 * bound


@pytest.mark.parametrize("name", ["float8", "bf16", "", None, np.float32])
def test_bad_dtype(name):
    with pytest.raises(ValueError, match=r"dtype must be one of 'float64', 'float32', 'float16', 'bfloat16', got"):
        dtype_of(name)


def test_bad_arguments():
    with pytest.raises(ValueError, match="dim must be even .*got 5"):
        rope_angles(3, 5)
    with pytest.raises(ValueError, match="pos must be finite"):
        rope_angles(np.nan, 4)
    with pytest.raises(TypeError, match="x must be a number or an array"):
        round_to("257", "bfloat16")
    with pytest.raises(ValueError, match=r"cos and sin must have the same shape ending in D/2 = 2"):
        rope_with_tables([1.0, 0.0, 1.0, 0.0], [1.0], [0.0])
    with pytest.raises(ValueError, match="x must have an even last axis"):
        rope_with_tables([1.0, 0.0, 1.0], [1.0], [0.0])
    with pytest.raises(ValueError, match="q and k must have the same last axis"):
        rope_score_lowp([1.0, 0.0], [1.0, 0.0, 0.0, 0.0], 1, 0)
