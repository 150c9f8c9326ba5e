"""Project files a fork or a teacher relies on: citation, licences, JupyterLab's quiet start."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_citation_has_the_fields_cff_1_2_requires():
    # The full schema check is `make citation` (cffconvert --validate, in its own environment).
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert {"cff-version", "message", "title", "authors"} <= set(cff)
    assert cff["authors"] == [{"name": "posenc contributors"}]
    assert cff["license"] == ["MIT", "CC-BY-4.0"]  # the code (LICENSE) and the text and figures (LICENSE-TEXT)


def test_readme_points_to_the_licences_citation_and_contributing():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in ["LICENSE", "LICENSE-TEXT", "CITATION.cff", "CONTRIBUTING.md"]:
        assert (ROOT / name).is_file(), name
        assert f"]({name})" in readme, f"README does not link {name}"
    assert "Attribution 4.0 International" in (ROOT / "LICENSE-TEXT").read_text(encoding="utf-8")
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")


def _lab_flags() -> list[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    line = re.search(r"^LAB_FLAGS := (.*)$", makefile, re.M).group(1)
    return [flag for flag in line.split() if flag.startswith("--")]


@pytest.mark.slow  # starts a JupyterLab server and waits for its settings API: 5-10 s
def test_make_lab_starts_without_news_or_update_checks(tmp_path):
    """Start JupyterLab with make lab's flags and this environment's overrides; ask its settings API."""
    overrides = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    if not overrides.is_file():
        pytest.skip("the environment was not installed by make (no overrides.json)")
    assert json.loads(overrides.read_text()) == json.loads((ROOT / "config" / "jupyterlab-overrides.json").read_text())
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = secrets.token_hex(8)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "user-settings"), JUPYTER_DATA_DIR=str(tmp_path / "data"))
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tempfile.gettempdir()}",
               *(["--allow-root"] if os.geteuid() == 0 else []), *_lab_flags()]
    with open(tmp_path / "lab.log", "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def get(path):
            request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())

        deadline = time.monotonic() + 90
        while True:
            try:
                get("/api/status")
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "lab.log").read_text()[-2000:]
                time.sleep(0.5)
        notification = get("/lab/api/settings/@jupyterlab/apputils-extension:notification")
        # overrides.json changes the defaults the front end reads; "none" (undecided) shows the toast
        defaults = {name: spec["default"] for name, spec in notification["schema"]["properties"].items()}
        assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False
        assert notification["settings"] == {}  # no user setting decides it instead
        assert get("/lab/api/news")["news"] == []
        assert get("/lab/api/update")["notification"] is None
    finally:
        process.terminate()
        process.wait(timeout=20)


# The course speaks of the course: no page a reader opens mentions the load of the machine it was built on, and
# every measured time is stated once, in docs/PERFORMANCE.md, with its date.
_READER_PAGES = [
    "README.md", "CONTRIBUTING.md", "docs/INSTALL.md", "docs/TEACHING.md", "docs/PERFORMANCE.md", "docs/CLAIMS.md",
]
_LOAD = re.compile(r"load average|\bload (?:of )?\d|\bload about \d", re.I)
_DURATION = re.compile(r"\b\d[\d,.]*\s?(?:ms|s|min|minutes?|seconds?|hours?)\b")


def _notebook_lines(kinds=("markdown", "code", "raw")):
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in (c for c in notebook["cells"] if c["cell_type"] in kinds):
            for line in "".join(cell["source"]).splitlines():
                yield f"{path.relative_to(ROOT)} ({cell.get('id')})", line


def _page_lines():
    for name in _READER_PAGES:
        for number, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            yield f"{name}:{number}", line


def test_no_page_or_notebook_mentions_a_load_average():
    found = [(where, line) for where, line in [*_page_lines(), *_notebook_lines()] if _LOAD.search(line)]
    assert not found, found


def test_the_pattern_finds_a_load_average_and_a_duration():
    assert _LOAD.search("took 3 min (load average about 2)") and _LOAD.search("the machine was shared, load 2 to 5")
    assert not _LOAD.search("the figures load in the book")
    assert [m.group() for m in _DURATION.finditer("took 3 min 13 s, or 193 s, under 5 minutes")] == [
        "3 min", "13 s", "193 s", "5 minutes"]


def test_measured_times_are_stated_only_in_the_performance_page():
    # a duration in the README, CONTRIBUTING, docs/, the Makefile or a notebook's prose is a target ("≤ 50 ms", "a budget
    # of 15 minutes"), never a measurement; docs/PERFORMANCE.md holds the measurements, each with its date
    targets = ("≤", "budget", "at or under", "must take")
    texts = [(w, line) for w, line in _page_lines() if not w.startswith("docs/PERFORMANCE.md")]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    texts += [(f"Makefile:{n}", line) for n, line in enumerate(makefile, 1) if line.lstrip().startswith("#")]
    texts += list(_notebook_lines(kinds=("markdown",)))
    found = [(w, line) for w, line in texts if _DURATION.search(line) and not any(t in line for t in targets)]
    assert not found, found
    performance = (ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    rows = [line for line in performance.splitlines() if line.startswith("| ") and _DURATION.search(line)]
    assert rows and all(re.search(r"\| 20\d\d-\d\d-\d\d \|$", row) for row in rows), rows


def test_the_readme_fits_one_screen_before_its_contents():
    # the course, its readers, the commands and a path through the notebooks, before the contents table
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    first = readme[: readme.index("## Contents")]
    assert len(first) <= 60, len(first)
    text = "\n".join(first)
    for command in ["make lab", "make test", "make test-fast", "make lessons"]:
        assert f"{command} " in text, command
    assert "learner" in text and "teacher" in text and "Start here" in text
    for page in ["docs/INSTALL.md", "docs/TEACHING.md"]:
        assert f"]({page})" in text and (ROOT / page).is_file(), page
    assert "](docs/PERFORMANCE.md)" in "\n".join(readme)


def test_make_lab_and_make_lessons_take_a_port():
    for target in ("lab", "lessons"):
        out = subprocess.run(["make", "-n", target, "PORT=8890"], cwd=ROOT, capture_output=True, text=True, check=True)
        (line,) = [x for x in out.stdout.splitlines() if "jupyter lab" in x]
        assert "--ServerApp.port=8890" in line, line
        out = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True)
        assert "--ServerApp.port" not in out.stdout
