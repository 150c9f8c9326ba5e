"""The schemes built for length generalisation (posenc_helpers.lab.model.LENGTH_SCHEMES) against the literal model.

Randomized positions (Ruoss et al. 2023) on sinusoidal, learned, RoPE and
ALiBi, and FIRE (Li et al. 2023). The literal model (tests/literal_lab.py)
takes the drawn positions as plain integers and computes every score one
(head, query, key) at a time; here it runs past the training length.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal_lab import literal_forward

from posenc_helpers.lab import model as M
from posenc_helpers.lab.evaluate import accuracy, attention, position_key
from posenc_helpers.lab.passkey import passkey_grid
from posenc_helpers.lab.train import train

T_PAST = 40  # past the training length 32


def small(scheme, **kw):
    return M.Config(scheme=scheme, d_model=16, heads=2, layers=2, train_len=32, **kw)


def _params(config, seed):
    params = M.init(jax.random.key(seed), config)
    if config.scheme == "fire":
        # FIRE's starting MLP is small next to the logits; make each layer's bias large enough to matter
        for n, block in enumerate(params["blocks"]):
            f = dict(block["fire"])
            f["b1"] = jax.random.normal(jax.random.key(seed + 10 + n), f["b1"].shape)
            f["w2"] = f["w2"] * 4.0
            f["c"], f["m"] = jnp.float32(0.3), jnp.float32(1.5)
            block["fire"] = f
    return params


CASES = {
    "rand_sinusoidal": {"max_position": 512},
    "rand_learned": {"max_position": 64},
    "rand_rope": {"max_position": 2048},
    "rand_alibi": {"max_position": 300},
    "fire": {},
    "fire, threshold 20": {"fire_threshold": 20.0},
}


FAST = ("rand_rope", "rand_alibi", "fire")  # make test runs these; `full` runs the rest too


def _cases(names, fast=FAST):
    return [n if n in fast else pytest.param(n, marks=pytest.mark.full) for n in names]


@pytest.mark.parametrize("case", _cases(CASES))
def test_forward_matches_the_literal_model_past_the_training_length(case):
    config = small(case.split(",")[0], **CASES[case])
    params = _params(config, 1)
    tokens = np.random.default_rng(2).integers(0, config.vocab, T_PAST)
    positions = None
    if config.scheme in M.RANDOMIZED:
        positions = M.draw_positions(jax.random.key(3), 1, T_PAST, config)
    logits, maps = M.forward(params, jnp.asarray(tokens)[None], config, return_attention=True, positions=positions)
    want_logits, want_maps = literal_forward(
        params, tokens, config, positions=None if positions is None else np.asarray(positions)[0].tolist()
    )
    np.testing.assert_allclose(np.asarray(maps)[:, 0], want_maps, atol=3e-5)
    np.testing.assert_allclose(np.asarray(logits)[0], want_logits, atol=3e-4)


def test_the_literal_model_tells_the_new_schemes_apart():
    """Each scheme's own term changes the literal model's logits, so the comparison above can fail."""
    tokens = np.random.default_rng(0).integers(0, 16, 12)
    for scheme in M.LENGTH_SCHEMES:
        config = small(scheme)
        params = _params(config, 0)
        p = None
        if scheme in M.RANDOMIZED:
            p = np.asarray(M.draw_positions(jax.random.key(0), 1, 12, config))[0].tolist()
            other = np.asarray(M.draw_positions(jax.random.key(1), 1, 12, config))[0].tolist()  # another draw
            assert other != p
            assert not np.allclose(literal_forward(params, tokens, config, positions=p)[0],
                                   literal_forward(params, tokens, config, positions=other)[0])
        else:
            flat = dataclasses.replace(config, fire_threshold=1000.0)
            assert not np.allclose(literal_forward(params, tokens, config)[0], literal_forward(params, tokens, flat)[0])


@pytest.mark.parametrize("scheme", _cases(M.RANDOMIZED))
def test_a_key_draws_the_positions_draw_positions_gives(scheme):
    config = small(scheme)
    params = _params(config, 0)
    tokens = jnp.asarray(np.random.default_rng(1).integers(0, 16, (3, 20)))
    key = jax.random.key(5)
    by_key = M.forward(params, tokens, config, key=key)
    by_positions = M.forward(params, tokens, config, positions=M.draw_positions(key, 3, 20, config))
    np.testing.assert_array_equal(np.asarray(by_key), np.asarray(by_positions))
    # another key, other positions, other logits
    assert not np.allclose(np.asarray(by_key), np.asarray(M.forward(params, tokens, config, key=jax.random.key(6))))


@pytest.mark.parametrize("scheme", _cases(M.RANDOMIZED, fast=("rand_alibi",)))
@given(batch=st.integers(1, 4), length=st.integers(1, 30), extra=st.integers(0, 40), seed=st.integers(0, 10_000))
@settings(max_examples=6, deadline=None)
def test_draws_are_sorted_distinct_and_in_range(scheme, batch, length, extra, seed):
    config = M.Config(scheme=scheme, train_len=1, max_position=length + extra)
    p = np.asarray(M.draw_positions(jax.random.key(seed), batch, length, config))
    assert p.shape == (batch, length) and p.dtype == np.int32
    assert (np.diff(p, axis=1) > 0).all()
    assert p.min() >= 0 and p.max() < length + extra
    if scheme == "rand_alibi":
        assert (p[:, 0] == 0).all()
    if extra == 0 and scheme != "rand_alibi":
        assert (p == np.arange(length)).all()  # every position of the range: no choice left


def test_every_subset_is_equally_likely():
    """M = 6, T = 2: the 15 pairs each come up 1/15 of the time, within 5 standard errors over 6,000 draws."""
    config = M.Config(scheme="rand_rope", train_len=2, max_position=6)
    draws = np.asarray(M.draw_positions(jax.random.key(0), 6000, 2, config))
    counts = {pair: 0 for pair in itertools.combinations(range(6), 2)}
    for a, b in draws.tolist():
        counts[(a, b)] += 1
    se = math.sqrt(6000 * (1 / 15) * (14 / 15))
    assert all(abs(n - 400) < 5 * se for n in counts.values()), counts
    # rand_alibi: offset 1 stands for a distance 1 … 5, each 1/5 of the time
    alibi = np.asarray(M.draw_positions(jax.random.key(1), 5000, 2, dataclasses.replace(config, scheme="rand_alibi")))
    freq = np.bincount(alibi[:, 1], minlength=6)[1:] / 5000
    assert np.abs(freq - 0.2).max() < 5 * math.sqrt(0.2 * 0.8 / 5000)


def test_fire_bias_stays_in_the_trained_range_at_any_length():
    """Progressive interpolation: u = ψ(i − j)/ψ(max(τ, i)) lies in [0, 1] for every causal pair, so at 8L the
    bias takes only values f takes on the inputs of training; below τ the divisor is fixed."""
    config = small("fire")
    fire = _params(config, 0)["blocks"][0]["fire"]
    c, tau = float(fire["c"]), abs(float(fire["m"]) * config.fire_threshold)
    for T in (32, 256):
        i, j = np.arange(T)[:, None], np.arange(T)[None, :]
        u = np.log1p(c * np.abs(i - j)) / (np.log1p(c * np.maximum(tau, i)) + M.FIRE_EPS)
        assert u[j <= i].min() >= 0 and u[j <= i].max() <= 1
    # queries below τ share a divisor: their bias depends on i − j alone
    b = np.asarray(M.fire_bias(20, fire, config))
    small_i = int(tau)
    for d in range(small_i):
        diag = [b[:, i, i - d] for i in range(d, small_i + 1)]
        np.testing.assert_allclose(diag, np.repeat(diag[:1], len(diag), axis=0), atol=1e-6)


def test_fire_learns_its_scale_and_threshold():
    run = train("fire", "prev", steps=30, progress=False, train_len=16, d_model=16, heads=2, layers=1, cache=False)
    f = run.params["blocks"][0]["fire"]
    assert float(f["c"]) != pytest.approx(M.FIRE_C, abs=1e-6)
    assert float(f["m"]) != pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("scheme", _cases(M.RANDOMIZED, fast=("rand_rope",)))
def test_evaluation_draws_fresh_positions_per_length_and_repeats_itself(scheme):
    run = train(scheme, "prev", steps=5, progress=False, train_len=8, d_model=16, heads=2, layers=1, cache=False)
    a = accuracy(run, [8, 40])
    np.testing.assert_array_equal(a, accuracy(run, [8, 40]))  # the same key every call
    assert not np.isnan(a).any()  # the randomized learned table reads past L: it has max_position rows
    k8, k40 = position_key(run.config, 8), position_key(run.config, 40)
    assert not np.array_equal(jax.random.key_data(k8), jax.random.key_data(k40))
    assert position_key(M.Config(scheme="rope"), 8) is None
    assert attention(run, np.zeros(10, dtype=int)).shape == (1, 2, 10, 10)


@pytest.mark.full
def test_passkey_grid_runs_every_new_scheme_past_L():
    for scheme in M.LENGTH_SCHEMES:
        run = train(scheme, "passkey", steps=3, progress=False, train_len=16, d_model=16, heads=2, layers=1, cache=False)
        grid = passkey_grid(run, [16, 32], [0.0, 1.0], batch=4)
        assert not np.isnan(grid["key"]).any(), scheme


BAD = [
    ({"scheme": "rand_rope", "max_position": 16}, "max_position must be at least train_len = 32"),
    ({"scheme": "rand_rope", "max_position": 0}, "max_position must be a positive integer"),
    ({"scheme": "rope", "max_position": 64}, "max_position is a setting of scheme"),
    ({"scheme": "fire", "fire_c": 0.0}, r"fire_c must be positive .* got 0.0"),
    ({"scheme": "fire", "fire_threshold": -1.0}, "fire_threshold must be positive, got -1.0"),
    ({"scheme": "fire", "fire_width": 0}, "fire_width must be a positive integer"),
    ({"scheme": "alibi", "fire_c": 0.5}, "fire_c is a setting of scheme 'fire' only"),
]


@pytest.mark.parametrize("kw, match", BAD)
def test_bad_settings_name_the_field(kw, match):
    with pytest.raises(ValueError, match=match):
        M.Config(**kw)


def test_bad_positions_are_refused_by_name():
    rope, rand = small("rope"), small("rand_rope", max_position=50)
    tokens = jnp.zeros((2, 10), jnp.int32)
    with pytest.raises(ValueError, match="positions= is for the randomized schemes .* got scheme 'rope'"):
        M.forward(M.init(jax.random.key(0), rope), tokens, rope, positions=jnp.zeros((2, 10), jnp.int32))
    params = M.init(jax.random.key(0), rand)
    with pytest.raises(ValueError, match="draws its positions at random: pass key="):
        M.forward(params, tokens, rand)
    with pytest.raises(ValueError, match=r"positions must have the tokens' shape \(2, 10\), got \(1, 10\)"):
        M.forward(params, tokens, rand, positions=jnp.zeros((1, 10), jnp.int32))
    with pytest.raises(ValueError, match="length 60 cannot be drawn from max_position = 50"):
        M.forward(params, jnp.zeros((1, 60), jnp.int32), rand, key=jax.random.key(0))
    with pytest.raises(ValueError, match="draw_positions is for the randomized schemes"):
        M.draw_positions(jax.random.key(0), 1, 4, rope)


def test_unknown_scheme_lists_the_new_ones_too():
    with pytest.raises(ValueError, match="'rand_alibi', 'fire', got 'cope'"):
        M.check_scheme("cope")
