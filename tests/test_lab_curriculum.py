"""Training with a length curriculum (Ruoss et al.'s recipe for randomized positions), and the task "half"."""

from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest

from posenc_helpers import lab
from posenc_helpers.lab import cache
from posenc_helpers.lab.tasks import make_batch

T = importlib.import_module("posenc_helpers.lab.train")  # the module (lab.train is the function)

TINY = dict(train_len=8, d_model=16, heads=2, layers=1, progress=False)


@pytest.mark.full  # trains: make test-all (docs/PERFORMANCE.md)
def test_each_step_trains_at_its_drawn_length(monkeypatch):
    monkeypatch.setenv(cache.ENV, "off")
    seen = []
    real = T._train_chunk

    def spy(*args, config, n, **kw):
        seen.append((config.train_len, n))
        return real(*args, config=config, n=n, **kw)

    monkeypatch.setattr(T, "_train_chunk", spy)
    run = lab.train("rand_rope", "prev", steps=6, seed=3, curriculum=True, **TINY)
    want = T.curriculum_lengths("prev", 8, 6, 3)
    assert seen == [(int(n), 1) for n in want]  # one step per call, at that step's length
    assert run.config.train_len == 8 and run.losses.shape == (6,)


def test_the_lengths_are_uniform_from_the_shortest_with_an_answer_to_L():
    lengths = T.curriculum_lengths("passkey", 32, 20_000, 0)
    assert lengths.min() == 7 and lengths.max() == 32  # 2K + 1 = 7: the needle and the query
    counts = np.bincount(lengths)[7:]
    expected = 20_000 / 26
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))  # each of 26 lengths equally likely, 5 SE
    assert T.curriculum_lengths("prev", 32, 5, 0).tolist() == T.curriculum_lengths("prev", 32, 5, 0).tolist()
    assert T.curriculum_lengths("prev", 32, 5, 0).tolist() != T.curriculum_lengths("prev", 32, 5, 1).tolist()


def test_a_curriculum_is_another_model_in_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENV, str(tmp_path))
    plain = lab.train("rand_alibi", "first", steps=4, **TINY)
    taught = lab.train("rand_alibi", "first", steps=4, curriculum=True, **TINY)
    assert not np.array_equal(np.asarray(plain.losses), np.asarray(taught.losses))
    again = lab.train("rand_alibi", "first", steps=4, curriculum=True, **TINY)
    assert np.array_equal(np.asarray(again.losses), np.asarray(taught.losses))
    assert len(list(tmp_path.glob("*.npz"))) == 2


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"scheme": "learned"}, ValueError, "curriculum=True cannot train the learned table"),
        ({"curriculum": "yes"}, TypeError, "curriculum must be True or False, got 'yes'"),
        ({"train_len": 6, "task": "passkey"}, ValueError, r"a curriculum for 'passkey' needs train_len ≥ 7, got 6"),
    ],
)
def test_bad_curricula_are_refused_by_name(kwargs, error, match, monkeypatch):
    monkeypatch.setenv(cache.ENV, "off")
    args = {"scheme": "rand_rope", "task": "prev", "curriculum": True, "steps": 2, **TINY, **kwargs}
    with pytest.raises(error, match=match):
        lab.train(args.pop("scheme"), args.pop("task"), **args)


def test_half_asks_for_the_token_at_half_the_position():
    tokens, target, mask = (np.asarray(a) for a in make_batch("half", jax.random.key(0), batch=3, length=11, vocab=16))
    for b in range(3):
        for t in range(11):
            assert target[b, t] == tokens[b, t // 2]  # x[⌊t/2⌋], ⌈t/2⌉ back
            assert mask[b, t] == (t >= 1)
    assert lab.tasks.chance("half", 16) == 1 / 16
