"""posenc_helpers.viz.long_context: artist data checked against independent loops, the demo driven kernel-free."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_helpers.viz import long_context as lc
from posenc_helpers.viz import new_figure


def literal_turns(dim, base, length, method, s):
    """Turns within L of each pair, straight from the formulas, one pair at a time."""
    out = []
    for k in range(dim // 2):
        w = base ** (-2 * k / dim)
        if method == "none":
            w2 = w
        elif method == "pi":
            w2 = w / s
        elif method == "ntk":
            w2 = (base * s ** (dim / (dim - 2))) ** (-2 * k / dim)
        else:  # yarn, the paper's ramp with α = 1, β = 32
            r = length * w / (2 * math.pi)
            gamma = min(max((r - 1) / 31, 0.0), 1.0)
            w2 = (1 - gamma) * w / s + gamma * w
        out.append(length * w2 / (2 * math.pi))
    return out


@pytest.mark.parametrize("s", [1.0, 2.5, 8.0, 32.0])
def test_turns_demo_moves_every_line_to_the_right_values(s):
    demo = lc.turns_demo()
    demo.controls["factor"].value = s
    dim, base, length = lc.DEFAULT_DIM, lc.DEFAULT_BASE, lc.DEFAULT_LENGTH
    for method in ("pi", "ntk", "yarn"):
        got = demo.handles["lines"][method].get_ydata()
        np.testing.assert_allclose(got, literal_turns(dim, base, length, method, s), rtol=1e-12)
    original = literal_turns(dim, base, length, "none", s)
    np.testing.assert_allclose(demo.handles["limit"].get_ydata(), np.array(original) / s, rtol=1e-12)
    assert f"s = {s:g}" in demo.readout.value
    assert f"{s * length:,.0f} tokens" in demo.readout.value


def literal_unseen(dim, base, length, method, s):
    count = 0
    original = literal_turns(dim, base, length, "none", s)
    scaled = literal_turns(dim, base, length, method, s)
    for r, r2 in zip(original, scaled, strict=True):
        if r < 1 and s * r2 > r * (1 + 1e-9):
            count += 1
    return count


def test_turns_readout_counts_unseen_pairs():
    demo = lc.turns_demo()
    demo.controls["factor"].value = 8.0
    html = demo.readout.value
    dim, base, length = lc.DEFAULT_DIM, lc.DEFAULT_BASE, lc.DEFAULT_LENGTH
    never = sum(r < 1 for r in literal_turns(dim, base, length, "none", 8.0))
    # pairs k with 4096·10000^(−2k/128) < 2π: k ≥ 46, so 18 of the 64
    assert never == 18
    assert f"(of {never})" in html
    rows = html.split("<tr>")[2:]
    counts = [int(row.split("<td>")[3].split("<")[0]) for row in rows]
    assert counts == [literal_unseen(dim, base, length, m, 8.0) for m in ("none", "pi", "ntk", "yarn")]
    assert counts == [18, 0, 17, 0]
    firsts = [float(row.split("<td>")[2].split("<")[0]) for row in rows]
    assert firsts == pytest.approx([651.9, 81.5, 651.9, 651.9], abs=0.05)


def test_demo_reset_and_static_parts():
    demo = lc.turns_demo()
    demo.controls["factor"].value = 3.0
    demo.controls["factor"].value = 8.0
    np.testing.assert_allclose(
        demo.handles["lines"]["pi"].get_ydata()[0], lc.DEFAULT_LENGTH / (2 * math.pi * 8), rtol=1e-12
    )
    ax = demo.fig.axes[0]
    assert ax.get_yscale() == "log"
    assert "(turns)" in ax.get_ylabel() and ax.get_xlabel() and ax.get_title()
    for artist in [*demo.handles["lines"].values(), demo.handles["limit"]]:
        assert artist.get_animated()
    # the original ω is the thin solid black line, static, with the unscaled turns L·ω/2π; NTK is the dashed one
    original = demo.handles["original"]
    assert (original.get_color(), original.get_linestyle(), original.get_label()) == ("black", "-", "original ω")
    assert not original.get_animated() and original.get_linewidth() < demo.handles["lines"]["ntk"].get_linewidth()
    omega = [10000.0 ** (-2 * k / lc.DEFAULT_DIM) for k in range(lc.DEFAULT_DIM // 2)]
    np.testing.assert_allclose(original.get_ydata(), [lc.DEFAULT_LENGTH * w / (2 * math.pi) for w in omega], rtol=1e-12)
    assert demo.handles["lines"]["ntk"].get_linestyle() == "--" and demo.handles["lines"]["pi"].get_linestyle() == "-"
    assert "turns" in lc.DEMOS and lc.DEMOS["turns"] is lc.turns_demo


def test_demo_rejects_bad_factor():
    demo = lc.turns_demo()
    with pytest.raises(ValueError, match="factor .* must be >= 1"):
        lc.update_turns(demo.handles, 0.5)


def test_yarn_ramp_plot_data():
    fig, ax = new_figure()
    h = lc.plot_yarn_ramp(ax, dim=128, base=10000.0, original_max_position=4096)
    wavelength = [2 * math.pi * 10000.0 ** (2 * k / 128) for k in range(64)]
    np.testing.assert_allclose(h["paper"].get_xdata(), wavelength, rtol=1e-12)
    gamma = [min(max((4096 / lam - 1) / 31, 0.0), 1.0) for lam in wavelength]
    np.testing.assert_allclose(h["paper"].get_ydata(), gamma, rtol=1e-12, atol=1e-15)
    # reference code: low = ⌊d(32)⌋, high = ⌈d(1)⌉ with d(r) = 128·ln(4096/(2πr))/(2 ln 10000)
    low = math.floor(128 * math.log(4096 / (2 * math.pi * 32)) / (2 * math.log(10000)))
    high = math.ceil(128 * math.log(4096 / (2 * math.pi)) / (2 * math.log(10000)))
    assert (low, high) == (20, 46)
    gamma_index = [1 - min(max((k - low) / (high - low), 0.0), 1.0) for k in range(64)]
    np.testing.assert_allclose(h["index"].get_ydata(), gamma_index, rtol=1e-12, atol=1e-15)
    assert [line.get_xdata()[0] for line in h["cutoffs"]] == [4096 / 32, 4096, 4096 / 4]
    assert ax.get_xscale() == "log"
    assert "(tokens)" in ax.get_xlabel() and "gamma" in ax.get_ylabel() and "unitless" not in ax.get_ylabel()
    assert ax.get_title()


def literal_llama3_gamma(dim, base, length, low, high):
    """Llama 3.1's blend per pair, written as its rule reads (λ against L/high and L/low), one pair at a time."""
    out = []
    for k in range(dim // 2):
        lam = 2 * math.pi * base ** (2 * k / dim)
        if lam < length / high:
            out.append(1.0)
        elif lam > length / low:
            out.append(0.0)
        else:
            out.append((length / lam - low) / (high - low))
    return out


@pytest.mark.parametrize("low, high", [(1.0, 4.0), (2.0, 8.0), (0.5, 3.0)])
def test_yarn_ramp_plot_shows_llama3_as_the_paper_ramp_with_its_cutoffs(low, high):
    fig, ax = new_figure()
    h = lc.plot_yarn_ramp(ax, dim=128, base=10000.0, original_max_position=4096, llama3=(low, high))
    expected = literal_llama3_gamma(128, 10000.0, 4096, low, high)
    np.testing.assert_allclose(h["llama3"].get_ydata(), expected, rtol=1e-9, atol=1e-12)
    # the paper's YaRN ramp with α = low, β = high: clamp((L/λ − α)/(β − α), 0, 1)
    paper = [min(max((4096 / lam - low) / (high - low), 0.0), 1.0) for lam in h["wavelength"]]
    np.testing.assert_allclose(h["gamma_llama3"], paper, rtol=1e-9, atol=1e-12)
    assert h["cutoffs"][-1].get_xdata()[0] == 4096 / high
    assert "llama3" in h["llama3"].get_label()


def test_yarn_ramp_plot_without_llama3():
    fig, ax = new_figure()
    h = lc.plot_yarn_ramp(ax, llama3=None)
    assert h["llama3"] is None and h["gamma_llama3"] is None and len(h["cutoffs"]) == 2
    assert "llama3" not in ax.get_title()


def test_turns_within_and_unseen_pairs():
    np.testing.assert_allclose(lc.turns_within([1.0, 0.5], 10), [10 / (2 * math.pi), 5 / (2 * math.pi)])
    # a pair that wrapped in training (ω = 1, L = 100) never counts, however far it is pushed
    assert lc.unseen_pairs([1.0], [1.0], 10.0, 100).size == 0
    with pytest.raises(ValueError, match="omega must be finite"):
        lc.turns_within([np.nan], 10)


def test_figures_registered():
    assert set(lc.FIGURES) == {"09-yarn-ramp"}
    fig = lc.FIGURES["09-yarn-ramp"]()
    assert len(fig.axes) == 1


def test_every_method_visible_and_directly_labelled():
    demo = lc.turns_demo()
    lines, labels, limit = demo.handles["lines"], demo.handles["labels"], demo.handles["limit"]
    # PI lies on the limit: the limit is drawn wide and underneath, PI narrower on top
    assert limit.get_zorder() < min(line.get_zorder() for line in lines.values())
    assert limit.get_linewidth() > 2 * lines["pi"].get_linewidth()
    # the three methods have different line styles, so overlapping stretches still show both
    assert len({str(lc.METHOD_STYLE[m][2]) for m in lines}) == 3
    assert len({str(line._dash_pattern) for line in lines.values()}) == 3  # what matplotlib draws
    for factor in (2.0, 8.0, 32.0):
        demo.controls["factor"].value = factor
        for method, text in labels.items():
            assert text.get_text() == lc.METHOD_STYLE[method][0].split(":")[0]
            x, y = text.get_position()
            on_line = lines[method].get_ydata()[int(x)]
            # the label sits next to its own line, at the pair LABEL_PAIR gives
            assert x == lc.LABEL_PAIR[method] and 1.7 < max(y / on_line, on_line / y) < 1.9
    # no cell breaks over two lines (the readout's style sheet), while its headers may wrap to fit a projector
    # (the browser test measures it at 1,024 px)
    from posenc_helpers.demo import READOUT_CSS

    assert "posenc-readout" in demo.readout._dom_classes and ".posenc-readout td { white-space: nowrap; }" in READOUT_CSS
    assert "white-space:nowrap" not in demo.readout.value
