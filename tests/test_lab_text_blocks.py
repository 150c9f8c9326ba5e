"""claims.Bits and text_claims.block_views: the text lab's numbers weighed by their blocks (issue 43).

Every SE is recomputed by hand from the blocks: a paired difference over its blocks, a single number over groups of
claims.TEXT_GROUP blocks, a window gain over its windows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_helpers.lab import claims as C
from posenc_helpers.lab import text_claims as TC

RNG = np.random.default_rng(7)


def _se(values):
    values = list(values)
    mean = sum(values) / len(values)
    return math.sqrt(sum((x - mean) ** 2 for x in values) / (len(values) - 1) / len(values))


def test_a_paired_difference_is_weighed_over_its_blocks():
    a, b = RNG.normal(2.0, 0.3, 96), RNG.normal(2.1, 0.3, 96)
    claim = C.Claim("a below b", lambda v: v["a"] < v["b"])
    m = C.margins([claim], {0: {"a": C.Bits(a), "b": C.Bits(b)}})["a below b"]
    assert m["margin"] == pytest.approx(b.mean() - a.mean())
    assert m["se"] == pytest.approx(_se(a - b))
    assert m["ratio"] == pytest.approx((b.mean() - a.mean()) / _se(a - b))


def test_a_single_number_against_a_constant_is_weighed_over_groups_of_blocks():
    a = RNG.normal(1.5, 0.2, 96)
    claim = C.Claim("a below 2", lambda v: v["a"] < 2.0)
    m = C.margins([claim], {0: {"a": C.Bits(a)}})["a below 2"]
    groups = [a[i : i + C.TEXT_GROUP].mean() for i in range(0, 96, C.TEXT_GROUP)]
    assert C.TEXT_GROUP == 4 and len(groups) == 24
    assert m["se"] == pytest.approx(_se(groups)) and m["margin"] == pytest.approx(2.0 - a.mean())


def test_a_curve_minus_its_first_number_is_paired_element_by_element():
    blocks = [RNG.normal(2.0 + 0.1 * k, 0.3, 96) for k in range(3)]
    curve = np.array([C.Bits(b) for b in blocks], dtype=object)
    gap = curve - curve[0]
    assert all(g.paired for g in gap)
    np.testing.assert_allclose(gap[2].blocks, blocks[2] - blocks[0])
    # an array compared with one Bits goes element by element, each comparison paired
    with C._recording() as seen:
        below = curve[0] < curve[1:]
    assert below.dtype == bool and len(seen) == 2
    assert seen[1][1] == pytest.approx(_se(blocks[2] - blocks[0]))
    # a sum is no difference: the mean of a curve is weighed as a single number
    assert not curve.mean().paired and float(curve.mean()) == pytest.approx(np.mean([b.mean() for b in blocks]))


def test_bits_refuse_what_cannot_be_weighed():
    with pytest.raises(ValueError, match="at least 2 blocks to give a standard error, got 1"):
        C.Bits([1.0])
    with pytest.raises(ValueError, match="on 4 and 3 blocks cannot be paired"):
        C.Bits([1.0, 2, 3, 4]) - C.Bits([1.0, 2, 3])


def _row(seed, scheme, level, lengths=(64, 128)):
    blocks = [list(RNG.normal(level, 0.2, 96)) for _ in lengths]
    if scheme == "learned":
        blocks[1] = [None] * 96  # cannot run past L
    row = {"seed": seed, "scheme": scheme, "lengths": list(lengths), "blocks": blocks, "by_position": [1.0, 2.0],
           "context": {"gain_windows": RNG.normal(-0.1, 0.05, (64, 8)).tolist(),
                       "sliding_blocks": [list(RNG.normal(level, 0.1, 32)) for _ in lengths],
                       "nonoverlapping_blocks": [list(RNG.normal(level, 0.1, 32)) for _ in lengths]}}
    if scheme == "rope":
        row["scaled"] = {"pi": {"blocks": blocks}}
        row["finetuned"] = {"plain": {"blocks": blocks}}
        row["past"] = {"rope": [list(RNG.normal(level, 0.2, 96))]}
    return row


def test_block_views_give_each_seed_its_curves_as_bits():
    rows = [_row(s, scheme, level) for s in (0, 1) for scheme, level in (("rope", 2.0), ("learned", 2.2))]
    views = TC.block_views(rows)
    assert sorted(views) == [0, 1]
    v = views[1]
    assert v["lengths"] == (64, 128) and isinstance(v["bits"]["rope"][1], C.Bits)
    assert math.isnan(v["bits"]["learned"][1])
    assert float(v["bits"]["rope"][0]) == pytest.approx(np.mean(rows[2]["blocks"][0]))
    assert set(v["scaled"]) == {"pi"} and set(v["finetuned"]) == {"plain"} and set(v["past"]) == {"rope"}
    # each number is kept over units of 4 blocks: 24 units, each the mean of its 4 blocks
    x = v["bits"]["rope"][0]
    assert x.blocks.shape == (24,) and TC.UNIT == 4
    assert x.blocks[5] == pytest.approx(np.mean(rows[2]["blocks"][0][20:24]))
    # a difference of two numbers is weighed over the 24 units: the SE of the units' differences
    d = v["bits"]["rope"][1] - v["bits"]["rope"][0]
    units = [np.mean(rows[2]["blocks"][1][4 * k : 4 * k + 4]) - np.mean(rows[2]["blocks"][0][4 * k : 4 * k + 4])
             for k in range(24)]
    assert d.paired and d.se() == pytest.approx(_se(np.array(units)))
    # the unigram baseline is a number on the same text, unit by unit
    assert isinstance(v["unigram"], C.Bits) and v["unigram"].blocks.shape == (24,) and float(v["unigram"]) > 4
    assert (v["bits"]["rope"][0] - v["unigram"]).paired


def test_the_unigram_baseline_block_by_block_is_its_frequencies_on_those_characters():
    from posenc_helpers.lab import text as T

    train_ids, val_ids = T.split()
    freq = {c: n / train_ids.size for c, n in zip(*np.unique(train_ids, return_counts=True), strict=True)}
    blocks = TC.unigram_blocks()
    for b in (0, 41, 95):  # block b holds the targets val[b·1024 + 1 … (b + 1)·1024]
        want = np.mean([-math.log2(freq[c]) for c in val_ids[b * 1024 + 1 : (b + 1) * 1024 + 1]])
        assert blocks[b] == pytest.approx(want, rel=1e-12)
    assert blocks.shape == (96,) and abs(blocks.mean() - T.unigram_bits()) < 0.01


def test_context_block_views_weigh_a_gain_over_its_windows():
    row = _row(0, "alibi", 2.0)
    v = TC.context_block_views([row])[0]
    gains = np.array(row["context"]["gain_windows"])
    g = v["gain"]["alibi"][3]
    assert g.paired and float(g) == pytest.approx(gains[:, 3].mean())
    assert g.se() == pytest.approx(_se(gains[:, 3]))  # the stored context file's gain_se, over the 64 windows
    assert float(v["sliding"]["alibi"][1]) == pytest.approx(np.mean(row["context"]["sliding_blocks"][1]))


def test_only_a_contrast_is_weighed_over_single_blocks():
    a, b, c = (C.Bits(RNG.normal(2.0, 0.3, 96)) for _ in range(3))
    assert (a - b).paired and (a - b).level == 0
    # (a − b) − c and a − 2b keep the level of one number: weighed over groups, as a number is
    for x in ((a - b) - c, a - 2 * b):
        assert x.level == -1 and not x.paired
        groups = [x.blocks[i : i + C.TEXT_GROUP].mean() for i in range(0, 96, C.TEXT_GROUP)]
        assert x.se() == pytest.approx(_se(groups))
    assert (a + b - 2 * c).paired  # a contrast of three


def test_numbers_of_different_noise_are_not_mixed():
    bits, acc, head = C.Bits([1.0, 2.0, 3.0, 4.0]), C.Measured(0.9, 256, se=0.01), C.Mean(0.5, 0.01)
    for x, y in ((bits, acc), (acc, bits), (bits, head), (head, bits), (acc, head), (head, acc)):
        with pytest.raises(TypeError, match="cannot be combined"):
            x - y
        with pytest.raises(TypeError, match="cannot be combined"):
            x * y


def test_lowest_and_highest_record_no_comparison():
    a, b = C.Bits(RNG.normal(2.0, 0.3, 96)), C.Bits(RNG.normal(2.5, 0.3, 96))
    with C._recording() as seen:
        low, high = C.lowest(b, a), C.highest(a, b)
    assert low is a and high is b and seen == []
    with C._recording() as seen:
        min(a, b)  # the built-in records the comparison it makes to choose
    assert len(seen) == 1


def test_split_half_finds_the_se_right_on_independent_blocks_and_wrong_on_correlated_ones():
    rng = np.random.default_rng(1)
    right = TC.split_half([C.Bits(rng.normal(size=96)) for _ in range(2000)])
    assert 0.93 <= np.mean(np.abs(right) <= 2) <= 0.97
    # blocks that drift (AR(1), ρ = 0.95) weighed one by one as a contrast: the SE is far too small, and it shows
    drifting = []
    for _ in range(500):
        x = np.zeros(96)
        for i in range(1, 96):
            x[i] = 0.95 * x[i - 1] + rng.normal()
        drifting.append(C.Bits(x, paired=True))
    assert np.mean(np.abs(TC.split_half(drifting)) <= 2) < 0.6
    # a number the scheme cannot run is left out
    assert TC.split_half([C.Bits(np.full(96, np.nan)), C.Bits(rng.normal(size=96))]).shape == (1,)


def test_block_numbers_take_every_curve_and_each_curve_against_its_value_at_l():
    rows = [_row(0, "none", 2.2), _row(0, "rope", 2.0)]
    views = TC.block_views(rows)
    numbers = TC.block_numbers(views)
    v = views[0]
    curves = [*v["bits"].values(), *v["scaled"].values(), *v["finetuned"].values(), *v["past"].values()]
    plain = sum(isinstance(x, C.Bits) for c in curves for x in c)
    contrasts = sum(isinstance(x, C.Bits) for c in v["bits"].values() for x in c[1:])
    assert len(numbers) == plain + contrasts
    assert sum(x.paired for x in numbers) == contrasts
