"""Every slider demo, in JupyterLab, in a real Chromium: run all, no errors, values kept, each slider moves its figure.

For each notebook under notebooks/ that builds a slider demo: open it, run
all cells, wait for the kernel to be idle, check that no cell shows an error.
Then, once the browser has rendered every demo (a slider's view sends the
value it displays back to the kernel when it renders), read every demo's
values from the kernel and compare them with the state the notebook asserts
(``assert demo.values == {...}``; the demo's defaults where it asserts none):
a default the slider cannot show comes back snapped (issue 42 §3). Re-run
every cell after the first demo and check again: those cells hold the checks
that fail when a slider moved. No slider label and no readout may be cut off, at 1280 px and on a 1024-pixel
projector. Last, for every slider of every demo, focus its
handle and press an arrow key, and check that the slider value, the readout
and the figure's <img> changed (and the figure settles). Each demo is
screenshot after the move; the latency from key press to new figure is
recorded (see the end of the pytest output).
"""

from __future__ import annotations

import time

import posenc_browser as pb
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_slider_demos_in_jupyterlab(demo_notebook, lab_server, served_dir, page, artifacts, latency_records):
    copy = pb.served_path(served_dir, demo_notebook)
    relpath = copy.relative_to(served_dir.parent).as_posix()  # e.g. notebooks/01-clock-hands.ipynb
    phases, start = {}, time.monotonic()

    def phase(name):  # the wall time of each phase, printed with -s (for docs/PERFORMANCE.md)
        nonlocal start
        phases[name], start = time.monotonic() - start, time.monotonic()

    try:
        errors = pb.run_notebook_in_lab(page, lab_server, relpath, workspace=copy.stem.replace(".", "-"))
        phase("run all")
        assert errors == [], f"{relpath}: cells show errors after Run All: {errors}"
        count = pb.wait_for_demos(page)
        assert count >= 1, f"{relpath} builds a slider demo but no .posenc-demo appeared"
        moved = pb.demo_value_problems(page, demo_notebook, "after Run All, the demos rendered")
        assert moved == [], "\n".join(moved)
        phase("render and values")
        errors = pb.rerun_after_first_demo(page, demo_notebook)
        assert errors == [], f"{relpath}: re-running the cells after the first demo shows errors: {errors}"
        pb.wait_for_demos(page)
        moved = pb.demo_value_problems(page, demo_notebook, "after re-running the cells after the first demo")
        assert moved == [], "\n".join(moved)
        phase("re-run after the demo")
        assert pb.broken_images(page) == [], f"{relpath}: broken images: {pb.broken_images(page)}"
        assert pb.cut_labels(page) == [], f"{relpath}: slider labels cut off: {pb.cut_labels(page)}"
        assert pb.cut_readouts(page) == [], f"{relpath}: readouts cut off: {pb.cut_readouts(page)}"
        cut = pb.cut_at_projector_width(page)
        assert cut == [], f"{relpath}: cut off at {pb.PROJECTOR_WIDTH} px (a projector): {cut}"
        records, problems = pb.exercise_demos(page, relpath, "lab", artifacts, steps=pb.steps_per_slider())
        latency_records.extend(records)
        assert problems == [], "\n".join(problems)
        phase("sliders moved")
        budget = pb.latency_budget_ms()
        if budget is not None:
            slow = [r for r in records if r["latencies_ms"] and pb.median(r["latencies_ms"]) > budget]
            assert not slow, f"median latency over {budget:.0f} ms: " + "; ".join(
                f"demo {r['demo']}: {pb.median(r['latencies_ms']):.0f} ms" for r in slow)
    finally:
        lab_server.shutdown_kernels()
        print(f"{demo_notebook.name}: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items()))
