"""The shift matrix T drawn as a rotation on each pair's circle.

Taught in notebooks/03-shift-matrix.ipynb.

A pair (sin ωp, cos ωp) of the sinusoidal encoding is drawn as the point
(x, y) = (cos ωp, sin ωp) on the unit circle: the cosine (element 2k + 1) on
the horizontal axis, the sine (element 2k) on the vertical one. Position 0
then sits at (1, 0) and a growing position turns the point counter-clockwise,
so moving by ``offset`` positions, T @ PE(pos) = PE(pos + offset), is a
counter-clockwise turn by ω·offset on every circle.

The lesson writes the shift as T_k with k the number of positions moved. In
the code that number is ``offset``, because ``k`` already counts pairs.
"""

from __future__ import annotations

import matplotlib
import numpy as np

from .. import _validate as v
from ..core import frequencies, shift_matrix, sinusoidal
from . import DIVERGING_CMAP, OKABE_ITO, new_figure

__all__ = [
    "wrap_angle",
    "arc_points",
    "pair_point",
    "draw_pair_shift",
    "update_pair_shift",
    "draw_matrix",
    "update_matrix",
    "cosine_similarity_matrix",
    "draw_position_matrix",
    "shift_readout",
    "shift_demo",
    "make_shift_as_rotation",
    "FIGURES",
    "DEMOS",
]

#: Colours: where the pair starts, where the shift puts it, and the turn between.
START_COLOUR, END_COLOUR, ARC_COLOUR = OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[2]

#: Axis limits of a unit-circle panel: a margin for markers and labels.
CIRCLE_LIM = 1.3


def wrap_angle(theta):
    """An angle moved into (−π, π] by whole turns: the net turn a point makes.

    θ ↦ θ − 2π·ceil((θ − π) / 2π). Taught in notebooks/03-shift-matrix.ipynb.

    >>> round(wrap_angle(7.0), 4)       # 7 − 2π ≈ 0.7168: one full lap, then 0.72 rad
    0.7168
    >>> wrap_angle(np.pi) == np.pi      # a half turn stays +π
    True
    """
    theta = np.asarray(theta, dtype=np.float64)
    # θ − 2π·ceil((θ − π) / 2π) lies in (−π, π]
    out = theta - 2.0 * np.pi * np.ceil((theta - np.pi) / (2.0 * np.pi))
    return float(out) if out.ndim == 0 else out


def arc_points(start, turn, radius=1.0, num=64) -> np.ndarray:
    """Points (x, y) on a circle from angle ``start`` through ``turn`` radians.

    (x, y) = radius·(cos φ, sin φ) for φ from start to start + turn, ``num``
    points; shape (num, 2). A positive turn runs counter-clockwise.
    Taught in notebooks/03-shift-matrix.ipynb.

    >>> arc_points(0.0, np.pi / 2, num=3).round(4)   # (1, 0) → (cos 45°, sin 45°) → (0, 1)
    array([[1.    , 0.    ],
           [0.7071, 0.7071],
           [0.    , 1.    ]])
    """
    start = v.real_scalar("start", start)
    turn = v.real_scalar("turn", turn)
    radius = v.real_scalar("radius", radius)
    num = v.positive_int("num", num)
    phi = start + np.linspace(0.0, turn, num)
    # (x, y) = r·(cos φ, sin φ)
    return radius * np.column_stack([np.cos(phi), np.sin(phi)])


def pair_point(pos, k, dim=4, base=10000.0) -> np.ndarray:
    """Where pair k of PE(pos) sits on its circle: (x, y) = (cos ω_k·pos, sin ω_k·pos).

    x is element 2k + 1 of PE(pos) and y is element 2k. ``pos`` may be an
    array; the result has shape pos.shape + (2,).
    Taught in notebooks/03-shift-matrix.ipynb.

    >>> pair_point(2, 0).round(4)        # pair 0 of PE(2): (cos 2, sin 2)
    array([-0.4161,  0.9093])
    >>> pair_point(2, 1).round(4)        # pair 1: (cos 0.02, sin 0.02)
    array([0.9998, 0.02  ])
    """
    k = _pair_index(k, dim)
    pe = sinusoidal(pos, dim, base)
    # (x, y) = (PE[2k+1], PE[2k]) = (cos ω_k·pos, sin ω_k·pos)
    return np.stack([pe[..., 2 * k + 1], pe[..., 2 * k]], axis=-1)


def _pair_index(k, dim) -> int:
    dim = v.positive_int("dim", dim)
    if not v._is_int(k):
        raise TypeError(f"k must be a pair index (an integer), got {v._show(k)}")
    if not 0 <= k < dim // 2:
        raise ValueError(f"k must be a full (sin, cos) pair index 0 … {dim // 2 - 1} for dim={dim}, got {k}")
    return int(k)


def _circle_axes(ax, title: str) -> None:
    """A unit circle with its axes: drawn once, into the demo's static background."""
    phi = np.linspace(0.0, 2.0 * np.pi, 241)
    ax.plot(np.cos(phi), np.sin(phi), color="0.6", linewidth=1.2, zorder=1)
    ax.axhline(0.0, color="0.85", linewidth=1.0, zorder=0)
    ax.axvline(0.0, color="0.85", linewidth=1.0, zorder=0)
    ax.set_xlim(-CIRCLE_LIM, CIRCLE_LIM)
    ax.set_ylim(-CIRCLE_LIM, CIRCLE_LIM)
    ax.set_aspect("equal")
    ax.set_title(title)


def draw_pair_shift(ax, k, pos, offset, dim=4, base=10000.0) -> dict:
    """Draw pair k of PE(pos) and of PE(pos + offset) on the unit circle, and the turn between.

    The point of PE(pos) (blue, hollow), the point of PE(pos + offset) (vermilion,
    filled), the point T @ PE(pos) (a black cross, which must land on the
    vermilion point) and an arc through the net turn ω_k·offset (wrapped into
    (−π, π]). Returns a dict of the artists ("start", "end", "moved", "arc")
    plus the settings ("k", "dim", "base", "omega"); every artist that
    :func:`update_pair_shift` moves is animated.
    Taught in notebooks/03-shift-matrix.ipynb.

    >>> fig, ax = new_figure()
    >>> h = draw_pair_shift(ax, 0, pos=2, offset=1)
    >>> h["end"].get_xydata().round(4)           # PE(3), pair 0: (cos 3, sin 3)
    array([[-0.99  ,  0.1411]])
    """
    k = _pair_index(k, dim)
    omega = frequencies(dim, base)[k]
    _circle_axes(ax, "")
    ax.set_xlabel(f"cos(ω$_{k}$·pos) = element {2 * k + 1}")
    ax.set_ylabel(f"sin(ω$_{k}$·pos) = element {2 * k}")
    handles = {"k": k, "dim": int(dim), "base": float(base), "omega": float(omega)}
    (handles["arc"],) = ax.plot([], [], color=ARC_COLOUR, linewidth=3.0, animated=True, zorder=2, label="turn ω·offset")
    (handles["start"],) = ax.plot(
        [], [], "o", markersize=13, markerfacecolor="white", markeredgecolor=START_COLOUR, markeredgewidth=2.5,
        animated=True, zorder=3, label="PE(pos)",
    )
    (handles["end"],) = ax.plot(
        [], [], "o", markersize=11, color=END_COLOUR, animated=True, zorder=4, label="PE(pos + offset)"
    )
    (handles["moved"],) = ax.plot(
        [], [], "x", markersize=9, markeredgewidth=2.5, color="black", animated=True, zorder=5, label="T · PE(pos)"
    )
    # the title is static: text is the slowest thing to redraw, and the turn is in the readout
    ax.set_title(f"pair {k}: ω$_{k}$ = {omega:g} rad per position")
    update_pair_shift(handles, pos, offset)
    return handles


def update_pair_shift(handles, pos, offset) -> None:
    """Move the artists of :func:`draw_pair_shift` to a new ``pos`` and ``offset``.

    >>> fig, ax = new_figure()
    >>> h = draw_pair_shift(ax, 1, pos=2, offset=1)
    >>> update_pair_shift(h, pos=0, offset=100)
    >>> h["end"].get_xydata().round(4)           # pair 1 of PE(100): (cos 1, sin 1)
    array([[0.5403, 0.8415]])
    """
    k, dim, base, omega = handles["k"], handles["dim"], handles["base"], handles["omega"]
    pos = v.real_scalar("pos", pos)
    offset = v.real_scalar("offset", offset)
    start = pair_point(pos, k, dim, base)
    end = pair_point(pos + offset, k, dim, base)
    # T @ PE(pos), read back on the same pair: (x, y) = (row 2k+1, row 2k)
    moved_pe = shift_matrix(offset, dim, base) @ sinusoidal(pos, dim, base)
    moved = np.array([moved_pe[2 * k + 1], moved_pe[2 * k]])
    handles["start"].set_data([start[0]], [start[1]])
    handles["end"].set_data([end[0]], [end[1]])
    handles["moved"].set_data([moved[0]], [moved[1]])
    # the net turn ω_k·offset, wrapped into (−π, π], drawn just inside the circle
    turn = wrap_angle(omega * offset)
    arc = arc_points(omega * pos, turn, radius=0.8, num=48)
    handles["arc"].set_data(arc[:, 0], arc[:, 1])


def draw_matrix(ax, T, title="") -> dict:
    """Draw a small matrix as a heatmap in ±1 with its numbers written in the cells.

    Returns {"image", "texts"}: "image" is a QuadMesh (one coloured cell per
    entry; ``get_array()`` gives the matrix, masked outside the 2 × 2 blocks,
    whose entries are always 0) and "texts" the numbers, row by row. The
    cells and the numbers inside the blocks are animated, so
    :func:`update_matrix` can change them. The title is static: text is the
    slowest thing to redraw, so the demo's readout carries the offset. Thin
    lines mark the blocks. Taught in notebooks/03-shift-matrix.ipynb.

    >>> fig, ax = new_figure()
    >>> h = draw_matrix(ax, shift_matrix(1, 4))
    >>> [t.get_text() for t in h["texts"][2]]    # row 2: the second pair's block
    ['0', '0', '0.99995', '0.01000']
    """
    T = np.asarray(T, dtype=np.float64)
    n = T.shape[0]
    # the cells outside the 2 × 2 blocks are always 0: they are masked out of the
    # (animated) image and show the static background, painted the colour of 0
    ax.set_facecolor(matplotlib.colormaps[DIVERGING_CMAP](0.5))
    # a mesh of n × n unit cells centred on the integers (cheaper to redraw than a resampled image)
    edges = np.arange(n + 1) - 0.5
    image = ax.pcolormesh(edges, edges, _blocks_only(T), cmap=DIVERGING_CMAP, vmin=-1.0, vmax=1.0, animated=True)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)  # row 0 at the top, as a matrix is written
    ax.set_aspect("equal")
    for edge in range(2, n, 2):
        # block edges, animated so that they stay on top of the (animated) cells
        ax.axhline(edge - 0.5, color="0.3", linewidth=1.5, animated=True, zorder=3)
        ax.axvline(edge - 0.5, color="0.3", linewidth=1.5, animated=True, zorder=3)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xlabel("column j (element index)")
    ax.set_ylabel("row i (element index)")
    # only the entries inside a 2 × 2 block change with the offset; the zeros are drawn once
    texts = [
        [ax.text(j, i, "", ha="center", va="center", animated=(i // 2 == j // 2), zorder=4) for j in range(n)]
        for i in range(n)
    ]
    ax.set_title(title)
    handles = {"image": image, "texts": texts}
    update_matrix(handles, T)
    return handles


def _blocks_only(T: np.ndarray) -> np.ma.MaskedArray:
    i = np.arange(T.shape[0])
    return np.ma.masked_array(T, mask=(i[:, None] // 2) != (i[None, :] // 2))


def _cell_text(value: float) -> str:
    return "0" if value == 0.0 else f"{value:.5f}"


def update_matrix(handles, T) -> None:
    """Show a new matrix (same shape) in the artists of :func:`draw_matrix`."""
    T = np.asarray(T, dtype=np.float64)
    handles["image"].set_array(_blocks_only(T))
    for i, row in enumerate(handles["texts"]):
        for j, text in enumerate(row):
            text.set_text(_cell_text(T[i, j]))
            # dark cells (|value| near 1) get white text
            text.set_color("white" if abs(T[i, j]) > 0.6 else "black")


def cosine_similarity_matrix(positions, dim, base=10000.0) -> np.ndarray:
    """S[a, b] = PE(p_a)·PE(p_b) / (dim/2), the cosine similarity of two position vectors.

    Each pair contributes sin·sin + cos·cos = cos(ω_k·(p_a − p_b)), and
    ‖PE(p)‖² = dim/2 for an even dim, so S[a, b] is the mean over pairs of
    cos(ω_k·(p_a − p_b)): it depends on the distance only.
    Taught in notebooks/03-shift-matrix.ipynb.

    >>> cosine_similarity_matrix([5, 8], 4).round(5)   # off-diagonal: (cos 3 + cos 0.03)/2 = (−0.98999 + 0.99955)/2
    array([[1.     , 0.00478],
           [0.00478, 1.     ]])
    """
    dim = v.positive_int("dim", dim)
    if dim % 2:
        raise ValueError(f"dim must be even for a cosine similarity of PE vectors, got {dim}")
    pe = sinusoidal(v.real_array("positions", positions), dim, base)
    # S = PE·PEᵀ / (dim/2)
    return pe @ pe.T / (dim / 2)


def draw_position_matrix(ax, values, positions, title, cbar_label, xlabel="key position (tokens)",
                         ylabel="query position (tokens)") -> dict:
    """A heatmap of a position × position matrix with a labelled colorbar.

    The colour scale is diverging and symmetric about 0 (±max|value|), so
    positive and negative scores read the same way. Returns {"image", "colorbar"}.
    Taught in notebooks/03-shift-matrix.ipynb and 04-rope.ipynb.

    >>> fig, ax = new_figure()
    >>> h = draw_position_matrix(ax, np.eye(3), [0, 1, 2], "identity", "value")
    >>> h["colorbar"].ax.get_ylabel(), h["image"].get_clim()
    ('value', (-1.0, 1.0))
    """
    values = np.asarray(values, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    limit = float(np.max(np.abs(values))) or 1.0
    step = positions[1] - positions[0] if positions.size > 1 else 1.0
    extent = (positions[0] - step / 2, positions[-1] + step / 2, positions[-1] + step / 2, positions[0] - step / 2)
    image = ax.imshow(values, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, extent=extent, interpolation="nearest")
    colorbar = ax.figure.colorbar(image, ax=ax)
    colorbar.set_label(cbar_label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return {"image": image, "colorbar": colorbar}


def shift_readout(pos, offset, dim=4, base=10000.0) -> str:
    """The demo's HTML readout: for each pair, ω_k, the turn, T·PE(pos) and PE(pos + offset).

    >>> "0.99995" in shift_readout(2, 1)        # the T_1 block of pair 1: cos 0.01
    True
    """
    omega = frequencies(dim, base)
    T = shift_matrix(offset, dim, base)
    moved = T @ sinusoidal(pos, dim, base)
    target = sinusoidal(pos + offset, dim, base)
    rows = []
    for k, w in enumerate(omega):
        c, s = T[2 * k, 2 * k], T[2 * k, 2 * k + 1]
        rows.append(
            f"<tr><td>{k}</td><td>{w:g}</td><td>{w * offset:.4f}</td>"
            # the 2 × 2 block on two lines, one row of the matrix each (cells do not wrap on their own)
            f"<td>[{c:.5f}, {s:.5f}]<br>[{-s:.5f}, {c:.5f}]</td>"
            f"<td>({moved[2 * k]:.4f}, {moved[2 * k + 1]:.4f})</td>"
            f"<td>({target[2 * k]:.4f}, {target[2 * k + 1]:.4f})</td></tr>"
        )
    head = (
        "<tr><th>pair k</th><th>ω_k</th><th>turn ω_k·offset (rad)</th><th>block of T</th>"
        "<th>T·PE(pos): (sin, cos)</th><th>PE(pos + offset): (sin, cos)</th></tr>"
    )
    return (
        f"<b>pos = {pos:g}, offset = {offset:g}, D = {dim}</b>"
        f"<table>{head}{''.join(rows)}</table>"
    )


def shift_demo(pos=2, offset=1, dim=4, base=10000.0, numbers=False):
    """Sliders for pos and offset: every pair's point turns from PE(pos) to PE(pos + offset).

    One circle per pair and the matrix T for this offset, as colours; the
    readout lists each pair's block, number by number, and checks T·PE(pos)
    against PE(pos + offset). ``numbers=True`` also writes the numbers in the
    blocks' cells: they are the costliest part of a frame (about half of it
    here, e.g. 40 ms against 21 ms median per slider step), so by default they
    are left to the readout. Taught in notebooks/03-shift-matrix.ipynb.

    >>> demo = shift_demo()
    >>> demo.controls["offset"].value = 3
    >>> demo.handles["pairs"][0]["end"].get_xydata().round(4)   # PE(5), pair 0: (cos 5, sin 5)
    array([[ 0.2837, -0.9589]])
    """
    from ..demo import SliderDemo, int_slider

    dim = v.positive_int("dim", dim)
    if dim % 2 or dim > 8:
        raise ValueError(f"dim must be even and at most 8 for the shift demo (one circle per pair), got {dim}")

    def make_figure():
        n_pairs = dim // 2
        fig, axes = new_figure(1, n_pairs + 1, figsize=(4.0 * (n_pairs + 1), 4.4))
        pairs = [draw_pair_shift(axes[k], k, pos, offset, dim, base) for k in range(n_pairs)]
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4)
        matrix = draw_matrix(axes[-1], shift_matrix(offset, dim, base), "T for the offset on the slider")
        if not numbers:
            for text in (t for row in matrix["texts"] for t in row if t.get_animated()):
                text.set_visible(False)
        handles = {"pairs": pairs, "matrix": matrix}
        _update(handles, pos=pos, offset=offset)
        return fig, handles

    def _update(handles, pos, offset):
        for pair in handles["pairs"]:
            update_pair_shift(pair, pos, offset)
        update_matrix(handles["matrix"], shift_matrix(offset, dim, base))
        return shift_readout(pos, offset, dim, base)

    controls = [
        int_slider("pos", "pos (position)", 0, 100, pos),
        int_slider("offset", "offset (positions moved)", -100, 100, offset),
    ]
    return SliderDemo(make_figure, _update, controls, title="The shift T moves PE(pos) to PE(pos + offset)")


def make_shift_as_rotation():
    """Figure 03-shift-as-rotation: T_1 turns pair 0 by 1 rad from every position; T_1 itself.

    Left: pair 0 of PE(0) … PE(6) on its circle, each step pos → pos + 1 an
    arc of the same 1 rad. Right: the matrix T_1 for D = 4.
    """
    fig, (left, right) = new_figure(1, 2, figsize=(10.0, 4.6))
    _circle_axes(left, "T₁ on pair 0: the same 1 rad turn from every pos")
    left.set_xlabel("cos(pos) = element 1")
    left.set_ylabel("sin(pos) = element 0")
    positions = np.arange(7)
    points = pair_point(positions, 0, 4)
    for p in positions[:-1]:
        # each step is the same turn: ω_0·1 = 1 rad
        arc = arc_points(float(p), 1.0, radius=0.78, num=40)
        left.plot(arc[:, 0], arc[:, 1], color=ARC_COLOUR, linewidth=2.5)
        left.annotate("", xy=arc[-1], xytext=arc[-4], arrowprops={"arrowstyle": "-|>", "color": ARC_COLOUR, "lw": 2})
    left.plot(points[:, 0], points[:, 1], "o", color=END_COLOUR, markersize=9, zorder=3)
    left.plot([1.0], [0.0], "o", markersize=14, markerfacecolor="none", markeredgecolor=START_COLOUR,
              markeredgewidth=2.5, zorder=4)
    for p, (x, y) in zip(positions, points, strict=True):
        left.text(1.14 * x, 1.14 * y, f"{p}", ha="center", va="center")
    left.text(0.0, 0.0, "arcs: T₁\nlabels: pos", ha="center", va="center", color="0.25")
    draw_matrix(right, shift_matrix(1, 4), "T₁ for D = 4 (ω₀ = 1, ω₁ = 0.01)")
    return fig


FIGURES = {"03-shift-as-rotation": make_shift_as_rotation}
DEMOS = {"shift": shift_demo}
