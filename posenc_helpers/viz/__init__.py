"""Pure plotting functions for the notebooks, one module per notebook.

Every function here draws onto an Axes (or a Figure) it is given and returns
the artists it made, so a slider can update them in place and a test can
read their data without a browser. Modules may also define

* ``FIGURES``: ``{"NN-slug": make}``, where ``make()`` returns a Figure; the
  generator ``python -m tools.figures`` (``make figures``) writes each to
  ``figures/NN-slug.png``;
* ``DEMOS``: ``{"name": factory}``, where ``factory()`` returns a
  :class:`posenc_helpers.demo.SliderDemo` at its default settings; the slider
  benchmark and the browser tests drive every one of them.

Nothing here changes global matplotlib state: figures are built with
:func:`new_figure` inside :func:`style`, a local ``rc_context`` (both defined
in :mod:`posenc_helpers.style` and re-exported here). :mod:`posenc_helpers.registry`
collects every module's ``FIGURES`` and ``DEMOS``.
"""

from __future__ import annotations

from ..style import (
    DIVERGING_CMAP,
    FONT_SIZE,
    OKABE_ITO,
    RC,
    SEQUENTIAL_CMAP,
    new_figure,
    style,
    styled,
)

__all__ = ["DIVERGING_CMAP", "FONT_SIZE", "OKABE_ITO", "RC", "SEQUENTIAL_CMAP", "new_figure", "style", "styled"]
