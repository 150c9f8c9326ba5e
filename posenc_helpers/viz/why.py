"""Why a transformer needs positions: the shuffle test, and a binary counter beside the sinusoids.

Taught in notebooks/00-why-positions.ipynb.

* :func:`plot_shuffle` draws the outputs of one seeded attention head for two
  orders of the same words, with and without a causal mask.
* :func:`plot_counter` puts the bits of a binary counter beside the
  sinusoidal encoding, position by position, with the column at one position
  drawn as bars; :func:`counter_demo` moves that position with a slider.
* :func:`make_pe_matrix` draws the whole sinusoidal matrix, positions ×
  dimensions, as one heat map.
* :func:`random_cosine` gives the spread of the cosine between a fixed vector
  and a random direction, the yardstick for "nearly orthogonal".

The functions draw onto Axes they are given and return the artists they made;
the demo only moves those artists, and the tests read their data.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as v
from ..attention import embed_words, random_head, self_attention
from ..core import sinusoidal
from . import DIVERGING_CMAP, OKABE_ITO, new_figure, styled

__all__ = [
    "binary_code",
    "step_sizes",
    "random_cosine",
    "plot_shuffle",
    "make_shuffle",
    "plot_counter",
    "update_counter",
    "make_counter_figure",
    "make_bits_vs_sinusoids",
    "make_pe_matrix",
    "counter_demo",
    "FIGURES",
    "DEMOS",
]

#: The two orders of the shuffle figure.
SENTENCES = ("dog bites man", "man bites dog")
#: Toy sizes of the shuffle figure: embedding width and head width.
D_MODEL, D_HEAD = 8, 4
#: The counter picture: positions 0 … N_POS − 1, N_BITS bits, and a D = DIM sinusoid.
N_POS, N_BITS, DIM = 128, 7, 16
#: The demo's starting position: 31 → 32 flips six bits at once.
DEFAULT_POS = 32
#: The heat map of the whole encoding: positions 0 … PE_POSITIONS − 1, width PE_DIM.
PE_POSITIONS, PE_DIM = 128, 64
#: Tick labels of the counter figure, larger than the house default so they read on a projector.
TICK_SIZE = 14


def binary_code(pos, n_bits) -> np.ndarray:
    """The bits of each position, least significant first: b_j(pos) = ⌊pos / 2^j⌋ mod 2.

    ``pos`` is a non-negative integer (or an array of them) below 2^n_bits;
    the result has shape ``pos.shape + (n_bits,)`` and holds 0.0 or 1.0.
    Taught in notebooks/00-why-positions.ipynb.

    >>> binary_code(6, 4)          # 6 = 0·1 + 1·2 + 1·4 + 0·8
    array([0., 1., 1., 0.])
    >>> binary_code([7, 8], 4)     # 7 → 8 flips all four bits
    array([[1., 1., 1., 0.],
           [0., 0., 0., 1.]])
    """
    n_bits = v.positive_int("n_bits", n_bits)
    arr = v.real_array("pos", pos)
    if np.any(arr != np.round(arr)) or np.any(arr < 0) or np.any(arr >= 2.0**n_bits):
        raise ValueError(f"pos must hold integers from 0 to 2^{n_bits} − 1 = {2**n_bits - 1}, got {v._show(pos)}")
    p = arr.astype(np.int64)
    # b_j(pos) = ⌊pos / 2^j⌋ mod 2
    return ((p[..., None] >> np.arange(n_bits)) & 1).astype(np.float64)


def step_sizes(codes) -> np.ndarray:
    """‖code[pos] − code[pos − 1]‖ for pos = 1 … len(codes) − 1: how far each step moves.

    Taught in notebooks/00-why-positions.ipynb.

    >>> step_sizes(binary_code(np.arange(9), 4)) ** 2      # squared step = bits flipped
    array([1., 2., 1., 3., 1., 2., 1., 4.])
    """
    codes = v.real_array("codes", codes)
    if codes.ndim != 2 or len(codes) < 2:
        raise ValueError(f"codes must have shape (positions ≥ 2, width), got shape {codes.shape}")
    # ‖c[pos] − c[pos − 1]‖
    return np.linalg.norm(np.diff(codes, axis=0), axis=1)


def random_cosine(dim) -> dict:
    """How far from 0 the cosine between a fixed vector and a random direction in ``dim`` dimensions lands.

    For a direction u drawn uniformly (a normalised Gaussian vector) and any
    fixed unit vector e, c = u·e has mean 0 and E[c²] = 1/dim, so its
    standard deviation is 1/√dim. Its typical size E|c| is smaller:
    Γ(dim/2) / (√π · Γ((dim + 1)/2)), which is close to √(2/π)/√dim for large
    dim (the value for a normal variable with that standard deviation).
    Returns ``{"std", "mean_abs", "mean_abs_approx"}``.
    Taught in notebooks/00-why-positions.ipynb.

    >>> r = random_cosine(512)
    >>> round(r["std"], 4), round(r["mean_abs"], 4)    # 1/√512 = 0.0442; E|c| = 0.0353
    (0.0442, 0.0353)
    >>> round(r["mean_abs_approx"], 4)                  # √(2/π)/√512
    0.0353
    >>> math.isclose(random_cosine(2)["mean_abs"], 2 / math.pi)   # in 2-D, c = cos of a uniform angle: E|c| = 2/π
    True
    """
    dim = v.positive_int("dim", dim)
    if dim < 2:
        raise ValueError(f"dim must be at least 2 for a direction to be random, got {dim}")
    # std = √(E[c²]) = 1/√dim, since the dim squared coordinates of u sum to 1 and share the mean
    std = 1.0 / math.sqrt(dim)
    # E|c| = Γ(dim/2) / (√π · Γ((dim + 1)/2)), from the density of c ∝ (1 − c²)^((dim − 3)/2)
    mean_abs = math.exp(math.lgamma(dim / 2) - math.lgamma((dim + 1) / 2)) / math.sqrt(math.pi)
    # √(2/π) · std, the large-dim limit
    return {"std": std, "mean_abs": mean_abs, "mean_abs_approx": math.sqrt(2 / math.pi) * std}


# --- the shuffle figure ------------------------------------------------------------------------------


def _shuffle_outputs(sentences=SENTENCES, causal=False, seed: int = 0):
    w_q, w_k, w_v = random_head(D_MODEL, D_HEAD, seed)
    return [self_attention(embed_words(s, D_MODEL, seed), w_q, w_k, w_v, causal) for s in sentences]


@styled
def plot_shuffle(axes, sentences=SENTENCES, seed: int = 0) -> dict:
    """Heatmaps of one head's outputs: a row per word, for each sentence, without and with a causal mask.

    ``axes`` is a 2 × len(sentences) grid: top row no mask, bottom row causal.
    All panels share one symmetric colour scale, and each cell is labelled
    with its value. Returns ``{"images", "outputs"}``, where ``outputs[r][c]``
    is the (tokens, D_HEAD) array in row r, column c.
    Taught in notebooks/00-why-positions.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, axes = new_figure(2, 2)
    >>> h = plot_shuffle(axes)
    >>> out = h["outputs"]
    >>> np.allclose(out[0][0][0], out[0][1][2])    # no mask: "dog" has the same output in both orders
    True
    >>> np.allclose(out[1][0][0], out[1][1][2])    # causal: it does not
    False
    """
    axes = np.asarray(axes).reshape(2, -1)
    if axes.shape[1] != len(sentences):
        raise ValueError(f"axes must be a 2 × {len(sentences)} grid for {len(sentences)} sentences, got {axes.shape}")
    outputs = [_shuffle_outputs(sentences, causal, seed) for causal in (False, True)]
    limit = max(float(np.abs(o).max()) for row in outputs for o in row)
    images = []
    for r, (row, label) in enumerate(zip(outputs, ("no mask", "causal mask"), strict=True)):
        for c, (sentence, out) in enumerate(zip(sentences, row, strict=True)):
            ax = axes[r, c]
            image = ax.imshow(out, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
            for (i, j), value in np.ndenumerate(out):
                ax.text(j, i, f"{value:+.2f}", ha="center", va="center", fontsize=11,
                        color="white" if abs(value) > 0.6 * limit else "black")
            ax.set_yticks(range(len(out)), sentence.split())
            ax.set_xticks(range(out.shape[1]))
            ax.set_title(f"{label}: “{sentence}”")
            ax.set_xlabel("output dimension")
            ax.set_ylabel("token")
            images.append(image)
    colorbar = axes[0, 0].figure.colorbar(images[-1], ax=list(axes.ravel()), label="output value", shrink=0.8)
    return {"images": images, "outputs": outputs, "colorbar": colorbar}


@styled
def make_shuffle():
    """The figure ``figures/00-shuffle.png``: one seeded head on "dog bites man" and "man bites dog".

    Taught in notebooks/00-why-positions.ipynb.
    """
    fig, axes = new_figure(2, 2, figsize=(11.0, 6.4))
    plot_shuffle(axes)
    fig.suptitle("One attention head, no positions: each word's output, in two word orders")
    return fig


# --- binary counter beside the sinusoids (static figure and slider demo share this) ------------------


@styled
def plot_counter(axes, pos: int = DEFAULT_POS, n_pos: int = N_POS, n_bits: int = N_BITS, dim: int = DIM,
                 animated: bool = False) -> dict:
    """Bits of a binary counter beside the sinusoidal encoding, with the column at ``pos`` as bars.

    ``axes`` is a 2 × 2 grid: top left the bits of positions 0 … n_pos − 1 (a
    row per bit, fastest first), top right PE(pos) for D = ``dim`` (a row per
    dimension), bottom left and right the two columns at ``pos`` as bars, with
    the values at pos − 1 as hollow markers. Returns the handles that
    :func:`update_counter` moves. Taught in notebooks/00-why-positions.ipynb.
    """
    n_pos = v.positive_int("n_pos", n_pos)
    n_bits = v.positive_int("n_bits", n_bits)
    dim = v.positive_int("dim", dim)
    if n_pos > 2**n_bits:
        raise ValueError(f"n_pos must be at most 2^n_bits = {2**n_bits} so every position has its own code, got {n_pos}")
    (ax_bits, ax_pe), (ax_bbar, ax_pbar) = np.asarray(axes).reshape(2, 2)
    positions = np.arange(n_pos)
    bits = binary_code(positions, n_bits)
    pe = sinusoidal(positions, dim)
    extent = (-0.5, n_pos - 0.5, None, -0.5)
    image_bits = ax_bits.imshow(bits.T, cmap="cividis", vmin=0, vmax=1, aspect="auto", interpolation="nearest",
                                extent=extent[:2] + (n_bits - 0.5, -0.5))
    image_pe = ax_pe.imshow(pe.T, cmap=DIVERGING_CMAP, vmin=-1, vmax=1, aspect="auto", interpolation="nearest",
                            extent=extent[:2] + (dim - 0.5, -0.5))
    fig = ax_bits.figure
    colorbars = (fig.colorbar(image_bits, ax=ax_bits, label="bit value", ticks=[0, 1]),
                 fig.colorbar(image_pe, ax=ax_pe, label="PE(pos, i)", ticks=[-1, -0.5, 0, 0.5, 1]))
    ax_bits.set_yticks(range(n_bits))
    ax_pe.set_yticks(range(0, dim, max(1, dim // 8)))
    for ax in (ax_bits, ax_pe):
        ax.set_xticks(range(0, n_pos, max(1, n_pos // 4)))
    ax_bits.set_title(r"Binary counter: bit j flips every $2^j$ positions")
    ax_pe.set_title(f"Sinusoids, D = {dim}: pair k turns at $10000^{{-2k/{dim}}}$ rad/token")
    ax_bits.set_ylabel("bit j")
    ax_pe.set_ylabel("dimension i")
    for ax in (ax_bits, ax_pe):
        ax.set_xlabel("position pos (tokens)")
    markers = [ax.axvline(pos, color=OKABE_ITO[1], linewidth=2.5, animated=animated) for ax in (ax_bits, ax_pe)]

    bars_bits = ax_bbar.bar(np.arange(n_bits), np.zeros(n_bits), color=OKABE_ITO[0], animated=animated)
    bars_pe = ax_pbar.bar(np.arange(dim), np.zeros(dim), color=OKABE_ITO[0], animated=animated)
    (prev_bits,) = ax_bbar.plot(np.arange(n_bits), np.zeros(n_bits), "o", markersize=11, markerfacecolor="none",
                                markeredgecolor=OKABE_ITO[1], markeredgewidth=2.5, label="at pos − 1", animated=animated)
    (prev_pe,) = ax_pbar.plot(np.arange(dim), np.zeros(dim), "o", markersize=9, markerfacecolor="none",
                              markeredgecolor=OKABE_ITO[1], markeredgewidth=2.5, label="at pos − 1", animated=animated)
    ax_bbar.set_ylim(-0.15, 1.45)
    ax_pbar.set_ylim(-1.25, 1.6)
    ax_bbar.set_xticks(range(n_bits))
    ax_pbar.set_xticks(range(0, dim, max(1, dim // 8)))
    ax_bbar.set_xlabel("bit j")
    ax_pbar.set_xlabel("dimension i")
    ax_bbar.set_ylabel("bit value")
    ax_pbar.set_ylabel("PE(pos, i)")
    ax_bbar.set_title("The bits at pos (bars) and at pos − 1 (circles)")
    ax_pbar.set_title("PE(pos) (bars) and PE(pos − 1) (circles)")
    for ax in (ax_bbar, ax_pbar):
        ax.axhline(0, color="0.5", linewidth=1)
        ax.legend(loc="upper right", fontsize=TICK_SIZE - 1)
    # "pos = …" written on the figure: beside the orange line on top, in the corner of each bar panel
    box = {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}
    line_labels = [ax.text(pos, 0.97, "", transform=ax.get_xaxis_transform(), va="top", fontsize=TICK_SIZE,
                           color=OKABE_ITO[1], fontweight="bold", bbox=box, animated=animated)
                   for ax in (ax_bits, ax_pe)]
    bar_labels = [ax.text(0.02, 0.97, "", transform=ax.transAxes, ha="left", va="top", fontsize=TICK_SIZE,
                          fontweight="bold", animated=animated)
                  for ax in (ax_bbar, ax_pbar)]
    for ax in (ax_bits, ax_pe, ax_bbar, ax_pbar) + tuple(c.ax for c in colorbars):
        ax.tick_params(labelsize=TICK_SIZE)
    handles = {"bits": bits, "pe": pe, "markers": markers, "bars_bits": bars_bits, "bars_pe": bars_pe,
               "prev_bits": prev_bits, "prev_pe": prev_pe, "images": (image_bits, image_pe),
               "pos_labels": line_labels + bar_labels}
    update_counter(handles, pos)
    return handles


def update_counter(handles, pos) -> dict:
    """Move the markers and bars to ``pos``; return the step sizes from pos − 1 to pos.

    Returns ``{"pos", "bits", "flipped", "bit_step", "pe_step"}``: the bits
    of pos (least significant first), how many flipped since pos − 1, and
    ‖b(pos) − b(pos − 1)‖ and ‖PE(pos) − PE(pos − 1)‖ (None at pos = 0).
    Taught in notebooks/00-why-positions.ipynb.
    """
    bits, pe = handles["bits"], handles["pe"]
    if not v._is_int(pos) or not 0 <= pos < len(bits):
        raise ValueError(f"pos must be an integer from 0 to {len(bits) - 1}, got {v._show(pos)}")
    pos = int(pos)
    for marker in handles["markers"]:
        marker.set_xdata([pos, pos])
    line_labels, bar_labels = handles["pos_labels"][:2], handles["pos_labels"][2:]
    # beside the line, on whichever side has room
    right_side = pos < 0.7 * len(bits)
    for label in line_labels:
        label.set_text(f"pos = {pos}")
        label.set_x(pos + 2 if right_side else pos - 2)
        label.set_horizontalalignment("left" if right_side else "right")
    for label in bar_labels:
        label.set_text(f"pos = {pos}")
    for bar, height in zip(handles["bars_bits"], bits[pos], strict=True):
        bar.set_height(height)
    for bar, height in zip(handles["bars_pe"], pe[pos], strict=True):
        bar.set_height(height)
    has_prev = pos > 0
    for line, table in ((handles["prev_bits"], bits), (handles["prev_pe"], pe)):
        line.set_visible(has_prev)
        if has_prev:
            line.set_ydata(table[pos - 1])
    return {
        "pos": pos,
        "bits": bits[pos].copy(),
        "flipped": int(np.sum(bits[pos] != bits[pos - 1])) if has_prev else None,
        # ‖b(pos) − b(pos − 1)‖ and ‖PE(pos) − PE(pos − 1)‖
        "bit_step": float(np.linalg.norm(bits[pos] - bits[pos - 1])) if has_prev else None,
        "pe_step": float(np.linalg.norm(pe[pos] - pe[pos - 1])) if has_prev else None,
    }


def _counter_readout(values) -> str:
    pos = values["pos"]
    binary = "".join(str(int(b)) for b in values["bits"][::-1])
    label = f"binary (bit {len(values['bits']) - 1} … bit 0)"
    if values["flipped"] is None:
        rows = [(label, binary), ("step from pos − 1", "none: pos 0 is the first position")]
    else:
        rows = [
            (label, binary),
            ("bits flipped since pos − 1", f"{values['flipped']}"),
            ("‖b(pos) − b(pos − 1)‖", f"{values['bit_step']:.3f}"),
            ("‖PE(pos) − PE(pos − 1)‖", f"{values['pe_step']:.3f} (the same at every pos)"),
        ]
    body = "".join(f"<tr><td style='text-align:left'>{name}</td><td>{value}</td></tr>" for name, value in rows)
    return f"<b>pos = {pos}</b><table style='font-family:monospace'>{body}</table>"


def update_counter_demo(handles, pos) -> str:
    """The demo's update: move to ``pos`` and return the HTML readout. Taught in notebooks/00-why-positions.ipynb."""
    return _counter_readout(update_counter(handles, pos))


@styled
def make_counter_figure(pos: int = DEFAULT_POS):
    """The demo figure: bits and sinusoids over positions, the column at ``pos`` as bars; markers animated.

    Returns ``(fig, handles)``. Taught in notebooks/00-why-positions.ipynb.
    """
    fig, axes = new_figure(2, 2, figsize=(13.0, 7.0), gridspec_kw={"width_ratios": [1, 1.6]})
    handles = plot_counter(axes, pos, animated=True)
    fig.suptitle("A binary counter jumps; the sinusoids turn smoothly (orange line: pos)")
    return fig, handles


@styled
def make_bits_vs_sinusoids():
    """The figure ``figures/00-bits-vs-sinusoids.png``: the counter figure at pos = 32.

    Taught in notebooks/00-why-positions.ipynb.
    """
    fig, _handles = make_counter_figure()
    return fig


def counter_demo(pos: int = DEFAULT_POS):
    """Slider demo: move pos and watch the bits jump while the sinusoid pairs turn a little.

    Taught in notebooks/00-why-positions.ipynb.

    >>> demo = counter_demo()
    >>> demo.set_values(pos=8)                     # 7 = 0000111 → 8 = 0001000: four bits flip
    >>> "bits flipped since pos − 1</td><td>4<" in demo.readout.value
    True
    """
    from ..demo import SliderDemo, int_slider

    controls = [int_slider("pos", "pos (position)", 0, N_POS - 1, pos)]
    return SliderDemo(make_counter_figure, update_counter_demo, controls, title="Binary counter against sinusoids")


# --- the whole encoding as one matrix ---------------------------------------------------------------


@styled
def make_pe_matrix(n_positions: int = PE_POSITIONS, dim: int = PE_DIM):
    """The figure ``figures/00-pe-matrix.png``: PE(pos, i) for every position and dimension, as one heat map.

    A row per position 0 … n_positions − 1, a column per dimension i of the
    width ``dim``, on the house diverging colormap fixed at ±1 (the heat map of
    :func:`posenc_helpers.viz.clock.plot_pe_heatmap`). Returns the Figure; its
    first Axes holds the image. Taught in notebooks/00-why-positions.ipynb.

    >>> fig = make_pe_matrix(4, 4)
    >>> np.asarray(fig.axes[0].images[0].get_array())[2].round(4)   # the row of pos = 2 is PE(2)
    array([ 0.9093, -0.4161,  0.02  ,  0.9998])
    """
    from .clock import plot_pe_heatmap

    fig, ax = new_figure(figsize=(10.0, 6.4))
    heat = plot_pe_heatmap(ax, n_positions, dim)
    ax.set_title(f"The whole encoding: PE(pos, i), {n_positions} positions × D = {dim}", fontsize=TICK_SIZE + 2)
    ax.set_xlabel("dimension i (pair k = ⌊i/2⌋: fast pairs left, slow pairs right)", fontsize=TICK_SIZE)
    ax.set_ylabel("position pos (tokens)", fontsize=TICK_SIZE)
    ax.tick_params(labelsize=TICK_SIZE)
    heat["colorbar"].ax.tick_params(labelsize=TICK_SIZE)
    heat["colorbar"].set_label("PE(pos, i)", fontsize=TICK_SIZE)
    return fig


FIGURES = {"00-shuffle": make_shuffle, "00-bits-vs-sinusoids": make_bits_vs_sinusoids, "00-pe-matrix": make_pe_matrix}
DEMOS = {"counter": counter_demo}
