"""T5 buckets and multi-axis RoPE, against transcriptions of T5's and Qwen2-VL's code, plus properties."""

from __future__ import annotations

import literal_shipped as lit
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from posenc_helpers import rope
from posenc_helpers.conventions import rope_half_split
from posenc_helpers.multiaxis import axial_rope_2d, mrope, mrope_angles
from posenc_helpers.relative import t5_bucket

bucket_settings = st.sampled_from([(32, 128), (32, 64), (16, 128), (64, 256), (8, 20), (128, 1000)])


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets, max_distance", [(32, 128), (16, 64), (64, 512), (10, 50)])
def test_t5_matches_transcription(bidirectional, num_buckets, max_distance):
    rel = np.arange(-3000, 3001)
    got = t5_bucket(rel, bidirectional, num_buckets, max_distance)
    expected = [lit.t5_relative_position_bucket(int(d), bidirectional, num_buckets, max_distance) for d in rel]
    np.testing.assert_array_equal(got, expected)


def test_t5_float32_like_torch_gives_the_same_buckets():
    # T5's torch code takes the log in float32; over these distances that never changes a bucket
    d = np.arange(8, 5000, dtype=np.float32)
    large = 8 + (np.log(d / np.float32(8)) / np.float32(np.log(128 / 8)) * np.float32(8)).astype(np.int64)
    large = np.minimum(large, 15)
    np.testing.assert_array_equal(large, t5_bucket(-np.arange(8, 5000)))


@settings(max_examples=60, deadline=None)
@given(setting=bucket_settings, bidirectional=st.booleans(), data=st.data())
def test_t5_monotone_in_distance_and_capped(setting, bidirectional, data):
    num_buckets, max_distance = setting
    # distances up to 2·max_distance: most pairs fall below the cap, where the buckets still change
    a, b = (data.draw(st.integers(0, 2 * max_distance), label=side) for side in ("a", "b"))
    lo, hi = min(a, b), max(a, b)
    per_side = num_buckets // 2 if bidirectional else num_buckets
    # past keys (n − m ≤ 0): bucket grows with the distance and stays below the cap
    assert t5_bucket(-lo, bidirectional, num_buckets, max_distance) <= t5_bucket(-hi, bidirectional, num_buckets, max_distance)
    assert 0 <= t5_bucket(-hi, bidirectional, num_buckets, max_distance) <= per_side - 1
    if bidirectional and lo > 0:
        # future keys use the upper half, also monotone and capped at num_buckets − 1
        assert per_side <= t5_bucket(lo, True, num_buckets, max_distance) <= t5_bucket(hi, True, num_buckets, max_distance)
        assert t5_bucket(hi, True, num_buckets, max_distance) <= num_buckets - 1
    if not bidirectional:
        assert t5_bucket(hi, False, num_buckets, max_distance) == 0


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets, max_distance", [(32, 128), (32, 64), (16, 128), (64, 256), (8, 20), (128, 1000)])
def test_t5_every_step_is_monotone_and_every_bucket_below_the_cap_is_used(bidirectional, num_buckets, max_distance):
    # every distance 0 … 3·max_distance, not a sample: one non-monotone step anywhere fails
    d = np.arange(0, 3 * max_distance + 1)
    per_side = num_buckets // 2 if bidirectional else num_buckets
    past = t5_bucket(-d, bidirectional, num_buckets, max_distance)
    assert np.all(np.diff(past) >= 0) and past[0] == 0 and past[-1] == per_side - 1
    # T5 skips no bucket on the past side: 0 … per_side − 1 each occur, in order
    assert np.array_equal(np.unique(past), np.arange(per_side))
    if bidirectional:
        future = t5_bucket(d[1:], True, num_buckets, max_distance)
        assert np.all(np.diff(future) >= 0) and future[0] == per_side + 1 and future[-1] == num_buckets - 1


@settings(max_examples=40, deadline=None)
@given(setting=bucket_settings, extra=st.integers(0, 10**6))
def test_t5_everything_past_max_distance_shares_the_last_bucket(setting, extra):
    num_buckets, max_distance = setting
    assert t5_bucket(-(max_distance + extra), True, num_buckets, max_distance) == num_buckets // 2 - 1
    assert t5_bucket(max_distance + extra, True, num_buckets, max_distance) == num_buckets - 1
    assert t5_bucket(-(max_distance + extra), False, num_buckets, max_distance) == num_buckets - 1


def test_t5_exact_small_distances_and_shapes():
    assert list(t5_bucket(np.arange(-7, 0))) == [7, 6, 5, 4, 3, 2, 1]
    assert t5_bucket(np.zeros((2, 3), dtype=int)).shape == (2, 3)
    assert isinstance(t5_bucket(3), int)


@pytest.mark.parametrize(
    "kwargs, exc, text",
    [
        ({"relative_position": 1.5}, TypeError, "relative_position must be an integer"),
        ({"relative_position": 1, "num_buckets": 2}, ValueError, "num_buckets must leave at least 2 buckets"),
        ({"relative_position": 1, "max_distance": 8}, ValueError, "max_distance must exceed the 8 exact buckets"),
        ({"relative_position": 1, "bidirectional": 1}, TypeError, "bidirectional must be True or False"),
        ({"relative_position": 1, "num_buckets": 0}, ValueError, "num_buckets must be a positive integer"),
    ],
)
def test_t5_bad_input(kwargs, exc, text):
    with pytest.raises(exc, match=text):
        t5_bucket(**kwargs)


# --- multi-axis RoPE ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("section", [[16, 24, 24], [8, 4, 4], [1, 1, 30]])
def test_mrope_matches_qwen2_vl_code(section):
    dim = 2 * sum(section)
    rng = np.random.default_rng(sum(section))
    x = rng.standard_normal(dim)
    for t, h, w in [(0, 0, 0), (3, 7, 11), (40.0, 2.0, 5.0)]:
        np.testing.assert_allclose(mrope(x, t, h, w, section), lit.qwen2_vl_mrope(x.tolist(), t, h, w, section),
                                   atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(p=st.floats(-1e4, 1e4, allow_nan=False), data=st.data())
def test_mrope_with_equal_ids_is_half_split_rope(p, data):
    section = data.draw(st.sampled_from([[16, 24, 24], [2, 3, 3], [1, 1, 1]]))
    dim = 2 * sum(section)
    x = data.draw(arrays(np.float64, dim, elements=st.floats(-10, 10)))
    # exactly: every pair turns by p·ω_k, the same angles rope_half_split uses
    np.testing.assert_array_equal(mrope(x, p, p, p, section), rope_half_split(x, p))


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_mrope_score_depends_on_id_differences(data):
    ints = st.integers(-50, 50)
    a, b, shift = [tuple(data.draw(ints) for _ in range(3)) for _ in range(3)]
    q = data.draw(arrays(np.float64, 16, elements=st.floats(-3, 3)))
    k = data.draw(arrays(np.float64, 16, elements=st.floats(-3, 3)))
    section = [2, 3, 3]
    s1 = mrope(q, *a, section) @ mrope(k, *b, section)
    moved = [tuple(u + d for u, d in zip(pt, shift, strict=True)) for pt in (a, b)]
    s2 = mrope(q, *moved[0], section) @ mrope(k, *moved[1], section)
    assert np.isclose(s1, s2, rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_axial_2d_score_depends_only_on_row_and_column_differences(data):
    ints = st.integers(-64, 64)
    r1, c1, r2, c2, dr, dc = (data.draw(ints) for _ in range(6))
    dim = data.draw(st.sampled_from([4, 8, 16, 32]))
    q = data.draw(arrays(np.float64, dim, elements=st.floats(-3, 3)))
    k = data.draw(arrays(np.float64, dim, elements=st.floats(-3, 3)))
    s1 = axial_rope_2d(q, r1, c1) @ axial_rope_2d(k, r2, c2)
    s2 = axial_rope_2d(q, r1 + dr, c1 + dc) @ axial_rope_2d(k, r2 + dr, c2 + dc)
    assert np.isclose(s1, s2, rtol=1e-9, atol=1e-9)


def test_axial_halves_turn_by_their_own_axis():
    x = np.random.default_rng(5).standard_normal(8)
    y = axial_rope_2d(x, 3.0, 0.0)
    np.testing.assert_array_equal(y[4:], x[4:])
    assert not np.allclose(y[:4], x[:4])
    # each half is a D/2-wide RoPE: ω_k = base^(−2k/(D/2))
    np.testing.assert_allclose(y[:4], rope(x[:4], 3.0), atol=1e-15)
    np.testing.assert_allclose(axial_rope_2d(x, 0.0, 3.0)[4:], rope(x[4:], 3.0), atol=1e-15)


def test_mrope_angles_split_pairs_by_section():
    theta = mrope_angles(1.0, 10.0, 100.0, 12, [1, 2, 3], base=10000.0)
    omega = 10000.0 ** (-2 * np.arange(6) / 12)
    np.testing.assert_allclose(theta, omega * [1, 10, 10, 100, 100, 100])


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda: mrope(np.ones(8), 0, 0, 0, [1, 1, 1]), r"mrope_section must add up to the number of pairs D/2 = 4"),
        (lambda: mrope(np.ones(8), 0, 0, 0, [2, 2]), "mrope_section must list three pair counts"),
        (lambda: mrope(np.ones(7), 0, 0, 0, [1, 1, 1]), "dim must be even"),
        (lambda: axial_rope_2d(np.ones(6), 0, 0), "multiple of 4"),
        (lambda: mrope(np.ones((2, 8)), np.zeros(3), 0, 0, [2, 1, 1]), "do not broadcast"),
    ],
)
def test_multiaxis_bad_input(call, text):
    with pytest.raises(ValueError, match=text):
        call()
