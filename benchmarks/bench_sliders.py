"""Slider latency, per demo, measured in one run: ``python benchmarks/bench_sliders.py``.

For every SliderDemo registered in posenc_helpers.viz, each control is stepped
back and forth around its default, one step at a time, as a hand dragging a
slider does. Each step is timed from setting the new value to the new figure
encoded as PNG (what the browser receives). Beside it, the same steps done
the naive way, as ``interact`` would: build a new figure from scratch, draw
it, encode it. Target (issue 3): median <= 50 ms per demo at default settings.
"""

from __future__ import annotations

import statistics
import sys
import time

from posenc_helpers.demo import slider_values
from posenc_helpers.registry import demos as registry

TARGET_MS = 50.0
STEPS = 6  # steps each way, per control


def step_values(control) -> list:
    """STEPS steps right, back to the start, STEPS steps left, back: as a hand drags (each stops at an end)."""
    shown = slider_values(control)
    start = shown.index(control.value)
    values = []
    for direction in (1, -1):
        for step in range(1, STEPS + 1):
            if not 0 <= start + direction * step < len(shown):
                break  # the end of the range
            values.append(shown[start + direction * step])
        values.append(shown[start])
    return values


def measure(factory) -> tuple[float, float]:
    demo = factory()
    fast, naive = [], []
    for control in demo.controls.values():
        for value in step_values(control):
            start = time.perf_counter()
            control.value = value
            fast.append(time.perf_counter() - start)
    for control_name, control in list(demo.controls.items()):
        for value in step_values(control)[:3]:
            start = time.perf_counter()
            demo.naive_render(**{control_name: value})
            naive.append(time.perf_counter() - start)
    return statistics.median(fast) * 1e3, statistics.median(naive) * 1e3


def main() -> int:
    demos = registry()
    if not demos:
        print("no slider demos registered")
        return 1
    print(f"{'demo':34s} {'in place (ms)':>14s} {'naive redraw (ms)':>18s} {'speed-up':>9s}")
    ok = True
    for name, factory in demos.items():
        fast, naive = measure(factory)
        ok &= fast <= TARGET_MS
        flag = "" if fast <= TARGET_MS else f"  OVER {TARGET_MS:.0f} ms"
        print(f"{name:34s} {fast:14.1f} {naive:18.1f} {naive / fast:8.1f}x{flag}")
    print(f"target: median <= {TARGET_MS:.0f} ms per step for every demo: {'met' if ok else 'NOT MET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
