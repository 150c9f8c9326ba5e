"""The worked trace of PE(pos): divisor, angle, sin and cos, pair by pair.

Taught in notebooks/02-pos2-trace.ipynb.

For D = 4 and pos = 2 the trace is the lesson's table

    pair k=0:  divisor 10000^(0/4) = 1     angle 2.00   sin 0.9093   cos -0.4161
    pair k=1:  divisor 10000^(2/4) = 100   angle 0.02   sin 0.0200   cos  0.9998

The functions here compute such a trace (:func:`trace_rows`), print it
(:func:`format_trace`), build it live in a slider demo (:func:`trace_demo`:
a bar per element of PE(pos), a point per pair on the unit circle and the
table as the readout), and show the common mistake of putting the element
index i where the pair index k belongs (:func:`sinusoidal_element_exponent`,
:func:`plot_exponent_mistake`).
"""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .. import _validate as v
from . import OKABE_ITO, new_figure

__all__ = [
    "trace_rows",
    "format_trace",
    "format_value",
    "sinusoidal_element_exponent",
    "plot_pe_bars",
    "plot_pair_points",
    "plot_exponent_mistake",
    "make_trace_figure",
    "update_trace",
    "trace_demo",
    "make_exponent_mistake",
    "FIGURES",
    "DEMOS",
]

#: Bar colours: even index i (a sine), odd index i (a cosine).
SIN_COLOR = OKABE_ITO[0]
COS_COLOR = OKABE_ITO[1]

#: The largest D the trace demo shows (one bar slot per element).
MAX_DIM = 12


def trace_rows(pos, dim, base=10000.0) -> list[dict]:
    """The trace of PE(pos), one dict per pair k: what you would write by hand.

    Each row holds ``k``, the element indices ``i_sin = 2k`` and ``i_cos = 2k + 1``
    (None for the lone sine of an odd D), ``divisor = base^(2k/D)``,
    ``angle = pos / divisor``, ``sin`` and ``cos`` of the angle (``cos`` is None
    for a lone sine). Taught in notebooks/02-pos2-trace.ipynb.

    >>> for row in trace_rows(2, 4):     # divisors 10000^(0/4) = 1 and 10000^(2/4) = 100
    ...     print(row["k"], row["divisor"], row["angle"], round(row["sin"], 4), round(row["cos"], 4))
    0 1.0 2.0 0.9093 -0.4161
    1 100.0 0.02 0.02 0.9998
    """
    dim = v.positive_int("dim", dim)
    base = v.base_value(base)
    pos = v.real_scalar("pos", pos)
    rows = []
    for k in range((dim + 1) // 2):
        # divisor = base^(2k/D), angle = pos / divisor
        divisor = base ** (2 * k / dim)
        angle = pos / divisor
        lone = 2 * k + 1 >= dim
        rows.append(
            {
                "k": k,
                "i_sin": 2 * k,
                "i_cos": None if lone else 2 * k + 1,
                "divisor": divisor,
                "angle": angle,
                "sin": float(np.sin(angle)),
                "cos": None if lone else float(np.cos(angle)),
            }
        )
    return rows


def format_trace(rows, decimals: int = 4) -> str:
    """The trace as a plain-text table, one line per pair, then the vector PE(pos).

    Taught in notebooks/02-pos2-trace.ipynb.

    >>> print(format_trace(trace_rows(2, 4)))
    pair k   dims     divisor    angle (rad)   sin         cos
    k = 0    0, 1     1          2.0000        0.9093     -0.4161
    k = 1    2, 3     100        0.0200        0.0200      0.9998
    PE = [0.9093, -0.4161, 0.0200, 0.9998]
    """
    d = v.positive_int("decimals", decimals)
    lines = [f"{'pair k':<9}{'dims':<9}{'divisor':<11}{'angle (rad)':<14}{'sin':<12}cos"]
    values = []
    for row in rows:
        dims = f"{row['i_sin']}, {'-' if row['i_cos'] is None else row['i_cos']}"
        cos = "(none)" if row["cos"] is None else f"{row['cos']: .{d}f}"
        lines.append(
            f"{'k = ' + str(row['k']):<9}{dims:<9}{row['divisor']:<11.6g}{row['angle']:<14.{d}f}"
            f"{row['sin']: .{d}f}{'':4}{cos}"
        )
        values.append(row["sin"])
        if row["cos"] is not None:
            values.append(row["cos"])
    lines.append("PE = [" + ", ".join(f"{x:.{d}f}" for x in values) + "]")
    return "\n".join(lines)


def format_value(x, sign: bool = False) -> str:
    """One value of PE for the demo's readout: 4 decimals, or 5 where 4 would hide its distance from ±1.

    A value that is not ±1 but rounds to ±1.0000 (cos 0.01 = 0.99995…) gets
    a fifth decimal, so the readout does not claim it is exactly 1; exact ±1
    and everything else keep 4. ``sign=True`` writes a leading + on positive
    values (the table's columns). Taught in notebooks/02-pos2-trace.ipynb.

    >>> format_value(0.5403023), format_value(np.cos(0.01)), format_value(1.0)   # cos 0.01 = 0.99995…
    ('0.5403', '0.99995', '1.0000')
    >>> format_value(-np.cos(0.01), sign=True), format_value(0.9093, sign=True)
    ('-0.99995', '+0.9093')
    """
    x = v.real_scalar("x", x)
    plus = "+" if sign else ""
    four, five = f"{x:{plus}.4f}", f"{x:{plus}.5f}"
    # ±1.0000 at 4 decimals, but not ±1.00000 at 5: the fifth decimal is the whole difference from 1
    if four.lstrip("+-") == "1.0000" and five.lstrip("+-") != "1.00000":
        return five
    return four


def sinusoidal_element_exponent(pos, dim, base=10000.0) -> np.ndarray:
    """THE COMMON MISTAKE, for comparison only: the element index i in the exponent.

    Element i gets the angle pos / base^(2i/D) (instead of pos / base^(2k/D)
    with k = i // 2), so the sine and the cosine of a pair no longer share one
    angle and every element turns at its own frequency. Taught in
    notebooks/02-pos2-trace.ipynb.

    >>> sinusoidal_element_exponent(2, 4).round(4).tolist()   # [sin(2/1), cos(2/100), sin(2/10^4), cos(2/10^6)]
    [0.9093, 0.9998, 0.0002, 1.0]
    """
    dim = v.positive_int("dim", dim)
    base = v.base_value(base)
    pos = v.real_array("pos", pos)
    i = np.arange(dim)
    # wrong: angle_i = pos / base^(2i/D), i the element index
    angle = pos[..., None] / base ** (2.0 * i / dim)
    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))


def plot_pe_bars(ax, vector, max_dim: int | None = None, animated: bool = False) -> dict:
    """A bar per element of a PE vector: even i (sin) in blue, odd i (cos) in vermillion, value on each bar.

    With ``max_dim`` the axis has room for that many bars; the slots beyond
    ``len(vector)`` are empty and shaded, so a slider can change D without
    changing the axes. Returns ``{"bars", "labels", "beyond"}``. Taught in
    notebooks/02-pos2-trace.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_pe_bars(ax, [0.9093, -0.4161, 0.02, 0.9998], max_dim=6)
    >>> [round(float(b.get_height()), 4) for b in h["bars"] if b.get_visible()]
    [0.9093, -0.4161, 0.02, 0.9998]
    """
    vector = v.vector_array("vector", vector)
    if vector.ndim != 1:
        raise ValueError(f"vector must be one PE vector (1-D), got shape {vector.shape}")
    slots = len(vector) if max_dim is None else v.positive_int("max_dim", max_dim)
    if slots < len(vector):
        raise ValueError(f"max_dim must be at least len(vector) = {len(vector)}, got {slots}")
    i = np.arange(slots)
    colors = [SIN_COLOR if n % 2 == 0 else COS_COLOR for n in i]
    bars = list(ax.bar(i, np.zeros(slots), width=0.7, color=colors, animated=animated))
    labels = [
        ax.text(n, 0.0, "", ha="center", va="bottom", fontsize=11, animated=animated) for n in i
    ]
    beyond = ax.axvspan(len(vector) - 0.5, slots - 0.5, color="0.9", zorder=0, animated=animated)
    ax.axhline(0.0, color="0.3", linewidth=1.0)
    ax.set_xlim(-0.8, slots - 0.2)
    ax.set_ylim(-1.35, 1.35)
    ax.set_xticks(i)
    ax.set_xlabel("dimension index i")
    ax.set_ylabel("PE(pos, i)")
    ax.legend(
        handles=[
            Patch(color=SIN_COLOR, label="even i: sin"),
            Patch(color=COS_COLOR, label="odd i: cos"),
            Patch(color="0.9", label="i ≥ D: not in PE"),
        ],
        loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=11, ncols=3, handlelength=1.2,
        columnspacing=1.0, frameon=False,
    )
    handles = {"bars": bars, "labels": labels, "beyond": beyond}
    set_pe_bars(handles, vector)
    return handles


def set_pe_bars(handles: dict, vector) -> None:
    """Show ``vector`` on bars made by :func:`plot_pe_bars`; slots beyond its length are hidden and shaded.

    Bar i gets height PE(pos, i); the shaded span covers i = len(vector) … max_dim − 1.
    Taught in notebooks/02-pos2-trace.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_pe_bars(ax, [0.0, 1.0], max_dim=4)       # PE(0) for D = 2
    >>> set_pe_bars(h, [0.8415, 0.5403, 0.01])            # PE(1) for D = 3: sin 1, cos 1, sin(1/10000^(2/3))
    >>> [b.get_visible() for b in h["bars"]], h["beyond"].get_x()
    ([True, True, True, False], 2.5)
    """
    vector = np.asarray(vector, dtype=np.float64)
    # 4 decimals fit above a bar while there are at most 8 of them; the readout always has 4
    decimals = 4 if len(vector) <= 8 else 2
    for n, (bar, label) in enumerate(zip(handles["bars"], handles["labels"], strict=True)):
        if n < len(vector):
            bar.set_height(vector[n])
            label.set_position((n, vector[n] + (0.04 if vector[n] >= 0 else -0.04)))
            label.set_verticalalignment("bottom" if vector[n] >= 0 else "top")
            label.set_text(f"{vector[n]:.{decimals}f}")
        bar.set_visible(n < len(vector))
        label.set_visible(n < len(vector))
    slots = len(handles["bars"])
    # the shaded span covers the slots i = D … max_dim − 1
    handles["beyond"].set_x(len(vector) - 0.5)
    handles["beyond"].set_width(slots - len(vector))
    handles["beyond"].set_visible(len(vector) < slots)


def plot_pair_points(ax, max_pairs: int, animated: bool = False) -> dict:
    """The unit circle with room for ``max_pairs`` pair points; fill them with :func:`set_pair_points`.

    Pair k is the point (cos θ_k, sin θ_k) joined to the origin by a hand; a
    lone sine (odd D) is drawn hollow. Returns ``{"hands", "points", "lone",
    "labels"}``. Taught in notebooks/02-pos2-trace.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_pair_points(ax, 3)
    >>> len(h["labels"]), h["points"].get_xydata().shape   # empty until set_pair_points fills it
    (3, (0, 2))
    """
    max_pairs = v.positive_int("max_pairs", max_pairs)
    t = np.linspace(0.0, 2.0 * np.pi, 181)
    ax.plot(np.cos(t), np.sin(t), color="0.55", linewidth=1.5)
    ax.axhline(0.0, color="0.85", linewidth=1.0, zorder=0)
    ax.axvline(0.0, color="0.85", linewidth=1.0, zorder=0)
    ax.plot([1.0], [0.0], "o", color=OKABE_ITO[4], markeredgecolor="black", markersize=9, zorder=2)
    (hands,) = ax.plot([], [], color=SIN_COLOR, linewidth=2.0, animated=animated)
    (points,) = ax.plot([], [], "o", color=SIN_COLOR, markersize=8, animated=animated, zorder=3)
    (lone,) = ax.plot(
        [], [], "o", markerfacecolor="white", markeredgecolor=SIN_COLOR, markeredgewidth=2, markersize=9,
        animated=animated, zorder=3,
    )
    labels = [ax.text(0.0, 0.0, "", fontsize=11, animated=animated, visible=False) for _ in range(max_pairs)]
    ax.set_xlim(-1.5, 1.5)
    ax.set_ylim(-1.5, 1.5)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$\cos\theta_k$")
    ax.set_ylabel(r"$\sin\theta_k$")
    ax.legend(
        handles=[
            Line2D([], [], marker="o", color=OKABE_ITO[4], markeredgecolor="black", linestyle="", label="start (1, 0)"),
            Line2D([], [], marker="o", color=SIN_COLOR, linestyle="", label="pair k"),
            Line2D([], [], marker="o", markerfacecolor="white", markeredgecolor=SIN_COLOR, linestyle="",
                   label="lone sine"),
        ],
        loc="lower left", fontsize=11, handletextpad=0.2, borderaxespad=0.2,
    )
    return {"hands": hands, "points": points, "lone": lone, "labels": labels}


def set_pair_points(handles: dict, rows) -> None:
    """Move the points of :func:`plot_pair_points` to the pairs of a trace (see :func:`trace_rows`).

    Pair k goes to (cos θ_k, sin θ_k); pairs whose points nearly coincide share one label.
    Taught in notebooks/02-pos2-trace.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_pair_points(ax, 2)
    >>> set_pair_points(h, trace_rows(2, 4))     # (cos 2, sin 2) and (cos 0.02, sin 0.02)
    >>> h["points"].get_xydata().round(4)
    array([[-0.4161,  0.9093],
           [ 0.9998,  0.02  ]])
    """
    full = [r for r in rows if r["cos"] is not None]
    single = [r for r in rows if r["cos"] is None]
    # pair k sits at (cos θ_k, sin θ_k); a hand joins it to the origin (NaN breaks the line between hands)
    xs = np.array([np.cos(r["angle"]) for r in rows])
    ys = np.array([r["sin"] for r in rows])
    hx = np.column_stack([np.zeros_like(xs), xs, np.full_like(xs, np.nan)]).ravel()
    hy = np.column_stack([np.zeros_like(ys), ys, np.full_like(ys, np.nan)]).ravel()
    handles["hands"].set_data(hx, hy)
    handles["points"].set_data([r["cos"] for r in full], [r["sin"] for r in full])
    handles["lone"].set_data([np.cos(r["angle"]) for r in single], [r["sin"] for r in single])
    # one label per group of neighbouring pairs whose points nearly coincide (the slow pairs near (1, 0))
    groups: list[list[int]] = []
    for n, r in enumerate(rows):
        near = groups and abs(np.angle(np.exp(1j * (r["angle"] - rows[groups[-1][0]]["angle"])))) < 0.15
        if near:
            groups[-1].append(n)
        else:
            groups.append([n])
    for n, label in enumerate(handles["labels"]):
        if n < len(groups):
            first, last = groups[n][0], groups[n][-1]
            x, y = xs[first], ys[first]
            label.set_position((1.1 * x, 1.1 * y))
            label.set_horizontalalignment("left" if x >= 0 else "right")
            label.set_verticalalignment("bottom" if y >= 0 else "top")
            label.set_text(f"k={first}" if first == last else f"k={first}–{last}")
        label.set_visible(n < len(groups))


def plot_exponent_mistake(ax, dim: int = 8, base=10000.0) -> dict:
    """The divisor of each element index i: right, base^(2k/D) with k = i // 2, against wrong, base^(2i/D).

    The right divisors come in equal pairs (a sine and a cosine share one
    angle); the wrong ones give every element its own frequency. Log scale.
    Returns ``{"right", "wrong"}`` (Line2D). Taught in notebooks/02-pos2-trace.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_exponent_mistake(ax, dim=4)          # right: 1, 1, 100, 100;  wrong: 1, 100, 10^4, 10^6
    >>> h["right"].get_ydata(), h["wrong"].get_ydata()
    (array([  1.,   1., 100., 100.]), array([1.e+00, 1.e+02, 1.e+04, 1.e+06]))
    """
    dim = v.positive_int("dim", dim)
    base = v.base_value(base)
    i = np.arange(dim)
    # right: base^(2k/D) with k = i // 2;   wrong: base^(2i/D)
    right = base ** (2.0 * (i // 2) / dim)
    wrong = base ** (2.0 * i / dim)
    (right_line,) = ax.plot(
        i, right, "o-", color=OKABE_ITO[2], markersize=9, drawstyle="steps-mid",
        label=r"right: $\mathrm{base}^{2k/D}$ with $k = \lfloor i/2 \rfloor$",
    )
    (wrong_line,) = ax.plot(i, wrong, "s--", color=OKABE_ITO[1], markersize=7, label=r"mistake: $\mathrm{base}^{2i/D}$")
    ax.set_yscale("log")
    ax.set_xticks(i)
    ax.set_xlabel("dimension index i")
    ax.set_ylabel("divisor (positions per radian)")
    ax.set_title(f"Pair index k, not element index i, in the exponent (D = {dim})")
    ax.legend(loc="upper left", fontsize=11)
    return {"right": right_line, "wrong": wrong_line}


def make_exponent_mistake():
    """The figure ``figures/02-element-index-mistake.png`` (D = 8). Taught in notebooks/02-pos2-trace.ipynb.

    >>> fig = make_exponent_mistake()
    >>> fig.axes[0].lines[1].get_ydata()[:3]      # the mistake's divisors 10000^(2i/8): 1, 10, 100
    array([  1.,  10., 100.])
    """
    fig, ax = new_figure(figsize=(8.0, 4.5))
    plot_exponent_mistake(ax, dim=8)
    return fig


# --- the slider demo -------------------------------------------------------------------------------


def make_trace_figure(max_dim: int = MAX_DIM):
    """The demo figure: bars of PE(pos) (room for ``max_dim`` elements) and the pairs on the unit circle.

    Returns ``(fig, handles)`` with ``handles = {"bars": …, "circle": …, "title": Text}``.
    Taught in notebooks/02-pos2-trace.ipynb.

    >>> fig, handles = make_trace_figure()
    >>> len(handles["bars"]["bars"]), len(handles["circle"]["labels"])   # 12 element slots, 6 pair slots
    (12, 6)
    """
    max_dim = v.positive_int("max_dim", max_dim)
    fig, (ax_bars, ax_circle) = new_figure(1, 2, figsize=(10.0, 4.2), width_ratios=[1.75, 1.0])
    bars = plot_pe_bars(ax_bars, np.zeros(max_dim), max_dim=max_dim, animated=True)
    title = ax_bars.set_title("PE(pos), one bar per element")
    title.set_animated(True)
    circle = plot_pair_points(ax_circle, (max_dim + 1) // 2, animated=True)
    ax_circle.set_title(r"Pair $k$ at angle $\theta_k$")
    return fig, {"bars": bars, "circle": circle, "title": title}


def update_trace(handles, pos, dim, base=10000.0) -> str:
    """Build the trace of PE(pos) for this D: move bars and points, return the table as HTML.

    Each row: divisor = base^(2k/D), angle = pos / divisor, sin and cos of the angle.
    Taught in notebooks/02-pos2-trace.ipynb.

    >>> fig, handles = make_trace_figure()
    >>> html = update_trace(handles, 2, 4)
    >>> "10000^(2/4) = 100" in html and "PE(2) = [0.9093, -0.4161, 0.0200, 0.9998]" in html
    True
    >>> "PE(1) = [0.8415, 0.5403, 0.0100, 0.99995]" in update_trace(handles, 1, 4)   # cos 0.01 = 0.99995
    True
    """
    rows = trace_rows(pos, dim, base)
    dim = int(dim)
    slots = len(handles["bars"]["bars"])
    if dim > slots:
        raise ValueError(f"dim must be at most {slots} in this demo, got {dim}")
    base = float(base)
    vector = []
    body = []
    for r in rows:
        vector.append(r["sin"])
        if r["cos"] is not None:
            vector.append(r["cos"])
        cos = "– (lone sine)" if r["cos"] is None else format_value(r["cos"], sign=True)
        dims = f"{r['i_sin']}, {'–' if r['i_cos'] is None else r['i_cos']}"
        body.append(
            f"<tr><td>{r['k']}</td><td>{dims}</td><td>{base:g}^({2 * r['k']}/{dim}) = {r['divisor']:.6g}</td>"
            f"<td>{r['angle']:.4f}</td><td>{format_value(r['sin'], sign=True)}</td><td>{cos}</td></tr>"
        )
    set_pe_bars(handles["bars"], vector)
    set_pair_points(handles["circle"], rows)
    handles["title"].set_text(f"PE(pos = {pos:g}), D = {dim}")
    head = (
        "<tr><th>pair k</th><th>dims</th><th>divisor base^(2k/D)</th><th>angle = pos / divisor (rad)</th>"
        "<th>sin</th><th>cos</th></tr>"
    )
    # 4 decimals, 5 where 4 would round a value that is not ±1 to ±1.0000 (cos 0.01 = 0.99995)
    pe = ", ".join(format_value(x) for x in vector)
    return (
        f"<b>Trace of PE(pos = {pos:g}) for D = {dim}</b>"
        f"<table style='font-family:monospace'>{head}{''.join(body)}</table>"
        f"<span style='font-family:monospace'>PE({pos:g}) = [{pe}]</span>"
    )


def trace_demo(pos: int = 2, dim: int = 4):
    """Slider demo: pos and D build the trace table of PE(pos) live.

    Taught in notebooks/02-pos2-trace.ipynb.

    >>> demo = trace_demo()                  # pos = 2, D = 4: the lesson's trace
    >>> [round(float(b.get_height()), 4) for b in demo.handles["bars"]["bars"][:4]]
    [0.9093, -0.4161, 0.02, 0.9998]
    """
    from ..demo import SliderDemo, int_slider

    controls = [
        int_slider("pos", "pos (position)", 0, 100, pos),
        int_slider("dim", "D (dimensions)", 1, MAX_DIM, dim),
    ]
    return SliderDemo(make_trace_figure, update_trace, controls, title="The trace of PE(pos), pair by pair")


FIGURES = {"02-element-index-mistake": make_exponent_mistake}
DEMOS = {"trace": trace_demo}
