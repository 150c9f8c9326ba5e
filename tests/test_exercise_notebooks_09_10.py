"""The exercises at the end of notebooks 09 and 10, and their solution notebooks.

Each lesson ends with an exercise section (cells with ids ``exNN-…``); its
solution notebook under notebooks/solutions/ holds a title cell and the same
section with the answer filled in. nbval runs all of them; these tests check
what nbval cannot: the starter gives nothing away, the two agree except in the
answer, the stored starter output is the checker's "not implemented yet"
message, and a learner's slip typed into the solution's code gets its code.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from posenc_helpers.checks import check_collisions, check_new_base

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = {
    "09": {
        "lesson": ROOT / "notebooks" / "09-long-context.ipynb",
        "solution": ROOT / "notebooks" / "solutions" / "09-long-context-solution.ipynb",
        "prefix": "ex09-",
        "name": "new_base",
        "check": check_new_base,
        "title": "# Exercise solution: NTK-aware scaling's base\n",
    },
    "10": {
        "lesson": ROOT / "notebooks" / "10-precision.ipynb",
        "solution": ROOT / "notebooks" / "solutions" / "10-precision-solution.ipynb",
        "prefix": "ex10-",
        "name": "collisions",
        "check": check_collisions,
        "title": "# Exercise solution: which positions collide in bfloat16\n",
    },
}


def _cells(path: Path) -> list[dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if not "".join(c["source"]).startswith("<!--NAVIGATION-->")]


def _source(cell) -> str:
    return "".join(cell["source"])


def _section(ex) -> list[dict]:
    return [c for c in _cells(ex["lesson"]) if c["id"].startswith(ex["prefix"])]


def _by_id(cells) -> dict[str, dict]:
    return {c["id"]: c for c in cells}


def _answer_id(ex) -> str:
    return ex["prefix"] + "answer"


def _namespace(ex, cells, replace=None) -> dict:
    """Run the section's imports and its answer cell, kernel-free; ``replace`` edits the answer code first."""
    cells = _by_id(cells)
    ns: dict = {}
    exec(_source(cells[ex["prefix"] + "imports"]), ns)
    code = _source(cells[_answer_id(ex)])
    for old, new in (replace or {}).items():
        assert old in code, f"the slip {old!r} no longer matches the solution's code"
        code = code.replace(old, new)
    exec(code, ns)
    return ns


def _function_body(cell, name) -> list[ast.stmt]:
    tree = ast.parse(_source(cell))
    (fn,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body


def _outputs(cell) -> str:
    assert all(o["output_type"] != "error" for o in cell["outputs"]), f"{cell['id']} stored an error"
    return "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                   for o in cell["outputs"])


@pytest.mark.parametrize("nn", EXERCISES)
def test_the_exercise_is_the_last_section_of_its_lesson(nn):
    ex = EXERCISES[nn]
    cells = _cells(ex["lesson"])
    first = next(i for i, c in enumerate(cells) if c["id"].startswith(ex["prefix"]))
    assert all(c["id"].startswith(ex["prefix"]) for c in cells[first:])
    assert _source(cells[first]).startswith("## Exercise")


@pytest.mark.parametrize("nn", EXERCISES)
def test_solution_is_the_section_with_the_answer_filled(nn):
    ex = EXERCISES[nn]
    section, solution = _section(ex), _cells(ex["solution"])
    assert _source(solution[0]).startswith(ex["title"])
    assert [c["id"] for c in solution[1:]] == [c["id"] for c in section]
    for a, b in zip(section, solution[1:], strict=True):
        if a["id"] == _answer_id(ex):
            continue
        assert (a["cell_type"], _source(a)) == (b["cell_type"], _source(b)), a["id"]


@pytest.mark.parametrize("nn", EXERCISES)
def test_the_starter_only_raises_not_implemented(nn):
    ex = EXERCISES[nn]
    starter = _by_id(_section(ex))[_answer_id(ex)]
    body = _function_body(starter, ex["name"])
    assert len(body) == 1 and isinstance(body[0], ast.Raise)
    assert body[0].exc.func.id == "NotImplementedError"
    signature = _source(starter).split("raise")[0]
    assert _source(_by_id(_cells(ex["solution"]))[_answer_id(ex)]).startswith(signature)


@pytest.mark.parametrize("nn", EXERCISES)
def test_no_solution_code_leaks_into_the_lesson(nn):
    ex = EXERCISES[nn]
    solution_cell = _by_id(_cells(ex["solution"]))[_answer_id(ex)]
    lesson_lines = {line.strip() for c in _cells(ex["lesson"]) for line in _source(c).splitlines()}
    solution_lines = []
    for stmt in _function_body(solution_cell, ex["name"]):
        solution_lines += [line.strip() for line in ast.unparse(stmt).splitlines()]
    solution_lines += [line.split("#", 1)[1].strip() for line in _source(solution_cell).splitlines() if "#" in line]
    assert len(solution_lines) >= 4
    for line in solution_lines:
        assert line not in lesson_lines, f"the lesson contains the solution's line {line!r}"


@pytest.mark.parametrize("nn", EXERCISES)
def test_the_solution_passes_and_the_starter_is_not_implemented(nn):
    ex = EXERCISES[nn]
    solution = _namespace(ex, _cells(ex["solution"]))
    starter = _namespace(ex, _section(ex))
    assert ex["check"](solution[ex["name"]]).passed
    assert ex["check"](starter[ex["name"]]).mistake == "not-implemented"


@pytest.mark.parametrize("nn", EXERCISES)
def test_stored_outputs_friendly_in_the_starter_passing_in_the_solution(nn):
    ex = EXERCISES[nn]
    for cell in _section(ex):
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error" and output.get("name") != "stderr"
            assert "Traceback" not in json.dumps(output)
    check_id = ex["prefix"] + "check"
    assert _outputs(_by_id(_section(ex))[check_id]).startswith(
        f"✗ {ex['name']} [not-implemented]: Not implemented yet: it still raises NotImplementedError.")
    assert _outputs(_by_id(_cells(ex["solution"]))[check_id]).startswith(f"✓ {ex['name']} passed")


# A learner's slip typed into the solution's own code: the first line names it.
SLIPS = [
    ("09", {"exponent = D / (D - 2)": "exponent = D / 2"}, "exponent-d-over-2"),
    ("09", {"exponent = D / (D - 2)": "exponent = 1"}, "no-exponent"),
    ("09", {"exponent = D / (D - 2)": "exponent = (D - 2) / D"}, "exponent-inverted"),
    ("09", {"return base * s ** exponent": "return base / s ** exponent"}, "base-divided"),
    ("09", {"return base * s ** exponent":
            "return [(base * s ** exponent) ** (-2 * k / D) for k in range(D // 2)]"}, "returned-frequencies"),
    ("09", {"return base * s ** exponent": "base * s ** exponent"}, "wrong-shape"),
    ("10", {"ml_dtypes.bfloat16": "np.float16"}, "float16"),
    ("10", {"range(lo, hi)": "range(lo, hi + 1)"}, "range-includes-hi"),
    ("10", {"range(lo, hi)": "range(lo + 1, hi)"}, "range-skips-lo"),
    ("10", {"if ml_dtypes.bfloat16(n) == target": "if n != pos and ml_dtypes.bfloat16(n) == target"}, "missing-pos"),
    # truncating float32 to its top 16 bits is bfloat16 rounded toward zero
    ("10", {"target = ml_dtypes.bfloat16(pos)": "target = np.float32(pos).view(np.uint32) >> 16",
            "if ml_dtypes.bfloat16(n) == target": "if np.float32(n).view(np.uint32) >> 16 == target"},
     "round-toward-zero"),
]


@pytest.mark.parametrize("nn, replace, code", SLIPS, ids=[f"{n}-{c}-{i}" for i, (n, _, c) in enumerate(SLIPS)])
def test_a_slip_in_the_solution_gets_its_code(nn, replace, code):
    import numpy as np

    ex = EXERCISES[nn]
    ns = _namespace(ex, _cells(ex["solution"]), replace)
    ns.setdefault("np", np)
    with np.errstate(over="ignore"):
        result = ex["check"](ns[ex["name"]])
    assert result.mistake == code, result.message
    first = result.message.splitlines()[0]
    assert first.startswith(f"✗ {ex['name']} [{code}]: ") and first.endswith(".")
