"""posenc_helpers.lab.text_rows and text.finetune(factor=): the text lab's rows scored by window (issue 43).

Each window's loss past a position is recomputed by hand from the text string and the model's logits (the model
itself is held to literal loops in test_lab_model.py), the SE over windows by its formula, and a fine-tune with s
set for a longer target by its first loss with PI's frequencies written out.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from posenc_helpers.lab import text as T
from posenc_helpers.lab import text_context
from posenc_helpers.lab import text_rows as R
from posenc_helpers.lab.model import forward

TEXT = T.TEXT_PATH.read_text()
TINY = dict(train_len=8, d_model=16, heads=2, layers=1)


@pytest.fixture(scope="module")
def runs():
    return {s: T.train(s, steps=2, progress=False, **TINY) for s in ("rope", "learned")}


def _literal_window_bits(run, length, start, every):
    # every `every`-th window of `length` characters of the validation text, by hand: the mean over positions
    # start … length − 1 of −log2 p(next character)
    val_text = TEXT[T.split()[0].size :]
    n = (len(val_text) - 1) // length
    out = []
    for w in range(0, n, every):
        inputs = val_text[w * length : (w + 1) * length]
        nexts = val_text[w * length + 1 : (w + 1) * length + 1]
        logits = np.asarray(forward(run.params, T.encode(inputs)[None], run.config)[0], dtype=np.float64)
        bits = []
        for t in range(start, length):
            p = np.exp(logits[t] - logits[t].max())
            bits.append(-math.log2(p[T.VOCAB.index(nexts[t])] / p.sum()))
        out.append(np.mean(bits))
    return np.array(out), n


@pytest.mark.parametrize("start", [0, 5])
def test_window_bits_is_each_windows_mean_past_start_by_hand(runs, start):
    run = runs["rope"]  # at T = L = 8 no rescaling: the model's own frequencies
    want, n = _literal_window_bits(run, 8, start, every=211)
    got = R.window_bits(run, 8, start=start)
    assert got.shape == (n,)
    np.testing.assert_allclose(got[::211], want, rtol=1e-4)
    if start == 0:
        assert got.mean() == pytest.approx(T.bits_per_char(run, [8])[0])


def test_the_se_over_windows_is_its_formula():
    values = [2.0, 2.5, 1.5, 3.0]
    mean = sum(values) / 4
    s2 = sum((x - mean) ** 2 for x in values) / 3
    assert R.mean_se(values) == (mean, round(math.sqrt(s2 / 4), 5))
    assert all(math.isnan(x) for x in R.mean_se([np.nan]))  # cannot run
    with pytest.raises(ValueError, match="at least 2 windows, got 1"):
        R.mean_se([1.0])


def test_the_learned_table_past_L_is_nan_not_a_number(runs):
    bits, se = R.scored(runs["learned"], [8, 16])
    assert not math.isnan(bits[0]) and se[0] > 0
    assert math.isnan(bits[1]) and math.isnan(se[1])


def test_a_bad_start_is_refused_by_name(runs):
    for start in (-1, 8, 2.0, True):
        with pytest.raises(ValueError, match=f"start must be a position in 0 … 7, got {start!r}"):
            R.window_bits(runs["rope"], 8, start=start)


def test_a_finetune_with_s_for_a_longer_target_uses_that_s_written_out(runs):
    rope = runs["rope"]
    ft = T.finetune(rope, length=32, method="pi", factor=8, steps=2, seed=2, progress=False)
    assert (ft.finetune_len, ft.method, ft.factor) == (32, "pi", 8.0)
    # step 0's loss: the pre-trained parameters on seed 2's first batch of 32 characters, with PI's frequencies for
    # s = 8 written out: ω_k = base^(−2k/d) / 8, d = head_dim = 8
    omega = np.array([10000.0 ** (-2 * k / 8) / 8 for k in range(4)])
    tokens, target = T.batch(2, length=32, size=32)
    config = dataclasses.replace(rope.config, train_len=32)
    logits = np.asarray(forward(rope.params, tokens, config, omega=omega), dtype=np.float64)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    assert ft.losses[0] == pytest.approx(-np.take_along_axis(logp, target[..., None], -1).mean(), rel=1e-5)
    # read with its own s = 8 at every length: at 8L that is what PI gives there, at 4L it is not PI's s = 4
    assert T.bits_per_char(ft, [64])[0] == T.bits_per_char(ft, [64], method="pi")[0]
    assert T.bits_per_char(ft, [32])[0] != T.bits_per_char(ft, [32], method="pi")[0]


def test_a_factor_needs_a_rescaling_and_covers_the_finetune(runs):
    rope = runs["rope"]
    for method in (None, "abf"):
        with pytest.raises(ValueError, match=f"needs method 'pi', 'ntk' or 'yarn', got factor=8 with method {method!r}"):
            T.finetune(rope, length=32, method=method, factor=8)
    with pytest.raises(ValueError, match="factor must be at least length / train_len = 4, got factor=3"):
        T.finetune(rope, length=32, method="yarn", factor=3)


def test_a_row_holds_every_finetune_and_scores_each_past_its_own_length(runs, monkeypatch):
    # the row's plumbing on the tiny model (L = 8): the model and its context table stand in for the sweep's
    rope = runs["rope"]
    monkeypatch.setattr(T, "train", lambda scheme, **kw: rope)
    monkeypatch.setattr(T, "FINETUNE_STEPS", 2)
    monkeypatch.setattr(T.finetune, "__kwdefaults__", {**T.finetune.__kwdefaults__, "steps": 2})
    monkeypatch.setattr(text_context, "row", lambda run: {"blocks": {}, "sliding": [1.0], "nonoverlapping": [2.0]})
    got = R.row(0, "rope")
    assert set(got["finetuned"]) == set(R.FINETUNES) == {
        "plain", "pi", "ntk", "yarn", "pi_s8", "ntk_s8", "yarn_s8", "pi_s16", "ntk_s16", "yarn_s16"}
    assert all(len(got[k]) == len(T.FACTORS) for k in ("bits", "bits_se"))
    assert all(len(b) == len(R.PAST_FACTORS) for b in got["tuned"].values())
    # "tuned" is the mean over positions 4L … T − 1 of every window, with that fine-tune's own rescaling
    ft = T.finetune(rope, length=32, method="yarn", factor=16, steps=2, progress=False)
    past = T._window_nll(ft, 128, None)[:, 32:].mean(axis=1)
    assert got["tuned"]["yarn_s16"][1] == pytest.approx(past.mean(), abs=1e-6)
    assert got["tuned_se"]["yarn_s16"][1] == pytest.approx(past.std(ddof=1) / math.sqrt(past.size), abs=1e-5)
    assert got["context"] == {"blocks": {}, "sliding": [1.0], "nonoverlapping": [2.0]}


def test_the_stamp_names_the_settings(monkeypatch):
    before = R.row_stamp()
    monkeypatch.setattr(R, "PAST_FACTORS", (8,))
    assert R.row_stamp() != before


def test_the_sweep_refuses_the_held_out_seed():
    with pytest.raises(ValueError, match=f"holds the held-out seed {T.HELD_OUT_SEED}"):
        R.sweep((0, T.HELD_OUT_SEED))
