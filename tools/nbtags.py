"""nbval's comment markers to cell tags: ``python -m tools.nbtags [--check] [NOTEBOOK ...]``.

nbval reads a marker either as a comment line in a code cell (``# NBVAL_IGNORE_OUTPUT``)
or as a cell metadata tag (``nbval-ignore-output``). A comment shows on the page (in
JupyterLab and in the book); a tag does not. This tool moves every whole-line marker
comment of a code cell into the cell's tags and deletes the line (and any blank lines it
leaves at the top of the cell). It is idempotent: a converted notebook is left unchanged.
Without arguments it converts every notebook under ``notebooks/``. ``--check`` changes
nothing and exits 1 if a notebook still holds a marker comment.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The comments nbval honours, and the tag nbval reads for each.
MARKERS = {
    "NBVAL_IGNORE_OUTPUT": "nbval-ignore-output",
    "NBVAL_CHECK_OUTPUT": "nbval-check-output",
    "NBVAL_RAISES_EXCEPTION": "nbval-raises-exception",
    "NBVAL_SKIP": "nbval-skip",
    "PYTEST_VALIDATE_IGNORE_OUTPUT": "nbval-ignore-output",
}


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def marker_of(line: str) -> str | None:
    """The nbval marker a source line is, or None.

    >>> marker_of("# NBVAL_IGNORE_OUTPUT"), marker_of("  #NBVAL_SKIP "), marker_of("x = 1  # NBVAL_SKIP")
    ('NBVAL_IGNORE_OUTPUT', 'NBVAL_SKIP', None)
    """
    stripped = line.strip()
    if not stripped.startswith("#"):
        return None
    word = stripped.lstrip("#").strip()
    return word if word in MARKERS else None


def convert_cell(cell: dict) -> bool:
    """Move the cell's marker comments into its tags; True if the cell changed.

    >>> cell = {"cell_type": "code", "metadata": {}, "source": "# NBVAL_IGNORE_OUTPUT\\ndemo = f()\\ndemo"}
    >>> convert_cell(cell), cell["source"], cell["metadata"]["tags"]
    (True, 'demo = f()\\ndemo', ['nbval-ignore-output'])
    >>> convert_cell(cell)
    False
    """
    if cell.get("cell_type") != "code":
        return False
    lines = _source(cell).splitlines(keepends=True)
    markers = [marker_of(line) for line in lines]
    if not any(markers):
        return False
    kept = [line for line, marker in zip(lines, markers, strict=True) if marker is None]
    while kept and not kept[0].strip():
        kept.pop(0)
    cell["source"] = "".join(kept)
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    for marker in markers:
        if marker and MARKERS[marker] not in tags:
            tags.append(MARKERS[marker])
    return True


def convert(nb: dict) -> bool:
    """Convert every code cell of a notebook (a dict, changed in place); True if any changed."""
    return any([convert_cell(cell) for cell in nb["cells"]])


def _dump(nb: dict) -> str:
    """Exactly what nbformat writes (as tools.nav does), so a run does not churn the file."""
    import nbformat

    return nbformat.writes(nbformat.from_dict(nb), version=nbformat.NO_CONVERT) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.nbtags", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to convert (default: every one under notebooks/)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a marker comment is left")
    options = parser.parse_args(argv)
    paths = [Path(p) for p in options.notebooks] or sorted((ROOT / "notebooks").rglob("*.ipynb"))
    left = 0
    for path in paths:
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        if not convert(nb):
            continue
        if options.check:
            print(f"marker comments left: {path} (run: python -m tools.nbtags {path})")
            left += 1
        else:
            path.write_text(_dump(nb), encoding="utf-8")
            print(f"converted {path}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
