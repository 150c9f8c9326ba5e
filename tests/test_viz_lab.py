"""posenc_helpers.viz.lab: the lab's plots and the sweep demo, on a small made-up sweep with known numbers."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_helpers.lab import SCALINGS, SCHEMES, TASKS
from posenc_helpers.viz import lab as vl
from posenc_helpers.viz import new_figure

LENGTHS = np.arange(32, 257, 32)
FACTORS = np.arange(1, 9)


def fake_results():
    """Seeds 0 and 1; accuracy = 1/(index of length + 1) for seed 0 and that + 0.1 for seed 1; scaled = factor/10."""
    table = {}
    for seed in (0, 1):
        for task in TASKS:
            for scheme in SCHEMES:
                acc = 1.0 / (np.arange(8) + 1) + 0.1 * seed
                if scheme == "learned":
                    acc[1:] = np.nan
                entry = {"accuracy": acc, "beyond": acc}
                if scheme == "rope":
                    entry["grid_beyond"] = {}
                    for method in SCALINGS:
                        entry[method] = np.tile(FACTORS[:, None] / 10 + 0.01 * SCALINGS.index(method), (1, 8))
                        # past L: the same + 0.2 for seed 1, so its median and range tell seeds apart
                        entry["grid_beyond"][method] = entry[method] + 0.2 * seed
                table[(seed, task, scheme)] = entry
    return {"lengths": LENGTHS, "factors": FACTORS, "table": table}


def _shifted(entry, by):
    # a copy of a nested entry with every array of numbers moved by `by`
    if isinstance(entry, dict):
        return {k: _shifted(v, by) for k, v in entry.items()}
    return np.asarray(entry, dtype=float) + by


def with_far_seed(res, by=5.0):
    """``res`` with a third seed, 2: seed 0's numbers + ``by``, so the mean moves far and the median does not."""
    table = dict(res["table"])
    for (seed, task, scheme), entry in res["table"].items():
        if seed == 0:
            table[2, task, scheme] = _shifted(entry, by)
    return {**res, "table": table}


def middle(*values):
    # the median of three arrays, element by element, by sorting
    return np.array([sorted(column)[1] for column in zip(*(np.ravel(v) for v in values), strict=True)])


def test_accuracy_plot_draws_the_given_numbers_and_leaves_gaps_for_nan():
    fig, ax = new_figure()
    lines = vl.plot_accuracy_vs_length(ax, [32, 64, 128], {"learned": [1.0, np.nan, np.nan], "alibi": [1, 1, 0.5]}, 32)
    assert lines["alibi"].get_ydata().tolist() == [1, 1, 0.5]
    assert np.isnan(lines["learned"].get_ydata()[1])
    assert ax.get_xlabel() == "test length T (tokens)"


def test_sweep_figure_shows_the_median_over_seeds_and_moves_with_the_sliders():
    fig, h = vl.make_sweep_figure(fake_results(), length=96, factor=3)
    rope_line = [line for line in h["axes"][0].get_lines() if line.get_label() == "RoPE"][0]
    np.testing.assert_allclose(rope_line.get_ydata(), 1.0 / (np.arange(8) + 1) + 0.05)  # median (= mean) of seeds 0 and 1
    np.testing.assert_allclose(h["scaled"][("prev", "ntk")].get_ydata(), 0.3 + 0.01 + 0.1)  # past L, median
    readout = vl.update_sweep(h, 160, 5)
    assert float(h["cursor"][1].get_xdata()[0]) == 160.0
    np.testing.assert_allclose(h["scaled"][("first", "pi")].get_ydata(), 0.6)
    assert "T = 160 tokens (5 × L)" in readout and "s = 5" in readout and "past L" in readout
    # index 4 (T = 160): median 1/5 + 0.05 = 0.25, range 0.20-0.30, for every scheme but the learned table
    assert readout.count("<td>0.25 (0.20–0.30)</td>") == 2 * (len(SCHEMES) - 1) and readout.count("<td>—</td>") == 2
    assert "<td>0.60 (0.50–0.70)</td>" in readout  # PI at s = 5: 0.5 and 0.7
    assert "median (range) of 2 seeds" in readout
    at_l = vl.update_sweep(h, 32, 5)  # at L: accuracy over all positions, the grid's own numbers
    assert "over all positions" in at_l and "<td>0.50 (0.50–0.50)</td>" in at_l


def test_the_sweep_readout_has_a_row_per_scheme_and_rescaling_and_a_column_per_task():
    # "first" moved up by 0.01 everywhere, so a column showing the other task, or swapped columns, fail
    res = fake_results()
    res["table"] = {k: _shifted(e, 0.01) if k[1] == "first" else e for k, e in res["table"].items()}
    _, h = vl.make_sweep_figure(res, length=96, factor=3)
    readout = vl.update_sweep(h, 160, 5)
    assert TASKS == ("prev", "first")
    assert readout.count("<tr>") == 1 + len(SCHEMES) + 3 and readout.count("<th>") == 1 + len(TASKS)
    # T = 160 (index 4): 1/5 + 0.05 median, range 0.20-0.30; s = 5: 0.5 + 0.01 per rescaling (PI, NTK, YaRN), past L
    # 0.5 and 0.7 over the two seeds
    for name in ("NoPE", "sinusoidal", "RoPE", "ALiBi", "T5 bias", "RoPE + NoPE", "iRoPE"):
        assert f"<tr><td>{name}</td><td>0.25 (0.20–0.30)</td><td>0.26 (0.21–0.31)</td></tr>" in readout, name
    assert "<tr><td>learned table</td><td>—</td><td>—</td></tr>" in readout
    assert "<tr><td>RoPE+PI</td><td>0.60 (0.50–0.70)</td><td>0.61 (0.51–0.71)</td></tr>" in readout
    assert "<tr><td>RoPE+NTK</td><td>0.61 (0.51–0.71)</td><td>0.62 (0.52–0.72)</td></tr>" in readout
    assert "<tr><td>RoPE+YaRN</td><td>0.62 (0.52–0.72)</td><td>0.63 (0.53–0.73)</td></tr>" in readout


@pytest.mark.parametrize("kw, match", [({"length": 100, "factor": 2}, "length must be one of"),
                                       ({"length": 64, "factor": 9}, "factor must be one of")])
def test_sweep_update_refuses_values_that_were_not_precomputed(kw, match):
    _, h = vl.make_sweep_figure(fake_results())
    with pytest.raises(ValueError, match=match):
        vl.update_sweep(h, **kw)


def test_shipped_demo_steps_in_place():
    demo = vl.sweep_demo()
    demo.set_values(length=64, factor=2)
    before = demo.full_draws
    demo.controls["factor"].value = 3
    demo.controls["length"].value = 96
    assert demo.full_draws == before
    assert "T = 96 tokens" in demo.readout.value


def test_similarity_and_attention_plots_use_safe_colormaps():
    fig, (a, b) = new_figure(1, 2)
    image = vl.plot_similarity(a, np.eye(4), title="t")
    assert image.get_cmap().name == "RdBu_r" and image.get_clim() == (-1, 1)
    (im,) = vl.plot_attention_maps([b], [np.tril(np.ones((4, 4))) / 4], ["x"])
    assert im.get_cmap().name == "viridis"


def test_pair_usage_bars_have_the_given_heights():
    fig, ax = new_figure()
    bars = vl.plot_pair_usage(ax, [0.5, 0.3, 0.2], [6.3, 63, 628], 32, title="t")
    assert [round(b.get_height(), 3) for b in bars] == [0.5, 0.3, 0.2]


def test_headline_figure_plots_past_l_on_top_and_all_positions_below():
    res = fake_results()
    for entry in res["table"].values():
        entry["beyond"] = entry["accuracy"] * 0.5
    res = with_far_seed(res)
    fig = vl.make_accuracy_figure(res)
    top, bottom = fig.axes[0], fig.axes[2]
    # the median of the three seeds, the middle one by sorting: seed 1's 1/(i + 1) + 0.1 (halved past L)
    rows = [res["table"][s, "prev", "alibi"] for s in (0, 1, 2)]
    want = middle(*(r["accuracy"] for r in rows))
    np.testing.assert_allclose(want, 1.0 / (np.arange(8) + 1) + 0.1)
    line = {ln.get_label(): ln for ln in top.get_lines()}["ALiBi"]
    np.testing.assert_allclose(line.get_ydata(), middle(*(r["beyond"] for r in rows)))
    line = {ln.get_label(): ln for ln in bottom.get_lines()}["ALiBi"]
    np.testing.assert_allclose(line.get_ydata(), want)
    assert (line.get_ydata() < np.mean([r["accuracy"] for r in rows], 0) - 1).all()  # not the mean
    assert "past L" in top.get_title() and "all positions" in bottom.get_title()
    assert "median of 3 seeds, band: range" in fig._suptitle.get_text()


def _with_scaled_and_finetune(res):
    # scaled[m] (past L) = 0.1 · (index of m + 1) for seed 0 and + 0.2 for seed 1; fine-tuned after 100
    # steps = 0.5 + 0.1 · index of the method for seed 0, + 0.2 for seed 1 (other step counts: 0)
    methods = list(SCALINGS) + ["yarn_llama"]
    for (seed, _, scheme), entry in res["table"].items():
        if scheme != "rope":
            continue
        entry["scaled"] = {m: np.full(8, 0.1 * (i + 1) + 0.2 * seed) for i, m in enumerate(methods)}
        entry["finetune"] = {
            m: {"25": {"beyond": np.zeros(8)}, "50": {"beyond": np.zeros(8)},
                "100": {"beyond": np.full(8, 0.5 + 0.1 * i + 0.2 * seed)}}
            for i, m in enumerate(("none", "pi", "ntk", "yarn"))
        }
    return res


def test_scaling_figure_plots_past_l_with_both_yarn_thresholds():
    res = with_far_seed(_with_scaled_and_finetune(fake_results()))
    fig = vl.make_scaling_figure(res)
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    # the median of seeds 0, 1 and 2 (seed 0 + 5), by sorting: seed 1's 0.1 · (i + 1) + 0.2
    rows = [res["table"][s, "prev", "rope"] for s in (0, 1, 2)]
    for label, m, value in [("RoPE + PI, no fine-tuning", "pi", 0.3), ("RoPE + YaRN, LLaMA's thresholds", "yarn_llama", 0.6)]:
        want = middle(*(r["scaled"][m] for r in rows))
        np.testing.assert_allclose(want, value)
        np.testing.assert_allclose(lines[label].get_ydata(), want)
    np.testing.assert_allclose(lines["RoPE"].get_ydata(), middle(*(r["beyond"] for r in rows)))
    assert len(fig.axes[0].collections) == 1 + len(SCALINGS) + 1  # a range band per line
    assert fig.axes[0].get_ylabel() == "accuracy, positions past L"
    assert "median of 3 seeds, band: range" in fig._suptitle.get_text()


def test_finetune_figure_plots_the_100_step_runs_with_their_range():
    head = _with_scaled_and_finetune(fake_results())
    extra = {"lengths": np.array([32, 64, 128, 256]), "table": {}}
    for seed in (0, 1):
        entry = {"beyond": np.array([np.nan, 0.3, 0.2, 0.1]), "finetune": {
            m: {"100": {"beyond": np.full(4, 0.9 - 0.1 * i - 0.1 * seed)}} for i, m in enumerate(("none", "pi", "ntk", "yarn"))
        }}
        extra["table"][seed, "recall", "rope"] = entry
    head, extra = with_far_seed(head), with_far_seed(extra)
    fig = vl.make_finetune_figure(head, extra)
    assert len(fig.axes) == 3
    # the median of seeds 0, 1 and 2 (seed 0 + 5), by sorting
    first = {ln.get_label(): ln for ln in fig.axes[1].get_lines()}
    ntk = [head["table"][s, "first", "rope"]["finetune"]["ntk"]["100"]["beyond"] for s in (0, 1, 2)]
    np.testing.assert_allclose(first["NTK, fine-tuned"].get_ydata(), middle(*ntk))
    np.testing.assert_allclose(middle(*ntk), 0.5 + 0.2 + 0.2)  # seed 1's
    recall = {ln.get_label(): ln for ln in fig.axes[2].get_lines()}
    plain = [extra["table"][s, "recall", "rope"]["finetune"]["none"]["100"]["beyond"] for s in (0, 1, 2)]
    np.testing.assert_allclose(recall["plain RoPE, fine-tuned"].get_ydata(), middle(*plain))
    np.testing.assert_allclose(middle(*plain), 0.9)  # seed 0's: the middle of 0.8, 0.9 and 5.9
    np.testing.assert_allclose(recall["RoPE, no fine-tuning"].get_ydata()[1:], [0.3, 0.2, 0.1])
    assert "median of 3 seeds (recall: 3), band: range" in fig._suptitle.get_text()


def test_finetune_figure_adds_a_row_for_s_8_when_the_rows_hold_it():
    head = _with_scaled_and_finetune(fake_results())
    extra = {"lengths": np.array([32, 64, 128, 256]), "table": {}}
    tables = [head["table"], extra["table"]]
    for seed in (0, 1):
        extra["table"][seed, "recall", "rope"] = {"beyond": np.array([np.nan, 0.3, 0.2, 0.1]), "finetune": {
            m: {"100": {"beyond": np.full(4, 0.9)}} for m in ("none", "pi", "ntk", "yarn")}}
    for table in tables:
        for key, entry in table.items():
            if key[2] == "rope":
                for m in ("pi", "ntk", "yarn"):  # s = 8: the s = 4 number + 0.05
                    entry["finetune"][m + "_s8"] = {"100": {"beyond": entry["finetune"][m]["100"]["beyond"] + 0.05}}
    fig = vl.make_finetune_figure(head, extra)
    assert len(fig.axes) == 6
    top = {ln.get_label(): ln for ln in fig.axes[1].get_lines()}
    bottom = {ln.get_label(): ln for ln in fig.axes[4].get_lines()}
    np.testing.assert_allclose(bottom["NTK, fine-tuned"].get_ydata(), top["NTK, fine-tuned"].get_ydata() + 0.05)
    np.testing.assert_allclose(bottom["plain RoPE, fine-tuned"].get_ydata(), top["plain RoPE, fine-tuned"].get_ydata())
    assert "s = 8" in fig.axes[4].get_title() and "s = 4" in fig.axes[1].get_title()


def test_entropy_plot_draws_one_line_per_head_and_the_uniform_reference():
    fig, ax = new_figure()
    lengths = [32, 64, 128]
    # entropy[j, layer, head] = j + 10 * layer + head / 10: every line is known by hand
    entropy = np.array([[[j + 10 * layer + head / 10 for head in range(3)] for layer in range(2)] for j in range(3)])
    lines = vl.plot_entropy_vs_length(ax, lengths, entropy, [3.0, 3.5, 4.0], title="t")
    assert len(lines) == 2 * 3 + 1
    assert lines[(1, 2)].get_ydata().tolist() == [10.2, 11.2, 12.2]
    assert lines["uniform"].get_ydata().tolist() == [3.0, 3.5, 4.0]
    assert lines[(0, 0)].get_color() != lines[(1, 0)].get_color()
    assert lines[(0, 0)].get_linestyle() != lines[(1, 0)].get_linestyle()
    assert ax.get_xlabel() == "test length T (tokens)" and "nats" in ax.get_ylabel()
    with pytest.raises(ValueError, match="entropy must have shape"):
        vl.plot_entropy_vs_length(ax, lengths, entropy[:2], [3.0, 3.5])


def test_first_weight_plot_draws_each_variant_and_its_range():
    fig, ax = new_figure()
    weights = {"none": [0.9, 0.5, 0.2], "pi": [0.9, 0.9, np.nan]}
    spread = {"none": ([0.8, 0.4, 0.1], [1.0, 0.6, 0.3])}
    lines = vl.plot_first_weight(ax, [32, 64, 128], weights, 32, spread=spread)
    assert set(lines) == {"none", "pi"}
    assert lines["none"].get_ydata().tolist() == [0.9, 0.5, 0.2]
    assert np.isnan(lines["pi"].get_ydata()[2])
    assert len(ax.collections) == 1  # one shaded range, for the one variant given a spread
    assert ax.get_ylabel() == "attention weight on token 0" and "tokens" in ax.get_xlabel()


def test_similarity_by_offset_plot_draws_each_curve_against_the_offset():
    fig, ax = new_figure()
    lines = vl.plot_similarity_by_offset(ax, {"trained": [1.0, 0.5, -0.5], "start": [1.0, 0.0, 0.1]})
    assert lines["trained"].get_xdata().tolist() == [0, 1, 2]
    assert lines["start"].get_ydata().tolist() == [1.0, 0.0, 0.1]
    assert lines["trained"].get_color() != lines["start"].get_color()
    assert "positions" in ax.get_xlabel() and ax.get_ylim() == (-1.05, 1.05)
