"""Generated navigation: ``python -m tools.nav [--check]`` (``make nav``).

The order of the notebooks comes from their file names
(``notebooks/NN-slug.ipynb``) and each title from the first ``#`` heading of
the notebook. The script rewrites

* the first and the last cell of every numbered notebook: a markdown cell that
  starts with ``<!--NAVIGATION-->`` and links previous · contents · next (a
  solution notebook links back to its exercise and to the contents);
* the README's contents table, between ``<!--CONTENTS-->`` and
  ``<!--/CONTENTS-->``; solution notebooks under ``notebooks/solutions/`` are
  listed after it.

It is idempotent. ``--check`` changes nothing and exits 1 if any file would
change, which is what the test suite runs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!--NAVIGATION-->"
START, END = "<!--CONTENTS-->", "<!--/CONTENTS-->"
NUMBERED = re.compile(r"^(\d\d)-[a-z0-9-]+\.ipynb$")


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


def with_navigation(nb: dict, text: str) -> dict:
    cells = [c for c in nb["cells"] if not (c["cell_type"] == "markdown" and _source(c).startswith(MARK))]
    nb = dict(nb)
    nb["cells"] = [_nav_cell(text, "top")] + cells + [_nav_cell(text, "bottom")]
    return nb


def _dump(nb: dict) -> str:
    """Exactly what nbformat writes (sorted keys, sources split into lines), so runs don't churn."""
    import nbformat

    return nbformat.writes(nbformat.from_dict(nb), version=nbformat.NO_CONVERT) + "\n"


def contents_table(items: list[Entry], sols: list[Entry]) -> str:
    lines = [START, "", "| # | Notebook |", "|---|---|"]
    for e in items:
        lines.append(f"| {e.number} | [{e.title}](notebooks/{e.path.name}) |")
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
        new = _dump(with_navigation(json.loads(old), nav_line(items, index)))
        if new != old:
            changes[entry.path] = new
    for sol in solutions(root):
        exercise = next((e for e in items if e.number == sol.number), None)
        old = sol.path.read_text(encoding="utf-8")
        new = _dump(with_navigation(json.loads(old), solution_nav_line(exercise)))
        if new != old:
            changes[sol.path] = new
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise ValueError(f"{readme} needs the markers {START} and {END} around its contents table")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new_readme = head + contents_table(items, solutions(root)) + tail
    if new_readme != text:
        changes[readme] = new_readme
    return changes


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
