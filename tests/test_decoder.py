"""The numpy decoder block: against a literal loop implementation, cached decode against the full pass, the bugs."""

from __future__ import annotations

import literal_decoder
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import decoder


@pytest.mark.parametrize("family", decoder.FAMILIES)
@pytest.mark.parametrize("sinks", [False, True])
def test_forward_matches_the_literal_loops(family, sinks):
    spec = decoder.tiny_spec(family, sinks=sinks, window=4)
    weights = decoder.random_weights(spec, seed=3)
    ids = np.random.default_rng(1).integers(0, spec.vocab, 9)
    got = decoder.forward(spec, weights, ids[None])[0]
    want = literal_decoder.logits(spec, weights, ids.tolist())
    assert np.abs(got - want).max() < 1e-9


@settings(max_examples=12, deadline=None)
@given(family=st.sampled_from(decoder.FAMILIES), window=st.integers(2, 9), length=st.integers(2, 16),
       pads=st.integers(0, 5), prefill=st.integers(1, 16), seed=st.integers(0, 2**16), sinks=st.booleans())
def test_cached_decode_gives_the_full_pass_logits_with_rolling_windows_and_left_padding(
    family, window, length, pads, prefill, seed, sinks
):
    spec = decoder.tiny_spec(family, window=window, sinks=sinks)
    weights = decoder.random_weights(spec, seed=seed)
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, spec.vocab, (2, length + pads))
    mask = np.ones_like(ids)
    mask[1, :pads] = 0
    full = decoder.forward(spec, weights, ids, attention_mask=mask)
    step = decoder.decode(spec, weights, ids, attention_mask=mask, prefill=min(prefill, length + pads))
    assert np.array_equal(np.isnan(full), np.isnan(step)) and np.isnan(full[1, :pads]).all()
    assert np.nanmax(np.abs(full - step)) < 1e-9
    # the padded row is the same sequence alone, unpadded
    alone = decoder.forward(spec, weights, ids[1:, pads:])
    assert np.abs(alone[0] - full[1, pads:]).max() < 1e-9


def test_the_classic_bugs_cost_what_they_cost():
    spec = decoder.tiny_spec("qwen3", window=4)
    weights = decoder.random_weights(spec, seed=0)
    ids = np.random.default_rng(0).integers(0, spec.vocab, (2, 14))
    mask = np.ones_like(ids)
    mask[1, :3] = 0
    full = decoder.forward(spec, weights, ids, attention_mask=mask)
    err = {b: np.nanmax(np.abs(decoder.decode(spec, weights, ids, attention_mask=mask, prefill=2, bug=b) - full))
           for b in decoder.BUGS}
    assert err["rotate_at_read"] > 0.1 and err["positions_from_cache"] > 0.1
    # RoPE sees only m - n: one shift of every position in a row changes no score, so ignoring left padding
    # costs nothing but rounding here (it would not with absolute positions)
    assert err["ignore_padding"] < 1e-9
    # positions from the cache are right until the sliding layer's cache stops growing (window - 1 = 3 keys)
    early = decoder.decode(spec, weights, ids[:1, :4], prefill=1, bug="positions_from_cache")
    assert np.abs(early - full[:1, :4]).max() < 1e-9


def test_a_sink_of_minus_infinity_is_no_sink_and_a_large_window_is_full_attention():
    spec = decoder.tiny_spec("gemma3_text", sinks=True, window=100)
    plain = decoder.tiny_spec("gemma3_text", window=100)
    weights = decoder.random_weights(spec, seed=5)
    for name in weights:
        if name.endswith("sinks"):
            weights[name] = np.full_like(weights[name], -np.inf)
    ids = np.arange(12)[None] % plain.vocab
    assert np.abs(decoder.forward(spec, weights, ids) - decoder.forward(plain, weights, ids)).max() < 1e-12
    assert all(w is None or w >= 12 for w in plain.windows)


def test_bad_input_is_refused_by_name():
    spec = decoder.tiny_spec("qwen3")
    weights = decoder.random_weights(spec)
    with pytest.raises(ValueError, match="input_ids must lie in"):
        decoder.forward(spec, weights, np.array([[0, 99]]))
    with pytest.raises(ValueError, match="left padding"):
        decoder.forward(spec, weights, np.array([[1, 2]]), attention_mask=np.array([[1, 0]]))
    with pytest.raises(ValueError, match="bug must be"):
        decoder.decode(spec, weights, np.array([[1, 2]]), bug="nope")
    with pytest.raises(ValueError, match="prefill must be"):
        decoder.decode(spec, weights, np.array([[1, 2]]), prefill=3)
    with pytest.raises(ValueError, match="model_type must be one of"):
        decoder.spec_from_config({"model_type": "llama"})
    used = decoder.KVCache.empty(spec, 1)
    decoder.decode(spec, weights, np.array([[1, 2]]), cache=used)
    for bad in (used, decoder.KVCache.empty(spec, 2), "cache"):  # filled; another batch; not a cache
        with pytest.raises(ValueError, match="cache must be an empty KVCache"):
            decoder.decode(spec, weights, np.array([[1, 2]]), cache=bad)


def test_a_given_cache_holds_what_each_layer_keeps():
    spec = decoder.tiny_spec("gemma3_text", window=5, layers=3)  # sliding, sliding, full
    weights = decoder.random_weights(spec, seed=1)
    ids = np.arange(12)[None] % spec.vocab
    cache = decoder.KVCache.empty(spec, 1)
    got = decoder.decode(spec, weights, ids, prefill=3, cache=cache)
    assert np.array_equal(got, decoder.decode(spec, weights, ids, prefill=3))
    # a sliding layer keeps the last W − 1 = 4 keys, at sequence indices 8..11; the full layer all 12
    assert [cache.length(i) for i in range(3)] == [4, 4, 12] and cache.seen == 12
    assert cache.index[0].tolist() == [[8, 9, 10, 11]] and cache.index[2].tolist() == [list(range(12))]
    with pytest.raises(ValueError, match="family must be one of"):
        decoder.tiny_config("llama")
