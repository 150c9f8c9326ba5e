"""RoPE as shipped: each real model's wavelengths against its training length, large bases, 2D RoPE scores.

Taught in notebooks/11-rope-as-shipped.ipynb.

A pair whose wavelength λ_k = 2π/ω_k is longer than the training length L
never completes a turn in training. :func:`plot_model_wavelengths` draws
λ_k / L for each bundled config; :func:`base_demo` lets a slider move the
base and L of a 128-wide head and counts those pairs.
"""

from __future__ import annotations

import html

import numpy as np

from .. import _validate as v
from ..configs import bundled_configs, config_summary
from ..core import frequencies
from ..multiaxis import axial_rope_2d
from . import DIVERGING_CMAP, OKABE_ITO, new_figure

__all__ = [
    "DEMO_DIM",
    "plot_model_wavelengths",
    "make_model_wavelengths",
    "unfinished_pairs",
    "plot_base_wavelengths",
    "update_base_wavelengths",
    "make_base_figure",
    "base_demo",
    "axial_scores",
    "plot_axial_scores",
    "make_axial_scores",
    "FIGURES",
    "DEMOS",
]

#: The head width of the base demo: 64 pairs, as in Llama.
DEMO_DIM = 128


def plot_model_wavelengths(ax, configs=None) -> dict:
    """λ_k / L of every rotated pair, one line per config (default: the bundled ones), log y axis.

    L is the length each config's scaling starts from, or its
    ``max_position_embeddings`` when it has no scaling (see
    :func:`posenc_helpers.configs.config_summary`). Points above the line
    λ/L = 1 are pairs that never complete a turn within L. The x axis is the
    pair's place in its head, k/(pairs − 1), so heads of 12 and 64 pairs
    share it. Returns ``{name: line}``. Taught in notebooks/11-rope-as-shipped.ipynb.
    """
    configs = bundled_configs() if configs is None else configs
    lines = {}
    markers = "os^Dv<>pXh"
    for i, (name, cfg) in enumerate(configs.items()):
        s = config_summary(cfg)
        omega = frequencies(s["rotary_dim"], s["base"])
        k = np.arange(omega.size)
        # λ_k / L = 2π / (ω_k · L)
        ratio = 2.0 * np.pi / (omega * s["length"])
        (lines[name],) = ax.plot(
            k / (k.size - 1), ratio, marker=markers[i % len(markers)], markersize=3.5, linewidth=1.6,
            color=OKABE_ITO[i % len(OKABE_ITO)], label=f"{name} (L = {s['length']:,}; {s['never_turn']}/{s['pairs']})",
        )
    ax.axhline(1.0, color="black", linewidth=1.2, linestyle="--")
    ax.text(0.01, 1.25, "one turn within L", ha="left", va="bottom")
    ax.set_yscale("log")
    ax.set_xlabel("pair position in the head, k / (pairs − 1) (fast → slow)")
    ax.set_ylabel("wavelength / training length λ_k / L")
    ax.set_title("Which pairs finish a turn within the training length (count above the line in brackets)")
    ax.legend(loc="lower right", fontsize=11)
    return lines


def make_model_wavelengths():
    """The figure ``figures/11-model-wavelengths.png``: every bundled config's λ_k / L."""
    fig, ax = new_figure(figsize=(10.0, 5.6))
    plot_model_wavelengths(ax)
    return fig


def unfinished_pairs(dim, base, length) -> int:
    """How many pairs of a ``dim``-wide RoPE with ``base`` never complete a turn within ``length`` tokens.

    A pair never finishes a turn when λ_k = 2π·base^(2k/D) > L. Taught in
    notebooks/11-rope-as-shipped.ipynb.

    >>> unfinished_pairs(128, 10000, 4096), unfinished_pairs(128, 500000, 8192)   # Llama 2's and Llama 3's sizes
    (18, 29)
    """
    length = v.real_scalar("length", length)
    # λ_k = 2π / ω_k > L
    return int(np.count_nonzero(2.0 * np.pi / frequencies(dim, base) > length))


def plot_base_wavelengths(ax, dim=DEMO_DIM) -> dict:
    """Wavelength λ_k of each pair (log y) for a base and a training length L set by :func:`update_base_wavelengths`.

    Static: reference curves for bases 10,000 (Llama 2), 500,000 (Llama 3)
    and 1,000,000 (Qwen2.5). Animated: the curve for the chosen
    base, the line at L, and the markers of the pairs above it.
    Taught in notebooks/11-rope-as-shipped.ipynb.
    """
    k = np.arange(dim // 2)
    for base, color, name in ((1e4, "0.55", "10,000"), (5e5, "0.35", "500,000"), (1e6, "0.15", "1,000,000")):
        ax.plot(k, 2.0 * np.pi / frequencies(dim, base), ":", color=color, linewidth=1.4, label=f"base {name}")
    (curve,) = ax.plot(k, np.ones(k.size), "-", color=OKABE_ITO[0], linewidth=2.2, animated=True,
                       label="chosen base")
    (above,) = ax.plot(k, np.ones(k.size), "o", color=OKABE_ITO[1], markersize=5, animated=True,
                       label="never a full turn within L")
    length_line = ax.axhline(1.0, color=OKABE_ITO[2], linewidth=2.0, linestyle="--", animated=True,
                             label="training length L")
    ax.set_yscale("log")
    ax.set_xlim(-0.5, k[-1] + 0.5)
    ax.set_ylim(3.0, 3e7)
    ax.set_xlabel("pair index k (fast → slow)")
    ax.set_ylabel("wavelength λ_k (tokens)")
    ax.set_title(f"Large bases: wavelengths of a {dim}-wide head against the training length")
    ax.legend(loc="upper left", ncols=2)
    return {"curve": curve, "above": above, "length": length_line, "dim": int(dim), "k": k}


def update_base_wavelengths(handles, base=500000.0, length=8192.0) -> str:
    """Move the curve to ``base`` and the line to L = ``length``; return the HTML readout.

    Taught in notebooks/11-rope-as-shipped.ipynb.
    """
    dim, k = handles["dim"], handles["k"]
    wavelength = 2.0 * np.pi / frequencies(dim, base)
    handles["curve"].set_ydata(wavelength)
    over = wavelength > length
    handles["above"].set_data(k[over], wavelength[over])
    handles["length"].set_ydata([length, length])
    count = int(np.count_nonzero(over))
    first = f"k = {int(k[over][0])} … {dim // 2 - 1}" if count else "none"
    rows = [
        ("base", f"{base:,.0f}"),
        ("training length L", f"{length:,.0f} tokens"),
        ("slowest wavelength", f"{wavelength[-1]:,.0f} tokens"),
        ("pairs that never finish a turn", f"{count} of {dim // 2} ({first})"),
    ]
    body = "".join(f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td></tr>" for a, b in rows)
    return f"<table style='font-family:monospace'>{body}</table>"


def make_base_figure(dim=DEMO_DIM):
    """A figure with :func:`plot_base_wavelengths` drawn on it: ``(fig, handles)`` for the slider demo."""
    fig, ax = new_figure(figsize=(9.0, 4.8))
    return fig, plot_base_wavelengths(ax, dim)


def base_demo(base: float = 500000.0, length: float = 8192.0):
    """Slider demo: the base and the training length L of a 128-wide head, and the pairs that never turn fully.

    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> demo = base_demo()
    >>> demo.handles["above"].get_xdata()[0]        # Llama 3's base and L: pairs 35 … 63 never finish a turn
    np.int64(35)
    """
    from ..demo import SliderDemo, log_slider

    controls = [
        log_slider("base", "base (frequency base)", 3, 7, base, step=0.05),
        log_slider("length", "L (training length, tokens)", 3, 6, length, step=0.05),
    ]
    return SliderDemo(make_base_figure, update_base_wavelengths, controls, title="Large bases and the training length")


def axial_scores(q, k, span=16, base=10000.0) -> np.ndarray:
    """Scores of axial 2D RoPE, q at (0, 0) against k at (Δrow, Δcol), for Δ = −span … span.

    Entry [i, j] is axial_rope_2d(q, 0, 0) · axial_rope_2d(k, i − span, j − span).
    Taught in notebooks/11-rope-as-shipped.ipynb.
    """
    span = v.positive_int("span", span)
    d = np.arange(-span, span + 1, dtype=np.float64)
    rows, cols = np.meshgrid(d, d, indexing="ij")
    rq = axial_rope_2d(q, 0.0, 0.0, base)
    rk = axial_rope_2d(np.broadcast_to(k, rows.shape + (len(k),)), rows, cols, base)
    return rk @ rq


def plot_axial_scores(ax, q=None, k=None, span=16, base=10000.0) -> dict:
    """The :func:`axial_scores` map as an image (RdBu_r, symmetric colour scale), with its colorbar.

    Taught in notebooks/11-rope-as-shipped.ipynb.
    """
    if q is None or k is None:
        rng = np.random.default_rng(11)
        q, k = rng.standard_normal(16), rng.standard_normal(16)
    scores = axial_scores(q, k, span, base)
    limit = float(np.abs(scores).max())
    image = ax.imshow(scores, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, origin="lower",
                      extent=(-span - 0.5, span + 0.5, -span - 0.5, span + 0.5))
    colorbar = ax.figure.colorbar(image, ax=ax)
    colorbar.set_label("score q·k after rotation")
    ax.set_xlabel("column offset Δcol (patches)")
    ax.set_ylabel("row offset Δrow (patches)")
    ax.set_title("Axial 2D RoPE: q at (0, 0), k at (Δrow, Δcol)")
    return {"image": image, "scores": scores, "colorbar": colorbar}


def make_axial_scores():
    """The figure ``figures/11-axial-scores.png``: D = 16, base 10000, offsets −16 … 16."""
    fig, ax = new_figure(figsize=(6.8, 5.4))
    plot_axial_scores(ax)
    return fig


FIGURES = {"11-model-wavelengths": make_model_wavelengths, "11-axial-scores": make_axial_scores}
DEMOS = {"base": base_demo}
