"""posenc_helpers.core against literal per-element loops, properties, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# Independent literal implementations, one element at a time: tests/literal.py
from literal import literal_alibi_slopes as literal_slopes
from literal import literal_pe, literal_rope

from posenc_helpers import (
    alibi_bias,
    alibi_slopes,
    frequencies,
    rope,
    rope_score,
    shift_matrix,
    sinusoidal,
    wavelengths,
)

# ---------------------------------------------------------------------------------------------
# Known values from the lessons
# ---------------------------------------------------------------------------------------------


def test_pos2_dim4_trace():
    np.testing.assert_allclose(sinusoidal(2, 4), [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)])
    assert sinusoidal(2, 4).round(4).tolist() == [0.9093, -0.4161, 0.02, 0.9998]


def test_frequencies_and_wavelengths_dim4():
    np.testing.assert_allclose(frequencies(4), [1.0, 0.01])
    np.testing.assert_allclose(wavelengths(4), [2 * math.pi, 200 * math.pi])


def test_odd_dim_ends_in_a_lone_sine():
    pe = sinusoidal(3.0, 5)
    assert pe.shape == (5,)
    assert pe[4] == pytest.approx(math.sin(3.0 / 10000 ** (4 / 5)))


def test_rope_score_depends_on_offset_only_lesson_values():
    assert rope_score([1, 0], [1, 0], 5, 3) == pytest.approx(math.cos(2))
    assert rope_score([1, 0], [1, 0], 9, 7) == pytest.approx(math.cos(2))
    assert round(float(rope_score([1, 0], [1, 0], 9, 7)), 4) == -0.4161


def test_rope_turns_counter_clockwise():
    a, b = rope([1.0, 0.0], 0.01)
    assert b > 0 and a < 1


def test_alibi_slopes_8_heads():
    np.testing.assert_allclose(alibi_slopes(8), [2.0**-j for j in range(1, 9)])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 64, 80, 96])
def test_alibi_slopes_match_reference(n):
    np.testing.assert_allclose(alibi_slopes(n), literal_slopes(n), rtol=1e-12)


def test_alibi_slopes_12_heads_are_not_the_naive_geometric_sequence():
    naive = [2 ** (-8 * (h + 1) / 12) for h in range(12)]
    assert not np.allclose(alibi_slopes(12), naive)
    np.testing.assert_allclose(alibi_slopes(12)[8:], [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5])


def test_alibi_bias_entries():
    bias = alibi_bias(6, 12)
    slopes = literal_slopes(12)
    assert bias.shape == (12, 6, 6)
    for h in range(12):
        for i in range(6):
            for j in range(6):
                assert bias[h, i, j] == pytest.approx(-slopes[h] * abs(i - j))
    assert not np.signbit(bias[:, range(6), range(6)]).any()  # a clean +0.0 diagonal


# ---------------------------------------------------------------------------------------------
# Against the literal loops: random dims (odd and even), large positions, batch shapes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_sinusoidal_matches_literal_loop(seed):
    rng = np.random.default_rng(seed)
    dim = int(rng.integers(1, 40))
    base = float(rng.choice([10000.0, 500.0, 1e6, 2.5]))
    pos = np.concatenate([rng.uniform(-50, 50, 5), [0.0, 1.0, 1e6, 123456.7]]).reshape(3, 3)
    got = sinusoidal(pos, dim, base)
    assert got.shape == (3, 3, dim)
    for idx in np.ndindex(pos.shape):
        np.testing.assert_allclose(got[idx], literal_pe(float(pos[idx]), dim, base), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_rope_matches_literal_loop(seed):
    rng = np.random.default_rng(100 + seed)
    dim = int(rng.integers(1, 33))
    x = rng.standard_normal((2, 3, dim))
    pos = rng.choice([0.0, 3.0, 17.5, 1e6], size=(2, 3))
    got = rope(x, pos)
    for idx in np.ndindex(pos.shape):
        np.testing.assert_allclose(got[idx], literal_rope(x[idx].tolist(), float(pos[idx])), rtol=1e-9, atol=1e-9)


def test_rope_broadcasts_one_vector_over_many_positions():
    x = np.array([0.3, -1.2, 2.0, 0.5])
    pos = np.arange(7)
    got = rope(x, pos)
    assert got.shape == (7, 4)
    for p in pos:
        np.testing.assert_allclose(got[p], literal_rope(x.tolist(), float(p)))


def test_rope_scalar_and_integer_inputs():
    np.testing.assert_allclose(rope([1, 0], np.int32(2)), [math.cos(2), math.sin(2)])
    assert sinusoidal(np.int64(2), np.int64(4)).shape == (4,)
    assert frequencies(np.uint8(6)).shape == (3,)


def test_rope_with_odd_dim_passes_last_element_through():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    got = rope(x, [1.0, 2.0])
    np.testing.assert_array_equal(got[:, 2], x[:, 2])


def test_rope_dim_one_is_identity():
    np.testing.assert_array_equal(rope([[2.5], [-1.0]], 7.0), [[2.5], [-1.0]])


def test_rope_takes_dim_from_the_vector():
    # The same first pair rotates by a different angle in a longer vector only for pairs k >= 1;
    # pair 1 of a D = 4 vector turns at 10000^(-2/4) = 0.01, of a D = 8 vector at 10000^(-2/8) = 0.1.
    r4 = rope([0, 0, 1, 0], 1.0)
    r8 = rope([0, 0, 1, 0, 0, 0, 0, 0], 1.0)
    assert r4[3] == pytest.approx(math.sin(0.01))
    assert r8[3] == pytest.approx(math.sin(0.1))


def test_shift_matrix_blocks_and_shift():
    T = shift_matrix(1, 4)
    np.testing.assert_allclose(T[2:, 2:], [[math.cos(0.01), math.sin(0.01)], [-math.sin(0.01), math.cos(0.01)]])
    np.testing.assert_allclose(T[:2, 2:], 0)
    np.testing.assert_allclose((T @ sinusoidal(2, 4))[2:], [math.sin(0.03), math.cos(0.03)])
    assert (T @ sinusoidal(2, 4))[2:].round(4).tolist() == [0.03, 0.9996]


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

finite = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False)
dims = st.integers(min_value=1, max_value=64)
even_dims = st.integers(min_value=1, max_value=32).map(lambda h: 2 * h)
bases = st.floats(min_value=1.5, max_value=1e6)


@st.composite
def vectors(draw, dim=None):
    dim = draw(dims) if dim is None else dim
    return np.array(draw(st.lists(st.floats(-100, 100), min_size=dim, max_size=dim)))


@settings(max_examples=60, deadline=None)
@given(x=vectors(), pos=finite, base=bases)
def test_rope_preserves_norm(x, pos, base):
    assert np.linalg.norm(rope(x, pos, base)) == pytest.approx(np.linalg.norm(x), rel=1e-9, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dim=dims, m=finite, n=finite, t=finite)
def test_rope_score_is_invariant_under_a_common_shift(data, dim, m, n, t):
    q = data.draw(vectors(dim))
    k = data.draw(vectors(dim))
    scale = 1 + np.linalg.norm(q) * np.linalg.norm(k)
    assert rope_score(q, k, m + t, n + t) == pytest.approx(rope_score(q, k, m, n), abs=1e-8 * scale)


@settings(max_examples=60, deadline=None)
@given(dim=even_dims, offset=finite, p=finite, base=bases)
def test_shift_matrix_is_a_rotation_that_shifts(dim, offset, p, base):
    T = shift_matrix(offset, dim, base)
    np.testing.assert_allclose(T @ T.T, np.eye(dim), atol=1e-12)
    assert np.linalg.det(T) == pytest.approx(1.0)
    np.testing.assert_allclose(T @ sinusoidal(p, dim, base), sinusoidal(p + offset, dim, base), atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(dim=dims, base=bases)
def test_pe_at_zero_alternates_zero_one(dim, base):
    expected = [0.0 if i % 2 == 0 else 1.0 for i in range(dim)]
    assert sinusoidal(0, dim, base).tolist() == expected


@settings(max_examples=40, deadline=None)
@given(dim=dims, pos=finite)
def test_sinusoidal_pairs_lie_on_the_unit_circle(dim, pos):
    pe = sinusoidal(pos, dim)
    pairs = pe[: 2 * (dim // 2)].reshape(-1, 2)
    np.testing.assert_allclose((pairs**2).sum(axis=1), 1.0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 200))
def test_alibi_slopes_are_distinct_and_in_range(n):
    slopes = alibi_slopes(n)
    assert slopes.shape == (n,)
    assert len(set(slopes.tolist())) == n
    assert ((slopes > 0) & (slopes < 1)).all()


# ---------------------------------------------------------------------------------------------
# Bad input: the exception type, and a message that names the argument and the value
# ---------------------------------------------------------------------------------------------

BAD_DIMS = [(0, ValueError), (-3, ValueError), (4.5, TypeError), (True, TypeError), ("4", TypeError), (None, TypeError)]


@pytest.mark.parametrize("dim, exc", BAD_DIMS)
@pytest.mark.parametrize("fn", [frequencies, wavelengths, lambda dim: sinusoidal(1, dim), lambda dim: shift_matrix(1, dim)])
def test_bad_dim(fn, dim, exc):
    with pytest.raises(exc, match=r"^dim must be a positive integer, got " + repr(dim).replace(".", r"\.")):
        fn(dim)


@pytest.mark.parametrize("base", [1, 1.0, 0.5, -10, float("inf"), float("nan")])
@pytest.mark.parametrize(
    "fn",
    [
        lambda b: frequencies(4, b),
        lambda b: sinusoidal(1, 4, b),
        lambda b: shift_matrix(1, 4, b),
        lambda b: rope([1.0, 0.0], 1, b),
        lambda b: rope_score([1.0, 0.0], [1.0, 0.0], 1, 2, b),
    ],
)
def test_bad_base(fn, base):
    with pytest.raises(ValueError, match=r"^base must be a finite number greater than 1, got "):
        fn(base)


def test_base_of_wrong_type():
    with pytest.raises(TypeError, match=r"^base must be a real number greater than 1, got '10000'"):
        frequencies(4, "10000")


@pytest.mark.parametrize("pos", [float("nan"), float("inf"), -float("inf"), [0.0, float("nan")]])
@pytest.mark.parametrize("fn", [lambda p: sinusoidal(p, 4), lambda p: rope([1.0, 0.0], p)])
def test_non_finite_pos(fn, pos):
    with pytest.raises(ValueError, match=r"^pos must be finite, got "):
        fn(pos)


@pytest.mark.parametrize("pos", ["2", None, [1, "a"], 1 + 2j])
def test_pos_of_wrong_type(pos):
    with pytest.raises(TypeError, match=r"^pos must be a number or an array of"):
        sinusoidal(pos, 4)


def test_non_finite_offset():
    with pytest.raises(ValueError, match=r"^offset must be finite, got nan"):
        shift_matrix(float("nan"), 4)


def test_odd_dim_shift_matrix_says_why():
    with pytest.raises(ValueError, match=r"dim must be even for a shift matrix, got 5: .*lone sine"):
        shift_matrix(1, 5)


@pytest.mark.parametrize("x", [[], np.zeros((3, 0))])
def test_rope_empty_last_axis(x):
    with pytest.raises(ValueError, match=r"^x must have a non-empty last axis, got shape"):
        rope(x, 1.0)


def test_rope_scalar_x():
    with pytest.raises(ValueError, match=r"^x must have a last axis"):
        rope(3.0, 1.0)


def test_rope_non_finite_x():
    with pytest.raises(ValueError, match=r"^x must be finite"):
        rope([1.0, float("nan")], 1.0)


def test_rope_pos_that_does_not_broadcast():
    with pytest.raises(ValueError, match=r"^pos of shape \(3,\) does not broadcast against x.shape\[:-1\] = \(4,\)"):
        rope(np.ones((4, 2)), [1.0, 2.0, 3.0])


def test_rope_score_mismatched_dims():
    with pytest.raises(ValueError, match=r"^q and k must have the same last axis, got q.shape=\(2,\) and k.shape=\(4,\)"):
        rope_score([1, 0], [1, 0, 0, 0], 1, 2)


def test_rope_score_positions_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"^q at m \(shapes \(2,\), \(3,\)\) and k at n \(shapes \(2,\), \(2,\)\)"):
        rope_score([1, 0], [1, 0], [1, 2, 3], [1, 2])


def test_rope_score_non_finite_positions():
    with pytest.raises(ValueError, match=r"^m must be finite"):
        rope_score([1, 0], [1, 0], float("nan"), 2)
    with pytest.raises(ValueError, match=r"^n must be finite"):
        rope_score([1, 0], [1, 0], 1, float("inf"))


@pytest.mark.parametrize("n, exc", [(0, ValueError), (-2, ValueError), (2.0, TypeError), (True, TypeError)])
def test_bad_head_count(n, exc):
    with pytest.raises(exc, match=r"^n_heads must be a positive integer, got "):
        alibi_slopes(n)


def test_bad_seq_len():
    with pytest.raises(ValueError, match=r"^seq_len must be a positive integer, got 0"):
        alibi_bias(0, 4)


def test_no_silent_nan_from_huge_base_or_pos():
    assert np.isfinite(sinusoidal(1e12, 64, 1e12)).all()
    assert np.isfinite(rope(np.ones(64), 1e12)).all()
