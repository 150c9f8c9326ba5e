"""passkey.haystack_scores and far_summary (issue 43 §1): the passkey counted by haystack, each depth reported, and
"past L" only where the needle lies more than L before the query; held to literal recounts."""

import math

import jax
import numpy as np
import pytest

from posenc_helpers.lab import passkey as P
from posenc_helpers.lab.model import Config, init
from posenc_helpers.lab.tasks import PASSKEY_LEN, passkey_batch
from posenc_helpers.lab.train import Run


def _untrained(scheme="alibi", L=32, **options):
    config = Config(scheme=scheme, d_model=16, heads=2, layers=1, train_len=L, **options)
    return Run(scheme, "passkey", L, init(jax.random.key(0), config), np.zeros(1), config, 0, 1)


def test_whole_keys_per_haystack_average_to_the_grid():
    run = _untrained()
    scores = P.haystack_scores(run, [32, 64], [0.0, 1.0], sequences=32)
    grid = P.passkey_grid(run, [32, 64], [0.0, 1.0], batch=32)
    np.testing.assert_array_equal(scores["whole"].mean(axis=2), grid["key"])
    assert set(np.unique(scores["whole"])) <= {0.0, 1.0}


def test_the_needles_distance_is_the_layouts():
    # literal: F = T - 2K - 1 filler tokens, the needle's marker after floor(d F) of them, its key right after it, the
    # query's marker at T - K
    scores = P.haystack_scores(_untrained(), P.GRID_LENGTHS, P.DEPTHS, sequences=32)
    for j, T in enumerate(P.GRID_LENGTHS):
        F = T - 2 * PASSKEY_LEN - 1
        for i, d in enumerate(P.DEPTHS):
            assert scores["distance"][i, j] == (T - PASSKEY_LEN) - (math.floor(d * F) + 1)
    far = P.far_summary(scores)["far_depths"]
    # the needle at depth 100 % is within L of the query at every length; at 2L only depths 0 and 25 % are far
    assert not far[-1].any() and far[:, 1].tolist() == [True, True, False, False, False]
    assert far[:, 3].tolist() == [True, True, True, True, False] and not far[:, 0].any()


def test_far_summary_against_a_literal_recount():
    rng = np.random.default_rng(1)
    whole = (rng.random((5, 3, 64)) < 0.7).astype(float)
    distance = np.array([[60, 200, 10], [40, 150, 9], [33, 100, 8], [32, 50, 7], [3, 3, 3]])
    out = P.far_summary({"whole": whole, "distance": distance, "train_len": 32})
    for j in range(3):
        far = [i for i in range(5) if distance[i, j] > 32]
        if not far:  # the third length: no needle more than L back, nothing past L to count
            assert np.isnan(out["far"][j]) and np.isnan(out["far_se"][j])
        else:
            per_haystack = whole[far, j].mean(axis=0)  # each haystack once, its far depths averaged
            assert out["far"][j] == pytest.approx(per_haystack.mean())
            assert out["far_se"][j] == pytest.approx(per_haystack.std(ddof=1) / np.sqrt(64))
        for i in range(5):
            assert out["key_se"][i, j] == pytest.approx(whole[i, j].std(ddof=1) / np.sqrt(64))
    assert out["far_depths"][:, 0].tolist() == [True, True, True, False, False]  # 32 is not more than L


def test_no_far_depth_or_no_run_gives_nan():
    whole = np.ones((2, 2, 4))
    whole[:, 1] = np.nan  # a length the scheme cannot run
    out = P.far_summary({"whole": whole, "distance": np.array([[5, 90], [3, 80]]), "train_len": 32})
    assert np.isnan(out["far"]).all()  # length 0: no far depth; length 1: cannot run
    run = _untrained("learned")
    scores = P.haystack_scores(run, [32, 64], [0.0], sequences=32)
    assert not np.isnan(scores["whole"][0, 0]).any() and np.isnan(scores["whole"][0, 1]).all()


def test_the_depths_of_a_length_share_their_haystacks_and_test_sets_differ():
    T = 64
    a, b = (np.asarray(P.cell_batch(T, d, seed=3, batch=8)[0]) for d in (0.0, 1.0))
    assert (a[:, -PASSKEY_LEN:] == b[:, -PASSKEY_LEN:]).all()  # the same keys, asked for in the same query
    # test set 0 is the batch it always was, bit for bit; test set 1 another
    key = jax.random.fold_in(jax.random.key(1_000_003 + 3), T)
    same = np.asarray(passkey_batch(key, batch=8, length=T, vocab=16, depth=0.5)[0])
    assert (np.asarray(P.cell_batch(T, 0.5, seed=3, batch=8)[0]) == same).all()
    assert (np.asarray(P.cell_batch(T, 0.5, seed=3, batch=8, test_set=1)[0]) != same).any()


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="needs a run trained on 'passkey'"):
        P.haystack_scores(Run("alibi", "prev", 32, None, np.zeros(1), Config(scheme="alibi"), 0, 1))
    with pytest.raises(ValueError, match="sequences must be at most 64 or a multiple of it, got 100"):
        P.haystack_scores(_untrained(), sequences=100)
