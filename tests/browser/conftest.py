"""Fixtures for the real-browser tests: one Chromium per session, and each server per module.

Each server (JupyterLab, Voila) lives only as long as the module that uses it:
it is stopped when that module's tests end, failed or not, and it dies with
the run if the run is stopped (SIGTERM, or SIGKILL: see posenc_lifetime.py).

Without Chromium (or playwright) these tests are SKIPPED, and the run ends
with one line saying why and how to enable them. On CI (``CI=true``) a
missing browser FAILS them instead, so CI can never pass without running them.

Environment knobs:

* ``POSENC_CHROMIUM=/path``: another Chromium binary (default /usr/bin/chromium);
* ``POSENC_BROWSER=0``: skip them on purpose;
* ``POSENC_NOTEBOOKS_DIR=/dir``: test the notebooks in another folder;
* ``POSENC_BENCH=1``: benchmark mode, more key presses per slider, and a demo
  whose median latency is over the target (150 ms) fails;
* ``POSENC_LATENCY_BUDGET_MS=N``: fail a demo whose median latency exceeds N ms;
* ``POSENC_ARTIFACTS=/dir``: where screenshots and latencies go (default: a new temp folder).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import posenc_browser as pb
import pytest

_REASON_KEY = pytest.StashKey[str]()
_RECORDS: list[dict] = []
_STATE: dict = {}


def pytest_collection_modifyitems(config, items):
    browser_items = [item for item in items if item.get_closest_marker("browser")]
    if not browser_items:
        return
    reason = pb.unavailable_reason()
    if reason is None:
        return
    explicit_opt_out = reason.startswith("POSENC_BROWSER=0")
    if pb.in_ci() and not explicit_opt_out:
        return  # the fixtures fail them, loudly
    config.stash[_REASON_KEY] = reason
    marker = pytest.mark.skip(reason=f"browser tests skipped: {reason}")
    for item in browser_items:
        item.add_marker(marker)


def pytest_generate_tests(metafunc):
    if "demo_notebook" not in metafunc.fixturenames:
        return
    folder = pb.notebooks_dir()
    found = pb.demo_notebooks(folder)
    if found:
        params = [pytest.param(p, marks=() if p.name.startswith(pb.RUN_ALL_IN_TEST) else pytest.mark.full) for p in found]
        metafunc.parametrize("demo_notebook", params, ids=[str(p.relative_to(folder)) for p in found])
    else:
        metafunc.parametrize(
            "demo_notebook",
            [pytest.param(None, marks=pytest.mark.skip(reason=f"no notebook with a slider demo in {folder} yet"))],
            ids=["no-demo-notebooks"],
        )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    reason = config.stash.get(_REASON_KEY, None)
    if reason is not None:
        terminalreporter.write_line(f"browser tests skipped: {reason}", yellow=True, bold=True)
        return
    if _RECORDS:
        terminalreporter.section("slider latency: key press to new figure shown (real browser)")
        for line in pb.latency_table(_RECORDS):
            terminalreporter.write_line(line)
    if "artifacts" in _STATE:
        terminalreporter.write_line(f"browser test artifacts (screenshots, latencies.json): {_STATE['artifacts']}")


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def browser_required():
    """Fail (CI) or skip (elsewhere) when the browser cannot run; collection already skipped most cases."""
    reason = pb.unavailable_reason()
    if reason is not None:
        if pb.in_ci():
            pytest.fail(f"CI=true but the browser tests cannot run: {reason}", pytrace=False)
        pytest.skip(f"browser tests skipped: {reason}")


@pytest.fixture(scope="session")
def temp_root(browser_required, tmp_path_factory):
    """Server homes (with their logs) and the notebook copy; pytest keeps its last three temp dirs."""
    return tmp_path_factory.mktemp("posenc-browser")


@pytest.fixture(scope="session")
def artifacts(browser_required):
    """Screenshots and latencies.json; kept after the run, its path printed at the end."""
    wanted = os.environ.get("POSENC_ARTIFACTS")
    path = Path(wanted) if wanted else pb.make_temp_root("posenc-browser-artifacts-")
    path.mkdir(parents=True, exist_ok=True)
    _STATE["artifacts"] = path
    print(f"\nbrowser test artifacts: {path}")
    yield path
    (path / "latencies.json").write_text(json.dumps(_RECORDS, indent=1), encoding="utf-8")


@pytest.fixture(scope="session")
def served_dir(temp_root):
    """A copy of the notebooks (and figures/) that the servers serve; the repo is never written."""
    return pb.copy_tree_for_serving(pb.notebooks_dir(), temp_root / "served")


@pytest.fixture(scope="module")
def lab_server(served_dir, temp_root):
    # Rooted above notebooks/, as `make lab` is, so markdown images ../figures/NN-slug.png load.
    server = pb.start_lab(served_dir.parent, temp_root / "lab-home")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def voila_server(served_dir, temp_root):
    """Voila serving the presentation notebook's copy, as `make present` does: (server, the copy's path)."""
    notebook = pb.presentation_notebook()
    if notebook is None:
        pytest.skip(f"no notebook with a slider demo in {pb.notebooks_dir()} yet")
    copy = pb.served_path(served_dir, notebook)
    server = pb.start_voila(copy, temp_root / "voila-home")
    try:
        yield server, copy
    finally:
        server.stop()


@pytest.fixture(scope="session")
def chromium(browser_required):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = pb.launch_browser(playwright)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium):
    yield from pb.new_page(chromium, {"width": 1280, "height": 1800})


@pytest.fixture
def latency_records():
    return _RECORDS
