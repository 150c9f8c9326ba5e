"""posenc_helpers.viz.trace: the pos = 2 trace, the element-index mistake and the trace slider demo.

Expected values come from the lesson's worked numbers or from the formula,
evaluated here one element at a time with the math module.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal import literal_pe
from matplotlib.figure import Figure

from posenc_helpers.viz import new_figure, trace


def literal_mistake(pos, dim, base=10000.0):
    """The mistake, literally: element i uses i itself in the exponent."""
    out = []
    for i in range(dim):
        theta = pos / base ** (2 * i / dim)
        out.append(math.sin(theta) if i % 2 == 0 else math.cos(theta))
    return out


# --- the trace --------------------------------------------------------------------------------------


def test_the_lessons_pos2_trace():
    rows = trace.trace_rows(2, 4)
    assert [r["k"] for r in rows] == [0, 1]
    assert [r["divisor"] for r in rows] == pytest.approx([1.0, 100.0])  # 10000^(0/4), 10000^(2/4)
    assert [r["angle"] for r in rows] == pytest.approx([2.0, 0.02])
    values = [rows[0]["sin"], rows[0]["cos"], rows[1]["sin"], rows[1]["cos"]]
    assert values == pytest.approx([0.9093, -0.4161, 0.0200, 0.9998], abs=5e-5)


@settings(max_examples=60, deadline=None)
@given(
    pos=st.floats(0, 1e5, allow_nan=False),
    dim=st.integers(1, 40),
    base=st.floats(1.5, 1e6, allow_nan=False),
)
def test_trace_rows_follow_the_formula(pos, dim, base):
    rows = trace.trace_rows(pos, dim, base)
    assert len(rows) == (dim + 1) // 2
    flat = []
    for k, row in enumerate(rows):
        assert row["divisor"] == pytest.approx(base ** (2 * k / dim), rel=1e-12)
        assert row["angle"] == pytest.approx(pos / base ** (2 * k / dim), rel=1e-12)
        assert row["i_sin"] == 2 * k
        flat.append(row["sin"])
        if 2 * k + 1 < dim:
            assert row["i_cos"] == 2 * k + 1
            flat.append(row["cos"])
            # a pair shares one angle, so its point lies on the unit circle
            assert row["sin"] ** 2 + row["cos"] ** 2 == pytest.approx(1.0)
        else:
            assert row["i_cos"] is None and row["cos"] is None
    np.testing.assert_allclose(flat, literal_pe(pos, dim, base), atol=1e-9)


def test_odd_dim_ends_with_a_lone_sine():
    rows = trace.trace_rows(2, 5)
    last = rows[-1]
    assert last["k"] == 2 and last["cos"] is None
    # k = 2 of D = 5: divisor 10000^(4/5)
    assert last["sin"] == pytest.approx(math.sin(2 / 10000 ** (4 / 5)))


def test_format_trace_prints_the_table():
    text = trace.format_trace(trace.trace_rows(2, 4))
    lines = text.splitlines()
    assert len(lines) == 4
    assert "k = 0" in lines[1] and "2.0000" in lines[1] and "0.9093" in lines[1] and "-0.4161" in lines[1]
    assert "k = 1" in lines[2] and "100" in lines[2] and "0.0200" in lines[2] and "0.9998" in lines[2]
    assert lines[3] == "PE = [0.9093, -0.4161, 0.0200, 0.9998]"
    odd = trace.format_trace(trace.trace_rows(1, 3))
    assert "(none)" in odd.splitlines()[2]
    assert odd.splitlines()[-1].count(",") == 2  # three numbers for D = 3


def test_trace_rows_reject_bad_input():
    with pytest.raises(ValueError, match="dim must be a positive integer, got 0"):
        trace.trace_rows(2, 0)
    with pytest.raises(TypeError, match="pos must be a real number"):
        trace.trace_rows("2", 4)
    with pytest.raises(ValueError, match="base"):
        trace.trace_rows(2, 4, base=0.5)


# --- the mistake ------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(pos=st.floats(0, 1e4, allow_nan=False), dim=st.integers(1, 24))
def test_element_exponent_is_the_literal_mistake(pos, dim):
    np.testing.assert_allclose(trace.sinusoidal_element_exponent(pos, dim), literal_mistake(pos, dim), atol=1e-9)


def test_the_mistake_breaks_the_pairs():
    wrong = trace.sinusoidal_element_exponent(2, 4)
    # sin(2/1), cos(2/100), sin(2/10^4), cos(2/10^6)
    assert wrong == pytest.approx([0.9093, 0.9998, 0.0002, 1.0000], abs=5e-5)
    # pair 0's two numbers no longer lie on the unit circle
    assert wrong[0] ** 2 + wrong[1] ** 2 == pytest.approx(math.sin(2) ** 2 + math.cos(0.02) ** 2)
    assert abs(wrong[0] ** 2 + wrong[1] ** 2 - 1) > 0.5


def test_plot_exponent_mistake_data():
    fig, ax = new_figure()
    h = trace.plot_exponent_mistake(ax, dim=8, base=10000.0)
    np.testing.assert_allclose(h["right"].get_ydata(), [10000 ** (2 * (i // 2) / 8) for i in range(8)])
    np.testing.assert_allclose(h["wrong"].get_ydata(), [10000 ** (2 * i / 8) for i in range(8)])
    assert ax.get_yscale() == "log" and ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


def test_registries():
    assert set(trace.FIGURES) == {"02-element-index-mistake"}
    assert isinstance(trace.FIGURES["02-element-index-mistake"](), Figure)
    assert set(trace.DEMOS) == {"trace"}


# --- plotting pieces ------------------------------------------------------------------------------------


def test_pe_bars_and_the_shaded_slots():
    fig, ax = new_figure()
    vector = literal_pe(3, 6)
    h = trace.plot_pe_bars(ax, vector, max_dim=10)
    heights = [b.get_height() for b in h["bars"]]
    np.testing.assert_allclose(heights[:6], vector)
    assert [b.get_visible() for b in h["bars"]] == [True] * 6 + [False] * 4
    assert h["beyond"].get_x() == pytest.approx(5.5) and h["beyond"].get_width() == pytest.approx(4)
    assert h["labels"][1].get_text() == f"{math.cos(3):.4f}"
    with pytest.raises(ValueError, match="max_dim"):
        trace.plot_pe_bars(ax, vector, max_dim=4)


# --- the slider demo ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_demo():
    return trace.trace_demo()


@pytest.fixture
def demo(shared_demo):
    shared_demo.update_fn = trace.update_trace
    shared_demo.set_values(pos=2, dim=4)
    return shared_demo


def visible_heights(demo):
    return [float(b.get_height()) for b in demo.handles["bars"]["bars"] if b.get_visible()]


@pytest.mark.parametrize(
    ("x", "sign", "text"),
    [
        (0.5403023058681398, False, "0.5403"),      # cos 1: 4 decimals
        (math.cos(0.01), False, "0.99995"),         # 0.99995000004: 4 decimals would say 1.0000
        (-math.cos(0.01), True, "-0.99995"),
        (0.99992, True, "+0.9999"),                 # 4 decimals already show it is not 1
        (1.0, False, "1.0000"),                     # exactly 1 stays 1.0000
        (-1.0, True, "-1.0000"),
        (math.cos(0.002), False, "1.0000"),         # 0.999998: a fifth decimal would still say 1.00000
        (0.0, True, "+0.0000"),
    ],
)
def test_format_value(x, sign, text):
    assert trace.format_value(x, sign=sign) == text


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1.0, max_value=1.0, allow_nan=False))
def test_format_value_never_hides_more_than_the_last_digit(x):
    text = trace.format_value(x)
    decimals = len(text.split(".")[1])
    assert decimals in (4, 5)
    # the printed number is x rounded to its shown decimals
    assert abs(float(text) - x) <= 0.5 * 10.0**-decimals + 1e-12
    # it says ±1.0000 only if x is within half a unit of the fifth decimal of ±1
    if text.lstrip("-") == "1.0000":
        assert 1 - abs(x) < 5e-6 + 1e-12
    # five decimals are used only near ±1
    if decimals == 5:
        assert 5e-6 - 1e-12 <= 1 - abs(x) < 5e-5 + 1e-12


def check_circle(demo, pos, dim):
    circle = demo.handles["circle"]
    full = [k for k in range((dim + 1) // 2) if 2 * k + 1 < dim]
    lone = [k for k in range((dim + 1) // 2) if 2 * k + 1 >= dim]
    expected = [(math.cos(pos / 10000 ** (2 * k / dim)), math.sin(pos / 10000 ** (2 * k / dim))) for k in full]
    np.testing.assert_allclose(circle["points"].get_xydata().reshape(-1, 2), np.reshape(expected, (-1, 2)), atol=1e-12)
    expected_lone = [(math.cos(pos / 10000 ** (2 * k / dim)), math.sin(pos / 10000 ** (2 * k / dim))) for k in lone]
    np.testing.assert_allclose(circle["lone"].get_xydata().reshape(-1, 2), np.reshape(expected_lone, (-1, 2)), atol=1e-12)


def test_demo_default_is_the_lessons_trace(demo):
    assert visible_heights(demo) == pytest.approx([0.9093, -0.4161, 0.0200, 0.9998], abs=5e-5)
    check_circle(demo, 2, 4)
    out = demo.readout.value
    for value in ("10000^(0/4) = 1", "10000^(2/4) = 100", "2.0000", "0.0200", "+0.9093", "-0.4161", "+0.9998"):
        assert value in out
    assert "PE(2) = [0.9093, -0.4161, 0.0200, 0.9998]" in out
    assert demo.handles["title"].get_text() == "PE(pos = 2), D = 4"


def test_demo_pos_slider_rebuilds_the_trace(demo):
    demo.controls["pos"].value = 1
    # PE(1) = [sin 1, cos 1, sin 0.01, cos 0.01] = [0.8415, 0.5403, 0.0100, 0.99995]
    assert visible_heights(demo) == pytest.approx([0.8415, 0.5403, 0.0100, 0.99995], abs=5e-5)
    check_circle(demo, 1, 4)
    # cos 0.01 = 1 − 0.01²/2 + … = 0.99995000…: four decimals would print 1.0000, so the readout shows five
    cos_001 = 1 - 0.01**2 / 2 + 0.01**4 / 24
    assert f"{cos_001:.5f}" == "0.99995"
    expected = f"PE(1) = [{math.sin(1):.4f}, {math.cos(1):.4f}, {math.sin(0.01):.4f}, {cos_001:.5f}]"
    assert expected == "PE(1) = [0.8415, 0.5403, 0.0100, 0.99995]"
    assert expected in demo.readout.value
    assert "<td>+0.99995</td>" in demo.readout.value      # the table's cos column of pair 1
    assert "+1.0000" not in demo.readout.value and "1.0000]" not in demo.readout.value


def test_demo_readout_keeps_four_decimals_for_exact_ones(demo):
    demo.controls["pos"].value = 0
    # PE(0) = [sin 0, cos 0, sin 0, cos 0]: exactly 0 and 1, nothing to hide
    assert "PE(0) = [0.0000, 1.0000, 0.0000, 1.0000]" in demo.readout.value


def test_demo_dim_slider_handles_odd_dim(demo):
    demo.controls["dim"].value = 5
    np.testing.assert_allclose(visible_heights(demo), literal_pe(2, 5), atol=1e-12)
    check_circle(demo, 2, 5)
    assert "lone sine" in demo.readout.value
    beyond = demo.handles["bars"]["beyond"]
    assert beyond.get_visible() and beyond.get_x() == pytest.approx(4.5)
    labels = [t.get_text() for t in demo.handles["circle"]["labels"] if t.get_visible()]
    assert labels[0] == "k=0"
    demo.controls["dim"].value = 12
    np.testing.assert_allclose(visible_heights(demo), literal_pe(2, 12), atol=1e-12)
    assert not beyond.get_visible()
    # the slow pairs sit near (1, 0) together: one label for them
    assert any("–" in t.get_text() for t in demo.handles["circle"]["labels"] if t.get_visible())


def test_demo_blits_without_full_redraws(demo):
    before = demo.full_draws
    demo.controls["pos"].value = 50
    demo.controls["dim"].value = 1
    demo.controls["dim"].value = 12
    assert demo.full_draws == before


def test_demo_rejects_too_large_dim(demo):
    with pytest.raises(ValueError, match="dim must be at most 12"):
        trace.update_trace(demo.handles, 2, 13)


def test_demo_callback_errors_propagate(demo):
    def broken(handles, **values):
        raise RuntimeError("boom")

    demo.update_fn = broken
    with pytest.raises(RuntimeError, match="boom"):
        demo.controls["dim"].value = 6


def test_demo_is_labelled(demo):
    for control in demo.controls.values():
        assert "(" in control.description
    for ax in demo.fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    sizes = [t.get_fontsize() for t in demo.fig.findobj(lambda a: hasattr(a, "get_fontsize") and a.get_text())]
    assert min(sizes) >= 11
