"""posenc_helpers.viz.inference: the drawn data against the literal KV count, labels and units, the slider demo."""

from __future__ import annotations

import literal_kvcache as lit
import numpy as np
import pytest

from posenc_helpers.configs import bundled_configs, bundled_kv_fields
from posenc_helpers.demo import neighbour_value
from posenc_helpers.viz import inference as inf
from posenc_helpers.viz import new_figure
from posenc_helpers.viz import perlayer as pl


def literal_per_token(name, contexts):
    entry = lit.raw_models()[name]
    return [lit.literal_cache(entry, int(n))[1] / int(n) for n in contexts]


def test_the_barcode_rows_are_notebook_14s_and_every_line_is_one_of_them():
    names = inf.barcode_names()
    # 16's figure draws the 2025-26 group; 14's barcode draws it first, then the 2026 group
    assert names == list(bundled_configs("2025-26")) == list(pl._bundled_layers())[: len(names)]
    assert list(pl._bundled_layers())[len(names) :] == list(bundled_configs("2026"))
    fig = inf.make_kv_cache()
    left, right = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert [t.get_text() for t in left.get_yticklabels()] == names
    labels = [line.get_label() for line in right.get_lines() if not line.get_label().startswith("_")]
    assert labels == names + ["DeepSeek-V3, every head's K and V"]
    # each model's direct label names it (identical curves share one: OLMo 3.1 and EXAONE 4.0)
    texts = " ".join(t.get_text() for t in right.texts)
    assert all(name in texts for name in names) and "OLMo 3.1 32B Instruct = EXAONE 4.0 32B" in texts


def test_the_drawn_bytes_per_token_equal_the_literal_count():
    fig = inf.make_kv_cache()
    right = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"][1]
    lines = {line.get_label(): line for line in right.get_lines()}
    picks = np.arange(0, inf.CURVE_CONTEXTS.size, 25)
    for name in inf.barcode_names():
        x, y = lines[name].get_xdata(), lines[name].get_ydata()
        assert np.array_equal(x, inf.CURVE_CONTEXTS) and x[0] == 1024 and x[-1] == 1048576
        np.testing.assert_allclose(y[picks], literal_per_token(name, x[picks]), rtol=1e-12, err_msg=name)
    # the dotted twin: DeepSeek's naive path, 61 layers · 128 heads · (192 + 128) numbers · 2 bytes, per token
    f = bundled_kv_fields()["DeepSeek-V3"]["fields"]
    expanded = f["num_hidden_layers"] * f["num_attention_heads"] * (
        f["qk_nope_head_dim"] + f["qk_rope_head_dim"] + f["v_head_dim"]) * 2
    assert expanded == 61 * 40960 * 2
    assert np.all(lines["DeepSeek-V3, every head's K and V"].get_ydata() == expanded)


def test_bytes_per_token_axes_say_their_units():
    fig, ax = new_figure()
    curves = {"a": np.full(3, 4096.0), "b": np.array([8192.0, 4096.0, 2048.0]), "c": np.full(3, 4096.0)}
    lines = inf.plot_bytes_per_token(ax, curves, contexts=[1024, 2048, 4096])
    assert list(lines) == ["a", "b", "c"] and np.array_equal(lines["b"].get_ydata(), curves["b"])
    assert "tokens" in ax.get_xlabel() and "bytes" in ax.get_ylabel() and ax.get_title()
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert sorted(t.get_text() for t in ax.texts) == ["a = c", "b"]
    assert inf._binary(65536) == "64 KiB" and inf._tokens(131072) == "128K" and inf._tokens(2**20) == "1M"


def literal_demo_bytes(window, ratio, n):
    # the demo's model: Gemma 3 27B's 62 layers of 16 KV heads × 128 in bfloat16; layer i global when
    # (i + 1) mod (ratio + 1) = 0; a sliding layer keeps W − 1 tokens
    total = 0
    for i in range(62):
        held = n if (i + 1) % (ratio + 1) == 0 else min(n, window - 1)
        total += 2 * 16 * 128 * held * 2
    return total


def literal_reach(window, ratio, n):
    out, r = [], 0
    for i in range(62):
        r = n - 1 if (i + 1) % (ratio + 1) == 0 else min(r + window - 1, n - 1)
        out.append(r)
    return out


@pytest.mark.parametrize("window, ratio, context", [(1024, 5, 131072), (4096, 1, 8192), (384, 15, 786432),
                                                     (128, 0, 6144)])
def test_the_slider_draws_the_literal_cache_and_reach(window, ratio, context):
    demo = inf.kv_demo()
    demo.set_values(window=float(window), ratio=ratio, context=float(context))
    h = demo.handles
    n = h["contexts"]
    assert n[0] == 1000 and n[-1] == 1000000
    picks = np.arange(0, n.size, 15)
    assert h["mixed"].get_ydata()[picks].tolist() == [literal_demo_bytes(window, ratio, int(x)) for x in n[picks]]
    assert h["all_global"].get_ydata()[picks].tolist() == [literal_demo_bytes(window, 0, int(x)) for x in n[picks]]
    assert h["mark"].get_ydata()[0] == literal_demo_bytes(window, ratio, context)
    assert h["mark_global"].get_ydata()[0] == literal_demo_bytes(window, 0, context)
    assert h["reach"].get_ydata().tolist() == literal_reach(window, ratio, context)
    assert h["reach_sliding"].get_ydata().tolist() == literal_reach(window, 10**9, context)
    assert f"{context:,}" in demo.readout.value and f"{literal_reach(window, ratio, context)[-1]:,}" in demo.readout.value


def test_the_slider_default_is_gemma3_27b_itself():
    demo = inf.kv_demo()
    assert demo.values == {"window": 1024.0, "ratio": 5, "context": 131072.0}
    assert inf.DEMOS == {"kv": inf.kv_demo}
    f = bundled_kv_fields()["Gemma 3 27B"]["fields"]
    assert inf.demo_shape() == {"layers": f["num_hidden_layers"], "kv_heads": f["num_key_value_heads"],
                                "head_dim": f["head_dim"], "dtype": "bfloat16"}
    assert demo.handles["mark"].get_ydata()[0] == lit.literal_cache(lit.raw_models()["Gemma 3 27B"], 131072)[1]
    assert "52 sliding (window 1,024), 10 global" in demo.readout.value


def test_the_readout_gives_both_caches_at_one_precision():
    # at the default: (10 · 131,072 + 52 · 1,023) · 8,192 bytes = 10.41 GiB beside 62 · 2^30 bytes = 62 GiB, both by
    # kvcache.format_bytes (one decimal below 100 of a unit; a browser review saw "10.4059 GiB" beside "62 GiB")
    demo = inf.kv_demo()
    assert literal_demo_bytes(1024, 5, 131072) == (10 * 131072 + 52 * 1023) * 8192
    assert "<td>10.4 GiB</td><td>62.0 GiB</td>" in demo.readout.value
    demo.set_values(window=4096.0, ratio=1, context=8192.0)  # 31 · 8,192 + 31 · 4,095 tokens of 8,192 bytes
    assert "<td>2.9 GiB</td><td>3.9 GiB</td>" in demo.readout.value


def test_the_slider_labels_say_what_and_in_which_unit():
    demo = inf.kv_demo()
    labels = {name: c.description for name, c in demo.controls.items()}
    assert labels == {"window": "W (sliding window, tokens)", "ratio": "local per global (layers)",
                      "context": "n (context length, tokens)"}
    # the controls' labels are 16em wide (demo._CONTROL_STYLE): at the demo's 14px, "local:global (sliding layers pe…"
    # (31 characters) was cut off in the browser, so every label here stays shorter than that
    assert all(len(label) <= 28 for label in labels.values()), labels
    left, right = demo.fig.axes
    assert "tokens" in left.get_xlabel() and "bytes" in left.get_ylabel()
    assert "depth" in right.get_xlabel() and "tokens" in right.get_ylabel()


def test_every_slider_moves_the_figure_without_a_full_redraw():
    demo = inf.kv_demo()
    for name, control in demo.controls.items():
        before, draws, start = demo.image.value, demo.full_draws, control.value
        control.value = neighbour_value(control)
        assert demo.image.value != before, name
        control.value = start
        assert demo.full_draws == draws, name


def test_figures_are_registered_with_titles():
    from posenc_helpers.registry import figures

    assert set(inf.FIGURES) == {"16-kv-cache"}
    assert all(figures()[name] is make for name, make in inf.FIGURES.items())
    fig = inf.make_kv_slider_default()
    assert all(ax.get_title() for ax in fig.axes)
    assert fig.axes[0].get_lines()[2].get_ydata()[0] == literal_demo_bytes(1024, 5, 131072)
