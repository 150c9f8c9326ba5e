"""Real-browser harness for the slider demos: servers, Chromium, and the moves.

Used by ``tests/browser/conftest.py`` (the pytest fixtures) and by
``benchmarks/bench_browser.py``. Nothing here imports playwright at module
level, so the file imports (and pytest collects it) on a machine without it.

What it does, in one place:

* :func:`start_lab` / :func:`start_voila`: a JupyterLab or Voilà server from
  this Python (``sys.executable -m ...``) on 127.0.0.1, a free port and a
  random token, with every Jupyter config/runtime/data/workspace dir inside a
  temp folder, serving a COPY of the notebooks (autosave never touches the
  repo). :meth:`Server.stop` ends the whole process group (TERM, then KILL)
  and any kernel left (kernels run in sessions of their own). Each server
  also dies with this process: ``posenc_lifetime`` turns SIGTERM into an
  orderly stop and gives the server a parent-death signal for SIGKILL.
  With ``POSENC_SERVER_RECORD=/file`` set, each server appends a JSON line
  (name, pid, port) to that file once it answers.
* :func:`launch_browser`: the system Chromium (``/usr/bin/chromium``, or
  ``POSENC_CHROMIUM``), headless, through playwright's ``executable_path``.
  It never downloads a browser (no ``playwright install``).
* :func:`run_notebook_in_lab`: open a notebook, run all cells, wait for the
  kernel to be idle, return the error outputs.
* :func:`demo_value_problems`: once the browser has rendered the demos (and
  sent back whatever value each slider displays), read every demo's values
  from the kernel and compare them with the values the notebook states;
  :func:`rerun_after_first_demo` then re-runs every cell after the first
  demo, whose checks fail if a slider moved.
* :func:`move_slider`: focus a slider handle, press an arrow key, and time
  the key press to the new figure painted (in-page, ``performance.now()``).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import posenc_lifetime

ROOT = Path(__file__).resolve().parents[2]

#: Where the Debian package ``chromium`` puts the browser.
DEFAULT_CHROMIUM = "/usr/bin/chromium"

#: Flags for a quiet, headless, sandbox-free Chromium (containers run as root).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Median key-press-to-new-figure latency a projected demo needs, in ms.
TARGET_MS = 150.0

#: The notebook presentation mode opens (as `make present` does by default); ``POSENC_PRESENT_NB`` picks another.
PRESENTED = "01-clock-hands.ipynb"

#: A code cell that builds a slider demo: a SliderDemo, or a ``*_demo(...)`` factory.
DEMO_SOURCE = re.compile(r"\bSliderDemo\s*\(|\b\w+_demo\s*\(")

#: JupyterLab settings for a deterministic, offline page: every cell attached to
#: the DOM (so widgets render and can be screenshot), no news, no update checks.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


# --------------------------------------------------------------------------- availability


def chromium_path() -> str | None:
    """The Chromium executable to drive, or None: ``$POSENC_CHROMIUM``, else /usr/bin/chromium, else PATH."""
    wanted = os.environ.get("POSENC_CHROMIUM")
    if wanted:
        return wanted if os.access(wanted, os.X_OK) else None
    if os.access(DEFAULT_CHROMIUM, os.X_OK):
        return DEFAULT_CHROMIUM
    return shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable_reason() -> str | None:
    """Why the browser tests cannot run here (one line, with the fix), or None if they can."""
    if os.environ.get("POSENC_BROWSER", "").strip().lower() in {"0", "no", "false", "off"}:
        return "POSENC_BROWSER=0 is set; unset it to run them"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed; run `make install` (it is in requirements.txt)"
    if chromium_path() is None:
        where = os.environ.get("POSENC_CHROMIUM") or DEFAULT_CHROMIUM
        return f"{where} not found; install it with `sudo apt-get install chromium` (or set POSENC_CHROMIUM=/path/to/chromium)"
    return None


def in_ci() -> bool:
    """True on a CI runner (``CI=true``), where a missing browser is a failure, not a skip."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


# --------------------------------------------------------------------------- modes


def bench_mode() -> bool:
    """``POSENC_BENCH=1``: more key presses per slider, and the latency target is enforced."""
    return os.environ.get("POSENC_BENCH", "").strip() not in {"", "0"}


def steps_per_slider() -> int:
    """Key presses per slider: 2 in a test run (there and back), 10 in benchmark mode (``POSENC_BENCH_STEPS``)."""
    default = 10 if bench_mode() else 2
    return max(1, int(os.environ.get("POSENC_BENCH_STEPS", default)))


def latency_budget_ms() -> float | None:
    """The median latency a demo must not exceed: ``POSENC_LATENCY_BUDGET_MS``, the target in bench mode, else None."""
    if os.environ.get("POSENC_LATENCY_BUDGET_MS"):
        return float(os.environ["POSENC_LATENCY_BUDGET_MS"])
    return TARGET_MS if bench_mode() else None


# --------------------------------------------------------------------------- notebooks


def notebooks_dir() -> Path:
    """The folder whose notebooks are tested: ``$POSENC_NOTEBOOKS_DIR`` or the repo's notebooks/."""
    return Path(os.environ.get("POSENC_NOTEBOOKS_DIR") or ROOT / "notebooks").resolve()


def _code_sources(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        nb = json.load(handle)
    sources = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            sources.append("".join(source) if isinstance(source, list) else source)
    return sources


def has_slider_demo(path: Path) -> bool:
    """Whether a notebook builds a slider demo (a SliderDemo or a ``*_demo(...)`` factory in its code)."""
    try:
        return any(DEMO_SOURCE.search(source) for source in _code_sources(path))
    except (OSError, ValueError):
        return False


#: The slider notebooks whose Run All `make test` drives in the browser: 01, whose base snapped to 25,119 after Run
#: All in the report of issue 42 §3. `make test-all` drives every slider notebook (the others are marked `full`, to
#: keep the test command in its budget). In every run, nbval builds each demo, and a default its slider cannot show
#: is refused there (posenc_helpers.demo).
RUN_ALL_IN_TEST = ("01-",)


def demo_notebooks(folder: Path | None = None) -> list[Path]:
    """Every notebook under ``folder`` (default :func:`notebooks_dir`) with a slider demo, sorted."""
    folder = folder or notebooks_dir()
    if not folder.is_dir():
        return []
    paths = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    return [p for p in paths if has_slider_demo(p)]


def first_demo_cell(path: Path) -> int:
    """The index, among all the notebook's cells, of the first code cell that builds a slider demo."""
    with open(path, encoding="utf-8") as handle:
        cells = json.load(handle)["cells"]
    for index, cell in enumerate(cells):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code" and DEMO_SOURCE.search(source):
            return index
    raise ValueError(f"{path.name} builds no slider demo")


def stated_values(path: Path) -> dict[str, dict]:
    """The last state the notebook asserts for each demo, ``{name: {...}}``, from ``assert name.values == {...}``.

    After Run All each demo must be in that state (the notebooks put a demo back to
    its default after a scripted check, or assert the new state, as notebook 13 does).
    """
    stated: dict[str, dict] = {}
    for source in _code_sources(path):
        lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
        try:
            tree = ast.parse("\n".join(lines))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            test = getattr(node, "test", None) if isinstance(node, ast.Assert) else None
            if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                    and isinstance(test.left, ast.Attribute) and test.left.attr == "values"
                    and isinstance(test.left.value, ast.Name) and isinstance(test.comparators[0], ast.Dict)):
                try:
                    stated[test.left.value.id] = ast.literal_eval(test.comparators[0])
                except ValueError:
                    continue
    return stated


def presentation_notebook() -> Path | None:
    """``$POSENC_PRESENT_NB`` (a file name), else :data:`PRESENTED`, else the first demo notebook, else None."""
    found = demo_notebooks()
    wanted = os.environ.get("POSENC_PRESENT_NB", PRESENTED)
    preferred = [p for p in found if p.name == Path(wanted).name]
    return (preferred or found or [None])[0]


def served_path(served_dir: Path, notebook: Path) -> Path:
    """Where the servers see ``notebook`` (a path under :func:`notebooks_dir`) inside the served copy."""
    return served_dir / notebook.relative_to(notebooks_dir())


def first_code_line(path: Path) -> str | None:
    """A line of code (e.g. ``import numpy as np``) that Voilà must NOT show."""
    for source in _code_sources(path):
        for line in source.splitlines():
            line = line.strip()
            if line.startswith(("import ", "from ")):
                return line
    return None


def copy_tree_for_serving(source: Path, dest_root: Path) -> Path:
    """Copy the notebooks (and the repo's figures/, which their markdown links as ../figures) into a temp root.

    Returns the copy of ``source``. The servers only ever see the copy, so
    autosave and checkpoints never write into the repo.
    """
    dest_root.mkdir(parents=True, exist_ok=True)
    copy = dest_root / "notebooks"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    figures = ROOT / "figures"
    if figures.is_dir():
        shutil.copytree(figures, dest_root / "figures")
    return copy


# --------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def jupyter_env(home: Path) -> dict[str, str]:
    """An environment whose Jupyter config, runtime, data, settings and workspaces all live under ``home``."""
    dirs = {
        "JUPYTER_CONFIG_DIR": home / "config",
        "JUPYTER_RUNTIME_DIR": home / "runtime",
        "JUPYTER_DATA_DIR": home / "data",
        "JUPYTERLAB_SETTINGS_DIR": home / "config" / "lab" / "user-settings",
        "JUPYTERLAB_WORKSPACES_DIR": home / "workspaces",
        "IPYTHONDIR": home / "ipython",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    for name, settings in LAB_SETTINGS.items():
        target = dirs["JUPYTERLAB_SETTINGS_DIR"] / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(settings), encoding="utf-8")
    env = dict(os.environ)
    env.update({name: str(path) for name, path in dirs.items()})
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env.pop("JUPYTER_PATH", None)
    # The kernel must import this checkout's posenc_helpers, as `make lab` does.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@dataclasses.dataclass
class Server:
    """A server process in its own process group, its URL, token and log file."""

    name: str
    process: subprocess.Popen
    url: str
    token: str
    log: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def api(self, path: str, method: str = "GET", body: dict | None = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}{path}", data=data, method=method, headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def wait_ready(self, path: str = "/api/status", timeout: float = 90.0) -> None:
        """Poll ``path`` with the token until it answers 200; fail with the log if the process dies or hangs."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                status, _ = self.api(path)
                if status == 200:
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.25)
        raise RuntimeError(f"{self.name} not ready after {timeout:.0f} s:\n{self.log_tail()}")

    def shutdown_kernels(self) -> None:
        """Stop every kernel session (so an idle notebook doesn't hold a CPU while the next one runs)."""
        try:
            status, body = self.api("/api/sessions")
            if status == 200:
                for session in json.loads(body):
                    self.api(f"/api/sessions/{session['id']}", method="DELETE")
        except (urllib.error.URLError, OSError, ValueError):
            pass

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server's process group, then kill it if it lingers; then kill any kernel left.

        Kernels run in sessions of their own (jupyter_client starts them so),
        outside the server's group: the server shuts them down on SIGTERM, and
        the ones it could not are found in its process tree, taken before.
        """
        tree = posenc_lifetime.process_tree(self.process.pid)
        try:
            self._stop_group(timeout)
        finally:
            posenc_lifetime.kill_survivors(tree)
            posenc_lifetime.forget(self.process.pid)

    def _stop_group(self, timeout: float) -> None:
        if self.process.poll() is None:
            posenc_lifetime.terminate(self.process.pid)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout)
        # Anything the server started in its own group goes with it.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _spawn(name: str, command: list[str], env: dict, cwd: Path, log: Path, port: int, token: str) -> Server:
    """Start a server in its own process group, with a parent-death signal on Linux, and track it."""
    handle = open(log, "wb")
    try:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=posenc_lifetime.parent_death_preexec(),
        )
    finally:
        handle.close()
    posenc_lifetime.track(process.pid)
    return Server(name, process, f"http://127.0.0.1:{port}", token, log)


def _announce(server: Server) -> None:
    """Append the ready server's name, pid and port to ``$POSENC_SERVER_RECORD``, if set (for the stopped-run test)."""
    record = os.environ.get("POSENC_SERVER_RECORD")
    if record:
        line = {"server": server.name, "pid": server.process.pid, "port": server.port}
        with open(record, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def root_flags() -> list[str]:
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def start_lab(serve_dir: Path, home: Path) -> Server:
    """JupyterLab on 127.0.0.1 serving ``serve_dir``, with ``window.jupyterapp`` exposed; waits until ready."""
    port, token = free_port(), secrets.token_hex(16)
    env = jupyter_env(home)
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={serve_dir}",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.workspaces_dir={env['JUPYTERLAB_WORKSPACES_DIR']}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LanguageServerManager.autodetect=False",
        *root_flags(),
    ]
    server = _spawn("JupyterLab", command, env, serve_dir, home / "jupyterlab.log", port, token)
    try:
        server.wait_ready()
    except BaseException:
        server.stop()
        raise
    _announce(server)
    return server


def voila_command(notebook: Path, port: int, token: str) -> list[str]:
    """Exactly what ``make present`` runs (tools.present), on a given port and with a token."""
    from tools.present import voila_command

    return voila_command(notebook, port=port, token=token, python=sys.executable)


def start_voila(notebook: Path, home: Path) -> Server:
    """Voilà serving one notebook (code hidden), as ``make present`` does; waits until it answers."""
    port, token = free_port(), secrets.token_hex(16)
    from tools.present import voila_env

    env = voila_env(jupyter_env(home))
    command = voila_command(notebook, port, token) + [f"--Voila.connection_dir_root={env['JUPYTER_RUNTIME_DIR']}"]
    server = _spawn("Voila", command, env, notebook.parent, home / "voila.log", port, token)
    try:
        # Voila 0.5 has no /api/status; its static files answer once it serves.
        server.wait_ready("/voila/static/voila.js")
    except BaseException:
        server.stop()
        raise
    _announce(server)
    return server


def make_temp_root(prefix: str = "posenc-browser-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


# --------------------------------------------------------------------------- browser


def launch_browser(playwright):
    """The system Chromium, headless, through ``executable_path`` (never a downloaded browser)."""
    path = chromium_path()
    if path is None:
        raise RuntimeError(unavailable_reason() or "chromium not found")
    return playwright.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)


# In-page JavaScript. Each demo is `.posenc-demo`; its figure the <img class="posenc-figure">,
# its readout `.posenc-readout`, its sliders' handles `.noUi-handle`.

_ARM = """
([demoIndex]) => {
  const demo = document.querySelectorAll('.posenc-demo')[demoIndex];
  const img = demo.querySelector('img.posenc-figure, .posenc-figure img');
  const readout = demo.querySelector('.posenc-readout');
  const st = {src0: img.src, readout0: readout.innerText, tKey: null, tSrc: null, tShown: null,
              srcChanges: 0, lastChange: null};
  window.__posencMove = st;
  window.addEventListener('keydown', (e) => { if (st.tKey === null) st.tKey = e.timeStamp; },
                          {capture: true, once: true});
  if (window.__posencObserver) window.__posencObserver.disconnect();
  const observer = new MutationObserver(() => {
    st.srcChanges += 1;
    st.lastChange = performance.now();
    if (st.tSrc === null) {
      st.tSrc = st.lastChange;
      // "Shown" = the new PNG decoded and the next frame painted.
      img.decode().catch(() => {}).then(() => requestAnimationFrame(() => { st.tShown = performance.now(); }));
    }
  });
  observer.observe(img, {attributes: true, attributeFilter: ['src']});
  window.__posencObserver = observer;
  return true;
}
"""

_MOVED = """
() => { const st = window.__posencMove; return st.tShown !== null; }
"""

_READOUT_CHANGED = """
([demoIndex]) => {
  const st = window.__posencMove;
  const demo = document.querySelectorAll('.posenc-demo')[demoIndex];
  return demo.querySelector('.posenc-readout').innerText !== st.readout0;
}
"""

_RESULT = """
([demoIndex]) => {
  const st = window.__posencMove;
  const demo = document.querySelectorAll('.posenc-demo')[demoIndex];
  const img = demo.querySelector('img.posenc-figure, .posenc-figure img');
  return {src0: st.src0, src: img.src, readout0: st.readout0, readout: demo.querySelector('.posenc-readout').innerText,
          tKey: st.tKey, tSrc: st.tSrc, tShown: st.tShown, srcChanges: st.srcChanges,
          quietFor: st.lastChange === null ? null : performance.now() - st.lastChange,
          complete: img.complete, naturalWidth: img.naturalWidth};
}
"""


@dataclasses.dataclass
class Move:
    """One key press on one slider and what it did."""

    label: str
    key: str
    value_before: str | None
    value_after: str | None
    readout_before: str
    readout_after: str
    src_changed: bool
    src_changes: int
    latency_ms: float | None
    paint_ms: float | None = None  # of latency_ms: from the new src to the frame after it decoded


def demo_sliders(page, demo_index: int) -> list[str]:
    """The labels of a demo's sliders (ipywidgets 8 ``.widget-slider``, each with a ``.noUi-handle``)."""
    sliders = page.locator(".posenc-demo").nth(demo_index).locator(".widget-slider")
    labels = []
    for i in range(sliders.count()):
        label = sliders.nth(i).locator(".widget-label").first
        text = label.inner_text().strip() if label.count() else ""
        labels.append(text or f"slider {i}")
    return labels


def _slider_value(slider, handle) -> str:
    """What the slider shows: its readout (e.g. "1.122e+04"), else the handle's aria-valuenow."""
    readout = slider.locator(".widget-readout").first
    text = readout.inner_text().strip() if readout.count() else ""
    return text or handle.get_attribute("aria-valuenow") or ""


def move_slider(page, demo_index: int, slider_index: int, label: str = "", key: str | None = None,
                timeout_ms: float = 15000, settle_ms: float = 300) -> Move:
    """Focus one slider's handle, press an arrow key, wait for the new figure, then for it to settle.

    ``key`` defaults to ArrowRight, or ArrowLeft when the slider is at its maximum.
    The latency is from the keydown event to the frame after the new PNG decoded.
    """
    demo = page.locator(".posenc-demo").nth(demo_index)
    slider = demo.locator(".widget-slider").nth(slider_index)
    handle = slider.locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    before = _slider_value(slider, handle)
    if key is None:
        now, top = handle.get_attribute("aria-valuenow"), handle.get_attribute("aria-valuemax")
        at_max = now is not None and top is not None and float(now) >= float(top)
        key = "ArrowLeft" if at_max else "ArrowRight"
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate(_ARM, [demo_index])
    handle.focus()
    page.keyboard.press(key)
    try:
        page.wait_for_function(_MOVED, timeout=timeout_ms, polling="raf")
        page.wait_for_function(_READOUT_CHANGED, arg=[demo_index], timeout=timeout_ms)
    except PlaywrightTimeout:
        pass  # the caller's checks say what did not change
    # Settle: no further src change for `settle_ms`.
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        result = page.evaluate(_RESULT, [demo_index])
        if result["quietFor"] is None or result["quietFor"] >= settle_ms:
            break
        page.wait_for_timeout(settle_ms / 3)
    result = page.evaluate(_RESULT, [demo_index])
    latency = paint = None
    if result["tKey"] is not None and result["tShown"] is not None:
        latency = result["tShown"] - result["tKey"]
        paint = result["tShown"] - result["tSrc"]
    return Move(
        label=label,
        key=key,
        value_before=before,
        value_after=_slider_value(slider, handle),
        readout_before=result["readout0"],
        readout_after=result["readout"],
        src_changed=result["src"] != result["src0"] and result["complete"] and result["naturalWidth"] > 0,
        src_changes=result["srcChanges"],
        latency_ms=latency,
        paint_ms=paint,
    )


def wait_for_demos(page, timeout_ms: float = 60000) -> int:
    """Wait until at least one demo shows a loaded figure and the number of demos stops growing."""
    page.wait_for_function(
        """() => { const imgs = document.querySelectorAll('.posenc-demo img.posenc-figure, .posenc-demo .posenc-figure img');
                   return imgs.length > 0 && [...imgs].every(i => i.src && i.complete && i.naturalWidth > 0); }""",
        timeout=timeout_ms,
    )
    count, stable_since = -1, time.monotonic()
    while time.monotonic() - stable_since < 0.5:
        now = page.locator(".posenc-demo").count()
        if now != count:
            count, stable_since = now, time.monotonic()
        page.wait_for_timeout(100)
    return count


def broken_images(page) -> list[str]:
    """Images on the page that finished loading but show nothing (e.g. a figure the server could not find)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('img')]
                 .filter(i => i.complete && i.naturalWidth === 0 && i.getAttribute('src'))
                 .map(i => (i.getAttribute('alt') || '') + ' <' + i.getAttribute('src').slice(0, 80) + '>')"""
    )


def cut_labels(page) -> list[str]:
    """The demos' control labels whose text is wider than their box (shown cut, with an ellipsis)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.posenc-demo .widget-label')]
                 .filter(l => l.offsetParent !== null && l.textContent.trim() && l.scrollWidth > l.clientWidth + 1)
                 .map(l => l.textContent.trim())"""
    )


#: A projector's width in CSS pixels (1024 × 768): the narrowest screen a slider demo is shown on in a classroom.
PROJECTOR_WIDTH = 1024


def cut_readouts(page) -> list[str]:
    """The demos' readouts (tables of numbers under the sliders) whose content is wider than their box, so that a
    column is cut off or hidden: the first 60 characters of each, with the box's and the content's widths. Every
    demo must show its readout (a hidden one would be skipped, so it is reported too)."""
    found = page.evaluate(
        """() => { const demos = [...document.querySelectorAll('.posenc-demo')];
                   return demos.map(d => { const r = d.querySelector('.posenc-readout');
                     if (!r || r.offsetParent === null) return 'a demo shows no readout';
                     if (r.scrollWidth <= r.clientWidth + 1) return null;
                     const wide = [...r.querySelectorAll('*')].sort((a, b) => b.scrollWidth - a.scrollWidth)[0];
                     return r.textContent.trim().slice(0, 60) + ` [box ${r.clientWidth} px, content ${r.scrollWidth} px`
                       + (wide ? `, widest: <${wide.tagName.toLowerCase()}> ${wide.scrollWidth} px` : '') + ']'; }); }"""
    )
    return [x for x in found if x is not None]


def cut_at_projector_width(page) -> list[str]:
    """:func:`cut_labels` and :func:`cut_readouts` with the page narrowed to :data:`PROJECTOR_WIDTH` and JupyterLab's
    left sidebar collapsed, as a teacher projects a notebook; then the page as it was (on failure too). What a class
    would see cut. The notebook panel must have narrowed to the projector's width, or the check says so."""
    before = page.viewport_size
    was_open = page.evaluate("() => !window.jupyterapp.shell.leftCollapsed")
    try:
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        page.set_viewport_size({"width": PROJECTOR_WIDTH, "height": before["height"]})
        page.wait_for_function(
            "(w) => { const p = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');"
            " return !!p && p.getBoundingClientRect().right <= w; }", arg=PROJECTOR_WIDTH, timeout=10000)
        page.wait_for_timeout(300)  # the widgets lay themselves out again
        return [f"label: {x}" for x in cut_labels(page)] + [f"readout: {x}" for x in cut_readouts(page)]
    finally:
        page.set_viewport_size(before)
        if was_open:
            page.evaluate("() => window.jupyterapp.shell.expandLeft()")
        page.wait_for_timeout(300)


def markdown_images(page) -> int:
    """How many images the markdown (prose) cells show."""
    return page.locator(".jp-RenderedMarkdown img").count()


# --------------------------------------------------------------------------- JupyterLab


_LAB_OPENED = """
(path) => { const app = window.jupyterapp; if (!app || !app.shell) return false;
  const w = app.shell.currentWidget; return !!(w && w.context && w.context.path === path && w.sessionContext); }
"""

_LAB_KERNEL_READY = """
async () => { const w = window.jupyterapp.shell.currentWidget;
  await w.context.ready; await w.sessionContext.ready;
  const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
  return kernel ? kernel.status : null; }
"""

_LAB_RUN_ALL = """
async () => { const app = window.jupyterapp; const w = app.shell.currentWidget;
  app.shell.activateById(w.id);
  return await app.commands.execute('notebook:run-all-cells'); }
"""

_LAB_IDLE = """
() => { const w = window.jupyterapp.shell.currentWidget;
  const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!kernel || kernel.status !== 'idle') return false;
  const prompts = [...w.node.querySelectorAll('.jp-InputPrompt')].map(p => p.textContent);
  return !prompts.some(t => t.includes('*')); }
"""

_LAB_ERRORS = """
() => { const w = window.jupyterapp.shell.currentWidget; const cells = w.content.model.cells; const errors = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    for (const out of cell.outputs.toJSON()) {
      if (out.output_type === 'error') errors.push({cell: i, ename: out.ename, evalue: out.evalue});
    }
    if (cell.executionCount === null && cell.sharedModel.getSource().trim())
      errors.push({cell: i, ename: 'NotRun', evalue: 'cell was not executed'});
  }
  // After a failing cell, Run All stops: report the failure, not the cells it skipped.
  if (errors.some(e => e.ename !== 'NotRun')) errors.splice(0, errors.length, ...errors.filter(e => e.ename !== 'NotRun'));
  const text = w.node.innerText;
  if (text.includes('Error displaying widget')) errors.push({cell: -1, ename: 'WidgetError', evalue: 'Error displaying widget'});
  return errors; }
"""


_LAB_EXECUTE = """
async (code) => { const w = window.jupyterapp.shell.currentWidget;
  const kernel = w.sessionContext.session.kernel;
  const future = kernel.requestExecute({code, silent: false, store_history: false, allow_stdin: false});
  let out = '', err = null;
  future.onIOPub = (msg) => {
    const kind = msg.header.msg_type;
    if (kind === 'stream' && msg.content.name === 'stdout') out += msg.content.text;
    if (kind === 'error') err = msg.content.ename + ': ' + msg.content.evalue;
  };
  await future.done;
  return {out, err}; }
"""

_LAB_RUN_BELOW = """
async ([index]) => { const app = window.jupyterapp; const w = app.shell.currentWidget;
  app.shell.activateById(w.id);
  w.content.activeCellIndex = index;
  w.content.deselectAll();
  return await app.commands.execute('notebook:run-all-below'); }
"""

#: Run in the notebook's kernel, outside the notebook: every SliderDemo its namespace holds, with its values
#: and its defaults, as one line of JSON. Names starting with "_" (IPython's output history) are left out.
DEMO_STATE_CODE = """
def _posenc_demo_state():
    import json
    from posenc_helpers.demo import SliderDemo
    def plain(value):
        return value.item() if hasattr(value, "item") else value
    demos = {name: obj for name, obj in get_ipython().user_ns.items()
             if isinstance(obj, SliderDemo) and not name.startswith("_")}
    print(json.dumps({name: {"values": {k: plain(v) for k, v in demo.values.items()},
                             "defaults": {k: plain(v) for k, v in getattr(demo, "defaults", {}).items()}}
                      for name, demo in demos.items()}))
_posenc_demo_state()
del _posenc_demo_state
"""


def kernel_output(page, code: str) -> str:
    """What ``code`` prints, run in the open notebook's kernel (no cell is added, no history kept)."""
    result = page.evaluate(_LAB_EXECUTE, code)
    if result["err"]:
        raise RuntimeError(f"the kernel could not run the check: {result['err']}")
    return result["out"]


def demo_value_problems(page, notebook: Path, when: str) -> list[str]:
    """Every demo whose values in the kernel differ from those the notebook states (else from its defaults).

    Call it after :func:`wait_for_demos`: by then each slider's view has rendered and
    sent the value it displays back to the kernel, and this query, queued behind
    those messages on the kernel's shell channel, reads the values they left.
    """
    state = json.loads(kernel_output(page, DEMO_STATE_CODE).strip().splitlines()[-1])
    stated = stated_values(notebook)
    if not state:
        return [f"{notebook.name} {when}: the kernel holds no SliderDemo"]
    problems = []
    for name, demo in sorted(state.items()):
        expected = stated.get(name, demo["defaults"])
        source = "as the notebook states" if name in stated else "its defaults"
        if not expected:
            problems.append(f"{notebook.name} {when}: {name} has no stated values and no recorded defaults")
            continue
        if demo["values"] != expected:
            moved = {k: v for k, v in demo["values"].items() if expected.get(k) != v}
            problems.append(f"{notebook.name} {when}: {name}.values = {demo['values']}, not {expected} ({source}); "
                            f"changed: {moved}")
    return problems


def rerun_after_first_demo(page, notebook: Path, timeout_ms: float = 240000) -> list[dict]:
    """Run every cell after the notebook's first demo cell again, wait for idle, return the cells' errors."""
    start = first_demo_cell(notebook) + 1
    page.evaluate(_LAB_RUN_BELOW, [start])
    page.wait_for_function(_LAB_IDLE, timeout=timeout_ms, polling=250)
    page.wait_for_timeout(300)
    page.wait_for_function(_LAB_IDLE, timeout=timeout_ms, polling=250)
    return page.evaluate(_LAB_ERRORS)


def run_notebook_in_lab(page, server: Server, relpath: str, workspace: str, timeout_ms: float = 240000) -> list[dict]:
    """Open ``relpath`` in its own workspace, run all cells, wait for idle; return the cells' error outputs."""
    url = f"{server.url}/lab/workspaces/{workspace}/tree/{relpath}?reset&token={server.token}"
    page.goto(url, wait_until="domcontentloaded", timeout=timeout_ms)
    page.wait_for_function(_LAB_OPENED, arg=relpath, timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    while page.evaluate(_LAB_KERNEL_READY) != "idle":
        if time.monotonic() > deadline:
            raise TimeoutError(f"kernel for {relpath} never became idle")
        page.wait_for_timeout(200)
    page.evaluate(_LAB_RUN_ALL)
    page.wait_for_function(_LAB_IDLE, timeout=timeout_ms, polling=250)
    # Idle must hold for a moment (widget comm messages can follow the last reply).
    page.wait_for_timeout(300)
    page.wait_for_function(_LAB_IDLE, timeout=timeout_ms, polling=250)
    return page.evaluate(_LAB_ERRORS)


# --------------------------------------------------------------------------- results


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def latency_table(records: list[dict], target_ms: float = TARGET_MS) -> list[str]:
    """Lines of a table: one per demo, median and max key-to-figure latency in ms."""
    lines = [f"{'where':<6} {'notebook':<26} {'demo':>4} {'steps':>5} {'median ms':>9} {'max ms':>7} "
             f"{'paint ms':>8}  target: median <= {target_ms:.0f} ms"]
    for record in records:
        samples = record["latencies_ms"]
        if not samples:
            lines.append(f"{record['where']:<6} {record['notebook']:<26} {record['demo']:>4} {0:>5} {'-':>9} {'-':>7} "
                         f"{'-':>8}  no sample")
            continue
        med = median(samples)
        verdict = "ok" if med <= target_ms else "OVER TARGET"
        paint = median(record["paint_ms"]) if record.get("paint_ms") else float("nan")
        lines.append(
            f"{record['where']:<6} {record['notebook']:<26} {record['demo']:>4} {len(samples):>5} "
            f"{med:>9.0f} {max(samples):>7.0f} {paint:>8.0f}  {verdict}"
        )
    lines.append("(median/max: keydown to the frame after the new PNG decoded; paint: the part after the new src arrived)")
    return lines


def screenshot_demo(page, demo_index: int, path: Path) -> Path:
    """A PNG of one demo (sliders, figure, readout), cropped to its content's width."""
    demo = page.locator(".posenc-demo").nth(demo_index)
    demo.scroll_into_view_if_needed()
    old = demo.evaluate("(el) => { const old = el.style.width; el.style.width = 'fit-content'; return old; }")
    try:
        demo.screenshot(path=str(path))
    finally:
        demo.evaluate("(el, old) => { el.style.width = old; }", old)
    return path


def exercise_demos(page, notebook: str, where: str, artifacts: Path, steps: int = 2) -> tuple[list[dict], list[str]]:
    """Move every slider of every demo on the page ``steps`` times; screenshot each demo after its first moves.

    Returns ``(records, problems)``: one record per demo (its latencies in ms,
    its screenshot) and a list of what did not work, e.g. a readout that did
    not change. Alternates ArrowRight / ArrowLeft (starting away from an end).
    """
    records, problems = [], []
    count = page.locator(".posenc-demo").count()
    stem = Path(notebook).stem
    for demo_index in range(count):
        labels = demo_sliders(page, demo_index)
        latencies, paints, moves = [], [], []
        if not labels:
            problems.append(f"{notebook} demo {demo_index}: no slider (.widget-slider / .noUi-handle) found")
        for step in range(steps):
            for slider_index, label in enumerate(labels):
                if step == 0:
                    key = None  # ArrowRight, or ArrowLeft at the maximum
                else:  # there and back: odd steps undo the first move
                    first = moves[slider_index].key
                    key = {"ArrowRight": "ArrowLeft", "ArrowLeft": "ArrowRight"}[first] if step % 2 else first
                move = move_slider(page, demo_index, slider_index, label=label, key=key)
                if step == 0:
                    moves.append(move)
                where_ = f"{notebook} demo {demo_index} slider '{label}' {move.key} (step {step + 1})"
                if move.value_after == move.value_before:
                    problems.append(f"{where_}: the slider value did not change ({move.value_before})")
                if move.readout_after == move.readout_before:
                    problems.append(f"{where_}: the readout did not change: {move.readout_before!r}")
                if not move.src_changed:
                    problems.append(f"{where_}: the figure's <img> src did not change (or did not load)")
                if move.latency_ms is None:
                    problems.append(f"{where_}: no new figure was shown")
                else:
                    latencies.append(move.latency_ms)
                    paints.append(move.paint_ms)
            if step == 0:
                shot = artifacts / f"{where}-{stem}-demo{demo_index}.png"
                screenshot_demo(page, demo_index, shot)
                print(f"screenshot: {shot}")
        records.append({
            "where": where, "notebook": Path(notebook).name, "demo": demo_index,
            "sliders": labels, "latencies_ms": [round(v, 1) for v in latencies],
            "paint_ms": [round(v, 1) for v in paints],
            "screenshot": str(artifacts / f"{where}-{stem}-demo{demo_index}.png"),
        })
    return records, problems


def new_page(chromium, viewport: dict):
    """A page in a fresh context of ``viewport`` (CSS pixels, scale 1), closed with its context afterwards.

    A generator, for fixtures to ``yield from`` (conftest's ``page`` at 1280 px, the book's phone page).
    """
    context = chromium.new_context(viewport=viewport, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(60000)
    try:
        yield page
    finally:
        context.close()
