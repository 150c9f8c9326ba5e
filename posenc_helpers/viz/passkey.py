"""The passkey grid: retrieval accuracy by needle depth and context length, as long-context papers draw it.

One heat map, depth down and test length across, each cell annotated with
its accuracy; the columns past the training length L are marked. The numbers
come from :func:`posenc_helpers.lab.passkey.passkey_grid`; nothing here
trains or imports JAX. :func:`make_passkey_panels` draws several grids side by
side with one shared colour bar (notebook 17).
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib import patheffects

from .. import _validate as v
from . import styled

__all__ = ["PASSKEY_CMAP", "plot_passkey_grid", "make_passkey_panels"]

#: Sequential and colourblind-safe, dark (0) to light yellow (1); NaN cells ("cannot run") are drawn light grey.
PASSKEY_CMAP = "cividis"


def _axis_values(name, values, size):
    arr = v.real_array(name, values)
    if arr.ndim != 1 or arr.size != size:
        raise ValueError(f"{name} must hold one value per {'column' if name == 'lengths' else 'row'} of grid ({size}), "
                         f"got shape {arr.shape}")
    return arr


@styled
def plot_passkey_grid(ax, grid, lengths, depths, train_len, *, chance=None, label="accuracy", title="", colorbar=True) -> dict:
    """Accuracy at every (depth, length) as an annotated heat map: depth down, test length across.

    ``grid`` has shape (len(depths), len(lengths)), values in [0, 1] or NaN
    (the scheme cannot run there: a grey cell marked "–"), e.g.
    ``passkey_grid(run)["key"]``. Row i is the needle at depth ``depths[i]``
    (fraction of the filler before it, shown in %), column j the test length
    ``lengths[j]`` in tokens, equally spaced. Colours are :data:`PASSKEY_CMAP`
    from 0 to 1; each cell is written out to two decimals, in white on the
    dark half of the map and black on the light half. A vertical line
    separates the columns past ``train_len`` (T > L), labelled "past L".
    ``chance`` (optional) is marked on the colour bar with a dashed line.
    Returns ``{"image", "texts" (rows of Text), "boundary" (the line, or
    None when no column or every column is past L), "colorbar"}``.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_passkey_grid(ax, [[1.0, 0.5], [1.0, 0.25]], [32, 64], [0.0, 1.0], 32, title="RoPE")
    >>> [[t.get_text() for t in row] for row in h["texts"]], float(h["boundary"].get_xdata()[0])   # between 32 and 64
    ([['1.00', '0.50'], ['1.00', '0.25']], 0.5)
    """
    values = np.asarray(grid, dtype=float) if not isinstance(grid, (str, bytes)) else None
    if values is None or values.ndim != 2:
        raise ValueError(f"grid must be a 2-D array (depths × lengths), got {v._show(grid)}")
    finite = values[~np.isnan(values)]
    if np.isinf(values).any() or ((finite < 0) | (finite > 1)).any():
        raise ValueError(f"grid must hold accuracies in [0, 1] (or NaN: cannot run), got values from "
                         f"{np.nanmin(values):g} to {np.nanmax(values):g}")
    lengths = _axis_values("lengths", lengths, values.shape[1])
    depths = _axis_values("depths", depths, values.shape[0])
    if ((depths < 0) | (depths > 1)).any():
        raise ValueError(f"depths must be fractions in [0, 1], got {depths.tolist()}")
    train_len = v.positive_int("train_len", train_len)
    if chance is not None:
        chance = v.real_scalar("chance", chance)
        if not 0.0 <= chance <= 1.0:
            raise ValueError(f"chance must be an accuracy in [0, 1], got {chance!r}")
    cmap = matplotlib.colormaps[PASSKEY_CMAP].with_extremes(bad="0.85")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    texts = []
    for i in range(values.shape[0]):
        row = []
        for j in range(values.shape[1]):
            x = values[i, j]
            shown, colour = ("–", "0.3") if np.isnan(x) else (f"{x:.2f}", "white" if x < 0.5 else "black")
            row.append(ax.text(j, i, shown, ha="center", va="center", color=colour))
        texts.append(row)
    ax.set_xticks(range(len(lengths)))
    ax.set_xticklabels([f"{n:g}" for n in lengths])
    ax.set_yticks(range(len(depths)))
    ax.set_yticklabels([f"{100 * d:g}%" for d in depths])
    ax.set_xlabel(f"test length T (tokens; trained at L = {train_len})")
    ax.set_ylabel("needle depth (% of filler before it)")
    past = np.flatnonzero(lengths > train_len)
    boundary = None
    if 0 < past.size and past[0] > 0:
        # white with a black edge: visible on the dark and on the light end of the map
        boundary = ax.axvline(past[0] - 0.5, color="white", linewidth=2.5,
                              path_effects=[patheffects.withStroke(linewidth=4.5, foreground="black")])
        ax.text(past[0] - 0.5, -0.5, " past L →", ha="left", va="bottom", color="0.2")
    elif past.size:
        ax.text(-0.5, -0.5, "all past L", ha="left", va="bottom", color="0.2")
    ax.set_title(title, pad=22)
    bar = None
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, shrink=0.9, pad=0.02)
        if chance is not None:
            bar.ax.axhline(chance, color="white", linestyle="--", linewidth=2,
                           path_effects=[patheffects.withStroke(linewidth=3.5, foreground="black")])
            label = f"{label} (dashed: chance {chance:.2f})"
        bar.set_label(label)
    return {"image": image, "texts": texts, "boundary": boundary, "colorbar": bar}


@styled
def make_passkey_panels(grids, lengths, depths, train_len, *, chance=None, label="accuracy", ncols=4, title=""):
    """Several passkey grids (:func:`plot_passkey_grid`) in one figure, ``ncols`` per row, one colour bar.

    ``grids`` maps a panel's title to its (depths × lengths) grid. Every
    panel labels both axes with their units (shortened); the colour bar (with
    ``chance`` dashed) is shared and the figure's title says L. Returns
    ``(fig, {title: handles})``.

    >>> fig, h = make_passkey_panels({"a": [[1.0, 0.5]], "b": [[1.0, 0.2]]}, [32, 64], [0.5], 32, ncols=2)
    >>> [[t.get_text() for t in row] for row in h["b"]["texts"]], len(fig.axes)      # two panels and a colour bar
    ([['1.00', '0.20']], 3)
    """
    from ..style import new_figure

    if not isinstance(grids, dict) or not grids:
        raise ValueError(f"grids must be a non-empty dict of panel title → grid, got {v._show(grids)}")
    ncols = v.positive_int("ncols", ncols)
    n = len(grids)
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = new_figure(nrows, ncols, figsize=(3.1 * ncols + 1.2, 2.9 * nrows + 0.6))
    axes = np.asarray(axes, dtype=object).reshape(nrows, ncols)
    handles = {}
    for k, (name, grid) in enumerate(grids.items()):
        ax = axes[k // ncols][k % ncols]
        handles[name] = plot_passkey_grid(ax, grid, lengths, depths, train_len, title=str(name), colorbar=False)
        # every axis keeps a label and its unit, shortened to fit a panel
        ax.set_xlabel("test length T (tokens)")
        ax.set_ylabel("needle depth (%)")
    for k in range(n, nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    image = next(iter(handles.values()))["image"]
    bar = fig.colorbar(image, ax=[a for row in axes for a in row if a.get_visible()], shrink=0.9, pad=0.02)
    if chance is not None:
        chance = v.real_scalar("chance", chance)
        bar.ax.axhline(chance, color="white", linestyle="--", linewidth=2,
                       path_effects=[patheffects.withStroke(linewidth=3.5, foreground="black")])
        label = f"{label} (dashed: chance {chance:.2f})"
    bar.set_label(label)
    fig.suptitle(f"{title}{'; ' if title else ''}trained at L = {train_len}")
    return fig, handles
