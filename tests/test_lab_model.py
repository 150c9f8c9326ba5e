"""posenc_helpers.lab: every positional piece against the course's helpers and literal loops, plus bad input.

The model's three scheme functions must equal the course's own helpers:
``rotate_qk`` against ``rope`` and the literal loop, the sinusoidal input
against ``sinusoidal``, the ALiBi bias against ``alibi_bias`` and a literal
loop, the test-time frequencies against ``scaled_frequencies``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal import literal_alibi_slopes, literal_pe, literal_rope
from literal_lab import literal_forward, literal_weights

from posenc_helpers import alibi_bias, frequencies, lab, rope, scaled_frequencies, sinusoidal, yarn_attention_factor
from posenc_helpers.lab import model as M
from posenc_helpers.lab.tasks import make_batch

jax.config.update("jax_enable_x64", False)


def tiny(scheme, **kw):
    return M.Config(scheme=scheme, d_model=16, heads=2, layers=1, train_len=8, **kw)


#: lab.train's settings for a tiny model (one layer, width 16, L = 8, three steps). The lab's other tests and
#: doctests train the same, so each scheme's training program is compiled once per session.
TINY = {"train_len": 8, "d_model": 16, "heads": 2, "layers": 1, "steps": 3}


# --- the scheme switch equals the course's helpers -------------------------------------------------


@settings(max_examples=10, deadline=None)  # each new shape compiles JAX's operations anew: 10 shapes, not 25
@given(T=st.integers(1, 12), half=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_rotate_qk_is_rope_at_each_position(T, half, seed):
    x = np.random.default_rng(seed).normal(size=(2, 3, T, 2 * half)).astype(np.float32)
    q, k = M.rotate_qk(x, 2 * x, frequencies(2 * half))
    want = rope(x.astype(np.float64), np.arange(T)[:, None].squeeze(-1))
    np.testing.assert_allclose(np.asarray(q), want, atol=2e-5)
    np.testing.assert_allclose(np.asarray(k), 2 * want, atol=4e-5)


def test_rotate_qk_matches_the_literal_loop():
    x = np.random.default_rng(1).normal(size=(1, 1, 5, 6)).astype(np.float32)
    q, _ = M.rotate_qk(x, x, frequencies(6))
    for t in range(5):
        np.testing.assert_allclose(np.asarray(q)[0, 0, t], literal_rope(x[0, 0, t].tolist(), t), atol=2e-5)


def test_rope_scores_depend_only_on_distance():
    rng = np.random.default_rng(2)
    q = np.broadcast_to(rng.normal(size=8), (1, 1, 10, 8)).astype(np.float32)
    k = np.broadcast_to(rng.normal(size=8), (1, 1, 10, 8)).astype(np.float32)
    rq, rk = M.rotate_qk(q, k, frequencies(8))
    score = np.einsum("id,jd->ij", np.asarray(rq)[0, 0], np.asarray(rk)[0, 0])
    for d in range(-3, 4):
        assert np.ptp(np.diagonal(score, d)) < 1e-4


def test_sinusoidal_scheme_adds_the_course_table():
    config = tiny("sinusoidal")
    x = jnp.zeros((1, 7, 16))
    got = np.asarray(M.add_positions(x, {}, config))[0]
    np.testing.assert_allclose(got, sinusoidal(np.arange(7), 16), atol=1e-6)
    for t in (0, 3, 6):
        np.testing.assert_allclose(got[t], literal_pe(t, 16), atol=1e-6)


def test_learned_scheme_adds_its_rows_and_stops_at_its_table():
    config = tiny("learned")
    params = M.init(jax.random.key(0), config)
    x = jnp.zeros((1, 8, 16))
    np.testing.assert_allclose(np.asarray(M.add_positions(x, params, config))[0], np.asarray(params["pos"]))
    with pytest.raises(ValueError, match=r"8 rows .*length 9"):
        M.add_positions(jnp.zeros((1, 9, 16)), params, config)


def test_alibi_bias_is_the_course_bias_and_the_literal_formula():
    config = tiny("alibi")
    logits = jnp.zeros((1, 2, 6, 6))
    got = np.asarray(M.bias_logits(logits, config))[0]
    np.testing.assert_allclose(got, alibi_bias(6, 2), atol=1e-7)
    slopes = literal_alibi_slopes(2)
    for h in range(2):
        for i in range(6):
            for j in range(i + 1):
                assert got[h, i, j] == pytest.approx(-slopes[h] * (i - j), abs=1e-7)


@pytest.mark.parametrize("scheme", ["none", "learned", "sinusoidal", "rope"])
def test_other_schemes_leave_logits_alone(scheme):
    logits = jnp.ones((1, 2, 3, 3))
    assert np.array_equal(np.asarray(M.bias_logits(logits, tiny(scheme))), np.ones((1, 2, 3, 3)))


def test_none_and_rope_add_nothing_at_the_input():
    x = jnp.ones((1, 5, 16))
    for scheme in ("none", "rope", "alibi"):
        assert np.array_equal(np.asarray(M.add_positions(x, {}, tiny(scheme))), np.ones((1, 5, 16)))


# --- attention against a literal loop --------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["none", "rope", "alibi"])
def test_attention_weights_match_a_literal_loop(scheme):
    config = tiny(scheme)
    params = M.init(jax.random.key(3), config)
    block = params["blocks"][0]
    x = np.random.default_rng(4).normal(size=(1, 6, 16)).astype(np.float32)
    _, weights = M.attention(jnp.asarray(x), block, config)
    want = literal_weights(x[0].astype(np.float64), np.asarray(block["qkv"], np.float64), config)
    np.testing.assert_allclose(np.asarray(weights)[0], want, atol=2e-5)


def test_attention_is_causal_and_rows_sum_to_one():
    config = tiny("rope")
    params = M.init(jax.random.key(0), config)
    tokens = np.arange(8) % 16
    run = lab.Run("rope", "prev", 8, params, np.zeros(1), config, 0, 1)
    maps = lab.attention(run, tokens)
    assert maps.shape == (1, 2, 8, 8)
    np.testing.assert_allclose(maps.sum(-1), 1.0, atol=1e-5)
    assert np.all(np.triu(maps, 1) == 0)


# --- test-time scaling uses the course's scaled frequencies ----------------------------------------


@pytest.mark.parametrize("method", ["pi", "ntk", "yarn"])
def test_rope_scaling_uses_scaled_frequencies(method):
    config = M.Config(scheme="rope", d_model=64, heads=4, train_len=32)
    run = lab.Run("rope", "prev", 32, None, np.zeros(1), config, 0, 1)
    omega, scale = lab.rope_scaling(run, method, 4)
    lab_ramp = {"beta_fast": 4.0, "beta_slow": 1.0} if method == "yarn" else {}  # YaRN's default: the lab's ramp
    want = scaled_frequencies(16, 10000.0, method, 4, original_max_position=32, **lab_ramp)
    np.testing.assert_array_equal(omega, want)
    assert scale == (yarn_attention_factor(4) ** 2 if method == "yarn" else 1.0)
    if method == "pi":
        np.testing.assert_allclose(omega, frequencies(16) / 4)


def test_yarn_thresholds_reach_the_course_helper():
    # beta_fast/beta_slow go to scaled_frequencies; with β = 4, α = 1 the fastest pair keeps its frequency
    config = M.Config(scheme="rope", d_model=64, heads=4, train_len=32)
    run = lab.Run("rope", "prev", 32, None, np.zeros(1), config, 0, 1)
    omega, scale = lab.rope_scaling(run, "yarn", 4, beta_fast=4.0, beta_slow=1.0)
    want = scaled_frequencies(16, 10000.0, "yarn", 4, original_max_position=32, beta_fast=4.0, beta_slow=1.0)
    np.testing.assert_array_equal(omega, want)
    assert scale == yarn_attention_factor(4) ** 2
    llama, _ = lab.rope_scaling(run, "yarn", 4, beta_fast=32.0, beta_slow=1.0)  # the paper's, for LLaMA
    assert omega[0] == frequencies(16)[0] and llama[0] < 0.9 * frequencies(16)[0]
    for method in ("pi", None):
        with pytest.raises(ValueError, match="YaRN's thresholds"):
            lab.rope_scaling(run, method, 4, beta_fast=4.0)


def test_evaluate_passes_yarn_thresholds_to_the_model():
    config = tiny("rope")
    params = M.init(jax.random.key(8), config)
    run = lab.Run("rope", "prev", 8, params, np.zeros(1), config, 0, 1)
    got = lab.evaluate(run, [16], method="yarn", beta_fast=4.0, beta_slow=1.0)["loss"][0]
    # by hand: the course's YaRN frequencies at s = 2 with (α, β) = (1, 4), temperature (0.1 ln 2 + 1)²
    omega = scaled_frequencies(8, 10000.0, "yarn", 2, original_max_position=8, beta_fast=4.0, beta_slow=1.0)
    tokens, target, mask = (np.asarray(a) for a in lab.test_batch("prev", 16))
    logits = np.asarray(M.forward(params, tokens, config, omega=omega, logit_scale=(0.1 * math.log(2) + 1) ** 2))
    logp = logits - logits.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, target[..., None], -1)[..., 0]
    np.testing.assert_allclose(got, (nll * mask).sum() / mask.sum(), rtol=1e-5)
    assert abs(got - lab.evaluate(run, [16], method="yarn", beta_fast=32.0, beta_slow=1.0)["loss"][0]) > 1e-4


TOKENS = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])


@pytest.mark.parametrize("omega", [None, "pi", "ntk", "odd"])
def test_forward_with_omega_matches_logits_by_hand(omega):
    # forward(..., omega=w) must rotate pair k of q_i, k_j by i·w_k, j·w_k: against the literal model
    config = tiny("rope")
    params = M.init(jax.random.key(5), config)
    w = {
        None: None,
        "pi": scaled_frequencies(8, 10000.0, "pi", 4, original_max_position=8),
        "ntk": scaled_frequencies(8, 10000.0, "ntk", 4, original_max_position=8),
        "odd": np.array([2.5, 0.9, 0.4, 0.05]),
    }[omega]
    got = np.asarray(M.forward(params, jnp.asarray(TOKENS[None]), config, omega=w))[0]
    want = literal_forward(params, TOKENS, config, omega=w)[0]
    np.testing.assert_allclose(got, want, atol=2e-4)
    if w is not None:  # and the rescaling matters: the default frequencies give other logits
        assert np.abs(want - literal_forward(params, TOKENS, config)[0]).max() > 1e-2


@pytest.mark.parametrize("scheme", ["rope", "none", "alibi"])
@pytest.mark.parametrize("scale", [0.5, 1.7])
def test_forward_with_logit_scale_matches_logits_by_hand(scheme, scale):
    # forward(..., logit_scale=c) multiplies every score q·k/√head_dim by c (before ALiBi's bias)
    config = M.Config(scheme=scheme, d_model=16, heads=2, layers=1, train_len=8)
    params = M.init(jax.random.key(6), config)
    got = np.asarray(M.forward(params, jnp.asarray(TOKENS[None]), config, logit_scale=scale))[0]
    want = literal_forward(params, TOKENS, config, logit_scale=scale)[0]
    np.testing.assert_allclose(got, want, atol=2e-4)
    assert np.abs(want - np.asarray(M.forward(params, jnp.asarray(TOKENS[None]), config))[0]).max() > 1e-2


@pytest.mark.parametrize("scheme", M.SCHEMES)
def test_forward_matches_the_literal_model_for_every_scheme(scheme):
    # the whole model, input positions included, against tests/literal_lab.py, at the training length
    config = M.Config(scheme=scheme, d_model=16, heads=2, layers=2, train_len=10)
    params = M.init(jax.random.key(7), config)
    if "pos" in params:  # a learned table big enough to matter (it starts at N(0, 0.02²))
        params["pos"] = jax.random.normal(jax.random.key(8), params["pos"].shape)
    logits, maps = M.forward(params, jnp.asarray(TOKENS[None]), config, return_attention=True)
    want_logits, want_maps = literal_forward(params, TOKENS, config)
    np.testing.assert_allclose(np.asarray(maps)[:, 0], want_maps, atol=3e-5)
    np.testing.assert_allclose(np.asarray(logits)[0], want_logits, atol=3e-4)


def test_the_literal_model_tells_the_schemes_apart():
    # the check above could not pass if the schemes computed alike: each gives other logits here
    params = M.init(jax.random.key(7), M.Config(scheme="none", d_model=16, heads=2, layers=2, train_len=10))
    got = {s: literal_forward(params, TOKENS, M.Config(scheme=s, d_model=16, heads=2, layers=2, train_len=10))[0]
           for s in ("none", "sinusoidal", "rope", "alibi", "rope_nope", "irope")}
    names = list(got)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert np.abs(got[a] - got[b]).max() > 1e-3, (a, b)


# --- tasks against literal loops --------------------------------------------------------------------


@pytest.mark.parametrize("task, back", [("prev", 1), ("back3", 3)])
def test_k_back_targets(task, back):
    tokens, target, mask = (np.asarray(a) for a in make_batch(task, jax.random.key(0), batch=3, length=10, vocab=16))
    for b in range(3):
        for t in range(10):
            assert mask[b, t] == (t >= back)
            if t >= back:
                assert target[b, t] == tokens[b, t - back]


def test_first_token_targets():
    tokens, target, mask = (np.asarray(a) for a in make_batch("first", jax.random.key(1), batch=2, length=9, vocab=16))
    for b in range(2):
        for t in range(9):
            assert mask[b, t] == (t >= 1)
            assert target[b, t] == tokens[b, 0]


def test_recall_targets_are_the_values_of_earlier_keys():
    tokens, target, mask = (np.asarray(a) for a in make_batch("recall", jax.random.key(2), batch=2, length=40, vocab=32))
    for b in range(2):
        pairs = {int(tokens[b, 2 * p]): int(tokens[b, 2 * p + 1]) for p in range(8)}  # RECALL_PAIRS = 8
        assert len(pairs) == 8 and all(k < 16 <= v for k, v in pairs.items())
        for t in range(16, 40):
            assert mask[b, t] and target[b, t] == pairs[int(tokens[b, t])]


# --- bad input ---------------------------------------------------------------------------------------


def test_unknown_scheme_and_task_list_the_valid_names():
    names = ("'none', 'learned', 'sinusoidal', 'rope', 'alibi', 't5', 'rope_nope', 'irope', "
             "'rand_sinusoidal', 'rand_learned', 'rand_rope', 'rand_alibi', 'fire'")
    with pytest.raises(ValueError, match=f"{names}, got 'xpos'"):
        lab.train("xpos", "prev")
    with pytest.raises(ValueError, match="'prev', 'first', 'back3', 'recall'"):
        lab.train("rope", "copy")


@pytest.mark.parametrize("kw, name", [({"steps": 0}, "steps"), ({"steps": 2.5}, "steps"), ({"train_len": -4}, "train_len"),
                                      ({"train_len": 16.0}, "train_len"), ({"seed": -1}, "seed")])
def test_bad_numbers_name_the_argument(kw, name):
    with pytest.raises((ValueError, TypeError), match=name):
        lab.train("rope", "prev", **kw)


def test_bad_lengths_name_the_argument():
    config = tiny("none")
    run = lab.Run("none", "prev", 8, M.init(jax.random.key(0), config), np.zeros(1), config, 0, 1)
    for bad in (0, -3, 4.5, [8, 0]):
        with pytest.raises((ValueError, TypeError), match="length"):
            lab.accuracy(run, bad)


def test_odd_head_dim_with_rope_is_refused():
    with pytest.raises(ValueError, match="head dimension .* even"):
        M.Config(scheme="rope", d_model=12, heads=4)
    M.Config(scheme="alibi", d_model=12, heads=4)  # fine without RoPE


def test_learned_past_its_table_cannot_run():
    run = lab.train("learned", "prev", progress=False, **TINY)
    acc = lab.accuracy(run, [8, 16])
    assert not np.isnan(acc[0]) and np.isnan(acc[1])
    with pytest.raises(ValueError, match=r"8 rows .*length 16"):
        lab.attention(run, np.zeros(16, dtype=int))


def test_progress_false_prints_nothing(capsys):
    lab.train("none", "prev", progress=False, cache=False, **TINY)  # trained, not read from the cache
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_progress_true_shows_a_bar(capsys):
    lab.train("none", "prev", progress=True, cache=False, **TINY)  # a model read from the cache shows no bar
    assert "none on prev" in capsys.readouterr().err


def test_same_seed_same_losses_on_one_machine():
    # cache=False: b must be trained again, not read back from the model cache that a filled
    a = lab.train("rope", "prev", seed=3, progress=False, cache=False, **TINY)
    b = lab.train("rope", "prev", seed=3, progress=False, cache=False, **TINY)
    c = lab.train("rope", "prev", seed=4, progress=False, cache=False, **TINY)
    assert np.array_equal(a.losses, b.losses)
    assert not np.array_equal(a.losses, c.losses)
    assert np.array_equal(lab.accuracy(a, [8, 16]), lab.accuracy(b, [8, 16]))
