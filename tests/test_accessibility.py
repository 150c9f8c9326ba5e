"""Every generated figure and every slider demo is readable when projected and colourblind-safe.

Checked on the figures themselves, not on the code that makes them: every
visible axis with tick labels has a label (or shares it with a labelled
neighbour), every plot has a title, no text is under 11 pt, and every
colormap is one of the colourblind-safe ones the project uses.
"""

from __future__ import annotations

import matplotlib
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from posenc_helpers.registry import demos as demo_registry
from posenc_helpers.registry import figures as figure_registry
from posenc_helpers.viz import style

SAFE_CMAPS = {"RdBu_r", "viridis", "cividis"}


def _labelled(ax, axis: str) -> bool:
    get = ax.get_xlabel if axis == "x" else ax.get_ylabel
    if get():
        return True
    siblings = (ax.get_shared_x_axes() if axis == "x" else ax.get_shared_y_axes()).get_siblings(ax)
    return any((s.get_xlabel() if axis == "x" else s.get_ylabel()) for s in siblings)


def problems_in(fig) -> list[str]:
    FigureCanvasAgg(fig).draw()
    found = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        if ax.get_label() == "<colorbar>":
            if not (ax.get_xlabel() or ax.get_ylabel()):
                found.append("a colorbar has no label")
            continue
        title = ax.get_title() or (fig._suptitle.get_text() if fig._suptitle else "")
        if not title:
            found.append("an axes has no title")
        for axis, ticks in (("x", ax.get_xticklabels()), ("y", ax.get_yticklabels())):
            if any(t.get_text() and t.get_visible() for t in ticks) and not _labelled(ax, axis):
                found.append(f"axes {ax.get_title()!r}: no {axis} label")
        for artist in ax.images + ax.collections:
            if getattr(artist, "get_array", lambda: None)() is not None and artist.get_cmap().name not in SAFE_CMAPS:
                found.append(f"axes {ax.get_title()!r}: colormap {artist.get_cmap().name}")
    for text in fig.findobj(matplotlib.text.Text):
        if text.get_visible() and text.get_text().strip() and text.get_fontsize() < 11:
            found.append(f"{text.get_fontsize():.0f} pt text {text.get_text()[:30]!r}")
    return found


@pytest.mark.parametrize("name", sorted(figure_registry()))
def test_generated_figure_is_readable(name):
    with style():
        fig = figure_registry()[name]()
    assert problems_in(fig) == []


@pytest.mark.parametrize("name", sorted(demo_registry()))
def test_slider_demo_is_readable_and_labelled(name):
    demo = demo_registry()[name]()
    assert problems_in(demo.fig) == []
    for control in demo.controls.values():
        # "pos (position)": the symbol, then its meaning in brackets
        assert control.description.count("(") == 1 and control.description.endswith(")"), control.description
