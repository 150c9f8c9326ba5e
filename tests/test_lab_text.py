"""posenc_helpers.lab.text: the vocabulary, the split, the batches, the losses against literal loops, bad input.

The model itself is tested against literal loops in test_lab_model.py; here
its logits are taken as given and everything text.py adds (windows, targets,
the loss over every position, the validation windows, bits) is recomputed by
hand from the text string.
"""

from __future__ import annotations

import collections
import dataclasses
import math

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers.lab import text as T
from posenc_helpers.lab.model import forward, init

TEXT = T.TEXT_PATH.read_text()


@pytest.fixture(scope="module")
def tiny_runs():
    # two steps: the parameters hardly matter, only that the code paths agree
    return {s: T.train(s, steps=2, train_len=8, d_model=16, heads=2, layers=1, progress=False) for s in ("rope", "learned")}


def test_the_shipped_text_is_the_documented_file():
    assert len(TEXT) == 993_274 and len(set(TEXT)) == 73 and TEXT.isascii()
    assert T.VOCAB == "".join(sorted(set(TEXT))) and len(T.VOCAB) == len(set(T.VOCAB))


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=sorted(set(TEXT)), max_size=40))
def test_vocabulary_round_trip(s):
    ids = T.encode(s)
    assert T.decode(ids) == s
    assert all(T.VOCAB[i] == c for i, c in zip(ids.tolist(), s, strict=True))


def test_split_is_ninety_ten_by_position():
    train, val = T.split()
    n = len(TEXT)
    assert train.size == math.floor(0.9 * n) and train.size + val.size == n
    assert T.decode(train) == TEXT[: train.size] and T.decode(val) == TEXT[train.size :]


def test_batches_are_windows_of_the_training_text_and_seeded():
    train_text = TEXT[: T.split()[0].size]
    tokens, target = T.batch(3, length=12, size=5)
    assert tokens.shape == target.shape == (5, 12)
    for row_in, row_out in zip(tokens, target, strict=True):
        window = T.decode(row_in) + T.decode(row_out[-1:])
        assert window in train_text  # 13 consecutive characters of the training text
        assert T.decode(row_out) == window[1:]
    again, _ = T.batch(3, length=12, size=5)
    other, _ = T.batch(4, length=12, size=5)
    later, _ = T.batch(3, length=12, size=5, step=1)
    assert (again == tokens).all() and not (other == tokens).all() and not (later == tokens).all()


def test_the_first_training_loss_is_the_literal_loss_over_every_position(tiny_runs):
    run = tiny_runs["rope"]  # seed 0, batches of 32 windows of 8 characters
    # the loss at step 0 is computed on the initial parameters and the seed's batch 0
    init_key, _ = jax.random.split(jax.random.key(0))
    params = init(init_key, run.config)
    tokens, target = T.batch(0, length=8, size=32)
    logits = np.asarray(forward(params, tokens, run.config), dtype=np.float64)
    total = 0.0
    for b in range(32):
        for t in range(8):
            row = logits[b, t]
            total += math.log(sum(math.exp(z - row.max()) for z in row)) + row.max() - row[target[b, t]]
    assert run.losses[0] == pytest.approx(total / 256, rel=1e-5)


def test_bits_per_char_is_the_hand_computed_mean_over_non_overlapping_windows(tiny_runs):
    run = tiny_runs["rope"]
    val_text = TEXT[T.split()[0].size :]
    T_len = 16
    n = (len(val_text) - 1) // T_len
    want = []
    for w in range(0, n, 97):  # every 97th window, by hand; the mean is checked on all of them below
        inputs = val_text[w * T_len : (w + 1) * T_len]
        nexts = val_text[w * T_len + 1 : (w + 1) * T_len + 1]
        logits = np.asarray(forward(run.params, T.encode(inputs)[None], run.config)[0], dtype=np.float64)
        for t, c in enumerate(nexts):
            p = np.exp(logits[t] - logits[t].max())
            want.append(-math.log2(p[T.VOCAB.index(c)] / p.sum()))
    got = T._window_nll(run, T_len, None)
    assert got.shape == (n, T_len)
    np.testing.assert_allclose(got[::97].ravel(), want, rtol=1e-4)
    assert T.bits_per_char(run, [T_len])[0] == pytest.approx(got.mean())
    np.testing.assert_allclose(T.loss_by_position(run, T_len), got.mean(0))


def test_learned_cannot_run_past_its_table(tiny_runs):
    bpc = T.bits_per_char(tiny_runs["learned"], [8, 16])
    assert np.isfinite(bpc[0]) and np.isnan(bpc[1])
    assert np.isnan(T.loss_by_position(tiny_runs["learned"], 16)).all()


def test_rescaling_changes_only_past_L(tiny_runs):
    run = tiny_runs["rope"]
    plain = T.bits_per_char(run, [8, 32])
    for method in T.METHODS:
        scaled = T.bits_per_char(run, [8, 32], method=method)
        assert scaled[0] == plain[0] and scaled[1] != plain[1]


def test_unigram_baseline_by_hand():
    cut = T.split()[0].size
    counts = collections.Counter(TEXT[:cut])
    total = sum(counts.values())
    val_text = TEXT[cut:]
    want = -sum(math.log2(counts[c] / total) for c in val_text) / len(val_text)
    assert T.unigram_bits() == pytest.approx(want, rel=1e-9)


def test_generate_is_seeded_and_in_vocabulary(tiny_runs):
    for run in tiny_runs.values():  # the learned table too: it reads at most L characters
        a = T.generate(run, "ROMEO.\n", 30, seed=1)
        assert len(a) == 30 and set(a) <= set(T.VOCAB)
        assert T.generate(run, "ROMEO.\n", 30, seed=1) == a


def test_bad_input_names_the_argument(tiny_runs):
    run = tiny_runs["rope"]
    with pytest.raises(ValueError, match="scheme"):
        T.train("rope_nope", steps=1, progress=False)  # one of the lab's schemes, not the text lab's
    with pytest.raises(ValueError, match="length"):
        T.train("rope", train_len=1, steps=1, progress=False)
    with pytest.raises(ValueError, match="length"):
        T.bits_per_char(run, [8, 1])
    with pytest.raises(ValueError, match="length"):
        T.loss_by_position(run, 1)
    with pytest.raises(ValueError, match="prompt"):
        T.generate(run, "caf\u00e9", 3)
    with pytest.raises(ValueError, match="prompt"):
        T.generate(run, "", 3)
    with pytest.raises(ValueError, match="method"):
        T.bits_per_char(run, [16], method="dynamic")
    with pytest.raises(ValueError, match="method"):
        T.bits_per_char(tiny_runs["learned"], [8], method="pi")
    with pytest.raises(ValueError, match="steps"):
        T.train("rope", steps=0, progress=False)


def test_t5_takes_the_lab_defaults_16_buckets_and_max_distance_L():
    run = T.train("t5", steps=2, train_len=16, d_model=16, heads=2, layers=1, progress=False)
    assert "t5" in T.TEXT_SCHEMES and run.config.t5_buckets == 16 and run.config.t5_max_distance == 16
    assert run.params["t5_bias"].shape == (16, 2)  # (buckets, heads)
    with pytest.raises(ValueError, match="t5_max_distance must exceed the 8 exact buckets"):
        T.train("t5", steps=1, train_len=8, progress=False)  # 16 buckets need L > 8


def test_training_smoke_the_loss_falls_below_the_unigram_baseline():
    # a tiny model (one layer, width 32) gets there in 150 steps too: about 3.8 bits against the baseline's 4.97
    run = T.train("rope", steps=150, train_len=16, d_model=32, heads=2, layers=1, progress=False)
    first, last = run.losses[:10].mean(), run.losses[-10:].mean()
    assert last < first and last / math.log(2) < T.unigram_bits()


# ---- the learner's own text -------------------------------------------------------------------


def test_own_corpus_trains_on_its_first_90_percent_and_reads_its_last_10(tmp_path):
    own = TEXT[5000:9000]  # 4,000 characters of the tragedies, as if the learner's own
    run = T.train("alibi", steps=2, train_len=8, d_model=16, heads=2, layers=1, progress=False, corpus=own)
    cut = int(0.9 * len(own))
    assert T.decode(run.validation) == own[cut:]
    # the validation windows are the own text's: (len − 1) // T windows of T
    assert T._window_nll(run, 16, None).shape == ((len(own) - cut - 1) // 16, 16)
    path = tmp_path / "own.txt"
    path.write_text(own, encoding="utf-8")
    again = T.train("alibi", steps=2, train_len=8, d_model=16, heads=2, layers=1, progress=False, corpus=path)
    np.testing.assert_array_equal(again.losses, run.losses)  # a path reads the same text
    shipped = T.train("alibi", steps=2, train_len=8, d_model=16, heads=2, layers=1, progress=False)
    assert shipped.validation is None and not np.array_equal(shipped.losses, run.losses)


def test_own_corpus_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="corpus has characters outside the vocabulary: '\u00e9'"):
        T.train("rope", steps=1, train_len=8, progress=False, corpus="caf\u00e9 " * 100)
    with pytest.raises(ValueError, match=r"corpus must have at least 10 × \(train_len \+ 1\) = 90 characters, got 89"):
        T.train("rope", steps=1, train_len=8, progress=False, corpus="a" * 89)
    with pytest.raises(TypeError, match="corpus"):
        T.train("rope", steps=1, train_len=8, progress=False, corpus=b"bytes")
    run = T.train("rope", steps=2, train_len=8, d_model=16, heads=2, layers=1, progress=False, corpus="ab " * 30)
    with pytest.raises(ValueError, match="length 16 is longer"):
        T.bits_per_char(run, [16])  # 9 validation characters hold no window of 16


# ---- the brief fine-tune ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def rope8(tiny_runs):
    return tiny_runs["rope"]  # RoPE, L = 8, two steps: the fine-tunes below compile one program at 4L


def test_finetune_starts_from_the_run_with_pi_frequencies_by_hand(rope8):
    ft = T.finetune(rope8, length=32, method="pi", steps=2, seed=2, progress=False)
    assert ft.train_len == 8 and ft.finetune_len == 32 and ft.method == "pi" and ft.factor == 4.0
    assert ft.initial_params is rope8.params and ft.losses.shape == (2,)
    # step 0's loss: the pre-trained parameters on seed 2's first batch of 32 characters, with
    # PI's frequencies written out: ω_k = base^(−2k/d) / s, d = head_dim = 8, s = 4
    omega = np.array([10000.0 ** (-2 * k / 8) / 4 for k in range(4)])
    tokens, target = T.batch(2, length=32, size=32)
    config = dataclasses.replace(rope8.config, train_len=32)
    logits = np.asarray(forward(rope8.params, tokens, config, omega=omega), dtype=np.float64)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    want = -np.take_along_axis(logp, target[..., None], -1).mean()
    assert ft.losses[0] == pytest.approx(want, rel=1e-5)
    assert not np.array_equal(np.asarray(ft.params["embed"]), np.asarray(rope8.params["embed"]))


def test_a_finetuned_run_is_read_with_its_own_rescaling_at_every_length(rope8):
    ft = T.finetune(rope8, length=32, method="pi", steps=2, progress=False)
    own = T.bits_per_char(ft, [8, 32])
    # at 4L its own rescaling is PI at s = 4, as method="pi" gives there; at L, method="pi" means s = 1
    assert own[1] == T.bits_per_char(ft, [32], method="pi")[0]
    assert own[0] != T.bits_per_char(ft, [8], method="pi")[0]
    plain = T.finetune(rope8, length=32, steps=2, progress=False)
    assert plain.method is None and plain.factor == 4.0
    assert T.bits_per_char(plain, [32])[0] == pytest.approx(T.bits_per_char(plain, [32], method=None)[0])


def test_abf_finetunes_with_the_raised_base_written_out(rope8):
    ft = T.finetune(rope8, length=32, method="abf", steps=2, seed=2, progress=False)
    assert ft.method == "abf" and ft.factor == 4.0 and T.ABF_BASE == 500_000.0
    # step 0's loss with ABF's frequencies written out: ω_k = 500,000^(−2k/d), d = 8, no temperature
    omega = np.array([500_000.0 ** (-2 * k / 8) for k in range(4)])
    tokens, target = T.batch(2, length=32, size=32)
    config = dataclasses.replace(rope8.config, train_len=32)
    logits = np.asarray(forward(rope8.params, tokens, config, omega=omega), dtype=np.float64)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    assert ft.losses[0] == pytest.approx(-np.take_along_axis(logp, target[..., None], -1).mean(), rel=1e-5)
    # read with the raised base at every length, L included (unlike PI, whose factor is 1 at L)
    assert T.bits_per_char(ft, [8])[0] == T.bits_per_char(ft, [8], method="abf")[0]
    assert "abf" not in T.METHODS  # a fine-tune, not one of the sweep's test-time rescalings


def test_finetune_bad_input_names_the_argument(rope8):
    alibi = T.train("alibi", steps=2, train_len=8, d_model=16, heads=2, layers=1, progress=False)
    with pytest.raises(ValueError, match="run must be a RoPE run"):
        T.finetune(alibi, length=32)
    with pytest.raises(ValueError, match="length must exceed the run's training length 8, got 8"):
        T.finetune(rope8, length=8)
    with pytest.raises(ValueError, match="steps"):
        T.finetune(rope8, length=32, steps=0)
    with pytest.raises(ValueError, match="method must be one of 'pi', 'ntk', 'yarn', 'abf' or None, got 'dynamic'"):
        T.finetune(rope8, length=32, method="dynamic")
    ft = T.finetune(rope8, length=32, steps=2, progress=False)
    with pytest.raises(ValueError, match="run is already fine-tuned"):
        T.finetune(ft, length=32)
    with pytest.raises(TypeError, match="run must be a text run"):
        T.finetune("rope", length=32)
