"""Pictures of the two layouts: which elements are paired, and the same RoPE in both.

Taught in notebooks/07-conventions.ipynb.

The interleaved layout (the paper, Meta's Llama, GPT-J) pairs elements
(2k, 2k+1); the half-split layout (tensor2tensor's sinusoids, GPT-NeoX and
Hugging Face ``rotate_half``) pairs (k, k + D/2). The permutation P of
:func:`posenc_helpers.interleaved_to_half_split` carries one into the other.
Pair k has the same colour everywhere, so a reader can follow a pair from one
layout to the other.

The functions draw onto Axes they are given and return the artists they made;
:func:`layouts_demo` only moves those artists, and the tests read their data.
"""

from __future__ import annotations

import numpy as np

from .. import _validate as v
from ..conventions import interleaved_to_half_split, rope_half_split, sinusoidal_concat
from ..core import rope, sinusoidal
from . import DIVERGING_CMAP, OKABE_ITO, new_figure, styled

__all__ = [
    "pair_colors",
    "plot_pairings",
    "plot_layout_heatmaps",
    "plot_layout_bars",
    "plot_pair_arrows",
    "make_pairings",
    "make_paper_vs_t2t",
    "make_layouts_figure",
    "update_layouts",
    "layouts_demo",
    "FIGURES",
    "DEMOS",
]


#: The demo's vector length: four pairs, one colour each.
DEMO_DIM = 8


def pair_colors(dim) -> list[str]:
    """One colorblind-safe colour per pair k = 0 … dim/2 − 1 (cycling through OKABE_ITO).

    Taught in notebooks/07-conventions.ipynb.

    >>> pair_colors(6)
    ['#0072B2', '#D55E00', '#009E73']
    """
    dim = v.positive_int("dim", dim)
    return [OKABE_ITO[k % len(OKABE_ITO)] for k in range(dim // 2)]


def _even_dim(dim) -> int:
    dim = v.positive_int("dim", dim)
    if dim % 2:
        raise ValueError(f"dim must be even to draw both layouts, got {dim}: the half-split layout pairs (k, k + D/2)")
    return dim


@styled
def plot_pairings(ax, dim: int = 8) -> dict:
    """A pairing diagram: the interleaved slots on top, the half-split slots below, P between them.

    Top row: slot i holds x_i, coloured by its pair k = i // 2, with an arc over
    each pair (2k, 2k+1). Bottom row: slot j of P x; slot k holds x_{2k} and slot
    k + D/2 holds x_{2k+1}, with an arc under each pair (k, k + D/2). A line joins
    every element's two places. Returns ``{"top", "bottom", "links", "targets"}``
    where ``targets[i]`` is the bottom slot of x_i. Taught in
    notebooks/07-conventions.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> plot_pairings(ax, 6)["targets"]     # x0→0, x1→3, x2→1, x3→4, x4→2, x5→5
    [0, 3, 1, 4, 2, 5]
    """
    dim = _even_dim(dim)
    half = dim // 2
    colors = pair_colors(dim)
    top_y, bottom_y = 1.0, 0.0
    # where x_i lands: P x puts x_{2k} at slot k and x_{2k+1} at slot k + D/2
    targets = interleaved_to_half_split(np.arange(dim)).astype(int)
    targets = [int(np.flatnonzero(targets == i)[0]) for i in range(dim)]
    top, bottom, links = [], [], []
    t = np.linspace(0.0, np.pi, 40)
    for i in range(dim):
        k = i // 2
        top.append(
            ax.text(i, top_y, f"x{i}", ha="center", va="center", fontsize=12, color="white", fontweight="bold",
                    bbox={"boxstyle": "round,pad=0.35", "facecolor": colors[k], "edgecolor": "black"})
        )
        j = targets[i]
        bottom.append(
            ax.text(j, bottom_y, f"x{i}", ha="center", va="center", fontsize=12, color="white", fontweight="bold",
                    bbox={"boxstyle": "round,pad=0.35", "facecolor": colors[k], "edgecolor": "black"})
        )
        (link,) = ax.plot([i, j], [top_y - 0.13, bottom_y + 0.13], color=colors[k], linewidth=1.5, alpha=0.8)
        links.append(link)
    for k in range(half):
        # an arc over the interleaved pair (2k, 2k+1) and under the half-split pair (k, k + D/2)
        a, b = 2 * k, 2 * k + 1
        ax.plot((a + b) / 2 + (b - a) / 2 * np.cos(t), top_y + 0.17 + 0.12 * np.sin(t), color=colors[k], linewidth=2)
        a, b = k, k + half
        ax.plot((a + b) / 2 + (b - a) / 2 * np.cos(t), bottom_y - 0.17 - 0.06 * (1 + half / 4) * np.sin(t),
                color=colors[k], linewidth=2)
    ax.set_xlim(-0.8, dim - 0.2)
    ax.set_ylim(-0.75, 1.6)
    ax.set_xticks(range(dim))
    ax.set_yticks([bottom_y, top_y])
    ax.set_yticklabels(["half-split P x\n(t2t, NeoX, HF)", "interleaved x\n(paper, Meta, GPT-J)"])
    ax.set_xlabel("slot (element index i in that layout)")
    ax.set_ylabel("layout")
    ax.set_title(f"Which elements are paired (D = {dim}; colour = pair k)")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return {"top": top, "bottom": bottom, "links": links, "targets": targets}


@styled
def plot_layout_heatmaps(axes, n_positions: int = 64, dim: int = 32) -> dict:
    """Three heatmaps over positions × slots: the paper's PE, P applied to it, and tensor2tensor's.

    The middle panel has tensor2tensor's layout ([sin | cos]) with the paper's
    frequencies, so the reader can see layout and frequency spacing change one
    at a time. Colours: DIVERGING_CMAP fixed at ±1. Returns ``{"images",
    "values"}``, each a list of three. Taught in notebooks/07-conventions.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, axes = new_figure(1, 3, figsize=(12, 4))
    >>> h = plot_layout_heatmaps(axes, 3, 4)
    >>> h["values"][2][2].round(4).tolist()      # t2t's row for pos = 2
    [0.9093, 0.0002, -0.4161, 1.0]
    """
    n_positions = v.positive_int("n_positions", n_positions)
    dim = _even_dim(dim)
    pos = np.arange(n_positions)
    paper = sinusoidal(pos, dim)
    values = [paper, interleaved_to_half_split(paper), sinusoidal_concat(pos, dim)]
    titles = ["paper: sin, cos interleaved", "P · paper: [sin | cos] layout", "tensor2tensor: [sin | cos],\nslowest ω = 1e-4"]
    images = []
    for ax, data, title in zip(np.ravel(axes), values, titles, strict=True):
        image = ax.imshow(data, cmap=DIVERGING_CMAP, vmin=-1.0, vmax=1.0, aspect="auto", interpolation="nearest",
                          extent=(-0.5, dim - 0.5, n_positions - 0.5, -0.5))
        ax.set_title(title)
        ax.set_xlabel("element index i")
        images.append(image)
    np.ravel(axes)[0].set_ylabel("position pos (tokens)")
    axes_list = list(np.ravel(axes))
    axes_list[0].figure.colorbar(images[-1], ax=axes_list, label="PE value", shrink=0.9)
    return {"images": images, "values": values}


@styled
def plot_layout_bars(ax, values, pair_of_slot, title: str = "", animated: bool = False) -> dict:
    """Bars of one vector, slot by slot, each bar coloured by the pair its slot belongs to.

    ``pair_of_slot[i]`` is the pair k of slot i (i // 2 interleaved; i mod D/2
    half-split). Returns ``{"bars", "title"}``; with ``animated=True`` the bars
    and title are marked for blitting. Taught in notebooks/07-conventions.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_layout_bars(ax, [0.5, -1.0], [0, 0])
    >>> [float(b.get_height()) for b in h["bars"]]
    [0.5, -1.0]
    """
    values = v.vector_array("values", values)
    colors = pair_colors(2 * (max(pair_of_slot) + 1))
    bars = ax.bar(np.arange(len(values)), values, color=[colors[k] for k in pair_of_slot], edgecolor="black",
                  width=0.75)
    for bar in bars:
        bar.set_animated(animated)
    ax.axhline(0.0, color="0.4", linewidth=1.0)
    ax.set_xticks(range(len(values)))
    ax.set_ylim(-1.15, 1.15)
    ax.set_xlabel("element index i")
    ax.set_ylabel("value")
    title_text = ax.set_title(title)
    title_text.set_animated(animated)
    return {"bars": list(bars), "title": title_text}


@styled
def plot_pair_arrows(ax, pairs, animated: bool = False) -> dict:
    """Each pair (a, b) as a hand from the origin to (a, b), on the unit circle, one colour per pair.

    ``pairs`` has shape (K, 2). Returns ``{"hands", "tips"}``.
    Taught in notebooks/07-conventions.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> plot_pair_arrows(ax, [[0.0, 1.0]])["tips"][0].get_xydata().tolist()
    [[0.0, 1.0]]
    """
    pairs = v.real_array("pairs", pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise ValueError(f"pairs must have shape (K, 2), got shape {pairs.shape}")
    colors = pair_colors(2 * len(pairs))
    t = np.linspace(0.0, 2.0 * np.pi, 181)
    ax.plot(np.cos(t), np.sin(t), color="0.6", linewidth=1.2)
    ax.axhline(0.0, color="0.85", linewidth=1.0)
    ax.axvline(0.0, color="0.85", linewidth=1.0)
    hands, tips = [], []
    for k, (a, b) in enumerate(pairs):
        (hand,) = ax.plot([0.0, a], [0.0, b], color=colors[k], linewidth=3, animated=animated, label=f"pair k = {k}")
        (tip,) = ax.plot([a], [b], "o", color=colors[k], markersize=8, animated=animated)
        hands.append(hand)
        tips.append(tip)
    ax.set_xlim(-1.2, 1.2)
    ax.set_ylim(-1.2, 1.2)
    ax.set_aspect("equal")
    ax.set_xlabel("first of pair, a")
    ax.set_ylabel("second of pair, b")
    ax.set_title("The pairs: same in both layouts")
    return {"hands": hands, "tips": tips}


@styled
def make_pairings():
    """The figure ``figures/07-pairings.png``: the pairing diagram for D = 8.

    Taught in notebooks/07-conventions.ipynb.
    """
    fig, ax = new_figure(figsize=(9.0, 4.2))
    plot_pairings(ax, 8)
    return fig


@styled
def make_paper_vs_t2t():
    """The figure ``figures/07-paper-vs-t2t.png``: paper, P·paper and tensor2tensor over 64 positions, D = 32.

    Taught in notebooks/07-conventions.ipynb.
    """
    fig, axes = new_figure(1, 3, figsize=(13.0, 4.6), sharey=True)
    plot_layout_heatmaps(axes, 64, 32)
    fig.suptitle("The same sinusoids in two layouts (D = 32)")
    return fig


# --- the slider demo -------------------------------------------------------------------------------


def demo_vector(dim: int = DEMO_DIM) -> np.ndarray:
    """The demo's x: every pair starts at (1, 0), so rope(x, pos) pair k is (cos θ_k, sin θ_k).

    Taught in notebooks/07-conventions.ipynb.

    >>> demo_vector(4)
    array([1., 0., 1., 0.])
    """
    dim = _even_dim(dim)
    x = np.zeros(dim)
    x[0::2] = 1.0
    return x


@styled
def make_layouts_figure(dim: int = DEMO_DIM):
    """The demo figure: interleaved bars, half-split bars, and the pairs as hands.

    Returns ``(fig, handles)`` with ``handles = {"x", "interleaved", "half_split",
    "arrows"}`` (bars and hands animated). Taught in notebooks/07-conventions.ipynb.
    """
    dim = _even_dim(dim)
    half = dim // 2
    x = demo_vector(dim)
    fig, axes = new_figure(1, 3, figsize=(13.0, 4.4), width_ratios=[1.25, 1.25, 1.0])
    # the titles stay fixed (text is the slowest thing to blit); pos is on the slider and in the readout
    interleaved = plot_layout_bars(axes[0], rope(x, 0), [i // 2 for i in range(dim)],
                                   "interleaved: rope(x, pos)", animated=True)
    interleaved["title"].set_animated(False)
    half_split = plot_layout_bars(axes[1], rope_half_split(interleaved_to_half_split(x), 0),
                                  [i % half for i in range(dim)], "half-split: rope_half_split(P x, pos)", animated=True)
    half_split["title"].set_animated(False)
    arrows = plot_pair_arrows(axes[2], np.column_stack([x[0::2], x[1::2]]), animated=True)
    axes[2].legend(loc="lower left", fontsize=11, ncol=2, handlelength=1.0, columnspacing=0.8)
    fig.suptitle("One RoPE, two layouts: bars of the same colour hold the same pair")
    return fig, {"x": x, "interleaved": interleaved, "half_split": half_split, "arrows": arrows}


def update_layouts(handles, pos, base=10000.0) -> str:
    """Rotate the demo vector to ``pos`` in both layouts; return the HTML readout.

    Left bars: rope(x, pos). Middle bars: rope_half_split(P x, pos), which equals
    P rope(x, pos). Hands: pair k at (cos θ_k, sin θ_k), θ_k = pos·ω_k. The
    readout lists, per pair, its slots in both layouts, θ_k and the pair's
    values, then the largest |rope_half_split(P x) − P rope(x)|.
    Taught in notebooks/07-conventions.ipynb.
    """
    pos = v.real_scalar("pos", pos)
    x = handles["x"]
    dim = len(x)
    half = dim // 2
    left = rope(x, pos, base)
    middle = rope_half_split(interleaved_to_half_split(x), pos, base)
    for bar, value in zip(handles["interleaved"]["bars"], left, strict=True):
        bar.set_height(value)
    for bar, value in zip(handles["half_split"]["bars"], middle, strict=True):
        bar.set_height(value)
    rows = []
    omega = v.base_value(base) ** (-2.0 * np.arange(half) / dim)
    for k in range(half):
        a, b = left[2 * k], left[2 * k + 1]
        handles["arrows"]["hands"][k].set_data([0.0, a], [0.0, b])
        handles["arrows"]["tips"][k].set_data([a], [b])
        # θ_k = pos·ω_k
        theta = pos * omega[k]
        rows.append(
            f"<tr><td>{k}</td><td>({2 * k}, {2 * k + 1})</td><td>({k}, {k + half})</td><td>{theta:.4f}</td>"
            f"<td>({a:+.4f}, {b:+.4f})</td></tr>"
        )
    gap = float(np.max(np.abs(middle - interleaved_to_half_split(left))))
    gap_text = "&lt; 1e-12" if gap < 1e-12 else f"= {gap:.1e}"
    head = "<tr><th>pair k</th><th>interleaved slots</th><th>half-split slots</th><th>θ_k (rad)</th><th>(a, b)</th></tr>"
    return (
        f"<b>pos = {pos:g}, D = {dim}</b>: max |rope_half_split(P x) − P rope(x)| {gap_text}"
        f"<table style='font-family:monospace'>{head}{''.join(rows)}</table>"
    )


def layouts_demo(pos: int = 3):
    """Slider demo: one pos slider turns the same four pairs in both layouts side by side.

    Taught in notebooks/07-conventions.ipynb.

    >>> demo = layouts_demo()
    >>> demo.controls["pos"].value = 2                      # pair 0 turns by θ_0 = 2 rad
    >>> [round(float(b.get_height()), 4) for b in demo.handles["interleaved"]["bars"][:2]]  # (cos 2, sin 2)
    [-0.4161, 0.9093]
    >>> [round(float(demo.handles["half_split"]["bars"][i].get_height()), 4) for i in (0, 4)]  # slots 0, D/2
    [-0.4161, 0.9093]
    """
    from ..demo import SliderDemo, int_slider

    controls = [int_slider("pos", "pos (position)", 0, 200, pos)]
    return SliderDemo(make_layouts_figure, update_layouts, controls, title="RoPE in both layouts")


FIGURES = {"07-pairings": make_pairings, "07-paper-vs-t2t": make_paper_vs_t2t}
DEMOS = {"layouts": layouts_demo}
