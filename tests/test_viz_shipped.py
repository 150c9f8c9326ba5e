"""posenc_helpers.viz.shipped: artist data against independent loops, the base demo driven kernel-free."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_helpers.viz import new_figure
from posenc_helpers.viz import shipped as sh


def literal_wavelengths(dim, base):
    return [2 * math.pi * base ** (2 * k / dim) for k in range(dim // 2)]


@pytest.mark.parametrize("base, length", [(500000.0, 8192.0), (10000.0, 4096.0), (1e6, 131072.0), (1000.0, 1024.0)])
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


#: Per bundled config, from its source file (not from config_summary): rotated dims, base, and the length L the
#: reader compares with (original_max_position_embeddings where the scaling names one, else max_position_embeddings).
PINNED = {
    "Llama 2 7B": (128, 10000.0, 4096),         # head_dim 128, rope_theta 10000.0, max_position_embeddings 4096
    "Llama 3.1 8B": (128, 500000.0, 8192),      # 4096/32, rope_theta 500000.0, original_max_position_embeddings 8192
    "Code Llama 7B": (128, 1e6, 16384),         # 4096/32, rope_theta 1000000, max_position_embeddings 16384
    "Mistral 7B": (128, 10000.0, 32768),        # 4096/32, rope_theta 10000.0, declared context 32768
    "Qwen2.5 7B": (128, 1e6, 131072),           # 3584/28, rope_theta 1000000.0, declared context 131072
    "GPT-NeoX-20B": (24, 10000.0, 2048),        # int(6144/64 × 0.25), rotary_emb_base 10000, 2048
    "GPT-J-6B": (64, 10000.0, 2048),            # rotary_dim 64, base fixed at 10000 in modeling_gptj, n_positions
    "gpt-oss-20b": (64, 150000.0, 4096),        # head_dim 64, rope_theta 150000, yarn from 4096
    "Phi-3-mini 128k": (96, 10000.0, 4096),     # 3072/32, rope_theta 10000.0, original_max_position_embeddings 4096
}
#: The counts those give, worked out by hand from k > (D/2)·log_base(L/2π), for the notebook's table.
PINNED_NEVER_TURN = {"Llama 2 7B": 18, "Llama 3.1 8B": 29, "Code Llama 7B": 27, "Mistral 7B": 4, "Qwen2.5 7B": 17,
                     "GPT-NeoX-20B": 4, "GPT-J-6B": 11, "gpt-oss-20b": 14, "Phi-3-mini 128k": 14}


def test_model_wavelengths_plot_data():
    fig, ax = new_figure()
    lines = sh.plot_model_wavelengths(ax)
    assert list(lines) == list(sh.MODEL_NAMES) == list(PINNED)
    for name, line in lines.items():
        dim, base, length = PINNED[name]
        ratio = [w / length for w in literal_wavelengths(dim, base)]
        np.testing.assert_allclose(line.get_ydata(), ratio, rtol=1e-12)
        never = sum(r > 1 for r in ratio)
        # the bound k > (D/2)·log_base(L/2π) counts the same pairs
        assert never == dim // 2 - 1 - math.floor(dim / 2 * math.log(length / (2 * math.pi)) / math.log(base))
        assert never == PINNED_NEVER_TURN[name]
        assert f"{name}: {never} of {dim // 2} (L = {length:,})" == line.get_label()
    assert ax.get_yscale() == "log" and "each label counts them" in ax.get_title()


def test_model_wavelengths_distinct_styles_and_direct_labels():
    fig, ax = new_figure()
    lines = sh.plot_model_wavelengths(ax)
    styles = {(line.get_color(), line.get_marker()) for line in lines.values()}
    assert len({c for c, _ in styles}) == len({m for _, m in styles}) == len(lines) == 9
    assert set(sh.TOL_MUTED) == {line.get_color() for line in lines.values()}
    texts = [t.get_text() for t in ax.texts]
    assert all(line.get_label() in texts for line in lines.values())   # every line labelled on the axes
    assert ax.get_legend() is None
    # the labels do not overlap: at least 1/17 of the log axis apart
    low, high = np.log10(ax.get_ylim())
    labels = {line.get_label() for line in lines.values()}
    spots = sorted(np.log10(t.get_position()[1]) for t in ax.texts if t.get_text() in labels)
    assert len(spots) == 9 and 10 ** spots[-1] < ax.get_ylim()[1]
    assert min(np.diff(spots)) >= (high - low) / 17 - 1e-9


def test_model_wavelengths_refuses_too_many_lines():
    configs = {f"m{i}": {"head_dim": 8, "max_position_embeddings": 100} for i in range(10)}
    with pytest.raises(ValueError, match="at most 9 models"):
        sh.plot_model_wavelengths(new_figure()[1], configs)


def test_mrope_figure_data():
    fig, ax = new_figure()
    lines = sh.plot_mrope_sections(ax)
    assert [list(lines[a].get_xdata()[[0, -1]]) for a in "thw"] == [[0, 15], [16, 39], [40, 63]]
    np.testing.assert_allclose(lines["h"].get_ydata(), [10000 ** (-2 * k / 128) for k in range(16, 40)], rtol=1e-12)
    fig, ax = new_figure()
    out = sh.plot_mrope_ids(ax)
    # text ×3, image 4 × 6 patches → 2 × 3 tokens from id 3, then text from 5 + 1 = 6
    assert out["ids"].tolist() == [[0, 1, 2, 3, 3, 3, 3, 3, 3, 6, 7], [0, 1, 2, 3, 3, 3, 4, 4, 4, 6, 7],
                                   [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7]]
    assert list(out["w"].get_ydata()) == out["ids"][2].tolist()


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
    assert set(sh.FIGURES) == {"11-model-wavelengths", "11-axial-scores", "11-mrope-ids"}
    fig = sh.FIGURES["11-axial-scores"]()
    assert any(a.get_label() == "<colorbar>" for a in fig.axes)
