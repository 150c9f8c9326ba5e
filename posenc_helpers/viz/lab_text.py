"""The figures of the lab on real text: bits per character against inference length, and by position.

Taught in notebooks/15-lab-on-real-text.ipynb. Every function takes numbers and
draws; nothing here trains. The ``make_*`` functions read the shipped sweep,
``posenc_helpers/lab/text_results.json`` (regenerate with
``python -m posenc_helpers.lab.text``) and ``text_context.json`` (``python -m
posenc_helpers.lab.text_context``).
"""

from __future__ import annotations

import numpy as np

from ..style import OKABE_ITO
from . import new_figure, styled
from .lab import METHOD_STYLE, SCHEME_STYLE

__all__ = [
    "plot_bits_vs_length",
    "plot_loss_by_position",
    "summarise",
    "make_bits_figure",
    "make_position_figure",
    "make_finetune_figure",
    "plot_context_gain",
    "plot_sliding",
    "make_context_figure",
    "FINETUNE_STYLE",
    "FIGURES",
]


#: Label, colour and line style of RoPE after the brief fine-tune, per rescaling (colours as METHOD_STYLE's).
FINETUNE_STYLE = {
    "plain": ("RoPE, fine-tuned", OKABE_ITO[0], "-"),
    "pi": ("RoPE + PI, fine-tuned", METHOD_STYLE["pi"][1], "--"),
    "ntk": ("RoPE + NTK, fine-tuned", METHOD_STYLE["ntk"][1], "-."),
    "yarn": ("RoPE + YaRN, fine-tuned", METHOD_STYLE["yarn"][1], ":"),
}


def summarise(bits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(median, low, high)`` over seeds (axis 0) of an array (seeds, ...); NaN stays NaN.

    The median, not the mean: one seed far from the others moves a mean, and the
    claims of notebook 15 state the median with the range.

    >>> m, lo, hi = summarise(np.array([[1.0, np.nan], [2.0, np.nan], [9.0, np.nan]]))
    >>> m.tolist(), lo.tolist(), hi.tolist()
    ([2.0, nan], [1.0, nan], [9.0, nan])
    """
    bits = np.asarray(bits, dtype=float)
    out = np.full((3,) + bits.shape[1:], np.nan)
    ok = ~np.isnan(bits).all(axis=0)
    out[0][ok] = np.median(bits[:, ok], axis=0)
    out[1][ok] = bits[:, ok].min(0)
    out[2][ok] = bits[:, ok].max(0)
    return out[0], out[1], out[2]


def _shade_beyond(ax, train_len, right):
    ax.axvspan(train_len, right, color="0.9", zorder=0)
    ax.axvline(train_len, color="0.5", linewidth=1)


def plot_bits_vs_length(ax, lengths, bits, train_len, *, spread=None, unigram=None, styles=None, title="") -> dict:
    """Bits per character against inference length T, one line per scheme; the region past L shaded.

    ``bits`` maps a name (a scheme, or a scaling method with ``styles=METHOD_STYLE``)
    to values at ``lengths`` (NaN: cannot run, left out of the line);
    ``spread`` maps a name to ``(low, high)``, drawn as a band (the range over
    seeds). ``unigram`` draws the context-free baseline. Returns the lines by name.

    >>> fig, ax = new_figure()
    >>> h = plot_bits_vs_length(ax, [64, 128], {"alibi": [2.1, 2.0]}, 64)
    >>> h["alibi"].get_ydata().tolist()
    [2.1, 2.0]
    """
    lengths = np.asarray(lengths)
    lines = {}
    for name, values in bits.items():
        if styles is None:
            label, colour, ls, marker = SCHEME_STYLE[name]
        else:
            (label, colour, ls), marker = styles[name], "."
        (lines[name],) = ax.plot(lengths, np.asarray(values, dtype=float), ls, color=colour, marker=marker, label=label)
        if spread is not None and name in spread:
            low, high = spread[name]
            ax.fill_between(lengths, low, high, color=colour, alpha=0.15, linewidth=0)
    _shade_beyond(ax, train_len, lengths.max() * 1.05)
    if unigram is not None:
        ax.axhline(unigram, color="0.4", linewidth=1, linestyle=(0, (1, 3)))
        ax.text(lengths.min(), unigram, " unigram baseline", ha="left", va="bottom", color="0.3")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(n) for n in lengths])
    ax.set_xlim(lengths.min() * 0.9, lengths.max() * 1.05)
    ax.set_xlabel("inference length T (characters)")
    ax.set_ylabel("validation loss (bits per character)")
    ax.set_title(title)
    return lines


def plot_loss_by_position(ax, curves, train_len, *, title="") -> dict:
    """Loss at each position t of a long window, one line per scheme; the positions past L shaded.

    ``curves`` maps a scheme to its loss in bits at t = 0 … T − 1 (all NaN:
    cannot run, nothing drawn). Returns the lines by scheme.
    """
    lines = {}
    right = 1
    for scheme, values in curves.items():
        values = np.asarray(values, dtype=float)
        right = max(right, values.size)
        if np.isnan(values).all():
            continue
        label, colour, ls, _ = SCHEME_STYLE[scheme]
        (lines[scheme],) = ax.plot(np.arange(values.size), values, ls, color=colour, label=label, linewidth=1.5)
    _shade_beyond(ax, train_len, right)
    ax.set_xlim(0, right)
    ax.set_xlabel("position t inside the window (characters)")
    ax.set_ylabel("loss at t (bits per character)")
    ax.set_title(title)
    return lines


def _load():
    from ..lab.text import load

    return load()


@styled
def make_bits_figure(res=None):
    """The figure ``figures/15-bits-vs-length.png``: every scheme, and RoPE with test-time rescaling.

    Taught in notebooks/15-lab-on-real-text.ipynb.
    """
    res = _load() if res is None else res
    L = res["defaults"]["train_len"]
    fig, axes = new_figure(1, 2, figsize=(12.0, 4.6), sharey=True)
    summary = {s: summarise(b) for s, b in res["bits"].items()}
    plot_bits_vs_length(
        axes[0], res["lengths"], {s: m for s, (m, _, _) in summary.items()}, L,
        spread={s: (lo, hi) for s, (_, lo, hi) in summary.items()}, unigram=res["unigram_bits"],
        title="every scheme",
    )
    scaled = {m: summarise(b) for m, b in res["scaled"].items()}
    rope = summary["rope"]
    lines = plot_bits_vs_length(
        axes[1], res["lengths"], {"rope": rope[0]}, L, spread={"rope": rope[1:]}, unigram=res["unigram_bits"],
        title="RoPE, rescaled at test time (s = T/L, no fine-tuning)",
    )
    lines.update(
        plot_bits_vs_length(
            axes[1], res["lengths"], {m: v[0] for m, v in scaled.items()}, L,
            spread={m: v[1:] for m, v in scaled.items()}, styles=METHOD_STYLE,
        )
    )
    axes[1].set_title("RoPE, rescaled at test time (s = T/L, no fine-tuning)")
    axes[1].set_ylabel("")
    axes[0].legend(loc="upper left", fontsize=11, ncol=2)  # two columns: clear of the baseline's label
    axes[1].legend(loc="upper left", fontsize=11)
    n = len(res["seeds"])
    fig.suptitle(f"Character models trained on windows of {L}, read longer (median of {n} seeds, band: range)")
    return fig


@styled
def make_position_figure(res=None):
    """The figure ``figures/15-loss-by-position.png``: loss at each position of a window of 8L (median over seeds).

    Taught in notebooks/15-lab-on-real-text.ipynb.
    """
    res = _load() if res is None else res
    L = res["defaults"]["train_len"]
    fig, ax = new_figure(figsize=(10.0, 4.6))
    curves = {s: summarise(b)[0] for s, b in res["by_position"].items()}
    plot_loss_by_position(ax, curves, L, title=f"Inside a window of {res['by_position_length']} characters")
    ax.legend(loc="upper left", fontsize=11)
    return fig


def _targets():
    # PI, NTK and YaRN fine-tuned at 4L with s = 16 (for 16L), from the rows kept block by block: (seeds, lengths)
    from ..lab.text_rows import load_blocks

    rope = sorted((r for r in load_blocks()[0] if r["scheme"] == "rope"), key=lambda r: r["seed"])
    return {m: np.array([r["finetuned"][f"{m}_s16"]["bits"] for r in rope], dtype=float) for m in ("pi", "ntk", "yarn")}


@styled
def make_finetune_figure(res=None, targets=None):
    """The figure ``figures/15-rope-finetune.png``: RoPE rescaled at test time only, and after the brief fine-tune.

    Left: plain RoPE and PI, NTK, YaRN at s = T/L with no training. Middle: each
    after ``res["finetune"]["steps"]`` steps at ``res["finetune"]["length"]``
    characters (s = that length / L), read with that rescaling at every T.
    Right, if ``targets`` is given (``{method: (seeds, lengths)}``; with ``res``
    None both are read from the stored files): PI, NTK and YaRN fine-tuned the
    same way with s = 16, set for 16L. ALiBi (median of seeds) is drawn on every
    panel as the reference. Taught in notebooks/15-lab-on-real-text.ipynb.
    """
    if res is None:
        res, targets = _load(), (_targets() if targets is None else targets)
    L = res["defaults"]["train_len"]
    lengths = res["lengths"]
    panels = 2 if targets is None else 3
    fig, axes = new_figure(1, panels, figsize=(6.0 * panels, 4.6), sharey=True)
    rope, alibi = summarise(res["bits"]["rope"]), summarise(res["bits"]["alibi"])
    scaled = {m: summarise(b) for m, b in res["scaled"].items()}
    plot_bits_vs_length(
        axes[0], lengths, {"rope": rope[0], "alibi": alibi[0]}, L, spread={"rope": rope[1:]},
        unigram=res["unigram_bits"],
    )
    plot_bits_vs_length(
        axes[0], lengths, {m: v[0] for m, v in scaled.items()}, L, spread={m: v[1:] for m, v in scaled.items()},
        styles=METHOD_STYLE,
    )
    axes[0].set_title("rescaled at test time only")
    tuned = {m: summarise(b) for m, b in res["finetuned"].items()}
    plot_bits_vs_length(axes[1], lengths, {"alibi": alibi[0]}, L, unigram=res["unigram_bits"])
    plot_bits_vs_length(
        axes[1], lengths, {m: v[0] for m, v in tuned.items()}, L, spread={m: v[1:] for m, v in tuned.items()},
        styles=FINETUNE_STYLE,
    )
    n, T = res["finetune"]["steps"], res["finetune"]["length"]
    axes[1].axvline(T, color="0.3", linewidth=1, linestyle=(0, (4, 2)))
    axes[1].set_title(f"after {n} steps at T = {T} (dashed), s = {T // L}")
    axes[1].set_ylabel("")
    if targets is not None:
        wide = {m: summarise(b) for m, b in targets.items()}
        plot_bits_vs_length(axes[2], lengths, {"alibi": alibi[0]}, L, unigram=res["unigram_bits"])
        plot_bits_vs_length(
            axes[2], lengths, {m: v[0] for m, v in wide.items()}, L, spread={m: v[1:] for m, v in wide.items()},
            styles=FINETUNE_STYLE,
        )
        axes[2].axvline(T, color="0.3", linewidth=1, linestyle=(0, (4, 2)))
        axes[2].set_title(f"the same steps at T = {T}, s = 16 (set for 16L)")
        axes[2].set_ylabel("")
    for ax in axes:
        ax.legend(loc="upper left", fontsize=11)
    fig.suptitle(f"RoPE trained at L = {L}, read longer (median of {len(res['seeds'])} seeds, band: range)")
    return fig


def plot_context_gain(ax, train_len, gains, *, spread=None, title="") -> dict:
    """The gain from the far context per block of L positions, one line per scheme; 0 marked.

    ``gains`` maps a scheme to its gain (bits, last-L loss minus whole-window
    loss) in blocks k = 0 … K − 1, drawn at the block's middle position (k + ½)·L;
    all NaN (the learned table): nothing drawn. ``spread`` maps a scheme to
    ``(low, high)``, drawn as a band. Returns the lines by scheme.

    >>> fig, ax = new_figure()
    >>> h = plot_context_gain(ax, 64, {"alibi": [0.0, -0.01, -0.02]})
    >>> h["alibi"].get_xdata().tolist(), ax.get_ylabel()
    ([32.0, 96.0, 160.0], 'gain from the far context (bits per character)')
    """
    lines = {}
    right = train_len
    for scheme, values in gains.items():
        values = np.asarray(values, dtype=float)
        # x: the middle of block k, (k + 1/2)·L characters into the window
        x = (np.arange(values.size) + 0.5) * train_len
        right = max(right, values.size * train_len)
        if np.isnan(values).all():
            continue
        label, colour, ls, marker = SCHEME_STYLE[scheme]
        (lines[scheme],) = ax.plot(x, values, ls, color=colour, marker=marker, label=label)
        if spread is not None and scheme in spread:
            low, high = spread[scheme]
            ax.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0)
    _shade_beyond(ax, train_len, right)
    ax.axhline(0.0, color="0.3", linewidth=1)
    ax.set_xlim(0, right)
    ax.set_xlabel("position t inside the window of 8L (characters; block mean)")
    ax.set_ylabel("gain from the far context (bits per character)")
    ax.set_title(title)
    return lines


def plot_sliding(ax, lengths, sliding, nonoverlapping, train_len, *, title="") -> dict:
    """Bits per character against window length T: sliding windows (solid) and non-overlapping (dashed), per scheme.

    ``sliding`` and ``nonoverlapping`` map a scheme to its values at ``lengths``
    (NaN: cannot run, left out). Returns ``{(scheme, "sliding" or "non-overlapping"): line}``.
    """
    lengths = np.asarray(lengths)
    lines = {}
    for scheme in sliding:
        label, colour, _, marker = SCHEME_STYLE[scheme]
        for kind, values, ls in (("sliding", sliding[scheme], "-"), ("non-overlapping", nonoverlapping[scheme], "--")):
            (lines[scheme, kind],) = ax.plot(
                lengths, np.asarray(values, dtype=float), ls, color=colour, marker=marker, label=f"{label}, {kind}"
            )
    _shade_beyond(ax, train_len, lengths.max() * 1.05)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(n) for n in lengths])
    ax.set_xlim(lengths.min() * 0.9, lengths.max() * 1.05)
    ax.set_xlabel("window length T (characters)")
    ax.set_ylabel("validation loss (bits per character)")
    ax.set_title(title)
    return lines


def _load_context():
    # every sweep seed's context table, from the rows kept block by block (text_context.json holds the first three)
    from ..lab.text_rows import context_table, load_blocks

    return context_table(load_blocks()[0])


#: The schemes whose gain stays within a bit of zero: drawn again on their own scale.
NEAR_ZERO = ("none", "alibi", "t5")


@styled
def make_context_figure(ctx=None):
    """The figure ``figures/15-context-use.png``: the gain from the far context, and sliding windows.

    Left: every scheme's gain per block of L (median over seeds, band: range).
    Middle: the schemes of :data:`NEAR_ZERO` on their own scale. Right: ALiBi
    read in sliding windows and in non-overlapping ones on the same characters
    (median over seeds), on a scale that shows their difference of a few
    hundredths of a bit. Taught in notebooks/15-lab-on-real-text.ipynb.
    """
    ctx = _load_context() if ctx is None else ctx
    L = ctx["defaults"]["train_len"]
    fig, axes = new_figure(1, 3, figsize=(16.0, 4.8))
    summary = {s: summarise(g) for s, g in ctx["gain"].items()}
    plot_context_gain(
        axes[0], L, {s: m for s, (m, _, _) in summary.items()},
        spread={s: (lo, hi) for s, (_, lo, hi) in summary.items()}, title="every scheme",
    )
    near = [s for s in NEAR_ZERO if s in summary]
    plot_context_gain(
        axes[1], L, {s: summary[s][0] for s in near}, spread={s: summary[s][1:] for s in near},
        title="NoPE, ALiBi and T5 on their own scale",
    )
    pick = [s for s in ("alibi",) if s in ctx["sliding"]]
    plot_sliding(
        axes[2], ctx["lengths"], {s: summarise(ctx["sliding"][s])[0] for s in pick},
        {s: summarise(ctx["nonoverlapping"][s])[0] for s in pick}, L, title="ALiBi: sliding against non-overlapping",
    )
    for ax in axes:
        ax.legend(loc="best", fontsize=11)
    n = len(ctx["seeds"])
    fig.suptitle(f"Does the far context help? Last L = {L} characters against the whole window (median of {n} seeds)")
    return fig


#: The figures notebooks/15-lab-on-real-text.ipynb shows, written by ``make figures``.
FIGURES = {
    "15-bits-vs-length": make_bits_figure,
    "15-loss-by-position": make_position_figure,
    "15-rope-finetune": make_finetune_figure,
    "15-context-use": make_context_figure,
}
