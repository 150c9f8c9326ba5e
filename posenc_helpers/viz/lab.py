"""The extrapolation lab's figures and its slider demo.

Taught in notebooks/12-extrapolation-lab.ipynb and 13-trained-heads.ipynb.
Every function takes numbers (accuracies, attention weights, tables) and
draws; nothing here trains. The slider demo reads the shipped sweep,
``posenc_helpers/lab/results.json`` (regenerate with ``make lab-results``).
"""

from __future__ import annotations

import html

import numpy as np

from . import OKABE_ITO, new_figure, styled

__all__ = [
    "SCHEME_STYLE",
    "METHOD_STYLE",
    "plot_accuracy_vs_length",
    "plot_rope_scaling",
    "plot_attention_maps",
    "plot_attention_vs_distance",
    "plot_similarity",
    "plot_pair_usage",
    "plot_accuracy_at_train_len",
    "make_accuracy_figure",
    "make_scaling_figure",
    "make_finetune_figure",
    "YARN_LLAMA_STYLE",
    "FINETUNE_STYLE",
    "make_sweep_figure",
    "update_sweep",
    "sweep_demo",
    "FIGURES",
    "DEMOS",
    "LAYER_STYLE",
    "plot_entropy_vs_length",
    "FIRST_STYLE",
    "plot_first_weight",
    "OFFSET_STYLE",
    "plot_similarity_by_offset",
]

#: Label, colour, line style and marker per scheme.
SCHEME_STYLE = {
    "none": ("NoPE", OKABE_ITO[7], ":", "x"),
    "learned": ("learned table", OKABE_ITO[4], "-", "s"),
    "sinusoidal": ("sinusoidal", OKABE_ITO[3], "-.", "v"),
    "rope": ("RoPE", OKABE_ITO[0], "-", "o"),
    "alibi": ("ALiBi", OKABE_ITO[1], "--", "^"),
    "t5": ("T5 bias", OKABE_ITO[5], ":", "P"),
    "rope_nope": ("RoPE + NoPE", OKABE_ITO[2], "--", "D"),
    "irope": ("iRoPE", OKABE_ITO[7], "-", "*"),  # black solid (NoPE: black dotted); the yellow is faint on grey
    # the schemes built for length generalisation: a randomized scheme takes its plain scheme's colour, with a
    # long-dashed line and its own marker; FIRE the green of "RoPE + NoPE" (dashed), solid
    "rand_sinusoidal": ("sinusoidal, randomized", OKABE_ITO[3], (0, (6, 2)), "1"),
    "rand_learned": ("learned, randomized", OKABE_ITO[4], (0, (6, 2)), "2"),
    "rand_rope": ("RoPE, randomized", OKABE_ITO[0], (0, (6, 2)), "3"),
    "rand_alibi": ("ALiBi, randomized", OKABE_ITO[1], (0, (6, 2)), "4"),
    "fire": ("FIRE", OKABE_ITO[2], "-", "h"),
}

#: Label, colour and line style per test-time RoPE scaling method (no fine-tuning).
METHOD_STYLE = {
    "pi": ("RoPE + PI, no fine-tuning", OKABE_ITO[5], "--"),
    "ntk": ("RoPE + NTK, no fine-tuning", OKABE_ITO[2], "-."),
    "yarn": ("RoPE + YaRN, no fine-tuning", OKABE_ITO[3], ":"),
}

#: YaRN with the thresholds its paper set for LLaMA (β = 32, α = 1), shown next to the lab's (β = 4).
YARN_LLAMA_STYLE = ("RoPE + YaRN, LLaMA's thresholds", OKABE_ITO[6], (0, (3, 1, 1, 1)))

#: Label, colour and line style per fine-tune (RoPE rescaled by the method, then trained briefly at 4L).
FINETUNE_STYLE = {
    "none": ("plain RoPE, fine-tuned", OKABE_ITO[0], "-"),
    "pi": ("PI, fine-tuned", OKABE_ITO[5], "--"),
    "ntk": ("NTK, fine-tuned", OKABE_ITO[2], "-."),
    "yarn": ("YaRN, fine-tuned", OKABE_ITO[3], ":"),
}


def _shade_beyond(ax, train_len, right):
    ax.axvspan(train_len, right, color="0.9", zorder=0)
    ax.axvline(train_len, color="0.5", linewidth=1)
    ax.text(train_len, 1.07, " past L", ha="left", va="center", color="0.3")


def plot_accuracy_vs_length(ax, lengths, acc, train_len, *, chance=None, spread=None, title="") -> dict:
    """Accuracy against test length, one line per scheme; the region past L shaded.

    ``acc`` maps a scheme to its accuracies at ``lengths`` (NaN: cannot run,
    left out of the line). ``spread`` may map a scheme to ``(low, high)``
    arrays, drawn as a band (the range over seeds). Returns the lines by scheme.

    >>> fig, ax = new_figure()
    >>> h = plot_accuracy_vs_length(ax, [32, 64], {"rope": [1.0, 0.9]}, 32)
    >>> h["rope"].get_ydata().tolist()
    [1.0, 0.9]
    """
    lengths = np.asarray(lengths)
    lines = {}
    for scheme, values in acc.items():
        label, colour, ls, marker = SCHEME_STYLE[scheme]
        values = np.asarray(values, dtype=float)
        (lines[scheme],) = ax.plot(lengths, values, linestyle=ls, color=colour, marker=marker, label=label)
        if spread is not None and scheme in spread:
            low, high = spread[scheme]
            ax.fill_between(lengths, low, high, color=colour, alpha=0.15, linewidth=0)
    _shade_beyond(ax, train_len, lengths.max())
    if chance is not None:
        ax.axhline(chance, color="0.4", linewidth=1, linestyle=(0, (1, 3)))
        ax.text(lengths.max(), chance + 0.02, "chance ", ha="right", va="bottom", color="0.3")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths[np.isin(lengths, [32, 64, 128, 256])] if np.isin(lengths, [32, 64, 128, 256]).any() else lengths)
    ax.set_xticklabels([str(n) for n in ax.get_xticks()])
    ax.set_xlim(lengths.min() * 0.95, lengths.max() * 1.05)
    ax.set_ylim(0, 1.12)
    ax.set_xlabel("test length T (tokens)")
    ax.set_ylabel("accuracy")
    ax.set_title(title)
    return lines


def plot_rope_scaling(ax, lengths, plain, scaled, train_len, *, chance=None, spread=None, title="") -> dict:
    """RoPE's accuracy with its trained frequencies and with each test-time scaling (no fine-tuning).

    ``scaled`` maps a method (``"pi"``, ``"ntk"``, ``"yarn"``, or ``"yarn_llama"``
    for YaRN with LLaMA's thresholds) to accuracies at ``lengths``. ``spread``
    may map ``"rope"`` or a method to ``(low, high)`` arrays, drawn as a band
    (the range over seeds). Returns the lines by name (``"rope"`` and the methods).
    """
    spread = spread or {}
    lines = plot_accuracy_vs_length(
        ax, lengths, {"rope": plain}, train_len, chance=chance, title=title,
        spread={"rope": spread["rope"]} if "rope" in spread else None,
    )
    for method, values in scaled.items():
        label, colour, ls = YARN_LLAMA_STYLE if method == "yarn_llama" else METHOD_STYLE[method]
        (lines[method],) = ax.plot(lengths, values, linestyle=ls, color=colour, marker=".", label=label)
        if method in spread:
            ax.fill_between(lengths, *spread[method], color=colour, alpha=0.12, linewidth=0)
    return lines


def plot_attention_maps(axes, maps, titles) -> list:
    """One attention map per Axes: weights (query i down, key j across), viridis from 0 to 1."""
    images = []
    for ax, weights, title in zip(np.ravel(axes), maps, titles, strict=True):
        images.append(ax.imshow(weights, cmap="viridis", vmin=0, vmax=1, interpolation="nearest"))
        ax.set_title(title)
        ax.set_xlabel("key position j")
        ax.set_ylabel("query position i")
    return images


def plot_attention_vs_distance(ax, curves, train_len, *, title="") -> dict:
    """Average attention weight against distance i − j, one line per scheme (log y axis)."""
    lines = {}
    for scheme, values in curves.items():
        label, colour, ls, marker = SCHEME_STYLE[scheme]
        distance = np.arange(len(values))
        (lines[scheme],) = ax.plot(distance, np.maximum(values, 1e-6), linestyle=ls, color=colour, label=label)
    ax.axvline(train_len, color="0.5", linewidth=1)
    ax.set_yscale("log")
    ax.set_ylim(1e-6, 2)
    ax.set_xlabel("distance i − j (tokens)")
    ax.set_ylabel("mean attention weight")
    ax.set_title(title)
    ax.legend(loc="upper right", ncols=2)
    return lines


def plot_similarity(ax, sim, *, title=""):
    """A (L, L) cosine-similarity matrix on RdBu_r from −1 to 1, with a colour bar."""
    image = ax.imshow(sim, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    ax.set_xlabel("position n")
    ax.set_ylabel("position m")
    ax.set_title(title)
    bar = ax.figure.colorbar(image, ax=ax, shrink=0.85)
    bar.set_label("cosine similarity")
    return image


def plot_pair_usage(ax, usage, wavelengths, train_len, *, title="") -> list:
    """Share of each RoPE pair in the attention logits, one bar group per pair, against its wavelength."""
    usage = np.asarray(usage)
    k = np.arange(usage.shape[-1])
    bars = ax.bar(k, usage, color=OKABE_ITO[0])
    ax.set_xticks(k)
    ax.set_xticklabels([f"{k_}\n{w:.0f}" for k_, w in zip(k, wavelengths, strict=True)])
    ax.set_xlabel(f"pair k, and its wavelength 2π/ω_k (tokens; L = {train_len})")
    ax.set_ylabel("share of |q·k| (averaged)")
    ax.set_title(title)
    return list(bars)


def plot_accuracy_at_train_len(ax, acc, *, threshold=0.95, chance=None, title="") -> dict:
    """Accuracy at the training length, one column per scheme, one marker per seed (an in-distribution check).

    ``acc`` maps a scheme to its accuracies at L, one per seed. A dashed line
    marks ``threshold`` ("learned"); a dotted one ``chance``. Returns the marker
    collection per scheme.

    >>> fig, ax = new_figure()
    >>> h = plot_accuracy_at_train_len(ax, {"rope": [1.0, 0.99], "alibi": [0.85, 0.8]})
    >>> h["alibi"].get_offsets().tolist()
    [[1.0, 0.85], [1.0, 0.8]]
    """
    marks = {}
    for x, (scheme, values) in enumerate(acc.items()):
        label, colour, _, marker = SCHEME_STYLE[scheme]
        values = np.asarray(values, dtype=float)
        marks[scheme] = ax.scatter(np.full(values.shape, x, dtype=float), values, s=70, color=colour, marker=marker,
                                   zorder=3, label=label)
    ax.axhline(threshold, color="0.3", linewidth=1, linestyle="--")
    ax.text(len(acc) - 0.5, threshold - 0.02, f"{threshold:g} ", ha="right", va="top", color="0.3")
    if chance is not None:
        ax.axhline(chance, color="0.4", linewidth=1, linestyle=(0, (1, 3)))
        ax.text(len(acc) - 0.5, chance + 0.02, "chance ", ha="right", va="bottom", color="0.3")
    ax.set_xticks(range(len(acc)))
    ax.set_xticklabels([SCHEME_STYLE[s][0] for s in acc], rotation=20)
    ax.set_xlim(-0.5, len(acc) - 0.5)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy at L (all positions)")
    ax.set_title(title)
    return marks


# --- the shipped sweep: the static figures and the slider demo --------------------------------------


def _summary(res, task, key, *, factor_index=None, stat="mean"):
    """Mean (or median, ``stat="median"``) and range over seeds of one entry of the sweep, per scheme."""
    seeds = sorted({s for s, _, _ in res["table"]})
    out = {}
    for scheme in SCHEME_STYLE:
        rows = [res["table"][(s, task, scheme)] for s in seeds if (s, task, scheme) in res["table"]]
        if not rows or key not in rows[0]:
            continue
        vals = np.array([r[key] if factor_index is None else r[key][factor_index] for r in rows])
        out[scheme] = (np.median(vals, 0) if stat == "median" else vals.mean(0), vals.min(0), vals.max(0))
    return out


def _load():
    from ..lab import results

    return results.load()


@styled
def make_accuracy_figure(res=None):
    """The figure ``figures/12-accuracy-vs-length.png``: the shipped sweep, median and range over its seeds.

    Top row: the accuracy on the positions past L only (the claims' metric);
    bottom row: over all positions, where the first L positions set a floor.
    Taught in notebooks/12-extrapolation-lab.ipynb.
    """
    from ..lab.tasks import TASK_TITLES, TASKS, chance

    res = _load() if res is None else res
    n_seeds = len({s for s, _, _ in res["table"]})
    fig, axes = new_figure(2, len(TASKS), figsize=(12.0, 8.4), sharey=True)
    for row, (key, where) in enumerate([("beyond", "positions past L"), ("accuracy", "all positions")]):
        for ax, task in zip(axes[row], TASKS, strict=True):
            summary = _summary(res, task, key, stat="median")
            plot_accuracy_vs_length(
                ax, res["lengths"], {s: m for s, (m, _, _) in summary.items()}, 32, chance=chance(task, 16),
                spread={s: (lo, hi) for s, (_, lo, hi) in summary.items()}, title=f"{TASK_TITLES[task]}: {where}",
            )
            ax.set_ylabel(f"accuracy, {where}")
        axes[row][1].set_ylabel("")
    from ..lab.model import SCHEME_TITLES
    from ..lab.results import ROW_OPTIONS

    if any(name == "irope_w16" for _, _, name in res["table"]):  # a sweep whose iRoPE trains with chunks of L/4
        chunk = ROW_OPTIONS["irope"]["rope_window"]
        for ax in np.ravel(axes):
            for line in ax.get_lines():
                if line.get_label() == SCHEME_TITLES["irope"]:
                    line.set_label(f"{SCHEME_TITLES['irope']}, chunks of {chunk}")
    axes[1][0].legend(loc="lower left")
    fig.suptitle(f"Trained on 32 tokens, tested longer (median of {n_seeds} seeds, band: range)")
    return fig


@styled
def make_scaling_figure(res=None):
    """The figure ``figures/12-rope-scaling.png``: RoPE at test time with PI, NTK, YaRN at s = T/L, no fine-tuning.

    Accuracy on the positions past L, median over the sweep's seeds with the
    range as a band, with YaRN twice: with the lab's thresholds (β = 4, α = 1) and with LLaMA's (β = 32).
    Taught in notebooks/12-extrapolation-lab.ipynb.
    """
    from ..lab.tasks import TASK_TITLES, TASKS, chance

    res = _load() if res is None else res
    n_seeds = len({s for s, _, _ in res["table"]})
    fig, axes = new_figure(1, len(TASKS), figsize=(12.0, 4.6), sharey=True)
    for ax, task in zip(axes, TASKS, strict=True):
        rows = [res["table"][key] for key in sorted(res["table"]) if key[1:] == (task, "rope")]
        methods = list(METHOD_STYLE) + ["yarn_llama"]
        summary = {"rope": _median_range([r["beyond"] for r in rows])}
        summary.update({m: _median_range([r["scaled"][m] for r in rows]) for m in methods})
        plot_rope_scaling(
            ax, res["lengths"], summary["rope"][0], {m: summary[m][0] for m in methods}, 32,
            chance=chance(task, 16), spread={k: (lo, hi) for k, (_, lo, hi) in summary.items()},
            title=TASK_TITLES[task],
        )
        ax.set_ylabel("accuracy, positions past L")
    axes[0].legend(loc="lower left", fontsize=11)
    axes[1].set_ylabel("")
    fig.suptitle(f"RoPE at test time with s = T / L, no fine-tuning (median of {n_seeds} seeds, band: range)")
    return fig


@styled
def make_finetune_figure(res=None, extra=None):
    """The figure ``figures/12-finetune.png``: RoPE past L, zero-shot and after a brief fine-tune at 4L.

    One panel per task (the two headline tasks and recall): plain RoPE with no
    fine-tuning, then each method after 100 fine-tuning steps at 4L, median
    over the sweep's seeds with the range as a band. The top row rescales with s set
    for the fine-tune length (s = 4); when the rows hold them, a second row
    shows the same fine-tunes with s set for the target 8L (s = 8), plain RoPE
    fine-tuned in both as the baseline. Taught in notebooks/12-extrapolation-lab.ipynb.
    """
    from ..lab.tasks import TASK_TITLES, TASKS, chance

    if res is None or extra is None:
        from ..lab import results

        res = results.load() if res is None else res
        extra = results.load_extra() if extra is None else extra
    panels = [(task, res, 16) for task in TASKS] + [("recall", extra, 32)]
    first_rows = [source["table"][key] for task, source, _ in panels for key in sorted(source["table"])
                  if key[1:] == (task, "rope")]
    settings = [("", "s = 4")]
    if all("pi_s8" in r["finetune"] for r in first_rows):
        settings.append(("_s8", "s = 8"))
    fig, axes = new_figure(len(settings), len(panels), figsize=(16.0, 4.8 * len(settings)), sharey=True)
    axes = np.atleast_2d(axes)  # (rows, panels)
    for row, (suffix, name) in enumerate(settings):
        for ax, (task, source, vocab) in zip(axes[row], panels, strict=True):
            rows = [source["table"][key] for key in sorted(source["table"]) if key[1:] == (task, "rope")]
            lengths = source["lengths"]
            plot_accuracy_vs_length(
                ax, lengths, {"rope": _median_range([r["beyond"] for r in rows])[0]}, 32,
                chance=chance(task, vocab), title=f"{TASK_TITLES[task]} ({len(rows)} seeds), {name}",
            )
            ax.get_lines()[0].set_label("RoPE, no fine-tuning")
            for method, (label, colour, ls) in FINETUNE_STYLE.items():
                key = method if method == "none" else method + suffix
                med, lo, hi = _median_range([r["finetune"][key]["100"]["beyond"] for r in rows])
                ax.plot(lengths, med, ls, color=colour, marker=".", label=label)
                ax.fill_between(lengths, lo, hi, color=colour, alpha=0.12, linewidth=0)
            ax.axvline(4 * 32, color="0.3", linewidth=1, linestyle=(0, (4, 2)))
            ax.set_ylabel("accuracy, positions past L" if ax is axes[row][0] else "")
    axes[0][0].legend(loc="lower left", fontsize=11)
    n_seeds = len({s for s, _, _ in res["table"]})
    setting = ", s set for 4L and for 8L" if len(settings) > 1 else ""
    fig.suptitle(f"RoPE fine-tuned for 100 steps at 4L (dashed line){setting}: median of {n_seeds} seeds "
                 f"(recall: {len({s for s, _, _ in extra['table']})}), band: range")
    return fig


def _grid(res, task, method, f, key):
    # per seed, the factor grid of the RoPE rows at factor index f: key "grid_beyond" (past L) or "all"
    seeds = sorted({s for s, _, _ in res["table"]})
    rows = [res["table"][(s, task, "rope")] for s in seeds if (s, task, "rope") in res["table"]]
    return np.array([r["grid_beyond"][method][f] if key == "grid_beyond" else r[method][f] for r in rows])


def _median_range(values) -> tuple:
    values = np.asarray(values, dtype=float)
    return np.median(values, 0), values.min(0), values.max(0)


@styled
def make_sweep_figure(res=None, length=256, factor=8):
    """The demo figure: per task, accuracy past L against T for every scheme and RoPE scaled by s; cursor at T.

    Every line is the median over the sweep's seeds of the accuracy on the
    positions past L (the claims' metric), and the band around each scheme's
    line its range over the seeds. Returns ``(fig, handles)``; the scaled
    lines and the cursor are animated. Taught in notebooks/13-trained-heads.ipynb.
    """
    from ..lab.tasks import TASK_TITLES, TASKS, chance

    res = _load() if res is None else res
    fig, axes = new_figure(1, len(TASKS), figsize=(12.0, 4.6), sharey=True)
    handles = {"res": res, "axes": axes, "scaled": {}, "markers": {}, "cursor": []}
    for ax, task in zip(axes, TASKS, strict=True):
        summary = _summary(res, task, "beyond", stat="median")
        plot_accuracy_vs_length(
            ax, res["lengths"], {s: m for s, (m, _, _) in summary.items()}, 32, chance=chance(task, 16),
            spread={s: (lo, hi) for s, (_, lo, hi) in summary.items()}, title=TASK_TITLES[task],
        )
        ax.set_ylabel("accuracy, positions past L")
        for method, (label, colour, ls) in METHOD_STYLE.items():
            (line,) = ax.plot(res["lengths"], np.zeros(len(res["lengths"])), ls, color=colour, marker=".", label=label)
            line.set_animated(True)
            handles["scaled"][(task, method)] = line
        cursor = ax.axvline(length, color="k", linewidth=1.5)
        cursor.set_animated(True)
        handles["cursor"].append(cursor)
    axes[0].legend(loc="lower left", fontsize=11, ncols=2)
    axes[1].set_ylabel("")
    n_seeds = len({s for s, _, _ in res["table"]})
    fig.suptitle(f"The lab's sweep past L: median of {n_seeds} seeds, band: range (no training on a slider move)")
    update_sweep(handles, length, factor)
    return fig, handles


def update_sweep(handles, length, factor) -> str:
    """Move the cursor to test length T = ``length`` and the scaled RoPE lines to s = ``factor``; return the readout.

    The readout gives, per task and scheme, the median and the range over the
    seeds: of the accuracy past L when T > L, and at T = L of the accuracy
    over all positions (in distribution: nothing is past L there).
    Taught in notebooks/13-trained-heads.ipynb.
    """
    from ..lab.tasks import TASK_TITLES, TASKS

    res = handles["res"]
    lengths = list(res["lengths"])
    if length not in lengths:
        raise ValueError(f"length must be one of the precomputed test lengths {lengths}, got {length!r}")
    factors = list(res["factors"])
    if factor not in factors:
        raise ValueError(f"factor must be one of the precomputed factors {factors}, got {factor!r}")
    j, f = lengths.index(length), factors.index(factor)
    past = length > 32
    for cursor in handles["cursor"]:
        cursor.set_xdata([length, length])

    def cell(med, lo, hi):
        return "—" if np.isnan(med) else f"{med:.2f} ({lo:.2f}–{hi:.2f})"

    columns = []  # per task: every scheme's cell, then every rescaling's
    for task in TASKS:
        plain = _summary(res, task, "beyond" if past else "accuracy", stat="median")
        cells = [cell(m[j], lo[j], hi[j]) for m, lo, hi in plain.values()]
        for method in METHOD_STYLE:
            handles["scaled"][(task, method)].set_ydata(np.median(_grid(res, task, method, f, "grid_beyond"), 0))
            med, lo, hi = _median_range(_grid(res, task, method, f, "grid_beyond" if past else "all")[:, j])
            cells.append(cell(med, lo, hi))
        columns.append(cells)
    shown = _summary(res, TASKS[0], "accuracy")  # the schemes the results hold, in SCHEME_STYLE's order
    names = [SCHEME_STYLE[s][0] for s in shown] + [f"RoPE+{m.upper() if m != 'yarn' else 'YaRN'}" for m in METHOD_STYLE]
    n_seeds = len({s for s, _, _ in res["table"]})
    what = "accuracy on the positions past L" if past else "at the training length: accuracy over all positions"
    # a row per scheme or rescaling and a column per task: narrow enough for a 1,024-pixel projector (a column per
    # scheme was 1,798 px wide)
    if any(len(c) != len(names) for c in columns):
        raise ValueError(f"every task needs a number for each of {names}, got {[len(c) for c in columns]} numbers")
    rows = "".join(f"<tr><td>{html.escape(name)}</td>" + "".join(f"<td>{c[i]}</td>" for c in columns) + "</tr>"
                   for i, name in enumerate(names))
    return (
        f"<b>T = {length} tokens ({length / 32:g} × L), s = {factor}</b>: {what}, median (range) "
        f"of {n_seeds} seeds (— : cannot run; scaled RoPE: no fine-tuning)"
        "<table><tr><th>scheme or rescaling</th>" + "".join(f"<th>{TASK_TITLES[t]}</th>" for t in TASKS) + "</tr>"
        + rows + "</table>"
    )


def sweep_demo(length: int = 256, factor: int = 8):
    """Slider demo over the shipped sweep: test length T and RoPE scaling factor s. It never trains.

    Taught in notebooks/13-trained-heads.ipynb.

    >>> demo = sweep_demo()
    >>> demo.set_values(length=64, factor=2)
    >>> float(demo.handles["cursor"][0].get_xdata()[0])
    64.0
    """
    from ..demo import SliderDemo, int_slider

    controls = [
        int_slider("length", "T (test length, tokens)", 32, 256, length, step=32),
        int_slider("factor", "s (RoPE scaling factor)", 1, 8, factor),
    ]
    return SliderDemo(make_sweep_figure, update_sweep, controls, title="Train short, test long: the sweep")


FIGURES = {
    "12-accuracy-vs-length": make_accuracy_figure,
    "12-rope-scaling": make_scaling_figure,
    "12-finetune": make_finetune_figure,
}
DEMOS = {"sweep": sweep_demo}


# --- notebook 13: what attention does past L ---------------------------------------------

#: Line style per layer of the lab's two-layer model in notebook 13's entropy figure.
LAYER_STYLE = ((OKABE_ITO[0], "-", "o"), (OKABE_ITO[1], "--", "s"))


def plot_entropy_vs_length(ax, lengths, entropy, uniform, *, title="") -> dict:
    """Entropy of each head's attention against test length, one line per (layer, head), and the uniform one.

    ``entropy`` has shape (len(lengths), layers, heads) in nats; ``uniform``
    (len(lengths),) is the entropy of attention spread evenly over every
    visible key (averaged over the same queries). Layers are told apart by
    colour, line style and marker. Returns ``{(layer, head): line,
    "uniform": line}``. Taught in notebooks/13-trained-heads.ipynb.
    """
    lengths = np.asarray(lengths)
    entropy = np.asarray(entropy, dtype=float)
    if entropy.ndim != 3 or entropy.shape[0] != len(lengths):
        raise ValueError(f"entropy must have shape (len(lengths), layers, heads), got {entropy.shape}")
    lines = {}
    for layer in range(entropy.shape[1]):
        colour, ls, marker = LAYER_STYLE[layer % len(LAYER_STYLE)]
        for head in range(entropy.shape[2]):
            label = f"layer {layer}, each head" if head == 0 else None
            (lines[(layer, head)],) = ax.plot(
                lengths, entropy[:, layer, head], ls, color=colour, marker=marker, markersize=4, label=label
            )
    (lines["uniform"],) = ax.plot(lengths, uniform, ":", color="k", linewidth=2, label="uniform over visible keys")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(int(n)) for n in lengths])
    ax.set_xlabel("test length T (tokens)")
    ax.set_ylabel("attention entropy (nats)")
    ax.set_title(title)
    return lines


#: Line style per test-time variant in notebook 13's weight-on-token-0 figure.
FIRST_STYLE = {
    "none": ("RoPE, no rescaling", OKABE_ITO[0], "-", "o"),
    "logn": ("RoPE + log-n scaling", OKABE_ITO[1], "--", "s"),
    "pi": ("RoPE + PI (s = T/L)", OKABE_ITO[2], "-.", "^"),
}


def plot_first_weight(ax, lengths, weights, train_len, *, spread=None, title="") -> dict:
    """Attention weight on token 0 against test length, one line per variant of :data:`FIRST_STYLE`.

    ``weights[variant]`` holds one value per length (NaN: not measured);
    ``spread[variant] = (low, high)`` shades a range (e.g. over seeds). The
    region past ``train_len`` is shaded grey. Returns ``{variant: line}``.
    Taught in notebooks/13-trained-heads.ipynb.
    """
    lengths = np.asarray(lengths)
    lines = {}
    for variant, values in weights.items():
        label, colour, ls, marker = FIRST_STYLE[variant]
        (lines[variant],) = ax.plot(lengths, values, ls, color=colour, marker=marker, label=label)
        if spread is not None and variant in spread:
            low, high = spread[variant]
            ax.fill_between(lengths, low, high, color=colour, alpha=0.2, linewidth=0)
    _shade_beyond(ax, train_len, float(lengths.max()))
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(int(n)) for n in lengths])
    ax.set_ylim(0, 1.12)
    ax.set_xlabel("test length T (tokens)")
    ax.set_ylabel("attention weight on token 0")
    ax.set_title(title)
    ax.legend(loc="lower left")
    return lines


#: Label, colour and line style of the curves of :func:`plot_similarity_by_offset`.
OFFSET_STYLE = {
    "trained": ("after training", OKABE_ITO[0], "-"),
    "start": ("before training", OKABE_ITO[7], ":"),
}


def plot_similarity_by_offset(ax, curves, *, title="") -> dict:
    """Mean cosine similarity of table rows m and n against the offset |m − n|, one line per table.

    ``curves[name]`` holds one value per offset 0, 1, … (``name`` a key of
    :data:`OFFSET_STYLE`). A grey line marks cosine 0. Returns ``{name: line}``.
    Taught in notebooks/13-trained-heads.ipynb.
    """
    lines = {}
    for name, values in curves.items():
        label, colour, ls = OFFSET_STYLE[name]
        (lines[name],) = ax.plot(np.arange(len(values)), values, ls, color=colour, marker=".", label=label)
    ax.axhline(0, color="0.5", linewidth=1)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("offset |m − n| (positions)")
    ax.set_ylabel("mean cosine similarity")
    ax.set_title(title)
    ax.legend(loc="upper right")
    return lines
