"""posenc_helpers.attention: one head of self-attention against a literal loop, and what it does with order.

The reference below is written straight from the formulas with plain Python
floats and the math module, one element at a time:
s_ij = Σ_c q_ic·k_jc / √d_head, A_ij = e^(s_ij) / Σ_l e^(s_il) over the
allowed keys, out_i = Σ_j A_ij·v_j.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from posenc_helpers.attention import attention_weights, causal_mask, embed_words, random_head, self_attention


def literal_matmul(a, b):
    return [[sum(a[i][c] * b[c][j] for c in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def literal_attention(x, w_q, w_k, w_v, causal=False):
    """(weights, outputs) by hand, one element at a time."""
    x, w_q, w_k, w_v = (np.asarray(a).tolist() for a in (x, w_q, w_k, w_v))
    q, k, val = literal_matmul(x, w_q), literal_matmul(x, w_k), literal_matmul(x, w_v)
    d_head, n = len(w_q[0]), len(x)
    weights, outputs = [], []
    for i in range(n):
        allowed = [j for j in range(n) if not causal or j <= i]
        scores = {j: sum(q[i][c] * k[j][c] for c in range(d_head)) / math.sqrt(d_head) for j in allowed}
        top = max(scores.values())
        exps = {j: math.exp(s - top) for j, s in scores.items()}
        total = sum(exps.values())
        row = [exps[j] / total if j in exps else 0.0 for j in range(n)]
        weights.append(row)
        outputs.append([sum(row[j] * val[j][c] for j in range(n)) for c in range(len(w_v[0]))])
    return weights, outputs


def seeded_input(n_tokens, d_model=4, d_head=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_tokens, d_model)), random_head(d_model, d_head, seed)


# --- against the literal loop -------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_tokens, d_model, d_head, seed", [(1, 1, 1, 0), (3, 8, 4, 1), (5, 6, 2, 2), (7, 3, 5, 3)])
def test_matches_the_literal_loop(n_tokens, d_model, d_head, seed, causal):
    x, (w_q, w_k, w_v) = seeded_input(n_tokens, d_model, d_head, seed)
    want_weights, want_out = literal_attention(x, w_q, w_k, w_v, causal)
    np.testing.assert_allclose(attention_weights(x, w_q, w_k, causal), want_weights, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(self_attention(x, w_q, w_k, w_v, causal), want_out, rtol=1e-12, atol=1e-14)


def test_the_worked_example_by_hand():
    # two one-hot tokens, identity projections: scores (1/√2, 0) and (0, 1/√2)
    a = math.exp(1 / math.sqrt(2)) / (math.exp(1 / math.sqrt(2)) + 1)
    np.testing.assert_allclose(attention_weights(np.eye(2), np.eye(2), np.eye(2)), [[a, 1 - a], [1 - a, a]])
    np.testing.assert_allclose(self_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2), causal=True),
                               [[1, 0], [1 - a, a]])
    assert a == pytest.approx(0.6698, abs=5e-5)


def test_causal_mask_is_lower_triangular():
    mask = causal_mask(4)
    for i in range(4):
        for j in range(4):
            assert mask[i, j] == (j <= i)


def test_large_scores_do_not_overflow():
    x = np.array([[1000.0, 0.0], [0.0, 1000.0]])
    weights = attention_weights(x, np.eye(2), np.eye(2))
    assert np.isfinite(weights).all()
    np.testing.assert_allclose(weights, np.eye(2), atol=1e-12)


# --- properties: order ----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    x=hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 5)),
                 elements=st.floats(-3, 3, allow_nan=False, allow_subnormal=False)),
    d_head=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    data=st.data(),
)
def test_without_a_mask_any_permutation_moves_the_rows_unchanged(x, d_head, seed, data):
    perm = np.array(data.draw(st.permutations(range(len(x)))))
    w_q, w_k, w_v = random_head(x.shape[1], d_head, seed)
    # attention(P·X) = P·attention(X)
    np.testing.assert_allclose(self_attention(x[perm], w_q, w_k, w_v), self_attention(x, w_q, w_k, w_v)[perm],
                               rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(n_tokens=st.integers(2, 6), seed=st.integers(0, 10_000), data=st.data())
def test_with_a_causal_mask_a_generic_input_is_not_equivariant(n_tokens, seed, data):
    perm = np.array(data.draw(st.permutations(range(n_tokens)).filter(lambda p: list(p) != sorted(p))))
    x, (w_q, w_k, w_v) = seeded_input(n_tokens, seed=seed)
    moved = self_attention(x[perm], w_q, w_k, w_v, causal=True)
    kept = self_attention(x, w_q, w_k, w_v, causal=True)[perm]
    assert np.max(np.abs(moved - kept)) > 1e-6


@settings(max_examples=40, deadline=None)
@given(n_tokens=st.integers(1, 6), seed=st.integers(0, 10_000), causal=st.booleans())
def test_weights_are_a_distribution_over_the_allowed_keys(n_tokens, seed, causal):
    x, (w_q, w_k, _) = seeded_input(n_tokens, seed=seed)
    weights = attention_weights(x, w_q, w_k, causal)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-12)
    assert (weights >= 0).all()
    if causal:
        assert (weights[np.triu_indices(n_tokens, k=1)] == 0).all()
        assert weights[0, 0] == 1.0


def test_the_last_token_under_a_causal_mask_sees_what_an_unmasked_one_sees():
    x, (w_q, w_k, w_v) = seeded_input(5, seed=4)
    np.testing.assert_allclose(self_attention(x, w_q, w_k, w_v, causal=True)[-1], self_attention(x, w_q, w_k, w_v)[-1])


# --- the toy embedding and the seeded head ------------------------------------------------------------


def test_embed_words_gives_a_word_the_same_row_anywhere():
    x = embed_words(["dog", "bites", "man", "dog"], 5)
    assert np.array_equal(x[0], x[3])
    assert not np.allclose(x[0], x[2])
    assert np.array_equal(embed_words("man bites dog", 5)[2], x[0])
    assert not np.allclose(embed_words("dog", 5, seed=1), embed_words("dog", 5, seed=0))


def test_random_head_is_seeded_and_scaled():
    a, b = random_head(256, 64, seed=3), random_head(256, 64, seed=3)
    for wa, wb in zip(a, b, strict=True):
        assert np.array_equal(wa, wb)
    assert np.std(np.concatenate([w.ravel() for w in a])) == pytest.approx(1 / 16, rel=0.05)


# --- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda: self_attention([1.0, 2.0], np.eye(2), np.eye(2), np.eye(2)), ValueError,
         r"^x must have shape \(tokens, d_model\) with both at least 1, got shape \(2,\)"),
        (lambda: self_attention(np.zeros((0, 2)), np.eye(2), np.eye(2), np.eye(2)), ValueError, r"^x must have shape"),
        (lambda: self_attention([[1.0, float("nan")]], np.eye(2), np.eye(2), np.eye(2)), ValueError,
         r"^x must be finite"),
        (lambda: self_attention(np.eye(2), np.eye(3), np.eye(2), np.eye(2)), ValueError,
         r"^w_q must have shape \(d_model, d_head\) = \(2, d_head ≥ 1\), got shape \(3, 3\)"),
        (lambda: self_attention(np.eye(2), np.eye(2), np.ones((2, 3)), np.eye(2)), ValueError,
         r"^w_k must have the shape of w_q, \(2, 2\), got shape \(2, 3\)"),
        (lambda: self_attention(np.eye(2), np.eye(2), np.eye(2), np.ones(2)), ValueError, r"^w_v must have shape"),
        (lambda: self_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2), causal="yes"), TypeError,
         r"^causal must be True or False, got 'yes'"),
        (lambda: attention_weights(np.eye(2), np.eye(2), np.eye(2), causal=1), TypeError, r"^causal must be True or False"),
        (lambda: causal_mask(0), ValueError, r"^seq_len must be a positive integer, got 0"),
        (lambda: random_head(0, 4), ValueError, r"^d_model must be a positive integer, got 0"),
        (lambda: random_head(4, 2.5), TypeError, r"^d_head must be a positive integer, got 2.5"),
        (lambda: random_head(4, 2, seed=-1), ValueError, r"^seed must be a non-negative integer, got -1"),
        (lambda: embed_words("", 4), TypeError, r"^words must be a non-empty string"),
        (lambda: embed_words(["dog", 3], 4), TypeError, r"^words must be"),
        (lambda: embed_words("dog", 4, seed=1.5), TypeError, r"^seed must be a non-negative integer, got 1.5"),
    ],
)
def test_bad_input(call, exc, message):
    with pytest.raises(exc, match=message):
        call()
