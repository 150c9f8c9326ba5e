"""The exercise pair: the starter and its solution are one notebook with different answers.

nbval runs both notebooks (they live under notebooks/); these tests check what
nbval cannot: that the starter gives nothing away, that the two notebooks only
differ in their answers, and that a learner's typical slip, typed into the
solution's code, gets a message naming it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from exercise_cells import (
    NOT_IMPLEMENTED,
    NOTEBOOKS,
    SOLUTIONS,
    assert_friendly,
    by_id,
    cells,
    namespace,
    only_raises_not_implemented,
    outputs,
    solution_lines,
    source,
)

from posenc_helpers.checks import check_rope, check_sinusoid, compare_script

STARTER = NOTEBOOKS / "05-exercise.ipynb"
SOLUTION = SOLUTIONS / "05-exercise-solution.ipynb"
ANSWER_CELLS = {"answer-sinusoid": "sinusoid", "answer-rotate": "rotate"}


def _namespace(path: Path, replace: dict[str, str] | None = None) -> dict:
    """Run the imports and the two answer cells, kernel-free; ``replace`` edits the answer code first."""
    ids = by_id(path)
    return namespace(source(ids["imports"]), [source(ids[cell_id]) for cell_id in ANSWER_CELLS], replace)


def test_the_two_notebooks_differ_only_in_the_title_and_the_answers():
    starter, solution = cells(STARTER), cells(SOLUTION)
    assert [c["id"] for c in starter] == [c["id"] for c in solution]
    for a, b in zip(starter, solution, strict=True):
        if a["id"] in ANSWER_CELLS or a["id"] == "intro":
            continue
        assert (a["cell_type"], source(a)) == (b["cell_type"], source(b)), a["id"]
    assert source(starter[0]).startswith("# Exercise: the sinusoid and the rotation\n")
    assert source(solution[0]).startswith("# Exercise solution: the sinusoid and the rotation\n")
    # the intro differs only in its title line and the pointer back to the starter
    assert source(starter[0]).split("**In this notebook**")[1] == source(solution[0]).split("**In this notebook**")[1]


@pytest.mark.parametrize("cell_id, name", ANSWER_CELLS.items())
def test_the_starter_functions_only_raise_not_implemented(cell_id, name):
    assert only_raises_not_implemented(by_id(STARTER)[cell_id], name)
    # the docstring and signature are the same as the solution's
    starter_def = source(by_id(STARTER)[cell_id]).split("raise")[0]
    assert source(by_id(SOLUTION)[cell_id]).startswith(starter_def)


@pytest.mark.parametrize("cell_id, name", ANSWER_CELLS.items())
def test_no_solution_code_leaks_into_the_starter(cell_id, name):
    starter_lines = {line.strip() for c in cells(STARTER) for line in source(c).splitlines()}
    given_away = solution_lines(by_id(SOLUTION)[cell_id], name)
    assert len(given_away) >= 5
    for line in given_away:
        assert line not in starter_lines, f"the starter contains the solution's line {line!r}"
    # and none of the solution's trigonometry sits in the starter's code
    starter_code = "\n".join(source(c) for c in cells(STARTER) if c["cell_type"] == "code")
    assert "math.sin(" not in starter_code and "math.cos(" not in starter_code


def test_the_solution_passes_every_check_and_the_starter_is_not_implemented():
    solution, starter = _namespace(SOLUTION), _namespace(STARTER)
    assert check_sinusoid(solution["sinusoid"]).passed
    assert check_rope(solution["rotate"]).passed
    assert check_sinusoid(starter["sinusoid"]).mistake == "not-implemented"
    assert check_rope(starter["rotate"]).mistake == "not-implemented"


def _outputs(path: Path, cell_id: str) -> str:
    return outputs(by_id(path)[cell_id])


def test_the_starter_stores_friendly_feedback_not_tracebacks():
    assert_friendly(cells(STARTER))
    assert _outputs(STARTER, "check-sinusoid").startswith(f"✗ sinusoid [not-implemented]: {NOT_IMPLEMENTED}")
    assert _outputs(STARTER, "check-rotate").startswith(f"✗ rotate [not-implemented]: {NOT_IMPLEMENTED}")
    script = _outputs(STARTER, "script")
    assert "error: PE raised NotImplementedError" in script and "error: ROPE raised NotImplementedError" in script
    assert script.rstrip().endswith("lines differ (marked ✗).")


def test_the_solution_stores_passing_checks_and_matching_lines():
    assert _outputs(SOLUTION, "check-sinusoid").startswith("✓ sinusoid passed")
    assert _outputs(SOLUTION, "check-rotate").startswith("✓ rotate passed")
    assert _outputs(SOLUTION, "script").rstrip().endswith("lines match.")
    # the expected column is the same in both notebooks
    expected = [[line for line in _outputs(p, "script").splitlines() if "expected" in line] for p in (STARTER, SOLUTION)]
    assert expected[0] == expected[1] and len(expected[0]) >= 8


# A learner's slip typed into the solution's own code: the first line names it.
SLIPS = [
    ("sinusoid", {"angle = pos / 10000 ** (2 * k / D)": "angle = pos / 10000 ** (2 * i / D)"}, "element-index"),
    ("sinusoid", {"angle = pos / 10000 ** (2 * k / D)": "angle = pos / 10000 ** (i / D)"}, "element-index"),
    ("sinusoid", {"math.sin(angle) if i % 2 == 0 else math.cos(angle)":
                  "math.cos(angle) if i % 2 == 0 else math.sin(angle)"}, "sin-cos-swapped"),
    ("sinusoid", {"angle = pos / 10000 ** (2 * k / D)": "angle = pos / 10000 ** (k / D)"}, "exponent-k-over-d"),
    ("sinusoid", {"for i in range(D):": "for i in range(D - D % 2):"}, "odd-dim"),
    ("sinusoid", {"    return values": "    values"}, "wrong-shape"),
    ("rotate", {"a * math.cos(theta) - b * math.sin(theta)": "a * math.cos(theta) + b * math.sin(theta)",
                "a * math.sin(theta) + b * math.cos(theta)": "-a * math.sin(theta) + b * math.cos(theta)"},
     "rotation-sign"),
    ("rotate", {"theta = pos / 10000 ** (2 * k / D)": "theta = pos / 10000 ** (k / D)"}, "exponent-k-over-d"),
    ("rotate", {"D = len(vec)": "D = 4"}, "model-dim"),
    ("rotate", {"turned = [float(x) for x in vec]": "turned = [float(x) for x in vec[: D - D % 2]]"}, "odd-dim"),
    ("rotate", {"theta = pos / 10000 ** (2 * k / D)": "theta = pos / 10000 ** (2 * k / D) / 0.0"}, "raised"),
]


@pytest.mark.parametrize("name, replace, code", SLIPS, ids=[f"{n}-{c}-{i}" for i, (n, _, c) in enumerate(SLIPS)])
def test_a_wrong_answer_reads_one_sentence_naming_the_mistake(name, replace, code):
    ns = _namespace(SOLUTION, replace)  # each slip must match the solution's code
    result = (check_sinusoid if name == "sinusoid" else check_rope)(ns[name])
    assert result.mistake == code, result.message
    first = result.message.splitlines()[0]
    assert first.startswith(f"✗ {name} [{code}]: ") and first.endswith(".")
    assert first.count(". ") == 0, f"more than one sentence: {first}"


def test_the_script_cell_shows_a_wrong_rotation_in_the_dot_lines():
    ns = _namespace(SOLUTION, {"a * math.cos(theta) - b * math.sin(theta)": "a * math.cos(theta) + b * math.sin(theta)",
                               "a * math.sin(theta) + b * math.cos(theta)": "-a * math.sin(theta) + b * math.cos(theta)"})
    script_source = textwrap.dedent(source(by_id(SOLUTION)["script"]))
    exec(script_source.rsplit("compare_script", 1)[0], ns)  # defines SCRIPT
    comparison = compare_script(ns["SCRIPT"], ns["sinusoid"], ns["rotate"])
    differing = {row.line for row in comparison.rows if not row.same}
    assert any(line.startswith("DOT") for line in differing)
    assert not any(line.startswith("PE") for line in differing)
