"""check_new_base (09) and check_collisions (10) name the learner's mistake.

Each buggy version is written out by hand, as a learner would get it wrong;
the correct versions are literal loops. The bfloat16 reference in these tests
is rounding by hand (integer arithmetic, ties to even), independent of both
ml_dtypes and the checker.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc_helpers.checks import (
    COLLISION_MISTAKES,
    COLLISION_PROBES,
    NEW_BASE_MISTAKES,
    CheckResult,
    _collisions_reference,
    check_collisions,
    check_new_base,
)

# ---------------------------------------------------------------------------
# 09: new_base


def base_right(base, s, D):
    # base' = base · s^(D/(D−2))
    return base * s ** (D / (D - 2))


def base_by_search(base, s, D):
    """Right, another way: bisect for the base whose slowest frequency is the old one divided by s."""
    target = base ** (-(D - 2) / D) / s
    lo, hi = math.log(base), math.log(base) + 10 * math.log(s) + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.exp(mid) ** (-(D - 2) / D) > target:
            lo = mid
        else:
            hi = mid
    return math.exp(lo)


def base_not_implemented(base, s, D):
    raise NotImplementedError


NEW_BASE_BUGS = {
    "no-exponent": lambda base, s, D: base * s,
    "exponent-d-over-2": lambda base, s, D: base * s ** (D / 2),
    "exponent-inverted": lambda base, s, D: base * s ** ((D - 2) / D),
    "base-divided": lambda base, s, D: base / s ** (D / (D - 2)),
    "returned-frequencies": lambda base, s, D: [base ** (-2 * k / D) / s for k in range(D // 2)],
    "not-implemented": base_not_implemented,
    "raised": lambda base, s, D: base * s ** (D / (D - D)),
    "wrong-shape": lambda base, s, D: None,
    "not-finite": lambda base, s, D: float("nan"),
    "wrong": lambda base, s, D: base * s ** (D / (D - 2)) + 1.0,
}


@pytest.mark.parametrize("fn", [base_right, base_by_search, lambda b, s, D: np.float64(base_right(b, s, D)),
                                lambda b, s, D: np.float32(base_right(b, s, D)), lambda b, s, D: [base_right(b, s, D)]])
def test_new_base_right_answers_pass(fn):
    result = check_new_base(fn)
    assert result.passed and result.mistake is None, result.message
    assert str(result).startswith("✓ new_base passed all 5 checks")


#: What each bug returns for LLaMA 2's sizes, new_base(10000, 8, 128), as the message shows it (6 significant digits).
RECEIVED = {
    "no-exponent": "80,000",                  # 10000 · 8
    "exponent-d-over-2": "6.2771e+61",        # 10000 · 8^64
    "exponent-inverted": "77,442.5",          # 10000 · 8^(126/128)
    "base-divided": "1,209.41",               # 10000 / 8^(128/126)
    "returned-frequencies": "an array of 64 frequencies",
    "not-implemented": "NotImplementedError",
    "raised": "it raised ZeroDivisionError: division by zero",
    "wrong-shape": "None (is the return statement missing?)",
    "not-finite": "nan",
    "wrong": "82,685.6",                      # the right base + 1
}


def test_the_expected_and_received_numbers_are_the_formulas():
    assert f"{10000 * 8 ** (128 / 126):,.1f}" == "82,684.6"  # base' = base · s^(D/(D−2))
    for code, shown in RECEIVED.items():
        if shown[0].isdigit():
            value = NEW_BASE_BUGS[code](10000.0, 8.0, 128)
            assert math.isclose(float(shown.replace(",", "")), value, rel_tol=5e-6), code


@pytest.mark.parametrize("code", NEW_BASE_BUGS)
def test_new_base_each_bug_gets_its_code(code):
    result = check_new_base(NEW_BASE_BUGS[code])
    assert isinstance(result, CheckResult)
    assert result.mistake == code, result.message
    lines = result.message.splitlines()
    assert lines[0].startswith(f"✗ new_base [{code}]: ") and lines[0].endswith(".")
    # every bug is already wrong on the first probe, LLaMA 2's sizes: the example shows it with both numbers
    assert result.example == (10000.0, 8.0, 128)
    assert lines[2:] == ["  For example, new_base(10000, 8, 128)", "    expected: 82,684.6",
                         f"    received: {RECEIVED[code]}"]
    assert "Traceback" not in result.message


def test_every_new_base_code_is_tested():
    assert set(NEW_BASE_BUGS) == set(NEW_BASE_MISTAKES) == set(RECEIVED)


def test_new_base_not_callable():
    result = check_new_base(82685.0)
    assert result.mistake == "raised" and "the function itself" in result.message


# ---------------------------------------------------------------------------
# 10: collisions


def round_bits(n: int, bits: int, ties: str = "even") -> int:
    """n ≥ 0 rounded to ``bits`` significant bits, by hand: nearest, ties to even (or away), or toward zero."""
    if n < 2**bits:
        return n
    shift = n.bit_length() - bits
    q, r = n >> shift, n & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if ties == "zero":
        pass
    elif r > half or (r == half and (ties == "away" or q & 1)):
        q += 1
    return q << shift


def collisions_right(pos, lo, hi):
    found = set()
    for n in range(lo, hi):
        if round_bits(n, 8) == round_bits(pos, 8):
            found.add(n)
    return found


def collisions_ml_dtypes(pos, lo, hi):
    bf16 = ml_dtypes.bfloat16
    return sorted(n for n in range(lo, hi) if bf16(n) == bf16(pos))


def collisions_numpy(pos, lo, hi):
    n = np.arange(lo, hi)
    return n[n.astype(ml_dtypes.bfloat16) == np.array(pos).astype(ml_dtypes.bfloat16)]


def collisions_not_implemented(pos, lo, hi):
    raise NotImplementedError


COLLISION_BUGS = {
    "round-toward-zero": lambda pos, lo, hi: {n for n in range(lo, hi)
                                              if round_bits(n, 8, "zero") == round_bits(pos, 8, "zero")},
    "ties-away": lambda pos, lo, hi: {n for n in range(lo, hi)
                                      if round_bits(n, 8, "away") == round_bits(pos, 8, "away")},
    "float16": lambda pos, lo, hi: {n for n in range(lo, hi) if np.float16(n) == np.float16(pos)},
    "range-includes-hi": lambda pos, lo, hi: {n for n in range(lo, hi + 1) if round_bits(n, 8) == round_bits(pos, 8)},
    "range-skips-lo": lambda pos, lo, hi: {n for n in range(lo + 1, hi) if round_bits(n, 8) == round_bits(pos, 8)},
    "missing-pos": lambda pos, lo, hi: {n for n in range(lo, hi) if n != pos and round_bits(n, 8) == round_bits(pos, 8)},
    "not-implemented": collisions_not_implemented,
    "raised": lambda pos, lo, hi: {n for n in range(lo, hi) if n / (pos - pos)},
    "wrong-shape": lambda pos, lo, hi: "256, 257",
    "wrong": lambda pos, lo, hi: {pos},
}


def test_hand_rounding_matches_ml_dtypes():
    n = np.arange(0, 70000)
    assert [round_bits(int(x), 8) for x in n] == n.astype(ml_dtypes.bfloat16).astype(np.int64).tolist()


@pytest.mark.parametrize("fn", [collisions_right, collisions_ml_dtypes, collisions_numpy,
                                lambda pos, lo, hi: tuple(collisions_right(pos, lo, hi))])
def test_collisions_right_answers_pass(fn):
    result = check_collisions(fn)
    assert result.passed, result.message
    assert str(result) == "✓ collisions passed all 6 checks. For example, collisions(257, 250, 262) = {256, 257}."


@pytest.mark.parametrize("code", COLLISION_BUGS)
def test_collisions_each_bug_gets_its_code(code):
    with np.errstate(over="ignore"):
        result = check_collisions(COLLISION_BUGS[code])
    assert result.mistake == code, result.message
    first = result.message.splitlines()[0]
    assert first.startswith(f"✗ collisions [{code}]: ") and first.endswith(".")
    assert "Traceback" not in result.message


def test_every_collision_code_is_tested():
    assert set(COLLISION_BUGS) == set(COLLISION_MISTAKES)


def test_collision_probes_worked_examples():
    # the lesson's examples, computed by hand: 257 ties to 256; gap 8 above 1024
    assert collisions_right(257, 250, 262) == {256, 257}
    assert collisions_right(1030, 1020, 1045) == set(range(1029, 1036))
    # the probe where the whole range collides: 6000 and 6032 are ties that go to the even 6016 = 188·32
    assert collisions_right(6010, 6000, 6032) == set(range(6000, 6032))
    assert (6010, 6000, 6032) in COLLISION_PROBES


@given(st.integers(0, 200000), st.integers(1, 300), st.integers(-50, 350))
def test_collisions_checker_reference_agrees_with_hand_rounding(lo, width, offset):
    # the reference check_collisions compares answers with, on any input, not only on its probes;
    # pos near the range (mostly inside it), so that most sets are not empty
    pos = max(lo + offset, 0)
    assert _collisions_reference(pos, lo, lo + width) == collisions_right(pos, lo, lo + width)


@pytest.mark.parametrize("probe", COLLISION_PROBES)
def test_the_collisions_message_shows_the_hand_rounded_answer(probe):
    # an answer that is wrong on this probe only: the message's expected set is the hand-rounded one
    def collisions(pos, lo, hi):
        return set() if (pos, lo, hi) == probe else collisions_right(pos, lo, hi)

    result = check_collisions(collisions)
    assert (result.mistake, result.example) == ("wrong", probe), result.message
    expected = sorted(collisions_right(*probe))
    shown = next(line for line in result.message.splitlines() if line.startswith("    expected: "))
    if len(expected) > 6:  # a run of consecutive positions is shown by its ends
        assert expected == list(range(expected[0], expected[-1] + 1))
        assert shown == f"    expected: {expected[0]} … {expected[-1]} ({len(expected)} positions)"
    else:
        assert shown == "    expected: {" + ", ".join(map(str, expected)) + "}"
