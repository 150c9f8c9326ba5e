"""The PE / ROPE / DOT interpreter, run as a subprocess exactly as a learner runs it."""

from __future__ import annotations

import io
import math
import subprocess
import sys

import numpy as np
import pytest

from posenc_helpers.interpreter import format_numbers, run_commands


def run(stdin: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "posenc_helpers", *args],
        input=stdin, capture_output=True, text=True, timeout=60,
    )


def fmt(*values: float) -> str:
    """An independent formatter: 4 decimals, and no minus sign on a zero."""
    return " ".join(f"{v:.4f}".replace("-0.0000", "0.0000") for v in values)


def test_the_lesson_example():
    result = run("PE 2 4\n")
    assert result.stdout == "0.9093 -0.4161 0.0200 0.9998\n"
    assert result.stderr == ""
    assert result.returncode == 0


GOOD_SCRIPT = """\
# The lesson's numbers, one per line
PE 2 4
pe 0 5

Rope 1 1 0
ROPE 0.01 1 0
ROPE 2 1 0 1 0 7
DOT 5 3 1 0 1 0
dot 9 7 1 0 1 0
DOT 4 4 0.5 -1 2 3 0.5 -1 2 3
PE 3.14159265358979 2
"""


def test_good_script_exact_output(tmp_path):
    script = tmp_path / "good.txt"
    script.write_text(GOOD_SCRIPT, encoding="utf-8")
    result = run("", str(script))
    expected = [
        fmt(math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)),
        fmt(0, 1, 0, 1, 0),
        fmt(math.cos(1), math.sin(1)),
        fmt(math.cos(0.01), math.sin(0.01)),
        fmt(math.cos(2), math.sin(2), math.cos(2 / 10000 ** (2 / 5)), math.sin(2 / 10000 ** (2 / 5)), 7),
        fmt(math.cos(2)),
        fmt(math.cos(2)),
        fmt(0.25 + 1 + 4 + 9),  # same vector at the same position: its squared norm
        fmt(0.0, -1.0),  # sin(π) prints as 0.0000, never -0.0000
    ]
    assert result.stdout.splitlines() == expected
    assert result.stderr == ""
    assert result.returncode == 0


BAD_SCRIPT = """\
PE 2 4
FROB 1 2
PE 2
PE two 4
PE 2 0
PE 2 -3
PE 2 4.5
ROPE 1
DOT 1 2 1 0 1
DOT 1 2
PE nan 4
ROPE inf 1 0
# a comment, then a blank line

DOT 5 3 1 0 1 0
"""


def test_bad_lines_are_reported_and_skipped(tmp_path):
    script = tmp_path / "bad.txt"
    script.write_text(BAD_SCRIPT, encoding="utf-8")
    result = run("", str(script))
    assert result.stdout.splitlines() == [fmt(math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)), fmt(math.cos(2))]
    errors = result.stderr.splitlines()
    assert [e.split(":")[1].strip() for e in errors] == ["line 2", "line 3", "line 4", "line 5", "line 6", "line 7",
                                                          "line 8", "line 9", "line 10", "line 11", "line 12"]
    assert all(e.startswith("error: line ") for e in errors)
    assert "unknown command 'FROB'" in errors[0]
    assert "PE takes 2 numbers, got 1" in errors[1]
    assert "pos must be a number, got 'two'" in errors[2]
    assert "D must be a positive integer, got '0'" in errors[3]
    assert "D must be a positive integer, got '-3'" in errors[4]
    assert "D must be a positive integer, got '4.5'" in errors[5]
    assert "ROPE takes a position and at least 1 vector element" in errors[6]
    assert "even count" in errors[7] and "got 3 elements" in errors[7]
    assert "got 0 elements" in errors[8]
    assert "pos must be a finite number, got 'nan'" in errors[9]
    assert "pos must be a finite number, got 'inf'" in errors[10]
    assert "Traceback" not in result.stderr
    assert result.returncode == 1


def test_stdin_and_exit_status_zero_when_all_good():
    result = run("dot 5 3 1 0 1 0\n\n# done\n")
    assert (result.stdout, result.stderr, result.returncode) == (fmt(math.cos(2)) + "\n", "", 0)


def test_missing_file_is_an_error_not_a_traceback(tmp_path):
    result = run("", str(tmp_path / "nope.txt"))
    assert result.returncode == 1
    assert result.stderr.startswith("error: cannot read")
    assert "Traceback" not in result.stderr


def test_dot_is_built_on_the_rope_it_is_given():
    def backwards(x, pos):  # the swapped-sign mistake: turns clockwise
        return np.asarray(x) if pos == 0 else np.array([x[0] * math.cos(pos) + x[1] * math.sin(pos),
                                                        -x[0] * math.sin(pos) + x[1] * math.cos(pos)])

    out, err = io.StringIO(), io.StringIO()
    failures = run_commands(["ROPE 1 1 0", "DOT 2 0 0 1 1 0"], rope=backwards, out=out, err=err)
    assert failures == 0
    # rope(q, 2) · rope(k, 0) for q = (0, 1), k = (1, 0): −sin 2 with a correct rotation, +sin 2 with this one
    assert out.getvalue().splitlines() == [fmt(math.cos(1), -math.sin(1)), fmt(math.sin(2))]
    out = io.StringIO()
    run_commands(["DOT 2 0 0 1 1 0"], out=out, err=err)
    assert out.getvalue() == fmt(-math.sin(2)) + "\n"


def test_learner_functions_that_raise_or_return_junk_are_reported():
    def not_done(pos, dim):
        raise NotImplementedError("write sinusoid")

    def short(x, pos):
        return [1.0]

    out, err = io.StringIO(), io.StringIO()
    failures = run_commands(["PE 1 4", "ROPE 1 1 0", "DOT 1 0 1 0 1 0"], pe=not_done, rope=short, out=out, err=err)
    assert failures == 3
    lines = err.getvalue().splitlines()
    assert lines[0] == "error: line 1: PE raised NotImplementedError: write sinusoid"
    assert lines[1] == "error: line 2: ROPE returned shape (1,), expected (2,)"
    assert lines[2] == "error: line 3: ROPE returned shape (1,), expected (2,)"
    assert out.getvalue() == ""


@pytest.mark.parametrize("value, text", [(-0.00001, "0.0000"), (-0.00005, "-0.0001"), (1.23456, "1.2346"), (-0.0, "0.0000")])
def test_format_numbers(value, text):
    assert format_numbers([value]) == text


@pytest.mark.parametrize(
    "returned, message",
    [
        ([None, None], "ROPE returned [None, None], which is not a sequence of real numbers"),
        ("ab", "ROPE returned 'ab', which is not a sequence of real numbers"),
        ([float("nan"), 1.0], "ROPE returned [nan, 1.0], which holds a value that is not finite"),
        ([1 + 1j, 0], "ROPE returned [(1+1j), 0], which is not a sequence of real numbers"),
    ],
)
def test_learner_results_that_are_not_finite_numbers_are_errors_not_nan(returned, message):
    out, err = io.StringIO(), io.StringIO()
    assert run_commands(["ROPE 1 1 0"], rope=lambda x, pos: returned, out=out, err=err) == 1
    assert err.getvalue() == f"error: line 1: {message}\n"
    assert out.getvalue() == ""


def test_the_usage_line_names_the_command_as_typed():
    from pathlib import Path

    assert run("", "--help").stdout.startswith("usage: python -m posenc_helpers [-h] [file]")
    script = Path(sys.executable).with_name("posenc")
    if not script.is_file():
        pytest.skip("the posenc script is not installed beside this Python")
    shown = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert shown.stdout.startswith("usage: posenc [-h] [file]"), shown.stdout
