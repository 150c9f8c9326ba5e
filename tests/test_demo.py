"""SliderDemo: frames follow the sliders, blitting leaves no ghosts, and errors are never swallowed."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

from posenc_helpers.demo import (
    SliderDemo,
    float_slider,
    int_slider,
    log_slider,
    neighbour_value,
    render_png,
    round_values,
    slider_values,
    token_values,
)
from posenc_helpers.registry import demos as registry
from posenc_helpers.viz import FONT_SIZE, new_figure


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def make():
    fig, ax = new_figure(figsize=(4, 3))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    ax.set_xlabel("x (units)")
    ax.set_ylabel("y (units)")
    (line,) = ax.plot([0, 5], [0, 5], animated=True)
    text = ax.text(1, 9, "", animated=True)
    return fig, {"ax": ax, "line": line, "text": text}


def update(h, height, width=5.0):
    if height < 0:
        raise RuntimeError("height must not be negative")
    h["line"].set_data([0, width], [0, height])
    h["text"].set_text(f"height {height}")
    return f"height = {height}"


def controls(height=3, width=5.0):
    return [
        int_slider("height", "h (height)", -1, 10, height),
        float_slider("width", "w (width)", 1.0, 10.0, width),
    ]


def test_slider_moves_the_artists_and_the_readout():
    demo = SliderDemo(make, update, controls())
    first = demo.image.value
    demo.controls["height"].value = 8
    assert demo.handles["line"].get_ydata()[1] == 8
    assert demo.handles["text"].get_text() == "height 8"
    assert demo.readout.value == "height = 8"
    assert demo.image.value != first


def test_blitted_frame_equals_a_fresh_full_draw():
    demo = SliderDemo(make, update, controls())
    for value in (9, 1, 6):  # several frames drawn over the cached background
        demo.controls["height"].value = value
    demo.controls["width"].value = 2.5
    fresh = SliderDemo(make, update, controls(height=6, width=2.5))
    np.testing.assert_array_equal(pixels(demo.image.value), pixels(fresh.image.value))


def test_limit_change_triggers_a_full_redraw():
    def update_limits(h, height, width=5.0):
        h["ax"].set_ylim(0, max(10, height + 1))
        return update(h, height, width)

    demo = SliderDemo(make, update_limits, [int_slider("height", "h (height)", 0, 30, 3)])
    demo.controls["height"].value = 25
    fresh = SliderDemo(make, update_limits, [int_slider("height", "h (height)", 0, 30, 25)])
    np.testing.assert_array_equal(pixels(demo.image.value), pixels(fresh.image.value))


def test_a_callback_that_raises_is_not_swallowed():
    demo = SliderDemo(make, update, controls())
    with pytest.raises(RuntimeError, match="height must not be negative"):
        demo.controls["height"].value = -1


def test_set_values_redraws_once_with_all_values():
    calls = []

    def counting(h, height, width):
        calls.append((height, width))
        return update(h, height, width)

    demo = SliderDemo(make, counting, controls())
    calls.clear()
    demo.set_values(height=7, width=9.0)
    assert calls == [(7, 9.0)]
    with pytest.raises(KeyError, match="no control named 'depth'"):
        demo.set_values(depth=1)


def test_static_render_includes_animated_artists():
    demo = SliderDemo(make, update, controls())
    with_artists = pixels(render_png(demo.fig))
    demo.handles["line"].set_visible(False)
    demo.handles["text"].set_visible(False)
    without = pixels(render_png(demo.fig))
    assert (with_artists != without).any(), "savefig must draw the animated artists too"


def test_labels_say_what_each_slider_means_and_are_readable():
    sliders = controls() + [log_slider("base", "base (frequency base)", round_values(100, 1e6), 10000.0)]
    for slider in sliders:
        assert "(" in slider.description and slider.description.endswith(")")
        assert slider.continuous_update
    fig, ax = new_figure()
    assert ax.xaxis.label.get_size() >= FONT_SIZE
    assert all(t.get_size() >= 11 for t in ax.get_xticklabels())


def test_every_registered_demo_builds_and_follows_each_slider():
    for name, factory in registry().items():
        demo = factory()
        for control_name, control in demo.controls.items():
            before = (demo.image.value, demo.readout.value)
            start = control.value
            control.value = neighbour_value(control)
            assert demo.image.value != before[0], f"{name}: moving {control_name} did not change the figure"
            control.value = start
            assert demo.readout.value == before[1], f"{name}: readout not restored after moving {control_name} back"


def test_encode_png_round_trips_through_an_independent_decoder():
    from posenc_helpers.demo import encode_png

    rgba = np.random.default_rng(0).integers(0, 256, size=(7, 5, 4), dtype=np.uint8)
    decoded = np.asarray(Image.open(io.BytesIO(encode_png(rgba))).convert("RGBA"))
    np.testing.assert_array_equal(decoded, rgba)
    with pytest.raises(ValueError, match=r"rgba must have shape \(height, width, 4\), got \(7, 5\)"):
        encode_png(rgba[..., 0])


def _notebook_that_drives(tmp_path, value: int):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from posenc_helpers.demo import SliderDemo, int_slider\n"
            "from posenc_helpers.viz import new_figure\n"
            "def make():\n"
            "    fig, ax = new_figure()\n"
            "    (line,) = ax.plot([0, 1], [0, 0], animated=True)\n"
            "    return fig, line\n"
            "def update(line, height):\n"
            "    if height == 5:\n"
            "        raise RuntimeError('broken callback')\n"
            "    line.set_ydata([0, height])\n"
            "    return str(height)\n"
            "demo = SliderDemo(make, update, [int_slider('height', 'h (height)', 0, 10, 3)])"
        ),
        nbformat.v4.new_code_cell(f"demo.controls['height'].value = {value}"),
    ]
    path = tmp_path / f"drive_{value}.ipynb"
    nbformat.write(nb, path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return path


@pytest.mark.slow  # runs pytest with nbval and a Jupyter kernel in a subprocess: about 5 s each
@pytest.mark.parametrize("value, fails", [(4, False), (5, True)])
def test_a_raising_callback_fails_the_notebook_under_nbval(tmp_path, value, fails):
    import subprocess
    import sys

    path = _notebook_that_drives(tmp_path, value)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider", "-q", path.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert (result.returncode != 0) == fails, result.stdout[-2000:]
    assert ("broken callback" in result.stdout) == fails


def test_full_draws_counts_only_real_redraws():
    demo = SliderDemo(make, update, controls())
    assert demo.full_draws == 1  # the first frame
    demo.controls["height"].value = 8
    assert demo.full_draws == 1  # blitted


def test_every_registered_demo_steps_without_a_full_redraw():
    """A slider step at default settings only redraws the moving artists (the 50 ms budget depends on it)."""
    for name, factory in registry().items():
        demo = factory()
        for control_name, control in demo.controls.items():
            before = demo.full_draws
            start = control.value
            control.value = neighbour_value(control)
            control.value = start
            assert demo.full_draws == before, f"{name}: a step of {control_name} redrew the whole figure"


def test_log_slider_reads_whole_numbers_with_a_thousands_separator():
    from posenc_helpers.viz.clock import clock_demo

    slider = log_slider("base", "base (frequency base)", round_values(10, 100_000), 10000.0)
    labels = [label for label, _ in slider.options]
    assert slider.label == "10,000" and labels[-1] == "100,000" and "28,000" in labels
    assert clock_demo().controls["base"].label == "10,000"


# --------------------------------------------------------------------------- a slider holds only what it shows


def test_an_int_slider_refuses_a_value_off_its_steps_by_name():
    with pytest.raises(ValueError, match=r"slider 'distance' cannot show 100: it shows 0, 8, … 2,048 \(steps of 8"):
        int_slider("distance", "Δ (distance)", 0, 2048, 100, step=8)
    slider = int_slider("distance", "Δ (distance)", 0, 2048, 104, step=8)
    for bad in (1001, 2056, -8):  # off a step; past either end (ipywidgets would clamp these silently)
        with pytest.raises(ValueError, match=f"slider 'distance' cannot show {bad:,}"):
            slider.value = bad
    assert slider.value == 104
    slider.value = 2048
    with pytest.raises(ValueError, match=r"max − min = 10 is not a whole number of steps of 4"):
        int_slider("pos", "pos (position)", 0, 10, 4, step=4)
    with pytest.raises(ValueError, match=r"int_slider 'pos': step must be an integer, got 0.5"):
        int_slider("pos", "pos (position)", 0, 10, 4, step=0.5)


def test_a_float_slider_holds_the_floats_its_literals_give():
    # the values, read from their printed decimals: an independent way to the same floats
    slider = float_slider("attn_scale", "attn_scale (growth of τ)", 0.0, 0.3, 0.1, step=0.01)
    assert slider_values(slider) == [float(f"0.{j:02d}") for j in range(31)]
    assert 0.1 in slider_values(slider) and 0.30000000000000004 not in slider_values(slider)
    factor = float_slider("factor", "s (context scale)", 1.0, 32.0, 8.0, step=0.5, readout_format=".1f")
    assert slider_values(factor) == [float(f"{j // 2}.{5 * (j % 2)}") for j in range(2, 65)]
    assert factor.value == 8.0 and factor.label == "8.0"
    with pytest.raises(ValueError, match=r"slider 'factor' cannot show 7.999999999999999"):
        factor.value = 7.999999999999999
    with pytest.raises(ValueError, match=r"slider 'factor' cannot show 8.2: its 63 values run from 1.0 to 32.0"):
        float_slider("factor", "s (context scale)", 1.0, 32.0, 8.2, step=0.5)
    with pytest.raises(ValueError, match=r"max − min = 1.0 is not a whole number of steps of 0.3"):
        float_slider("x", "x (a number)", 0.0, 1.0, 0.3, step=0.3)


def test_round_values_are_twenty_two_digit_numbers_per_decade():
    values = round_values(10, 1e7)
    assert len(values) == 6 * 20 + 1 and values[0] == 10 and values[-1] == 1e7
    for j, value in enumerate(values, start=20):
        exact = 10 ** (j / 20)
        unit = 10 ** (math.floor(math.log10(exact)) - 1)  # the second significant digit's unit
        assert value / unit == round(value / unit), f"{value} has more than two significant digits"
        assert abs(value - exact) <= unit / 2 + 1e-9 * exact, f"{value} is not 10^({j}/20) = {exact} rounded"
    assert {10_000, 500_000, 1_000_000} <= set(values)
    assert 10**5.7 not in values and 501_187 not in values  # where a 0.05-exponent grid puts 500,000
    with pytest.raises(ValueError, match=r"round_values: lo = 8,192 is not a value of the series \(nearest: 7,900\)"):
        round_values(8192, 1e5)


def test_token_values_are_powers_of_two_and_their_halfway_points():
    values = token_values(1_024, 786_432)
    assert {1_024, 8_192, 131_072, 4_096, 32_768} <= set(values)
    ratios = [b / a for a, b in zip(values[:-1], values[1:], strict=True)]
    assert ratios == [1.5 if i % 2 == 0 else 4 / 3 for i in range(len(ratios))]  # 2^j → 3·2^(j−1) → 2^(j+1)

    def power_of_two(n: int) -> bool:
        return n > 0 and n & (n - 1) == 0

    assert all(power_of_two(int(v)) or (v % 3 == 0 and power_of_two(int(v) // 3)) for v in values)
    with pytest.raises(ValueError, match=r"token_values: hi = 1,000,000 is not a power of two or 3·2\^j"):
        token_values(1_024, 1_000_000)


def test_a_log_slider_takes_its_values_not_an_exponent_range():
    with pytest.raises(ValueError, match=r"log_slider 'base': values must be the list of values it shows"):
        log_slider("base", "base (frequency base)", 1, 5, 10000.0)
    with pytest.raises(ValueError, match=r"log_slider 'base': values must be positive and increasing"):
        log_slider("base", "base (frequency base)", [10.0, 100.0, 50.0], 10.0)
    slider = log_slider("base", "base (frequency base)", round_values(1_000, 1e7), 500_000.0)
    with pytest.raises(ValueError, match=r"slider 'base' cannot show 501187.2"):
        slider.value = 501187.2
    assert slider.value == 500_000.0


def test_a_demo_refuses_a_slider_the_browser_may_snap():
    import ipywidgets as widgets

    snapping = widgets.FloatLogSlider(min=2, max=5, value=8192.0, description="floor_scale (tokens)")
    snapping.demo_name = "floor_scale"
    with pytest.raises(ValueError, match=r"control 'floor_scale' is a FloatLogSlider, whose values the browser may"):
        SliderDemo(make, lambda h, floor_scale: "", [snapping])


def test_neighbour_value_steps_back_at_either_end():
    slider = log_slider("base", "base (frequency base)", round_values(10, 100), 100.0)
    assert neighbour_value(slider) == 89.0 and neighbour_value(slider, -1, 10.0) == 11.0
    assert neighbour_value(int_slider("pos", "pos (position)", 0, 10, 0)) == 1


def test_a_long_label_widens_every_label_of_its_demo():
    from posenc_helpers.demo import int_slider

    long = int_slider("height", "local:global (sliding layers per global layer)", 0, 10, 3)  # 46 characters
    demo = SliderDemo(make, update, [long, *controls()[1:]])
    widths = {(c.style.description_width, c.layout.width) for c in demo.controls.values()}
    assert widths == {("23em", "49em")}  # one width for all, so the tracks line up; 26em of track as before
    short = SliderDemo(make, update, controls())
    assert {c.style.description_width for c in short.controls.values()} == {"16em"}


def test_a_preview_draws_any_value_and_leaves_the_live_demo_alone():
    demo = SliderDemo(make, update, controls())
    image = demo.image.value
    shown = demo.preview(height=4, width=3.3)  # 3.3 is not on the width slider
    assert list(shown.handles["line"].get_xdata()) == [0, 3.3] and shown.readout == "height = 4"
    assert demo.values == demo.defaults == {"height": 3, "width": 5.0} and demo.image.value == image
    assert demo.handles["line"].get_xdata()[1] == 5.0
    with pytest.raises(KeyError, match="no control named 'depth'"):
        demo.preview(depth=1)


def test_readout_cells_never_wrap():
    from posenc_helpers.demo import READOUT_CSS

    assert ".posenc-readout td { white-space: nowrap; }" in READOUT_CSS
