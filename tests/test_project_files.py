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
    assert cff["license"] == "MIT"


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
