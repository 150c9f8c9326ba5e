"""Clock faces, heatmap and waves of the sinusoidal encoding.

Taught in notebooks/01-clock-hands.ipynb.

Each (sin, cos) pair k of PE(pos) is a point on the unit circle at angle
θ_k = pos·ω_k, drawn as the hand of a clock face: the x axis holds cos θ_k,
the y axis sin θ_k, and every hand starts at (1, 0) for pos = 0 and turns
counter-clockwise as pos grows. Pair 0 is the fast second hand; the last pair
is the slow hour hand.

The functions draw onto Axes they are given and return the artists they made,
so the slider demo (:func:`clock_demo`) only moves those artists and the tests
read their data.
"""

from __future__ import annotations

import html

import numpy as np
from matplotlib.transforms import ScaledTranslation

from .. import _validate as v
from ..core import frequencies, sinusoidal
from . import DIVERGING_CMAP, OKABE_ITO, new_figure

__all__ = [
    "clock_slots",
    "draw_clock_face",
    "set_clock_hand",
    "plot_clock_faces",
    "plot_pe_heatmap",
    "plot_dimension_waves",
    "plot_unit_circle_walk",
    "make_clock_figure",
    "update_clock",
    "clock_demo",
    "make_unit_circle_walk",
    "FIGURES",
    "DEMOS",
]

#: Colours: the hand, the start point at (1, 0), the circle.
HAND_COLOR = OKABE_ITO[0]
START_COLOR = OKABE_ITO[4]
CIRCLE_COLOR = "0.55"

#: How many clock faces the slider demo shows (a fixed grid: 2 rows × 4).
N_FACES = 8

#: The positions of the quadrant walk in the lesson.
WALK_POSITIONS = (0, 2, 4, 6, 7)


def _fmt(x: float) -> str:
    """A short number for a title: 1, 0.01, 0.000316, 7.00."""
    return f"{x:.3g}"


def clock_slots(dim, n_faces: int = N_FACES) -> list[int]:
    """Which pairs k the demo's ``n_faces`` clock faces show for a vector of length ``dim``.

    All pairs if they fit; otherwise the first ``n_faces − 1`` pairs (the fast
    hands) and the last, slowest pair. Taught in notebooks/01-clock-hands.ipynb.

    >>> clock_slots(6)             # 3 pairs: k = 0, 1, 2
    [0, 1, 2]
    >>> clock_slots(64)            # 32 pairs: the 7 fastest and the slowest, k = 31
    [0, 1, 2, 3, 4, 5, 6, 31]
    """
    dim = v.positive_int("dim", dim)
    n_faces = v.positive_int("n_faces", n_faces)
    pairs = (dim + 1) // 2
    if pairs <= n_faces:
        return list(range(pairs))
    return list(range(n_faces - 1)) + [pairs - 1]


def _arc(angle: float, radius: float = 0.32, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Points of the arc from angle 0 to the angle wrapped into [0, 2π), at ``radius``."""
    # the hand's direction repeats every 2π: only θ mod 2π shows on the face
    t = np.linspace(0.0, np.mod(angle, 2.0 * np.pi), n)
    return radius * np.cos(t), radius * np.sin(t)


def draw_clock_face(ax, angle: float = 0.0, title: str = "", animated: bool = False) -> dict:
    """Draw one clock face on ``ax``: the unit circle, the start point (1, 0) and a hand at ``angle``.

    The hand goes from the origin to (cos θ, sin θ): x holds the pair's cosine,
    y its sine. A small arc marks the angle θ mod 2π swept from the start.
    Returns ``{"hand", "tip", "arc", "start", "circle", "title"}``; with
    ``animated=True`` the hand, tip and arc are marked for blitting (the
    caller marks the title too if it changes it).
    Taught in notebooks/01-clock-hands.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure(figsize=(3, 3))
    >>> h = draw_clock_face(ax, angle=np.pi / 2)      # a quarter turn: (cos, sin) = (0, 1)
    >>> h["tip"].get_xydata().round(6)
    array([[0., 1.]])
    """
    angle = v.real_scalar("angle", angle)
    t = np.linspace(0.0, 2.0 * np.pi, 181)
    (circle,) = ax.plot(np.cos(t), np.sin(t), color=CIRCLE_COLOR, linewidth=1.5, zorder=1)
    ax.axhline(0.0, color="0.85", linewidth=1.0, zorder=0)
    ax.axvline(0.0, color="0.85", linewidth=1.0, zorder=0)
    (start,) = ax.plot(
        [1.0], [0.0], "o", color=START_COLOR, markeredgecolor="black", markersize=9, zorder=2, label="start, pos = 0"
    )
    (arc,) = ax.plot(*_arc(angle), color=OKABE_ITO[2], linewidth=2.0, zorder=2, animated=animated)
    # the hand: from (0, 0) to (cos θ, sin θ)
    (hand,) = ax.plot(
        [0.0, np.cos(angle)], [0.0, np.sin(angle)], color=HAND_COLOR, linewidth=3.0, zorder=3, animated=animated
    )
    (tip,) = ax.plot(
        [np.cos(angle)], [np.sin(angle)], "o", color=HAND_COLOR, markersize=8, zorder=4, animated=animated
    )
    ax.set_xlim(-1.25, 1.25)
    ax.set_ylim(-1.25, 1.25)
    ax.set_aspect("equal")
    ax.set_xticks([-1, 0, 1])
    ax.set_yticks([-1, 0, 1])
    title_text = ax.set_title(title)
    return {"hand": hand, "tip": tip, "arc": arc, "start": start, "circle": circle, "title": title_text}


def set_clock_hand(face: dict, angle: float | None) -> None:
    """Point a face's hand (and its arc) at ``angle`` in radians, or hide them when ``angle`` is None.

    Taught in notebooks/01-clock-hands.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure(figsize=(3, 3))
    >>> face = draw_clock_face(ax)
    >>> set_clock_hand(face, np.pi)                    # half a turn: (cos π, sin π) = (−1, 0)
    >>> face["hand"].get_xydata().round(6)
    array([[ 0.,  0.],
           [-1.,  0.]])
    """
    parts = (face["hand"], face["tip"], face["arc"])
    if angle is None:
        for part in parts:
            part.set_visible(False)
        return
    # the hand's tip sits at (cos θ, sin θ)
    c, s = np.cos(angle), np.sin(angle)
    face["hand"].set_data([0.0, c], [0.0, s])
    face["tip"].set_data([c], [s])
    face["arc"].set_data(*_arc(angle))
    for part in parts:
        part.set_visible(True)


def _face_title(k: int, omega: float, angle: float, slowest: bool) -> str:
    name = f"k = {k}" + (" (slowest)" if slowest else "")
    return f"{name}, ω = {_fmt(omega)}\nθ = {angle:.2f} rad"


def plot_clock_faces(axes, pos, dim, base=10000.0, animated: bool = False) -> list[dict]:
    """One clock face per pair of PE(pos): face k shows the hand at θ_k = pos·ω_k.

    ``axes`` must hold at least ceil(dim/2) Axes. Each face's title names the
    pair, its frequency ω_k = base^(−2k/dim) and its angle. Returns one dict
    per face (see :func:`draw_clock_face`); every face gets an x label, the
    first a y label. Taught in notebooks/01-clock-hands.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, axes = new_figure(1, 2, figsize=(6, 3))
    >>> faces = plot_clock_faces(axes, 2, 4)          # θ_0 = 2·1 = 2, θ_1 = 2·0.01 = 0.02
    >>> faces[0]["tip"].get_xydata().round(4)         # (cos 2, sin 2)
    array([[-0.4161,  0.9093]])
    >>> print(faces[1]["title"].get_text())
    k = 1, ω = 0.01
    θ = 0.02 rad
    """
    omega = frequencies(dim, base)
    pos = v.real_scalar("pos", pos)
    axes = list(np.ravel(axes))
    if len(axes) < len(omega):
        raise ValueError(f"axes must hold one Axes per pair: dim={dim} has {len(omega)} pairs, got {len(axes)} Axes")
    faces = []
    for k, ax in enumerate(axes[: len(omega)]):
        # θ_k = pos · ω_k
        angle = pos * omega[k]
        faces.append(draw_clock_face(ax, angle, _face_title(k, omega[k], angle, False), animated=animated))
        ax.set_xlabel(r"$\cos\theta_k$")
        ax.set_ylabel(r"$\sin\theta_k$" if k == 0 else "")
    return faces


def plot_pe_heatmap(ax, n_positions, dim, base=10000.0) -> dict:
    """Heatmap of PE(pos, i): one row per position 0 … n_positions − 1, one column per dim index i.

    Values lie in [−1, 1], so the colour scale is the diverging, colorblind-safe
    DIVERGING_CMAP fixed at ±1, with a labelled colorbar. Returns
    ``{"image", "colorbar", "values"}``. Taught in notebooks/01-clock-hands.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_pe_heatmap(ax, 3, 4)
    >>> np.asarray(h["image"].get_array())[2].round(4)   # the row of pos = 2 is PE(2)
    array([ 0.9093, -0.4161,  0.02  ,  0.9998])
    """
    n_positions = v.positive_int("n_positions", n_positions)
    values = sinusoidal(np.arange(n_positions), dim, base)
    dim = values.shape[1]
    image = ax.imshow(
        values,
        cmap=DIVERGING_CMAP,
        vmin=-1.0,
        vmax=1.0,
        aspect="auto",
        interpolation="nearest",
        extent=(-0.5, dim - 0.5, n_positions - 0.5, -0.5),
    )
    colorbar = ax.figure.colorbar(image, ax=ax, label="PE(pos, i)")
    ax.set_xlabel("dimension index i")
    ax.set_ylabel("position pos (tokens)")
    ax.set_title(f"PE over {n_positions} positions, D = {dim}")
    return {"image": image, "colorbar": colorbar, "values": values}


def plot_dimension_waves(axes, dims, dim, base=10000.0, max_pos: int = 50) -> dict:
    """One wave per chosen dimension index i: PE(pos, i) against pos, on its own Axes.

    The smooth curve is the formula at every real pos; the dots are the integer
    positions a sequence actually has. Returns ``{"curves", "dots"}``, lists in
    the order of ``dims``. Taught in notebooks/01-clock-hands.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, axes = new_figure(2, 1, figsize=(6, 4))
    >>> h = plot_dimension_waves(axes, [0, 3], 4, max_pos=3)
    >>> h["dots"][0].get_ydata().round(4)             # sin(pos) at pos = 0, 1, 2, 3
    array([0.    , 0.8415, 0.9093, 0.1411])
    >>> h["dots"][1].get_ydata().round(5)             # cos(pos/100) at pos = 0, 1, 2, 3
    array([1.     , 0.99995, 0.9998 , 0.99955])
    """
    omega = frequencies(dim, base)
    dim = int(dim)
    max_pos = v.positive_int("max_pos", max_pos)
    axes = list(np.ravel(axes))
    dims = [int(i) for i in dims]
    if len(axes) < len(dims):
        raise ValueError(f"axes must hold one Axes per chosen dim: got {len(dims)} dims and {len(axes)} Axes")
    for i in dims:
        if not 0 <= i < dim:
            raise ValueError(f"dims must be element indices in 0 … {dim - 1} for dim={dim}, got {i}")
    fine = np.linspace(0.0, max_pos, 40 * max_pos + 1)
    whole = np.arange(max_pos + 1, dtype=np.float64)
    curves, dots = [], []
    for n, (ax, i) in enumerate(zip(axes, dims, strict=True)):
        k = i // 2
        func = np.sin if i % 2 == 0 else np.cos
        name = "sin" if i % 2 == 0 else "cos"
        color = OKABE_ITO[n % len(OKABE_ITO)]
        # PE(pos, 2k) = sin(pos·ω_k),  PE(pos, 2k+1) = cos(pos·ω_k)
        (curve,) = ax.plot(fine, func(fine * omega[k]), color=color, linewidth=1.5)
        (dot,) = ax.plot(whole, func(whole * omega[k]), "o", color=color, markersize=4)
        ax.set_ylim(-1.2, 1.2)
        ax.set_xlim(0, max_pos)
        ax.set_ylabel("value")
        ax.set_title(
            rf"$i = {i}$: $\{name}(\mathrm{{pos}}\cdot\omega_{{{k}}})$,  $\omega_{{{k}}} = {_fmt(omega[k])}$,"
            rf"  $\lambda_{{{k}}} = {2 * np.pi / omega[k]:.1f}$",
            loc="left",
        )
        curves.append(curve)
        dots.append(dot)
    axes[len(dims) - 1].set_xlabel("position pos (tokens)")
    return {"curves": curves, "dots": dots}


def plot_unit_circle_walk(ax, positions=WALK_POSITIONS, omega: float = 1.0) -> dict:
    """The walk of one pair around the unit circle: a point at (cos θ, sin θ), θ = pos·ω, per position.

    The start (1, 0) on the positive-cos axis is marked, the quadrants are
    named, and each point is labelled with its pos and its values, written out
    by name ("sin = +0.909", "cos = −0.416"), since the point sits at x = cos, y = sin.
    Returns ``{"points", "start", "labels", "path"}``. Taught in
    notebooks/01-clock-hands.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure(figsize=(5, 5))
    >>> h = plot_unit_circle_walk(ax, [0, 2])          # (cos 0, sin 0) and (cos 2, sin 2)
    >>> h["points"].get_xydata().round(4)
    array([[ 1.    ,  0.    ],
           [-0.4161,  0.9093]])
    """
    omega = v.real_scalar("omega", omega)
    positions = v.real_array("positions", positions).ravel()
    t = np.linspace(0.0, 2.0 * np.pi, 361)
    ax.plot(np.cos(t), np.sin(t), color=CIRCLE_COLOR, linewidth=1.5, zorder=1)
    ax.axhline(0.0, color="0.75", linewidth=1.0, zorder=0)
    ax.axvline(0.0, color="0.75", linewidth=1.0, zorder=0)
    # θ = pos · ω, and the point is (cos θ, sin θ)
    angles = positions * omega
    x, y = np.cos(angles), np.sin(angles)
    # the path the point sweeps, drawn as a slowly shrinking spiral so that a second lap shows
    sweep = np.linspace(angles.min(), angles.max(), 400)
    radius = 0.85 - 0.03 * (sweep - sweep[0])
    (path,) = ax.plot(radius * np.cos(sweep), radius * np.sin(sweep), ":", color=HAND_COLOR, linewidth=1.5, zorder=1)
    if len(sweep) > 1 and sweep[-1] > sweep[0]:
        ax.annotate(
            "", xy=(radius[-1] * np.cos(sweep[-1]), radius[-1] * np.sin(sweep[-1])),
            xytext=(radius[-8] * np.cos(sweep[-8]), radius[-8] * np.sin(sweep[-8])),
            arrowprops={"arrowstyle": "-|>", "color": HAND_COLOR, "lw": 1.5},
        )
    (points,) = ax.plot(x, y, "o", color=HAND_COLOR, markersize=9, zorder=3, label="PE pair at pos")
    (start,) = ax.plot(
        [1.0], [0.0], "o", color=START_COLOR, markeredgecolor="black", markersize=15, zorder=2,
        label="start (1, 0): pos = 0",
    )
    for name, (qx, qy) in {"I": (0.3, 0.3), "II": (-0.3, 0.3), "III": (-0.3, -0.3), "IV": (0.3, -0.3)}.items():
        ax.text(qx, qy, name, ha="center", va="center", color="0.5", fontsize=14)
    labels = []
    for p, xi, yi in zip(positions, x, y, strict=True):
        # put each label just outside the circle, in the direction of its point
        # name each value: the point is (x, y) = (cos θ, sin θ), so an unnamed "(sin, cos)" pair reads backwards
        text = f"pos {p:g}\nsin = {yi:+.3f}\ncos = {xi:+.3f}".replace("-", "−")
        ha = "left" if xi >= 0 else "right"
        va = "bottom" if yi >= 0 else "top"
        labels.append(ax.text(1.12 * xi, 1.12 * yi, text, ha=ha, va=va, fontsize=11))
    ax.set_xlim(-2.1, 2.1)
    ax.set_ylim(-1.7, 1.7)
    ax.set_aspect("equal")
    ax.set_xlabel("cos θ")
    ax.set_ylabel("sin θ")
    ax.set_title(f"One pair's walk: the point (cos θ, sin θ), θ = pos·ω, ω = {_fmt(omega)}")
    ax.legend(loc="lower left", fontsize=11)
    return {"points": points, "start": start, "labels": labels, "path": path}


def make_unit_circle_walk():
    """The figure ``figures/01-unit-circle-walk.png``: the fast pair (ω_0 = 1) at pos 0, 2, 4, 6, 7.

    Each point is (cos θ, sin θ) with θ = pos·1. Taught in notebooks/01-clock-hands.ipynb.

    >>> fig = make_unit_circle_walk()
    >>> fig.axes[0].lines[-1].get_xydata()        # the start marker: θ = 0 gives (cos 0, sin 0) = (1, 0)
    array([[1., 0.]])
    """
    fig, ax = new_figure(figsize=(7.5, 6.0))
    plot_unit_circle_walk(ax, WALK_POSITIONS, 1.0)
    return fig


# --- the slider demo -------------------------------------------------------------------------------


def make_clock_figure(n_faces: int = N_FACES):
    """The demo figure: a fixed 2-row grid of ``n_faces`` clock faces, hands animated for blitting.

    Returns ``(fig, handles)`` with ``handles = {"faces": [...], "settings": Text}``;
    each face is the dict of :func:`draw_clock_face` plus an ``"unused"`` text.
    A fixed grid means changing D never rebuilds Axes: face n shows pair
    k = n, except the last face, which shows the slowest pair once D has more
    pairs than faces; faces beyond the last pair hide their hand and say so.
    Only the hands, arcs, the last face's title, the "unused" notes and the
    settings line change, so a frame redraws little text (text is the slow part).
    Taught in notebooks/01-clock-hands.ipynb.

    >>> fig, handles = make_clock_figure()
    >>> len(handles["faces"]), handles["faces"][0]["hand"].get_animated()
    (8, True)
    """
    n_faces = v.positive_int("n_faces", n_faces)
    ncols = (n_faces + 1) // 2
    fig, axes = new_figure(2, ncols, figsize=(2.45 * ncols, 5.8))
    axes = np.ravel(axes)
    faces = []
    for n, ax in enumerate(axes[:n_faces]):
        face = draw_clock_face(ax, 0.0, f"k = {n}", animated=True)
        face["title"].set_animated(n == n_faces - 1)
        face["unused"] = ax.text(
            0.0, -0.62, "not in D", ha="center", va="center", color="0.3", fontsize=11, animated=True, visible=False
        )
        ax.tick_params(labelsize=11)
        # ticks only on the outer faces: fewer artists to walk each frame
        if n < ncols:
            ax.set_xticks([])
        else:
            ax.set_xlabel(r"$\cos\theta_k$")
        if n % ncols:
            ax.set_yticks([])
        else:
            ax.set_ylabel(r"$\sin\theta_k$")
        faces.append(face)
    for ax in axes[n_faces:]:
        ax.set_visible(False)
    # a blank second suptitle line makes room for the settings, drawn there as their own animated text
    title = fig.suptitle(r"Clock hands of PE(pos): pair $k$ points at angle $\theta_k = \mathrm{pos}\cdot\omega_k$" "\n ")
    below = ScaledTranslation(0.0, -1.1 * title.get_fontsize() / 72.0, fig.dpi_scale_trans)
    # an Axes' text (not the figure's) so that savefig draws it too although it is animated
    settings = axes[0].text(
        0.5, title.get_position()[1], "pos", ha="center", va="top", fontsize=12, color="0.2", animated=True,
        transform=fig.transFigure + below,
    )
    settings.set_in_layout(False)
    return fig, {"faces": faces, "settings": settings}


def update_clock(handles, pos, dim, base=10000.0) -> str:
    """Move every hand to PE(pos) for this D and base; return the HTML readout.

    The faces show the pairs chosen by :func:`clock_slots`; spare faces hide
    their hand. The readout tabulates, per shown pair, ω_k, λ_k = 2π/ω_k, the
    angle θ_k = pos·ω_k, the angle wrapped into [0, 2π), sin θ_k and cos θ_k.
    Taught in notebooks/01-clock-hands.ipynb.

    >>> fig, handles = make_clock_figure()
    >>> html = update_clock(handles, 100, 4)       # pair 1: θ_1 = 100·0.01 = 1 rad
    >>> handles["faces"][1]["tip"].get_xydata().round(4)   # (cos 1, sin 1)
    array([[0.5403, 0.8415]])
    >>> handles["faces"][2]["hand"].get_visible()  # D = 4 has only 2 pairs
    False
    """
    omega = frequencies(dim, base)
    dim = int(dim)
    base = v.base_value(base)
    pos = v.real_scalar("pos", pos)
    faces = handles["faces"]
    slots = clock_slots(dim, len(faces))
    pairs = len(omega)
    rows = []
    for n, face in enumerate(faces):
        if n >= len(slots):
            set_clock_hand(face, None)
            face["unused"].set_visible(True)
            if n == len(faces) - 1:
                face["title"].set_text(f"k = {n}")
            continue
        face["unused"].set_visible(False)
        k = slots[n]
        # θ_k = pos · ω_k
        angle = pos * omega[k]
        set_clock_hand(face, angle)
        if n == len(faces) - 1:
            face["title"].set_text(f"k = {k} (slowest)" if k == pairs - 1 else f"k = {k}")
        lone = dim % 2 == 1 and k == pairs - 1
        rows.append(
            f"<tr><td>{k}</td><td>{2 * k}, {'–' if lone else 2 * k + 1}</td><td>{omega[k]:.4g}</td>"
            f"<td>{2 * np.pi / omega[k]:,.1f}</td><td>{angle:.4f}</td><td>{np.mod(angle, 2 * np.pi):.4f}</td>"
            f"<td>{np.sin(angle):+.4f}</td><td>{'–' if lone else f'{np.cos(angle):+.4f}'}</td></tr>"
        )
    handles["settings"].set_text(f"pos = {pos:g},  D = {dim},  base = {base:,.0f}")
    shown = "all of them" if pairs <= len(faces) else f"k = 0 … {len(faces) - 2} and the slowest, k = {pairs - 1}"
    head = (
        "<tr><th>pair k</th><th>dims</th><th>ω_k</th><th>λ_k (positions)</th><th>θ_k = pos·ω_k (rad)</th>"
        "<th>θ_k mod 2π</th><th>sin θ_k</th><th>cos θ_k</th></tr>"
    )
    return (
        f"<b>pos = {pos:g}, D = {dim}, base = {html.escape(f'{base:,.0f}')}</b>: {pairs} pairs, showing {shown}"
        f"<table style='font-family:monospace'>{head}{''.join(rows)}</table>"
    )


def clock_demo(pos: int = 7, dim: int = 16, base: float = 10000.0):
    """Slider demo: pos, D and base move every clock hand of PE(pos) at once.

    Taught in notebooks/01-clock-hands.ipynb.

    >>> demo = clock_demo()
    >>> demo.controls["pos"].value = 2                 # pair 0 turns by θ_0 = 2·1 = 2 rad
    >>> demo.handles["faces"][0]["tip"].get_xydata().round(4)   # (cos 2, sin 2)
    array([[-0.4161,  0.9093]])
    """
    from ..demo import SliderDemo, int_slider, log_slider, round_values

    controls = [
        int_slider("pos", "pos (position)", 0, 1000, pos),
        int_slider("dim", "D (dimensions)", 2, 128, dim, step=2),
        # 10 … 100,000, twenty round values per decade (10,000 among them)
        log_slider("base", "base (frequency base)", round_values(10, 100_000), base),
    ]
    return SliderDemo(make_clock_figure, update_clock, controls, title="Clock hands: every pair of PE(pos)")


FIGURES = {"01-unit-circle-walk": make_unit_circle_walk}
DEMOS = {"clock": clock_demo}
