"""The browser harness without a browser: notebook discovery, and skip-or-fail when Chromium is missing.

These run everywhere (no `browser` marker): they guard the promise that a
machine without Chromium sees a line saying why the browser tests were
skipped, and that CI (CI=true) fails instead of skipping.
"""

from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import posenc_browser as pb
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def write_notebook(path, *sources):
    cells = [new_markdown_cell("# Title")] + [new_code_cell(s) for s in sources]
    nbformat.write(new_notebook(cells=cells), path)
    return path


def test_discovery_finds_notebooks_that_build_a_slider_demo(tmp_path):
    write_notebook(tmp_path / "01-a.ipynb", "import numpy as np", "# NBVAL_IGNORE_OUTPUT\ndemo = clock_demo()\ndemo")
    write_notebook(tmp_path / "02-b.ipynb", "demo = SliderDemo(make, update, [int_slider('pos', 'pos', 0, 9, 1)])")
    write_notebook(tmp_path / "03-c.ipynb", "deck = flashcard_deck(seed=0)\ndeck")          # a widget, not a slider demo
    (tmp_path / "sub").mkdir()
    write_notebook(tmp_path / "sub" / "04-d.ipynb", "d = rope_demo(m=3)")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    write_notebook(tmp_path / ".ipynb_checkpoints" / "01-a-checkpoint.ipynb", "demo = clock_demo()")
    found = [p.relative_to(tmp_path).as_posix() for p in pb.demo_notebooks(tmp_path)]
    assert found == ["01-a.ipynb", "02-b.ipynb", "sub/04-d.ipynb"]


def test_markdown_mentioning_a_demo_is_not_a_demo(tmp_path):
    path = tmp_path / "x.ipynb"
    nbformat.write(new_notebook(cells=[new_markdown_cell("Call `clock_demo()` yourself.")]), path)
    assert not pb.has_slider_demo(path)


def test_missing_chromium_is_explained_with_the_fix(monkeypatch):
    monkeypatch.setenv("POSENC_CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("POSENC_BROWSER", raising=False)
    reason = pb.unavailable_reason()
    assert reason is not None and "/nonexistent/chromium not found" in reason
    assert "apt-get install chromium" in reason


def test_latency_table_flags_a_slow_demo():
    records = [
        {"where": "lab", "notebook": "01-a.ipynb", "demo": 0, "latencies_ms": [100.0, 120.0, 400.0], "paint_ms": [30.0]},
        {"where": "lab", "notebook": "02-b.ipynb", "demo": 0, "latencies_ms": [160.0, 170.0], "paint_ms": [30.0]},
    ]
    lines = pb.latency_table(records, target_ms=150)
    assert " 120 " in lines[1] and lines[1].rstrip().endswith("ok")       # median of 100, 120, 400
    assert " 165 " in lines[2] and lines[2].rstrip().endswith("OVER TARGET")  # median of 160, 170


def _run_without_chromium(ci: bool):
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "POSENC_BROWSER"}}
    env["POSENC_CHROMIUM"] = "/nonexistent/chromium"
    if ci:
        env["CI"] = "true"
    here = os.path.dirname(__file__)
    return subprocess.run(
        [sys.executable, "-m", "pytest", os.path.join(here, "test_browser_voila.py"), "-q", "-p", "no:randomly"],
        cwd=pb.ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


@pytest.mark.slow
def test_without_chromium_the_browser_tests_skip_with_a_visible_line():
    result = _run_without_chromium(ci=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "browser tests skipped: /nonexistent/chromium not found; install it with" in result.stdout
    assert "skipped" in result.stdout.splitlines()[-1]


@pytest.mark.slow
def test_on_ci_without_chromium_the_browser_tests_fail():
    result = _run_without_chromium(ci=True)
    assert result.returncode != 0, result.stdout[-2000:]
    assert "CI=true but the browser tests cannot run" in result.stdout


def test_the_stated_values_are_the_last_state_each_demo_asserts(tmp_path):
    path = write_notebook(
        tmp_path / "05-e.ipynb",
        "%matplotlib inline\nimport numpy as np",
        "demo = clock_demo()\ndemo",
        'assert demo.values == {"pos": 7, "base": 10000.0}  # the default\ndemo.controls["pos"].value = 9',
        'if True:\n    assert t5.values == {"num_buckets": 32}\nassert demo.values == {"pos": 9, "base": 10000.0}',
        "assert demo.values == expected  # not a literal: not a stated state",
    )
    assert pb.stated_values(path) == {"demo": {"pos": 9, "base": 10000.0}, "t5": {"num_buckets": 32}}
    assert pb.first_demo_cell(path) == 2  # the title cell, the import cell, then the demo
    with pytest.raises(ValueError, match="x.ipynb builds no slider demo"):
        pb.first_demo_cell(write_notebook(tmp_path / "x.ipynb", "import numpy as np"))


def test_every_slider_notebook_states_its_demos_values():
    # the browser test compares each demo with these; a notebook that stated none would be compared with defaults only
    for path in pb.demo_notebooks():
        assert pb.stated_values(path), f"{path.name} asserts no demo's values"
