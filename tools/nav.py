"""Generated navigation: ``python -m tools.nav [--check]`` (``make nav``).

The order of the notebooks comes from their file names
(``notebooks/NN-slug.ipynb``) and each title from the first ``#`` heading of
the notebook. The script rewrites

* the first and the last cell of every numbered notebook: a markdown cell that
  starts with ``<!--NAVIGATION-->`` and links previous · contents · next (a
  solution notebook links back to its exercise and to the contents); the first
  one also opens the notebook in Colab;
* the Colab set-up cell after the first one (id ``colab-setup``): a code cell
  that, in Colab only, installs the package with ``%pip`` from the repository;
* the README's contents table, between ``<!--CONTENTS-->`` and
  ``<!--/CONTENTS-->``, with a Colab and a Binder link per lesson; solution
  notebooks under ``notebooks/solutions/`` are listed after it;
* every copy of the repository's address: the README and ``CITATION.cff``
  take it from ``pyproject.toml``'s ``[project.urls]`` (``Source``), so setting
  it there once and running ``make nav`` fixes every link.

It is idempotent. ``--check`` changes nothing and exits 1 if any file would
change, which is what the test suite runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!--NAVIGATION-->"
START, END = "<!--CONTENTS-->", "<!--/CONTENTS-->"
NUMBERED = re.compile(r"^(\d\d)-[a-z0-9-]+\.ipynb$")

#: The branch every launch link opens.
BRANCH = "main"
#: The id of the generated Colab set-up cell (the book removes it).
COLAB_CELL_ID = "colab-setup"
#: A GitHub repository address: https://github.com/OWNER/NAME
GITHUB = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def project_urls(root: Path = ROOT) -> dict[str, str]:
    """``pyproject.toml``'s ``[project.urls]``: the one place the addresses are written.

    A ``root`` without its own ``pyproject.toml`` (a test's copy of the notebooks) uses the repository's.
    """
    import tomllib

    path = root / "pyproject.toml" if (root / "pyproject.toml").is_file() else ROOT / "pyproject.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))["project"]["urls"]


def repository(root: Path = ROOT) -> str:
    """The repository's address, ``[project.urls] Source``, e.g. ``https://github.com/posenc/posenc``."""
    url = project_urls(root)["Source"].rstrip("/")
    if not GITHUB.fullmatch(url):
        raise ValueError(f"pyproject.toml [project.urls] Source must be https://github.com/OWNER/NAME, got {url!r}")
    return url


def slug(root: Path = ROOT) -> str:
    """``OWNER/NAME`` of the repository."""
    return repository(root).removeprefix("https://github.com/")


def colab_url(relpath: str, root: Path = ROOT) -> str:
    """Colab's address for a notebook of the repository (Colab opens GitHub files by path).

    >>> colab_url("notebooks/04-rope.ipynb").removeprefix("https://colab.research.google.com/github/" + slug())
    '/blob/main/notebooks/04-rope.ipynb'
    """
    return f"https://colab.research.google.com/github/{slug(root)}/blob/{BRANCH}/{relpath}"


def binder_url(relpath: str, root: Path = ROOT) -> str:
    """mybinder.org's address for a notebook, opened in JupyterLab (configuration in binder/).

    >>> binder_url("notebooks/04-rope.ipynb").removeprefix("https://mybinder.org/v2/gh/" + slug())
    '/main?urlpath=lab/tree/notebooks/04-rope.ipynb'
    """
    return f"https://mybinder.org/v2/gh/{slug(root)}/{BRANCH}?urlpath=lab/tree/{relpath}"


def needs_lab(nb: dict) -> bool:
    """True if the notebook imports the extrapolation lab (so it needs the ``jax`` extra)."""
    code = "\n".join(_source(c) for c in nb["cells"] if c["cell_type"] == "code" and c.get("id") != COLAB_CELL_ID)
    return bool(re.search(r"posenc_helpers\.lab\b|from posenc_helpers import .*\blab\b", code))


def colab_cell_source(lab: bool = False, root: Path = ROOT) -> str:
    """The Colab set-up cell: in Colab only, ``%pip`` installs the package from the repository.

    >>> print(colab_cell_source().replace(repository(), "REPO"))
    # Colab only: install the course's package (elsewhere this cell does nothing).
    import sys
    <BLANKLINE>
    PACKAGE = "posenc_helpers @ git+REPO@main"
    if "google.colab" in sys.modules:
        %pip install --quiet "{PACKAGE}"
    """
    extra = "[jax]" if lab else ""
    return (
        "# Colab only: install the course's package (elsewhere this cell does nothing).\n"
        "import sys\n"
        "\n"
        f'PACKAGE = "posenc_helpers{extra} @ git+{repository(root)}@{BRANCH}"\n'
        'if "google.colab" in sys.modules:\n'
        '    %pip install --quiet "{PACKAGE}"'
    )


@dataclass
class Entry:
    path: Path
    number: str
    title: str


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def title_of(nb: dict, path: Path) -> str:
    """The text of the first ``# `` heading outside the navigation cells."""
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown" or _source(cell).startswith(MARK):
            continue
        for line in _source(cell).splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    raise ValueError(f"{path} has no '# ' title heading")


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def entries(root: Path = ROOT) -> list[Entry]:
    found = []
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        match = NUMBERED.match(path.name)
        if match:
            found.append(Entry(path, match.group(1), title_of(_load(path), path)))
    return found


def solutions(root: Path = ROOT) -> list[Entry]:
    found = []
    for path in sorted((root / "notebooks" / "solutions").glob("*.ipynb")):
        found.append(Entry(path, path.name[:2], title_of(_load(path), path)))
    return found


def nav_line(items: list[Entry], index: int) -> str:
    parts = []
    if index > 0:
        prev = items[index - 1]
        parts.append(f"&lt; [{prev.title}]({prev.path.name})")
    parts.append("[Contents](../README.md#contents)")
    if index < len(items) - 1:
        nxt = items[index + 1]
        parts.append(f"[{nxt.title}]({nxt.path.name}) &gt;")
    return f"{MARK}\n" + " | ".join(parts)


def solution_nav_line(exercise: Entry | None) -> str:
    """A solution notebook links back to its exercise and to the contents."""
    parts = []
    if exercise is not None:
        parts.append(f"&lt; [Back to the exercise: {exercise.title}](../{exercise.path.name})")
    parts.append("[Contents](../../README.md#contents)")
    return f"{MARK}\n" + " | ".join(parts)


def _nav_cell(text: str, which: str) -> dict:
    return {"cell_type": "markdown", "id": f"nav-{which}", "metadata": {}, "source": text}


def _colab_cell(lab: bool, root: Path) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": COLAB_CELL_ID,
        "metadata": {},
        "outputs": [],
        "source": colab_cell_source(lab, root),
    }


def _generated(cell: dict) -> bool:
    return (cell["cell_type"] == "markdown" and _source(cell).startswith(MARK)) or cell.get("id") == COLAB_CELL_ID


def with_navigation(nb: dict, text: str, relpath: str | None = None, root: Path = ROOT) -> dict:
    """The notebook with its navigation cells; with ``relpath``, an Open in Colab link and the set-up cell."""
    cells = [c for c in nb["cells"] if not _generated(c)]
    nb = dict(nb)
    top = [_nav_cell(text, "top")]
    if relpath is not None:
        link = f"[Open in Colab]({colab_url(relpath, root)})"
        top = [_nav_cell(f"{text}\n\n{link}", "top"), _colab_cell(needs_lab(nb), root)]
    nb["cells"] = top + cells + [_nav_cell(text, "bottom")]
    return nb


def _dump(nb: dict) -> str:
    """Exactly what nbformat writes (sorted keys, sources split into lines), so runs don't churn."""
    import nbformat

    return nbformat.writes(nbformat.from_dict(nb), version=nbformat.NO_CONVERT) + "\n"


def contents_table(items: list[Entry], sols: list[Entry], root: Path = ROOT) -> str:
    lines = [START, "", "| # | Notebook | Run it online |", "|---|---|---|"]
    for e in items:
        rel = f"notebooks/{e.path.name}"
        launch = f"[Colab]({colab_url(rel, root)}) · [Binder]({binder_url(rel, root)})"
        lines.append(f"| {e.number} | [{e.title}]({rel}) | {launch} |")
    if sols:
        lines += ["", "Worked solutions:", ""]
        for e in sols:
            lines.append(f"- [{e.title}](notebooks/solutions/{e.path.name})")
    lines += ["", END]
    return "\n".join(lines)


def planned_changes(root: Path = ROOT) -> dict[Path, str]:
    """Every file whose text would change, with its new text."""
    changes: dict[Path, str] = {}
    items = entries(root)
    for index, entry in enumerate(items):
        old = entry.path.read_text(encoding="utf-8")
        rel = entry.path.relative_to(root).as_posix()
        new = _dump(with_navigation(json.loads(old), nav_line(items, index), rel, root))
        if new != old:
            changes[entry.path] = new
    for sol in solutions(root):
        exercise = next((e for e in items if e.number == sol.number), None)
        old = sol.path.read_text(encoding="utf-8")
        rel = sol.path.relative_to(root).as_posix()
        new = _dump(with_navigation(json.loads(old), solution_nav_line(exercise), rel, root))
        if new != old:
            changes[sol.path] = new
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise ValueError(f"{readme} needs the markers {START} and {END} around its contents table")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new_readme = with_repository(head + contents_table(items, solutions(root), root) + tail, root)
    if new_readme != text:
        changes[readme] = new_readme
    # the other files that hold the repository's address, each with its rewrite
    for path, rewrite in ((root / "CITATION.cff", with_repository), (root / "CHANGELOG.md", with_compare_links),
                          (root / "docs" / "PYPI.md", with_own_links)):
        if path.is_file():
            old = path.read_text(encoding="utf-8")
            new = rewrite(old, root)
            if new != old:
                changes[path] = new
    return changes


_LINK_LINE = re.compile(r"^\[[^\]]+\]: \S+$")


def with_compare_links(text: str, root: Path = ROOT) -> str:
    r"""CHANGELOG text with its link lines at the end generated from its headings, as Keep a Changelog has them.

    ``[Unreleased]`` compares the newest release's tag ``vX.Y.Z`` with ``HEAD``, each release the tag before it
    with its own, and the oldest release links to its tag.

    >>> text = "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2027-01-01\n\n## [0.1.0] - 2026-12-01\n"
    >>> print(with_compare_links(text).split("\n\n")[-1].replace(repository(), "REPO"))
    [Unreleased]: REPO/compare/v0.2.0...HEAD
    [0.2.0]: REPO/compare/v0.1.0...v0.2.0
    [0.1.0]: REPO/releases/tag/v0.1.0
    <BLANKLINE>
    """
    repo = repository(root)
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, re.M)
    lines = text.rstrip("\n").split("\n")
    while lines and (not lines[-1].strip() or _LINK_LINE.match(lines[-1])):
        lines.pop()
    links = []
    if re.search(r"^## \[Unreleased\]", text, re.M):
        links.append(f"[Unreleased]: {repo}/compare/v{versions[0]}...HEAD" if versions else f"[Unreleased]: {repo}/commits/main")
    links += [f"[{newer}]: {repo}/compare/v{older}...v{newer}" for newer, older in itertools.pairwise(versions)]
    if versions:
        links.append(f"[{versions[-1]}]: {repo}/releases/tag/v{versions[-1]}")
    return "\n".join(lines) + "\n\n" + "\n".join(links) + "\n"


def with_own_links(text: str, root: Path = ROOT) -> str:
    """The package page's own addresses set to pyproject's: every GitHub repository link, and the website.

    The page (docs/PYPI.md) links no other project on GitHub, so every ``https://github.com/OWNER/NAME`` in it is
    the project's repository; its ``https://OWNER.github.io/NAME/`` is ``[project.urls] Documentation``.

    >>> out = with_own_links("[r](https://github.com/old/n/issues) [w](https://old.github.io/n/)")
    >>> out == f"[r]({repository()}/issues) [w]({project_urls()['Documentation']})"
    True
    """
    text = GITHUB.sub(repository(root), text)
    return re.sub(r"https://[A-Za-z0-9-]+\.github\.io/[A-Za-z0-9_.-]+/", project_urls(root)["Documentation"], text)


def with_repository(text: str, root: Path = ROOT) -> str:
    """The project's own addresses in README or CITATION text set to pyproject's.

    They are: the tests badge (``https://github.com/OWNER/NAME/actions/...``), the BibTeX
    entry's ``url = {...}`` and CITATION's ``repository-code`` and ``url``. Links to other
    projects are left alone.

    >>> text = "[![t](https://github.com/old/n/actions/x.svg)](https://github.com/old/n/actions/y) [uv](https://github.com/astral-sh/uv)"
    >>> out = with_repository(text)
    >>> out.count(repository() + "/actions/"), "https://github.com/astral-sh/uv" in out
    (2, True)
    """
    repo = repository(root)
    text = re.sub(GITHUB.pattern + r"(?=/actions/)", repo, text)
    text = re.sub(r"^(\s*url\s*=\s*\{)" + GITHUB.pattern + r"(\})", lambda m: m.group(1) + repo + m.group(2), text, flags=re.M)
    text = re.sub(r'^repository-code: ".*"$', f'repository-code: "{repo}"', text, flags=re.M)
    if text.startswith("cff-version"):
        text = re.sub(r'^url: ".*"$', f'url: "{project_urls(root)["Documentation"]}"', text, flags=re.M)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.nav", description="Write the navigation cells and README contents.")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is out of date")
    parser.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    changes = planned_changes(Path(options.root))
    for path, text in changes.items():
        if options.check:
            print(f"out of date: {path} (run: make nav)")
        else:
            path.write_text(text, encoding="utf-8")
            print(f"updated {path}")
    return 1 if (options.check and changes) else 0


if __name__ == "__main__":
    sys.exit(main())
