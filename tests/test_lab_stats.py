"""lab.stats: the unit of noise, the standard error over sequences, failure-rate bounds and hash-fixed seeds.

Each function is held to a literal computation written here from its
formula (plain loops, exact binomial sums with fractions), and to properties.
"""

from __future__ import annotations

import hashlib
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers.lab import stats


def literal_mean_and_se(scores):
    n = len(scores)
    mean = sum(scores) / n
    var = sum((x - mean) ** 2 for x in scores) / (n - 1)
    return mean, math.sqrt(var / n)


@given(st.lists(st.floats(0, 1), min_size=2, max_size=60))
@settings(max_examples=60, deadline=None)
def test_summarize_is_the_mean_and_the_se_over_sequences(scores):
    got = stats.summarize(scores)
    mean, se = literal_mean_and_se(scores)
    assert got.n == len(scores)
    assert got.value == pytest.approx(mean, abs=1e-12)
    assert got.se == pytest.approx(se, abs=1e-12)


def test_per_sequence_is_each_sequences_share_right():
    rng = np.random.default_rng(0)
    correct = rng.random((7, 11)) < 0.6
    mask = rng.random((7, 11)) < 0.7
    mask[:, 0] = True  # every sequence has an answer
    correct &= mask
    want = [sum(correct[b, t] for t in range(11) if mask[b, t]) / sum(mask[b]) for b in range(7)]
    assert stats.per_sequence(correct, mask).tolist() == pytest.approx(want)


def test_the_sequence_se_is_many_times_the_token_se_when_a_sequence_fails_whole():
    # the case: 31 of 32 sequences right at all 192 scored positions, one wrong at all of them
    scores = np.array([1.0] * 31 + [0.0])
    seq = stats.summarize(scores).se
    p, tokens = 31 / 32, 32 * 192
    token = math.sqrt(p * (1 - p) / tokens)
    assert seq == pytest.approx(math.sqrt(p * (1 - p) * 32 / 31 / 32))
    assert seq / token > 13  # 14 token-level SE: why the token is the wrong unit


def test_se_at_weighs_a_perfect_score_as_whole_sequences():
    assert stats.se_at(0.97, 1.0, 0.0, 256) == pytest.approx(math.sqrt(0.97 * 0.03 / 256))
    assert stats.se_at(0.0, 0.0, 0.0, 256) == 0.0


@given(value=st.floats(0.01, 0.99), d=st.floats(0.01, 1.0), q=st.floats(0.0, 1.0), n=st.integers(2, 2000))
@settings(max_examples=80, deadline=None)
def test_se_at_is_the_whole_sequence_worst_case_whatever_the_measured_se(value, d, q, n):
    se = math.sqrt(d * value * (1 - value) / n)
    # weighed at q as if whole sequences failed: a model's errors (a small measured SE) never lower it
    assert stats.se_at(q, value, se, n) == pytest.approx(math.sqrt(q * (1 - q) / n), rel=1e-9, abs=1e-15)
    assert stats.se_at(q, value, se, n) >= stats.se_at(q, value, 0.0, n) - 1e-15


def test_combined_se_adds_variances_weighed_toward_one_half():
    parts = [(1.0, 0.9, 0.01, 256), (-1.0, 0.6, 0.02, 256)]
    margin = 0.1
    # each weighed at the point of [value − margin, value + margin] nearest 1/2: 0.8 and 0.5
    want = math.sqrt(stats.se_at(0.8, 0.9, 0.01, 256) ** 2 + stats.se_at(0.5, 0.6, 0.02, 256) ** 2)
    assert stats.combined_se(parts, margin) == pytest.approx(want)


def literal_tail(n, failures, f):
    # P(X ≤ failures), X ~ Binomial(n, f), exactly with fractions
    f = Fraction(f)
    return sum(math.comb(n, i) * f**i * (1 - f) ** (n - i) for i in range(failures + 1))


@pytest.mark.parametrize("k, n", [(5, 5), (8, 8), (20, 20), (19, 20), (3, 5), (0, 4)])
def test_failure_bound_is_the_clopper_pearson_upper_limit(k, n):
    bound = stats.failure_bound(k, n)
    if k == 0:
        assert bound == 1.0
        return
    # the tail probability at the bound is 5 %, and it is larger just below it (the upper limit is where it falls to 5 %)
    assert float(literal_tail(n, n - k, Fraction(bound).limit_denominator(10**12))) == pytest.approx(0.05, abs=1e-6)
    assert literal_tail(n, n - k, Fraction(bound - 1e-3).limit_denominator(10**9)) > Fraction(5, 100)


def test_failure_bound_with_no_failure_has_its_closed_form():
    for n in (1, 2, 5, 8, 20, 100):
        assert stats.failure_bound(n, n) == pytest.approx(1 - 0.05 ** (1 / n), abs=1e-9)


def test_seeds_needed_is_the_fewest_whose_clean_run_bounds_the_rate():
    for rate in (0.45, 0.3, 0.2, 0.1, 0.05):
        n = stats.seeds_needed(rate)
        assert stats.failure_bound(n, n) < rate <= stats.failure_bound(n - 1, n - 1)


def literal_seeds(digest, k, exclude):
    out, j = [], 0
    while len(out) < k:
        seed = int(hashlib.sha256(f"{digest}:{j}".encode()).hexdigest()[:8], 16) % 9000 + 1000
        if seed not in exclude and seed not in out:
            out.append(seed)
        j += 1
    return tuple(sorted(out))


def test_held_out_seeds_follow_from_the_digest_and_skip_the_excluded():
    digest = hashlib.sha256(b"some claims").hexdigest()
    first = stats.held_out_seeds(digest, 5)
    assert first == literal_seeds(digest, 5, set())
    assert all(1000 <= s < 10000 for s in first) and len(set(first)) == 5
    skipped = stats.held_out_seeds(digest, 5, exclude=first[:2])
    assert not set(skipped) & set(first[:2]) and skipped == literal_seeds(digest, 5, set(first[:2]))
    other = stats.held_out_seeds(hashlib.sha256(b"some claims, changed").hexdigest(), 5)
    assert other != first  # a changed claim draws other seeds


def test_the_source_hash_is_the_codes_not_its_comments(tmp_path):
    import ast

    path = tmp_path / "claims.py"
    path.write_text('"""Claims."""\nx = 1  # one\n')
    bare = ast.dump(ast.parse("x = 1\n"), include_attributes=False)  # an independent reading of the code alone
    assert stats.source_hash(path) == hashlib.sha256(bare.encode()).hexdigest()
    first = stats.source_hash(path)
    path.write_text('"""Claims, reworded."""\n# a new comment\nx = 1  # still one\n')
    assert stats.source_hash(path) == first  # no new seeds for a comment
    path.write_text("x = 2\n")
    assert stats.source_hash(path) != first  # a changed claim draws new seeds


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: stats.summarize([0.5]), ValueError, "at least 2 sequences"),
        (lambda: stats.summarize([0.5, 1.5]), ValueError, r"in \[0, 1\]"),
        (lambda: stats.per_sequence(np.ones((2, 3), bool), np.zeros((2, 3), bool)), ValueError, "sequences \\[0, 1\\]"),
        (lambda: stats.per_sequence(np.ones((2, 3), bool), np.ones((3, 2), bool)), ValueError, "one shape"),
        (lambda: stats.se_at(1.2, 0.5, 0.1, 10), ValueError, "q=1.2"),
        (lambda: stats.se_at(0.5, 0.5, 0.1, 0), ValueError, "n must be a positive integer, got 0"),
        (lambda: stats.failure_bound(6, 5), ValueError, "k must be between 0 and n = 5, got 6"),
        (lambda: stats.seeds_needed(1.0), ValueError, "rate must be strictly between 0 and 1, got 1.0"),
        (lambda: stats.held_out_seeds("abc", 3), ValueError, "digest must be a SHA-256 in hex, got 'abc'"),
    ],
)
def test_bad_input_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()
