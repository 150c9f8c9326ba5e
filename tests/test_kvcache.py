"""posenc_helpers.kvcache: every bundled model against a literal count from the raw fields, properties, named errors."""

from __future__ import annotations

import dataclasses

import literal_kvcache as lit
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import kvcache as kc
from posenc_helpers.configs import bundled_configs, bundled_kv_fields, bundled_sources, layer_positions

NAMES = list(bundled_configs("all"))
# contexts around every window the bundled models have (128, 1,024, 4,096, 262,144) and the three
CONTEXTS = [1, 2, 126, 127, 128, 1022, 1023, 1024, 4094, 4095, 4096, 8192, 131072, 262143, 262144, 1048576]


# --- the bundled data -----------------------------------------------------------------------------------------------

def test_every_bundled_model_has_kv_fields_with_a_source():
    raw = lit.raw_models()
    assert list(bundled_kv_fields()) == NAMES == list(raw) and len(NAMES) == 23
    for name, kv in bundled_kv_fields().items():
        assert kv["level"] in ("top", "text_config"), name
        assert set(kv["source"]) == {"repository", "path", "commit"}, name
        if kv["source"]["commit"] is None:  # a Hub repository read through a mirror page: the note gives its address
            assert "https://" in kv["note"] and "no commit" in kv["note"], name
        else:
            assert len(kv["source"]["commit"]) == 40, name
        assert kv["note"] and isinstance(kv["not_found"], list), name
        assert "num_hidden_layers" in kv["fields"] or "n_layer" in kv["fields"], name
        for other in kv["also"]:
            assert {"repository", "path", "commit", "fields", "note"} <= set(other), name
        # the RoPE config (what notebooks 11 and 14 read) holds none of the KV-only keys
        config = raw[name]["config"]
        lang = config.get("text_config", config)
        assert "num_key_value_heads" not in lang and "dtype" not in config and "torch_dtype" not in config, name


def test_kv_fields_agree_with_the_rope_config_where_both_state_a_key():
    for name in NAMES:
        config, kv = kc.bundled_kv_config(name), bundled_kv_fields()[name]
        lang = config.get("text_config", config) if kv["level"] == "text_config" else config
        assert all(lang[k] == x for k, x in kv["fields"].items()), name
        # bundled_configs still returns the RoPE config alone
        assert "num_key_value_heads" not in str(bundled_configs("all")[name]), name


def test_the_sources_of_kv_and_rope_fields_are_the_same_files_where_the_data_says_so():
    for name in NAMES:
        kv, rope = bundled_kv_fields()[name]["source"], bundled_sources("all")[name]
        if kv["repository"] == rope["repository"]:
            assert kv["path"] == rope["path"], name


def test_the_three_models_without_a_dtype_are_named_and_refused():
    missing = [name for name in NAMES if "torch_dtype" in bundled_kv_fields()[name]["not_found"]]
    assert missing == ["GPT-NeoX-20B", "GPT-J-6B", "gpt-oss-20b"]
    for name in missing:
        with pytest.raises(ValueError, match="bytes_per_number="):
            kc.kv_cache(kc.bundled_kv_config(name), 8192)


# --- every bundled model against the literal count ------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_every_bundled_model_agrees_with_the_literal_count(name):
    entry, config = lit.raw_models()[name], kc.bundled_kv_config(name)
    layers, _notes = kc.kv_layers(config)
    size = lit.bytes_per_number(*lit.language_fields(entry))
    for n in CONTEXTS:
        numbers, total = lit.literal_cache(entry, n)
        cache = kc.kv_cache(config, n, bytes_per_number=None if size else 2)
        counted = sum(x.numbers_per_token * t + x.conv_state_numbers + x.recurrent_state_numbers
                      + sum(sum(c.numbers(n)) for c in x.compressed)
                      for x, t in zip(cache.layers, cache.layer_tokens, strict=True))
        assert counted == numbers, (name, n)
        if total is not None:
            assert cache.total_bytes == total == int(kc.kv_bytes(config, [n])[0]), (name, n)
    assert len(layers) == len(lit.layer_plan(lit.language_fields(entry)[0])), name


def test_the_table_rows_agree_with_the_literal_count():
    rows = kc.kv_table()
    assert [r["name"] for r in rows] == NAMES
    for row in rows:
        entry = lit.raw_models()[row["name"]]
        for n in kc.CONTEXTS:
            numbers, total = lit.literal_cache(entry, n)
            assert row["numbers"][n] == numbers and row["bytes"][n] == total, row["name"]
            assert row["bytes_per_token"][n] == (None if total is None else total / n)
    text = kc.kv_table_text()
    assert all(name in text for name in NAMES) and "average per token (cache ÷ n)" in text
    assert "n = 8K" in text and "n = 1M" in text


def test_the_table_marks_contexts_beyond_the_declared_one():
    rows = {r["name"]: r for r in kc.kv_table()}
    assert rows["Llama 2 7B"]["beyond"] == {8192: True, 131072: True, 1048576: True}       # 4,096 declared
    assert rows["Llama 3.1 8B"]["beyond"] == {8192: False, 131072: False, 1048576: True}   # 131,072 declared
    assert rows["Qwen2.5-VL 7B Instruct"]["beyond"][131072]                                # 128,000 declared


# --- the counting rules, each from the transformers code it follows ------------------------------------------------

@pytest.mark.parametrize("window, chunks", [(4, [1] * 10), (4, [10]), (4, [2, 5, 1, 1]), (1024, [3000, 1, 1]),
                                             (2, [1, 1, 1]), (1, [3, 2]), (128, [50, 50, 50, 1])])
def test_a_sliding_layer_holds_what_dynamic_sliding_window_layer_update_keeps(window, chunks):
    # prefill in chunks, then decode: the list transcription of full_key_states[:, :, -W + 1:, :]
    layer = kc.LayerCache(0, "sliding_attention", "sliding", window, True, 2, window - 1 if window > 1 else None)
    assert layer.tokens(sum(chunks)) == lit.sliding_cache_by_updates(window, chunks)


def test_a_window_of_one_keeps_every_token_as_the_slice_does():
    cfg = {"model_type": "mistral", "num_hidden_layers": 2, "num_key_value_heads": 1, "head_dim": 4,
           "sliding_window": 1, "dtype": "float32"}
    assert kc.kv_cache(cfg, 50).layer_tokens == (50, 50)       # full_key_states[:, :, 0:, :]
    assert lit.sliding_cache_by_updates(1, [50]) == 50


def test_deepseek_v3_mla_576_against_40960_from_its_fields():
    fields = bundled_kv_fields()["DeepSeek-V3"]["fields"]
    config = kc.bundled_kv_config("DeepSeek-V3")
    latent = fields["kv_lora_rank"] + fields["qk_rope_head_dim"]
    heads = fields["num_attention_heads"]
    expanded = heads * (fields["qk_nope_head_dim"] + fields["qk_rope_head_dim"]) + heads * fields["v_head_dim"]
    assert (latent, expanded) == (576, 40960)
    for mla, per_token in (("transformers", latent), ("latent", latent), ("expanded", expanded)):
        layers, _ = kc.kv_layers(config, mla=mla)
        assert {x.numbers_per_token for x in layers} == {per_token} and len(layers) == fields["num_hidden_layers"]
        assert kc.kv_cache(config, 1000, mla=mla).total_bytes == 61 * per_token * 1000 * 2
    assert kc.kv_layers(config, mla="expanded")[0][0].cached == "128 heads × (128 + 64) keys + 128 × 128 values"


def test_qwen35_linear_layers_keep_a_fixed_state_counted_from_its_fields():
    f = kc.bundled_kv_config("Qwen3.5 9B")["text_config"]
    layers, _ = kc.kv_layers(kc.bundled_kv_config("Qwen3.5 9B"))
    linear = [x for x in layers if x.kind == "linear"]
    conv = (2 * f["linear_num_key_heads"] * f["linear_key_head_dim"]
            + f["linear_num_value_heads"] * f["linear_value_head_dim"]) * f["linear_conv_kernel_dim"]
    recurrent = f["linear_num_value_heads"] * f["linear_key_head_dim"] * f["linear_value_head_dim"]
    assert len(linear) == 24 and {(x.conv_state_numbers, x.recurrent_state_numbers) for x in linear} == {(conv, recurrent)}
    cache = kc.kv_cache(kc.bundled_kv_config("Qwen3.5 9B"), 10)
    assert cache.state_bytes == 24 * (conv * 2 + recurrent * 4)
    assert cache.total_bytes == cache.state_bytes + 8 * 2 * f["num_key_value_heads"] * f["head_dim"] * 10 * 2


def gemma3n(layers=10, shared=4, window=16, kv_heads=2, head_dim=8):
    return {"model_type": "gemma3n_text", "num_hidden_layers": layers, "num_kv_shared_layers": shared,
            "sliding_window": window, "num_key_value_heads": kv_heads, "head_dim": head_dim, "dtype": "bfloat16"}


def test_gemma3n_shared_layers_cache_nothing_and_read_the_last_of_their_type():
    layers, _ = kc.kv_layers(gemma3n())
    # every 5th layer full: types s s s s f s | s s s f; the last 4 (6 … 9) reuse layer 4 (full) or 5 (sliding)
    assert [x.kind for x in layers] == ["sliding"] * 4 + ["full", "sliding"] + ["shared"] * 4
    assert [x.shares for x in layers[6:]] == [5, 5, 5, 4]
    assert kc.kv_layers({**gemma3n(), "num_kv_shared_layers": 0})[0][9].kind == "full"


def test_gemma3n_without_num_kv_shared_layers_shares_15_as_its_config_class_does():
    cfg = gemma3n(layers=35)
    del cfg["num_kv_shared_layers"]
    layers, notes = kc.kv_layers(cfg)
    assert sum(x.kind == "shared" for x in layers) == 15 and any("num_kv_shared_layers: 15" in n for n in notes)


def test_gemma4_full_layers_use_the_global_head_dim_and_its_kv_heads_with_k_eq_v():
    cfg = {"model_type": "gemma4_text", "num_hidden_layers": 6, "sliding_window": 64, "num_key_value_heads": 4,
           "head_dim": 32, "global_head_dim": 128, "dtype": "bfloat16"}
    layers, _ = kc.kv_layers(cfg)
    assert [x.numbers_per_token for x in layers] == [2 * 4 * 32] * 5 + [2 * 4 * 128]
    layers, _ = kc.kv_layers({**cfg, "attention_k_eq_v": True, "num_global_key_value_heads": 1})
    assert layers[5].numbers_per_token == 2 * 1 * 128      # keys and values both cached, even when v = k
    layers, _ = kc.kv_layers({**cfg, "num_kv_shared_layers": 6})
    assert all(x.kind == "shared" for x in layers)         # every layer "reuse": nothing cached


def test_llama4_chunked_layers_keep_chunk_minus_1_and_its_nope_layers_keep_everything():
    # Llama4TextConfig: every 4th layer NoPE and full attention, the others chunked (attention_chunk_size 8192);
    # DYNAMIC_LAYER_TYPE_MAPPING caches "chunked_attention" in a DynamicSlidingWindowLayer of the chunk size
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 2,
           "head_dim": 16, "rope_theta": 5e5, "dtype": "bfloat16"}
    layers, _ = kc.kv_layers(cfg)
    assert [(x.kind, x.rope, x.holds) for x in layers[:4]] == [("chunked", True, 8191)] * 3 + [("full", False, None)]
    assert kc.kv_cache(cfg, 20000).total_bytes == (6 * 8191 + 2 * 20000) * 2 * 2 * 16 * 2


def test_family_defaults_when_the_config_leaves_a_size_out():
    base = {"num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 8, "dtype": "float32"}
    cases = {"llama": 2 * 8 * 64, "mistral": 2 * 8 * 64, "qwen2": 2 * 32 * 64, "qwen3": 2 * 32 * 128,
             "gpt_oss": 2 * 8 * 64, "olmo3": 2 * 8 * 64, "exaone4": 2 * 32 * 64}
    for model_type, per_token in cases.items():
        layers, notes = kc.kv_layers({**base, "model_type": model_type})
        assert layers[0].numbers_per_token == per_token, model_type
        assert any("num_key_value_heads" in n for n in notes), model_type
    # GPT-J and GPT-NeoX have no grouped-query attention: a stated num_key_value_heads is not read
    gptj = {"model_type": "gptj", "n_layer": 2, "n_head": 4, "n_embd": 256, "rotary_dim": 16, "num_key_value_heads": 1}
    assert kc.kv_layers(gptj)[0][0].numbers_per_token == 2 * 4 * 64


# --- properties ------------------------------------------------------------------------------------------------------

layer_counts = st.integers(1, 24)
windows = st.integers(2, 5000)


@settings(max_examples=40, deadline=None)
@given(layer_counts, st.integers(0, 7), windows, st.integers(1, 16), st.sampled_from([32, 64, 128]),
       st.lists(st.integers(1, 2_000_000), min_size=2, max_size=6))
def test_cache_bytes_never_fall_as_the_context_grows(layers, ratio, window, kv, head, contexts):
    cfg = kc.hypothetical_config(layers, ratio, window, kv, head, "bfloat16", 131072)
    contexts = sorted(contexts)
    assert np.all(np.diff(kc.kv_bytes(cfg, contexts)) >= 0)


@settings(max_examples=40, deadline=None)
@given(layer_counts, windows, st.integers(1, 16), st.integers(0, 10_000))
def test_sliding_layers_stop_growing_past_w_minus_1(layers, window, kv, extra):
    cfg = {"model_type": "gemma3_text", "num_hidden_layers": layers, "layer_types": ["sliding_attention"] * layers,
           "sliding_window": window, "num_key_value_heads": kv, "head_dim": 64, "dtype": "float16"}
    flat = kc.kv_bytes(cfg, [window - 1, window - 1 + extra])
    assert flat[0] == flat[1] == layers * 2 * kv * 64 * (window - 1) * 2


@settings(max_examples=40, deadline=None)
@given(layer_counts, st.integers(1, 64), st.sampled_from([16, 64, 128, 256]), st.sampled_from(list(kc.DTYPE_BYTES)),
       st.integers(1, 10**7))
def test_all_full_is_2_kv_d_layers_n_bytes(layers, kv, head, dtype, n):
    cfg = kc.hypothetical_config(layers, 0, 512, kv, head, dtype, 131072)
    assert kc.kv_cache(cfg, n).total_bytes == 2 * kv * head * layers * n * kc.DTYPE_BYTES[dtype]


@settings(max_examples=40, deadline=None)
@given(st.integers(5, 20), st.data(), st.integers(1, 100_000))
def test_sharing_never_adds_and_removes_exactly_the_shared_layers(layers, data, n):
    shared = data.draw(st.integers(0, layers - 5))  # leave the first five, which hold both types
    with_sharing, without = gemma3n(layers, shared), gemma3n(layers, 0)
    cache, alone = kc.kv_cache(with_sharing, n), kc.kv_cache(without, n)
    assert cache.total_bytes <= alone.total_bytes
    assert cache.total_bytes == sum(alone.layer_bytes[: layers - shared])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(1, 6)), min_size=1, max_size=5), st.integers(1, 14))
def test_receptive_field_matches_propagating_dependencies(windows, n):
    assert kc.receptive_field(windows, n).tolist() == lit.reach_by_simulation(windows, n)


def test_receptive_field_of_a_stack_of_sliding_layers():
    # Mistral 7B: 32 layers of 4,096 reach 32 · 4,095 = 131,040 tokens back (its paper's "W × k" is 131,072)
    layers, _ = kc.kv_layers(kc.bundled_kv_config("Mistral 7B"))
    assert kc.receptive_field([x.window for x in layers], 10**6)[-1] == 32 * 4095
    assert kc.receptive_field([x.window for x in layers], 5000).tolist()[:2] == [4095, 4999]


def test_hypothetical_config_with_gemma3s_settings_caches_what_gemma3_27b_does():
    f = bundled_kv_fields()["Gemma 3 27B"]["fields"]
    cfg = kc.hypothetical_config(f["num_hidden_layers"], 5, f["sliding_window"], f["num_key_value_heads"],
                                 f["head_dim"], "bfloat16", 131072)
    assert cfg["layer_types"] == f["layer_types"]
    contexts = [1, 1023, 1024, 8192, 131072, 1048576]
    assert kc.kv_bytes(cfg, contexts).tolist() == kc.kv_bytes(kc.bundled_kv_config("Gemma 3 27B"), contexts).tolist()


# --- named errors -------------------------------------------------------------------------------------------------

def test_named_errors():
    llama = kc.bundled_kv_config("Llama 3.1 8B")
    with pytest.raises(ValueError, match="context must be a positive integer, got 0"):
        kc.kv_cache(llama, 0)
    with pytest.raises(TypeError, match="context must be a positive integer, got 1.5"):
        kc.kv_cache(llama, 1.5)
    with pytest.raises(ValueError, match="contexts must be positive integers"):
        kc.kv_bytes(llama, [8192, 0])
    with pytest.raises(ValueError, match="mla must be one of 'transformers', 'latent', 'expanded', got 'naive'"):
        kc.kv_cache(llama, 10, mla="naive")
    with pytest.raises(ValueError, match="bytes_per_number must be a positive integer, got 0"):
        kc.kv_cache(llama, 10, bytes_per_number=0)
    with pytest.raises(ValueError, match="states no dtype .* pass bytes_per_number="):
        kc.kv_bytes(kc.bundled_kv_config("gpt-oss-20b"), [10])
    with pytest.raises(ValueError, match=r"torch_dtype 'fp8' is not one the counter knows"):
        kc.dtype_bytes({"torch_dtype": "fp8"})
    with pytest.raises(ValueError, match="dtypes disagree"):
        kc.dtype_bytes({"dtype": "bfloat16", "text_config": {"dtype": "float32"}})
    with pytest.raises(TypeError, match="config must be a dict"):
        kc.kv_layers(["llama"])
    with pytest.raises(ValueError, match="config 'llama' is neither a config.json's JSON text"):
        kc.kv_layers("llama")
    with pytest.raises(ValueError, match="name must be one of the bundled models"):
        kc.bundled_kv_config("Llama 5")


def test_what_the_counter_refuses_by_name():
    with pytest.raises(ValueError, match="model_type 'newarch' is not a family the reader transcribes"):
        kc.kv_layers({"model_type": "newarch", "num_hidden_layers": 2, "head_dim": 8})
    # read as Llama on request: LlamaConfig's num_key_value_heads = num_attention_heads needs the heads
    with pytest.raises(ValueError, match="num_attention_heads is missing, and llama's code sizes its keys from it"):
        kc.kv_layers({"model_type": "newarch", "num_hidden_layers": 2, "head_dim": 8}, assume="llama")
    with pytest.raises(ValueError, match="head_dim is missing, and for a config without model_type"):
        kc.kv_layers({"num_hidden_layers": 2, "num_key_value_heads": 2, "hidden_size": 64, "num_attention_heads": 4})
    with pytest.raises(ValueError, match="modernbert.* encoder"):
        kc.kv_layers({"model_type": "modernbert", "num_hidden_layers": 3})
    with pytest.raises(ValueError, match="use_bidirectional_attention = True"):
        kc.kv_layers({"model_type": "gemma3_text", "num_hidden_layers": 6, "use_bidirectional_attention": True})
    with pytest.raises(ValueError, match="layer_types: model_type 'mistral' declares none"):
        kc.kv_layers({"model_type": "mistral", "num_hidden_layers": 2, "layer_types": ["full_attention"] * 2})
    with pytest.raises(ValueError, match="num_kv_shared_layers: model_type 'llama'"):
        kc.kv_layers({"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 8,
                      "num_kv_shared_layers": 1})
    with pytest.raises(ValueError, match="num_kv_shared_layers must be an integer from 0 to the 10 layers, got 11"):
        kc.kv_layers(gemma3n(shared=11))
    with pytest.raises(ValueError, match="equals num_hidden_layers"):
        kc.kv_layers(gemma3n(shared=10))
    with pytest.raises(ValueError, match="num_key_value_heads is null, which model_type 'gemma3' does not read"):
        kc.kv_layers({"model_type": "gemma3_text", "num_hidden_layers": 6, "num_key_value_heads": None})
    with pytest.raises(ValueError, match="num_attention_heads is missing, and llama's code sizes its keys from it"):
        kc.kv_layers({"model_type": "llama", "num_hidden_layers": 2, "head_dim": 8})


def test_receptive_field_and_hypothetical_config_name_their_arguments():
    with pytest.raises(ValueError, match=r"layer_windows\[1\] must be a positive integer, got 0"):
        kc.receptive_field([4, 0], 10)
    with pytest.raises(TypeError, match="layer_windows must be a sequence"):
        kc.receptive_field(4, 10)
    with pytest.raises(ValueError, match="context must be a positive integer, got -1"):
        kc.receptive_field([4], -1)
    with pytest.raises(ValueError, match="local_per_global must be an integer ≥ 0"):
        kc.hypothetical_config(6, -1, 512, 8, 128, "bfloat16", 1024)
    with pytest.raises(ValueError, match="dtype must be one of bfloat16, float16, float32, got 'int8'"):
        kc.hypothetical_config(6, 1, 512, 8, 128, "int8", 1024)
    with pytest.raises(ValueError, match="window must be a positive integer, got 0"):
        kc.hypothetical_config(6, 1, 0, 8, 128, "bfloat16", 1024)
    with pytest.raises(ValueError, match="layers must be a positive integer, got 0"):
        kc.hypothetical_config(0, 1, 512, 8, 128, "bfloat16", 1024)


# --- the designs of 2026 (issue 44 §2), each from its fields and transformers 5.25.0's cache classes ----------------

def test_gemma4_26b_full_layers_keep_keys_and_values_although_v_is_k():
    f = bundled_kv_fields()["Gemma 4 26B-A4B"]["fields"]
    layers, _ = kc.kv_layers(kc.bundled_kv_config("Gemma 4 26B-A4B"))
    assert f["attention_k_eq_v"] and (f["num_global_key_value_heads"], f["global_head_dim"]) == (2, 512)
    full = [x for x in layers if x.kind == "full"]
    sliding = [x for x in layers if x.kind == "sliding"]
    # Gemma4TextAttention: value_states = key_states when v_proj is None, then cache.update(key_states, value_states)
    assert len(full) == 5 and {x.numbers_per_token for x in full} == {2 * 2 * 512}
    assert len(sliding) == 25 and {(x.numbers_per_token, x.holds) for x in sliding} == {(2 * 8 * 256, 1023)}
    assert kc.kv_cache(kc.bundled_kv_config("Gemma 4 26B-A4B"), 8192).total_bytes == (
        25 * 1023 * 4096 + 5 * 8192 * 2048) * 2 == 377_282_560


def test_gemma4_e2b_shares_its_last_20_layers_caches():
    layers, _ = kc.kv_layers(kc.bundled_kv_config("Gemma 4 E2B"))
    # kv_sharing_modes: layers 15 … 34 "reuse" the last earlier layer of their type, 13 (sliding) or 14 (full)
    assert [x.kind for x in layers[15:]] == ["shared"] * 20
    assert {x.shares for x in layers[15:] if x.layer_type == "sliding_attention"} == {13}
    assert {x.shares for x in layers[15:] if x.layer_type == "full_attention"} == {14}
    own = layers[:15]
    assert sum(x.kind == "full" for x in own) == 3 and {x.numbers_per_token for x in own if x.kind == "full"} == {1024}
    assert kc.kv_cache(kc.bundled_kv_config("Gemma 4 E2B"), 8192).total_bytes == (
        12 * 511 * 512 + 3 * 8192 * 1024) * 2 == 56_610_816


def test_llama4_scout_chunked_layers_keep_8191_and_its_12_nope_layers_everything():
    layers, _ = kc.kv_layers(kc.bundled_kv_config("Llama 4 Scout"))
    assert [x.kind for x in layers[:4]] == ["chunked"] * 3 + ["full"] and {x.numbers_per_token for x in layers} == {
        2 * 8 * 128}
    assert kc.kv_cache(kc.bundled_kv_config("Llama 4 Scout"), 131072).total_bytes == (
        36 * 8191 + 12 * 131072) * 2048 * 2 == 7_650_263_040


def test_deepseek_v4_compressed_layers_by_list_updates():
    # prefill and decode in chunks: the entries and buffer DeepseekV4HCACache.store_compression_weights leaves, and
    # the positions its compressors rotate entries at, against the count and the per-layer record
    records = layer_positions(bundled_configs("2026")["DeepSeek V4 Flash"])
    layers, _ = kc.kv_layers(kc.bundled_kv_config("DeepSeek V4 Flash"))
    for index in (2, 3):  # CSA (rate 4), HCA (rate 128)
        record, cache = records[index], layers[index]
        rate = record.compressed.rate
        for chunks in ([300, 1, 1, 5], [1] * 9, [127, 1], [1000], [3]):
            entries, buffered, positions = lit.deepseek_v4_entries_by_updates(rate, chunks)
            n = sum(chunks)
            assert positions == record.compressed.entry_positions(entries).tolist()
            compressor = cache.compressed[0]
            model, float32 = compressor.numbers(n)
            width = 1024 if rate == 4 else 512  # kv_proj and gate_proj: 2 · head_dim for CSA, head_dim for HCA
            assert model == entries * 512 + buffered * 2 * width + (rate * 512 if rate == 4 and entries else 0)
            assert float32 == (rate * 512 if rate == 4 and entries else 0)
    # sliding layers keep two tensors, compressed ones one (self.values = self.keys)
    assert (layers[0].numbers_per_token, layers[2].numbers_per_token) == (2 * 512, 512)
    assert (layers[0].cache_class, layers[2].cache_class, layers[3].cache_class) == (
        "DynamicSlidingWindowLayer", "DeepseekV4CSACache", "DeepseekV4HCACache")
    assert kc.kv_cache(kc.bundled_kv_config("DeepSeek V4 Flash"), 8192).total_bytes == 62_535_680


def test_glm5_caches_its_latents_and_the_indexers_key():
    layers, _ = kc.kv_layers(kc.bundled_kv_config("GLM-5"))
    f = bundled_kv_fields()["GLM-5"]["fields"]
    assert {x.numbers_per_token for x in layers} == {f["kv_lora_rank"] + f["qk_rope_head_dim"] + f["index_head_dim"]}
    assert {x.numbers_per_token for x in layers} == {704} and {x.cache_class for x in layers} == {"DynamicIndexedLayer"}
    # a layer that reuses the previous one's top-k ("shared") has no indexer and caches no indexer key
    shape = {"model_type": "glm_moe_dsa", "num_hidden_layers": 4, "index_topk_pattern": "FSSF", "dtype": "bfloat16"}
    assert [x.numbers_per_token for x in kc.kv_layers(shape)[0]] == [704, 576, 576, 704]


def test_kimi_linear_keeps_a_fixed_state_on_its_20_kda_layers():
    config = kc.bundled_kv_config("Kimi Linear 48B-A3B")
    layers, _ = kc.kv_layers(config)
    linear = [x for x in layers if x.kind == "linear"]
    full = [x for x in layers if x.kind == "full"]
    conv, recurrent = 3 * 32 * 128 * 4, 32 * 128 * 128   # KimiLinearDeltaAttention: conv_dim = 3 · qkv_dim
    assert len(linear) == 20 and {(x.conv_state_numbers, x.recurrent_state_numbers, x.numbers_per_token)
                                  for x in linear} == {(conv, recurrent, 0)}
    assert len(full) == 7 and {x.numbers_per_token for x in full} == {512 + 64}
    growth = kc.kv_bytes(config, [1000, 2000])
    assert growth[1] - growth[0] == 7 * 576 * 1000 * 2          # only the MLA layers grow
    assert growth[0] == 7 * 576 * 1000 * 2 + 20 * (conv * 2 + recurrent * 4)


def test_a_planted_misreading_of_each_2026_cache_fails_the_literal_count(monkeypatch):
    def disagrees(name):
        entry, config = lit.raw_models()[name], kc.bundled_kv_config(name)
        return any(int(kc.kv_bytes(config, [n])[0]) != lit.literal_cache(entry, n)[1] for n in (1, 127, 8192))

    assert not any(disagrees(n) for n in ("DeepSeek V4 Flash", "Kimi Linear 48B-A3B", "Gemma 4 26B-A4B"))
    with monkeypatch.context() as m:  # DeepSeek V4's K = V window counted as two tensors
        original = kc._deepseek_v4_cache
        m.setitem(kc._SIZES_2026, "deepseek_v4", lambda *a: [
            dataclasses.replace(x, numbers_per_token=2 * x.numbers_per_token) if x.kind == "compressed" else x
            for x in original(*a)])
        assert disagrees("DeepSeek V4 Flash")
    with monkeypatch.context() as m:  # Kimi's linear layers counted as attention layers of 576 numbers a token
        original_kimi = kc._kimi_linear_cache
        m.setitem(kc._SIZES_2026, "kimi_linear", lambda *a: [
            dataclasses.replace(x, kind="full", numbers_per_token=576, conv_state_numbers=0,
                                recurrent_state_numbers=0) for x in original_kimi(*a)])
        assert disagrees("Kimi Linear 48B-A3B")
    with monkeypatch.context() as m:  # Gemma 4's K = V full layers counted once
        m.setattr(kc, "_gemma4_full", lambda config, kv, notes: (
            config.get("num_global_key_value_heads", kv) * config.get("global_head_dim", 512), "keys only"))
        assert disagrees("Gemma 4 26B-A4B")
