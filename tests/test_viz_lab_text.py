"""posenc_helpers.viz.lab_text: the plots of the lab on real text, on a small made-up sweep with known numbers."""

from __future__ import annotations

import numpy as np

from posenc_helpers.lab.model import SCHEMES
from posenc_helpers.viz import lab_text as vt
from posenc_helpers.viz import new_figure

LENGTHS = [64, 128, 256, 512]


def fake_results():
    """Seeds 0 and 1: seed 0 gives 2 + index of the length, seed 1 that + 0.2; learned NaN past L."""
    bits, by_pos = {}, {}
    for scheme in SCHEMES:
        b = np.stack([2.0 + np.arange(4), 2.2 + np.arange(4)])
        p = np.stack([np.linspace(3, 2, 512), np.linspace(3.2, 2.2, 512)])
        if scheme == "learned":
            b[:, 1:] = np.nan
            p[:] = np.nan
        bits[scheme], by_pos[scheme] = b, p
    scaled = {m: np.stack([np.full(4, 2.5), np.full(4, 2.7)]) for m in ("pi", "ntk", "yarn")}
    # fine-tuned: seed 0 gives 3 + k/10 for method k (plain, pi, ntk, yarn), seed 1 that + 0.2
    tuned = {m: np.stack([np.full(4, 3 + k / 10), np.full(4, 3.2 + k / 10)]) for k, m in enumerate(
        ("plain", "pi", "ntk", "yarn"))}
    return {
        "defaults": {"train_len": 64}, "lengths": LENGTHS, "seeds": [0, 1], "unigram_bits": 4.9,
        "bits": bits, "by_position": by_pos, "scaled": scaled, "by_position_length": 512,
        "finetuned": tuned, "finetune": {"length": 256, "steps": 100},
    }


def test_summarise_is_median_min_max_over_seeds_and_keeps_nan():
    m, lo, hi = vt.summarise(fake_results()["bits"]["learned"])
    assert m[0] == 2.1 and lo[0] == 2.0 and hi[0] == 2.2 and np.isnan(m[1:]).all()


def test_summarise_takes_the_median_not_the_mean():
    # three seeds, one far off: the middle one by sorting, not the mean
    rng = np.random.default_rng(0)
    bits = rng.normal(3.0, 0.1, size=(3, 5))
    bits[2] += 5.0
    m, lo, hi = vt.summarise(bits)
    for j in range(5):
        col = sorted(bits[:, j].tolist())
        assert m[j] == col[1] and lo[j] == col[0] and hi[j] == col[2]
    assert (m < bits.mean(0) - 1.0).all()


def test_bits_plot_draws_the_given_numbers_with_units():
    fig, ax = new_figure()
    lines = vt.plot_bits_vs_length(ax, LENGTHS, {"rope": [2.0, 2.5, 3.0, 4.0]}, 64, unigram=4.9)
    assert lines["rope"].get_ydata().tolist() == [2.0, 2.5, 3.0, 4.0]
    assert "characters" in ax.get_xlabel() and "bits per character" in ax.get_ylabel()


def test_figures_draw_the_median_over_seeds():
    res = fake_results()
    fig = vt.make_bits_figure(res)
    ax = fig.axes[0]
    ys = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    np.testing.assert_allclose(ys["RoPE"], [2.1, 3.1, 4.1, 5.1])
    fig = vt.make_position_figure(res)
    ys = {line.get_label(): line.get_ydata() for line in fig.axes[0].get_lines()}
    assert "learned table" not in ys and np.isclose(ys["ALiBi"][0], 3.1)


def test_finetune_figure_draws_the_median_of_each_fine_tuned_method():
    fig = vt.make_finetune_figure(fake_results())
    right = {line.get_label(): line.get_ydata() for line in fig.axes[1].get_lines()}
    for k, m in enumerate(("plain", "pi", "ntk", "yarn")):
        np.testing.assert_allclose(right[vt.FINETUNE_STYLE[m][0]], 3.1 + k / 10)
    left = {line.get_label() for line in fig.axes[0].get_lines()}
    assert {"RoPE", "ALiBi", "RoPE + PI, no fine-tuning"} <= left and "RoPE, fine-tuned" not in left
    assert "100 steps" in fig.axes[1].get_title() and "256" in fig.axes[1].get_title()
    assert len(fig.axes) == 2  # no fine-tunes for a longer target given: two panels


def test_finetune_figure_draws_the_fine_tunes_with_s_for_16L_on_a_third_panel():
    targets = {m: np.stack([np.full(4, 2.5 + k / 10), np.full(4, 2.7 + k / 10)]) for k, m in enumerate(("pi", "ntk", "yarn"))}
    fig = vt.make_finetune_figure(fake_results(), targets)
    third = {line.get_label(): line.get_ydata() for line in fig.axes[2].get_lines()}
    for k, m in enumerate(("pi", "ntk", "yarn")):
        np.testing.assert_allclose(third[vt.FINETUNE_STYLE[m][0]], 2.6 + k / 10)
    np.testing.assert_allclose(third["ALiBi"], [2.1, 3.1, 4.1, 5.1])
    assert "s = 16" in fig.axes[2].get_title() and fig.axes[2].get_ylabel() == ""


def fake_context():
    """Seeds 0 and 1: gain −k/100 (seed 0) and −k/100 − 0.02 (seed 1) in block k; learned NaN; sliding 2.4, 2.5."""
    schemes = ("none", "learned", "sinusoidal", "rope", "alibi", "t5")
    gain, sliding, plain = {}, {}, {}
    for s in schemes:
        g = np.stack([-np.arange(8) / 100, -np.arange(8) / 100 - 0.02])
        sl = np.stack([np.full(5, 2.4), np.full(5, 2.5)])
        pl = np.stack([2.6 - np.arange(5) / 20, 2.7 - np.arange(5) / 20])
        if s == "learned":
            g[:] = np.nan
            sl[:, 1:] = np.nan
            pl[:, 1:] = np.nan
        gain[s], sliding[s], plain[s] = g, sl, pl
    return {"defaults": {"train_len": 64}, "seeds": [0, 1], "lengths": [64, 128, 256, 512, 1024],
            "gain": gain, "sliding": sliding, "nonoverlapping": plain}


def test_context_figure_draws_the_median_gain_at_block_middles_and_leaves_out_the_learned_table():
    fig = vt.make_context_figure(fake_context())
    left = {line.get_label(): line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")}
    assert "learned table" not in left and {"ALiBi", "T5 bias", "RoPE"} <= set(left)
    np.testing.assert_allclose(left["ALiBi"].get_ydata(), -np.arange(8) / 100 - 0.01)
    np.testing.assert_allclose(left["ALiBi"].get_xdata(), (np.arange(8) + 0.5) * 64)
    middle = {line.get_label() for line in fig.axes[1].get_lines() if not line.get_label().startswith("_")}
    assert middle == {"NoPE", "ALiBi", "T5 bias"}
    right = {line.get_label(): line.get_ydata() for line in fig.axes[2].get_lines() if not line.get_label().startswith("_")}
    np.testing.assert_allclose(right["ALiBi, sliding"], 2.45)
    np.testing.assert_allclose(right["ALiBi, non-overlapping"], 2.65 - np.arange(5) / 20)
    assert set(right) == {"ALiBi, sliding", "ALiBi, non-overlapping"}
    for ax in fig.axes:
        assert "characters" in ax.get_xlabel() and "bits per character" in ax.get_ylabel() and ax.get_title()
