"""viz.rotary (notebook 04): RoPE's turning arrows and score, checked against the rotation written out in tests/literal.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal import literal_rope as rotate_literal
from matplotlib.figure import Figure

from posenc_helpers.viz import new_figure
from posenc_helpers.viz.rotary import (
    DEMOS,
    FIGURES,
    draw_rope_pair,
    draw_score_curve,
    make_rope_long_term_decay,
    pair_score,
    plot_rope_decay,
    rope_decay_bound,
    rope_demo,
    rope_readout,
    rope_score_bound,
    update_rope_pair,
    update_score_curve,
)


def score_literal(q, k, m, n, base=10000.0) -> float:
    rq, rk = rotate_literal(q, m, base), rotate_literal(k, n, base)
    return sum(a * b for a, b in zip(rq, rk, strict=True))


def pair_score_literal(q, k, m, n, pair, base=10000.0) -> float:
    rq, rk = rotate_literal(q, m, base), rotate_literal(k, n, base)
    return rq[2 * pair] * rk[2 * pair] + rq[2 * pair + 1] * rk[2 * pair + 1]


coords = st.floats(-3, 3, allow_nan=False)
positions = st.integers(0, 5000)


@settings(max_examples=50, deadline=None)
@given(st.lists(coords, min_size=4, max_size=4), st.lists(coords, min_size=4, max_size=4), positions, positions)
def test_pair_score_matches_the_literal_rotation_and_the_closed_form(q, k, m, n):
    total = 0.0
    for pair in range(2):
        got = pair_score(q, k, m, n, pair)
        assert math.isclose(got, pair_score_literal(q, k, m, n, pair), abs_tol=1e-9)
        # (q·k) cos(ωΔ) + (q_a k_b − q_b k_a) sin(ωΔ), Δ = m − n: a function of the distance only
        w = 1.0 / 10000 ** (2 * pair / 4)
        qa, qb, ka, kb = q[2 * pair], q[2 * pair + 1], k[2 * pair], k[2 * pair + 1]
        closed = (qa * ka + qb * kb) * math.cos(w * (m - n)) + (qa * kb - qb * ka) * math.sin(w * (m - n))
        assert math.isclose(got, closed, abs_tol=1e-9)
        total += got
    assert math.isclose(total, score_literal(q, k, m, n), abs_tol=1e-9)


def test_pair_score_rejects_bad_arguments():
    with pytest.raises(ValueError, match="same length"):
        pair_score([1, 0], [1, 0, 0, 1], 1, 0, 0)
    with pytest.raises(ValueError, match="pair must be a full pair index"):
        pair_score([1, 0, 1], [1, 0, 1], 1, 0, 1)  # D = 3: the last element has no partner


@settings(max_examples=25, deadline=None)
@given(st.lists(coords, min_size=4, max_size=4), st.lists(coords, min_size=4, max_size=4), positions, positions,
       st.sampled_from([0, 1]))
def test_arrows_point_at_the_literally_rotated_pairs(q, k, m, n, pair):
    fig, ax = new_figure()
    h = draw_rope_pair(ax, q, k, 0, 0, pair=pair)
    update_rope_pair(h, m, n)
    rq, rk = rotate_literal(q, m), rotate_literal(k, n)
    np.testing.assert_allclose(h["q_arrow"].get_xydata(), [[0, 0], rq[2 * pair : 2 * pair + 2]], atol=1e-9)
    np.testing.assert_allclose(h["k_arrow"].get_xydata(), [[0, 0], rk[2 * pair : 2 * pair + 2]], atol=1e-9)


def test_angle_arc_runs_from_the_key_to_the_query():
    fig, ax = new_figure()
    h = draw_rope_pair(ax, [1, 0], [1, 0], m=5, n=3)
    arc = h["angle"].get_xydata()
    # from k's direction (angle 3) to q's (angle 5): a turn of +2 rad
    assert abs(math.remainder(math.atan2(arc[0][1], arc[0][0]) - 3.0, 2 * math.pi)) < 1e-9
    assert abs(math.remainder(math.atan2(arc[-1][1], arc[-1][0]) - 5.0, 2 * math.pi)) < 1e-9
    sweep = np.diff(np.unwrap(np.arctan2(arc[:, 1], arc[:, 0]))).sum()
    assert math.isclose(sweep, 2.0, abs_tol=1e-9)


def test_score_curve_is_the_literal_score_against_distance():
    q, k = [0.3, -1.2, 0.8, 0.5], [1.1, 0.4, -0.6, 0.9]
    fig, ax = new_figure()
    h = draw_score_curve(ax, q, k, max_distance=20)
    x, y = h["curve"].get_data()
    for i in range(0, len(x), 17):
        assert math.isclose(y[i], score_literal(q, k, x[i], 0), abs_tol=1e-9)
    update_score_curve(h, q, k, m=40, n=33)
    np.testing.assert_allclose(h["marker"].get_xydata(), [[7, score_literal(q, k, 40, 33)]], atol=1e-9)
    assert "(tokens)" in ax.get_xlabel() and ax.get_title()
    assert ax.get_ylabel().startswith("score") and "unitless" not in ax.get_ylabel()


def test_readout_gives_the_total_and_each_pair():
    html = rope_readout([1, 0, 1, 0], [1, 0, 1, 0], 9, 7)
    assert f"score = {math.cos(2) + math.cos(0.02):.4f}" in html
    assert f"<td>{math.cos(2):.4f}</td>" in html and f"<td>{math.cos(0.02):.4f}</td>" in html


def test_readout_names_the_shifted_positions():
    # sliders at m = 5, n = 3 with shift 4: the vectors sit at 9 and 7
    html = rope_readout([1, 0, 1, 0], [1, 0, 1, 0], 5, 3, shift=4)
    assert "query at m + shift = 9, key at n + shift = 7, m − n = 2:" in html
    assert f"score = {math.cos(2) + math.cos(0.02):.4f}" in html
    # pair 1 (ω = 10000^(−2/4) = 0.01): q turns 9·0.01, k turns 7·0.01, the difference 2·0.01
    assert "<td>0.0900</td><td>0.0700</td><td>0.0200</td>" in html


# --- the slider demo --------------------------------------------------------------------------


def test_demo_arrows_and_marker_follow_m_and_n():
    demo = rope_demo()
    assert demo.values == {"m": 5, "n": 3, "shift": 0}
    for m, n in [(5, 3), (12, 40), (60, 0)]:
        demo.set_values(m=m, n=n)
        for pair, h in enumerate(demo.handles["pairs"]):
            rq, rk = rotate_literal([1, 0, 1, 0], m), rotate_literal([1, 0, 1, 0], n)
            np.testing.assert_allclose(h["q_arrow"].get_xydata()[1], rq[2 * pair : 2 * pair + 2], atol=1e-12)
            np.testing.assert_allclose(h["k_arrow"].get_xydata()[1], rk[2 * pair : 2 * pair + 2], atol=1e-12)
        # q = k = (1, 0, 1, 0): score = cos(m − n) + cos(0.01·(m − n))
        expected = math.cos(m - n) + math.cos(0.01 * (m - n))
        np.testing.assert_allclose(demo.handles["curve"]["marker"].get_xydata(), [[m - n, expected]], atol=1e-12)
        assert f"score = {expected:.4f}" in demo.readout.value


def test_shifting_both_turns_the_arrows_but_keeps_the_score():
    demo = rope_demo()
    marker_before = demo.handles["curve"]["marker"].get_xydata().copy()
    score_before = demo.readout.value.split("score = ")[1].split("<")[0]
    tip_before = demo.handles["pairs"][0]["q_arrow"].get_xydata()[1].copy()
    frame_before = demo.image.value
    for shift in (4, 57, 300):
        demo.controls["shift"].value = shift
        # the query now sits at 5 + shift and the key at 3 + shift
        rq = rotate_literal([1, 0, 1, 0], 5 + shift)
        np.testing.assert_allclose(demo.handles["pairs"][1]["q_arrow"].get_xydata()[1], rq[2:4], atol=1e-12)
        assert not np.allclose(demo.handles["pairs"][0]["q_arrow"].get_xydata()[1], tip_before)
        np.testing.assert_allclose(demo.handles["curve"]["marker"].get_xydata(), marker_before, atol=1e-12)
        assert demo.readout.value.split("score = ")[1].split("<")[0] == score_before == f"{math.cos(2) + math.cos(0.02):.4f}"
        assert f"query at m + shift = {5 + shift}, key at n + shift = {3 + shift}, m − n = 2:" in demo.readout.value
        assert demo.image.value != frame_before


def test_demo_with_other_vectors_and_a_raising_update():
    q, k = [0.6, 0.8, -1.0, 0.0, 0.2, 0.1], [0.0, 1.0, 0.5, 0.5, 1.0, -1.0]
    demo = rope_demo(m=10, n=2, q=q, k=k)
    assert len(demo.handles["pairs"]) == 2  # at most two pairs are drawn
    assert f"score = {score_literal(q, k, 10, 2):.4f}" in demo.readout.value

    def broken(handles, **values):
        raise RuntimeError("broken update")

    demo.update_fn = broken
    with pytest.raises(RuntimeError, match="broken update"):
        demo.controls["m"].value = 11


def test_demo_rejects_mismatched_vectors():
    with pytest.raises(ValueError, match="same length"):
        rope_demo(q=[1, 0], k=[1, 0, 0, 1])


def test_demo_controls_say_what_they_mean():
    demo = rope_demo()
    assert demo.controls["m"].description == "m (query position, before shift)"
    assert demo.controls["n"].description == "n (key position, before shift)"
    assert demo.controls["shift"].description == "shift (added to m and n)"
    # titles, axis labels, font sizes and colormaps: tests/test_accessibility.py, for every demo


def test_registered_figure_and_demo():
    assert set(FIGURES) == {"04-rope-pair-rotation", "04-rope-long-term-decay"}
    fig = FIGURES["04-rope-pair-rotation"]()
    assert isinstance(fig, Figure)
    titles = [ax.get_title() for ax in fig.axes]
    # both panels give the seed's score cos 2 = −0.4161
    assert all(f"{math.cos(2):.4f}" in t for t in titles) and len(titles) == 2
    assert DEMOS == {"rope": rope_demo}


# --- RoPE's long-term decay: RoFormer's bound, recomputed with plain loops ------------------------------


def decay_bound_literal(delta, dim, base=10000.0) -> float:
    """(1/(D/2)) Σ_{j=1}^{D/2} |S_j|, S_j = Σ_{i<j} (cos(Δω_i), sin(Δω_i)), one pair at a time."""
    total, re, im = 0.0, 0.0, 0.0
    for i in range(dim // 2):
        w = base ** (-2 * i / dim)
        re, im = re + math.cos(delta * w), im + math.sin(delta * w)
        total += math.hypot(re, im)
    return total / (dim // 2)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([2, 4, 8, 16, 64]), st.floats(0, 3000, allow_nan=False))
def test_decay_bound_matches_the_literal_sums(dim, delta):
    assert math.isclose(rope_decay_bound([delta], dim)[0], decay_bound_literal(delta, dim), rel_tol=1e-9, abs_tol=1e-9)


def test_decay_bound_starts_at_the_mean_of_1_to_D_over_2():
    # Δ = 0: every term is 1, |S_j| = j, and the mean of 1 … D/2 is (D/2 + 1)/2
    for dim in (2, 4, 128):
        assert rope_decay_bound([0], dim)[0] == (dim // 2 + 1) / 2


@settings(max_examples=30, deadline=None)
@given(st.lists(coords, min_size=8, max_size=8), st.lists(coords, min_size=8, max_size=8), st.integers(-2000, 2000))
def test_every_rope_score_lies_under_its_bound(q, k, delta):
    bound = rope_score_bound(q, k, [delta])[0]
    assert abs(score_literal(q, k, delta, 0)) <= bound + 1e-9


def score_bound_literal(q, k, delta, base=10000.0) -> float:
    """max_i |h_{i+1} − h_i| (with h_{D/2} = 0) times Σ_j |S_j|, with h_i = q̃_i·conj(k̃_i), in plain loops."""
    half = len(q) // 2
    h = [complex(q[2 * i], q[2 * i + 1]) * complex(k[2 * i], k[2 * i + 1]).conjugate() for i in range(half)] + [0j]
    step = max(abs(h[i + 1] - h[i]) for i in range(half))
    return step * decay_bound_literal(delta, len(q), base) * half


@settings(max_examples=30, deadline=None)
@given(
    st.lists(coords, min_size=8, max_size=8),
    st.lists(coords, min_size=8, max_size=8),
    st.floats(-2000, 2000, allow_nan=False),
)
def test_score_bound_matches_the_literal_formula(q, k, delta):
    assert math.isclose(rope_score_bound(q, k, [delta])[0], score_bound_literal(q, k, delta), rel_tol=1e-9, abs_tol=1e-9)


def test_score_bound_counts_the_step_to_h_d_over_2_equal_0():
    # q = k = (1, 0, 1, 0, 1, 0, 1, 0): h = (1, 1, 1, 1), so the only nonzero step is the last, |0 − 1| = 1;
    # at Δ = 0, |S_j| = j and the bound is 1 + 2 + 3 + 4 = 10, above the score 4
    ones = [1.0, 0.0] * 4
    assert rope_score_bound(ones, ones, [0])[0] == 10.0 and score_literal(ones, ones, 0, 0) == 4.0


def test_the_bound_shrinks_on_average_with_distance():
    bound = rope_decay_bound(np.arange(1600), 128)
    means = [bound[a:b].mean() for a, b in [(0, 50), (50, 100), (100, 200), (200, 400), (400, 800), (800, 1600)]]
    assert all(x > y for x, y in zip(means[:-1], means[1:], strict=True))


def test_decay_functions_reject_bad_arguments():
    with pytest.raises(ValueError, match="dim must be even"):
        rope_decay_bound([0], 5)
    with pytest.raises(ValueError, match="same even length"):
        rope_score_bound([1, 0, 1], [1, 0, 1], [0])
    with pytest.raises(ValueError, match="max_distance"):
        plot_rope_decay(new_figure()[1], 4, max_distance=0)


def test_decay_plot_and_figure():
    fig, ax = new_figure()
    h = plot_rope_decay(ax, 8, max_distance=20)
    np.testing.assert_allclose(h["line"].get_ydata(), [decay_bound_literal(d, 8) for d in range(21)], rtol=1e-9)
    assert "(tokens)" in ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    fig = make_rope_long_term_decay()
    left, right = fig.axes
    assert left.lines[0].get_ydata()[0] == 32.5 and right.get_yscale() == "log"
    score_line, bound_line = right.lines
    assert np.all(score_line.get_ydata() <= bound_line.get_ydata())
