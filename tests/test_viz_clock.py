"""posenc_helpers.viz.clock: clock faces, heatmap, waves, the unit-circle walk and the clock slider demo.

Every expected value is computed here straight from the formula,
PE(pos, 2k) = sin(pos / base^(2k/D)), PE(pos, 2k+1) = cos(pos / base^(2k/D)),
with the math module, or taken from the lesson's worked numbers.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal import literal_pe
from matplotlib.figure import Figure

from posenc_helpers.viz import clock, new_figure


def angle_of(pos, k, dim, base=10000.0):
    """θ_k = pos / base^(2k/D), by hand."""
    return pos / base ** (2 * k / dim)


def tip(face):
    (x, y), = face["tip"].get_xydata()
    return x, y


# --- clock_slots ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dim, expected",
    [
        (2, [0]),
        (5, [0, 1, 2]),  # pairs (0, 1), (2, 3) and the lone sine 4
        (16, [0, 1, 2, 3, 4, 5, 6, 7]),  # 8 pairs fill 8 faces exactly
        (18, [0, 1, 2, 3, 4, 5, 6, 8]),  # 9 pairs: 7 fast ones and the slowest, k = 8
        (512, [0, 1, 2, 3, 4, 5, 6, 255]),
    ],
)
def test_clock_slots(dim, expected):
    assert clock.clock_slots(dim) == expected


def test_clock_slots_bad_dim_names_the_argument():
    with pytest.raises(ValueError, match="dim must be a positive integer, got 0"):
        clock.clock_slots(0)


# --- one clock face -----------------------------------------------------------------------------------


@functools.cache
def one_face():
    fig, ax = new_figure(figsize=(3, 3))
    return clock.draw_clock_face(ax)


@settings(max_examples=40, deadline=None)
@given(st.floats(-1e4, 1e4, allow_nan=False))
def test_clock_hand_points_at_cos_sin(angle):
    face = one_face()
    clock.set_clock_hand(face, angle)
    x, y = tip(face)
    assert x == pytest.approx(math.cos(angle), abs=1e-12)
    assert y == pytest.approx(math.sin(angle), abs=1e-12)
    np.testing.assert_allclose(face["hand"].get_xydata(), [[0, 0], [math.cos(angle), math.sin(angle)]], atol=1e-12)
    # the arc starts at angle 0 and ends in the hand's direction, on a circle of radius 0.32
    np.testing.assert_allclose(face["arc"].get_xydata()[0], [0.32, 0.0], atol=1e-12)
    np.testing.assert_allclose(face["arc"].get_xydata()[-1], [0.32 * math.cos(angle), 0.32 * math.sin(angle)], atol=1e-9)


def test_start_point_is_one_zero_and_hidden_hand():
    fig, ax = new_figure(figsize=(3, 3))
    face = clock.draw_clock_face(ax, 1.0)
    np.testing.assert_allclose(face["start"].get_xydata(), [[1.0, 0.0]])
    clock.set_clock_hand(face, None)
    assert not face["hand"].get_visible() and not face["tip"].get_visible() and not face["arc"].get_visible()
    clock.set_clock_hand(face, 0.5)
    assert face["hand"].get_visible()


def test_plot_clock_faces_one_per_pair():
    fig, axes = new_figure(1, 3, figsize=(9, 3))
    faces = clock.plot_clock_faces(axes, 7, 6)
    assert len(faces) == 3
    for k, face in enumerate(faces):
        theta = angle_of(7, k, 6)
        assert tip(face) == pytest.approx((math.cos(theta), math.sin(theta)))
        assert f"k = {k}" in face["title"].get_text()
    with pytest.raises(ValueError, match="one Axes per pair"):
        clock.plot_clock_faces(axes[:2], 7, 6)


# --- static plots ---------------------------------------------------------------------------------------


def test_heatmap_holds_pe_and_uses_a_fixed_diverging_scale():
    fig, ax = new_figure()
    h = clock.plot_pe_heatmap(ax, 30, 10, base=500.0)
    data = np.asarray(h["image"].get_array())
    assert data.shape == (30, 10)
    for pos in (0, 1, 17, 29):
        np.testing.assert_allclose(data[pos], literal_pe(pos, 10, 500.0), atol=1e-12)
    assert h["image"].get_cmap().name == "RdBu_r"
    assert h["image"].get_clim() == (-1.0, 1.0)
    assert h["colorbar"].ax.get_ylabel() == "PE(pos, i)"  # a pure number: no "(unitless)" clutter
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


def test_dimension_waves_sample_the_formula():
    fig, axes = new_figure(3, 1, figsize=(6, 6))
    h = clock.plot_dimension_waves(axes, [0, 3, 7], 8, max_pos=20)
    for n, i in enumerate([0, 3, 7]):
        x, y = h["dots"][n].get_data()
        np.testing.assert_array_equal(x, np.arange(21))
        np.testing.assert_allclose(y, [literal_pe(p, 8)[i] for p in range(21)], atol=1e-12)
        xf, yf = h["curves"][n].get_data()
        k = i // 2
        f = math.sin if i % 2 == 0 else math.cos
        np.testing.assert_allclose(yf, [f(t / 10000 ** (2 * k / 8)) for t in xf], atol=1e-12)
    assert axes[-1].get_xlabel() == "position pos (tokens)"
    with pytest.raises(ValueError, match="dims must be element indices"):
        clock.plot_dimension_waves(axes, [8], 8)


def test_unit_circle_walk_matches_the_lesson():
    fig, ax = new_figure(figsize=(6, 6))
    h = clock.plot_unit_circle_walk(ax)
    xy = h["points"].get_xydata()
    # the lesson's (sin, cos) values at pos 0, 2, 4, 6, 7 (3 decimals)
    lesson = {0: (0.0, 1.0), 2: (0.909, -0.416), 4: (-0.757, -0.654), 6: (-0.279, 0.960), 7: (0.657, 0.754)}
    for (x, y), (s, c) in zip(xy, lesson.values(), strict=True):
        assert (y, x) == pytest.approx((s, c), abs=6e-4)
    np.testing.assert_allclose(h["start"].get_xydata(), [[1.0, 0.0]])
    texts = [t.get_text() for t in h["labels"]]
    # each value is named: the point sits at x = cos, y = sin, so a bare "(sin, cos)" pair would read backwards
    for text, pos in zip(texts, [0, 2, 4, 6, 7], strict=True):
        sin_line = f"sin = {math.sin(pos):+.3f}".replace("-", "−")
        cos_line = f"cos = {math.cos(pos):+.3f}".replace("-", "−")
        assert text.splitlines() == [f"pos {pos}", sin_line, cos_line]
    assert texts[1] == "pos 2\nsin = +0.909\ncos = −0.416"
    assert texts[4] == "pos 7\nsin = +0.657\ncos = +0.754"


def test_figure_registry():
    assert set(clock.FIGURES) == {"01-unit-circle-walk"}
    fig = clock.FIGURES["01-unit-circle-walk"]()
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    assert set(clock.DEMOS) == {"clock"}


# --- the slider demo ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_demo():
    return clock.clock_demo()


@pytest.fixture
def demo(shared_demo):
    """One demo for the module (building it is the slow part), reset to its defaults for each test."""
    shared_demo.update_fn = clock.update_clock
    shared_demo.set_values(pos=7, dim=16, base=10000.0)
    return shared_demo


def check_faces(demo, pos, dim, base):
    """Every face shows the right pair at the right angle, computed independently."""
    pairs = (dim + 1) // 2
    faces = demo.handles["faces"]
    shown = list(range(pairs)) if pairs <= len(faces) else list(range(len(faces) - 1)) + [pairs - 1]
    for n, face in enumerate(faces):
        if n < len(shown):
            theta = angle_of(pos, shown[n], dim, base)
            assert face["hand"].get_visible()
            assert tip(face) == pytest.approx((math.cos(theta), math.sin(theta)), abs=1e-12)
            assert not face["unused"].get_visible()
        else:
            assert not face["hand"].get_visible()
            assert face["unused"].get_visible()


def test_demo_default(demo):
    assert demo.values == {"pos": 7, "dim": 16, "base": pytest.approx(10000.0)}
    check_faces(demo, 7, 16, 10000.0)
    assert demo.handles["faces"][-1]["title"].get_text() == "k = 7 (slowest)"
    assert "pos = 7,  D = 16,  base = 10,000" == demo.handles["settings"].get_text()
    assert all(c.description.split(" (")[0] in {"pos", "D", "base"} and "(" in c.description for c in demo.controls.values())


def test_demo_pos_slider_moves_every_hand(demo):
    demo.controls["pos"].value = 100
    check_faces(demo, 100, 16, 10000.0)
    # the fast hand at 100 rad, in the readout too
    assert f"{math.sin(100):+.4f}" in demo.readout.value and f"{math.cos(100):+.4f}" in demo.readout.value


def test_demo_dim_slider_shows_the_slowest_pair(demo):
    demo.controls["dim"].value = 64
    check_faces(demo, 7, 64, 10000.0)
    assert demo.handles["faces"][-1]["title"].get_text() == "k = 31 (slowest)"
    assert "showing k = 0 … 6 and the slowest, k = 31" in demo.readout.value
    demo.controls["dim"].value = 4
    check_faces(demo, 7, 4, 10000.0)
    assert demo.handles["faces"][-1]["title"].get_text() == "k = 7"


def test_demo_base_slider_stretches_the_slow_hand(demo):
    # base 40,000 is on the slider: for D = 4, ω_1 = 1/sqrt(40,000) = 1/200, so at pos = 400 the slow hand has
    # turned 2 rad, and λ_1 = 2π·200 = 400π positions
    demo.set_values(dim=4, base=40000.0, pos=400)
    check_faces(demo, 400, 4, 40000.0)
    assert tip(demo.handles["faces"][1]) == pytest.approx((math.cos(2.0), math.sin(2.0)), abs=1e-12)
    assert f"{400 * math.pi:,.1f}" in demo.readout.value  # λ_1 in the readout


def test_a_base_off_the_slider_is_drawn_by_a_preview_and_refused_by_the_slider(demo):
    # 2π·sqrt(B) = 1000 positions for D = 4: after 1000 positions the slow hand is back at (1, 0)
    b = (1000 / (2 * math.pi)) ** 2
    shown = demo.preview(dim=4, base=b, pos=1000)
    assert tip(shown.handles["faces"][1]) == pytest.approx((1.0, 0.0), abs=1e-9)
    assert "1,000.0" in shown.readout  # λ_1 in the readout
    assert demo.values == {"pos": 7, "dim": 16, "base": 10000.0}  # the live demo did not move
    with pytest.raises(ValueError, match=r"slider 'base' cannot show 25330\.29"):
        demo.controls["base"].value = b
    assert demo.values["base"] == 10000.0


def test_demo_readout_lists_the_lesson_numbers(demo):
    demo.set_values(pos=2, dim=4, base=10000.0)
    out = demo.readout.value
    for value in ("+0.9093", "-0.4161", "+0.0200", "+0.9998", "628.3", "6.3"):
        assert value in out


def test_demo_blits_without_full_redraws(demo):
    before = demo.full_draws
    demo.controls["pos"].value = 300
    demo.controls["dim"].value = 128
    demo.controls["dim"].value = 6
    demo.controls["base"].value = 500.0
    assert demo.full_draws == before
    assert demo.image.value[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_callback_errors_propagate(demo):
    def broken(handles, **values):
        raise RuntimeError("boom")

    demo.update_fn = broken
    with pytest.raises(RuntimeError, match="boom"):
        demo.controls["pos"].value = 3


def test_update_clock_rejects_bad_input(demo):
    with pytest.raises(ValueError, match="dim"):
        clock.update_clock(demo.handles, 1, 0)
    with pytest.raises(ValueError, match="base"):
        clock.update_clock(demo.handles, 1, 4, base=1.0)
    with pytest.raises(TypeError, match="pos"):
        clock.update_clock(demo.handles, "3", 4)


def test_demo_figure_is_readable_when_projected(demo):
    faces = demo.handles["faces"]
    for face in faces:
        assert face["title"].get_text()
    ncols = len(faces) // 2
    for n, face in enumerate(faces):
        ax = face["hand"].axes
        assert bool(ax.get_xlabel()) == (n >= ncols)
        assert bool(ax.get_ylabel()) == (n % ncols == 0)
    sizes = [t.get_fontsize() for t in demo.fig.findobj(lambda a: hasattr(a, "get_fontsize") and a.get_text())]
    assert min(sizes) >= 11
