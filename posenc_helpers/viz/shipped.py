"""RoPE as shipped: each real model's wavelengths against its L, large bases, 2D RoPE scores, Qwen2-VL's ids.

Taught in notebooks/11-rope-as-shipped.ipynb.

A pair whose wavelength λ_k = 2π/ω_k is longer than L tokens never
completes a turn within them. :func:`plot_model_wavelengths` draws λ_k / L
for each of the nine models of notebook 11, with L the length a config's
scaling starts from or, without scaling, its declared context
``max_position_embeddings`` (not necessarily the training length);
:func:`base_demo` lets a slider move the base and the training length L of a
128-wide head and counts those pairs. :func:`plot_mrope_sections` and
:func:`plot_mrope_ids` draw Qwen2-VL's split of the pairs between t, h and w
and the ids of a short text-image-text sequence.
"""

from __future__ import annotations

import html

import numpy as np

from .. import _validate as v
from ..configs import bundled_configs, config_summary
from ..core import frequencies
from ..multiaxis import MROPE_AXES, axial_rope_2d, mrope_pair_axis, mrope_position_ids
from . import DIVERGING_CMAP, OKABE_ITO, new_figure

__all__ = [
    "DEMO_DIM",
    "MODEL_NAMES",
    "TOL_MUTED",
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
    "MROPE_SECTION",
    "MROPE_SEQUENCE",
    "plot_mrope_sections",
    "plot_mrope_ids",
    "make_mrope_ids",
    "FIGURES",
    "DEMOS",
]

#: The head width of the base demo: 64 pairs, as in Llama.
DEMO_DIM = 128


#: The nine models notebook 11 reads, in its order (the figure's default; later additions to the bundle are not drawn).
MODEL_NAMES = (
    "Llama 2 7B", "Llama 3.1 8B", "Code Llama 7B", "Mistral 7B", "Qwen2.5 7B",
    "GPT-NeoX-20B", "GPT-J-6B", "gpt-oss-20b", "Phi-3-mini 128k",
)

#: Paul Tol's "muted" qualitative scheme: nine colours that stay distinct under the common colour-vision deficiencies
#: (https://personal.sron.nl/~pault/). Okabe-Ito has only seven strong ones besides its pale yellow.
TOL_MUTED = ("#332288", "#CC6677", "#117733", "#AA4499", "#44AA99", "#882255", "#999933", "#DDCC77", "#88CCEE")

#: One marker per model, so the lines differ in shape as well as colour.
MODEL_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h", "*")


def _spread(values, gap):
    """Positions as close to ``values`` as possible, sorted as they are, at least ``gap`` apart."""
    order = np.argsort(values)
    placed = np.asarray(values, dtype=float)[order].copy()
    for _ in range(50):
        for i in range(1, placed.size):
            placed[i] = max(placed[i], placed[i - 1] + gap)
        # pull the stack back down by its mean displacement, then re-check the gaps
        placed -= (placed - np.asarray(values, dtype=float)[order]).mean() / 2
    for i in range(1, placed.size):
        placed[i] = max(placed[i], placed[i - 1] + gap)
    out = np.empty_like(placed)
    out[order] = placed
    return out


def plot_model_wavelengths(ax, configs=None) -> dict:
    """λ_k / L of every rotated pair, one line per config (default: the nine of :data:`MODEL_NAMES`), log y axis.

    L is the length each config's scaling starts from, or its declared
    context ``max_position_embeddings`` when it has no scaling (see
    :func:`posenc_helpers.configs.config_summary`). Points above the line
    λ/L = 1 are pairs that never complete a turn within L. The x axis is the
    pair's place in its head, k/(pairs − 1), so heads of 12 and 64 pairs
    share it. Each line has its own colour (:data:`TOL_MUTED`) and marker and
    is labelled at its right end with the count above the line ("18 of 64").
    Returns ``{name: line}``. Taught in notebooks/11-rope-as-shipped.ipynb.
    """
    if configs is None:
        bundled = bundled_configs()
        configs = {name: bundled[name] for name in MODEL_NAMES}
    if len(configs) > len(TOL_MUTED):
        raise ValueError(f"configs can hold at most {len(TOL_MUTED)} models (one colour each), got {len(configs)}")
    lines, ends, labels = {}, [], []
    for i, (name, cfg) in enumerate(configs.items()):
        s = config_summary(cfg)
        omega = frequencies(s["rotary_dim"], s["base"])
        k = np.arange(omega.size)
        # λ_k / L = 2π / (ω_k · L)
        ratio = 2.0 * np.pi / (omega * s["length"])
        (lines[name],) = ax.plot(
            k / (k.size - 1), ratio, marker=MODEL_MARKERS[i], markersize=6, markevery=max(1, k.size // 8),
            markeredgecolor="black", markeredgewidth=0.6, linewidth=2.2, color=TOL_MUTED[i],
            label=f"{name}: {s['never_turn']} of {s['pairs']} (L = {s['length']:,})",
        )
        ends.append(float(ratio[-1]))
        labels.append(lines[name].get_label())
    ax.hlines(1.0, 0.0, 1.0, color="black", linewidth=1.4, linestyle="--")
    ax.text(0.01, 1.15, "λ = L: one turn within L", ha="left", va="bottom")
    ax.set_yscale("log")
    ax.set_xlim(0.0, 1.56)
    ax.set_xticks(np.linspace(0.0, 1.0, 6))
    ax.spines[["right", "top"]].set_visible(False)
    ax.set_xlabel("pair position in the head, k / (pairs − 1) (fast → slow)")
    ax.set_ylabel("wavelength over L, λ_k / L (log)")
    ax.set_title("Pairs above the dashed line never finish a turn within L; each label counts them")
    # direct labels right of the lines, at least 1/17 of the axis height apart, each joined to its line's end
    low, high = np.log10(min(float(line.get_ydata().min()) for line in lines.values())) - 0.3, np.log10(max(ends)) + 1.6
    ax.set_ylim(10.0**low, 10.0**high)
    spots = 10.0 ** _spread(np.log10(ends), (high - low) / 17)
    for i, (end, spot) in enumerate(zip(ends, spots, strict=True)):
        ax.plot([1.0, 1.06], [end, spot], color=TOL_MUTED[i], linewidth=1.2)
        ax.plot([1.075], [spot], marker=MODEL_MARKERS[i], color=TOL_MUTED[i], markeredgecolor="black",
                markeredgewidth=0.6, markersize=8)
        ax.text(1.095, spot, labels[i], va="center", ha="left")
    return lines


def make_model_wavelengths():
    """The figure ``figures/11-model-wavelengths.png``: every bundled config's λ_k / L."""
    fig, ax = new_figure(figsize=(12.0, 6.0))
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
    from ..demo import SliderDemo, log_slider, round_values, token_values

    controls = [
        # 1,000 … 10,000,000 in round values (10,000, 500,000 and 1,000,000 among them)
        log_slider("base", "base (frequency base)", round_values(1_000, 10_000_000), base),
        # 1,024 … 786,432: powers of two (8,192 among them) and the halfway points 3·2^j
        log_slider("length", "L (training length, tokens)", token_values(1_024, 786_432), length),
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


#: Qwen2-VL's split of its 64 pairs between t, h and w (its config's mrope_section).
MROPE_SECTION = (16, 24, 24)

#: A short mixed sequence: 3 text tokens, one image of 4 × 6 patches (2 × 3 tokens after merging), 2 text tokens.
MROPE_SEQUENCE = (3, (1, 4, 6), 2)


def plot_mrope_sections(ax, mrope_section=MROPE_SECTION, base=10000.0) -> dict:
    """Which id turns each pair under Qwen2-VL's multimodal RoPE: ω_k (log y) against k, coloured by t, h, w.

    The pairs are split in order (:func:`posenc_helpers.multiaxis.mrope_pair_axis`),
    so t gets the fastest pairs and w the slowest. Returns ``{"t": line, "h": line,
    "w": line}``. Taught in notebooks/11-rope-as-shipped.ipynb.
    """
    axis = mrope_pair_axis(mrope_section)
    k = np.arange(axis.size)
    omega = frequencies(2 * axis.size, base)
    lines = {}
    for a, (name, marker) in enumerate(zip(MROPE_AXES, "osD", strict=True)):
        pairs = k[axis == a]
        (lines[name],) = ax.plot(pairs, omega[pairs], marker, color=OKABE_ITO[a], markersize=6,
                                 label=f"{name}: pairs {pairs[0]}–{pairs[-1]} ({pairs.size})")
        ax.text(pairs.mean(), omega[pairs[0]] * 3.0, name, color=OKABE_ITO[a], ha="center", fontsize=15,
                fontweight="bold")
    ax.set_yscale("log")
    ax.set_ylim(omega[-1] / 3, 8.0)
    ax.set_xlabel("pair index k (fast → slow)")
    ax.set_ylabel("ω_k (rad per id step)")
    ax.set_title(f"Qwen2-VL: mrope_section = {list(mrope_section)} gives each id a block of pairs")
    ax.legend(loc="lower left")
    return lines


def plot_mrope_ids(ax, segments=MROPE_SEQUENCE, spatial_merge_size=2) -> dict:
    """The (t, h, w) ids of a short text-image-text sequence, one marker series per id, image tokens shaded.

    The ids come from :func:`posenc_helpers.multiaxis.mrope_position_ids`.
    Returns ``{"t": line, "h": line, "w": line, "ids": array}``.
    Taught in notebooks/11-rope-as-shipped.ipynb.
    """
    ids = mrope_position_ids(list(segments), spatial_merge_size)
    token = np.arange(ids.shape[1])
    out = {"ids": ids}
    start = 0
    for item in segments:
        width = item if v._is_int(item) else (item[1] // spatial_merge_size) * (item[2] // spatial_merge_size)
        if not v._is_int(item):
            ax.axvspan(start - 0.5, start + width - 0.5, color="0.9", zorder=0)
            ax.text(start + width / 2 - 0.5, ids.max() + 0.9, "image tokens", ha="center")
        start += width
    for a, (name, marker, shift) in enumerate(zip(MROPE_AXES, "osD", (-0.18, 0.0, 0.18), strict=True)):
        (out[name],) = ax.plot(token + shift, ids[a], marker, color=OKABE_ITO[a], markersize=8, label=f"{name} id")
    ax.set_xticks(token)
    ax.set_yticks(np.arange(ids.max() + 1))
    ax.set_ylim(-0.5, ids.max() + 1.6)
    ax.set_xlabel("token index in the sequence")
    ax.set_ylabel("position id")
    ax.set_title("Position ids: text after the image resumes at the largest id used plus one")
    ax.legend(loc="upper left")
    return out


def make_mrope_ids():
    """The figure ``figures/11-mrope-ids.png``: Qwen2-VL's pair split and the ids of a short mixed sequence."""
    fig, (top, bottom) = new_figure(2, 1, figsize=(9.0, 8.0))
    plot_mrope_sections(top)
    plot_mrope_ids(bottom)
    return fig


FIGURES = {
    "11-model-wavelengths": make_model_wavelengths,
    "11-axial-scores": make_axial_scores,
    "11-mrope-ids": make_mrope_ids,
}
DEMOS = {"base": base_demo}
