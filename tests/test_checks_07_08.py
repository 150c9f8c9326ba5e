"""check_hf_to_meta (notebook 07) and check_alibi_slopes (notebook 08): references and named mistakes.

The references inside checks.py are compared with independent literal
versions (tests/literal.py for the slopes, a per-row loop for the rows), and
each named mistake is written out here by hand, once, as a learner would.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal import literal_alibi_slopes

from posenc_helpers import alibi_slopes, half_split_to_interleaved
from posenc_helpers.checks import (
    ALIBI_PROBES,
    HF_PROBES,
    MISTAKES_07,
    MISTAKES_08,
    _alibi_reference,
    check_alibi_slopes,
    check_hf_to_meta,
)

# --- notebook 07: hf_to_meta -------------------------------------------------------------------------


def literal_hf_to_meta(w, n_heads):
    """Meta's row h·D + 2k + t is Hugging Face's row h·D + t·D/2 + k, one row at a time."""
    rows = len(w)
    head_dim = rows // n_heads
    out = [None] * rows
    for h in range(n_heads):
        for k in range(head_dim // 2):
            for t in range(2):
                out[h * head_dim + 2 * k + t] = list(w[h * head_dim + t * (head_dim // 2) + k])
    return np.array(out)


def hf_permute(w, n_heads):
    """The conversion script's permute, in numpy (Meta → Hugging Face)."""
    dim1, dim2 = w.shape
    return w.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(0, 2, 1, 3).reshape(dim1, dim2)


def test_the_literal_inverse_passes_and_undoes_the_script():
    assert check_hf_to_meta(literal_hf_to_meta).passed
    rng = np.random.default_rng(0)
    for n_heads, head_dim, d_model in HF_PROBES:
        w = rng.standard_normal((n_heads * head_dim, d_model))
        np.testing.assert_array_equal(literal_hf_to_meta(hf_permute(w, n_heads), n_heads), w)


def test_one_head_is_the_lessons_inverse_permutation():
    # P⁻¹ [0 … 7] = [0 4 1 5 2 6 3 7], as printed in notebook 07
    rows = literal_hf_to_meta(np.arange(8.0)[:, None], 1)[:, 0]
    assert rows.tolist() == [0, 4, 1, 5, 2, 6, 3, 7] == half_split_to_interleaved(np.arange(8.0)).tolist()


MISTAKEN_07 = {
    "forward-permutation": lambda w, n: hf_permute(w, n),
    "one-head": lambda w, n: literal_hf_to_meta(w, 1),
    "columns": lambda w, n: literal_hf_to_meta(w.T, 1).T,
    "unchanged": lambda w, n: w.copy(),
    "wrong-shape": lambda w, n: literal_hf_to_meta(w, n)[:-1],
    "raised": lambda w, n: w[n * 1000],
}


@pytest.mark.parametrize("code", MISTAKEN_07)
def test_each_hf_mistake_gets_its_code(code):
    result = check_hf_to_meta(MISTAKEN_07[code])
    assert code in MISTAKES_07
    assert not result.passed and result.mistake == code, result.message
    assert result.message.startswith(f"✗ hf_to_meta [{code}]: ")


def test_hf_not_implemented_and_not_a_function():
    def hf_to_meta(w, n_heads):
        raise NotImplementedError("write hf_to_meta(w, n_heads)")

    result = check_hf_to_meta(hf_to_meta)
    assert result.mistake == "not-implemented" and "Traceback" not in result.message
    assert check_hf_to_meta(3).mistake == "raised"
    assert check_hf_to_meta(lambda w, n: literal_hf_to_meta(w, n)[::-1]).mistake == "wrong"


# --- notebook 08: alibi_slopes_for -------------------------------------------------------------------


def test_the_literal_slopes_pass():
    assert check_alibi_slopes(literal_alibi_slopes).passed
    assert check_alibi_slopes(alibi_slopes).passed


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 200))
def test_the_checkers_reference_is_the_papers_slopes_for_any_n(n):
    # the checker compares with _alibi_reference: it must be the literal slopes for every n, not only the probes
    np.testing.assert_allclose(_alibi_reference(n), literal_alibi_slopes(n), rtol=1e-12)
    np.testing.assert_allclose(alibi_slopes(n), literal_alibi_slopes(n), rtol=1e-12)


@pytest.mark.parametrize("as_type", [list, tuple, np.array, lambda slopes: np.array(slopes, dtype=np.float32)],
                         ids=["list", "tuple", "array", "float32"])
def test_a_right_answer_passes_whatever_its_type(as_type):
    result = check_alibi_slopes(lambda n: as_type(literal_alibi_slopes(n)))
    assert result.passed, result.message


@pytest.mark.parametrize("n", ALIBI_PROBES)
def test_an_answer_wrong_for_one_n_fails_on_that_n(n):
    # every probe counts: halve the slopes for one n only, and the checker shows that n
    result = check_alibi_slopes(lambda k: [m / 2 if k == n else m for m in literal_alibi_slopes(k)])
    assert (result.passed, result.mistake, result.example) == (False, "wrong", (n,)), result.message
    assert f"alibi_slopes_for({n})" in result.message


def _c(n):
    return 2 ** math.floor(math.log2(n))


MISTAKEN_08 = {
    "power-of-two-formula": lambda n: [2 ** (-8 * (h + 1) / n) for h in range(n)],
    "off-by-one": lambda n: [2 ** (-8 * h / _c(n)) for h in range(_c(n))]
    + [2 ** (-8 * h / (2 * _c(n))) for h in range(2 * _c(n))][0::2][: n - _c(n)],
    "first-of-2c": lambda n: literal_alibi_slopes(_c(n)) + literal_alibi_slopes(2 * _c(n))[: n - _c(n)]
    if _c(n) != n else literal_alibi_slopes(n),
    "odd-of-2c": lambda n: literal_alibi_slopes(_c(n)) + literal_alibi_slopes(2 * _c(n))[1::2][: n - _c(n)]
    if _c(n) != n else literal_alibi_slopes(n),
    "sorted": lambda n: sorted(literal_alibi_slopes(n), reverse=True),
    "wrong-shape": lambda n: literal_alibi_slopes(n)[:-1],
    "not-finite": lambda n: [float("nan")] * n,
    "raised": lambda n: 1 / (n - n),
}


@pytest.mark.parametrize("code", MISTAKEN_08)
def test_each_slope_mistake_gets_its_code(code):
    result = check_alibi_slopes(MISTAKEN_08[code])
    assert code in MISTAKES_08
    assert not result.passed and result.mistake == code, result.message
    first = result.message.splitlines()[0]
    assert first.startswith(f"✗ alibi_slopes_for [{code}]: ") and first.endswith(".")


def test_the_naive_formula_is_named_on_n_12():
    result = check_alibi_slopes(MISTAKEN_08["power-of-two-formula"])
    assert result.example == (12,) and "alibi_slopes_for(12)" in result.message
    assert "0.7071" in result.message  # the expected head 8


def test_off_by_one_in_the_naive_formula_mentions_both():
    result = check_alibi_slopes(lambda n: [2 ** (-8 * h / n) for h in range(n)])
    assert result.mistake == "off-by-one" and "power-of-two formula is also used" in result.message


def test_slopes_not_implemented_shows_n_12_without_a_traceback():
    def alibi_slopes_for(n):
        raise NotImplementedError("write alibi_slopes_for(n)")

    result = check_alibi_slopes(alibi_slopes_for)
    assert result.mistake == "not-implemented" and result.example == (12,)
    assert "Traceback" not in result.message
    assert check_alibi_slopes(lambda n: [0.5] * n).mistake == "wrong"
    assert 12 in ALIBI_PROBES
