"""posenc_helpers.viz.buckets: artist data against the literal T5 transcription, the demo driven kernel-free."""

from __future__ import annotations

import literal_shipped as lit
import pytest

from posenc_helpers.viz import buckets as bk


@pytest.mark.parametrize("num_buckets, max_distance", [(32, 128), (16, 64), (64, 256), (8, 16)])
def test_demo_moves_the_bucket_line_and_markers(num_buckets, max_distance):
    demo = bk.buckets_demo()
    demo.set_values(num_buckets=num_buckets, max_distance=max_distance)
    rel = range(-bk.SPAN, bk.SPAN + 1)
    expected = [lit.t5_relative_position_bucket(d, True, num_buckets, max_distance) for d in rel]
    assert list(demo.handles["line"].get_ydata()) == expected
    assert [line.get_xdata()[0] for line in demo.handles["limits"]] == [-max_distance, max_distance]
    # the last bucket starts at the first distance whose literal bucket is the last one
    start = next(d for d in range(max_distance + 1)
                 if lit.t5_relative_position_bucket(-d, True, num_buckets, max_distance) == num_buckets // 2 - 1)
    assert bk.last_bucket_start(num_buckets, max_distance) == start
    right = demo.handles["shades"][1]
    assert right.get_x() == start - 0.5
    assert f"|n − m| = {start}" in demo.readout.value
    assert f"num_buckets = {num_buckets}, max_distance = {max_distance}" in demo.readout.value
    # the demo's y axis stays fixed and holds every bucket the slider can reach
    low, high = demo.fig.axes[0].get_ylim()
    assert low < 0 and bk.MAX_BUCKETS - 1 < high and max(expected) < high


def test_defaults_and_static_parts():
    demo = bk.buckets_demo()
    assert demo.values == {"num_buckets": 32, "max_distance": 128}
    assert "|n − m| = 91" in demo.readout.value and "|n − m| = 0 … 7" in demo.readout.value
    ax = demo.fig.axes[0]
    assert "(tokens" in ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    assert demo.handles["line"].get_animated()
    assert bk.DEMOS == {"t5_buckets": bk.buckets_demo}
    figures = bk.FIGURES
    assert set(figures) == {"08-t5-bucket-map"}
    fig = figures["08-t5-bucket-map"]()
    assert len(fig.axes) == 1
    # the static figure's y axis fits T5's 32 buckets (0 … 31), not the demo's 64
    low, high = fig.axes[0].get_ylim()
    assert low < 0 and 31 < high <= 1.25 * 32
    assert max(fig.axes[0].lines[0].get_ydata()) == 31
