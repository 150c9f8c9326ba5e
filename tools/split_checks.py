"""Move long runs of checks out of lesson cells: ``python -m tools.split_checks [--check] [PATH ...]``.

A learner called the long ``assert`` blocks at the end of lesson cells "noise". Every check stays (nbval runs
them, so a stated number that stops holding fails the tests), but a lesson cell that ends with :data:`LIMIT` or
more ``assert`` statements after its own code has them moved into a short code cell of their own, right after
it, headed by :data:`HEADER`: the explanation reads first, the checks read as what they are. The lesson cell
keeps its outputs (an ``assert`` prints nothing); the new cell has none. ``--check`` changes nothing and exits 1
if a cell would be split (tests/test_generated.py runs it). Idempotent.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: A lesson cell may end with fewer checks than this; from this many on they get a cell of their own.
LIMIT = 4

#: The first line of a cell of checks.
HEADER = "# checks: the numbers the text above states (nbval runs them)"


def _statement_starts(lines) -> list[int]:
    # indices of lines that start a top-level statement (not indented, not a closing bracket, not blank)
    return [i for i, line in enumerate(lines) if line and not line[0].isspace() and line[0] not in ")]}"]


def split_point(source: str) -> int | None:
    """The line index where a cell's trailing run of ``assert`` statements (with their comments) starts, if that run
    holds at least :data:`LIMIT` asserts and the cell has code before it; else None.

    >>> split_point("x = 1\\nprint(x)\\nassert x\\nassert x\\n# and\\nassert x\\nassert x\\n")
    2
    >>> split_point("x = 1\\nassert x\\n") is None, split_point("assert 1\\nassert 1\\nassert 1\\nassert 1\\n") is None
    (True, True)
    """
    lines = source.rstrip("\n").split("\n")
    if lines and lines[0] == HEADER:
        return None
    starts = _statement_starts(lines)
    first, asserts = None, 0
    for i in reversed(starts):
        line = lines[i]
        if line.startswith("assert "):
            first, asserts = i, asserts + 1
        elif line.startswith("#"):
            continue
        else:
            break
    if first is None or asserts < LIMIT:
        return None
    while first > 0 and lines[first - 1].startswith("#"):  # the comments just above belong to the checks
        first -= 1
    if not any(line.strip() and not line.startswith("#") for line in lines[:first]):
        return None  # a cell of checks only: nothing to move them out of
    if _would_display("\n".join(lines[:first])):
        return None  # the lesson cell would end on an expression and show a value it never showed
    return first


def _would_display(source: str) -> bool:
    """Whether a cell of ``source`` ends on an expression Jupyter shows (anything but a ``print(...)`` call).

    >>> _would_display("x = 1\\nfig"), _would_display("x = 1\\nprint(x)"), _would_display("x = 1")
    (True, False, False)
    """
    import ast

    body = ast.parse(source).body
    if not body or not isinstance(body[-1], ast.Expr):
        return False
    value = body[-1].value
    return not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print")


def split_notebook(path: Path, *, write: bool) -> int:
    """Split every lesson cell of ``path`` whose trailing checks reach :data:`LIMIT`; returns how many."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    out, changed = [], 0
    for cell in nb.cells:
        cut = split_point(cell.source) if cell.cell_type == "code" else None
        _renumber(cell, changed)  # each new cell before this one ran once, as a re-execution would number them
        if cut is None:
            out.append(cell)
            continue
        lines = cell.source.rstrip("\n").split("\n")
        cell.source = "\n".join(lines[:cut]).rstrip("\n")
        checks = nbformat.v4.new_code_cell("\n".join([HEADER, *lines[cut:]]))
        checks.metadata = {}
        if cell.get("execution_count") is not None:
            checks.execution_count = cell.execution_count + 1
        out += [cell, checks]
        changed += 1
    if changed and write:
        nb.cells = out
        nbformat.write(nb, path)
    return changed


def _renumber(cell, shift: int) -> None:
    if not shift or cell.cell_type != "code" or cell.get("execution_count") is None:
        return
    cell.execution_count += shift
    for output in cell.outputs:
        if output.get("execution_count") is not None:
            output.execution_count += shift


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.split_checks", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="notebooks (default: every notebook under notebooks/)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a cell would be split")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.paths] or sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb")
                                                    if ".ipynb_checkpoints" not in p.parts)
    total = 0
    for path in paths:
        n = split_notebook(path, write=not args.check)
        if n:
            shown = path.relative_to(ROOT) if path.is_absolute() and path.is_relative_to(ROOT) else path
            print(f"{shown}: {n} cell(s) "
                  f"{'would be split' if args.check else 'split'}")
        total += n
    return 1 if args.check and total else 0


if __name__ == "__main__":
    sys.exit(main())
