"""posenc_helpers.viz.shipped: artist data against independent loops, the base demo driven kernel-free."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_helpers.configs import bundled_configs, config_summary
from posenc_helpers.viz import new_figure
from posenc_helpers.viz import shipped as sh


def literal_wavelengths(dim, base):
    return [2 * math.pi * base ** (2 * k / dim) for k in range(dim // 2)]


@pytest.mark.parametrize("base, length", [(500000.0, 8192.0), (10000.0, 4096.0), (1e6, 131072.0), (1000.0, 1000.0)])
def test_base_demo_moves_curve_line_and_markers(base, length):
    demo = sh.base_demo()
    demo.set_values(base=base, length=length)
    lam = literal_wavelengths(128, base)
    np.testing.assert_allclose(demo.handles["curve"].get_ydata(), lam, rtol=1e-12)
    over = [k for k, w in enumerate(lam) if w > length]
    assert list(demo.handles["above"].get_xdata()) == over
    assert demo.handles["length"].get_ydata()[0] == length
    assert f"{len(over)} of 64" in demo.readout.value


def test_base_demo_default_is_llama3():
    demo = sh.base_demo()
    assert demo.values == {"base": 500000.0, "length": 8192.0}
    assert "29 of 64 (k = 35 … 63)" in demo.readout.value
    assert sh.unfinished_pairs(128, 500000, 8192) == 29
    assert sh.DEMOS == {"base": sh.base_demo}


def test_model_wavelengths_plot_data():
    fig, ax = new_figure()
    lines = sh.plot_model_wavelengths(ax)
    assert list(lines) == list(bundled_configs())
    for name, line in lines.items():
        s = config_summary(bundled_configs()[name])
        ratio = [w / s["length"] for w in literal_wavelengths(s["rotary_dim"], s["base"])]
        np.testing.assert_allclose(line.get_ydata(), ratio, rtol=1e-12)
        assert sum(r > 1 for r in ratio) == s["never_turn"]
        assert f"{s['never_turn']}/{s['pairs']}" in line.get_label()
    assert ax.get_yscale() == "log" and ax.get_title()


def test_axial_scores_depend_on_offsets():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal(8), rng.standard_normal(8)
    scores = sh.axial_scores(q, k, span=4)
    assert scores.shape == (9, 9)
    from posenc_helpers.multiaxis import axial_rope_2d
    # entry [i, j]: q at (0, 0), k at (i − 4, j − 4); the same as q at (5, 7), k at (i + 1, j + 3)
    for i, j in [(0, 0), (4, 4), (8, 1), (2, 7)]:
        direct = axial_rope_2d(q, 5.0, 7.0) @ axial_rope_2d(k, i - 4 + 5.0, j - 4 + 7.0)
        assert np.isclose(scores[i, j], direct)


def test_figures_registered():
    assert set(sh.FIGURES) == {"11-model-wavelengths", "11-axial-scores"}
    fig = sh.FIGURES["11-axial-scores"]()
    assert any(a.get_label() == "<colorbar>" for a in fig.axes)
