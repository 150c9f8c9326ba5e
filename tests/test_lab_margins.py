"""How far a claim is from failing, against the noise of what it compares (claims.Measured, margins, Spread, Share).

Each is checked against a literal computation written here: margins by
hand, the standard error by a dense grid over q instead of the closed form,
the median by sorting.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers.lab import claims, results
from posenc_helpers.lab.claims import Claim, Measured, Share, Spread

accuracy = st.floats(0, 1, allow_nan=False)
count = st.integers(1, 10_000)


def literal_se(parts, margin):
    # sqrt(sum c^2 max_{q in [p - m, p + m], 0 <= q <= 1} q(1 - q) / n), the maximum found on a grid of 20,001 points
    total = 0.0
    for c, p, n in parts:
        q = np.linspace(max(0.0, p - abs(margin)), min(1.0, p + abs(margin)), 20_001)
        total += c * c * float((q * (1 - q)).max()) / n
    return math.sqrt(total)


def recorded(expression):
    with claims._recording() as seen:
        result = expression()
    return result, seen


@settings(max_examples=200, deadline=None)
@given(p=accuracy, t=accuracy, n=count)
def test_a_measured_number_compares_as_its_float_and_records_its_margin(p, t, n):
    x = Measured(p, n)
    for op, plain, margin in (
        (lambda: x >= t, p >= t, p - t), (lambda: x > t, p > t, p - t),
        (lambda: x <= t, p <= t, t - p), (lambda: x < t, p < t, t - p),
        (lambda: t <= x, t <= p, p - t), (lambda: t > x, t > p, t - p),
    ):
        got, seen = recorded(op)
        assert got is plain
        assert len(seen) == 1
        assert seen[0][0] == pytest.approx(margin, abs=1e-12)
        assert seen[0][1] == pytest.approx(literal_se([(1.0, p, n)], margin), rel=1e-6, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(a=accuracy, b=accuracy, na=count, nb=count, shift=st.floats(-1, 1), scale=st.floats(-3, 3))
def test_sums_differences_and_scalings_keep_their_parts(a, b, na, nb, shift, scale):
    x, y = Measured(a, na), Measured(b, nb)
    for expr, value, parts in (
        (x - y, a - b, [(1.0, a, na), (-1.0, b, nb)]),
        (x + shift, a + shift, [(1.0, a, na)]),
        (shift - x, shift - a, [(-1.0, a, na)]),
        (scale * x, scale * a, [(scale, a, na)]),
        (abs(x - y), abs(a - b), [(1.0, a, na), (-1.0, b, nb)] if a >= b else [(-1.0, a, na), (1.0, b, nb)]),
    ):
        assert float(expr) == pytest.approx(value, abs=1e-12)
        assert [(pytest.approx(c), pytest.approx(p), n) for c, p, n, se in expr.parts if se is None] == parts
    got, seen = recorded(lambda: x - 0.1 >= y)
    assert got == (a - 0.1 >= b)
    assert seen[0][0] == pytest.approx(a - 0.1 - b, abs=1e-12)
    assert seen[0][1] == pytest.approx(literal_se([(1.0, a, na), (-1.0, b, nb)], a - 0.1 - b), rel=1e-6, abs=1e-9)


def test_the_error_is_weighed_within_the_margin_not_at_the_value():
    # a perfect score has no binomial variance; against 0.99 it is weighed at 0.99, against 0.5 at 1/2
    assert claims.comparison_error(Measured(1.0, 1024), 0.0) == 0.0
    assert claims.comparison_error(Measured(1.0, 1024), 0.01) == pytest.approx(math.sqrt(0.99 * 0.01 / 1024))
    assert claims.comparison_error(Measured(1.0, 1024), 0.7) == pytest.approx(0.5 / 32)
    # a number that is not an accuracy has no binomial error
    assert claims.comparison_error(Measured(2.3), 0.1) is None
    assert claims.comparison_error(Measured(0.9, 100) - Measured(1.7), 0.1) is None
    assert claims.comparison_error(0.5, 0.1) is None


def test_nothing_is_recorded_outside_margins():
    assert claims._RECORD == []
    assert (Measured(0.5, 10) >= 0.4) is True
    assert claims._RECORD == []


def test_margins_picks_the_comparison_closest_to_failing_over_seeds_and_comparisons():
    c = Claim("both above 0.9", lambda v: v["a"] >= 0.9 and v["b"] >= 0.9)
    views = {
        1: {"a": Measured(0.99, 1024), "b": Measured(0.95, 100)},  # b: 0.05 over 100 answers, the worst ratio
        2: {"a": Measured(0.93, 10_000), "b": Measured(1.0, 10_000)},  # a: the smallest margin, 0.03
    }
    m = claims.margins([c], views)["both above 0.9"]
    assert (m["k"], m["n"], m["seed"]) == (2, 2, 1)
    assert m["margin"] == pytest.approx(0.05)
    assert m["se"] == pytest.approx(literal_se([(1.0, 0.95, 100)], 0.05), rel=1e-6)
    assert m["ratio"] == pytest.approx(0.05 / m["se"])
    # a claim that fails on a seed: k counts it, and the margin is negative
    views[3] = {"a": Measured(0.85, 1024), "b": Measured(0.99, 1024)}
    m = claims.margins([c], views)["both above 0.9"]
    assert (m["k"], m["seed"]) == (2, 3) and m["margin"] < 0 and m["ratio"] < 0
    # a number that is not an accuracy counts before any weighed comparison, by its margin
    d = Claim("entropy and accuracy", lambda v: v["e"] <= 2.0 and v["a"] >= 0.5)
    m = claims.margins([d], {0: {"e": Measured(1.5), "a": Measured(0.51, 10)}})["entropy and accuracy"]
    assert m["se"] is None and m["ratio"] is None and m["margin"] == pytest.approx(0.5)
    # a claim that compares nothing measured has no margin
    e = Claim("layer 0", lambda v: v["layer"] == 0)
    assert claims.margins([e], {0: {"layer": 0}})["layer 0"]["margin"] is None
    assert "layer 0" in claims.margin_report(claims.margins([e], {0: {"layer": 0}}))


def test_every_accuracy_claim_of_the_files_is_weighed():
    # every claim of notebook 12 compares only accuracies of the sweeps, so margins gives each a binomial error;
    # a claim whose numbers did not go through claims.at would show None here
    sweep, extra = results.load(), results.load_extra()
    for group in ("12", "12 scaling", "12 fine-tune", "12 extra"):
        source = extra if group == "12 extra" else sweep
        seeds = sorted({s for s, _, _ in source["table"]})
        table = claims.margins(claims.groups()[group], dict(zip(seeds, claims.views(sweep, extra, seeds=seeds), strict=True)))
        unweighed = [text for text, m in table.items() if m["se"] is None]
        assert not unweighed, (group, unweighed)
        assert all(m["k"] == m["n"] == len(seeds) and m["margin"] >= 0 for m in table.values()), group
    # at() returns the number the file holds, with its SE over the file's test sequences (a re-scored row)
    from posenc_helpers.lab.evaluate import EVAL_SEQUENCES

    seed = sweep["seeds"][0]
    v = claims.view(sweep, seed)
    row = sweep["table"][seed, "prev", "rope"]
    x = claims.at(v, "prev", "rope", 64)
    assert float(x) == float(row["beyond"][1])
    assert x.parts[0][2] == EVAL_SEQUENCES and x.parts[0][3] == pytest.approx(float(row["beyond_se"][1]))
    assert claims.at(v, "prev", "rope", 64, "accuracy").parts[0][3] == pytest.approx(float(row["accuracy_se"][1]))
    # the extra tasks' rows are re-scored too: the same number of sequences, each number with its own SE
    w = claims.views(sweep, extra, seeds=(seed,))[0]
    more = extra["table"][seed, "recall", "rope"]
    y = claims.at(w, "recall", "rope", 64)
    assert float(y) == float(more["beyond"][1])
    assert y.parts[0][2] == EVAL_SEQUENCES and y.parts[0][3] == pytest.approx(float(more["beyond_se"][1]))


@settings(max_examples=100, deadline=None)
@given(xs=st.lists(accuracy, min_size=1, max_size=25), lo=accuracy, width=st.floats(0, 1), wide=st.floats(0, 1))
def test_a_spread_holds_when_its_median_is_in_the_band_and_its_range_is_wide_enough(xs, lo, width, wide):
    hi = lo + width
    s = Spread("x", lambda v: v["x"], median=(lo, hi), wide=wide)
    views = [{"x": x} for x in xs]
    ordered = sorted(xs)
    k = len(ordered)
    median = ordered[k // 2] if k % 2 else (ordered[k // 2 - 1] + ordered[k // 2]) / 2
    expected = min(median - lo, hi - median, ordered[-1] - ordered[0] - wide)
    assert s.margin(views) == pytest.approx(expected, abs=1e-12)
    assert s.holds_over(views) == (s.margin(views) >= 0)
    assert f"over {k} seeds" in s.describe(views)


@settings(max_examples=100, deadline=None)
@given(xs=st.lists(accuracy, min_size=1, max_size=25), share=accuracy)
def test_a_share_counts_the_seeds_it_holds_on(xs, share):
    s = Share("x above 1/2", lambda v: v["x"] > 0.5, at_least=share)
    views = {i: {"x": x} for i, x in enumerate(xs)}
    k = len([x for x in xs if x > 0.5])
    assert s.count(views) == (k, len(xs))
    assert s.holds_over(views) == (k / len(xs) >= share)
    assert claims.check_over([s], views) == {"x above 1/2": k / len(xs) >= share}


def test_a_spread_or_share_of_no_seed_is_refused_by_name():
    with pytest.raises(ValueError, match="'RoPE on first'.*at least one seed"):
        Spread("RoPE on first", lambda v: v, median=(0, 1)).margin([])
    with pytest.raises(ValueError, match="'most seeds'.*at least one seed"):
        Share("most seeds", lambda v: True, at_least=0.5).count({})


def test_an_accuracy_over_sequences_is_weighed_with_its_own_se():
    # 256 perfect sequences against 0.97: weighed at 0.97 as whole sequences, √(0.97·0.03/256), not over answers
    x = Measured(1.0, 256, se=0.0)
    assert claims.comparison_error(x - 0.97, 0.03) == pytest.approx(math.sqrt(0.97 * 0.03 / 256))
    # measured at 0.6 with half the whole-sequence variance: weighed at the threshold 0.5 as whole sequences all the
    # same (a measured SE never lowers the bound)
    y = Measured(0.6, 256, se=math.sqrt(0.5 * 0.6 * 0.4 / 256))
    assert claims.comparison_error(y - 0.5, 0.1) == pytest.approx(math.sqrt(0.25 / 256))
    # one wrong token in 256 sequences weighs no lighter than a perfect score against 0.97
    z = Measured(255.99 / 256, 256, se=0.0000390625)
    assert claims.comparison_error(z - 0.97, 0.03) == pytest.approx(claims.comparison_error(x - 0.97, 0.03), rel=1e-3)
    # a difference of two: the variances add, with the signs of the parts kept
    assert (x - y).parts == ((1.0, 1.0, 256, 0.0), (-1.0, 0.6, 256, y.parts[0][3]))
    with pytest.raises(ValueError, match="needs their number n"):
        Measured(0.5, se=0.01)


# ---- notebook 13's head numbers: means over inputs with their SE (claims.Mean) ----------------------------------


@given(st.lists(st.tuples(st.floats(-2, 2), st.floats(0, 1), st.floats(0, 0.1)), min_size=1, max_size=4),
       st.floats(-1, 1))
@settings(max_examples=50, deadline=None)
def test_a_mean_comparison_is_weighed_by_the_sum_of_its_parts_ses(parts, threshold):
    # any linear combination of means: its SE is at most Σ |c|·SE whatever their correlation
    total = sum(c * claims.Mean(x, e) for c, x, e in parts)
    with claims._recording() as seen:
        _ = total >= threshold  # the comparison records its margin and SE
    want_value = sum(c * x for c, x, _ in parts)
    assert seen[0][0] == pytest.approx(want_value - threshold, abs=1e-9)
    assert seen[0][1] == pytest.approx(sum(abs(c) * e for c, _, e in parts), abs=1e-12)


def test_a_rescored_head_row_weighs_its_claims_by_the_head_inputs():
    claim = [c for c in claims.CLAIMS_13 if c.text.startswith("ALiBi's previous-token head")][0]
    row = {"head": [1, 0], "one_back": [0.62, 0.60], "one_back_se": [0.007, 0.003]}
    m = claims.margins([claim], {0: {("prev", "alibi"): {"head": row}}})[claim.text]
    # |past − inside| = 0.02 against 0.15: margin 0.13, SE at most 0.007 + 0.003; past 0.60 against 0.4: 0.20, 0.003
    assert m["k"] == 1 and m["margin"] == pytest.approx(0.13) and m["se"] == pytest.approx(0.010)
    old = {"head": [1, 0], "one_back": [0.62, 0.60]}  # a stored row of before: no SE, as before
    assert claims.margins([claim], {0: {("prev", "alibi"): {"head": old}}})[claim.text]["se"] is None


def test_a_mean_refuses_a_negative_se():
    with pytest.raises(ValueError, match="se must be a standard error"):
        claims.Mean(0.5, -0.1)


def test_a_claim_that_held_while_an_inner_comparison_went_the_other_way_is_not_weighed():
    # min() compares the two numbers to choose one; that comparison is not the claim's. Weighing it would report a
    # claim that holds by 0.2 as failing by 0.29 (a review planted one at −76 SEs): the seed is named, not weighed
    view = {"a": Measured(0.7, 256, se=0.02), "b": Measured(0.99, 256, se=0.001)}
    inner = Claim("min of a and b at least 0.5", lambda v: min(v["a"], v["b"]) >= 0.5)
    m = claims.margins([inner], {3: view})[inner.text]
    assert m["k"] == 1 and m["mixed"] == [3] and m["margin"] is None and m["ratio"] is None
    assert "not weighed on seeds [3]" in claims.margin_report({inner.text: m})
    chosen = Claim("lowest of a and b at least 0.5", lambda v: claims.lowest(v["a"], v["b"]) >= 0.5)
    m = claims.margins([chosen], {3: view})[chosen.text]
    assert m["mixed"] == [] and m["margin"] == pytest.approx(0.2) and m["se"] == pytest.approx(math.sqrt(0.5 * 0.5 / 256))
    # a claim that fails is weighed on its failing comparison, as before
    failing = Claim("min of a and b at least 0.8", lambda v: min(v["a"], v["b"]) >= 0.8)
    m = claims.margins([failing], {3: view})[failing.text]
    assert m["k"] == 0 and m["mixed"] == [] and m["margin"] < 0


def _attention_rows(entropy, se, uniform):
    # one attention row per length: entropy and its SE (layers, heads), the uniform entropy
    return [{"entropy": e, "entropy_se": s, "uniform_entropy": u, "to_first": e}
            for e, s, u in zip(entropy, se, uniform, strict=True)]


def test_a_rescored_entropy_row_weighs_its_claims_by_the_test_sequences():
    # NoPE and T5 on prev: the last layer's entropy (mean over 2 heads) rises by ≥ 1.5 nats from T = 32 to 256
    claim = [c for c in claims.CLAIMS_13 if c.text.startswith("NoPE and T5 bias on prev")][0]
    lengths = 4
    uniform = [2.5, 3.1, 3.8, 4.5]
    low = [[[1.0, 1.0], [1.0, 1.2]]] + [[[1.0, 1.0], [3.0, 3.0]]] * (lengths - 1)  # last layer: 1.1 at 32, 3.0 at 256
    se = [[[0.01, 0.01], [0.02, 0.04]]] * lengths
    view = {("prev", s): {"attention": {"none": _attention_rows(low, se, uniform)}} for s in ("none", "t5")}
    m = claims.margins([claim], {0: view})[claim.text]
    # 3.0 − 1.1 = 1.9 against 1.5: margin 0.4; SE bound: the mean of the heads' SEs at each end, 0.03 + 0.03
    assert m["k"] == 1 and m["margin"] == pytest.approx(0.4) and m["se"] == pytest.approx(0.06)
    # a stored row of before keeps no SE: not weighed, as before, and the same verdict
    old = {k: {"attention": {"none": [{kk: vv for kk, vv in r.items() if kk != "entropy_se"}
                                      for r in e["attention"]["none"]]}} for k, e in view.items()}
    m_old = claims.margins([claim], {0: old})[claim.text]
    assert m_old["k"] == 1 and m_old["se"] is None and m_old["margin"] == pytest.approx(0.4)


def test_the_entropy_claims_choose_their_extreme_without_recording_it():
    # ALiBi's steepest head and RoPE's sharpest length are chosen with highest: the seed is weighed, not "mixed"
    flat = [c for c in claims.CLAIMS_13 if c.text.startswith("ALiBi's steepest head")][0]
    sharp = [c for c in claims.CLAIMS_13 if c.text.startswith("RoPE on prev: the last layer's entropy")][0]
    uniform = [2.5, 3.1, 3.8, 4.5]
    ent = [[[0.5, 2.0], [0.3, 0.4]], [[0.52, 2.0], [0.31, 0.4]], [[0.55, 2.0], [0.35, 0.4]], [[0.57, 2.0], [0.30, 0.4]]]
    se = [[[0.005, 0.01], [0.004, 0.01]]] * 4
    view = {("prev", "alibi"): {"attention": {"none": _attention_rows(ent, se, uniform)}},
            ("prev", "rope"): {"attention": {"none": _attention_rows(ent, se, uniform)}}}
    m = claims.margins([flat, sharp], {0: view})
    # ALiBi head 0: |0.57 − 0.52| = 0.05 (layer 0), |0.30 − 0.31| = 0.01 (layer 1): the larger, 0.05 ≤ 0.12, margin
    # 0.07, SE 0.01
    assert m[flat.text]["mixed"] == [] and m[flat.text]["k"] == 1
    assert m[flat.text]["margin"] == pytest.approx(0.07) and m[flat.text]["se"] == pytest.approx(0.01)
    ratios = [(0.5 * sum(e[1])) / u for e, u in zip(ent, uniform, strict=True)]  # the last layer's mean over heads / uniform
    assert m[sharp.text]["mixed"] == [] and m[sharp.text]["margin"] == pytest.approx(0.35 - max(ratios))


def test_a_rescored_row_weighs_notebook_13s_accuracies_over_sequences():
    # "log-n on prev …; ALiBi's stays at least 0.93" reads accuracies past L: on a re-scored row with their SE over the
    # 256 sequences (whole sequences failing at worst), not over the answers
    claim = [c for c in claims.CLAIMS_13 if c.text.startswith("log-n on prev")][0]
    lengths = list(range(32, 257, 32))
    view = {"lengths": {"prev": lengths}}
    for s in claims._C13_PAST_L:
        beyond = [float("nan")] + [1.0] * 7
        view["prev", s] = {"beyond": beyond, "beyond_se": [float("nan")] + [0.0] * 7, "logn": beyond,
                           "logn_se": [float("nan")] + [0.0] * 7}
    m = claims.margins([claim], {0: view})[claim.text]
    # the closest comparison: ALiBi's 1.0 against 0.93, weighed at 0.93 over 256 sequences
    assert m["margin"] == pytest.approx(0.07) and m["se"] == pytest.approx(math.sqrt(0.93 * 0.07 / 256))


def test_a_constant_divided_by_a_mean_is_refused_not_silently_a_float():
    with pytest.raises(TypeError, match="has no SE bound"):
        _ = 2 / claims.Mean(0.5, 0.01)
    assert (claims.Mean(0.5, 0.01) / 2).se == pytest.approx(0.005)
