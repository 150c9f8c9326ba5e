"""Position per layer: Llama 4's query temperature, partial frequencies, M-RoPE axes, and a barcode of models.

Taught in notebooks/14-position-per-layer.ipynb.

:func:`temperature_demo` lets sliders move the logit gap Δ of one matching
key and Llama 4's attn_scale and floor_scale, and shows the temperature
τ(p) and the weight the softmax keeps on that key as the context grows.
"""

from __future__ import annotations

import html

import numpy as np

from ..configs import llama4_query_temperature
from ..core import frequencies
from ..multiaxis import mrope_axes
from ..perlayer import key_weight
from . import OKABE_ITO, new_figure

__all__ = [
    "CONTEXTS",
    "plot_temperature",
    "update_temperature",
    "make_temperature_figure",
    "temperature_demo",
    "plot_partial_frequencies",
    "make_partial_frequencies",
    "plot_mrope_axes",
    "make_mrope_axes",
    "plot_layer_wavelengths",
    "layer_colour",
    "plot_barcode",
    "make_barcode",
    "make_local_global",
    "FIGURES",
    "DEMOS",
]

#: Context lengths (keys a query at the end can read) the temperature readout reports: 8K, 128K, 1M, 10M.
CONTEXTS = (8192, 131072, 1048576, 10485760)
#: The positions the temperature curves are drawn at: 1 … 10^7, log-spaced.
_POSITIONS = np.unique(np.round(np.logspace(0, 7, 400)))
#: The three axes of multimodal RoPE, their names and colours.
_AXES = (("t (time)", OKABE_ITO[0]), ("h (height)", OKABE_ITO[1]), ("w (width)", OKABE_ITO[2]))


def plot_temperature(axes) -> dict:
    """Two panels, animated by :func:`update_temperature`: τ(p) against p, and the key's weight against n.

    Left: Llama 4's query temperature τ(p) = 1 + attn_scale·ln(1 + ⌊(p + 1)/floor_scale⌋)
    (dotted: its defaults 0.1 and 8192; solid: the chosen values). Right: the
    weight e^(τΔ)/(e^(τΔ) + n − 1) on one key whose logit is Δ above the
    n − 1 others, for a query at p = n − 1, with τ = 1 (dashed) and with τ(p)
    (solid). Taught in notebooks/14-position-per-layer.ipynb.
    """
    left, right = axes
    p = _POSITIONS
    left.plot(p, llama4_query_temperature(p), ":", color="0.35", linewidth=1.8, label="Llama 4 (0.1, 8,192)")
    (tau,) = left.plot(p, np.ones_like(p), "-", color=OKABE_ITO[0], linewidth=2.4, animated=True, label="chosen")
    left.set_xscale("log")
    left.set_ylim(0.9, 4.6)
    left.set_xlabel("query position p (tokens)")
    left.set_ylabel("query temperature τ(p)")
    left.set_title("τ(p) = 1 + attn_scale·ln(1 + ⌊(p+1)/floor_scale⌋)")
    left.legend(loc="upper left")
    n = p + 1.0
    (plain,) = right.plot(n, np.ones_like(n), "--", color=OKABE_ITO[1], linewidth=2.2, animated=True,
                          label="no temperature (τ = 1)")
    (tuned,) = right.plot(n, np.ones_like(n), "-", color=OKABE_ITO[0], linewidth=2.4, animated=True,
                          label="with τ(p)")
    right.set_xscale("log")
    right.set_ylim(-0.02, 1.02)
    right.set_xlabel("keys in context n (tokens)")
    right.set_ylabel("weight on the matching key")
    right.set_title("One key Δ above the rest, as the context grows")
    right.legend(loc="lower left")
    return {"tau": tau, "plain": plain, "tuned": tuned, "p": p}


def update_temperature(handles, gap=10.0, attn_scale=0.1, floor_scale=8192.0) -> str:
    """Move the curves to Δ = ``gap``, ``attn_scale`` and ``floor_scale``; return the HTML readout table.

    Taught in notebooks/14-position-per-layer.ipynb.
    """
    p = handles["p"]
    tau = llama4_query_temperature(p, attn_scale=attn_scale, floor_scale=floor_scale)
    handles["tau"].set_ydata(tau)
    handles["plain"].set_ydata(key_weight(gap, p + 1.0))
    handles["tuned"].set_ydata(key_weight(gap, p + 1.0, tau))
    rows = ["<tr><th>keys n</th><th>τ</th><th>weight, τ = 1</th><th>weight, τ(p)</th></tr>"]
    for n in CONTEXTS:
        t = float(llama4_query_temperature(n - 1, attn_scale=attn_scale, floor_scale=floor_scale))
        cells = (f"{n:,}", f"{t:.3f}", f"{float(key_weight(gap, n)):.4f}", f"{float(key_weight(gap, n, t)):.4f}")
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table>{''.join(rows)}</table>"


def make_temperature_figure():
    """A figure with :func:`plot_temperature` drawn on it: ``(fig, handles)`` for the slider demo."""
    fig, axes = new_figure(1, 2, figsize=(12.0, 4.6))
    return fig, plot_temperature(axes)


def temperature_demo(gap: float = 10.0, attn_scale: float = 0.1, floor_scale: float = 8192.0):
    """Slider demo: Llama 4's query temperature and the weight a NoPE layer keeps on one key.

    Taught in notebooks/14-position-per-layer.ipynb.

    >>> demo = temperature_demo()
    >>> round(float(demo.handles["tau"].get_ydata()[-1]), 4)     # τ at p = 10^7 − 1: 1 + 0.1·ln(1 + 1220)
    1.7107
    """
    from ..demo import SliderDemo, float_slider, log_slider, token_values

    controls = [
        float_slider("gap", "Δ (logit gap of the matching key)", 0.0, 20.0, gap, step=0.5, readout_format=".1f"),
        float_slider("attn_scale", "attn_scale (growth of τ)", 0.0, 0.3, attn_scale, step=0.01),
        log_slider("floor_scale", "floor_scale (tokens per step of τ)", token_values(128, 98_304), floor_scale),
    ]
    return SliderDemo(make_temperature_figure, update_temperature, controls,
                      title="Llama 4's query temperature on its NoPE layers")


def plot_partial_frequencies(ax, proportional, head_dim, base) -> dict:
    """ω_k (log y) of the two partial-rotation conventions for one head, against the pair index k.

    ``proportional`` is a layer's ``inv_freq`` under the "proportional" rope
    type (head_dim/2 entries: base^(−2k/head_dim) for the first pairs, then
    zeros, drawn as crosses on the bottom edge). Beside it, GPT-NeoX's
    convention for the same number of rotated dims r: ω_k = base^(−2k/r)
    (:func:`posenc_helpers.core.frequencies` over r dims). The faint line is
    RoPE over the whole head. Taught in notebooks/14-position-per-layer.ipynb.
    """
    proportional = np.asarray(proportional, dtype=np.float64)
    kept = proportional > 0
    neox = frequencies(2 * int(kept.sum()), base)
    k = np.arange(head_dim // 2)
    full = frequencies(head_dim, base)
    (whole,) = ax.plot(k, full, "-", color="0.7", linewidth=1.4, label=f"all {head_dim // 2} pairs rotated")
    (neox_line,) = ax.plot(np.arange(neox.size), neox, "s", color=OKABE_ITO[1], markersize=4,
                           label=f"GPT-NeoX: base^(−2k/{neox.size * 2}), {neox.size} pairs")
    (prop_line,) = ax.plot(k[kept], proportional[kept], "o", color=OKABE_ITO[0], markersize=4,
                           label=f"proportional: base^(−2k/{head_dim}), {int(kept.sum())} pairs")
    floor = full.min() / 10
    (zeros,) = ax.plot(k[~kept], np.full(int((~kept).sum()), floor), "x", color=OKABE_ITO[0], markersize=4,
                       label=f"proportional: ω = 0, {int((~kept).sum())} pairs (bottom edge)")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 2.0)
    ax.set_xlabel("pair index k (fast → slow)")
    ax.set_ylabel("frequency ω_k (rad per token)")
    ax.set_title(f"Rotating {int(kept.sum())} of the {head_dim // 2} pairs of a {head_dim}-dim head, "
                 f"base {base:,.0f}")
    ax.legend(loc="upper right", fontsize=12)
    return {"full": whole, "neox": neox_line, "proportional": prop_line, "zeros": zeros}


def make_partial_frequencies():
    """The figure ``figures/14-partial-frequencies.png``: Gemma 4's full layers by Gemma4TextConfig's defaults.

    Those defaults (transformers 5.24.0): global head_dim 512, proportional, partial_rotary_factor 0.25, base 10^6.
    """
    from ..configs import frequencies_from_config

    config = {"head_dim": 512, "rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                                   "rope_theta": 1e6}}
    fig, ax = new_figure(figsize=(10.0, 5.0))
    plot_partial_frequencies(ax, frequencies_from_config(config)[0], 512, 1e6)
    return fig


def plot_mrope_axes(axes, sections=None, dim=128, base=1e6) -> dict:
    """Which axis turns each pair, for Qwen2-VL's blocks and Qwen3-VL's interleaving, and their wavelengths.

    Top: one row of coloured cells per scheme, one cell per pair (t, h, w in
    three colours). Bottom: for each scheme and axis, the range of wavelengths
    λ_k = 2π·base^(2k/D) its pairs cover (both at the same ``base``, to
    compare the assignments alone). ``sections`` maps a row label to
    ``(mrope_section, interleaved)``. Returns ``{label: axes array}``.
    Taught in notebooks/14-position-per-layer.ipynb.
    """
    if sections is None:
        sections = {"blocks [16, 24, 24]": ([16, 24, 24], False),
                    "interleaved [24, 20, 20]": ([24, 20, 20], True)}
    top, bottom = axes
    pairs = dim // 2
    k = np.arange(pairs)
    wavelength = 2.0 * np.pi * base ** (2.0 * k / dim)
    found = {}
    for row, (label, (section, interleaved)) in enumerate(sections.items()):
        axis = mrope_axes(section, pairs, interleaved=interleaved)
        found[label] = axis
        for a, (name, color) in enumerate(_AXES):
            mine = k[axis == a]
            top.bar(mine, 0.8, bottom=row - 0.4, width=0.9, color=color, label=name if row == 0 else None)
            y = row * 4 + a
            bottom.plot([wavelength[mine].min(), wavelength[mine].max()], [y, y], "-", color=color, linewidth=6,
                        solid_capstyle="butt")
            bottom.plot(wavelength[mine], np.full(mine.size, y), "|", color="black", markersize=9)
    labels = list(sections)
    top.set_yticks(range(len(labels)), labels)
    top.set_ylim(len(labels) - 0.5, -0.5)
    top.set_xlim(-0.5, pairs - 0.5)
    top.set_xlabel("pair index k (fast → slow)")
    top.set_ylabel("scheme")
    top.set_title("Which position id turns each pair")
    top.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncols=3)
    ticks = [row * 4 + a for row in range(len(labels)) for a in range(3)]
    names = [f"{label.split()[0]}: {name.split()[0]}" for label in labels for name, _ in _AXES]
    bottom.set_yticks(ticks, names)
    bottom.set_ylim(ticks[-1] + 0.8, -0.8)
    bottom.set_xscale("log")
    bottom.set_xlabel(f"wavelength λ_k of the pairs each axis gets (tokens; D = {dim}, base {base:,.0f})")
    bottom.set_ylabel("scheme and axis")
    bottom.set_title("The wavelengths each axis can use (ticks: one per pair)")
    return found


def make_mrope_axes():
    """The figure ``figures/14-mrope-axes.png``: Qwen2-VL's blocks against Qwen3-VL's interleaving, D = 128.

    [16, 24, 24] is the ``mrope_section`` of Qwen2-VL and Qwen2.5-VL; [24, 20, 20] is the default of
    transformers' Qwen3-VL rotary class.
    """
    fig, axes = new_figure(2, 1, figsize=(11.0, 7.6), height_ratios=[1.0, 1.6])
    plot_mrope_axes(axes)
    return fig


def plot_layer_wavelengths(ax, kinds, lengths) -> dict:
    """λ_k = 2π/ω_k of every pair (log y), one line per layer kind, with a dashed line per length.

    ``kinds`` maps a label to that kind's ``inv_freq`` (pairs with ω = 0 are
    left out: they never turn); ``lengths`` maps a label to a length in
    tokens (a window, a context). A pair below a length's line completes a
    turn within it. Returns ``{label: line}``. Taught in notebooks/14-position-per-layer.ipynb.
    """
    lines = {}
    for i, (label, inv_freq) in enumerate(kinds.items()):
        inv_freq = np.asarray(inv_freq, dtype=np.float64)
        k = np.flatnonzero(inv_freq > 0)
        (lines[label],) = ax.plot(k, 2.0 * np.pi / inv_freq[k], "os^D"[i % 4] + "-", color=OKABE_ITO[i % 8],
                                  markersize=4, linewidth=1.6, label=label)
    for j, (label, length) in enumerate(lengths.items()):
        ax.axhline(length, color=("black", "0.4")[j % 2], linestyle=("--", ":")[j % 2], linewidth=1.6)
        ax.text(0.5, length * 1.25, label, ha="left", va="bottom")
    ax.set_yscale("log")
    ax.set_xlabel("pair index k (fast → slow)")
    ax.set_ylabel("wavelength λ_k (tokens)")
    ax.set_title("One head, two layer kinds: which pairs finish a turn within each length")
    ax.legend(loc="lower right")
    return lines


def layer_colour(layer, norm) -> str | tuple:
    """The barcode colour of one layer: black for NoPE, grey for linear attention, else viridis at its base (log).

    Taught in notebooks/14-position-per-layer.ipynb.
    """
    import matplotlib

    if layer.layer_type == "linear_attention":
        return "0.6"
    if not layer.rope:
        return "black"
    return matplotlib.colormaps["viridis"](norm(layer.base))


def plot_barcode(ax, models) -> dict:
    """One row per model, one cell per layer: colour = RoPE base (black = NoPE, grey = linear attention).

    ``models`` maps a name to its list of
    :class:`~posenc_helpers.configs.LayerPositions` (from
    :func:`~posenc_helpers.configs.layer_positions`). A full-height cell is a
    layer with full attention; a half-height cell a sliding-window or
    chunked layer; a hatched cell rotates only part of its head (partial
    rotary, proportional or MLA). Adds a colorbar for the base. Returns
    ``{name: [cell colour per layer]}``. Taught in notebooks/14-position-per-layer.ipynb.
    """
    import matplotlib
    from matplotlib.colors import LogNorm

    bases = [layer.base for layers in models.values() for layer in layers if layer.rope]
    lo, hi = (min(bases), max(bases)) if bases else (1e4, 1e6)
    norm = LogNorm(vmin=min(lo, 1e4), vmax=max(hi, 1e6))
    found = {}
    names = list(models)
    for row, name in enumerate(names):
        colours = []
        for i, layer in enumerate(models[name]):
            colour = layer_colour(layer, norm)
            colours.append(colour)
            height = 0.8 if layer.window is None else 0.4
            partial = layer.rope and layer.rotary_dim < layer.head_dim
            ax.bar(i, height, bottom=row + 0.4 - height, width=0.9, color=colour,
                   hatch="///" if partial else None, edgecolor="white" if partial else colour, linewidth=0)
        found[name] = colours
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    longest = max((len(layers) for layers in models.values()), default=1)
    ax.set_xlim(-0.6, longest - 0.4)
    ax.set_xlabel("layer (0 = first)")
    ax.set_ylabel("model")
    ax.set_title("Tall: full attention · short: windowed · black: NoPE · grey: linear attention · hatched: partial")
    mappable = matplotlib.cm.ScalarMappable(norm=norm, cmap="viridis")
    colorbar = ax.figure.colorbar(mappable, ax=ax, pad=0.01)
    colorbar.set_label("RoPE base")
    return found


def _bundled_layers() -> dict:
    """``{name: layer_positions(config)}`` for every bundled config that names its layer count."""
    from ..configs import bundled_configs, layer_positions

    models = {}
    for name, config in bundled_configs("all").items():
        try:
            models[name] = layer_positions(config)
        except ValueError:
            continue  # a single-scheme entry without num_hidden_layers: nothing per layer to draw
    return models


def make_local_global():
    """The figure ``figures/14-local-global.png``: the bundled Gemma 3 27B, sliding against full layers."""
    from ..configs import bundled_configs, layer_positions

    config = bundled_configs("all")["Gemma 3 27B"]
    layers = layer_positions(config)
    local = next(layer for layer in layers if layer.layer_type == "sliding_attention")
    full = next(layer for layer in layers if layer.layer_type == "full_attention")
    kinds = {f"sliding (base {local.base:,.0f})": local.inv_freq,
             f"full (base {full.base:,.0f}, {full.rope_type} ×{full.factor:g})": full.inv_freq}
    context = config["text_config"]["max_position_embeddings"]
    fig, ax = new_figure(figsize=(10.0, 5.0))
    plot_layer_wavelengths(ax, kinds, {f"window {local.window:,}": local.window, f"context {context:,}": context})
    ax.set_title("Gemma 3 27B: which pairs finish a turn within the window and within the context")
    return fig


def make_barcode():
    """The figure ``figures/14-barcode.png``: every bundled model that gives its layers, one row each."""
    models = _bundled_layers()
    fig, ax = new_figure(figsize=(13.0, 0.55 * len(models) + 2.2))
    plot_barcode(ax, models)
    return fig


FIGURES = {
    "14-partial-frequencies": make_partial_frequencies,
    "14-mrope-axes": make_mrope_axes,
    "14-barcode": make_barcode,
    "14-local-global": make_local_global,
}
DEMOS = {"temperature": temperature_demo}
