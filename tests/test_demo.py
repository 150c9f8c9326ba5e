"""SliderDemo: frames follow the sliders, blitting leaves no ghosts, and errors are never swallowed."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from posenc_helpers.demo import SliderDemo, float_slider, int_slider, log_slider, neighbour_value, render_png
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
    sliders = controls() + [log_slider("base", "base (frequency base)", 2, 6, 10000.0)]
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

    slider = log_slider("base", "base (frequency base)", 1, 5, 10000.0)
    # d3's ",.0f" and Python's agree on this spec: 10^4.45 = 28183.8 reads "28,184", not "2.818e+4"
    assert slider.readout_format == ",.0f" and format(10**4.45, slider.readout_format) == "28,184"
    assert clock_demo().controls["base"].readout_format == ",.0f"


def test_readout_cells_never_wrap():
    from posenc_helpers.demo import READOUT_CSS

    assert ".posenc-readout td { white-space: nowrap; }" in READOUT_CSS
