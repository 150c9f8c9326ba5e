"""The exercises at the end of notebooks 07 and 08, and their solution notebooks.

Each exercise is the last section of its lesson (cells whose ids start with
``ex07-`` / ``ex08-``); its solution notebook holds the same cells with the
answer filled in. nbval runs all of them; these tests check what nbval cannot:
the starter's stored check output is the friendly "not implemented yet"
message, the solution passes, the two agree outside the answer, no solution
code leaks into the lesson, and a learner's typical slip, typed into the
solution's own code, gets the mistake code that names it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from posenc_helpers.checks import check_alibi_slopes, check_hf_to_meta

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = {
    "07": {
        "lesson": ROOT / "notebooks" / "07-conventions.ipynb",
        "solution": ROOT / "notebooks" / "solutions" / "07-conventions-solution.ipynb",
        "prefix": "ex07-",
        "name": "hf_to_meta",
        "check": check_hf_to_meta,
        "title": "# Exercise solution: from Hugging Face's layout back to Meta's\n",
    },
    "08": {
        "lesson": ROOT / "notebooks" / "08-other-schemes.ipynb",
        "solution": ROOT / "notebooks" / "solutions" / "08-other-schemes-solution.ipynb",
        "prefix": "ex08-",
        "name": "alibi_slopes_for",
        "check": check_alibi_slopes,
        "title": "# Exercise solution: ALiBi's slopes for any number of heads\n",
    },
}


def _cells(path: Path) -> list[dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if not "".join(c["source"]).startswith("<!--NAVIGATION-->")]


def _source(cell) -> str:
    return "".join(cell["source"])


def _by_id(path: Path) -> dict[str, dict]:
    return {c["id"]: c for c in _cells(path)}


def _exercise_cells(path: Path, prefix: str) -> list[dict]:
    return [c for c in _cells(path) if c["id"].startswith(prefix)]


def _namespace(path: Path, ex: dict, replace: dict[str, str] | None = None) -> dict:
    """Run the exercise's imports and answer cell, kernel-free; ``replace`` edits the answer first."""
    cells = _by_id(path)
    ns: dict = {}
    exec(_source(cells[ex["prefix"] + "imports"]), ns)
    code = _source(cells[ex["prefix"] + "answer"])
    for old, new in (replace or {}).items():
        code = code.replace(old, new)
    exec(code, ns)
    return ns


def _outputs(path: Path, cell_id: str) -> str:
    cell = _by_id(path)[cell_id]
    assert all(o["output_type"] != "error" for o in cell["outputs"]), f"{path.name}: {cell_id} stored an error"
    return "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                   for o in cell["outputs"])


def _function_body(path: Path, cell_id: str, name: str) -> list[ast.stmt]:
    tree = ast.parse(_source(_by_id(path)[cell_id]))
    (fn,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return body


@pytest.mark.parametrize("number", EXERCISES)
def test_the_exercise_is_the_last_section_of_its_lesson(number):
    ex = EXERCISES[number]
    cells = _cells(ex["lesson"])
    ids = [c["id"] for c in cells]
    first = next(i for i, cell_id in enumerate(ids) if cell_id.startswith(ex["prefix"]))
    assert all(cell_id.startswith(ex["prefix"]) for cell_id in ids[first:]), "nothing follows the exercise"
    assert _source(cells[first]).startswith("## Exercise: ")


@pytest.mark.parametrize("number", EXERCISES)
def test_lesson_and_solution_agree_except_in_the_answer(number):
    ex = EXERCISES[number]
    lesson, solution = _exercise_cells(ex["lesson"], ex["prefix"]), _exercise_cells(ex["solution"], ex["prefix"])
    assert [c["id"] for c in lesson] == [c["id"] for c in solution]
    for a, b in zip(lesson, solution, strict=True):
        if a["id"] == ex["prefix"] + "answer":
            continue
        assert (a["cell_type"], _source(a)) == (b["cell_type"], _source(b)), a["id"]
    # the solution notebook is its title, then exactly the exercise cells
    sol_cells = _cells(ex["solution"])
    assert _source(sol_cells[0]).startswith(ex["title"])
    assert len(sol_cells) == 1 + len(solution)


@pytest.mark.parametrize("number", EXERCISES)
def test_the_starter_only_raises_not_implemented(number):
    ex = EXERCISES[number]
    cell_id = ex["prefix"] + "answer"
    body = _function_body(ex["lesson"], cell_id, ex["name"])
    assert len(body) == 1 and isinstance(body[0], ast.Raise), ast.dump(body[0])
    assert isinstance(body[0].exc, ast.Call) and body[0].exc.func.id == "NotImplementedError"
    starter_def = _source(_by_id(ex["lesson"])[cell_id]).split("raise")[0]
    assert _source(_by_id(ex["solution"])[cell_id]).startswith(starter_def), "same signature and docstring"


@pytest.mark.parametrize("number", EXERCISES)
def test_no_solution_code_leaks_into_the_lesson(number):
    ex = EXERCISES[number]
    cell_id = ex["prefix"] + "answer"
    lesson_lines = {line.strip() for c in _cells(ex["lesson"]) for line in _source(c).splitlines()}
    solution_lines = []
    for stmt in _function_body(ex["solution"], cell_id, ex["name"]):
        solution_lines += [line.strip() for line in ast.unparse(stmt).splitlines()]
    solution_lines += [line.split("#", 1)[1].strip() for line in _source(_by_id(ex["solution"])[cell_id]).splitlines()
                       if "#" in line]
    assert len(solution_lines) >= 4
    for line in solution_lines:
        assert line not in lesson_lines, f"the lesson contains the solution's line {line!r}"


@pytest.mark.parametrize("number", EXERCISES)
def test_the_solution_passes_and_the_starter_is_not_implemented(number):
    ex = EXERCISES[number]
    assert ex["check"](_namespace(ex["solution"], ex)[ex["name"]]).passed
    assert ex["check"](_namespace(ex["lesson"], ex)[ex["name"]]).mistake == "not-implemented"


@pytest.mark.parametrize("number", EXERCISES)
def test_stored_outputs_are_friendly_feedback(number):
    ex = EXERCISES[number]
    for cell in _exercise_cells(ex["lesson"], ex["prefix"]):
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error" and output.get("name") != "stderr"
            assert "Traceback" not in json.dumps(output)
    check_id = ex["prefix"] + "check"
    assert _outputs(ex["lesson"], check_id).startswith(
        f"✗ {ex['name']} [not-implemented]: Not implemented yet: it still raises NotImplementedError.")
    assert _outputs(ex["solution"], check_id).startswith(f"✓ {ex['name']} passed all ")


# A learner's slip typed into the solution's own code: the first line names it.
SLIPS = [
    ("07", {"w.reshape(n_heads, 2, head_dim // 2, cols)": "w.reshape(n_heads, head_dim // 2, 2, cols)"},
     "forward-permutation"),
    ("07", {"w.reshape(n_heads, 2, head_dim // 2, cols)": "w.reshape(1, 2, rows // 2, cols)"}, "one-head"),
    ("07", {"return per_head.transpose(0, 2, 1, 3).reshape(rows, cols)":
            "return w.reshape(rows, 2, cols // 2).transpose(0, 2, 1).reshape(rows, cols)"}, "columns"),
    ("07", {"return per_head.transpose(0, 2, 1, 3).reshape(rows, cols)": "return per_head.reshape(rows, cols)"},
     "unchanged"),
    ("07", {"return per_head.transpose(0, 2, 1, 3).reshape(rows, cols)": "return per_head.transpose(0, 2, 1, 3)"},
     "wrong-shape"),
    ("07", {"head_dim = rows // n_heads": "head_dim = rows // n_heads // 0"}, "raised"),
    ("08", {"c = 2 ** int(np.floor(np.log2(n)))": "c = n"}, "power-of-two-formula"),
    ("08", {"2 ** (-8 * (h + 1) / count)": "2 ** (-8 * h / count)"}, "off-by-one"),
    ("08", {"geometric(2 * c)[0::2][: n - c]": "geometric(2 * c)[: n - c]"}, "first-of-2c"),
    ("08", {"geometric(2 * c)[0::2][: n - c]": "geometric(2 * c)[1::2][: n - c]"}, "odd-of-2c"),
    ("08", {"return geometric(c) + geometric(2 * c)[0::2][: n - c]":
            "return sorted(geometric(c) + geometric(2 * c)[0::2][: n - c], reverse=True)"}, "sorted"),
    ("08", {"[0::2][: n - c]": "[0::2][: n - c + 1]"}, "wrong-shape"),
    ("08", {"int(np.floor(np.log2(n)))": "int(np.floor(np.log2(n - 1)))"}, "raised"),
]


@pytest.mark.parametrize("number, replace, code", SLIPS, ids=[f"{n}-{c}-{i}" for i, (n, _, c) in enumerate(SLIPS)])
def test_a_slip_gets_the_code_that_names_it(number, replace, code):
    ex = EXERCISES[number]
    source = _source(_by_id(ex["solution"])[ex["prefix"] + "answer"])
    assert all(old in source for old in replace), "the slip no longer matches the solution's code"
    result = ex["check"](_namespace(ex["solution"], ex, replace)[ex["name"]])
    assert result.mistake == code, result.message
    first = result.message.splitlines()[0]
    assert first.startswith(f"✗ {ex['name']} [{code}]: ") and first.endswith(".")
    assert first.count(". ") == 0, f"more than one sentence: {first}"
