"""The exercises at the end of notebooks 07, 08, 09 and 10, and their solution notebooks.

Each of these lessons ends with an exercise section (cells whose ids start
with ``exNN-``); its solution notebook under notebooks/solutions/ holds a
title cell and the same section with the answer filled in. nbval runs all of
them; these tests check what nbval cannot: the starter gives nothing away,
the two agree except in the answer, the starter's stored check output is the
checker's "not implemented yet" message and the solution's a pass, and a
learner's typical slip, typed into the solution's own code, gets the mistake
code that names it. (Notebook 05 is a whole exercise notebook with a
full-copy solution: tests/test_exercise_notebooks.py.)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
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

from posenc_helpers.checks import check_alibi_slopes, check_collisions, check_hf_to_meta, check_new_base


@dataclass(frozen=True)
class Exercise:
    slug: str  # the lesson's file name without .ipynb, e.g. "07-conventions"
    name: str  # the function the learner writes
    check: object  # its checker in posenc_helpers.checks
    title: str  # the solution notebook's first line

    @property
    def prefix(self) -> str:
        return f"ex{self.slug[:2]}-"

    @property
    def lesson(self) -> Path:
        return NOTEBOOKS / f"{self.slug}.ipynb"

    @property
    def solution(self) -> Path:
        return SOLUTIONS / f"{self.slug}-solution.ipynb"

    def section(self) -> list[dict]:
        """The lesson's exercise cells."""
        return [c for c in cells(self.lesson) if c["id"].startswith(self.prefix)]

    def answer(self, notebook: Path) -> dict:
        return by_id(notebook)[self.prefix + "answer"]

    def run(self, notebook: Path, replace: dict[str, str] | None = None):
        """The learner's function as the notebook's imports and answer cell define it (``replace`` edits the answer)."""
        ids = by_id(notebook)
        ns = namespace(source(ids[self.prefix + "imports"]), [source(ids[self.prefix + "answer"])], replace)
        ns.setdefault("np", np)  # a slip may use numpy where the answer does not
        return ns[self.name]


EXERCISES = {
    ex.slug[:2]: ex
    for ex in (
        Exercise("07-conventions", "hf_to_meta", check_hf_to_meta,
                 "# Exercise solution: from Hugging Face's layout back to Meta's\n"),
        Exercise("08-other-schemes", "alibi_slopes_for", check_alibi_slopes,
                 "# Exercise solution: ALiBi's slopes for any number of heads\n"),
        Exercise("09-long-context", "new_base", check_new_base, "# Exercise solution: NTK-aware scaling's base\n"),
        Exercise("10-precision", "collisions", check_collisions,
                 "# Exercise solution: which positions collide in bfloat16\n"),
    )
}


def test_the_four_exercises_are_covered():
    assert sorted(EXERCISES) == ["07", "08", "09", "10"]
    assert {nn for nn, _, _ in SLIPS} == set(EXERCISES)


@pytest.mark.parametrize("nn", EXERCISES)
def test_the_exercise_is_the_last_section_of_its_lesson(nn):
    ex = EXERCISES[nn]
    lesson = cells(ex.lesson)
    first = next(i for i, c in enumerate(lesson) if c["id"].startswith(ex.prefix))
    assert all(c["id"].startswith(ex.prefix) for c in lesson[first:]), "nothing follows the exercise"
    assert source(lesson[first]).startswith("## Exercise: ")


@pytest.mark.parametrize("nn", EXERCISES)
def test_the_solution_is_its_title_then_the_section_with_the_answer_filled(nn):
    ex = EXERCISES[nn]
    section, solution = ex.section(), cells(ex.solution)
    assert source(solution[0]).startswith(ex.title)
    assert [c["id"] for c in solution[1:]] == [c["id"] for c in section]
    for a, b in zip(section, solution[1:], strict=True):
        if a["id"] == ex.prefix + "answer":
            continue
        assert (a["cell_type"], source(a)) == (b["cell_type"], source(b)), a["id"]


@pytest.mark.parametrize("nn", EXERCISES)
def test_the_starter_only_raises_not_implemented(nn):
    ex = EXERCISES[nn]
    starter = ex.answer(ex.lesson)
    assert only_raises_not_implemented(starter, ex.name)
    signature_and_docstring = source(starter).split("raise")[0]
    assert source(ex.answer(ex.solution)).startswith(signature_and_docstring)


@pytest.mark.parametrize("nn", EXERCISES)
def test_no_solution_code_leaks_into_the_lesson(nn):
    ex = EXERCISES[nn]
    lesson_lines = {line.strip() for c in cells(ex.lesson) for line in source(c).splitlines()}
    given_away = solution_lines(ex.answer(ex.solution), ex.name)
    assert len(given_away) >= 4
    for line in given_away:
        assert line not in lesson_lines, f"the lesson contains the solution's line {line!r}"


@pytest.mark.parametrize("nn", EXERCISES)
def test_the_solution_passes_and_the_starter_is_not_implemented(nn):
    ex = EXERCISES[nn]
    assert ex.check(ex.run(ex.solution)).passed
    assert ex.check(ex.run(ex.lesson)).mistake == "not-implemented"


@pytest.mark.parametrize("nn", EXERCISES)
def test_stored_outputs_friendly_in_the_starter_passing_in_the_solution(nn):
    ex = EXERCISES[nn]
    assert_friendly(ex.section())
    check_id = ex.prefix + "check"
    assert outputs(by_id(ex.lesson)[check_id]).startswith(f"✗ {ex.name} [not-implemented]: {NOT_IMPLEMENTED}")
    assert outputs(by_id(ex.solution)[check_id]).startswith(f"✓ {ex.name} passed all ")


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
    ("09", {"exponent = D / (D - 2)": "exponent = D / 2"}, "exponent-d-over-2"),
    ("09", {"exponent = D / (D - 2)": "exponent = 1"}, "no-exponent"),
    ("09", {"exponent = D / (D - 2)": "exponent = (D - 2) / D"}, "exponent-inverted"),
    # the solution's code as ruff format writes it (make lint checks the notebooks are formatted)
    ("09", {"return base * s**exponent": "return base / s**exponent"}, "base-divided"),
    ("09", {"return base * s**exponent":
            "return [(base * s**exponent) ** (-2 * k / D) for k in range(D // 2)]"}, "returned-frequencies"),
    ("09", {"return base * s**exponent": "base * s**exponent"}, "wrong-shape"),
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
def test_a_slip_in_the_solution_gets_the_code_that_names_it(nn, replace, code):
    ex = EXERCISES[nn]
    fn = ex.run(ex.solution, replace)
    with np.errstate(over="ignore"):
        result = ex.check(fn)
    assert result.mistake == code, result.message
    first = result.message.splitlines()[0]
    assert first.startswith(f"✗ {ex.name} [{code}]: ") and first.endswith(".")
    assert first.count(". ") == 0, f"more than one sentence: {first}"
