"""The standard figure of a learner's own experiment (:mod:`posenc_helpers.lab.experiment`).

Per scheme, the median over seeds of the accuracy against the test length,
the band its range over the seeds, past L shaded, in the lab's style
(:mod:`.lab`: a scheme's colour, line and marker; the shaded region and its
label). It takes the experiment's table (rows of dicts); nothing here trains,
and nothing here imports JAX. Taught in the notebook "Your own experiment".
"""

from __future__ import annotations

import numpy as np

from . import OKABE_ITO, new_figure, styled
from .lab import SCHEME_STYLE, _shade_beyond

__all__ = ["median_range", "plot_experiment", "make_experiment_figure"]

# styles for lines that are not a plain scheme (a rescaling, a fine-tune): colour, line style, marker
_OTHER = tuple((OKABE_ITO[i], ls, m) for i, ls, m in ((5, "--", "d"), (2, "-.", "h"), (3, ":", "p"), (6, "--", "X"),
                                                       (4, "-.", "<"), (1, ":", ">")))


def median_range(rows) -> dict:
    """``{scheme: (lengths, median, lowest, highest)}`` of the accuracy over the seeds, at each length.

    >>> rows = [{"scheme": "rope", "seed": s, "length": 64, "accuracy": a} for s, a in enumerate([0.2, 0.9, 0.5])]
    >>> median_range(rows)["rope"]                      # median of 0.2, 0.9, 0.5 is 0.5
    (array([64]), array([0.5]), array([0.2]), array([0.9]))
    """
    by: dict = {}
    for r in rows:
        by.setdefault(r["scheme"], {}).setdefault(int(r["length"]), []).append(float(r["accuracy"]))
    if not by:
        raise ValueError("rows must hold at least one row, got none")
    out = {}
    for scheme, at in by.items():
        lengths = np.array(sorted(at))
        values = [np.asarray(at[T]) for T in lengths]
        out[scheme] = (lengths, *(np.array([f(a) for a in values]) for f in (np.median, np.min, np.max)))
    return out


def plot_experiment(ax, rows, train_len, *, chance=None, title="") -> dict:
    """Median accuracy over seeds against test length per scheme, its range over seeds as a band, past L shaded.

    ``rows``: the experiment's table (each row has ``scheme``, ``seed``,
    ``length``, ``accuracy``). At L the accuracy is over all positions, past
    L over the positions past L. A scheme that cannot run at a length (NaN)
    leaves a gap. Returns the median lines by scheme.

    >>> fig, ax = new_figure()
    >>> rows = [{"scheme": "alibi", "seed": s, "length": T, "accuracy": a}
    ...         for s in range(3) for T, a in ((32, 1.0), (64, 0.9 + 0.01 * s))]
    >>> plot_experiment(ax, rows, 32)["alibi"].get_ydata().round(2).tolist()
    [1.0, 0.91]
    """
    train_len = int(train_len)
    lines = {}
    summary = median_range(rows)
    taken = {SCHEME_STYLE[s][1] for s in summary if s in SCHEME_STYLE}
    # a line that is no plain scheme takes a colour no plain scheme of this figure has, while there are some
    others = iter([o for o in _OTHER if o[0] not in taken] + list(_OTHER) * 4)
    right = train_len
    for scheme, (lengths, med, low, high) in summary.items():
        if scheme in SCHEME_STYLE:
            label, colour, ls, marker = SCHEME_STYLE[scheme]
        else:
            colour, ls, marker = next(others)
            label = scheme
        (lines[scheme],) = ax.plot(lengths, med, linestyle=ls, color=colour, marker=marker, label=label)
        ax.fill_between(lengths, low, high, color=colour, alpha=0.15, linewidth=0)
        right = max(right, int(lengths.max()))
    _shade_beyond(ax, train_len, right)
    if chance is not None:
        ax.axhline(chance, color="0.4", linewidth=1, linestyle=(0, (1, 3)))
        ax.text(right, chance + 0.02, "chance ", ha="right", va="bottom", color="0.3")
    ticks = sorted({int(r["length"]) for r in rows})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(n) for n in ticks])
    ax.set_xlim(min(ticks) * 0.95, right * 1.05)
    ax.set_ylim(0, 1.12)
    ax.set_xlabel("test length T (tokens)")
    ax.set_ylabel("accuracy past L (at L: all)")
    ax.set_title(title)
    return lines


@styled
def make_experiment_figure(rows, train_len, *, chance=None, title=""):
    """The experiment's figure (:func:`plot_experiment`) on a new figure, with a legend; returns ``(fig, lines)``."""
    fig, ax = new_figure(figsize=(8.0, 4.6))
    lines = plot_experiment(ax, rows, train_len, chance=chance, title=title)
    n_seeds = len({r["seed"] for r in rows})
    ax.legend(loc="lower left", fontsize=11, ncols=2, title=f"median of {n_seeds} seeds; band: range")
    return fig, lines
