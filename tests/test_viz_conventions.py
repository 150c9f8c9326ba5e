"""posenc_helpers.viz.conventions: the pairing diagram, the heatmaps and the layouts demo, without a browser."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_helpers.viz import FONT_SIZE, new_figure
from posenc_helpers.viz import conventions as vc


def literal_theta(pos, dim, k, base=10000.0):
    return pos / base ** (2 * k / dim)


def test_pairing_targets_follow_the_permutation():
    fig, ax = new_figure()
    h = vc.plot_pairings(ax, 8)
    # x_{2k} lands at slot k, x_{2k+1} at slot k + 4
    assert h["targets"] == [0, 4, 1, 5, 2, 6, 3, 7]
    for i, text in enumerate(h["bottom"]):
        assert text.get_text() == f"x{i}"
        assert text.get_position()[0] == h["targets"][i]
    for i, link in enumerate(h["links"]):
        assert link.get_xdata()[0] == i and link.get_xdata()[1] == h["targets"][i]


def test_pairing_diagram_rejects_odd_dim():
    fig, ax = new_figure()
    with pytest.raises(ValueError, match=r"^dim must be even to draw both layouts, got 5"):
        vc.plot_pairings(ax, 5)


def test_heatmaps_hold_the_three_layouts():
    fig, axes = new_figure(1, 3, figsize=(12, 4))
    h = vc.plot_layout_heatmaps(axes, 5, 6)
    paper, permuted, t2t = (np.asarray(im.get_array()) for im in h["images"])
    for pos in range(5):
        for k in range(3):
            theta = literal_theta(pos, 6, k)
            assert paper[pos, 2 * k] == pytest.approx(math.sin(theta))
            assert paper[pos, 2 * k + 1] == pytest.approx(math.cos(theta))
            assert permuted[pos, k] == pytest.approx(math.sin(theta))
            assert permuted[pos, k + 3] == pytest.approx(math.cos(theta))
            # t2t: timescales 1, 100, 10^4 for three pairs
            assert t2t[pos, k] == pytest.approx(math.sin(pos / 1e4 ** (k / 2)))
            assert t2t[pos, k + 3] == pytest.approx(math.cos(pos / 1e4 ** (k / 2)))


def test_layouts_demo_moves_both_layouts_to_the_right_values():
    demo = vc.layouts_demo()
    for pos in (0, 17, 200):
        demo.controls["pos"].value = pos
        left = [b.get_height() for b in demo.handles["interleaved"]["bars"]]
        middle = [b.get_height() for b in demo.handles["half_split"]["bars"]]
        for k in range(4):
            theta = literal_theta(pos, 8, k)
            # x has every pair at (1, 0): rotated pair k is (cos θ_k, sin θ_k)
            assert left[2 * k] == pytest.approx(math.cos(theta), abs=1e-12)
            assert left[2 * k + 1] == pytest.approx(math.sin(theta), abs=1e-12)
            assert middle[k] == pytest.approx(math.cos(theta), abs=1e-12)
            assert middle[k + 4] == pytest.approx(math.sin(theta), abs=1e-12)
            tip = demo.handles["arrows"]["tips"][k].get_xydata()[0]
            assert tip == pytest.approx([math.cos(theta), math.sin(theta)], abs=1e-12)
        assert f"pos = {pos}" in demo.readout.value
        assert "max |rope_half_split(P x) − P rope(x)| &lt; 1e-12" in demo.readout.value


def test_layouts_demo_readout_lists_the_slots():
    demo = vc.layouts_demo(pos=0)
    assert "<td>1</td><td>(2, 3)</td><td>(1, 5)</td>" in demo.readout.value


def test_every_axis_is_labelled_and_titled():
    figures = [make() for make in vc.FIGURES.values()] + [vc.make_layouts_figure()[0]]
    for fig in figures:
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":
                continue
            assert ax.get_title(), "every plot has a title"
            # every axis labelled; real units stay, the "(unitless)" clutter does not
            assert ax.get_xlabel() and "unitless" not in ax.get_xlabel() + ax.get_ylabel(), ax.get_title()
        assert fig.axes[0].get_ylabel()
        for text in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text")):
            if text.get_text() and text.get_visible():
                assert text.get_fontsize() >= FONT_SIZE - 1, text.get_text()


def test_figures_registry_names():
    assert set(vc.FIGURES) == {"07-pairings", "07-paper-vs-t2t"}
    assert set(vc.DEMOS) == {"layouts"}
