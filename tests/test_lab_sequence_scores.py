"""Scoring by sequence: evaluate.sequence_scores and evaluate_cells, and that their standard error means what it says.

The unit of noise is the test sequence (:mod:`posenc_helpers.lab.stats`).
These tests hold the per-sequence scores to a literal recount from the
model's own logits, show that two independent test sets differ by what the
stated standard errors predict, and that a standard error over tokens does
not (on the first-token task every answer of a sequence shares one target).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from posenc_helpers import lab
from posenc_helpers.lab.model import forward

E = importlib.import_module("posenc_helpers.lab.evaluate")  # the module (lab.evaluate is the function)

TINY = dict(train_len=8, d_model=16, heads=2, layers=1, progress=False)


@pytest.fixture(scope="module")
def runs():
    # a few tiny models, part-trained so that their accuracies sit between chance and 1
    return {
        (scheme, task): lab.train(scheme, task, steps=steps, seed=1, **TINY)
        for scheme, task, steps in [("alibi", "prev", 60), ("rope", "first", 40), ("none", "first", 40),
                                    ("sinusoidal", "prev", 30)]
    }


def literal_per_sequence(run, T, sequences, test_set=0):
    tokens, target, mask = (np.asarray(a) for a in E.test_batch(run.task, T, batch=sequences, test_set=test_set))
    logits = np.asarray(forward(run.params, tokens, run.config))
    right = logits.argmax(-1) == target
    out_all, out_past = [], []
    for b in range(sequences):
        scored = [t for t in range(T) if mask[b, t]]
        out_all.append(sum(right[b, t] for t in scored) / len(scored))
        past = [t for t in scored if t >= run.train_len]
        out_past.append(sum(right[b, t] for t in past) / len(past) if past else None)
    return out_all, out_past


@pytest.mark.parametrize("key", [("alibi", "prev"), ("rope", "first")])
def test_each_sequence_is_scored_on_its_own_answers(runs, key):
    run = runs[key]
    got = E.sequence_scores(run, 16, sequences=64)
    want_all, want_past = literal_per_sequence(run, 16, 64)
    assert got["all"].tolist() == pytest.approx(want_all)
    assert got["beyond"].tolist() == pytest.approx(want_past)
    assert got["tuned"] is None
    assert E.sequence_scores(run, 8, sequences=64)["beyond"] is None  # at L nothing is past L


def test_chunks_score_what_one_batch_scores(runs, monkeypatch):
    run = runs["alibi", "prev"]
    chunked = E.sequence_scores(run, 16, sequences=128)["all"]
    monkeypatch.setattr(E, "EVAL_CHUNK", 128)
    whole = E.sequence_scores(run, 16, sequences=128)["all"]
    assert np.array_equal(chunked, whole)


def test_evaluate_cells_gives_the_mean_and_se_of_the_sequences(runs):
    run = runs["rope", "first"]
    cells = E.evaluate_cells(run, [8, 16], sequences=64)
    scores = E.sequence_scores(run, 16, sequences=64)
    for name, part in (("accuracy", "all"), ("beyond", "beyond")):
        a = scores[part]
        assert cells[name][1] == pytest.approx(a.mean())
        assert cells[f"{name}_se"][1] == pytest.approx(a.std(ddof=1) / math.sqrt(a.size))
    assert np.isnan(cells["beyond"][0]) and np.isnan(cells["tuned"]).all()


def test_pooled_over_sequences_it_is_the_accuracy_evaluate_gives(runs):
    # every sequence of "prev" has the same number of answers, so the mean of per-sequence scores is the pooled one
    run = runs["sinusoidal", "prev"]
    scores = E.sequence_scores(run, 16, sequences=E.EVAL_BATCH)
    old = E.evaluate(run, [16], positions="beyond")["accuracy"][0]
    assert scores["beyond"].mean() == pytest.approx(old)


def two_test_sets(runs, lengths=(8, 12, 16, 20, 24, 32)):
    """(difference, combined SE over sequences, combined SE over tokens, task) for every model, length and part.

    (How far an SE over tokens falls short depends on how whole sequences fail: for these part-trained tiny models
    little; for the 31-of-32 case of the issue, tests/test_lab_stats.py, 14 times. The stored sweeps' replicate
    test sets check the same on the lab's own models.)
    """
    rows = []
    for run in runs.values():
        for T in lengths:
            a = E.sequence_scores(run, T, test_set=0)
            b = E.sequence_scores(run, T, test_set=1)
            _, _, mask = E.test_batch(run.task, T, batch=E.EVAL_SEQUENCES)
            tokens_all = int(np.asarray(mask).sum())
            for part in ("all", "beyond"):
                if a[part] is None:
                    continue
                x, y = a[part], b[part]
                seq = math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
                n = tokens_all if part == "all" else int(np.asarray(mask)[:, run.train_len:].sum())
                tok = math.sqrt(sum(m * (1 - m) / n for m in (x.mean(), y.mean())))
                rows.append((abs(x.mean() - y.mean()), seq, tok, run.task))
    return rows


@pytest.mark.full  # trains: make test-all
@pytest.mark.slow
def test_the_stated_se_predicts_the_difference_between_two_test_sets(runs):
    rows = two_test_sets(runs)
    assert len(rows) >= 40
    within = [d <= 2 * seq for d, seq, _, _ in rows]
    assert sum(within) / len(within) >= 0.9, f"{sum(within)} of {len(within)} within 2 combined SE"


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda run: E.sequence_scores(run, 16, sequences=100), "sequences must be at most 64 or a multiple of it, got 100"),
        (lambda run: E.sequence_scores(run, 16, test_set=-1), "test_set must be 0"),
        (lambda run: E.evaluate_cells(run, [], sequences=64), "lengths must hold at least one length"),
    ],
)
def test_bad_input_is_refused_by_name(runs, call, match):
    with pytest.raises(ValueError, match=match):
        call(runs["alibi", "prev"])
