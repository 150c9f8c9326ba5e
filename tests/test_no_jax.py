"""Lessons 00-11 need no JAX: the package and those notebooks work with jax, jaxlib, optax and tqdm blocked.

The check runs in subprocesses whose ``sitecustomize`` makes every import of those four
packages fail exactly as an absent package does (``ModuleNotFoundError``), so it needs no
second environment and no network. The notebooks' kernels inherit the blocker through
``PYTHONPATH``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tools import nav

ROOT = Path(__file__).resolve().parent.parent

#: The lab's dependencies: the `jax` extra of pyproject.toml.
BLOCKED = ("jax", "jaxlib", "optax", "tqdm")

BLOCKER = f'''
import importlib.abc
import sys

BLOCKED = {set(BLOCKED)!r}


class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by tests/test_no_jax.py)", name=name)
        return None


sys.meta_path.insert(0, _Blocked())
'''


@pytest.fixture(scope="module")
def blocked_env(tmp_path_factory):
    folder = tmp_path_factory.mktemp("no-jax")
    (folder / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    path = os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return dict(os.environ, PYTHONPATH=path)


def _python(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


#: The notebooks that train models with JAX (the extrapolation lab, and 18's last part); every other notebook is a
#: lesson. (tests/test_serving.py checks that 18 imports the lab in its last part only.)
LAB_NOTEBOOKS = {"12", "13", "15", "17", "18"}


def lessons() -> list[Path]:
    """Every notebook but the lab's (00-11, 14, ...) and the worked solutions."""
    numbered = [e.path for e in nav.entries(ROOT) if e.number not in LAB_NOTEBOOKS]
    return numbered + [e.path for e in nav.solutions(ROOT) if e.number not in LAB_NOTEBOOKS]


def test_the_blocker_blocks(blocked_env):
    result = _python("import jax", blocked_env)
    assert result.returncode == 1 and "blocked by tests/test_no_jax.py" in result.stderr, result.stderr


def test_the_blocked_packages_are_the_jax_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extra = {re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower() for req in project["optional-dependencies"]["jax"]}
    core = {re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower() for req in project["dependencies"]}
    assert extra == set(BLOCKED)
    assert core == {"numpy", "matplotlib", "ipywidgets", "ml_dtypes"}


def test_package_imports_without_jax_and_the_lab_says_what_to_install(blocked_env):
    code = (
        "import posenc_helpers, posenc_helpers.registry as r, posenc_helpers.viz.lab\n"
        "r.demos(); r.figures()\n"
        "try:\n"
        "    import posenc_helpers.lab\n"
        "except ImportError as e:\n"
        "    print(str(e))\n"
        "else:\n"
        "    raise SystemExit('posenc_helpers.lab imported without JAX')\n"
    )
    result = _python(code, blocked_env)
    assert result.returncode == 0, result.stderr[-3000:]
    message = result.stdout.strip()
    assert "\n" not in message, message
    assert "posenc_helpers[jax]" in message and "make lab" in message and "jax is missing" in message, message


#: The one line ``import posenc_helpers.lab`` raises without JAX: pip's command first, then the clone's.
LAB_MESSAGE = (
    "posenc_helpers.lab needs JAX, optax and tqdm (jax is missing): "
    'run `pip install "posenc_helpers[jax]"`, or `make lab` in a clone of the repository'
)


def test_the_lab_without_jax_fails_with_one_line_and_no_chained_traceback(blocked_env):
    """What a pip user sees: a traceback of one exception whose message names pip's command, then make's."""
    result = _python("import posenc_helpers.lab", blocked_env)
    assert result.returncode == 1, result.stderr
    named = [line for line in result.stderr.splitlines() if re.match(r"[A-Za-z_][\w.]*(Error|Exception)\b", line)]
    assert named == [f"ImportError: {LAB_MESSAGE}"], result.stderr
    assert "During handling of the above exception" not in result.stderr, result.stderr
    assert "The above exception was the direct cause" not in result.stderr, result.stderr
    line = named[0]
    assert 0 <= line.index('pip install "posenc_helpers[jax]"') < line.index("make lab"), line
    # the extra the message names is pyproject's, and it holds what the blocker blocks
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (extra,) = re.findall(r"posenc_helpers\[(\w+)\]", line)
    assert extra == "jax" and extra in project["optional-dependencies"]
    names = {re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower() for req in project["optional-dependencies"][extra]}
    assert names == set(BLOCKED)


def test_a_lab_dependency_that_fails_to_import_keeps_its_reason_on_the_one_line(tmp_path):
    """An installed but broken optax (a version clash, say) is not reported as missing (a stand-in jax, for speed)."""
    (tmp_path / "jax.py").write_text("", encoding="utf-8")
    (tmp_path / "optax.py").write_text("raise ImportError('optax 0.0 needs a newer jax')\n", encoding="utf-8")
    path = os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    result = _python("import posenc_helpers.lab", dict(os.environ, PYTHONPATH=path))
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "ImportError: posenc_helpers.lab needs JAX, optax and tqdm (ImportError: optax 0.0 needs a newer jax): "
        'run `pip install "posenc_helpers[jax]"`, or `make lab` in a clone of the repository'
    ), result.stderr
    assert "During handling of the above exception" not in result.stderr


@pytest.mark.slow
def test_every_lesson_passes_nbval_without_jax(blocked_env):
    notebooks = [str(p.relative_to(ROOT)) for p in lessons()]
    assert len(notebooks) >= 13 and any("14-" in n for n in notebooks), notebooks
    command = [sys.executable, "-m", "pytest", *notebooks, "-p", "no:randomly", "-q", "-x", "--no-header"]
    result = subprocess.run(command, env=blocked_env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
