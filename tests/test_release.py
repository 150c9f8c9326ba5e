"""A teacher's release and the launch links: one repository address, links that lead to files,
Binder's requirements from the lock, the changelog's version, pre-commit's ruff, a pure wheel, its
PyPI page (docs/PYPI.md) and the wheel installed offline into a fresh environment."""

from __future__ import annotations

import email.parser
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import posenc_helpers
from tools import book, nav

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The wheel's long description: the package's page on PyPI, for pip users.
PYPI = ROOT / "docs" / "PYPI.md"
#: What ``import posenc_helpers.lab`` says without JAX (tests/test_no_jax.py checks the same line).
LAB_MESSAGE = (
    "posenc_helpers.lab needs JAX, optax and tqdm (jax is missing): "
    'run `pip install "posenc_helpers[jax]"`, or `make lab` in a clone of the repository'
)


def _lock() -> dict[str, str]:
    """The lock's pins, ``{canonical name: version}``."""
    pins = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", line)
        if match:
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


# --- one repository address -------------------------------------------------------------


def test_the_repository_address_is_written_once_and_every_copy_agrees():
    urls = PYPROJECT["project"]["urls"]
    repo = nav.repository()
    assert urls["Homepage"] == repo and urls["Issues"] == repo + "/issues"
    assert book.config()["repository"]["url"] == repo
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["repository-code"] == repo and cff["url"] == urls["Documentation"]
    # every address of the project's own repository in the README is pyproject's
    slug = nav.slug()
    own = re.findall(r"https://github\.com/([\w.-]+/[\w.-]+)/actions/", README)
    own += re.findall(r"^\s*url\s*=\s*\{https://github\.com/([\w.-]+/[\w.-]+)\}", README, re.M)
    own += re.findall(r"colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/", README)
    own += re.findall(r"mybinder\.org/v2/gh/([\w.-]+/[\w.-]+)/", README)
    assert own and set(own) == {slug}, set(own)


def test_setting_the_address_once_rewrites_every_copy(tmp_path):
    """A fork sets [project.urls] and runs make nav: README and CITATION.cff follow."""
    for name in ["README.md", "CITATION.cff", "pyproject.toml"]:
        text = (ROOT / name).read_text(encoding="utf-8")
        if name == "pyproject.toml":
            text = text.replace(nav.repository(), "https://github.com/a-teacher/posenc-fork")
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "notebooks" / "solutions").mkdir(parents=True)
    changes = nav.planned_changes(tmp_path)
    readme, cff = changes[tmp_path / "README.md"], changes[tmp_path / "CITATION.cff"]
    assert nav.slug() not in readme.replace("https://github.com/" + nav.slug() + "-", "")
    assert "a-teacher/posenc-fork/actions/workflows/test.yml/badge.svg" in readme
    assert 'repository-code: "https://github.com/a-teacher/posenc-fork"' in cff


# --- launch links lead to files the repository has ---------------------------------------


def _launch_links() -> list[str]:
    """Every Colab, Binder and badge link in the README and in the notebooks' navigation cells."""
    texts = [README]
    for entry in nav.entries(ROOT) + nav.solutions(ROOT):
        nb = json.loads(entry.path.read_text(encoding="utf-8"))
        texts += ["".join(c["source"]) for c in nb["cells"] if "".join(c["source"]).startswith(nav.MARK)]
    pattern = r"https://(?:colab\.research\.google\.com|mybinder\.org|github\.com)/[^\s)\]\"']+"
    return sorted({url for text in texts for url in re.findall(pattern, text)})


def _file_of(url: str) -> str | None:
    """The repository file a launch link opens (None for a link to another project)."""
    slug, parsed = nav.slug(), urlparse(url)
    if parsed.netloc == "colab.research.google.com":
        prefix = f"/github/{slug}/blob/{nav.BRANCH}/"
        assert parsed.path.startswith(prefix), url
        return parsed.path.removeprefix(prefix)
    if parsed.netloc == "mybinder.org":
        assert parsed.path == f"/v2/gh/{slug}/{nav.BRANCH}", url
        urlpath = dict(part.split("=", 1) for part in parsed.query.split("&"))["urlpath"]
        assert urlpath.startswith("lab/tree/"), url
        return urlpath.removeprefix("lab/tree/")
    if parsed.path.startswith(f"/{slug}/actions/workflows/"):
        name = parsed.path.removeprefix(f"/{slug}/actions/workflows/").removesuffix("/badge.svg")
        return f".github/workflows/{name}"
    return None


def test_every_launch_link_and_badge_opens_a_file_the_repository_has():
    links = _launch_links()
    opened = [(url, _file_of(url)) for url in links]
    missing = [url for url, path in opened if path is not None and not (ROOT / path).is_file()]
    assert missing == []
    files = {path for _, path in opened if path}
    # a Colab and a Binder link for every lesson, and the badge's workflow
    for entry in nav.entries(ROOT):
        rel = entry.path.relative_to(ROOT).as_posix()
        assert nav.colab_url(rel) in links and nav.binder_url(rel) in links, rel
    assert ".github/workflows/test.yml" in files


def test_a_link_to_a_missing_file_is_caught():
    assert not (ROOT / _file_of(nav.colab_url("notebooks/99-missing.ipynb"))).is_file()
    assert _file_of(nav.binder_url("notebooks/04-rope.ipynb")) == "notebooks/04-rope.ipynb"


def test_the_book_offers_binder_and_colab():
    launch = book.config()["launch_buttons"]
    assert launch["binderhub_url"] == "https://mybinder.org"
    assert launch["colab_url"] == "https://colab.research.google.com"
    assert (ROOT / "binder" / "requirements.txt").is_file()


def test_the_colab_cell_installs_only_in_colab_and_the_lab_extra_only_where_needed():
    for entry in nav.entries(ROOT):
        nb = json.loads(entry.path.read_text(encoding="utf-8"))
        cells = [c for c in nb["cells"] if c.get("id") == nav.COLAB_CELL_ID]
        if not cells:
            continue  # not yet regenerated (make nav)
        source = "".join(cells[0]["source"])
        assert 'if "google.colab" in sys.modules:' in source and cells[0]["outputs"] == []
        assert ("posenc_helpers[jax] @" in source) == nav.needs_lab(nb), entry.path.name


# --- Binder ------------------------------------------------------------------------------


def _binder_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            match = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", line)
            assert match, f"binder/requirements.txt: not a pin: {line!r}"
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def _closure(requirements: list[str], extras: set[str]) -> set[str]:
    """The installed distributions these requirements pull in on this platform, from their metadata."""
    env = default_environment()
    seen: set[str] = set()
    todo = [(Requirement(r), extras) for r in requirements]
    while todo:
        req, active = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({**env, "extra": e}) for e in active or {""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        dist = metadata.distribution(name)
        todo += [(Requirement(r), set(req.extras)) for r in dist.requires or []]
    return seen


def test_binder_requirements_are_the_learners_set_pinned_as_in_the_lock():
    """Offline: every Binder pin is the lock's; together they hold all that make lab installs here.

    This proves Binder's list agrees with the lock and is complete for this platform (resolved
    from the installed packages' metadata); it does not download or build Binder's image.
    """
    binder, lock = _binder_pins(), _lock()
    assert {name: lock.get(name) for name in binder} == binder
    project = PYPROJECT["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["jax"] + project["optional-dependencies"]["lab"]
    needed = _closure(wanted, {""})
    assert needed - set(binder) == set(), "missing from binder/requirements.txt (run make lock)"
    assert "jupyterlab" in binder and "jax" in binder and "pytest" not in binder and "jupyter-book" not in binder
    python = (ROOT / "binder" / "runtime.txt").read_text(encoding="utf-8").strip()
    assert python == "python-3.11" and PYPROJECT["project"]["requires-python"] == ">=3.11"


def test_binder_post_build_installs_the_package_and_the_quiet_settings(tmp_path):
    """Run binder/postBuild as repo2docker would, with pip in dry-run mode and no index (offline)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # `python` is this environment's (a wrapper: a symlink would lose the venv's pyvenv.cfg)
    (bindir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    (bindir / "python").chmod(0o755)
    prefix = tmp_path / "prefix"
    env = dict(
        os.environ,
        PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
        NB_PYTHON_PREFIX=str(prefix),
        PIP_DRY_RUN="1",
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip's spelling of --no-build-isolation
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    result = subprocess.run(["bash", "binder/postBuild"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"Would install posenc_helpers-{PYPROJECT['project']['version']}" in result.stdout
    overrides = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert json.loads(overrides.read_text()) == json.loads((ROOT / "config" / "jupyterlab-overrides.json").read_text())
    server = json.loads((prefix / "etc" / "jupyter" / "jupyter_server_config.d" / "posenc.json").read_text())
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert server["LabApp"]["news_url"] is None and "--LabApp.news_url=None" in makefile
    assert f"--LabApp.check_for_updates_class={server['LabApp']['check_for_updates_class']}" in makefile


# --- the release -------------------------------------------------------------------------


def test_the_changelog_names_the_version_in_pyproject_citation_and_readme():
    version = PYPROJECT["project"]["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)$", changelog, re.M)
    assert releases and releases[0][0] == version, releases
    assert "## [Unreleased]" in changelog
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert str(cff["version"]) == version and str(cff["date-released"]) == releases[0][1]
    assert f"version = {{{version}}}" in README
    # every lesson the course holds is in the release's entry, or added under Unreleased since
    entry = changelog.split(f"## [{version}]", 1)[1].split("\n## [", 1)[0]
    unreleased = changelog.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    for item in nav.entries(ROOT):
        assert f"{item.number} " in entry or f"Notebook {item.number}," in unreleased, (
            f"notebook {item.number} is neither in the changelog's {version} entry nor added under Unreleased"
        )


def test_pre_commit_runs_ruff_at_the_locks_version():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    repos = {r["repo"]: r for r in config["repos"]}
    ruff = repos["https://github.com/astral-sh/ruff-pre-commit"]
    assert ruff["rev"] == "v" + _lock()["ruff"]
    assert "ruff" in [hook["id"] for hook in ruff["hooks"]]
    # ruff format on the notebooks, at the same pinned version, as make lint checks it
    (fmt,) = [hook for hook in ruff["hooks"] if hook["id"] == "ruff-format"]
    assert fmt["files"] == "^notebooks/"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "ruff format --check notebooks" in makefile


def test_readme_lists_the_install_only_targets_next_to_lab_and_test():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ["install-lessons", "install-lab", "install-book", "install", "lab", "test", "book"]:
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), target
        assert f"make {target}" in README, target
    # make book installs the book's set, not everything
    assert re.search(r"^book: \$\(VENV\)/\.installed-book$", makefile, re.M)


def test_the_version_is_pyprojects():
    """``posenc_helpers.__version__`` is the installed metadata's, which pyproject.toml sets (a stale
    editable install fails here: run ``make install``)."""
    assert posenc_helpers.__version__ == PYPROJECT["project"]["version"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built once per module, offline (this environment's setuptools, no build isolation, no index)."""
    folder = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(folder), "."]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    (built,) = folder.glob("*.whl")
    return built


def _metadata(wheel: Path) -> email.message.Message:
    """The wheel's METADATA: the headers, and the long description as the body."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))


@pytest.mark.slow
def test_the_wheel_is_pure_python_and_its_core_needs_no_jax(wheel):
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    requires = _metadata(wheel).get_all("Requires-Dist")
    core = sorted(canonicalize_name(Requirement(r).name) for r in requires if "extra ==" not in r)
    assert core == ["ipywidgets", "matplotlib", "ml-dtypes", "numpy"]
    lab = sorted(canonicalize_name(Requirement(r).name) for r in requires if 'extra == "jax"' in r)
    assert lab == ["jax", "jaxlib", "optax", "tqdm"]


# --- the PyPI page -----------------------------------------------------------------------


def _link_targets(markdown: str) -> list[str]:
    """Every link and image target: ``[text](target)``, ``![alt](target)``, ``[label]: target``, ``href=``, ``src=``."""
    targets = re.findall(r"\]\(\s*<?([^)\s>]*)", markdown)
    targets += re.findall(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)", markdown, re.M)
    targets += [m[1] for m in re.findall(r"\b(?:href|src)\s*=\s*([\"']?)([^\"'\s>]*)", markdown, re.I)]
    return targets


def _relative_targets(markdown: str) -> list[str]:
    """The link and image targets a package index cannot follow: every one not starting with https://."""
    return [t for t in _link_targets(markdown) if not t.startswith("https://")]


def test_a_relative_link_or_image_is_caught():
    text = '[a](LICENSE) ![b](../figures/x.png "t") [c] <img src="y.png"> <a href=notebooks/>n</a>\n\n[c]: docs/z.md\n'
    assert sorted(_relative_targets(text)) == ["../figures/x.png", "LICENSE", "docs/z.md", "notebooks/", "y.png"]
    assert _relative_targets("[ok](https://example.org/a) ![ok](https://example.org/b.png)") == []


def _pypi_example() -> str:
    """The usage example of docs/PYPI.md: its one ``python`` code block, in doctest form."""
    (example,) = re.findall(r"^```python\n(.*?)^```$", PYPI.read_text(encoding="utf-8"), re.S | re.M)
    return example


def _run_example(python: str | Path, folder: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run docs/PYPI.md's example under doctest with ``python``, from ``folder`` (outside the repository)."""
    path = folder / "pypi_example.txt"
    path.write_text(_pypi_example(), encoding="utf-8")
    command = [str(python), "-m", "doctest", "-o", "NORMALIZE_WHITESPACE", str(path)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def test_the_pypi_page_has_only_absolute_links_into_the_repository_and_a_working_example(tmp_path):
    text = PYPI.read_text(encoding="utf-8")
    assert PYPROJECT["project"]["readme"] == {"file": "docs/PYPI.md", "content-type": "text/markdown"}
    assert _relative_targets(text) == []
    # the repository is pyproject's; a link to one of its files opens a file it has
    repo, urls = nav.repository(), PYPROJECT["project"]["urls"]
    own = [t for t in _link_targets(text) if t.startswith("https://github.com/")]
    assert own and all(t == repo or t.startswith(repo + "/") for t in own), own
    for target in own:
        if target.startswith(f"{repo}/blob/"):
            path = target.removeprefix(f"{repo}/blob/{nav.BRANCH}/")
            assert path != target and (ROOT / path).is_file(), target
    assert urls["Issues"] in own and urls["Documentation"] in _link_targets(text)
    # both installs, the extra by its name in pyproject, and the licences of LICENSE and LICENSE-TEXT
    assert "pip install posenc_helpers " in text and 'pip install "posenc_helpers[jax]"' in text
    assert set(PYPROJECT["project"]["optional-dependencies"]) >= {"jax"}
    assert PYPROJECT["project"]["license"] == "MIT" and "MIT licence" in text
    assert "CC BY 4.0" in text and "(CC BY 4.0)" in (ROOT / "LICENSE-TEXT").read_text(encoding="utf-8")
    # the example is 3 to 6 lines of code and its outputs are what the package prints
    assert 3 <= _pypi_example().count(">>> ") <= 6
    result = _run_example(sys.executable, tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


@pytest.mark.slow
def test_the_wheels_description_is_the_pypi_page_and_its_version_is_pyprojects(wheel):
    meta = _metadata(wheel)
    version = PYPROJECT["project"]["version"]
    assert meta["Version"] == version == posenc_helpers.__version__
    assert meta["Description-Content-Type"] == "text/markdown"
    description = meta.get_payload()
    assert description == PYPI.read_text(encoding="utf-8")
    assert _relative_targets(description) == []


# --- the wheel in a fresh environment ----------------------------------------------------


def _exception_lines(stderr: str) -> list[str]:
    """The lines of a traceback that name an exception (``ImportError: …``, ``ModuleNotFoundError: …``)."""
    return [line for line in stderr.splitlines() if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Warning)\b", line)]


@pytest.mark.slow
def test_the_wheel_installs_offline_into_a_fresh_environment_and_runs_without_jax(wheel, tmp_path):
    """A pip user's install: the wheel and its dependencies only, at the lock's versions, from uv's cache.

    The environment has no system site-packages and no user site, and every command runs outside the
    repository, so a dependency the wheel forgot to declare fails here. Offline: when uv's cache lacks a
    package (it is filled by ``make install``), the test is skipped and says so.
    """
    pytest.importorskip("uv")
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    uv = [sys.executable, "-m", "uv"]
    result = subprocess.run(
        [*uv, "venv", "--quiet", "--python", sys.executable, str(venv)], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text(encoding="utf-8")
    constraints = tmp_path / "constraints.txt"
    lock = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    constraints.write_text("\n".join(line for line in lock if not line.startswith("-e ")) + "\n", encoding="utf-8")
    python = venv / "bin" / "python"
    install = [*uv, "pip", "install", "--offline", "--quiet", "--python", str(python), "-c", str(constraints), str(wheel)]
    result = subprocess.run(install, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0 and "network was disabled" in result.stderr:
        pytest.skip(f"uv's cache lacks a dependency of the wheel (run make install once online): {result.stderr[-500:]}")
    assert result.returncode == 0, result.stderr[-2000:]

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=tmp_path, env=env, input=stdin, capture_output=True, text=True, timeout=120)

    # the package is the wheel's, in the fresh environment, and it knows its version
    code = "import posenc_helpers, sys; print(posenc_helpers.__version__); print(posenc_helpers.__file__.startswith(sys.prefix))"
    result = run(str(python), "-c", code)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [PYPROJECT["project"]["version"], "True"], result.stdout
    # no JAX in it, and the lab says so in one line: pip's command first, then the clone's
    result = run(str(python), "-c", "import jax")
    assert result.returncode == 1 and "No module named 'jax'" in result.stderr, result.stderr
    result = run(str(python), "-c", "import posenc_helpers.lab")
    assert result.returncode == 1, result.stderr
    assert _exception_lines(result.stderr) == [f"ImportError: {LAB_MESSAGE}"], result.stderr
    assert "During handling of the above exception" not in result.stderr
    assert "The above exception was the direct cause" not in result.stderr
    # the PyPI page's example and its `posenc` command work as the page says
    result = _run_example(python, tmp_path, env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    result = run(str(venv / "bin" / "posenc"), stdin="PE 2 4\n")
    assert result.returncode == 0 and result.stdout == "0.9093 -0.4161 0.0200 0.9998\n", result.stdout + result.stderr
    assert 'echo "PE 2 4" | posenc` prints `0.9093 -0.4161 0.0200 0.9998`' in PYPI.read_text(encoding="utf-8")
