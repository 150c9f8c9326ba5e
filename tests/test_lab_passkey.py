"""The passkey task and its depth × length grid: against literal constructions, a hand-built model and named errors.

- Every batch is rebuilt token by token from its own parts (``literal_passkey``)
  and its depth checked against a decimal computation.
- The grid is checked two ways: against the float64 loop model of
  ``literal_lab`` cell by cell, and on a model built by hand that reads the
  token 3 back, whose grid follows from the task's layout alone (right at
  depth 1, wrong everywhere else; under PI at 2L it reads 6 back instead).
- The chance levels against a guess that sees the visible tokens as a bag.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from fractions import Fraction

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal_passkey import literal_cell, literal_position, literal_sequence, parse_sequence

from posenc_helpers import lab
from posenc_helpers.lab import model as M
from posenc_helpers.lab import tasks
from posenc_helpers.lab.evaluate import rope_scaling
from posenc_helpers.lab.passkey import DEPTHS, GRID_LENGTHS, cell_batch, chance_key, passkey_grid

jax.config.update("jax_enable_x64", False)


def batch_lists(*arrays):
    return [np.asarray(a).tolist() for a in arrays]


# --- the task ----------------------------------------------------------------------------------------


def test_the_new_tuple_leaves_the_old_ones_alone():
    assert tasks.TASKS == ("prev", "first") and tasks.EXTRA_TASKS == ("back3", "recall")
    assert tasks.RETRIEVAL_TASKS == ("passkey",)
    assert tasks.DISTANCE_TASKS == ("half",)
    assert tasks.ALL_TASKS == ("prev", "first", "back3", "recall", "half", "passkey")
    assert lab.TASKS == tasks.TASKS and lab.EXTRA_TASKS == tasks.EXTRA_TASKS
    assert tasks.check_task("passkey") == "passkey" and "passkey" in tasks.TASK_TITLES
    assert set(tasks.TASK_TITLES) == set(tasks.ALL_TASKS)


# every batch of these tests has B = 8 sequences and, where it can, T = 16 or 8 tokens over V = 16: one compiled
# program per shape, shared by the tests
B = 8


@pytest.mark.parametrize("length, vocab, key_len, depth", [(16, 16, 3, None), (7, 7, 3, None), (3, 3, 1, None),
                                                           (20, 9, 2, 0.5)])
def test_batch_is_its_own_parts_rebuilt_literally(length, vocab, key_len, depth):
    # (7, 7, 3): no filler at all and the smallest vocabulary for K = 3; (3, 3, 1): the same for one key token
    tokens, target, mask = batch_lists(*tasks.passkey_batch(jax.random.key(3), batch=B, length=length, vocab=vocab,
                                                             depth=depth, key_len=key_len))
    half = vocab // 2
    for b in range(B):
        filler, key, a = parse_sequence(tokens[b], vocab, key_len)
        assert (tokens[b], target[b], mask[b]) == literal_sequence(filler, key, a, vocab)
        assert len(filler) == length - 2 * key_len - 1
        assert all(0 <= t < half for t in filler)
        assert len(set(key)) == key_len and all(half <= t < vocab - 1 for t in key)
        if depth is not None:
            assert a == literal_position(depth, length, key_len)


def test_mask_marks_the_answers_and_nothing_else():
    tokens, target, mask = batch_lists(*tasks.make_batch("passkey", jax.random.key(5), batch=B, length=16, vocab=16))
    for b in range(B):
        assert [p for p in range(16) if mask[b][p]] == [13, 14, 15]
        filler, key, a = parse_sequence(tokens[b], 16)
        assert [target[b][p] for p in (13, 14, 15)] == key
        # the query: the marker, then the key's first two tokens as the inputs of the last two answers
        assert tokens[b][13:] == [15, key[0], key[1]]


def test_depth_puts_the_needle_exactly_there():
    base, length = None, 16
    for d in (0.0, 0.25, 0.5, 0.75, 1.0, 1 / 3, 0.99, 0.01):
        tokens, _, _ = batch_lists(*tasks.passkey_batch(jax.random.key(9), batch=B, length=length, vocab=16, depth=d))
        a = literal_position(d, length)
        assert tasks.passkey_position(d, length) == a
        parts = [parse_sequence(row, 16) for row in tokens]
        assert all(p[2] == a for p in parts)
        # the same key draws the same filler and key at every depth: only the needle moves
        same = [(p[0], p[1]) for p in parts]
        base = same if base is None else base
        assert same == base


def test_depths_by_hand():
    # F = T − 7; a = ⌊d·F⌋ on the decimal d: 0.29·100 = 29 (the float product is 28.999999999999996)
    assert 0.29 * 100 < 29
    assert [tasks.passkey_position(d, 107) for d in (0.0, 0.29, 0.5, 0.999, 1.0)] == [0, 29, 50, 99, 100]
    assert [tasks.passkey_position(d, 32) for d in (0.0, 0.5, 1.0)] == [0, 12, 25]   # F = 25: ⌊12.5⌋ = 12


@settings(max_examples=200, deadline=None)
@given(st.integers(7, 5000), st.integers(0, 10**6))
def test_position_matches_the_decimal_floor(length, millis):
    d = millis / 10**6
    assert tasks.passkey_position(d, length) == literal_position(d, length) == math.floor(Fraction(millis, 10**6) * (length - 7))


def test_training_draws_are_uniform_depths_keys_and_filler():
    tokens = np.concatenate([np.asarray(tasks.make_batch("passkey", jax.random.key(k), batch=B, length=16, vocab=16)[0])
                             for k in range(300)])
    a = np.argmax(tokens == 15, axis=1)          # the first marker: the needle's
    counts = np.bincount(a, minlength=10)
    assert counts.size == 10 and counts.sum() == 2400          # a ∈ {0, …, F = 9}
    # 240 expected per value, binomial sd ≈ 14.7: within 5 sd
    assert np.all(np.abs(counts - 240) < 74), counts
    # each answer, the key's first, second and third token, is any of the 7 key tokens alike: 2400/7 ≈ 343, sd ≈ 17
    for n in (13, 14, 15):
        answers = np.bincount(np.asarray([parse_sequence(row, 16)[1][n - 13] for row in tokens.tolist()]), minlength=15)
        assert answers[:8].sum() == 0 and np.all(np.abs(answers[8:] - 2400 / 7) < 86), answers
    # the filler tokens: 9 per sequence, each of 0 … 7 alike: 2700 expected, sd ≈ 49
    filler = np.bincount(np.concatenate([parse_sequence(row, 16)[0] for row in tokens.tolist()]), minlength=8)
    assert filler.size == 8 and np.all(np.abs(filler - 2700) < 245), filler


def test_seeded_and_traceable():
    one = batch_lists(*tasks.make_batch("passkey", jax.random.key(1), batch=B, length=16, vocab=16))
    again = batch_lists(*tasks.make_batch("passkey", jax.random.key(1), batch=B, length=16, vocab=16))
    other = batch_lists(*tasks.make_batch("passkey", jax.random.key(2), batch=B, length=16, vocab=16))
    assert one == again and one[0] != other[0]
    # training draws it inside a jit-compiled step: it traces with only the key as an array
    shapes = jax.eval_shape(lambda k: tasks.make_batch("passkey", k, batch=B, length=16, vocab=16), jax.random.key(1))
    assert [(x.shape, x.dtype.name) for x in shapes] == [((B, 16), "int32"), ((B, 16), "int32"), ((B, 16), "bool")]
    assert batch_lists(*tasks.passkey_batch(jax.random.key(1), batch=B, length=16, vocab=16)) == one


def test_chance_is_a_bag_guess():
    # a guess that sees the visible tokens as a bag: a key token seen once is not yet echoed; guess one of those
    tokens, target, mask = [], [], []
    for k in range(8):
        for have, new in zip((tokens, target, mask), batch_lists(*tasks.make_batch(
                "passkey", jax.random.key(100 + k), batch=B, length=16, vocab=16)), strict=True):
            have.extend(new)
    per_token, whole = [], []
    for b in range(len(tokens)):
        p_key = 1.0
        for p in range(16):
            if not mask[b][p]:
                continue
            seen = tokens[b][:p + 1]
            candidates = {t for t in seen if 8 <= t < 15 and seen.count(t) == 1}
            p_right = 1 / len(candidates) if target[b][p] in candidates else 0.0
            per_token.append(p_right)
            p_key *= p_right
        whole.append(p_key)
    assert np.mean(per_token) == pytest.approx(lab.chance("passkey", 16), abs=1e-12)
    assert lab.chance("passkey", 16) == pytest.approx(11 / 18, abs=1e-15)
    assert np.mean(whole) == pytest.approx(chance_key(), abs=1e-12) and chance_key() == pytest.approx(1 / 6)
    assert chance_key(4) == pytest.approx(1 / 24)


@pytest.mark.parametrize("kw, match", [
    ({"depth": 1.5}, r"depth must be a fraction of the filler in \[0, 1\], got 1.5"),
    ({"depth": -0.1}, r"depth must be a fraction .* got -0.1"),
    ({"depth": float("nan")}, "depth must be finite"),
    ({"length": 6}, r"length must be at least 2·key_len \+ 1 = 7 .* got 6"),
    ({"length": 4, "key_len": 2}, r"length must be at least 2·key_len \+ 1 = 5 .* got 4"),
    ({"vocab": 6}, r"vocab must be at least 2·key_len \+ 1 = 7 .* got 6"),
    ({"vocab": 8, "key_len": 4}, r"vocab must be at least 2·key_len \+ 1 = 9 .* got 8"),
    ({"key_len": 0}, "key_len must be a positive integer, got 0"),
])
def test_bad_input_is_named(kw, match):
    args = {"batch": 2, "length": 12, "vocab": 16, **kw}
    with pytest.raises(ValueError, match=match):
        tasks.passkey_batch(jax.random.key(0), **args)


def test_bad_depth_types_and_the_grid_inputs():
    with pytest.raises(TypeError, match="depth must be a real number, got 'half'"):
        tasks.passkey_position("half", 12)
    with pytest.raises(TypeError, match="depth must be a real number, got True"):
        tasks.passkey_position(True, 12)
    with pytest.raises(ValueError, match="task must be one of .*'passkey', got 'needle'"):
        tasks.check_task("needle")
    with pytest.raises(ValueError, match="length must be at least 2·key_len"):
        lab.chance("passkey", 16, length=6)
    run = tiny_run("rope", task="prev")
    with pytest.raises(ValueError, match="passkey_grid needs a run trained on 'passkey', got task 'prev'"):
        passkey_grid(run, [8], [0.5])
    run = tiny_run("rope")
    with pytest.raises(ValueError, match="depths must hold at least one depth"):
        passkey_grid(run, [8], [])
    with pytest.raises(ValueError, match=r"depth must be a fraction .* got 2.0"):
        passkey_grid(run, [8], [0.5, 2.0])
    with pytest.raises(TypeError, match="depths must be a fraction in"):
        passkey_grid(run, [8], "deep")
    with pytest.raises(ValueError, match="length must be at least 2·key_len"):
        passkey_grid(run, [8, 5], [0.5])
    with pytest.raises(ValueError, match="batch must be a positive integer, got 0"):
        passkey_grid(run, [8], [0.5], batch=0)
    with pytest.raises(ValueError, match="needs a RoPE run, got scheme 'alibi'"):
        passkey_grid(tiny_run("alibi"), [8], [0.5], method="pi")


# --- the grid ----------------------------------------------------------------------------------------


def random_params(config, seed):
    """Parameters of ``config``'s shapes drawn by numpy (no JAX program to compile): N(0, 1/fan-in), gains 1, biases 0."""
    shapes = jax.eval_shape(functools.partial(M.init, config=config), jax.random.key(0))
    rng = np.random.default_rng(seed)

    def draw(path, leaf):
        name = jax.tree_util.keystr(path)
        if "gain" in name:
            return np.ones(leaf.shape, np.float32)
        if "bias" in name and "t5" not in name:
            return np.zeros(leaf.shape, np.float32)
        return (rng.standard_normal(leaf.shape) / math.sqrt(leaf.shape[0])).astype(np.float32)

    return jax.tree_util.tree_map_with_path(draw, shapes)


def tiny_run(scheme, task="passkey", seed=7):
    # one layer, one head of width 40, L = 8, V = 16: the shape of lookback_run, so that their grids share compiled code
    config = M.Config(scheme=scheme, vocab=16, d_model=40, heads=1, layers=1, train_len=8)
    return lab.Run(scheme, task, 8, random_params(config, seed), np.zeros(1), config, 0, 1)


def lookback_run(back=3, *, vocab=16, train_len=8, pair=3, amplitude=80.0):
    """A one-layer RoPE model built by hand that predicts the token ``back`` positions back.

    The residual stream (d = 40, one head): the token one-hot ×4 in dims
    0 … V − 1, a copy slot in dims V … 2V − 1, a constant 1 in dim 36
    (LayerNorm gain 0, bias 1). q and k read only that constant, into RoPE
    pair ``pair`` (ω = 10000^(−2·pair/40) ≈ 0.251): q = A·(1, 0), k =
    A·(cos bω, sin bω), so the score of query i on key j is
    A²·cos((i − j − b)ω)/√40, sharpest at i − j = b (A²(1 − cos ω)/√40 ≈ 32
    above its neighbours; the next peak is 2π/ω ≈ 25 further back, beyond
    T = 16). The values copy the token dims into the copy slot, the
    unembedding reads the copy slot; no MLP.
    """
    d, one = 40, 36
    config = M.Config(scheme="rope", vocab=vocab, d_model=d, heads=1, layers=1, train_len=train_len)
    params = jax.tree_util.tree_map(lambda x: np.zeros(x.shape, np.float32), random_params(config, 0))
    omega = config.base ** (-2 * pair / d)
    params["embed"][np.arange(vocab), np.arange(vocab)] = 4.0
    block = params["blocks"][0]
    for norm in ("ln1", "ln2"):
        block[norm]["gain"][:] = 1.0
    block["ln1"]["gain"][one], block["ln1"]["bias"][one] = 0.0, 1.0
    block["qkv"][one, 2 * pair] = amplitude
    block["qkv"][one, d + 2 * pair] = amplitude * math.cos(back * omega)
    block["qkv"][one, d + 2 * pair + 1] = amplitude * math.sin(back * omega)
    for t in range(vocab):
        block["qkv"][t, 2 * d + vocab + t] = 1.0
        block["out"][vocab + t, vocab + t] = 3.0
        params["unembed"][vocab + t, t] = 1.0
    params["ln_f"]["gain"][:] = 1.0
    return lab.Run("rope", "passkey", train_len, params, np.zeros(1), config, 0, 1)


def test_a_model_that_reads_3_back_finds_the_needle_only_at_depth_1():
    # the answers at T − 3, T − 2, T − 1 are the key at T − 6, T − 5, T − 4 exactly when no filler follows the needle;
    # RoPE's score depends on i − j alone, so this holds past L = 8 too
    grid = passkey_grid(lookback_run(3), [8, 16], [0.0, 0.7, 1.0], batch=B)
    expected = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    np.testing.assert_array_equal(grid["key"], expected)
    np.testing.assert_array_equal(grid["token"], expected)
    assert grid["lengths"].tolist() == [8, 16] and grid["depths"].tolist() == [0.0, 0.7, 1.0]
    assert grid["train_len"] == 8 and grid["batch"] == B
    assert grid["chance"] == {"key": pytest.approx(1 / 6), "token": pytest.approx(11 / 18)}


def test_pi_at_2L_makes_it_read_6_back():
    # PI halves ω at T = 16 = 2L: the score peaks at i − j = 6, so the key is read when 3 filler tokens follow it
    # (F = 9, b = F − ⌊9d⌋ = 3 at d = 0.7); at T = L the factor is 1 and nothing changes
    run = lookback_run(3)
    grid = passkey_grid(run, [8, 16], [0.0, 0.7, 1.0], batch=B, method="pi")
    np.testing.assert_array_equal(grid["key"], [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    # a fine-tuned run is read with its own rescaling
    tuned = dataclasses.replace(run, method="pi", factor=2.0, finetune_len=16)
    np.testing.assert_array_equal(passkey_grid(tuned, [16], [0.0, 0.7, 1.0], batch=B)["key"], [[0.0], [1.0], [0.0]])


@pytest.mark.parametrize("make, method", [(lambda: lookback_run(3), "pi"), (lambda: tiny_run("rope"), None),
                                          (lambda: tiny_run("rope"), "yarn")])
def test_grid_matches_a_literal_evaluation_of_every_cell(make, method):
    run = make()
    lengths, depths = [8, 16], [0.0, 0.5, 1.0]
    grid = passkey_grid(run, lengths, depths, seed=2, batch=B, method=method)
    for j, T in enumerate(lengths):
        omega, scale = (rope_scaling(run, method, max(T / run.train_len, 1.0)) if method else (None, 1.0))
        for i, d in enumerate(depths):
            tokens, target, mask = batch_lists(*cell_batch(T, d, seed=2, batch=B, vocab=run.config.vocab))
            assert all(parse_sequence(row, run.config.vocab)[2] == literal_position(d, T) for row in tokens)
            key, token, margin = literal_cell(run.params, run.config, tokens, target, mask, omega=omega, logit_scale=scale)
            assert margin > 1e-4  # no near-tie that float32 could break the other way
            assert grid["key"][i, j] == pytest.approx(key, abs=1e-12)
            assert grid["token"][i, j] == pytest.approx(token, abs=1e-12)


def test_learned_table_cannot_run_past_L_and_seeds_are_kept():
    grid = passkey_grid(tiny_run("learned"), [16, 16], [0.0, 0.5], batch=B)   # past L = 8: nothing is run
    assert grid["key"].shape == (2, 2) and np.isnan(grid["key"]).all() and np.isnan(grid["token"]).all()
    a = batch_lists(*cell_batch(16, 0.5, seed=1, batch=B))
    assert a == batch_lists(*cell_batch(16, 0.5, seed=1, batch=B))
    assert a[0] != batch_lists(*cell_batch(16, 0.5, seed=2, batch=B))[0]
    # the cells of one length share the test batch's filler and key: test_batch draws them from the same key
    sampled = batch_lists(*lab.test_batch("passkey", 16, seed=1, batch=B, vocab=16))
    assert [parse_sequence(r, 16)[:2] for r in a[0]] == [parse_sequence(r, 16)[:2] for r in sampled[0]]
    assert DEPTHS == (0.0, 0.25, 0.5, 0.75, 1.0) and GRID_LENGTHS == (32, 64, 128, 256)
