"""posenc_helpers.viz.why: binary codes, step sizes, the shuffle figure and the counter demo.

Expected values come from Python's own integer formatting (bits), from the
literal PE loop in tests/literal.py, and from the literal attention loop in
tests/test_why.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal import literal_pe
from test_why import literal_attention

from posenc_helpers import sinusoidal
from posenc_helpers.attention import embed_words, random_head
from posenc_helpers.viz import FONT_SIZE, new_figure, why


def literal_bits(pos, n_bits):
    """Bits of pos, least significant first, read off Python's binary string."""
    text = format(pos, f"0{n_bits}b")
    return [float(c) for c in reversed(text)]


# --- binary_code and step_sizes -----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(n_bits=st.integers(1, 12), data=st.data())
def test_binary_code_matches_the_binary_string(n_bits, data):
    pos = data.draw(st.integers(0, 2**n_bits - 1))
    assert why.binary_code(pos, n_bits).tolist() == literal_bits(pos, n_bits)


def test_every_position_has_its_own_code():
    codes = why.binary_code(np.arange(128), 7)
    assert len({tuple(row) for row in codes.tolist()}) == 128


def test_bit_steps_count_the_flipped_bits():
    steps = why.step_sizes(why.binary_code(np.arange(128), 7))
    for pos in range(1, 128):
        flipped = sum(a != b for a, b in zip(literal_bits(pos, 7), literal_bits(pos - 1, 7), strict=True))
        assert steps[pos - 1] == pytest.approx(math.sqrt(flipped))
    assert steps[31] == pytest.approx(math.sqrt(6)) and steps[63] == pytest.approx(math.sqrt(7))


def test_sinusoid_steps_are_the_same_everywhere():
    steps = why.step_sizes(sinusoidal(np.arange(500), 16))
    want = math.sqrt(sum((a - b) ** 2 for a, b in zip(literal_pe(1, 16), literal_pe(0, 16), strict=True)))
    np.testing.assert_allclose(steps, want, rtol=1e-9)


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda: why.binary_code(-1, 4), ValueError, r"^pos must hold integers from 0 to 2\^4 − 1 = 15, got -1"),
        (lambda: why.binary_code(16, 4), ValueError, r"^pos must hold integers from 0 to 2\^4 − 1 = 15, got 16"),
        (lambda: why.binary_code(2.5, 4), ValueError, r"^pos must hold integers"),
        (lambda: why.binary_code(3, 0), ValueError, r"^n_bits must be a positive integer, got 0"),
        (lambda: why.binary_code("3", 4), TypeError, r"^pos must be a number"),
        (lambda: why.step_sizes([1.0, 2.0]), ValueError, r"^codes must have shape \(positions ≥ 2, width\)"),
    ],
)
def test_bad_input(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


# --- the shuffle figure ----------------------------------------------------------------------------


def test_shuffle_panels_show_the_literal_outputs():
    fig, axes = new_figure(2, 2)
    h = why.plot_shuffle(axes)
    w_q, w_k, w_v = random_head(why.D_MODEL, why.D_HEAD, 0)
    for r, causal in enumerate((False, True)):
        for c, sentence in enumerate(why.SENTENCES):
            _, want = literal_attention(embed_words(sentence, why.D_MODEL), w_q, w_k, w_v, causal)
            np.testing.assert_allclose(h["outputs"][r][c], want, rtol=1e-12)
            np.testing.assert_allclose(h["images"][2 * r + c].get_array(), want, rtol=1e-12)
            assert [t.get_text() for t in axes[r, c].get_yticklabels()] == sentence.split()
    no_mask, causal = h["outputs"]
    # no mask: "dog" (row 0 / row 2), "bites" (1 / 1) and "man" (2 / 0) keep their rows
    np.testing.assert_allclose(no_mask[0][[0, 1, 2]], no_mask[1][[2, 1, 0]])
    # causal: the first two words change, only the last word (which sees all three) agrees with the unmasked one
    assert not np.allclose(causal[0][0], causal[1][2]) and not np.allclose(causal[0][1], causal[1][1])
    np.testing.assert_allclose(causal[0][2], no_mask[0][2])


def test_shuffle_needs_a_matching_grid():
    fig, axes = new_figure(2, 3)
    with pytest.raises(ValueError, match=r"^axes must be a 2 × 2 grid for 2 sentences"):
        why.plot_shuffle(axes)


# --- the counter figure and demo ---------------------------------------------------------------------


def test_counter_figure_draws_the_bits_and_the_encoding():
    fig, handles = why.make_counter_figure(pos=5)
    image_bits, image_pe = handles["images"]
    for pos in (0, 5, 100, 127):
        assert image_bits.get_array()[:, pos].tolist() == literal_bits(pos, why.N_BITS)
        np.testing.assert_allclose(image_pe.get_array()[:, pos], literal_pe(pos, why.DIM), atol=1e-12)
    assert [b.get_height() for b in handles["bars_bits"]] == literal_bits(5, why.N_BITS)
    np.testing.assert_allclose([b.get_height() for b in handles["bars_pe"]], literal_pe(5, why.DIM), atol=1e-12)
    np.testing.assert_allclose(handles["prev_pe"].get_ydata(), literal_pe(4, why.DIM), atol=1e-12)
    assert image_bits.get_cmap().name == "cividis" and image_pe.get_cmap().name == "RdBu_r"


def test_counter_demo_moves_every_artist():
    demo = why.counter_demo()
    assert demo.values == {"pos": why.DEFAULT_POS}
    for pos in (1, 8, 32, 64, 127, 0):
        demo.set_values(pos=pos)
        h = demo.handles
        for marker in h["markers"]:
            assert list(marker.get_xdata()) == [pos, pos]
        assert [b.get_height() for b in h["bars_bits"]] == literal_bits(pos, why.N_BITS)
        np.testing.assert_allclose([b.get_height() for b in h["bars_pe"]], literal_pe(pos, why.DIM), atol=1e-12)
        assert h["prev_bits"].get_visible() == (pos > 0)
        binary = format(pos, f"0{why.N_BITS}b")
        assert f"<td>{binary}</td>" in demo.readout.value and "binary (bit 6 … bit 0)" in demo.readout.value
        if pos > 0:
            assert h["prev_bits"].get_ydata().tolist() == literal_bits(pos - 1, why.N_BITS)
            flipped = sum(a != b for a, b in zip(binary, format(pos - 1, f"0{why.N_BITS}b"), strict=True))
            assert f"bits flipped since pos − 1</td><td>{flipped}<" in demo.readout.value
            assert f"<td>{math.sqrt(flipped):.3f}</td>" in demo.readout.value
        else:
            assert "pos 0 is the first position" in demo.readout.value
    assert demo.full_draws == 1, "a slider step only moves animated artists"


def test_update_counter_reports_the_steps():
    fig, handles = why.make_counter_figure()
    values = why.update_counter(handles, 64)
    assert values["flipped"] == 7 and values["bit_step"] == pytest.approx(math.sqrt(7))
    want = math.sqrt(sum((a - b) ** 2 for a, b in zip(literal_pe(64, 16), literal_pe(63, 16), strict=True)))
    assert values["pe_step"] == pytest.approx(want)
    with pytest.raises(ValueError, match=r"^pos must be an integer from 0 to 127, got 128"):
        why.update_counter(handles, 128)
    with pytest.raises(ValueError, match=r"^pos must be an integer from 0 to 127, got 3.5"):
        why.update_counter(handles, 3.5)


def test_counter_needs_enough_bits():
    fig, axes = new_figure(2, 2)
    with pytest.raises(ValueError, match=r"^n_pos must be at most 2\^n_bits = 64"):
        why.plot_counter(axes, 3, n_pos=65, n_bits=6)


def test_every_axis_is_labelled_and_titled():
    figures = [make() for make in why.FIGURES.values()] + [why.make_counter_figure()[0]]
    for fig in figures:
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":
                assert ax.get_ylabel()
                continue
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
        for text in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text")):
            if text.get_text() and text.get_visible():
                assert text.get_fontsize() >= FONT_SIZE - 1, text.get_text()


def test_registries():
    assert set(why.FIGURES) == {"00-shuffle", "00-bits-vs-sinusoids", "00-pe-matrix"}
    assert set(why.DEMOS) == {"counter"}


# --- "pos = …" on the counter figure, and its tick labels ----------------------------------------------


def test_counter_figure_writes_pos_and_moves_it():
    fig, handles = why.make_counter_figure()
    labels = handles["pos_labels"]
    assert [t.get_text() for t in labels] == ["pos = 32"] * 4 and all(t.get_animated() for t in labels)
    assert labels[0].get_position()[0] == 34 and labels[0].get_horizontalalignment() == "left"
    why.update_counter(handles, 120)   # near the right edge the label moves to the line's left
    assert [t.get_text() for t in labels] == ["pos = 120"] * 4
    assert labels[0].get_position()[0] == 118 and labels[0].get_horizontalalignment() == "right"


def test_counter_tick_labels_are_large():
    fig = why.make_bits_vs_sinusoids()
    for ax in fig.axes:
        for tick in ax.get_xticklabels() + ax.get_yticklabels():
            if tick.get_text():
                assert tick.get_fontsize() >= why.TICK_SIZE, (ax.get_title(), tick.get_text())
    ax_bits = fig.axes[0]
    assert [t.get_text() for t in ax_bits.get_yticklabels()] == [str(j) for j in range(why.N_BITS)]
    assert "pos = 32" in [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]


# --- the PE matrix ---------------------------------------------------------------------------------


def test_pe_matrix_shows_the_literal_encoding():
    fig = why.make_pe_matrix()
    ax = fig.axes[0]
    values = np.asarray(ax.images[0].get_array())
    assert values.shape == (why.PE_POSITIONS, why.PE_DIM) == (128, 64)
    for pos in (0, 1, 37, 127):
        np.testing.assert_allclose(values[pos], literal_pe(pos, 64), atol=1e-12)
    image = ax.images[0]
    assert image.get_cmap().name == "RdBu_r" and image.get_clim() == (-1.0, 1.0)
    assert ax.get_xlabel().startswith("dimension i") and ax.get_ylabel() == "position pos (tokens)"
    colorbar = [a for a in fig.axes if a.get_label() == "<colorbar>"]
    assert len(colorbar) == 1 and colorbar[0].get_ylabel() == "PE(pos, i)"


# --- random_cosine ---------------------------------------------------------------------------------


def literal_mean_abs_cosine(dim, n=200_000):
    """E|c| for c = u·e, u uniform on the sphere, by the midpoint rule on the density of c ∝ (1 − c²)^((dim − 3)/2)."""
    width = 2.0 / n
    grid = [-1.0 + (j + 0.5) * width for j in range(n)]
    weight = [(1.0 - c * c) ** ((dim - 3) / 2) for c in grid]
    return sum(abs(c) * w for c, w in zip(grid, weight, strict=True)) / sum(weight)


@pytest.mark.parametrize("dim", [3, 4, 8, 64, 512])
def test_random_cosine_matches_the_integral(dim):
    r = why.random_cosine(dim)
    assert r["mean_abs"] == pytest.approx(literal_mean_abs_cosine(dim), rel=1e-4)
    assert r["std"] == pytest.approx(1 / math.sqrt(dim))


def test_random_cosine_in_two_dimensions_is_the_cosine_of_a_uniform_angle():
    # c = cos θ with θ uniform: E|cos θ| = 2/π, E[cos² θ] = 1/2
    r = why.random_cosine(2)
    assert r["mean_abs"] == pytest.approx(2 / math.pi) and r["std"] == pytest.approx(math.sqrt(0.5))


def test_random_cosine_against_a_seeded_sample():
    # the notebook's case: D = 512, a fixed PE vector, 20,000 random directions
    rng = np.random.default_rng(11)
    e = sinusoidal(7, 512)
    u = rng.standard_normal((20_000, 512))
    c = u @ e / (np.linalg.norm(u, axis=1) * np.linalg.norm(e))
    r = why.random_cosine(512)
    assert c.std() == pytest.approx(r["std"], rel=0.03)
    assert np.abs(c).mean() == pytest.approx(r["mean_abs"], rel=0.03)
    assert r["std"] == pytest.approx(0.0442, abs=5e-5) and r["mean_abs"] == pytest.approx(0.0353, abs=5e-5)


@settings(max_examples=60, deadline=None)
@given(dim=st.integers(2, 5000))
def test_random_cosine_properties(dim):
    r = why.random_cosine(dim)
    # E|c| ≤ √E[c²] (Jensen), and E|c| approaches √(2/π)·std from above as dim grows
    assert r["mean_abs"] < r["std"]
    assert r["mean_abs_approx"] == pytest.approx(math.sqrt(2 / math.pi) * r["std"])
    assert r["mean_abs"] >= r["mean_abs_approx"] * (1 - 1e-12)
    assert r["mean_abs"] / r["mean_abs_approx"] - 1 < 1 / dim


@pytest.mark.parametrize(
    "dim, exc, message",
    [(1, ValueError, r"^dim must be at least 2"), (0, ValueError, r"^dim must be a positive integer, got 0"),
     ("8", TypeError, r"^dim must be")],
)
def test_random_cosine_bad_input(dim, exc, message):
    with pytest.raises(exc, match=message):
        why.random_cosine(dim)
