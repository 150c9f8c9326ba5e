"""posenc_helpers.viz.passkey: the heat map's data, text, labels, past-L mark and colour bar, read back from the artists."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from test_accessibility import problems_in

from posenc_helpers.viz import new_figure, style
from posenc_helpers.viz.passkey import PASSKEY_CMAP, plot_passkey_grid

GRID = [[1.0, 0.53, 0.06, float("nan")],
        [1.0, 0.775, 0.5, float("nan")],
        [0.999, 0.81, 0.41, 0.16]]
LENGTHS, DEPTHS = [16, 32, 64, 128], [0.0, 0.5, 1.0]


def draw(grid=GRID, lengths=LENGTHS, depths=DEPTHS, train_len=32, **kw):
    with style():
        fig, ax = new_figure(figsize=(8.0, 4.5))
        return fig, ax, plot_passkey_grid(ax, grid, lengths, depths, train_len, **kw)


def test_image_holds_the_grid_and_nan_is_left_blank():
    fig, ax, h = draw(title="RoPE, whole key")
    data = h["image"].get_array()
    assert data.shape == (3, 4)
    assert data.mask.tolist() == [[False, False, False, True], [False, False, False, True], [False] * 4]
    for i in range(3):
        for j in range(4):
            if not np.isnan(GRID[i][j]):
                assert data[i, j] == GRID[i][j]
    assert h["image"].get_cmap().name.startswith(PASSKEY_CMAP) and PASSKEY_CMAP == "cividis"
    assert h["image"].get_clim() == (0.0, 1.0)


def test_every_cell_is_written_out_in_a_colour_that_reads_on_it():
    fig, ax, h = draw()
    for i in range(3):
        for j in range(4):
            text, x = h["texts"][i][j], GRID[i][j]
            assert text.get_position() == (j, i)
            if x != x:   # NaN
                assert text.get_text() == "–"
            else:
                assert text.get_text() == "%.2f" % x
                assert matplotlib.colors.to_hex(text.get_color()) == ("#ffffff" if x < 0.5 else "#000000")
    assert h["texts"][2][0].get_text() == "1.00" and h["texts"][1][1].get_text() == "0.78"


def test_axes_name_their_units_and_ticks_their_values():
    fig, ax, h = draw(title="RoPE")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16", "32", "64", "128"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0%", "50%", "100%"]
    assert "(tokens" in ax.get_xlabel() and "L = 32" in ax.get_xlabel()
    assert "%" in ax.get_ylabel() and "depth" in ax.get_ylabel()
    assert ax.get_title() == "RoPE"
    assert problems_in(fig) == []


def test_the_columns_past_L_are_marked():
    fig, ax, h = draw()
    # 16 and 32 are within L = 32, 64 and 128 past it: the line sits between columns 1 and 2
    assert h["boundary"].get_xdata()[0] == pytest.approx(1.5)
    assert any(t.get_text().strip() == "past L →" for t in ax.texts)
    _, ax, h = draw(train_len=200)   # nothing past L: no mark
    assert h["boundary"] is None and not any("past L" in t.get_text() for t in ax.texts)
    _, ax, h = draw(train_len=8)     # everything past L: said in words, no line
    assert h["boundary"] is None and any(t.get_text() == "all past L" for t in ax.texts)


def test_colour_bar_is_labelled_and_marks_chance():
    fig, ax, h = draw(chance=1 / 6, label="whole key right")
    bar = h["colorbar"]
    assert bar.ax.get_ylabel() == "whole key right (dashed: chance 0.17)"
    assert [line.get_ydata()[0] for line in bar.ax.lines] == [pytest.approx(1 / 6)]
    fig, ax, h = draw(colorbar=False)
    assert h["colorbar"] is None and len(fig.axes) == 1


@pytest.mark.parametrize("kw, error, match", [
    ({"grid": [0.5, 0.5]}, ValueError, "grid must be a 2-D array"),
    ({"grid": [[1.5, 0.5]], "lengths": [8, 16], "depths": [0.5]}, ValueError, r"accuracies in \[0, 1\].* from 0.5 to 1.5"),
    ({"lengths": [16, 32]}, ValueError, r"lengths must hold one value per column of grid \(4\), got shape \(2,\)"),
    ({"depths": [0.0, 1.0]}, ValueError, r"depths must hold one value per row of grid \(3\)"),
    ({"depths": [0.0, 0.5, 2.0]}, ValueError, r"depths must be fractions in \[0, 1\], got \[0.0, 0.5, 2.0\]"),
    ({"train_len": 0}, ValueError, "train_len must be a positive integer, got 0"),
    ({"chance": 1.5}, ValueError, r"chance must be an accuracy in \[0, 1\], got 1.5"),
    ({"chance": "low"}, TypeError, "chance must be a real number"),
])
def test_bad_input_is_named(kw, error, match):
    with pytest.raises(error, match=match):
        draw(**kw)


def test_panels_share_one_colour_bar_and_label_only_the_outer_axes():
    from posenc_helpers.viz.passkey import make_passkey_panels

    grids = {"RoPE": GRID, "ALiBi": np.ones((3, 4)), "FIRE": np.zeros((3, 4))}
    fig, h = make_passkey_panels(grids, LENGTHS, DEPTHS, 32, chance=1 / 6, label="whole key right", ncols=2)
    assert list(h) == ["RoPE", "ALiBi", "FIRE"]
    panels = [h[n]["image"].axes for n in h]
    assert [ax.get_title() for ax in panels] == ["RoPE", "ALiBi", "FIRE"]
    assert {ax.get_xlabel() for ax in panels} == {"test length T (tokens)"}
    assert {ax.get_ylabel() for ax in panels} == {"needle depth (%)"}
    assert fig._suptitle.get_text() == "trained at L = 32"
    hidden = [ax for ax in fig.axes if not ax.get_visible()]
    assert len(hidden) == 1  # the fourth slot of the 2 × 2 grid
    bars = [ax for ax in fig.axes if ax.get_visible() and ax not in panels]
    assert len(bars) == 1 and bars[0].get_ylabel() == "whole key right (dashed: chance 0.17)"
    assert all(h[n]["image"].get_cmap().name.startswith(PASSKEY_CMAP) for n in h)
    assert not problems_in(fig)


def test_panels_refuse_an_empty_set_by_name():
    from posenc_helpers.viz.passkey import make_passkey_panels

    with pytest.raises(ValueError, match="grids must be a non-empty dict"):
        make_passkey_panels({}, LENGTHS, DEPTHS, 32)
