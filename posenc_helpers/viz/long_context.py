"""Long context: the YaRN ramp, and how far each RoPE pair turns under PI, NTK and YaRN.

Taught in notebooks/09-long-context.ipynb.

A RoPE model trained on L tokens has seen pair k turn r_k = L·ω_k/2π times.
Pairs with r_k < 1 never finished a turn, so at positions beyond L they would
reach angles the model has never seen. The scaled frequencies ω'_k of
:func:`posenc_helpers.scaling.scaled_frequencies` change how far each pair
turns; the slider demo (:func:`turns_demo`) shows it for a scale factor s.
"""

from __future__ import annotations

import html

import numpy as np

from .. import _validate as v
from ..core import frequencies
from ..scaling import scaled_frequencies, yarn_ramp
from . import OKABE_ITO, new_figure

__all__ = [
    "DEFAULT_DIM",
    "DEFAULT_BASE",
    "DEFAULT_LENGTH",
    "METHOD_STYLE",
    "LABEL_PAIR",
    "turns_within",
    "unseen_pairs",
    "plot_yarn_ramp",
    "make_yarn_ramp",
    "plot_turns",
    "update_turns",
    "make_turns_figure",
    "turns_demo",
    "FIGURES",
    "DEMOS",
]

#: The model the notebook uses: head dimension 128, base 10000, trained on 4096 tokens (LLaMA 2's sizes).
DEFAULT_DIM = 128
DEFAULT_BASE = 10000.0
DEFAULT_LENGTH = 4096

#: Label, colour, line style, line width and direct-label pair per method (colorblind-safe Okabe–Ito colours).
#: The styles differ so that lines lying on top of each other stay visible: PI is solid, NTK dashed,
#: YaRN dotted; where NTK and YaRN coincide with the original (fast pairs) the dashes show both.
METHOD_STYLE = {
    "pi": ("PI: ω/s", OKABE_ITO[0], "-", 2.6),
    "ntk": ("NTK-aware", OKABE_ITO[1], (0, (6, 3)), 2.4),
    "yarn": ("YaRN", OKABE_ITO[2], (0, (1.5, 2)), 3.0),
}
#: Pair index at which each method's direct label sits (where the three lines are apart for 2 ≤ s ≤ 32).
LABEL_PAIR = {"pi": 8, "ntk": 38, "yarn": 27}


def turns_within(omega, length) -> np.ndarray:
    """Turns each pair makes within ``length`` positions: r = length·ω/2π.

    Taught in notebooks/09-long-context.ipynb.

    >>> turns_within([1.0, 0.01], 4096).round(3)   # 4096/2π ≈ 651.9 and 4096·0.01/2π ≈ 6.519
    array([651.898,   6.519])
    """
    omega = v.real_array("omega", omega)
    length = v.real_scalar("length", length)
    # r_k = L·ω_k / 2π
    return length * omega / (2.0 * np.pi)


def unseen_pairs(omega, scaled, factor, length) -> np.ndarray:
    """Indices k of pairs that reach angles beyond those seen in training when run on s·L tokens.

    Only pairs that never finished a turn in training (L·ω_k < 2π) count: a
    pair that wrapped around has seen every angle. Such a pair leaves the
    trained range when s·L·ω'_k > L·ω_k, i.e. when ω'_k > ω_k / s.
    Taught in notebooks/09-long-context.ipynb.

    >>> unseen_pairs([1.0, 0.001], [1.0, 0.001], 4, 1000)        # no scaling: the slow pair (1 rad in L) overshoots
    array([1])
    >>> unseen_pairs([1.0, 0.001], [0.25, 0.00025], 4, 1000)     # PI: 4000·0.00025 = 1 rad, as in training
    array([], dtype=int64)
    """
    omega = v.real_array("omega", omega)
    scaled = v.real_array("scaled", scaled)
    factor = v.real_scalar("factor", factor)
    length = v.real_scalar("length", length)
    never_turned = length * omega < 2.0 * np.pi
    # unseen when s·L·ω'_k > L·ω_k (with a little room for rounding)
    overshoot = factor * scaled > omega * (1.0 + 1e-9)
    return np.flatnonzero(never_turned & overshoot)


def plot_yarn_ramp(
    ax,
    dim=DEFAULT_DIM,
    base=DEFAULT_BASE,
    original_max_position=DEFAULT_LENGTH,
    beta_fast=32.0,
    beta_slow=1.0,
    llama3=(1.0, 4.0),
) -> dict:
    """YaRN's blend γ_k against each pair's wavelength λ_k = 2π/ω_k (log axis), with Llama 3.1's blend beside it.

    Draws the paper's ramp γ = clamp((L/λ − α)/(β − α), 0, 1) as a line with
    markers, the reference code's index ramp as open squares, and dashed lines
    at λ = L/β (shorter: γ = 1, keep ω) and λ = L/α (longer: γ = 0, use ω/s).
    ``llama3 = (low_freq_factor, high_freq_factor)`` adds the blend of the
    ``"llama3"`` rope_type as a third series, read back from
    :func:`~posenc_helpers.scaling.scaled_frequencies` (γ = (ω' − ω/s)/(ω − ω/s)
    at s = 8), with a dotted line at λ = L/high_freq_factor; ``None`` leaves it out.
    Returns ``{"paper", "index", "llama3", "cutoffs", "wavelength", "gamma_paper",
    "gamma_index", "gamma_llama3"}`` (``"llama3"`` and ``"gamma_llama3"`` are None without it).
    Taught in notebooks/09-long-context.ipynb.

    >>> fig, ax = new_figure()
    >>> h = plot_yarn_ramp(ax, dim=4, base=10000, original_max_position=100)
    >>> h["paper"].get_ydata().round(5)        # (100/2π − 1)/31 and 0
    array([0.48114, 0.     ])
    """
    length = v.positive_int("original_max_position", original_max_position)
    wavelength = 2.0 * np.pi / frequencies(dim, base)
    gamma_paper = yarn_ramp(
        dim, base, original_max_position=length, beta_fast=beta_fast, beta_slow=beta_slow, ramp="paper"
    )
    gamma_index = yarn_ramp(
        dim, base, original_max_position=length, beta_fast=beta_fast, beta_slow=beta_slow, ramp="index"
    )
    (paper,) = ax.plot(
        wavelength, gamma_paper, "o-", color=OKABE_ITO[2], markersize=4, label="paper: linear in r = L/λ"
    )
    (index,) = ax.plot(
        wavelength, gamma_index, "s", color=OKABE_ITO[3], markerfacecolor="none", markersize=5,
        label="reference code: linear in k",
    )
    cutoffs = [
        ax.axvline(length / beta_fast, color="0.4", linestyle="--", linewidth=1.2),
        ax.axvline(length / beta_slow, color="0.4", linestyle="--", linewidth=1.2),
    ]
    ax.text(length / beta_fast, 0.5, f"L/β = {length / beta_fast:g} ", ha="right", va="center")
    ax.text(length / beta_slow, 0.5, f" L/α = {length / beta_slow:g}", ha="left", va="center")
    llama3_line, gamma_llama3 = None, None
    if llama3 is not None:
        low, high = llama3
        factor = 8.0  # any s > 1 gives the same γ; s only sets where ω/s lies
        omega = frequencies(dim, base)
        scaled = scaled_frequencies(
            dim, base, "llama3", factor, original_max_position=length, low_freq_factor=low, high_freq_factor=high
        )
        # ω' = (1 − γ)·ω/s + γ·ω  ⟹  γ = (ω' − ω/s) / (ω − ω/s)
        gamma_llama3 = (scaled - omega / factor) / (omega - omega / factor)
        (llama3_line,) = ax.plot(
            wavelength, gamma_llama3, "^-", color=OKABE_ITO[5], markersize=4, linewidth=1.2,
            label=f"llama3: low = {low:g}, high = {high:g} (paper ramp, α = low, β = high)",
        )
        cutoffs.append(ax.axvline(length / high, color=OKABE_ITO[5], linestyle=":", linewidth=1.4))
        ax.text(length / high, 0.9, f"L/high = {length / high:g} ", ha="right", va="center")
    ax.set_xscale("log")
    ax.set_ylim(-0.05, 1.1)
    ax.set_xlabel(r"wavelength $\lambda_k = 2\pi/\omega_k$ (tokens)")
    ax.set_ylabel(r"blend $\gamma_k$")
    name = "YaRN ramp" if llama3 is None else "YaRN and llama3 ramps"
    ax.set_title(rf"{name}: $\gamma = 1$ keeps $\omega_k$, $\gamma = 0$ uses $\omega_k/s$ (D = {dim}, L = {length})")
    # below the axes: inside, it would cover a ramp
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2 if llama3 is None else 1, frameon=False)
    return {
        "paper": paper,
        "index": index,
        "llama3": llama3_line,
        "cutoffs": cutoffs,
        "wavelength": wavelength,
        "gamma_paper": gamma_paper,
        "gamma_index": gamma_index,
        "gamma_llama3": gamma_llama3,
    }


def make_yarn_ramp():
    """The figure ``figures/09-yarn-ramp.png``: the YaRN ramp for D = 128, L = 4096, and llama3's (low 1, high 4)."""
    fig, ax = new_figure(figsize=(9.0, 5.6))
    plot_yarn_ramp(ax)
    return fig


def plot_turns(ax, dim=DEFAULT_DIM, base=DEFAULT_BASE, original_max_position=DEFAULT_LENGTH) -> dict:
    """Turns of each pair within the training length L, before and after scaling (log y axis).

    Static: the original turns L·ω_k/2π (thin solid black line, "original ω";
    the dashed line is NTK-aware), the one-turn line, and
    a shaded band over the pairs that never finish a turn in training.
    Animated (moved by :func:`update_turns`): one line per method and the
    limit "original ÷ s" (a slow pair at or below it sees no new angles on
    s·L tokens). The title stays fixed: redrawing text each frame is slow, so
    the readout reports s. Returns the artists (``"original"``, ``"lines"``,
    ``"labels"``, ``"limit"``) and the model's settings.
    Taught in notebooks/09-long-context.ipynb.
    """
    length = v.positive_int("original_max_position", original_max_position)
    omega = frequencies(dim, base)
    k = np.arange(omega.size)
    original = turns_within(omega, length)
    (original_line,) = ax.plot(k, original, "-", color="black", linewidth=1.2, label="original ω")
    ax.text(2, original[2] * 1.6, "original", ha="left", va="bottom", color="black")
    ax.axhline(1.0, color="0.5", linewidth=1.0)
    slow = np.flatnonzero(original < 1.0)
    if slow.size:
        ax.axvspan(slow[0] - 0.5, k[-1] + 0.5, color="0.9", zorder=0, label="< 1 turn in training")
    # the limit is a wide pale band under the method lines: PI runs along its middle and stays visible
    (limit,) = ax.plot(
        k, original, "-", color="0.7", linewidth=9, alpha=0.6, animated=True, zorder=1,
        solid_capstyle="butt", label="limit: original ÷ s",
    )
    lines, labels = {}, {}
    for z, (method, (label, color, dash, width)) in enumerate(METHOD_STYLE.items()):
        (lines[method],) = ax.plot(
            k, original, linestyle=dash, color=color, linewidth=width, label=label, animated=True, zorder=3 + z
        )
        # direct label, moved with the line by update_turns
        labels[method] = ax.text(
            LABEL_PAIR[method], original[LABEL_PAIR[method]], label.split(":")[0], color=color,
            fontweight="bold", ha="center", va="top" if method != "ntk" else "bottom", animated=True, zorder=7,
        )
    ax.set_yscale("log")
    ax.set_xlim(-0.5, k[-1] + 0.5)
    ax.set_ylim(1e-4, 3e3)
    ax.set_xlabel("pair index k (fast → slow)")
    ax.set_ylabel(f"turns within L = {length} (turns)")
    ax.set_title(f"How far each pair turns within the training length (D = {int(dim)}, L = {length})")
    ax.legend(loc="lower left", ncols=2)
    return {
        "original": original_line,
        "lines": lines,
        "labels": labels,
        "limit": limit,
        "omega": omega,
        "dim": int(dim),
        "base": float(base),
        "length": length,
    }


def update_turns(handles, factor) -> str:
    """Move every line to the scale factor s = ``factor``; return the HTML readout.

    The readout tabulates, per method, how many turns the fastest pair makes
    within L (fewer means neighbouring tokens are harder to tell apart) and
    how many of the pairs that never finished a turn in training would reach
    angles beyond the trained range on s·L tokens.
    Taught in notebooks/09-long-context.ipynb.
    """
    factor = v.real_scalar("factor", factor)
    omega, length = handles["omega"], handles["length"]
    original = turns_within(omega, length)
    handles["limit"].set_ydata(original / factor)
    rows = []
    never = int(np.count_nonzero(original < 1.0))
    rows.append(("none", original[0], unseen_pairs(omega, omega, factor, length).size))
    for method, line in handles["lines"].items():
        scaled = scaled_frequencies(
            handles["dim"], handles["base"], method, factor, original_max_position=length
        )
        turns = turns_within(scaled, length)
        line.set_ydata(turns)
        if "labels" in handles:
            where = LABEL_PAIR[method]
            # below the line (above it for NTK), a little off so the text never sits on a line
            nudge = 1.8 if method == "ntk" else 1 / 1.8
            handles["labels"][method].set_position((where, turns[where] * nudge))
        rows.append((METHOD_STYLE[method][0], turns_within(scaled[:1], length)[0],
                     unseen_pairs(omega, scaled, factor, length).size))
    head = (
        "<tr><th>method</th><th>turns of pair 0 within L</th>"
        f"<th>slow pairs pushed past trained angles (of {never})</th></tr>"
    )
    body = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{turns:.1f}</td><td>{count}</td></tr>" for name, turns, count in rows
    )
    return (
        f"<p>s = {factor:g}: the model now reads s·L = {factor * length:,.0f} tokens</p>"
        # the headers may wrap, so the table fits a 1024-pixel projector; its cells never do (demo.READOUT_CSS)
        f"<table style='font-family:monospace'>{head}{body}</table>"
    )


def make_turns_figure(dim=DEFAULT_DIM, base=DEFAULT_BASE, original_max_position=DEFAULT_LENGTH):
    """A figure with :func:`plot_turns` drawn on it: ``(fig, handles)`` for the slider demo."""
    fig, ax = new_figure(figsize=(9.0, 4.8))
    return fig, plot_turns(ax, dim, base, original_max_position)


def turns_demo(factor: float = 8.0):
    """Slider demo: the scale factor s, and how far each pair turns within L under PI, NTK and YaRN.

    Taught in notebooks/09-long-context.ipynb.

    >>> demo = turns_demo()
    >>> demo.controls["factor"].value = 2.0
    >>> float(demo.handles["lines"]["pi"].get_ydata()[0]).__round__(2)    # 4096/(2π·2) ≈ 325.95
    325.95
    """
    from ..demo import SliderDemo, float_slider

    controls = [float_slider("factor", "s (context scale)", 1.0, 32.0, factor, step=0.5, readout_format=".1f")]
    return SliderDemo(make_turns_figure, update_turns, controls, title="Stretching RoPE: turns per pair within L")


FIGURES = {"09-yarn-ramp": make_yarn_ramp}
DEMOS = {"turns": turns_demo}
