"""T5's relative position buckets: which bucket each distance falls in, and where they stop telling distances apart.

Taught in notebooks/08-other-schemes.ipynb.

T5 learns one bias per bucket of relative positions n − m (key minus query).
The bucket map is exact for small distances, logarithmic up to
``max_distance``, and flat beyond: every distance from the start of the last
bucket on gets the same bias. The slider demo (:func:`buckets_demo`) moves
``max_distance`` and ``num_buckets``.
"""

from __future__ import annotations

import html

import numpy as np

from .. import _validate as v
from ..relative import t5_bucket
from . import OKABE_ITO, new_figure

__all__ = [
    "SPAN",
    "last_bucket_start",
    "plot_bucket_map",
    "update_bucket_map",
    "make_bucket_figure",
    "make_bucket_map",
    "buckets_demo",
    "FIGURES",
    "DEMOS",
]

#: The relative positions the figure shows: n − m from −SPAN to SPAN.
SPAN = 300

#: The largest num_buckets the demo offers (the demo's y axis is fixed to fit it).
MAX_BUCKETS = 64


def last_bucket_start(num_buckets=32, max_distance=128, bidirectional=True) -> int:
    """The smallest distance |n − m| (keys before the query) that lands in the last bucket.

    From there on T5's bias is the same for every distance. Found by counting
    up from the exact buckets with :func:`posenc_helpers.relative.t5_bucket`.
    Taught in notebooks/08-other-schemes.ipynb.

    >>> last_bucket_start()          # 16 buckets per sign, max_distance 128: 8 + ⌊ln(d/8)/ln 16 · 8⌋ = 15 from d = 91
    91
    >>> last_bucket_start(32, 128, bidirectional=False)   # 32 buckets, 16 exact: 16 + ⌊ln(d/16)/ln 8 · 16⌋ = 31 from d = 113
    113
    """
    num_buckets = v.positive_int("num_buckets", num_buckets)
    max_distance = v.positive_int("max_distance", max_distance)
    last = (num_buckets // 2 if bidirectional else num_buckets) - 1
    d = np.arange(0, max_distance + 1)
    buckets = t5_bucket(-d, bidirectional, num_buckets, max_distance)
    return int(d[np.argmax(buckets == last)])


def plot_bucket_map(ax, num_buckets=32, max_distance=128, y_buckets=None) -> dict:
    """Bucket of every relative position n − m in [−SPAN, SPAN], bidirectional (T5's encoder), as steps.

    Animated (moved by :func:`update_bucket_map`): the bucket line, two dashed
    lines at n − m = ±max_distance, and two shaded spans where the last
    bucket of each sign starts. The axes stay fixed so a slider step only
    redraws those: the y axis fits buckets 0 … ``y_buckets`` − 1 (default
    ``num_buckets``, the buckets in use; the slider demo passes MAX_BUCKETS).
    Returns the artists. Taught in notebooks/08-other-schemes.ipynb.

    >>> fig, ax = new_figure()
    >>> h = plot_bucket_map(ax)
    >>> ax.get_ylim()                # buckets 0 … 31, with room above for the legend
    (np.float64(-1.0), np.float64(40.0))
    """
    rel = np.arange(-SPAN, SPAN + 1)
    (line,) = ax.step(rel, np.zeros(rel.shape), where="mid", color=OKABE_ITO[0], linewidth=2.5, animated=True,
                      label="bucket(n − m)")
    limits = [ax.axvline(0.0, color="0.3", linestyle="--", linewidth=1.3, animated=True) for _ in range(2)]
    shades = [ax.axvspan(0.0, 1.0, color=OKABE_ITO[1], alpha=0.18, animated=True) for _ in range(2)]
    shades[0].set_label("last bucket: one bias for all these distances")
    limits[0].set_label("n − m = ±max_distance")
    y_buckets = num_buckets if y_buckets is None else v.positive_int("y_buckets", y_buckets)
    ax.set_xlim(-SPAN, SPAN)
    # y axis: buckets 0 … y_buckets − 1, and a quarter more above for the legend
    ax.set_ylim(-1, y_buckets * 1.25)
    # ticks every quarter: the exact buckets, the log buckets, and the same again after the query
    ax.set_yticks(np.arange(0, y_buckets + 1, max(y_buckets // 4, 1)))
    ax.set_xlabel("relative position n − m (tokens; key after query > 0)")
    ax.set_ylabel("bucket index (one learned bias each)")
    ax.set_title("T5 relative position buckets (bidirectional)")
    ax.legend(loc="upper left")
    handles = {"line": line, "limits": limits, "shades": shades, "rel": rel}
    update_bucket_map(handles, num_buckets=num_buckets, max_distance=max_distance)
    return handles


def update_bucket_map(handles, num_buckets=32, max_distance=128) -> str:
    """Move the artists to ``num_buckets`` and ``max_distance``; return the HTML readout.

    Taught in notebooks/08-other-schemes.ipynb.
    """
    rel = handles["rel"]
    buckets = t5_bucket(rel, True, num_buckets, max_distance)
    handles["line"].set_ydata(buckets)
    handles["limits"][0].set_xdata([-max_distance, -max_distance])
    handles["limits"][1].set_xdata([max_distance, max_distance])
    start = last_bucket_start(num_buckets, max_distance)
    # the shaded spans: from the last bucket's start to the edge of the plot, on each side
    left, right = handles["shades"]
    left.set_x(-SPAN - 1)
    left.set_width(SPAN + 1 - start + 0.5)
    right.set_x(start - 0.5)
    right.set_width(SPAN + 1 - start + 0.5)
    exact = num_buckets // 4
    rows = [
        ("buckets per direction", f"{num_buckets // 2}"),
        ("exact buckets (one per distance)", f"|n − m| = 0 … {exact - 1}"),
        ("last bucket starts at", f"|n − m| = {start}"),
        ("one shared bias for", f"every |n − m| ≥ {start}"),
    ]
    body = "".join(f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td></tr>" for a, b in rows)
    return (
        f"<p>num_buckets = {num_buckets}, max_distance = {max_distance}</p>"
        f"<table style='font-family:monospace'>{body}</table>"
    )


def make_bucket_figure(num_buckets=32, max_distance=128, y_buckets=MAX_BUCKETS):
    """A figure with :func:`plot_bucket_map` drawn on it: ``(fig, handles)`` for the slider demo.

    The y axis fits ``y_buckets`` buckets: by default the most the demo's slider offers.
    """
    fig, ax = new_figure(figsize=(9.0, 4.8))
    return fig, plot_bucket_map(ax, num_buckets, max_distance, y_buckets)


def make_bucket_map():
    """The figure ``figures/08-t5-bucket-map.png``: T5's defaults, 32 buckets and max_distance 128.

    Its y axis fits the 32 buckets in use.
    """
    fig, _ = make_bucket_figure(y_buckets=32)
    return fig


def buckets_demo(num_buckets: int = 32, max_distance: int = 128):
    """Slider demo: T5's bucket map as ``max_distance`` and ``num_buckets`` change.

    Taught in notebooks/08-other-schemes.ipynb.

    >>> demo = buckets_demo()
    >>> demo.controls["max_distance"].value = 64
    >>> int(demo.handles["line"].get_ydata()[0])     # n − m = −300: the last bucket of the negative side
    15
    """
    from ..demo import SliderDemo, int_slider

    controls = [
        int_slider("num_buckets", "num_buckets (learned biases)", 8, MAX_BUCKETS, num_buckets, step=8),
        int_slider("max_distance", "max_distance (tokens)", 16, 256, max_distance, step=8),
    ]
    return SliderDemo(make_bucket_figure, update_bucket_map, controls, title="T5 relative position buckets")


FIGURES = {"08-t5-bucket-map": make_bucket_map}
DEMOS = {"t5_buckets": buckets_demo}
