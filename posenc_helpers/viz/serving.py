"""Position when serving: the figures of notebook 18, and a slider for partial rotary's two conventions.

Taught in notebooks/18-position-when-serving.ipynb.

* :func:`make_layout_sign` (``figures/18-layout-sign.png``): a text lab model's bits per character at each
  position of a window, run right, with its q and k in the wrong pair layout, and turned the wrong way;
* :func:`make_quantized_keys` (``figures/18-quantized-keys.png``): the range of each key channel over a window,
  before and after RoPE, which sets the step of a per-channel quantizer;
* :func:`partial_demo`: the frequencies of NeoX-style and proportional partial rotary, and how far apart the
  scores of one (q, k) pair run under the two, distance by distance;
* :func:`plot_window_retrieval`: passkey accuracy against the needle's distance, with and without a window
  (drawn from data the notebook trains; no registered figure, since it needs JAX).
"""

from __future__ import annotations

import html

import numpy as np

from .. import serving
from ..streaming import load_params, validation
from . import OKABE_ITO, new_figure

__all__ = [
    "LAYOUT_SEED", "WINDOWS", "bits_by_position", "plot_bits_by_position", "make_layout_sign", "key_ranges",
    "plot_key_ranges", "make_quantized_keys", "PARTIAL_HEAD_DIM", "DISTANCES", "score_gap", "plot_partial",
    "update_partial", "make_partial_figure", "partial_demo", "make_partial_default", "plot_window_retrieval",
    "FIGURES", "DEMOS",
]

#: The shipped text model the figures read (the sweep's seed 0).
LAYOUT_SEED = 0
#: How many windows of L = 64 validation characters the layout figure averages over.
WINDOWS = 64


def _windows(n=WINDOWS, length=64):
    ids = validation()
    starts = np.arange(n) * length
    return (np.stack([ids[s:s + length] for s in starts]), np.stack([ids[s + 1:s + length + 1] for s in starts]))


def bits_by_position(seed=LAYOUT_SEED, n=WINDOWS) -> dict:
    """Mean bits per character at each position of ``n`` windows of 64, for three ways to run one shipped model.

    ``"right"``: as trained (interleaved pairs); ``"ported, permuted"``: its weights through
    :func:`~posenc_helpers.serving.to_half_split` run by half-split code (the same numbers); ``"layout forgotten"``:
    the trained weights run by half-split code; ``"sign flipped"``: run turning by −θ. Each (64,).
    """
    params = load_params(seed)
    tokens, targets = _windows(n)

    def mean_bits(p, **kw):
        return serving.bits(serving.forward(p, tokens, heads=4, **kw), targets).mean(0)

    return {"right": mean_bits(params),
            "ported, permuted": mean_bits(serving.to_half_split(params, heads=4), layout="half"),
            "layout forgotten": mean_bits(params, layout="half"),
            "sign flipped": mean_bits(params, sign=-1)}


def plot_bits_by_position(ax, curves) -> dict:
    """One line per way of running the model: bits per character against the position in the window.

    ``curves`` as :func:`bits_by_position` returns; a curve equal to the first one is drawn dashed over it.
    Returns ``{label: line}``.
    """
    lines = {}
    styles = [("-", "o"), ("--", "None"), ("-", "s"), ("-", "^")]
    for i, (label, y) in enumerate(curves.items()):
        ls, marker = styles[i % len(styles)]
        (lines[label],) = ax.plot(np.arange(len(y)), y, linestyle=ls, marker=marker, markevery=8, markersize=6,
                                  color=OKABE_ITO[i % len(OKABE_ITO)], linewidth=2.2, label=label)
    ax.set_xlabel("position in the window (characters)")
    ax.set_ylabel("bits per character (mean over windows)")
    ax.set_title("One trained model, run three ways")
    ax.set_xlim(0, len(next(iter(curves.values()))) - 1)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left")
    return lines


def make_layout_sign():
    """The figure ``figures/18-layout-sign.png``: :func:`plot_bits_by_position` of :func:`bits_by_position`."""
    fig, ax = new_figure(figsize=(10.0, 5.2))
    plot_bits_by_position(ax, bits_by_position())
    return fig


def key_ranges(seed=LAYOUT_SEED, layer=0, length=64) -> dict:
    """Max − min over ``length`` tokens of each key channel of one layer, before RoPE and after: {"pre", "post"}.

    The keys of every head of layer ``layer`` of a shipped text model on the first ``length`` validation
    characters, channels in head order: (heads · head_dim,) each. A per-channel quantizer's step is
    range/(2^bits − 1).
    """
    tokens = validation()[:length][None]
    _, taps = serving.forward(load_params(seed), tokens, heads=4, return_qk=True)
    tap = taps[layer]
    # (1, heads, T, head_dim) → channels in head order
    def spread(k):
        return (k.max(axis=2) - k.min(axis=2))[0].reshape(-1)

    return {"pre": spread(tap["k_raw"]), "post": spread(tap["k"])}


def plot_key_ranges(ax, ranges) -> dict:
    """Bars of each channel's range before (left of each pair) and after RoPE. Returns ``{"pre", "post"}`` bars."""
    n = ranges["pre"].size
    x = np.arange(n)
    out = {"pre": ax.bar(x - 0.2, ranges["pre"], width=0.4, color=OKABE_ITO[0], label="before RoPE (pre-RoPE)"),
           "post": ax.bar(x + 0.2, ranges["post"], width=0.4, color=OKABE_ITO[1], label="after RoPE (post-RoPE)",
                          hatch="//", edgecolor="black", linewidth=0.3)}
    ax.set_xlabel("key channel (head × 16 + dim)")
    ax.set_ylabel("range over 64 tokens (max − min)")
    ax.set_title("What a per-channel quantizer must cover, layer 0")
    ax.set_xlim(-1, n)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper right")
    return out


def make_quantized_keys():
    """The figure ``figures/18-quantized-keys.png``: :func:`plot_key_ranges` of :func:`key_ranges`."""
    fig, ax = new_figure(figsize=(12.0, 4.8))
    plot_key_ranges(ax, key_ranges())
    return fig


# ---- the slider: partial rotary's two conventions -----------------------------------------------------------------

#: The head width of the slider's model (Qwen3.5 9B's rotary heads are 256 dims wide).
PARTIAL_HEAD_DIM = 256
#: The distances the slider draws the score gap at: 1 … 32,768 tokens, log-spaced.
DISTANCES = np.unique(np.round(np.logspace(0, np.log10(32768), 160)).astype(np.int64))


def score_gap(fraction, base, *, head_dim=PARTIAL_HEAD_DIM, distances=DISTANCES, pairs=64, seed=0) -> np.ndarray:
    """How far apart the scores of random (q, k) run under the two conventions: RMS(s_prop − s_neox)/RMS(s_neox).

    For ``pairs`` random Gaussian (q, k) of ``head_dim`` dims, s(Δ) = q · R(Δ)·k, R being ``decoder.rope_rotate``
    with :func:`~posenc_helpers.serving.partial_frequencies`' frequencies and width (pair i is dims i and i + r/2 of
    the first r), written out pair by pair: s(Δ) = Σ_i (q_i k_i + q_j k_j)·cos(Δω_i) + (q_j k_i − q_i k_j)·sin(Δω_i)
    + the unturned dims' q·k, with j = i + r/2. One value per distance Δ: 0 at Δ = 0 (nothing turns), and 0
    everywhere when ``fraction`` is 1 (the conventions coincide).
    """
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, pairs, head_dim))
    delta = np.asarray(distances, np.float64)

    def scores(convention):
        inv_freq, rotary = serving.partial_frequencies(head_dim, fraction, base=base, convention=convention)
        half = rotary // 2
        qa, qb, ka, kb = q[:, :half], q[:, half:rotary], k[:, :half], k[:, half:rotary]
        # Σ_i (q_i k_i + q_j k_j)·cos(Δω_i) + (q_j k_i − q_i k_j)·sin(Δω_i), plus the dims that do not turn
        angle = np.outer(inv_freq, delta)
        still = (q[:, rotary:] * k[:, rotary:]).sum(-1)[:, None]
        return (qa * ka + qb * kb) @ np.cos(angle) + (qb * ka - qa * kb) @ np.sin(angle) + still

    neox, prop = scores("neox"), scores("proportional")
    return np.sqrt(((prop - neox) ** 2).mean(0)) / np.sqrt((neox**2).mean(0))


def plot_partial(axes) -> dict:
    """Two panels animated by :func:`update_partial`: each pair's frequency, and the score gap against distance."""
    left, right = axes
    handles = {"neox": left.plot([], [], "o", color=OKABE_ITO[0], markersize=5, label="NeoX: base^(−2k/r)")[0],
               "prop": left.plot([], [], "s", color=OKABE_ITO[1], markersize=5,
                                 label="proportional: base^(−2k/head_dim)")[0],
               "gap": right.plot(DISTANCES, np.zeros(DISTANCES.size), color=OKABE_ITO[2], linewidth=2.4)[0]}
    for artist in handles.values():
        artist.set_animated(True)
    left.set_yscale("log")
    left.set_xlim(-2, PARTIAL_HEAD_DIM // 2 + 2)
    left.set_ylim(1e-8, 2.0)
    left.set_xlabel("pair k")
    left.set_ylabel("ω_k (radians per token, log)")
    left.set_title("Frequencies of the turning pairs")
    left.grid(True, alpha=0.3)
    left.legend(loc="lower left")
    right.set_xscale("log")
    right.set_xlim(DISTANCES[0], DISTANCES[-1])
    right.set_ylim(0, 1.6)
    right.set_xlabel("distance n − m (tokens, log)")
    right.set_ylabel("RMS score gap ÷ RMS score")
    right.set_title("Scores of one model under the other convention")
    right.grid(True, alpha=0.3)
    handles["axes"] = axes
    return handles


def update_partial(handles, fraction=0.25, base=1e7) -> str:
    """Redraw for ``fraction`` (partial_rotary_factor) and ``base``; return the readout table (HTML)."""
    neox, r = serving.partial_frequencies(PARTIAL_HEAD_DIM, fraction, base=base)
    prop, _ = serving.partial_frequencies(PARTIAL_HEAD_DIM, fraction, base=base, convention="proportional")
    turning = prop[prop > 0]
    handles["neox"].set_data(np.arange(neox.size), neox)
    handles["prop"].set_data(np.arange(turning.size), turning)
    gap = score_gap(fraction, base)
    handles["gap"].set_ydata(gap)
    rows = [("rotated dims", f"{r} of {PARTIAL_HEAD_DIM}", f"all {PARTIAL_HEAD_DIM}, {turning.size} pairs turning"),
            ("slowest turning pair ω", f"{neox[-1]:.3g}", f"{turning[-1]:.3g}")]
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    at = {d: gap[np.searchsorted(DISTANCES, d)] for d in (1, 16, 256, 4096)}
    gaps = ", ".join(f"{d:,}: {g:.2f}" for d, g in at.items())
    return (f"<table><tr><th></th><th>NeoX (r = {r})</th><th>proportional</th></tr>{body}</table>"
            f"<p>score gap at distance {html.escape(gaps)}</p>")


def make_partial_figure():
    """A figure with :func:`plot_partial` drawn on it: ``(fig, handles)`` for the slider demo."""
    fig, axes = new_figure(1, 2, figsize=(13.0, 5.0))
    return fig, plot_partial(axes)


def partial_demo(fraction: float = 0.25, base: float = 1e7):
    """Slider demo: partial_rotary_factor and base against the two conventions' frequencies and scores.

    Defaults: Qwen3.5 9B's rotary settings (a quarter of 256 dims, base 10,000,000), NeoX-style in its code.

    >>> demo = partial_demo()
    >>> demo.values == {"fraction": 0.25, "base": 1e7}
    True
    """
    from ..demo import SliderDemo, float_slider, log_slider, round_values

    controls = [float_slider("fraction", "fraction (partial_rotary_factor)", 0.125, 1.0, fraction, step=0.125,
                             readout_format=".3f"),
                log_slider("base", "base (RoPE base)", round_values(1_000, 100_000_000), base)]
    return SliderDemo(make_partial_figure, update_partial, controls,
                      title="Partial rotary: NeoX-style against proportional, one head of 256 dims")


def make_partial_default():
    """:func:`partial_demo` at its defaults, drawn statically (the notebook shows ``demo.fig``, the same drawing)."""
    fig, handles = make_partial_figure()
    update_partial(handles)
    return fig


def plot_window_retrieval(ax, distances, accuracy, *, chance=None,
                          title="Passkey retrieval through a sliding window") -> dict:
    """Whole-key passkey accuracy against the distance from each answer to its key token, one line per window.

    ``accuracy``: {label: one value per distance}.

    Labels are such as "full attention", "window 16"; ``chance`` draws a dotted line. Returns ``{label: line}``.
    """
    lines = {}
    markers = ("o", "s", "^", "D", "v")
    for i, (label, y) in enumerate(accuracy.items()):
        (lines[label],) = ax.plot(distances, y, marker=markers[i % len(markers)], color=OKABE_ITO[i % len(OKABE_ITO)],
                                  linewidth=2.2, markersize=7, label=label)
    if chance is not None:
        lines["chance"] = ax.axhline(chance, color="black", linestyle=":", linewidth=1.5, label="chance (1/3!)")
    ax.set_xlabel("distance from each answer to its key token (tokens)")
    ax.set_ylabel("whole key right (share of sequences)")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="center left")
    return lines


FIGURES = {"18-layout-sign": make_layout_sign, "18-quantized-keys": make_quantized_keys}
DEMOS = {"partial": partial_demo}
