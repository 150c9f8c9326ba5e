"""The exercise checker names the learner's mistake.

Every buggy implementation below is written out by hand, the way a learner
would get it wrong, and the checker must name exactly its mistake code. The
correct implementations are literal per-element loops straight from the
lesson's formulas, returned as list, tuple and numpy array. Deterministic on
purpose: random functions would mostly be "wrong", which tests nothing.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from posenc_helpers.checks import (
    ATOL,
    MISTAKES,
    ROPE_PROBES,
    SINUSOID_PROBES,
    CheckResult,
    check_rope,
    check_sinusoid,
    compare_script,
)

# ---------------------------------------------------------------------------
# Correct answers, literal loops


def sin_right(pos, D):
    out = []
    for i in range(D):
        k = i // 2
        # PE(pos, 2k) = sin(pos / 10000^(2k/D)), PE(pos, 2k+1) = cos(same angle)
        angle = pos / 10000 ** (2 * k / D)
        out.append(math.sin(angle) if i % 2 == 0 else math.cos(angle))
    return out


def rot_right(vec, pos):
    D = len(vec)
    out = [float(x) for x in vec]
    for k in range(D // 2):
        theta = pos / 10000 ** (2 * k / D)
        a, b = vec[2 * k], vec[2 * k + 1]
        # (a, b) -> (a cos θ − b sin θ, a sin θ + b cos θ)
        out[2 * k] = a * math.cos(theta) - b * math.sin(theta)
        out[2 * k + 1] = a * math.sin(theta) + b * math.cos(theta)
    return out


def rot_numpy(vec, pos):
    vec = np.asarray(vec, dtype=float)
    D = len(vec)
    half = D // 2
    theta = pos / 10000 ** (2 * np.arange(half) / D)
    out = vec.copy()
    a, b = vec[0 : 2 * half : 2], vec[1 : 2 * half : 2]
    out[0 : 2 * half : 2] = a * np.cos(theta) - b * np.sin(theta)
    out[1 : 2 * half : 2] = a * np.sin(theta) + b * np.cos(theta)
    return out


def rot_in_place(vec, pos):
    """Right, but writes into the array it was given."""
    D = len(vec)
    for k in range(D // 2):
        theta = pos / 10000 ** (2 * k / D)
        a, b = vec[2 * k], vec[2 * k + 1]
        vec[2 * k], vec[2 * k + 1] = a * math.cos(theta) - b * math.sin(theta), a * math.sin(theta) + b * math.cos(theta)
    return vec


CORRECT_SINUSOIDS = {
    "list": sin_right,
    "tuple": lambda pos, D: tuple(sin_right(pos, D)),
    "ndarray": lambda pos, D: np.array(sin_right(pos, D)),
    "float32 ndarray": lambda pos, D: np.array(sin_right(pos, D), dtype=np.float32),
    "list of numpy floats": lambda pos, D: [np.float64(x) for x in sin_right(pos, D)],
    "prints while working": lambda pos, D: print("debug", pos, D) or sin_right(pos, D),
}
CORRECT_ROTATIONS = {
    "list": rot_right,
    "tuple": lambda vec, pos: tuple(rot_right(vec, pos)),
    "ndarray": rot_numpy,
    "float32 ndarray": lambda vec, pos: rot_numpy(vec, pos).astype(np.float32),
    "in place": rot_in_place,
}


@pytest.mark.parametrize("name", CORRECT_SINUSOIDS)
def test_a_correct_sinusoid_passes_whatever_it_returns(name):
    result = check_sinusoid(CORRECT_SINUSOIDS[name])
    assert result.passed, result.message
    assert result.mistake is None
    assert result.message.startswith("✓ sinusoid passed")


@pytest.mark.parametrize("name", CORRECT_ROTATIONS)
def test_a_correct_rotation_passes_whatever_it_returns(name):
    result = check_rope(CORRECT_ROTATIONS[name])
    assert result.passed, result.message
    assert result.mistake is None


def test_the_passing_message_shows_the_worked_trace():
    # PE(2) for D = 4 from the lesson: [sin 2, cos 2, sin 0.02, cos 0.02]
    assert "sinusoid(2, 4) = [0.9093, -0.4161, 0.0200, 0.9998]" in str(check_sinusoid(sin_right))
    # (1, 0) turned by 1 rad is (cos 1, sin 1)
    assert f"rotate([1, 0], 1) = [{math.cos(1):.4f}, {math.sin(1):.4f}]" in str(check_rope(rot_right))


# ---------------------------------------------------------------------------
# Buggy sinusoids, one per mistake (several where learners get there in several ways)


def _sin_with(angle_of, swapped=False):
    def sinusoid(pos, D):
        out = []
        for i in range(D):
            angle = angle_of(pos, D, i)
            use_sin = (i % 2 == 0) != swapped
            out.append(math.sin(angle) if use_sin else math.cos(angle))
        return out
    return sinusoid


def _stub(*args):
    raise NotImplementedError("write sinusoid(pos, D)")


D_MODEL = 512


def _sin_pairs_only(pos, D):  # loops over D // 2 pairs: an odd D loses its last sine
    out = []
    for k in range(D // 2):
        angle = pos / 10000 ** (2 * k / D)
        out += [math.sin(angle), math.cos(angle)]
    return out


def _sin_extra_cos(pos, D):  # loops over (D + 1) // 2 pairs and always appends the cos: one too many
    out = []
    for k in range((D + 1) // 2):
        angle = pos / 10000 ** (2 * k / D)
        out += [math.sin(angle), math.cos(angle)]
    return out


def _sin_raise_odd(pos, D):
    out = [0.0] * D
    for k in range(D // 2):
        angle = pos / 10000 ** (2 * k / D)
        out[2 * k], out[2 * k + 1] = math.sin(angle), math.cos(angle)
    if D % 2:
        raise IndexError("list index out of range")
    return out


def _sin_odd_not_implemented(pos, D):
    if D % 2:
        raise NotImplementedError("odd D")
    return sin_right(pos, D)


def _sin_nan_at_zero(pos, D):
    return [x * pos / pos for x in np.array(sin_right(pos, D))] if pos else [float("nan")] * D


def _sin_generator(pos, D):
    return (x for x in sin_right(pos, D))


BUGGY_SINUSOIDS = [
    ("not-implemented", _stub),
    ("element-index", _sin_with(lambda pos, D, i: pos / 10000 ** (2 * i / D))),        # 2i/D
    ("element-index", _sin_with(lambda pos, D, i: pos / 10000 ** (i / D))),            # i/D
    ("sin-cos-swapped", _sin_with(lambda pos, D, i: pos / 10000 ** (2 * (i // 2) / D), swapped=True)),
    ("exponent-k-over-d", _sin_with(lambda pos, D, i: pos / 10000 ** ((i // 2) / D))),
    ("model-dim", _sin_with(lambda pos, D, i: pos / 10000 ** (2 * (i // 2) / D_MODEL))),
    ("model-dim", _sin_with(lambda pos, D, i: pos / 10000 ** (2 * (i // 2) / 4))),       # right only for D = 4
    ("odd-dim", _sin_pairs_only),
    ("odd-dim", _sin_extra_cos),
    ("odd-dim", _sin_raise_odd),
    ("odd-dim", _sin_odd_not_implemented),
    ("wrong-shape", lambda pos, D: None),
    ("wrong-shape", lambda pos, D: sin_right(pos, D)[:-1]),
    ("wrong-shape", lambda pos, D: [sin_right(pos, D)]),                                   # shape (1, D)
    ("wrong-shape", _sin_generator),
    ("wrong-shape", lambda pos, D: " ".join(f"{x:.4f}" for x in sin_right(pos, D))),
    ("wrong-shape", lambda pos, D: [0.0] * 10**6),
    ("wrong-shape", lambda pos, D: itertools.count()),
    ("wrong-shape", lambda pos, D: [complex(x) for x in sin_right(pos, D)]),
    ("wrong-shape", lambda pos, D: {i: x for i, x in enumerate(sin_right(pos, D))}),
    ("not-finite", _sin_nan_at_zero),
    ("not-finite", lambda pos, D: np.array(sin_right(pos, D)) / np.arange(D)),  # element 0 divided by 0
    ("raised", lambda pos, D: 1 / 0),
    ("raised", lambda pos: [math.sin(pos)]),                                               # wrong signature
    ("raised", lambda pos, D: exit()),
    ("raised", lambda pos, D: sin_right(pos, D)[D]),                                     # IndexError
    ("base", _sin_with(lambda pos, D, i: pos / 1000 ** (2 * (i // 2) / D))),              # base 1000
    ("base", _sin_with(lambda pos, D, i: pos / 500000 ** (2 * (i // 2) / D), swapped=True)),  # and swapped
    ("wrong", _sin_with(lambda pos, D, i: pos * 10000 ** (2 * (i // 2) / D))),            # multiplies
    ("wrong", lambda pos, D: [0.0] * D),
]


@pytest.mark.parametrize("code, fn", BUGGY_SINUSOIDS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(BUGGY_SINUSOIDS)])
def test_a_buggy_sinusoid_is_diagnosed_with_exactly_its_code(code, fn):
    result = check_sinusoid(fn)
    assert isinstance(result, CheckResult)
    assert (result.passed, result.mistake) == (False, code), result.message
    assert result.message.startswith(f"✗ sinusoid [{code}]: ")


# ---------------------------------------------------------------------------
# Buggy rotations


def _rot_with(exponent=lambda k, D: 2 * k / D, turn="right", odd="keep"):
    def rotate(vec, pos):
        D = len(vec)
        out = [float(x) for x in vec]
        for k in range(D // 2):
            theta = pos / 10000 ** exponent(k, D)
            a, b = vec[2 * k], vec[2 * k + 1]
            c, s = math.cos(theta), math.sin(theta)
            if turn == "right":
                out[2 * k], out[2 * k + 1] = a * c - b * s, a * s + b * c
            elif turn == "clockwise":      # signs swapped
                out[2 * k], out[2 * k + 1] = a * c + b * s, -a * s + b * c
            elif turn == "sin-for-cos":    # cos and sin trade places
                out[2 * k], out[2 * k + 1] = a * s - b * c, a * c + b * s
        if D % 2 and odd == "drop":
            out.pop()
        if D % 2 and odd == "zero":
            out[-1] = 0.0
        if D % 2 and odd == "raise":
            raise IndexError("index out of range")
        return out
    return rotate


def _rot_wraps_odd(vec, pos):
    """Pairs the lone last element with the first one."""
    out = rot_right(vec, pos)
    if len(vec) % 2:
        theta = pos / 10000 ** ((len(vec) - 1) / len(vec))
        out[-1] = vec[-1] * math.cos(theta) - vec[0] * math.sin(theta)
    return out


def _rot_overwrites_a(vec, pos):
    vec = list(vec)
    D = len(vec)
    for k in range(D // 2):
        theta = pos / 10000 ** (2 * k / D)
        vec[2 * k] = vec[2 * k] * math.cos(theta) - vec[2 * k + 1] * math.sin(theta)
        vec[2 * k + 1] = vec[2 * k] * math.sin(theta) + vec[2 * k + 1] * math.cos(theta)  # uses the new a
    return vec


BUGGY_ROTATIONS = [
    ("not-implemented", _stub),
    ("element-index", _rot_with(exponent=lambda k, D: 2 * (2 * k) / D)),               # i = 2k in 2i/D
    ("sin-cos-swapped", _rot_with(turn="sin-for-cos")),
    ("exponent-k-over-d", _rot_with(exponent=lambda k, D: k / D)),
    ("rotation-sign", _rot_with(turn="clockwise")),
    ("model-dim", _rot_with(exponent=lambda k, D: 2 * k / 4)),                           # a global D = 4
    ("model-dim", _rot_with(exponent=lambda k, D: 2 * k / D_MODEL)),
    # base b: 10000^e = b^(2k/D) with e = (2k/D)·log b / log 10000
    ("base", _rot_with(exponent=lambda k, D: 2 * k / D * math.log(1000) / math.log(10000))),
    ("base", _rot_with(exponent=lambda k, D: 2 * k / D * math.log(1e6) / math.log(10000), turn="clockwise")),
    ("odd-dim", _rot_with(odd="drop")),
    ("odd-dim", _rot_with(odd="zero")),
    ("odd-dim", _rot_with(odd="raise")),
    ("odd-dim", _rot_wraps_odd),
    ("wrong-shape", lambda vec, pos: None),
    ("wrong-shape", lambda vec, pos: [rot_right(vec, pos)]),
    ("wrong-shape", lambda vec, pos: np.array(rot_right(vec, pos)).reshape(-1, 1)),
    ("wrong-shape", lambda vec, pos: rot_right(vec, pos)[0]),
    ("not-finite", lambda vec, pos: np.array(rot_right(vec, pos)) / 0.0),
    ("raised", lambda vec, pos: vec.rotate(pos)),                                           # AttributeError
    ("raised", lambda vec, pos: [x + "a" for x in vec]),                                    # TypeError
    ("raised", lambda vec, pos: rot_right(vec, pos, 10000)),
    ("wrong", lambda vec, pos: vec),                                                         # no rotation
    ("wrong", _rot_overwrites_a),
    ("wrong", _rot_with(exponent=lambda k, D: 2 * k / D + 1)),
]


@pytest.mark.parametrize("code, fn", BUGGY_ROTATIONS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(BUGGY_ROTATIONS)])
def test_a_buggy_rotation_is_diagnosed_with_exactly_its_code(code, fn):
    result = check_rope(fn)
    assert (result.passed, result.mistake) == (False, code), result.message
    assert result.message.startswith(f"✗ rotate [{code}]: ")


def test_every_mistake_code_is_demonstrated():
    shown = {code for code, _ in BUGGY_SINUSOIDS} | {code for code, _ in BUGGY_ROTATIONS}
    assert shown == set(MISTAKES)
    # wherever a mistake applies to both, both are demonstrated (rotation-sign has no sinusoid form)
    assert {code for code, _ in BUGGY_SINUSOIDS} == set(MISTAKES) - {"rotation-sign"}
    assert {code for code, _ in BUGGY_ROTATIONS} == set(MISTAKES)


# ---------------------------------------------------------------------------
# The message: one sentence naming the mistake, a hint, an example with expected vs received


def test_the_message_names_the_mistake_and_shows_one_example():
    result = check_rope(_rot_with(turn="clockwise"))
    lines = result.message.splitlines()
    assert lines[0] == ("✗ rotate [rotation-sign]: Your rotation turns the wrong way: "
                        "the signs of the sin terms are swapped.")
    assert lines[1].startswith("  Hint: ")
    assert lines[2] == "  For example, rotate([1, 0], 1)"
    # (1, 0) turned by +1 rad is (cos 1, sin 1); clockwise it would be (cos 1, −sin 1)
    assert lines[3] == f"    expected: [{math.cos(1):.4f}, {math.sin(1):.4f}]"
    assert lines[4].startswith(f"    received: [{math.cos(1):.4f}, {-math.sin(1):.4f}]")
    assert "element 1 differs" in lines[4]
    assert str(result) == repr(result) == result.message
    assert result.example == ((1.0, 0.0), 1)


# Each buggy function with the checker it was written for (the not-implemented stub is in both lists).
CHECKED = ([(check_sinusoid, "sinusoid", code, fn) for code, fn in BUGGY_SINUSOIDS]
           + [(check_rope, "rotate", code, fn) for code, fn in BUGGY_ROTATIONS])


@pytest.mark.parametrize("check, name, code, fn", CHECKED, ids=[f"{n}-{c}-{i}" for i, (_, n, c, _) in enumerate(CHECKED)])
def test_the_first_line_is_one_sentence_for_every_mistake(check, name, code, fn):
    text = str(check(fn))
    first = text.splitlines()[0]
    assert first.startswith(f"✗ {name} [{code}]: "), first
    sentence = first.split("]: ", 1)[1]
    assert sentence[0].isupper() and sentence.endswith("."), first
    assert "Traceback" not in text


def test_not_implemented_shows_the_target_values():
    text = str(check_sinusoid(_stub))
    assert text.splitlines()[0] == ("✗ sinusoid [not-implemented]: "
                                    "Not implemented yet: it still raises NotImplementedError.")
    # the seed's worked trace, PE(2) for D = 4
    assert "expected: [0.9093, -0.4161, 0.0200, 0.9998]" in text
    assert "received: it raised NotImplementedError: write sinusoid(pos, D)" in text
    # and the rotation's: rotate([1, 0], 1) is (cos 1, sin 1)
    lines = str(check_rope(_stub)).splitlines()
    assert lines[0] == "✗ rotate [not-implemented]: Not implemented yet: it still raises NotImplementedError."
    assert lines[1].startswith("  Hint: Replace the raise line with your code: each pair (a, b) = (vec[2k], vec[2k+1])")
    assert lines[2:] == ["  For example, rotate([1, 0], 1)", f"    expected: [{math.cos(1):.4f}, {math.sin(1):.4f}]",
                         "    received: it raised NotImplementedError: write sinusoid(pos, D)"]


def test_the_example_shows_the_main_mistake_when_there_are_two():
    # k/D and a clockwise turn: rotate([1, 0], 1) shows only the turn; the example must show the exponent too
    result = check_rope(_rot_with(exponent=lambda k, D: k / D, turn="clockwise"))
    assert result.mistake == "exponent-k-over-d"
    assert "The signs of the sin terms are also swapped" in result.message
    vec, pos = result.example
    assert len(vec) >= 4  # a vector with a second pair, where k/D differs from 2k/D


def test_element_index_and_swapped_reports_element_index_and_mentions_the_swap():
    result = check_sinusoid(_sin_with(lambda pos, D, i: pos / 10000 ** (2 * i / D), swapped=True))
    assert result.mistake == "element-index"
    assert "Sin and cos are also swapped." in result.message


def test_an_extra_odd_d_problem_is_mentioned_with_the_main_mistake():
    def sinusoid(pos, D):  # element index AND an odd D loses its last sine
        return [f(pos / 10000 ** (2 * (2 * k + j) / D)) for k in range(D // 2) for j, f in enumerate((math.sin, math.cos))]
    result = check_sinusoid(sinusoid)
    assert result.mistake == "element-index"
    assert "Odd D goes wrong in yet another way." in result.message


def test_model_dim_names_the_fixed_d():
    assert "fixed D = 512" in check_sinusoid(_sin_with(lambda pos, D, i: pos / 10000 ** (2 * (i // 2) / 512))).message
    assert "D = 4 from somewhere other than the vector" in check_rope(_rot_with(exponent=lambda k, D: 2 * k / 4)).message


def test_hints_for_the_known_wrong_layouts():
    def half_split(vec, pos):  # GPT-NeoX pairs vec[k] with vec[k + D/2]
        D, out = len(vec), [float(x) for x in vec]
        for k in range(D // 2):
            theta = pos / 10000 ** (2 * k / D)
            a, b = vec[k], vec[k + D // 2]
            out[k], out[k + D // 2] = a * math.cos(theta) - b * math.sin(theta), a * math.sin(theta) + b * math.cos(theta)
        return out
    result = check_rope(half_split)
    assert result.mistake == "wrong" and "half-split" in result.message
    result = check_rope(_rot_overwrites_a)
    assert result.mistake == "wrong" and "overwrite a" in result.message


def test_numbers_that_differ_beyond_four_decimals_are_shown_with_more():
    def sinusoid(pos, D):  # off by 3e-5 in one element: above ATOL, invisible at 4 decimals
        out = sin_right(pos, D)
        out[-1] += 3e-5
        return out
    assert 3e-5 > ATOL
    text = check_sinusoid(sinusoid).message
    expected_line = next(line for line in text.splitlines() if "expected:" in line)
    received_line = next(line for line in text.splitlines() if "received:" in line)
    assert expected_line.split(": ", 1)[1] != received_line.split(": ", 1)[1].split("   (")[0]


# ---------------------------------------------------------------------------
# Never crashes


class _Weird:
    def __len__(self):
        raise RuntimeError("no len")

    def __iter__(self):
        raise RuntimeError("no iter")

    def __repr__(self):
        raise RuntimeError("no repr")


class _BadArray:
    def __array__(self, *args, **kwargs):
        raise RuntimeError("no array")


def _recurse(*args):
    return _recurse(*args)


STRANGE = [
    lambda *a: _Weird(),
    lambda *a: _BadArray(),
    lambda *a: object(),
    lambda *a: range(10**12),
    lambda *a: np.matrix([[1.0, 2.0]]),
    lambda *a: [None, None],
    lambda *a: [[1.0], [2.0, 3.0]],
    lambda *a: 42,
    lambda *a: True,
    lambda *a: np.array([]),
    lambda *a: b"bytes",
    lambda *a: {1.0, 2.0},
    lambda *a: (_ for _ in ()).throw(ValueError("x" * 10_000)),
    _recurse,
    lambda *a: np.ones(5000) * np.inf,
    lambda *a: (_ for _ in ()).throw(SystemExit(3)),
]


@pytest.mark.parametrize("fn", STRANGE, ids=range(len(STRANGE)))
@pytest.mark.parametrize("check", [check_sinusoid, check_rope])
def test_the_checker_never_crashes(check, fn):
    result = check(fn)
    assert not result.passed
    assert result.mistake in MISTAKES
    assert len(result.message) < 2000
    assert "\n" in result.message and "Hint" in result.message


@pytest.mark.parametrize("check", [check_sinusoid, check_rope])
@pytest.mark.parametrize("value", [None, [1, 2], "sinusoid", 3])
def test_passing_something_other_than_a_function_is_explained(check, value):
    result = check(value)
    assert result.mistake == "raised"
    assert "needs the function itself" in result.message


def test_the_learners_prints_and_warnings_do_not_leak(capsys, recwarn):
    def sinusoid(pos, D):
        print("debugging", pos)
        np.log(np.zeros(1))  # RuntimeWarning: divide by zero
        return sin_right(pos, D)
    assert check_sinusoid(sinusoid).passed
    assert capsys.readouterr().out == ""
    assert len(recwarn) == 0


def test_a_rotation_that_mutates_its_input_cannot_corrupt_the_probes():
    def rotate(vec, pos):
        vec[:] = 99.0
        return vec
    assert check_rope(rotate).mistake == "wrong"
    assert check_rope(rot_right).passed
    assert ROPE_PROBES[0] == ((1.0, 0.0), 1)


def test_the_probes_cover_even_and_odd_lengths_and_the_worked_trace():
    assert SINUSOID_PROBES[0] == (2, 4)
    assert {D % 2 for _, D in SINUSOID_PROBES} == {0, 1}
    assert {len(vec) % 2 for vec, _ in ROPE_PROBES} == {0, 1}
    # at least two even lengths with a second pair, so model-dim and k/D are visible
    assert len({D for _, D in SINUSOID_PROBES if D % 2 == 0 and D >= 4}) >= 2
    assert len({len(v) for v, _ in ROPE_PROBES if len(v) % 2 == 0 and len(v) >= 4}) >= 2


# ---------------------------------------------------------------------------
# compare_script: the command run, side by side


SCRIPT = """
# comments and blank lines are skipped

PE 2 4
ROPE 1 1 0
DOT 5 3 1 0 1 0
DOT 5 3 1 0 0 1
"""


def test_compare_script_with_right_answers_matches_everywhere():
    comparison = compare_script(SCRIPT, sin_right, rot_right)
    assert comparison.differing == 0
    assert [row.line for row in comparison.rows] == ["PE 2 4", "ROPE 1 1 0", "DOT 5 3 1 0 1 0", "DOT 5 3 1 0 0 1"]
    text = str(comparison)
    assert text.endswith("All 4 lines match.")
    assert "✓ PE 2 4\n    yours     0.9093 -0.4161 0.0200 0.9998\n    expected  0.9093 -0.4161 0.0200 0.9998" in text


def test_a_wrong_rotation_shows_in_the_dot_lines_too():
    comparison = compare_script(SCRIPT, sin_right, _rot_with(turn="clockwise"))
    same = {row.line: row.same for row in comparison.rows}
    assert same == {"PE 2 4": True, "ROPE 1 1 0": False, "DOT 5 3 1 0 1 0": True, "DOT 5 3 1 0 0 1": False}
    dot = comparison.rows[3]
    # rope((1,0), 5) · rope((0,1), 3) = cos 5 · (−sin 3) + sin 5 · cos 3 = sin(5 − 3) = sin 2
    assert dot.expected == f"{math.sin(2):.4f}"
    assert dot.yours == f"{-math.sin(2):.4f}"
    assert "✗ DOT 5 3 1 0 0 1" in str(comparison)
    assert str(comparison).endswith("2 of 4 lines differ (marked ✗).")


def test_the_stubs_show_as_error_lines_not_tracebacks():
    comparison = compare_script(SCRIPT, _stub, _stub)
    assert comparison.differing == 4
    assert all(row.yours.startswith("error: ") and "NotImplementedError" in row.yours for row in comparison.rows)
    assert comparison.rows[0].yours == "error: PE raised NotImplementedError: write sinusoid(pos, D)"
    assert "Traceback" not in str(comparison)


@pytest.mark.parametrize("fn", STRANGE, ids=range(len(STRANGE)))
def test_compare_script_never_crashes(fn):
    comparison = compare_script(SCRIPT, fn, fn)
    assert comparison.differing == 4
    assert "Traceback" not in str(comparison)


def test_compare_script_shows_bad_command_lines_on_both_sides():
    comparison = compare_script("FOO 1\nPE 2 0", sin_right, rot_right)
    assert [row.same for row in comparison.rows] == [True, True]
    assert comparison.rows[0].expected == "error: unknown command 'FOO' (expected PE, ROPE or DOT)"


def test_compare_script_accepts_a_list_of_lines():
    assert compare_script(["PE 0 2", "  ", "# x"], sin_right, rot_right).rows[0].expected == "0.0000 1.0000"


D_GLOBAL = 4


def _rot_global_d(vec, pos):
    """A model-wide D for everything, the loop included: right for length 4, crashes or wrong elsewhere."""
    out = [float(x) for x in vec]
    for k in range(D_GLOBAL // 2):
        theta = pos / 10000 ** (2 * k / D_GLOBAL)
        a, b = vec[2 * k], vec[2 * k + 1]
        out[2 * k], out[2 * k + 1] = a * math.cos(theta) - b * math.sin(theta), a * math.sin(theta) + b * math.cos(theta)
    return out


def _sin_global_d(pos, D):
    """Ignores the D argument altogether: right for D = 6 only, the wrong length elsewhere."""
    return sin_right(pos, 6)


@pytest.mark.parametrize("check, fn, fixed", [(check_rope, _rot_global_d, 4), (check_sinusoid, _sin_global_d, 6)])
def test_a_d_from_elsewhere_that_also_sets_the_length_is_model_dim(check, fn, fixed):
    result = check(fn)
    assert result.mistake == "model-dim", result.message
    assert f"D = {fixed}" in result.message.splitlines()[0]


@pytest.mark.parametrize("base, shown", [(1000, "1,000"), (100000.0, "100,000"), (12345.6, "12,345.6")])
def test_another_base_is_named_with_the_advice_to_check_it(base, shown):
    def sinusoid(pos, D):
        return [(math.sin if i % 2 == 0 else math.cos)(pos / base ** (2 * (i // 2) / D)) for i in range(D)]

    def rotate(vec, pos):
        out = [float(x) for x in vec]
        for k in range(len(vec) // 2):
            theta = pos / base ** (2 * k / len(vec))
            a, b = vec[2 * k], vec[2 * k + 1]
            out[2 * k], out[2 * k + 1] = a * math.cos(theta) - b * math.sin(theta), a * math.sin(theta) + b * math.cos(theta)
        return out

    for result, name in ((check_sinusoid(sinusoid), "sinusoid"), (check_rope(rotate), "rotate")):
        lines = result.message.splitlines()
        assert result.mistake == "base", result.message
        assert lines[0] == f"✗ {name} [base]: Your base is {shown}, not 10000, so every pair after the first turns at " \
                           "the wrong speed."
        assert lines[1].startswith("  Hint: Check the base: the divisor is 10000 ** (2 * k / D)")


def test_a_base_that_changes_with_d_is_not_called_a_base():
    # base 1000 up to D = 4, 100,000 beyond: no single base reproduces every length
    def sinusoid(pos, D):
        base = 1000 if D <= 4 else 100000
        return [(math.sin if i % 2 == 0 else math.cos)(pos / base ** (2 * (i // 2) / D)) for i in range(D)]

    assert check_sinusoid(sinusoid).mistake == "wrong"


def test_a_function_right_only_for_length_2_is_not_called_model_dim():
    # every exponent is 0 for a single pair, so length 2 says nothing about where D came from
    def rotate(vec, pos):
        return rot_right(vec, pos) if len(vec) == 2 else [0.0] * len(vec)
    assert check_rope(rotate).mistake == "wrong"
