"""posenc_helpers.viz.schemes: score helpers against literal loops, the figures, and the distance demo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal import literal_alibi_slopes as literal_paper_slopes
from literal import literal_rope

from posenc_helpers.viz import FONT_SIZE, new_figure
from posenc_helpers.viz import schemes as vs


def literal_sinusoid_score(delta, dim, base=10000.0):
    # PE(Δ)·PE(0) = Σ_k [sin(Δω_k)·0 + cos(Δω_k)·1]
    return sum(math.cos(delta / base ** (2 * k / dim)) for k in range(dim // 2))


# --- the score helpers ----------------------------------------------------------------------------


def test_sinusoid_scores_match_the_sum_of_cosines():
    for dim in (4, 64):
        got = vs.sinusoid_scores([0, 1, 7, 1000, 2048], dim)
        want = [literal_sinusoid_score(d, dim) for d in (0, 1, 7, 1000, 2048)]
        np.testing.assert_allclose(got, want, atol=1e-10)
    assert vs.sinusoid_scores([0], 64)[0] == pytest.approx(32.0)


def test_rope_scores_match_a_literal_loop():
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal(8), rng.standard_normal(8)
    got = vs.rope_scores(q, k, [0, 3, 250])
    for g, d in zip(got, (0, 3, 250), strict=True):
        want = sum(a * b for a, b in zip(literal_rope(q.tolist(), d), k.tolist(), strict=True))
        assert g == pytest.approx(want, abs=1e-10)


def test_learned_scores_stop_at_the_last_row():
    table = vs.learned_table(10, 4, seed=3)
    got = vs.learned_scores(table, [0, 4, 9, 10, 50])
    for g, d in zip(got[:3], (0, 4, 9), strict=True):
        assert g == pytest.approx(sum(table[d, i] * table[0, i] for i in range(4)))
    assert np.isnan(got[3:]).all()


def test_learned_table_is_seeded_and_ends_at_P():
    a, b = vs.learned_table(16, 8), vs.learned_table(16, 8)
    assert np.array_equal(a, b) and np.array_equal(a, vs.learned_table(16, 8, seed=0))
    assert a.shape == (16, 8)
    with pytest.raises(IndexError):
        a[16]
    # another seed is another table, sharing no entry
    c = vs.learned_table(16, 8, seed=1)
    assert not np.isclose(a, c).any()


@pytest.mark.parametrize("dim", [8, 64, 256])
def test_learned_table_has_the_scale_its_docstring_promises(dim):
    # entries Normal(0, 1/dim): E[p]·E[p] ≈ 1 and E[p]·E[q] ≈ 0 for p ≠ q (each off by about √(2/dim), √(1/dim))
    n = 4000
    table = vs.learned_table(n, dim, seed=7)
    assert abs(table.mean()) < 5 / math.sqrt(n * dim)
    assert abs(table.std() * math.sqrt(dim) - 1) < 0.02
    norms2 = np.einsum("pi,pi->p", table, table)
    assert abs(norms2.mean() - 1) < 0.035  # 4 standard errors for dim = 8
    assert abs(norms2.std() - math.sqrt(2 / dim)) < 0.1 * math.sqrt(2 / dim)
    cross = np.einsum("pi,pi->p", table[:-1], table[1:])
    assert abs(cross.mean()) < 5 / math.sqrt(n * dim)
    assert abs(cross.std() - math.sqrt(1 / dim)) < 0.1 * math.sqrt(1 / dim)


def test_naive_slopes_equal_the_paper_only_for_powers_of_two():
    for n in (1, 2, 4, 8, 16, 32):
        np.testing.assert_allclose(vs.naive_alibi_slopes(n), literal_paper_slopes(n))
    for n in (3, 6, 12, 20):
        assert not np.allclose(np.sort(vs.naive_alibi_slopes(n)), np.sort(literal_paper_slopes(n)))
    np.testing.assert_allclose(vs.naive_alibi_slopes(12), [2 ** (-8 * (h + 1) / 12) for h in range(12)])


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda: vs.learned_table(0, 4), ValueError, r"^n_positions must be a positive integer, got 0"),
        (lambda: vs.naive_alibi_slopes(2.5), TypeError, r"^n_heads must be a positive integer, got 2.5"),
        (lambda: vs.rope_scores([1.0, 0.0], [1.0, 0.0, 0.0], [1]), ValueError, r"^q and k must be vectors"),
        (lambda: vs.learned_scores(np.ones(3), [1]), ValueError, r"^table must have shape \(L, dim\)"),
        (lambda: vs.sinusoid_scores([float("nan")]), ValueError, r"^distances must be finite"),
    ],
)
def test_bad_input(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


# --- static pictures -------------------------------------------------------------------------------


def test_alibi_bias_heatmap_values_and_causal_mask():
    fig, axes = new_figure(1, 4, figsize=(12, 3))
    h = vs.plot_alibi_bias(axes, 6, 12, heads=(0, 7, 8, 11))
    slopes = literal_paper_slopes(12)
    for image, head in zip(h["images"], (0, 7, 8, 11), strict=True):
        data = image.get_array()
        for i in range(6):
            for j in range(6):
                if j > i:
                    assert data.mask[i, j], "future keys are masked"
                else:
                    assert data[i, j] == pytest.approx(-slopes[head] * (i - j))


def test_alibi_bias_panels_each_span_their_own_range():
    # one scale per head: from the head's own far corner −m·(seq_len − 1) up to 0, each with a labelled colorbar
    fig, axes = new_figure(2, 2)
    h = vs.plot_alibi_bias(axes, 12, 12, heads=(0, 7, 8, 11))
    slopes = literal_paper_slopes(12)
    for image, colorbar, head in zip(h["images"], h["colorbars"], (0, 7, 8, 11), strict=True):
        assert image.get_clim() == pytest.approx((-slopes[head] * 11, 0.0))
        assert colorbar.ax.get_ylabel() == "bias −m·|i − j|"
    # the gentlest head still uses the whole colour range: its corner is the darkest colour, the diagonal the lightest
    gentle = h["images"][1]
    assert gentle.norm(gentle.get_array()[11, 0]) == pytest.approx(0.0)
    assert gentle.norm(gentle.get_array()[5, 5]) == pytest.approx(1.0)


def test_alibi_bias_rejects_a_missing_head():
    fig, axes = new_figure(1, 2)
    with pytest.raises(ValueError, match=r"^heads must be in 0 … 7 for n_heads=8, got 8"):
        vs.plot_alibi_bias(axes, 4, 8, heads=(0, 8))


def test_slope_plot_shows_both_formulas():
    fig, ax = new_figure()
    h = vs.plot_alibi_slopes(ax, 12)
    np.testing.assert_allclose(h["paper"].get_ydata(), literal_paper_slopes(12))
    np.testing.assert_allclose(h["naive"].get_ydata(), [2 ** (-8 * (k + 1) / 12) for k in range(12)])


def test_learned_table_plot_marks_the_edge():
    fig, ax = new_figure()
    h = vs.plot_learned_table(ax, vs.learned_table(16, 8))
    assert h["edge"].get_xdata().tolist() == [15.5, 15.5]
    assert h["missing"].get_x() == 15.5 and h["missing"].get_width() == 8


def test_learned_table_plot_uses_a_symmetric_diverging_map():
    table = vs.learned_table(16, 8)
    fig, ax = new_figure()
    h = vs.plot_learned_table(ax, table)
    limit = max(abs(value) for row in table.tolist() for value in row)
    assert h["image"].get_cmap().name == "RdBu_r"
    assert h["image"].get_clim() == pytest.approx((-limit, limit))
    assert h["colorbar"].ax.get_ylabel() == "E[pos, i]"
    assert "untrained (random initialisation)" in ax.get_title()


def literal_mass_beyond(train_len, row_len, slope, content=None):
    # Σ_{Δ ≥ L} e^{c_Δ − mΔ} / Σ_Δ e^{c_Δ − mΔ}, one term at a time
    content = [0.0] * row_len if content is None else list(content)
    terms = [math.exp(content[d] - slope * d) for d in range(row_len)]
    return sum(terms[train_len:]) / sum(terms)


def test_alibi_mass_beyond_matches_a_literal_sum():
    slopes = literal_paper_slopes(8)
    got = vs.alibi_mass_beyond(512, 2048, 8)
    np.testing.assert_allclose(got, [literal_mass_beyond(512, 2048, m) for m in slopes], rtol=1e-9, atol=1e-300)
    content = np.random.default_rng(0).normal(size=40)
    got = vs.alibi_mass_beyond(10, 40, 4, content)
    np.testing.assert_allclose(got, [literal_mass_beyond(10, 40, m, content) for m in literal_paper_slopes(4)],
                               rtol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(1, 300), st.integers(1, 16))
def test_alibi_mass_beyond_is_a_share_and_below_the_no_bias_share(train_len, row_len, n_heads):
    mass = vs.alibi_mass_beyond(train_len, row_len, n_heads)
    assert mass.shape == (n_heads,)
    assert np.all(mass >= 0) and np.all(mass <= 1)
    # a bias that falls with distance can only move weight towards the query: below the uniform share
    assert np.all(mass <= max(row_len - train_len, 0) / row_len + 1e-12)
    if row_len <= train_len:
        assert np.all(mass == 0)


def test_alibi_mass_beyond_rejects_bad_input():
    with pytest.raises(ValueError, match="content must have shape \\(4,\\)"):
        vs.alibi_mass_beyond(2, 4, 1, content=[0.0, 1.0])
    with pytest.raises((ValueError, TypeError), match="row_len"):
        vs.alibi_mass_beyond(2, 0)


def test_mass_figure_draws_the_no_bias_share_and_the_heads():
    fig, ax = new_figure()
    h = vs.plot_alibi_mass_beyond(ax, 512, 2048, heads=(5, 6, 7))
    rows = h["rows"]
    np.testing.assert_allclose(h["uniform"].get_ydata(), [(t - 512) / t for t in rows])
    np.testing.assert_allclose(h["alibi"][2].get_ydata()[-1], literal_mass_beyond(512, 2048, 1 / 256), rtol=1e-9)
    # a log axis whose range holds every drawn mass, head 5's 3e-4 included (rows start at T = L + 1, mass > 0)
    assert ax.get_yscale() == "log" and rows[0] == 513
    low, high = ax.get_ylim()
    drawn = np.concatenate([line.get_ydata() for line in [*h["alibi"], h["uniform"]]])
    assert np.all(drawn > 0) and low <= drawn.min() and drawn.max() <= high
    assert h["alibi"][0].get_ydata()[-1] == pytest.approx(literal_mass_beyond(512, 2048, 1 / 64), rel=1e-9)
    with pytest.raises(ValueError, match="max_len must exceed train_len=512, got 512"):
        vs.plot_alibi_mass_beyond(ax, 512, 512)


# --- the distance demo -------------------------------------------------------------------------------


def test_distance_demo_moves_every_marker_to_the_right_value():
    demo = vs.distance_demo()
    q, k = demo.handles["q"], demo.handles["k"]
    slopes = [literal_paper_slopes(8)[h] for h in vs.ALIBI_HEADS]
    table = vs.learned_table(vs.MAX_DISTANCE + 1, vs.DIM)
    for distance, train_len in [(0, 512), (96, 128), (200, 128), (2048, 2048)]:
        demo.set_values(distance=distance, train_len=train_len)
        dots = demo.handles["dots"]
        assert dots["sinusoid"].get_ydata()[0] == pytest.approx(literal_sinusoid_score(distance, vs.DIM), abs=1e-9)
        rope_want = sum(a * b for a, b in zip(literal_rope(q.tolist(), distance), k.tolist(), strict=True))
        assert dots["rope"].get_ydata()[0] == pytest.approx(rope_want, abs=1e-10)
        for j, m in enumerate(slopes):
            assert dots[f"alibi{j}"].get_ydata()[0] == pytest.approx(-m * distance)
        inside = distance < train_len
        assert dots["learned"].get_visible() == inside
        if inside:
            assert dots["learned"].get_ydata()[0] == pytest.approx(float(table[distance] @ table[0]))
        line_x = demo.handles["learned_line"].get_xdata()
        assert len(line_x) == train_len and line_x[-1] == train_len - 1
        for span in demo.handles["spans"]:
            assert span.get_x() == train_len
            assert span.get_x() + span.get_width() == pytest.approx(vs.MAX_DISTANCE)
        for marker in demo.handles["markers"]:
            assert list(marker.get_xdata()) == [distance, distance]
        assert f"Δ = {distance} tokens, training length L = {train_len}" in demo.readout.value
        assert ("no row (IndexError)" in demo.readout.value) == (not inside)
        assert ("<b>beyond</b>" in demo.readout.value) == (not inside)


def test_distance_readout_compares_the_slowest_angle():
    demo = vs.distance_demo()
    demo.set_values(distance=1000, train_len=512)
    slowest = 10000 ** (-62 / 64)
    assert f"{slowest * 1000:.4f} (training reached {slowest * 511:.4f})" in demo.readout.value


def test_every_axis_is_labelled_and_titled():
    figures = [make() for make in vs.FIGURES.values()] + [vs.make_distance_figure()[0]]
    fig, ax = new_figure()
    vs.plot_learned_table(ax, vs.learned_table(8, 4))
    figures.append(fig)
    for fig in figures:
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>" or not ax.get_visible():
                continue
            assert ax.get_title()
            assert ax.get_ylabel() or ax.get_xlabel()
        for text in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text")):
            if text.get_text() and text.get_visible():
                assert text.get_fontsize() >= FONT_SIZE - 1, text.get_text()


def test_registries():
    assert set(vs.FIGURES) == {"08-alibi-bias", "08-alibi-mass-beyond", "08-score-vs-distance"}
    assert set(vs.DEMOS) == {"distance"}
