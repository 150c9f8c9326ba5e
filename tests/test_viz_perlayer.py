"""posenc_helpers.viz.perlayer: artist data against independent loops, the temperature demo driven kernel-free."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_helpers.viz import new_figure
from posenc_helpers.viz import perlayer as pl


def literal_tau(p, attn_scale, floor_scale):
    # transformers 5.24.0, models/llama4/modeling_llama4.py: log1p(floor((p + 1) / floor_scale)) * attn_scale + 1
    return math.log1p(math.floor((p + 1.0) / floor_scale)) * attn_scale + 1.0


def literal_weight(gap, n, tau):
    # softmax over n logits: τ·Δ for the matching key, 0 for the n − 1 others
    e = math.exp(tau * gap)
    return e / (e + (n - 1))


@pytest.mark.parametrize("gap, attn_scale, floor_scale", [(10.0, 0.1, 8192.0), (4.0, 0.2, 100.0), (15.0, 0.0, 1000.0)])
def test_temperature_demo_moves_every_curve(gap, attn_scale, floor_scale):
    demo = pl.temperature_demo()
    demo.set_values(gap=gap, attn_scale=attn_scale, floor_scale=floor_scale)
    p = demo.handles["p"]
    taus = [literal_tau(x, attn_scale, floor_scale) for x in p]
    np.testing.assert_allclose(demo.handles["tau"].get_ydata(), taus, rtol=1e-12)
    np.testing.assert_allclose(demo.handles["plain"].get_ydata(), [literal_weight(gap, x + 1, 1.0) for x in p],
                               rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(demo.handles["tuned"].get_ydata(),
                               [literal_weight(gap, x + 1, t) for x, t in zip(p, taus, strict=True)], rtol=1e-10, atol=1e-300)
    n = pl.CONTEXTS[-1]
    assert f"{literal_weight(gap, n, literal_tau(n - 1, attn_scale, floor_scale)):.4f}" in demo.readout.value


def test_temperature_demo_default_is_llama4_and_keeps_a_gap_of_10():
    demo = pl.temperature_demo()
    assert demo.values == {"gap": 10.0, "attn_scale": 0.1, "floor_scale": 8192.0}
    assert pl.DEMOS == {"temperature": pl.temperature_demo}
    # with Δ = 1/attn_scale = 10, e^(τΔ) = e^10·(1 + ⌊n/8192⌋) grows with n: the weight stays near its 8K value
    tuned = demo.handles["tuned"].get_ydata()
    late = demo.handles["p"] + 1 >= 2 * 8192
    assert np.all(np.abs(tuned[late] - literal_weight(10.0, 8192, 1.0)) < 0.07)
    assert demo.handles["plain"].get_ydata()[-1] < 0.003
    assert "10,485,760" in demo.readout.value and "0.0021" in demo.readout.value


def test_partial_frequencies_plot_data():
    fig, ax = new_figure()
    proportional = [1.0 / 1e6 ** (2 * k / 512) if k < 64 else 0.0 for k in range(256)]
    lines = pl.plot_partial_frequencies(ax, proportional, 512, 1e6)
    np.testing.assert_allclose(lines["neox"].get_ydata(), [1e6 ** (-2 * k / 128) for k in range(64)], rtol=1e-12)
    np.testing.assert_allclose(lines["proportional"].get_ydata(), proportional[:64], rtol=1e-12)
    assert list(lines["zeros"].get_xdata()) == list(range(64, 256))
    assert ax.get_yscale() == "log" and ax.get_title()


def test_mrope_axes_plot_counts_and_wavelength_ranges():
    fig, axes = new_figure(2, 1)
    found = pl.plot_mrope_axes(axes)
    blocks, interleaved = found.values()
    assert np.bincount(blocks).tolist() == [16, 24, 24] and np.bincount(interleaved).tolist() == [24, 20, 20]
    # one bar per pair per scheme, coloured by its axis
    assert len(axes[0].patches) == 2 * 64
    # the width axis of the blocks gets only the slowest pairs 40 … 63
    lam = [2 * math.pi * 1e6 ** (2 * k / 128) for k in range(64)]
    ranges = [line.get_xdata() for line in axes[1].lines if line.get_linestyle() == "-"]
    assert np.allclose(ranges[2], [lam[40], lam[63]]) and np.allclose(ranges[3], [lam[0], lam[63]])


def test_every_figure_builds_with_a_title():
    for name, make in pl.FIGURES.items():
        assert name.startswith("14-")
        fig = make()
        assert all(ax.get_title() for ax in fig.axes if ax.get_label() != "<colorbar>" and ax.axison), name
