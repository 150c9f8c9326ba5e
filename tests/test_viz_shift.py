"""viz.shift (notebook 03): the shift matrix drawn as a turn, checked against the formulas written out here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from posenc_helpers.viz import new_figure
from posenc_helpers.viz.shift import (
    DEMOS,
    FIGURES,
    arc_points,
    cosine_similarity_matrix,
    draw_matrix,
    draw_pair_shift,
    draw_position_matrix,
    pair_point,
    shift_demo,
    shift_readout,
    update_pair_shift,
    wrap_angle,
)


def omega_literal(k: int, dim: int, base: float = 10000.0) -> float:
    # ω_k = 1 / base^(2k/D)
    return 1.0 / base ** (2 * k / dim)


def point_literal(pos: float, k: int, dim: int, base: float = 10000.0) -> tuple[float, float]:
    # the pair (sin ω_k·pos, cos ω_k·pos) drawn as (x, y) = (cos, sin)
    angle = pos * omega_literal(k, dim, base)
    return math.cos(angle), math.sin(angle)


def block_literal(offset: float, k: int, dim: int) -> list[list[float]]:
    # [[cos ωδ, sin ωδ], [−sin ωδ, cos ωδ]], from sin(a+b) and cos(a+b)
    turn = omega_literal(k, dim) * offset
    return [[math.cos(turn), math.sin(turn)], [-math.sin(turn), math.cos(turn)]]


def angle_of(xy) -> float:
    return math.atan2(xy[1], xy[0])


def same_angle(a: float, b: float, tol: float = 1e-9) -> bool:
    return abs(math.remainder(a - b, 2 * math.pi)) < tol


# --- small helpers ---------------------------------------------------------------------------


@given(st.floats(-1e4, 1e4, allow_nan=False))
def test_wrap_angle_lands_in_the_half_open_turn_and_differs_by_whole_turns(theta):
    wrapped = wrap_angle(theta)
    assert -math.pi - 1e-12 < wrapped <= math.pi + 1e-12
    turns = (theta - wrapped) / (2 * math.pi)
    assert abs(turns - round(turns)) < 1e-9


def test_wrap_angle_examples():
    assert wrap_angle(0.0) == 0.0
    assert math.isclose(wrap_angle(7.0), 7.0 - 2 * math.pi)
    assert math.isclose(wrap_angle(-4.0), -4.0 + 2 * math.pi)
    np.testing.assert_allclose(wrap_angle(np.array([3 * math.pi, -3.5])), [math.pi, -3.5 + 2 * math.pi])


@given(st.floats(-10, 10), st.floats(-10, 10), st.floats(0.1, 3))
def test_arc_points_run_from_start_through_turn_on_the_radius(start, turn, radius):
    arc = arc_points(start, turn, radius=radius, num=17)
    np.testing.assert_allclose(np.hypot(arc[:, 0], arc[:, 1]), radius)
    np.testing.assert_allclose(arc[0], [radius * math.cos(start), radius * math.sin(start)], atol=1e-12)
    np.testing.assert_allclose(arc[-1], [radius * math.cos(start + turn), radius * math.sin(start + turn)], atol=1e-12)


def test_pair_point_matches_the_literal_formula():
    for dim in (2, 4, 8):
        for k in range(dim // 2):
            for pos in (0, 1, 2, 7.5, 100, 628):
                np.testing.assert_allclose(pair_point(pos, k, dim), point_literal(pos, k, dim), atol=1e-12)


def test_pair_point_rejects_a_bad_pair_index():
    with pytest.raises(ValueError, match="k must be a full"):
        pair_point(1, 2, 4)
    with pytest.raises(TypeError, match="k must be a pair index"):
        pair_point(1, 0.5, 4)
    with pytest.raises(ValueError, match="k must be a full"):
        pair_point(1, 2, 5)  # D = 5: pair 2 is a lone sine, it has no circle


# --- the pair panel ---------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 500), st.integers(-300, 300), st.sampled_from([(4, 0), (4, 1), (8, 2), (8, 3)]))
def test_pair_panel_puts_each_point_where_the_formula_says(pos, offset, dim_k):
    dim, k = dim_k
    fig, ax = new_figure()
    h = draw_pair_shift(ax, k, pos=0, offset=0, dim=dim)
    update_pair_shift(h, pos, offset)
    np.testing.assert_allclose(h["start"].get_xydata()[0], point_literal(pos, k, dim), atol=1e-12)
    np.testing.assert_allclose(h["end"].get_xydata()[0], point_literal(pos + offset, k, dim), atol=1e-12)
    # T · PE(pos) must land on PE(pos + offset)
    np.testing.assert_allclose(h["moved"].get_xydata()[0], point_literal(pos + offset, k, dim), atol=1e-9)
    arc = h["arc"].get_xydata()
    assert same_angle(angle_of(arc[0]), pos * omega_literal(k, dim))
    assert same_angle(angle_of(arc[-1]), (pos + offset) * omega_literal(k, dim))
    # the drawn arc is the net turn: never more than half a circle
    sweep = np.abs(np.diff(np.unwrap(np.arctan2(arc[:, 1], arc[:, 0])))).sum()
    assert sweep <= math.pi + 1e-9


def test_pair_panel_axes_are_labelled_and_the_moving_parts_animated():
    fig, ax = new_figure()
    h = draw_pair_shift(ax, 1, pos=2, offset=1)
    assert "element 3" in ax.get_xlabel() and "unitless" not in ax.get_xlabel()
    assert "element 2" in ax.get_ylabel() and "unitless" not in ax.get_ylabel()
    assert "0.01" in ax.get_title()
    assert all(h[name].get_animated() for name in ("start", "end", "moved", "arc"))


# --- the matrix panel -------------------------------------------------------------------------


def test_matrix_panel_shows_the_blocks_of_the_literal_matrix():
    from posenc_helpers import shift_matrix

    fig, ax = new_figure()
    h = draw_matrix(ax, shift_matrix(1, 4), "T_1")
    # the seed's T_1 block for ω_1 = 0.01: [[0.99995, 0.0100], [−0.0100, 0.99995]]
    texts = [[t.get_text() for t in row] for row in h["texts"]]
    assert texts[2][2:] == ["0.99995", "0.01000"] and texts[3][2:] == ["-0.01000", "0.99995"]
    assert texts[0][2] == texts[3][0] == "0"
    data = h["image"].get_array()
    for k in range(2):
        np.testing.assert_allclose(data[2 * k : 2 * k + 2, 2 * k : 2 * k + 2], block_literal(1, k, 4), atol=1e-12)
    # the zeros outside the blocks are masked: the static background shows them
    assert data.mask[0, 2] and data.mask[3, 1] and not data.mask[2, 3]
    assert h["image"].get_clim() == (-1.0, 1.0)


# --- the similarity matrix --------------------------------------------------------------------


def test_cosine_similarity_matches_a_literal_double_loop():
    positions, dim = [0, 3, 5, 8, 40], 6
    S = cosine_similarity_matrix(positions, dim)
    for a, p1 in enumerate(positions):
        for b, p2 in enumerate(positions):
            # Σ_k cos(ω_k·(p1 − p2)) / (D/2)
            expected = sum(math.cos(omega_literal(k, dim) * (p1 - p2)) for k in range(dim // 2)) / (dim / 2)
            assert math.isclose(S[a, b], expected, abs_tol=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2000), st.sampled_from([2, 4, 16, 64]))
def test_cosine_similarity_depends_on_distance_only(start, dim):
    positions = start + np.arange(12)
    S = cosine_similarity_matrix(positions, dim)
    np.testing.assert_allclose(S[1:, 1:], S[:-1, :-1], atol=1e-9)  # Toeplitz
    np.testing.assert_allclose(np.diag(S), 1.0, atol=1e-12)


def test_cosine_similarity_needs_an_even_dim():
    with pytest.raises(ValueError, match="dim must be even"):
        cosine_similarity_matrix([0, 1], 5)


def test_position_matrix_has_a_labelled_colorbar_and_symmetric_limits():
    fig, ax = new_figure()
    values = np.array([[0.5, -2.0], [1.0, 0.25]])
    h = draw_position_matrix(ax, values, [10, 11], "title", "score")
    assert h["colorbar"].ax.get_ylabel() == "score"
    assert h["image"].get_clim() == (-2.0, 2.0)
    assert ax.get_title() == "title" and "(tokens)" in ax.get_xlabel() and "(tokens)" in ax.get_ylabel()


# --- the slider demo --------------------------------------------------------------------------


def test_demo_follows_pos_and_offset_to_the_right_points():
    demo = shift_demo()
    assert demo.values == {"pos": 2, "offset": 1}
    pair0, pair1 = demo.handles["pairs"]
    # default: T_1 · PE(2) = PE(3); pair 1 lands on (cos 0.03, sin 0.03) ≈ (0.9996, 0.0300)
    np.testing.assert_allclose(pair1["end"].get_xydata()[0], [math.cos(0.03), math.sin(0.03)], atol=1e-12)
    assert round(pair1["moved"].get_xydata()[0][1], 4) == 0.0300
    for pos, offset in [(10, 5), (0, -7), (37, 100), (100, -100)]:
        demo.set_values(pos=pos, offset=offset)
        for k, pair in enumerate((pair0, pair1)):
            np.testing.assert_allclose(pair["start"].get_xydata()[0], point_literal(pos, k, 4), atol=1e-12)
            np.testing.assert_allclose(pair["end"].get_xydata()[0], point_literal(pos + offset, k, 4), atol=1e-12)
            np.testing.assert_allclose(pair["moved"].get_xydata()[0], point_literal(pos + offset, k, 4), atol=1e-9)
        data = demo.handles["matrix"]["image"].get_array()
        for k in range(2):
            np.testing.assert_allclose(data[2 * k : 2 * k + 2, 2 * k : 2 * k + 2], block_literal(offset, k, 4))
        c, s = block_literal(offset, 0, 4)[0]
        # the block's numbers are in the readout (the cells are colour only by default)
        assert f"[{c:.5f}, {s:.5f}]<br>[{-s:.5f}, {c:.5f}]" in demo.readout.value
        assert f"pos = {pos}, offset = {offset}" in demo.readout.value


def test_demo_slider_moves_change_the_frame_and_a_raising_update_is_not_swallowed():
    demo = shift_demo()
    first = demo.image.value
    demo.controls["offset"].value = 2
    assert demo.image.value != first

    def broken(handles, **values):
        raise RuntimeError("broken update")

    demo.update_fn = broken
    with pytest.raises(RuntimeError, match="broken update"):
        demo.controls["pos"].value = 3


def test_demo_controls_say_what_they_mean():
    demo = shift_demo()
    assert demo.controls["pos"].description == "pos (position)"
    assert demo.controls["offset"].description == "offset (positions moved)"
    # titles, axis labels, font sizes and colormaps: tests/test_accessibility.py, for every demo


def test_demo_readout_lists_every_pair_block():
    html = shift_readout(2, 1)
    # pair 0 turns by 1 rad, pair 1 by 0.01 rad; T·PE(2) on pair 1 is (sin 0.03, cos 0.03)
    assert f"{math.cos(1):.5f}" in html and f"{math.cos(0.01):.5f}" in html
    assert f"({math.sin(0.03):.4f}, {math.cos(0.03):.4f})" in html


def test_demo_leaves_the_numbers_to_the_readout_by_default():
    demo = shift_demo()
    texts = demo.handles["matrix"]["texts"]
    # every cell inside a 2 × 2 block is hidden; the static zeros outside stay
    for i in range(4):
        for j in range(4):
            assert texts[i][j].get_visible() == (i // 2 != j // 2), (i, j)
    assert texts[0][2].get_text() == "0"
    demo.controls["offset"].value = 5
    c, s = math.cos(5), math.sin(5)
    assert f"[{c:.5f}, {s:.5f}]<br>[{-s:.5f}, {c:.5f}]" in demo.readout.value
    data = demo.handles["matrix"]["image"].get_array()
    np.testing.assert_allclose(data[0:2, 0:2], block_literal(5, 0, 4))


def test_demo_can_write_the_numbers_in_the_cells():
    demo = shift_demo(numbers=True)
    texts = demo.handles["matrix"]["texts"]
    assert all(t.get_visible() for row in texts for t in row)
    for offset in (5, -7):
        demo.controls["offset"].value = offset
        for k in range(2):
            # block k of T_offset: [[cos ω_k·offset, sin ω_k·offset], [−sin, cos]]
            theta = offset / 10000 ** (2 * k / 4)
            cells = [[texts[2 * k + a][2 * k + b].get_text() for b in range(2)] for a in range(2)]
            assert cells == [
                [f"{math.cos(theta):.5f}", f"{math.sin(theta):.5f}"],
                [f"{-math.sin(theta):.5f}", f"{math.cos(theta):.5f}"],
            ]


def test_demo_rejects_an_odd_or_large_dim():
    with pytest.raises(ValueError, match="dim must be even"):
        shift_demo(dim=5)
    with pytest.raises(ValueError, match="at most 8"):
        shift_demo(dim=10)


# --- registries -------------------------------------------------------------------------------


def test_registered_figure_and_demo():
    assert set(FIGURES) == {"03-shift-as-rotation"}
    fig = FIGURES["03-shift-as-rotation"]()
    assert isinstance(fig, Figure)
    for ax in fig.axes:
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    assert DEMOS == {"shift": shift_demo}
