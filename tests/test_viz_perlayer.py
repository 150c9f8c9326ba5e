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


@pytest.mark.parametrize("gap, attn_scale, floor_scale", [(10.0, 0.1, 8192.0), (4.0, 0.2, 128.0), (15.0, 0.0, 1024.0)])
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


def test_layer_wavelengths_plot_data():
    fig, ax = new_figure()
    omega = [10000.0 ** (-2 * k / 16) for k in range(8)]
    lines = pl.plot_layer_wavelengths(ax, {"a": omega, "b": omega[:4] + [0.0] * 4}, {"window": 100})
    np.testing.assert_allclose(lines["a"].get_ydata(), [2 * math.pi / w for w in omega], rtol=1e-12)
    assert list(lines["b"].get_xdata()) == [0, 1, 2, 3]          # ω = 0 pairs are left out
    assert ax.get_yscale() == "log"


def test_barcode_cells_follow_each_layer():
    from posenc_helpers.configs import layer_positions

    config = {"model_type": "exaone4", "num_hidden_layers": 8, "hidden_size": 512, "num_attention_heads": 4,
              "head_dim": 128, "sliding_window": 4096, "sliding_window_pattern": 4, "rope_theta": 1e6,
              "max_position_embeddings": 32768}
    layers = layer_positions(config)
    fig, ax = new_figure(figsize=(8, 2))
    colours = pl.plot_barcode(ax, {"toy": layers})["toy"]
    assert len(colours) == len(ax.patches) == 8
    for layer, colour, bar in zip(layers, colours, ax.patches, strict=True):
        assert (colour == "black") == (not layer.rope)
        # a windowed layer is drawn at half the height of a full-attention one
        assert math.isclose(bar.get_height(), 0.4 if layer.window is not None else 0.8)
    assert any(not layer.rope for layer in layers) and any(layer.window for layer in layers)


def test_bundled_barcode_has_one_row_per_model_with_layers():
    from posenc_helpers.configs import bundled_configs, layer_positions

    models = pl._bundled_layers()
    expected = []
    for name, config in bundled_configs("all").items():
        try:
            expected.append((name, len(layer_positions(config))))
        except ValueError:
            pass
    assert [(name, len(layers)) for name, layers in models.items()] == expected and len(expected) >= 8
