"""The projector style every figure and slider demo uses: fonts, colours, colormaps.

A leaf module (it imports only matplotlib), so both the plotting functions in
:mod:`posenc_helpers.viz` and the slider wiring in :mod:`posenc_helpers.demo`
can import it without importing each other. Nothing here changes global
matplotlib state: figures are built with :func:`new_figure` inside
:func:`style`, a local ``rc_context``.
"""

from __future__ import annotations

import contextlib
import functools

from cycler import cycler
from matplotlib.figure import Figure

#: Smallest font size, in points, of anything a projected figure shows.
FONT_SIZE = 12

#: Colorblind-safe colours (Okabe & Ito, 2008), in a fixed order.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

#: Diverging, colorblind-safe colormap for values in [-1, 1].
DIVERGING_CMAP = "RdBu_r"

#: Sequential, perceptually uniform, colorblind-safe colormap.
SEQUENTIAL_CMAP = "viridis"

RC = {
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE + 1,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE - 1,
    "ytick.labelsize": FONT_SIZE - 1,
    "legend.fontsize": FONT_SIZE - 1,
    "figure.titlesize": FONT_SIZE + 2,
    "axes.prop_cycle": cycler(color=OKABE_ITO),
    "image.cmap": SEQUENTIAL_CMAP,
    "svg.hashsalt": "posenc",
    "lines.linewidth": 2.0,
}


@contextlib.contextmanager
def style():
    """A local matplotlib style: projector-sized fonts and colorblind-safe colours."""
    import matplotlib

    with matplotlib.rc_context(RC):
        yield


def styled(fn):
    """Decorator: run a drawing function inside :func:`style`, so the text it creates is projector-sized.

    >>> @styled
    ... def size():
    ...     import matplotlib
    ...     return matplotlib.rcParams["font.size"]
    >>> size() == FONT_SIZE
    True
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with style():
            return fn(*args, **kwargs)

    return wrapper


def new_figure(nrows: int = 1, ncols: int = 1, figsize=(8.0, 4.0), dpi: int = 80, **subplot_kw):
    """A new (not pyplot-managed) Figure and its Axes, styled for a projector.

    Returns ``(fig, axes)`` as ``Figure.subplots`` does. The figure is not
    registered with pyplot, so a notebook shows it only where it is displayed.

    >>> fig, ax = new_figure()
    >>> ax.xaxis.label.get_size() >= FONT_SIZE
    True
    """
    with style():
        fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=True, **subplot_kw)
        for ax in fig.axes:
            ax.tick_params(labelsize=FONT_SIZE - 1)
    return fig, axes
