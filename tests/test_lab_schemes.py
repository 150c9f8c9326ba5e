"""posenc_helpers.lab.model's "t5" and "rope_nope" schemes against the literal model, and their settings.

The literal model (tests/literal_lab.py, the lab's one oracle) computes every
score one (head, query, key) at a time, straight from the formulas: T5's bias
as table[t5_bucket(j − i), h] (the course's helper, unidirectional), RoPE's
rotation on the RoPE layers only, and Llama 4's query temperature
1 + attn_scale·ln(1 + ⌊(i + 1)/floor_scale⌋) per query. Here it runs at a
length past the training length (T = 40 > L = 32), so the past-L path is
covered.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal_lab import literal_forward

from posenc_helpers.lab import model as M
from posenc_helpers.lab.train import fit

T_PAST = 40  # past the training length 32


def small(scheme, **kw):
    return M.Config(scheme=scheme, d_model=16, heads=2, layers=2, train_len=32, **kw)


def _random_params(config, seed):
    """Initial parameters with a t5 table large enough to matter (the initial one is small)."""
    params = M.init(jax.random.key(seed), config)
    if config.scheme == "t5":
        params["t5_bias"] = jax.random.normal(jax.random.key(seed + 100), params["t5_bias"].shape) * 2.0
    return params


CASES = {
    "t5": {},
    "rope_nope": {},
    "rope_nope, NoPE first": {"nope_layers": (0,)},
    "rope_nope with temperature": {"query_temperature": True, "floor_scale": 8.0, "attn_scale": 0.5},
    "irope": {},  # chunks of W = L = 32: T = 40 crosses into a second chunk
    "irope, chunks of 12": {"rope_window": 12},
    "irope, sliding window of 12": {"rope_mask": "sliding", "rope_window": 12},
    "irope, full mask, NoPE first": {"rope_mask": "full", "nope_layers": (0,)},
}


def _scheme(case):
    return "t5" if case == "t5" else "irope" if case.startswith("irope") else "rope_nope"


@pytest.mark.parametrize("case", list(CASES))
def test_forward_matches_the_literal_model_past_the_training_length(case):
    config = small(_scheme(case), **CASES[case])
    params = _random_params(config, 1)
    tokens = np.random.default_rng(2).integers(0, config.vocab, T_PAST)
    logits, maps = M.forward(params, jnp.asarray(tokens)[None], config, return_attention=True)
    want_logits, want_maps = literal_forward(params, tokens, config)
    np.testing.assert_allclose(np.asarray(maps)[:, 0], want_maps, atol=3e-5)
    np.testing.assert_allclose(np.asarray(logits)[0], want_logits, atol=3e-4)


def test_the_literal_model_tells_the_layers_apart():
    # the check above could not pass with RoPE on every layer, or on none: those give other weights
    config = small("rope_nope")
    params = _random_params(config, 1)
    tokens = np.random.default_rng(2).integers(0, config.vocab, 12)
    _, maps = M.forward(params, jnp.asarray(tokens)[None], config, return_attention=True)
    for other in (small("rope"), small("none")):
        _, wrong = literal_forward(params, tokens, other)
        assert np.abs(np.asarray(maps)[1, 0] - wrong[1]).max() > 1e-2


def test_rope_nope_rotates_exactly_its_rope_layers():
    # layer 0 of rope_nope is a RoPE layer, layer 1 a NoPE layer: each equals the pure scheme's layer
    config = small("rope_nope")
    params = _random_params(config, 3)
    x = jnp.asarray(np.random.default_rng(4).normal(size=(1, 9, 16)), jnp.float32)
    block = params["blocks"][0]
    for layer, pure in ((0, "rope"), (1, "none")):
        _, got = M.attention(x, block, config, layer=layer)
        _, want = M.attention(x, block, small(pure), layer=layer)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-6)


def test_rope_nope_ignores_test_time_frequencies():
    # the lab's evaluation passes placeholder zeros as omega for every scheme but "rope"
    config = small("rope_nope")
    params = _random_params(config, 5)
    tokens = jnp.asarray(np.arange(10) % 16)[None]
    a = M.forward(params, tokens, config)
    b = M.forward(params, tokens, config, omega=np.zeros(config.head_dim // 2))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_t5_bias_is_the_table_at_each_bucket():
    config = small("t5")
    table = np.arange(config.t5_buckets * 2, dtype=np.float32).reshape(-1, 2)
    got = np.asarray(M.bias_logits(jnp.zeros((1, 2, T_PAST, T_PAST)), config, table))[0]
    for h in range(2):
        for i in range(T_PAST):
            for j in range(i + 1):
                d = i - j
                # unidirectional: 8 exact buckets, then 8 + ⌊ln(d/8)/ln(32/8)·8⌋ capped at 15
                bucket = d if d < 8 else min(15, 8 + int(math.log(d / 8) / math.log(4) * 8))
                assert got[h, i, j] == table[bucket, h]
    with pytest.raises(ValueError, match="t5_bias"):
        M.bias_logits(jnp.zeros((1, 2, 3, 3)), config)


def test_t5_defaults_train_every_bucket_and_the_last_one_holds_27_on():
    config = M.Config(scheme="t5")
    seen = set(M.t5_bucket_grid(32, config)[np.tril_indices(32)].tolist())
    assert seen == set(range(16))
    last = M.t5_bucket_grid(300, config)[299]
    assert np.array_equal(np.flatnonzero(last == 15), np.arange(0, 299 - 27 + 1))  # distances 27 … 299


@settings(max_examples=10, deadline=None)  # each new shape compiles JAX's operations anew: 10 shapes, not 20
@given(T=st.integers(2, 24), shift=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_t5_bias_depends_only_on_the_distance(T, shift, seed):
    # bias[i, j] for a sequence of T tokens is the bias[i + s, j + s] of a longer one: the bias sees only i − j
    config = small("t5")
    table = np.random.default_rng(seed).normal(size=(config.t5_buckets, 2)).astype(np.float32)
    n = T + shift
    short = np.asarray(M.bias_logits(jnp.zeros((1, 2, T, T)), config, table))[0]
    long = np.asarray(M.bias_logits(jnp.zeros((1, 2, n, n)), config, table))[0]
    tri = np.tril_indices(T)
    np.testing.assert_array_equal(short[:, tri[0], tri[1]], long[:, tri[0] + shift, tri[1] + shift])


def test_training_moves_the_t5_table():
    config = M.Config(scheme="t5", d_model=16, heads=2, layers=1, train_len=16)
    params, _, start = fit(config, "prev", seed=0, steps=20, batch=8, lr=3e-3, progress=False, return_initial=True)
    # compiled once (op by op, the gradient would compile every operation of the model anew)
    grad = jax.jit(jax.grad(lambda p: M.loss_fn(p, *_batch(config), config)))(start)["t5_bias"]
    assert np.abs(np.asarray(grad)).max() > 0
    assert np.abs(np.asarray(params["t5_bias"]) - np.asarray(start["t5_bias"])).max() > 1e-3


def _batch(config):
    from posenc_helpers.lab.tasks import make_batch

    return make_batch("prev", jax.random.key(0), batch=4, length=config.train_len, vocab=config.vocab)


# --- the query temperature ---------------------------------------------------------------------


@pytest.mark.parametrize("floor_scale", [4.0, 32.0, 7.5])
def test_temperature_is_one_before_floor_scale_minus_one(floor_scale):
    config = small("rope_nope", query_temperature=True, floor_scale=floor_scale)
    factor = M.query_temperature(100, config)
    for t in range(100):
        want = 1.0 + 0.1 * math.log(1.0 + math.floor((t + 1) / floor_scale))
        assert factor[t] == pytest.approx(want, rel=1e-12)
        if t < floor_scale - 1:
            assert factor[t] == 1.0
    assert factor[math.ceil(floor_scale - 1)] > 1.0


def test_temperature_off_leaves_the_nope_layer_alone():
    config = small("rope_nope")
    warm = dataclasses.replace(config, query_temperature=True, floor_scale=2.0)
    params = _random_params(config, 6)
    x = jnp.asarray(np.random.default_rng(7).normal(size=(1, 12, 16)), jnp.float32)
    _, plain = M.attention(x, params["blocks"][1], config, layer=1)
    _, pure = M.attention(x, params["blocks"][1], small("none"), layer=1)
    _, hot = M.attention(x, params["blocks"][1], warm, layer=1)
    np.testing.assert_array_equal(np.asarray(plain), np.asarray(pure))
    assert np.abs(np.asarray(hot) - np.asarray(plain))[0, :, 1:].max() > 1e-3  # positions 1, 2, …: factor > 1


# --- settings ----------------------------------------------------------------------------------


def test_defaults_are_filled_in_and_kept_by_replace():
    c = M.Config(scheme="rope_nope")
    assert (c.nope_layers, c.query_temperature, c.floor_scale, c.attn_scale) == ((1,), False, 32.0, 0.1)
    t = M.Config(scheme="t5", train_len=20)
    assert (t.t5_buckets, t.t5_max_distance) == (16, 20)
    assert dataclasses.replace(t, train_len=64).t5_max_distance == 20
    assert M.Config(scheme="rope_nope", layers=4, nope_layers=[3, 1]).nope_layers == (1, 3)
    assert M.Config().pos_std == 0.02
    i = M.Config(scheme="irope", train_len=20)
    assert (i.nope_layers, i.query_temperature, i.rope_mask, i.rope_window) == ((1,), True, "chunked", 20)
    assert M.Config(scheme="irope", query_temperature=False).query_temperature is False
    assert dataclasses.replace(i, rope_mask="sliding").rope_window == 20


@settings(max_examples=60, deadline=None)
@given(T=st.integers(1, 40), W=st.integers(1, 40), mask=st.sampled_from(M.ROPE_MASKS), layer=st.integers(0, 1))
def test_rope_layer_mask_counts_the_keys_each_query_reads(T, W, mask, layer):
    # query i reads i % W + 1 keys in chunks, min(i + 1, W) in a sliding window, i + 1 with the full mask;
    # the NoPE layer (1) and every other scheme read i + 1; the keys read are always the most recent ones
    config = M.Config(scheme="irope", layers=2, rope_mask=mask, rope_window=W)
    keep = M.rope_layer_mask(T, config, layer)
    i = np.arange(T)
    want = {"chunked": i % W + 1, "sliding": np.minimum(i + 1, W), "full": i + 1}[mask] if layer == 0 else i + 1
    np.testing.assert_array_equal(keep.sum(1), want)
    for i_query, (row, n) in enumerate(zip(keep, want, strict=True)):
        assert row.nonzero()[0].tolist() == list(range(i_query + 1 - n, i_query + 1))  # the n keys up to itself
    np.testing.assert_array_equal(M.rope_layer_mask(T, M.Config(scheme="rope_nope"), 0), np.tri(T, dtype=bool))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"scheme": "rope_nope", "nope_layers": ()}, "nope_layers must name at least one layer"),
        ({"scheme": "rope_nope", "nope_layers": (0, 1)}, "nope_layers must leave at least one RoPE layer"),
        ({"scheme": "rope_nope", "nope_layers": (2,)}, r"nope_layers must be layer indices in 0 … 1, got \(2,\)"),
        ({"scheme": "rope_nope", "nope_layers": (-1,)}, "nope_layers must be layer indices"),
        ({"scheme": "rope_nope", "floor_scale": 0}, "floor_scale must be positive"),
        ({"scheme": "rope_nope", "attn_scale": -0.1}, "attn_scale must be zero or positive"),
        ({"scheme": "rope", "nope_layers": (1,)}, "nope_layers is a setting of scheme 'rope_nope' or 'irope' only"),
        ({"scheme": "none", "query_temperature": True}, "query_temperature is a setting of scheme 'rope_nope' or 'irope'"),
        ({"scheme": "rope", "floor_scale": 8.0}, "floor_scale is a setting of scheme 'rope_nope' or 'irope'"),
        ({"scheme": "alibi", "t5_buckets": 16}, "t5_buckets is a setting of scheme 't5' only"),
        ({"scheme": "t5", "t5_buckets": 1}, "t5_buckets must be at least 2"),
        ({"scheme": "t5", "t5_buckets": 16, "t5_max_distance": 8}, "t5_max_distance must exceed the 8 exact"),
        ({"scheme": "learned", "pos_std": 0.0}, "pos_std must be positive"),
        ({"scheme": "rope_nope", "d_model": 18, "heads": 2}, "head dimension d_model/heads must be even"),
        ({"scheme": "irope", "rope_mask": "window"}, "rope_mask must be one of 'chunked', 'sliding', 'full', got 'window'"),
        ({"scheme": "irope", "rope_window": 0}, "rope_window must be a positive integer, got 0"),
        ({"scheme": "rope_nope", "rope_mask": "chunked"}, "rope_mask is a setting of scheme 'irope' only"),
        ({"scheme": "rope", "rope_window": 0}, "rope_window is a setting of scheme 'irope' only, got rope_window=0"),
    ],
)
def test_bad_settings_raise_a_value_error_naming_the_field(kw, match):
    with pytest.raises(ValueError, match=match):
        M.Config(**{"layers": 2, **kw})


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"scheme": "rope_nope", "nope_layers": (0.5,)}, "nope_layers must be a tuple of integer layer indices"),
        ({"scheme": "rope_nope", "nope_layers": 1}, "nope_layers must be a tuple"),
        ({"scheme": "rope_nope", "query_temperature": "yes"}, "query_temperature must be True or False"),
        ({"scheme": "t5", "t5_max_distance": 2.5}, "t5_max_distance must be a positive integer"),
    ],
)
def test_bad_types_raise_a_type_error_naming_the_field(kw, match):
    with pytest.raises(TypeError, match=match):
        M.Config(**kw)


def test_learned_table_starts_at_pos_std():
    for std in (0.02, 1.0):
        table = np.asarray(M.init(jax.random.key(0), M.Config(scheme="learned", pos_std=std))["pos"])
        assert abs(table.std() / std - 1) < 0.05
    a = M.init(jax.random.key(0), M.Config(scheme="learned", pos_std=1.0))["pos"]
    b = M.init(jax.random.key(0), M.Config(scheme="learned", pos_std=0.02))["pos"]
    np.testing.assert_allclose(np.asarray(b), 0.02 * np.asarray(a), rtol=1e-6)


def test_irope_with_the_full_mask_and_no_temperature_is_rope_nope():
    # the mask is the only difference the chunks make: with "full" and no temperature irope computes rope_nope,
    # and with chunks it reads other keys past W (so the chunked case above could not pass as rope_nope)
    params = _random_params(small("rope_nope"), 8)
    tokens = jnp.asarray(np.random.default_rng(9).integers(0, 16, T_PAST))[None]
    plain = M.forward(params, tokens, small("rope_nope"))
    same = M.forward(params, tokens, small("irope", rope_mask="full", query_temperature=False))
    chunked = M.forward(params, tokens, small("irope", query_temperature=False))
    np.testing.assert_array_equal(np.asarray(same), np.asarray(plain))
    np.testing.assert_array_equal(np.asarray(chunked)[0, :32], np.asarray(plain)[0, :32])  # inside the first chunk
    assert np.abs(np.asarray(chunked) - np.asarray(plain))[0, 32:].max() > 1e-3
