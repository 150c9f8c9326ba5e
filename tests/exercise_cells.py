"""Reading the exercise notebooks without a kernel: their cells, sources, stored outputs and answer code.

Shared by the exercise tests (tests/test_exercise_notebooks*.py). A notebook's
generated navigation cells are left out, so cell lists compare across a lesson
and its solution.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOLUTIONS = NOTEBOOKS / "solutions"
#: The first line of every starter's check output: the checker's "not implemented yet" sentence.
NOT_IMPLEMENTED = "Not implemented yet: it still raises NotImplementedError."


def cells(path: Path) -> list[dict]:
    """The notebook's cells without the generated ones (navigation, and the Colab set-up cell)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"]
            if not "".join(c["source"]).startswith("<!--NAVIGATION-->") and c.get("id") != "colab-setup"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def by_id(notebook: Path | Iterable[dict]) -> dict[str, dict]:
    """The cells of a notebook (a path) or of a list of cells, by cell id."""
    return {c["id"]: c for c in (cells(notebook) if isinstance(notebook, Path) else notebook)}


def function_body(cell: dict, name: str) -> list[ast.stmt]:
    """The statements of the function ``name`` defined in ``cell``, without its docstring."""
    tree = ast.parse(source(cell))
    (fn,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


def solution_lines(cell: dict, name: str) -> list[str]:
    """What a solution must not give away: each line of the function's code, and the text of each comment."""
    lines = []
    for stmt in function_body(cell, name):
        lines += [line.strip() for line in ast.unparse(stmt).splitlines()]
    lines += [line.split("#", 1)[1].strip() for line in source(cell).splitlines() if "#" in line]
    return lines


def only_raises_not_implemented(cell: dict, name: str) -> bool:
    """True when the function's body (after its docstring) is a single ``raise NotImplementedError(...)``."""
    body = function_body(cell, name)
    return (len(body) == 1 and isinstance(body[0], ast.Raise) and isinstance(body[0].exc, ast.Call)
            and getattr(body[0].exc.func, "id", None) == "NotImplementedError")


def outputs(cell: dict) -> str:
    """The text a code cell stored (streams and text/plain results); it must not have stored an error."""
    assert all(o["output_type"] != "error" for o in cell["outputs"]), f"{cell['id']} stored an error"
    return "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                   for o in cell["outputs"])


def assert_friendly(cell_list: Iterable[dict]) -> None:
    """No stored output of these cells is an error, a stderr stream or a traceback."""
    for cell in cell_list:
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", cell["id"]
            assert output.get("name") != "stderr", cell["id"]
            assert "Traceback" not in json.dumps(output), cell["id"]


def namespace(imports: str, answers: Iterable[str], replace: dict[str, str] | None = None) -> dict:
    """Run an imports cell and then the answer cells' code, kernel-free, in one fresh namespace.

    IPython's ``%`` lines of the imports are skipped. ``replace`` edits the
    answers first (a learner's slip typed into the code); each text it
    replaces must occur in some answer, so a slip cannot silently stop
    matching the code it was written for.
    """
    answers = list(answers)
    for old in replace or {}:
        assert any(old in code for code in answers), f"the slip {old!r} no longer matches the answer's code"
    ns: dict = {}
    exec("\n".join(line for line in imports.splitlines() if not line.startswith("%")), ns)
    for code in answers:
        for old, new in (replace or {}).items():
            code = code.replace(old, new)
        exec(code, ns)
    return ns
