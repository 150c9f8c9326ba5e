"""Partial rotary: rotary_dim on rope, rope_half_split and rope_complex, checked against GPT-NeoX's and GPT-J's code."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from literal import literal_rope
from literal_shipped import gptj_partial, neox_partial

from posenc_helpers import rope, rope_complex, rope_half_split
from posenc_helpers.conventions import interleaved_to_half_split

finite = st.floats(-10, 10, allow_nan=False)


@pytest.mark.parametrize("dim, r", [(8, 2), (8, 4), (10, 6), (96, 24), (256, 64), (9, 4)])
@pytest.mark.parametrize("pos", [0.0, 1.0, 7.5, 2048.0])
def test_neox_layout_matches_gpt_neox_code(dim, r, pos):
    x = np.random.default_rng(dim * 31 + r).standard_normal(dim)
    np.testing.assert_allclose(rope_half_split(x, pos, rotary_dim=r), neox_partial(x.tolist(), pos, r), atol=1e-12)


@pytest.mark.parametrize("dim, r", [(8, 2), (8, 4), (256, 64), (11, 6)])
@pytest.mark.parametrize("pos", [0.0, 3.0, 1000.0])
def test_gptj_layout_matches_gptj_code(dim, r, pos):
    x = np.random.default_rng(dim * 7 + r).standard_normal(dim)
    expected = gptj_partial(x.tolist(), pos, r)
    np.testing.assert_allclose(rope(x, pos, rotary_dim=r), expected, atol=1e-12)
    np.testing.assert_allclose(rope_complex(x, pos, rotary_dim=r), expected, atol=1e-12)


def test_partial_rotary_uses_the_rotated_width_for_omega():
    # ω_k = base^(−2k/r): the rotated part of a 256-wide head with r = 64 is a 64-wide RoPE
    x = np.random.default_rng(0).standard_normal(256)
    np.testing.assert_allclose(rope(x, 5.0, rotary_dim=64)[:64], literal_rope(x[:64].tolist(), 5.0), atol=1e-12)
    # and not a 256-wide one: pair 1 would turn by 5·10000^(−2/256) instead of 5·10000^(−2/64)
    assert not np.allclose(rope(x, 5.0, rotary_dim=64)[:64], rope(x, 5.0)[:64])


def test_full_width_rotary_dim_equals_default():
    x = np.random.default_rng(1).standard_normal((3, 12))
    pos = np.array([0.0, 4.0, 9.0])
    np.testing.assert_array_equal(rope(x, pos, rotary_dim=12), rope(x, pos))
    np.testing.assert_array_equal(rope_half_split(x, pos, rotary_dim=12), rope_half_split(x, pos))
    np.testing.assert_array_equal(rope_complex(x, pos, rotary_dim=12), rope_complex(x, pos))


@settings(max_examples=60, deadline=None)
@given(
    dim=st.integers(2, 40), data=st.data(), pos=st.floats(-1e4, 1e4, allow_nan=False)
)
def test_tail_untouched_and_norm_kept(dim, data, pos):
    r = data.draw(st.sampled_from(list(range(2, dim + 1, 2))))
    x = data.draw(arrays(np.float64, dim, elements=finite))
    for f in (rope, rope_half_split, rope_complex):
        y = f(x, pos, rotary_dim=r)
        # the tail passes through exactly
        np.testing.assert_array_equal(y[r:], x[r:])
        # a rotation keeps the length of the rotated part
        assert np.isclose(np.linalg.norm(y[:r]), np.linalg.norm(x[:r]), rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), m=st.integers(-500, 500), n=st.integers(-500, 500), shift=st.integers(-500, 500))
def test_partial_score_depends_on_distance_only(data, m, n, shift):
    dim = data.draw(st.sampled_from([8, 12, 32]))
    r = data.draw(st.sampled_from(list(range(2, dim + 1, 2))))
    q = data.draw(arrays(np.float64, dim, elements=finite))
    k = data.draw(arrays(np.float64, dim, elements=finite))
    for f in (rope, rope_half_split):
        a = f(q, m, rotary_dim=r) @ f(k, n, rotary_dim=r)
        b = f(q, m + shift, rotary_dim=r) @ f(k, n + shift, rotary_dim=r)
        assert np.isclose(a, b, rtol=1e-7, atol=1e-6)


def test_layouts_are_one_permutation_of_the_rotated_part():
    # GPT-NeoX's partial layout = P applied to the first r dims of GPT-J's
    x = np.random.default_rng(2).standard_normal(10)
    r = 6
    gptj = rope(x, 3.0, rotary_dim=r)
    x_neox = np.concatenate([interleaved_to_half_split(x[:r]), x[r:]])
    neox = rope_half_split(x_neox, 3.0, rotary_dim=r)
    np.testing.assert_allclose(neox, np.concatenate([interleaved_to_half_split(gptj[:r]), gptj[r:]]), atol=1e-12)


@pytest.mark.parametrize("func", [rope, rope_half_split, rope_complex])
@pytest.mark.parametrize("r", [3, 0, -2, 10, 12])
def test_bad_rotary_dim_is_named_with_value_and_d(func, r):
    message = rf"rotary_dim must be an even integer with 2 <= rotary_dim <= D, got rotary_dim={r} with D = 8"
    with pytest.raises(ValueError, match=message):
        func(np.ones(8), 1.0, rotary_dim=r)


@pytest.mark.parametrize("r", [4.0, "4", True])
def test_rotary_dim_type(r):
    with pytest.raises(TypeError, match="rotary_dim must be an even integer"):
        rope(np.ones(8), 1.0, rotary_dim=r)


def test_half_split_with_rotary_dim_accepts_odd_head_but_not_without():
    x = np.arange(7.0)
    assert rope_half_split(x, 1.0, rotary_dim=4).shape == (7,)
    with pytest.raises(ValueError, match="even last axis"):
        rope_half_split(x, 1.0)


def test_rotary_dim_broadcasts_positions():
    x = np.random.default_rng(3).standard_normal((4, 1, 10))
    pos = np.arange(5.0)
    y = rope_half_split(x, pos, rotary_dim=4)
    assert y.shape == (4, 5, 10)
    np.testing.assert_array_equal(y[..., 4:], np.broadcast_to(x[..., 4:], (4, 5, 6)))
    np.testing.assert_allclose(y[2, 3], neox_partial(x[2, 0].tolist(), 3.0, 4), atol=1e-12)
