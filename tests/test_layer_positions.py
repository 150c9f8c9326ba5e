"""posenc_helpers.configs.layer_positions held against transcriptions of transformers 5.24.0 (tests/hf5_reference.py).

Every bundled config, and configs built by hand for each shape the reader accepts, must give per layer the
layer type, window, RoPE flag, inv_freq buffer, rotated width, attention factor, softmax scale, layout, query
temperature and M-RoPE axes that the model's own transformers-5 code computes.
"""

from __future__ import annotations

import copy
import math

import hf5_reference as hf
import literal_shipped
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers.configs import (
    QK_NORM_UNKNOWN,
    LayerPositions,
    QKNorm,
    bundled_configs,
    bundled_sources,
    describe_config,
    frequencies_from_config,
    layer_positions,
    per_layer,
)
from posenc_helpers.configs import families as configs_families
from posenc_helpers.scaling import yarn_ramp

# the classic entries name no model_type: the model each was copied from (its source note names it)
CLASSIC_TYPES = {
    "Llama 2 7B": "llama", "Llama 3.1 8B": "llama", "Code Llama 7B": "llama", "Mistral 7B": "mistral",
    "Qwen2.5 7B": "qwen2", "GPT-NeoX-20B": "gpt_neox", "GPT-J-6B": "gptj", "gpt-oss-20b": "gpt_oss",
    "Phi-3-mini 128k": "phi3",
}
POSITIONS = np.array([0, 1, 8190, 8191, 8192, 16383, 16384, 100_000, 1_000_000, 10_000_000])


def assert_matches_hf(config: dict) -> list[LayerPositions]:
    ours = layer_positions(copy.deepcopy(config))
    ref = hf.hf_layers(copy.deepcopy(config))
    assert len(ours) == len(ref)
    modernbert = hf.construct(config)["model_type"] == "modernbert"
    for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
        where = f"layer {i}"
        assert a.layer_type == b["layer_type"], where
        assert type(a.rope) is bool and a.rope == b["use_rope"], where
        hf_window = b["sliding_window"]
        # ModernBERT: Hugging Face's sliding_window is half of local_attention; the record keeps the whole window;
        # bidirectional Gemma 3 (EmbeddingGemma): Hugging Face's is half of it plus one, an exclusive bound
        whole = (None if hf_window is None else 2 * hf_window if modernbert
                 else 2 * (hf_window - 1) if b.get("bidirectional") else hf_window)
        assert a.window == whole, where
        if a.rope:
            assert isinstance(a.inv_freq, np.ndarray) and a.inv_freq.dtype == np.float64, where
            assert a.inv_freq.shape == b["inv_freq"].shape, where
            np.testing.assert_allclose(a.inv_freq, b["inv_freq"], rtol=1e-12, atol=0, err_msg=where)
            assert a.rotary_dim == 2 * int(np.count_nonzero(b["inv_freq"])), where
            assert math.isclose(a.attention_factor, b["attention_scaling"], rel_tol=1e-12), where
        else:
            assert a.inv_freq is None and a.rotary_dim == 0, where
        assert math.isclose(a.softmax_scale, b["scaling"], rel_tol=1e-12), where
        assert a.layout == ("interleaved" if b["interleaved"] else "half-split"), where
        assert a.head_dim == b["head_dim"], where
        if b["temperature"] is None:
            assert a.query_temperature is None, where
        else:
            np.testing.assert_allclose(a.query_temperature(POSITIONS), b["temperature"](POSITIONS), rtol=1e-14)
        assert a.mrope_axes == (None if b["mrope_axes"] is None else tuple(b["mrope_axes"])), where
        assert_same_qk_norm(a.qk_norm, b["qk_norm"], a.head_dim, where)
        assert a.rotated == b["rotated"] and a.sinks is b["sinks"], where
        assert_same_compressed(a.compressed, b["compressed"], where)
        assert_same_indexer(a.indexer, b["indexer"], where)
    return ours


def assert_same_compressed(ours, ref: dict | None, where: str) -> None:
    """Our CompressedBranch says what DeepSeek V4's compressor does: the rate, the tokens an entry pools, the
    position each entry turns at, what a query sees, the indexer's top-k."""
    if ref is None:
        assert ours is None, where
        return
    assert ours.rate == ref["rate"] and ours.top_k == ref["top_k"], where
    n = ref["windows"](5 * ref["rate"] + 3)  # five whole blocks and three tokens of a sixth
    assert n == 5, where
    np.testing.assert_array_equal(ours.entry_positions(n), ref["positions"](n), err_msg=where)
    assert ours.span == len(ref["sources"](n - 1)) and ref["sources"](0) == list(range(ref["rate"])), where
    for t in (0, 1, ref["rate"] - 2, ref["rate"] - 1, ref["rate"], 3 * ref["rate"] - 1, 3 * ref["rate"] + 1):
        assert ours.visible(t) == ref["visible"](t), (where, t)


def assert_same_indexer(ours, ref: dict | None, where: str) -> None:
    if ref is None:
        assert ours is None, where
        return
    assert (ours.heads, ours.head_dim, ours.rotary_dim, ours.rotated, ours.top_k) == (
        ref["heads"], ref["head_dim"], ref["rotary_dim"], ref["rotated"], ref["top_k"]), where
    assert (ours.scores != "reused") == ref["own"], where


def assert_same_qk_norm(ours, ref: dict | None, head_dim: int, where: str) -> None:
    """Our QKNorm record says what the reference's modules do: order, width, mean or sum, weight."""
    if ref is None:
        assert ours is None, where
        return
    assert isinstance(ours, QKNorm), where
    assert ours.where == {"norm, rotate": "before_rope", "rotate, norm": "after_rope", "norm": "no_rope"}[ref["order"]]
    assert ours.kind == {"mean": "rms", "sum": "l2", "centred": "layer"}[ref["reduce"]], where
    assert ours.weight == {"w": "learned", "1+w": "one_plus_learned", None: "none", "w+b": "learned_and_bias",
                           "w per head": "learned_per_head", "w on k": "learned_on_k"}[ref["scale"]], where
    assert ours.over == {"heads": "head", "q_proj": "all_heads"}[ref["on"]], where
    if ref["on"] == "heads" and ref["reduce"] in ("mean", "centred"):
        assert ref["channels"] == head_dim, where  # an RMS or LayerNorm over one head's channels


@pytest.mark.parametrize("name", sorted(bundled_configs("all")))
def test_every_bundled_config_matches_transformers_5(name):
    cfg = copy.deepcopy(bundled_configs("all")[name])
    if name in CLASSIC_TYPES:
        cfg.update(model_type=CLASSIC_TYPES[name], num_hidden_layers=4)
    assert_matches_hf(cfg)


def test_recent_bundle_has_sources_and_is_read_per_layer():
    recent, sources = bundled_configs("2025-26"), bundled_sources("2025-26")
    assert len(recent) >= 8 and set(recent) == set(sources)
    assert not set(recent) & set(bundled_configs())  # the default stays the nine classic configs
    for name, source in sources.items():
        assert source["repository"].count("/") == 1 and source["path"] and len(source["commit"]) == 40, name
        assert "found" in source["note"] or "Cross-check" in source["note"], name  # says whether a 2nd copy exists
        assert describe_config(recent[name]).count("\n") >= 4, name


def test_the_2026_bundle_has_sources_and_is_read_per_layer():
    new, sources = bundled_configs("2026"), bundled_sources("2026")
    assert sorted(new) == ["DeepSeek V4 Flash", "GLM-5", "Gemma 4 26B-A4B", "Gemma 4 E2B", "Kimi Linear 48B-A3B",
                           "Llama 4 Scout"] and set(new) == set(sources)
    assert not set(new) & (set(bundled_configs()) | set(bundled_configs("2025-26")))
    for name, source in sources.items():
        assert source["repository"].count("/") == 1 and source["path"], name
        if source["commit"] is None:  # a Hugging Face Hub repository read through a mirror page, its address named
            assert "https://" in source["note"] and "no commit" in source["note"] and source["cross_checked"] == "none"
        else:
            assert len(source["commit"]) == 40, name
        assert "found" in source["note"] or "Cross-check" in source["note"], name
        assert describe_config(new[name]).count("\n") >= 6, name


# --- the two cases the issue reports -----------------------------------------------------------------------------


def test_gemma3_is_described_per_layer_kind():
    cfg = bundled_configs("2025-26")["Gemma 3 27B"]
    layers = assert_matches_hf(cfg)
    assert [x.layer_type for x in layers].count("full_attention") == 10
    sliding, full = layers[0], layers[5]
    assert (sliding.base, sliding.window, full.base, full.window) == (10_000.0, 1024, 1_000_000.0, None)
    # linear ×8 on the full layers only: ω_k = 1e6^(−2k/128) / 8
    np.testing.assert_allclose(full.inv_freq, [1e6 ** (-2 * k / 128) / 8 for k in range(64)], rtol=1e-13)
    np.testing.assert_allclose(sliding.inv_freq, [1e4 ** (-2 * k / 128) for k in range(64)], rtol=1e-13)
    assert math.isclose(full.softmax_scale, 168 ** -0.5)
    text = describe_config(cfg)
    assert "pattern: 5 sliding (window 1,024, base 10,000) then 1 full (base 1,000,000, linear ×8), repeated" in text
    assert "assumed" not in text
    with pytest.raises(ValueError, match="layer_positions"):
        frequencies_from_config(cfg)


def test_deepseek_v3_rotates_qk_rope_head_dim_and_scales_the_softmax():
    cfg = bundled_configs("2025-26")["DeepSeek-V3"]
    layers = assert_matches_hf(cfg)
    x = layers[0]
    assert (x.rotary_dim, x.pairs, x.head_dim, x.layout) == (64, 32, 192, "interleaved")
    mscale = 0.1 * math.log(40) + 1
    assert math.isclose(x.softmax_scale, 192 ** -0.5 * mscale**2)
    assert x.attention_factor == 1.0  # mscale / mscale_all_dim = 1 on cos and sin
    inv, att = frequencies_from_config(cfg)  # one scheme on every layer: answered, 32 frequencies
    assert inv.shape == (32,) and att == 1.0
    text = describe_config(cfg)
    assert "RoPE on 32 pairs (64 of 192 dims)" in text and "mscale" in text and "logits unchanged" not in text


def test_qwen2_vl_mrope_is_default_frequencies_with_three_sections():
    # issue 15 item 4: Qwen2-VL's own rope_scaling, read as Qwen2VLConfig reads it
    cfg = {"hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1e6, "max_position_embeddings": 32768,
           "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
    inv, att = frequencies_from_config(cfg)
    np.testing.assert_allclose(inv, [1e6 ** (-2 * k / 128) for k in range(64)], rtol=1e-13)
    assert att == 1.0
    text = describe_config(cfg)
    assert "pairs 0–15 turn with the time id, 16–39 with the height id, 40–63 with the width id" in text
    layers = assert_matches_hf({**cfg, "model_type": "qwen2_vl", "num_hidden_layers": 2})
    assert layers[0].mrope_axes == ("t",) * 16 + ("h",) * 24 + ("w",) * 24


# --- hand-built configs, one or more for each shape the reader accepts ------------------------------------------

N = 8
HAND = {
    "flat rope_parameters (transformers 5)": {
        "model_type": "llama", "num_hidden_layers": N, "head_dim": 64, "max_position_embeddings": 32768,
        "rope_parameters": {"rope_type": "yarn", "rope_theta": 50000.0, "factor": 8.0,
                            "original_max_position_embeddings": 4096}},
    "flat proportional": {
        "model_type": "llama", "num_hidden_layers": N, "head_dim": 64,
        "rope_parameters": {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.5}},
    "nested by layer type (OLMo 3, YaRN on sliding)": {
        "model_type": "olmo3", "num_hidden_layers": N, "hidden_size": 512, "num_attention_heads": 8,
        "sliding_window": 256, "max_position_embeddings": 65536,
        "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 5e5},
                            "sliding_attention": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 5e5,
                                                  "original_max_position_embeddings": 8192}}},
    "nested with layer_types (OLMo 3)": {
        "model_type": "olmo3", "num_hidden_layers": 4, "head_dim": 32, "sliding_window": 64, "max_position_embeddings": 8192,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                            "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1e6}}},
    "old rope_scaling + rope_theta (OLMo 3)": {
        "model_type": "olmo3", "num_hidden_layers": N, "head_dim": 64, "rope_theta": 5e5, "sliding_window": 128,
        "max_position_embeddings": 65536, "rope_scaling": {"rope_type": "linear", "factor": 2.0}},
    "Gemma 3 sliding_window_pattern + rope_local_base_freq": {
        "model_type": "gemma3_text", "num_hidden_layers": 13, "head_dim": 32, "sliding_window": 512,
        "sliding_window_pattern": 4, "rope_theta": 1e6, "rope_local_base_freq": 1e4, "query_pre_attn_scalar": 144,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "max_position_embeddings": 32768},
    "Gemma 3 defaults": {"model_type": "gemma3_text", "num_hidden_layers": 7},
    "Gemma 4 defaults (proportional, global_head_dim)": {"model_type": "gemma4_text", "num_hidden_layers": 9},
    # Gemma 3n: every 5th layer full, rope_local_base_freq on the sliding layers, softmax scale 1, window 512
    # (configuration_gemma3n.py, modeling_gemma3n.py)
    "Gemma 3n defaults": {"model_type": "gemma3n_text", "num_hidden_layers": 10},
    "Gemma 3n multimodal, old-style keys": {
        "model_type": "gemma3n", "text_config": {
            "num_hidden_layers": 7, "head_dim": 128, "sliding_window": 1024, "rope_theta": 2e6,
            "rope_local_base_freq": 5e4, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
            "max_position_embeddings": 32768}},
    "Gemma 4 nested": {
        "model_type": "gemma4_text", "num_hidden_layers": 6, "head_dim": 128, "global_head_dim": 256,
        "sliding_window": 1024, "layer_types": ["sliding_attention"] * 4 + ["full_attention", "sliding_attention"],
        "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                               "rope_theta": 1e6}}},
    "ModernBERT global/local": {
        "model_type": "modernbert", "num_hidden_layers": 7, "hidden_size": 768, "num_attention_heads": 12,
        "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "global_attn_every_n_layers": 3,
        "local_attention": 128, "max_position_embeddings": 8192},
    "Llama 4 no_rope_layers + chunk + temperature": {
        "model_type": "llama4_text", "num_hidden_layers": N, "head_dim": 64, "attention_chunk_size": 4096,
        "no_rope_layers": [1, 1, 0, 1, 1, 1, 0, 1], "floor_scale": 4096, "attn_scale": 0.2,
        "rope_theta": 5e5, "max_position_embeddings": 1 << 20,
        "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192}},
    "Llama 4 defaults (empty no_rope_layers)": {
        "model_type": "llama4_text", "num_hidden_layers": N, "head_dim": 64, "no_rope_layers": []},
    "Llama 4 without temperature tuning": {
        "model_type": "llama4_text", "num_hidden_layers": 4, "head_dim": 64, "attn_temperature_tuning": False},
    "Llama 4 without qk_norm (the 128E model)": {
        "model_type": "llama4_text", "num_hidden_layers": 4, "head_dim": 64, "use_qk_norm": False},
    "Qwen3 defaults (q and k normalised per head)": {
        "model_type": "qwen3", "num_hidden_layers": 2, "head_dim": 128, "rope_theta": 1e6},
    "EXAONE 4 NoPE full layers (q and k still normalised)": {
        "model_type": "exaone4", "num_hidden_layers": 8, "head_dim": 64, "sliding_window": 4096,
        "sliding_window_pattern": 4},
    "SmolLM3 no_rope_layers": {
        "model_type": "smollm3", "num_hidden_layers": 6, "hidden_size": 256, "num_attention_heads": 4,
        "rope_theta": 5e6, "no_rope_layers": [1, 0, 1, 1, 0, 1]},
    "SmolLM3 defaults with a window": {
        "model_type": "smollm3", "num_hidden_layers": N, "hidden_size": 256, "num_attention_heads": 4,
        "use_sliding_window": True, "sliding_window": 1024},
    "Cohere2 pattern": {
        "model_type": "cohere2", "num_hidden_layers": N, "hidden_size": 512, "num_attention_heads": 4,
        "rope_theta": 5e4, "sliding_window": 4096, "sliding_window_pattern": 4},
    "EXAONE 4 int pattern": {
        "model_type": "exaone4", "num_hidden_layers": N, "head_dim": 64, "rope_theta": 1e6,
        "sliding_window": 4096, "sliding_window_pattern": 4},
    "EXAONE 4 without window": {
        "model_type": "exaone4", "num_hidden_layers": 4, "head_dim": 64, "sliding_window": None,
        "layer_types": ["full_attention"] * 4},
    "Qwen3-Next full_attention_interval": {
        "model_type": "qwen3_next", "num_hidden_layers": N, "head_dim": 128, "rope_theta": 1e7,
        "full_attention_interval": 2},
    "Qwen3 use_sliding_window": {
        "model_type": "qwen3", "num_hidden_layers": 6, "head_dim": 64, "rope_theta": 1e6,
        "use_sliding_window": True, "sliding_window": 2048, "max_window_layers": 2},
    # the shape of EmbeddingGemma's config: model_type gemma3_text with use_bidirectional_attention (a made-up
    # 6-layer model; no EmbeddingGemma checkpoint is bundled)
    "Gemma 3 bidirectional (EmbeddingGemma)": {
        "model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 256, "sliding_window": 512,
        "use_bidirectional_attention": True, "query_pre_attn_scalar": 256},
    # Gemma 2: sliding and full alternate, query_pre_attn_scalar (configuration_gemma2.py, modeling_gemma2.py)
    "Gemma 2 defaults": {"model_type": "gemma2", "num_hidden_layers": 4, "rope_theta": 1e4},
    "Gemma 2 with its own scalar and window": {
        "model_type": "gemma2", "num_hidden_layers": 6, "head_dim": 128, "query_pre_attn_scalar": 144,
        "sliding_window": 2048, "rope_theta": 1e4},
    # Granite: the softmax scale is attention_multiplier (modeling_granite.py, GraniteAttention)
    "Granite attention_multiplier": {
        "model_type": "granite", "num_hidden_layers": 2, "hidden_size": 2048, "num_attention_heads": 32,
        "attention_multiplier": 0.015625, "rope_theta": 1e4},
    "Granite defaults": {"model_type": "granite", "num_hidden_layers": 2, "head_dim": 64, "rope_theta": 1e4},
    # Phi-3 and Starcoder2 window every layer, as Mistral does; their classes default sliding_window to None
    "Phi-3 window on every layer": {
        "model_type": "phi3", "num_hidden_layers": 3, "hidden_size": 3072, "num_attention_heads": 32,
        "sliding_window": 2047, "rope_theta": 1e4, "max_position_embeddings": 4096},
    "Starcoder2 window on every layer": {
        "model_type": "starcoder2", "num_hidden_layers": 2, "hidden_size": 3072, "num_attention_heads": 24,
        "sliding_window": 4096, "rope_theta": 1e5},
    "Starcoder2 without sliding_window": {
        "model_type": "starcoder2", "num_hidden_layers": 2, "hidden_size": 3072, "num_attention_heads": 24,
        "rope_theta": 1e5},
    # Phi3Config: "yarn" is read as longrope, and its top-level original_max_position_embeddings (default 4096)
    # replaces the scaling dict's own
    "Phi-3 longrope, original length only in the dict": {
        "model_type": "phi3", "num_hidden_layers": 1, "hidden_size": 3072, "num_attention_heads": 32,
        "max_position_embeddings": 131072, "rope_theta": 1e4,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48,
                         "original_max_position_embeddings": 8192}},
    "Phi-3 yarn read as longrope, top-level original length": {
        "model_type": "phi3", "num_hidden_layers": 1, "hidden_size": 3072, "num_attention_heads": 32,
        "max_position_embeddings": 131072, "rope_theta": 1e4, "original_max_position_embeddings": 8192,
        "rope_scaling": {"type": "yarn", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48,
                         "original_max_position_embeddings": 4096}},
    # the class defaults: Qwen2/Qwen3's sliding_window 4096 and max_window_layers 28, Mistral's window 4096
    "Qwen2 use_sliding_window, default window and max_window_layers": {
        "model_type": "qwen2", "num_hidden_layers": 30, "head_dim": 64, "rope_theta": 1e6, "use_sliding_window": True},
    "Qwen3-MoE window on every layer (no layer_types, no max_window_layers)": {
        "model_type": "qwen3_moe", "num_hidden_layers": 30, "head_dim": 64, "rope_theta": 1e6,
        "use_sliding_window": True, "max_window_layers": 28},
    "Qwen3-MoE without use_sliding_window": {
        "model_type": "qwen3_moe", "num_hidden_layers": 3, "head_dim": 64, "rope_theta": 1e6, "sliding_window": 4096},
    "Mistral without sliding_window: the class's 4096": {
        "model_type": "mistral", "num_hidden_layers": 3, "hidden_size": 512, "num_attention_heads": 4},
    "Mistral window on every layer": {
        "model_type": "mistral", "num_hidden_layers": 3, "hidden_size": 512, "num_attention_heads": 4,
        "sliding_window": 4096},
    "DeepSeek-V3 half-split, unscaled": {
        "model_type": "deepseek_v3", "num_hidden_layers": 2, "qk_rope_head_dim": 32, "qk_nope_head_dim": 64,
        "rope_interleave": False, "rope_theta": 1e4},
    "gpt-oss defaults": {"model_type": "gpt_oss", "num_hidden_layers": 4, "head_dim": 64,
                         "max_position_embeddings": 131072},
    "Ministral 3 defaults (llama_4_scaling_beta)": {
        "model_type": "ministral3", "num_hidden_layers": 2, "head_dim": 128, "max_position_embeddings": 262144},
    "Qwen3-VL interleaved": {
        "model_type": "qwen3_vl_text", "num_hidden_layers": 2, "head_dim": 128, "rope_theta": 5e6,
        "rope_parameters": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True}},
}


@pytest.mark.parametrize("shape", sorted(HAND))
def test_hand_built_shape_matches_transformers_5(shape):
    layers = assert_matches_hf(HAND[shape])
    text = describe_config(HAND[shape])
    # per-layer configs get the per-kind report; single-scheme ones (Llama-style flat YaRN, Qwen3, Mistral) the old one
    assert text.startswith("layers:" if per_layer(HAND[shape]) else "rotation:")
    assert len(layers) == HAND[shape].get("text_config", HAND[shape])["num_hidden_layers"]


def test_hand_built_values_are_the_published_formulas():
    # spot checks of the transcription itself, against numbers worked out by hand
    g4 = layer_positions(HAND["Gemma 4 defaults (proportional, global_head_dim)"])
    full = g4[5]
    assert (full.head_dim, len(full.inv_freq), full.pairs, full.softmax_scale) == (512, 256, 64, 1.0)
    assert full.inv_freq[1] == pytest.approx(1e6 ** (-2 / 512)) and not full.inv_freq[64:].any()
    assert g4[-1].layer_type == "full_attention"  # 9 layers: the last is forced to full
    llama4 = layer_positions(HAND["Llama 4 no_rope_layers + chunk + temperature"])
    nope = llama4[2]
    assert (nope.rope, nope.layer_type, nope.window, llama4[0].window) == (False, "full_attention", None, 4096)
    # 1 + 0.2·ln(1 + ⌊(p + 1)/4096⌋): 1 up to p = 4094, then 1 + 0.2·ln 2
    assert list(nope.query_temperature([0, 4094, 4095])) == pytest.approx([1.0, 1.0, 1 + 0.2 * math.log(2)])
    ministral = layer_positions(HAND["Ministral 3 defaults (llama_4_scaling_beta)"])[0]
    assert list(ministral.query_temperature([16383, 16384])) == pytest.approx([1.0, 1 + 0.1 * math.log(2)])
    qwen3vl = layer_positions(HAND["Qwen3-VL interleaved"])[0]
    assert qwen3vl.mrope_axes[:6] == ("t", "h", "w", "t", "h", "w") and qwen3vl.mrope_axes[60:] == ("t",) * 4


def test_no_rope_layers_one_means_rope():
    layers = layer_positions(HAND["SmolLM3 no_rope_layers"])
    assert [x.rope for x in layers] == [True, False, True, True, False, True]
    assert "1 means RoPE" in describe_config(HAND["SmolLM3 no_rope_layers"])


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 30), pattern=st.integers(1, 8), window=st.integers(1, 10_000),
       family=st.sampled_from(["gemma3_text", "cohere2", "exaone4"]))
def test_sliding_window_patterns_match_transformers_5(n, pattern, window, family):
    cfg = {"model_type": family, "num_hidden_layers": n, "hidden_size": 256, "num_attention_heads": 4,
           "sliding_window": window, "sliding_window_pattern": pattern, "rope_theta": 1e5}
    assert_matches_hf(cfg)


@settings(max_examples=30, deadline=None)
@given(mask=st.lists(st.integers(0, 1), min_size=1, max_size=24), family=st.sampled_from(["llama4_text", "smollm3"]),
       chunk=st.sampled_from([None, 1024, 8192]))
def test_no_rope_layer_lists_match_transformers_5(mask, family, chunk):
    cfg = {"model_type": family, "num_hidden_layers": len(mask), "head_dim": 32, "no_rope_layers": mask}
    if family == "llama4_text":
        cfg["attention_chunk_size"] = chunk
    assert_matches_hf(cfg)


# --- what the reader refuses, naming the key ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "cfg, key",
    [
        ({"model_type": "olmo3", "num_hidden_layers": 2, "head_dim": 8,
          "rope_parameters": {"full_attention": {"rope_theta": 1e6}}}, "not a layer type of this config"),
        ({"model_type": "olmo3", "num_hidden_layers": 2, "head_dim": 8, "layer_types": ["full_attention"] * 2,
          "rope_parameters": {"full_attention": {"rope_type": "ntk-by-parts", "rope_theta": 1e6}}},
         "unknown rope_type 'ntk-by-parts'"),
        ({"model_type": "smollm3", "num_hidden_layers": 4, "head_dim": 8, "no_rope_layers": [1, 1, 0]},
         "no_rope_layers must list a 0 or 1 for each of the 4 layers"),
        ({"num_hidden_layers": 2, "head_dim": 8, "no_rope_layers": [1, 2]}, "no_rope_layers"),
        ({"num_hidden_layers": 2, "head_dim": 8, "partial_rotary_factor": 0.0}, r"partial_rotary_factor .*\(0, 1\]"),
        ({"model_type": "gemma3_text", "num_hidden_layers": 2, "partial_rotary_factor": 1.5},
         r"partial_rotary_factor .*\(0, 1\]"),
        ({"model_type": "olmo3", "num_hidden_layers": 2, "head_dim": 8, "layer_types": ["local", "global"]},
         "layer_types holds 'local'"),
        ({"model_type": "gpt_oss", "num_hidden_layers": 2, "head_dim": 8, "sliding_window": None,
          "layer_types": ["sliding_attention"] * 2}, "needs sliding_window"),
        ({"head_dim": 8, "sliding_window_pattern": 6, "num_hidden_layers": 6}, "sliding_window_pattern"),
        ({"model_type": "gemma3_text", "num_hidden_layers": 2, "rope_parameters": {"rope_type": "linear"}},
         "must be nested by layer type"),
        ({"head_dim": 8, "no_rope_layers": None, "layer_types": None, "model_type": "llama4_text"}, "num_hidden_layers"),
        ({"model_type": "qwen2_vl", "num_hidden_layers": 1, "head_dim": 8,
          "rope_scaling": {"type": "mrope", "mrope_section": [1, 1, 1]}}, "mrope_section"),
    ],
)
def test_malformed_shapes_are_refused_naming_the_key(cfg, key):
    with pytest.raises(ValueError, match=key):
        layer_positions(cfg)


@pytest.mark.parametrize(
    "cfg, key",
    [
        # transformers 5 has VaultGemma's scale, GraniteMoE's multiplier, a bidirectional window: each is its
        # family's own code, which the reader does not transcribe; a made-up family with Gemma-like keys is refused too
        ({"model_type": "vaultgemma", "num_hidden_layers": 4, "head_dim": 64, "sliding_window": 4096,
          "query_pre_attn_scalar": 256}, "query_pre_attn_scalar"),
        ({"model_type": "made_up_hybrid", "num_hidden_layers": 2, "head_dim": 64, "rope_local_base_freq": 1e4,
          "layer_types": ["sliding_attention", "full_attention"]}, "layer_types"),
        ({"model_type": "granitemoe", "num_hidden_layers": 2, "head_dim": 64, "attention_multiplier": 0.0078125},
         "attention_multiplier"),
        ({"model_type": "gemma3_text_bidirectional", "num_hidden_layers": 2, "head_dim": 64,
          "use_bidirectional_attention": True}, "use_bidirectional_attention"),
        ({"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64, "sliding_window": 128,
          "layer_types": ["sliding_attention", "full_attention"]}, "layer_types"),
        ({"model_type": "mixtral", "num_hidden_layers": 2, "head_dim": 64, "sliding_window": 4096}, "sliding_window"),
        ({"num_hidden_layers": 4, "head_dim": 32, "sliding_window": 64,
          "layer_types": ["sliding_attention", "full_attention"] * 2}, "layer_types"),
        ({"num_hidden_layers": 2, "head_dim": 8, "no_rope_layers": [1, 0]}, "no_rope_layers"),
        ({"model_type": "qwen3_moe_new", "num_hidden_layers": 2, "head_dim": 8,
          "rope_parameters": {"sliding_attention": {"rope_theta": 1e4}, "full_attention": {"rope_theta": 1e6}}},
         "nested by layer type"),
    ],
)
def test_a_family_the_reader_does_not_transcribe_is_refused_by_name(cfg, key):
    who = repr(cfg["model_type"]) if "model_type" in cfg else "no model_type"
    transcribed = cfg.get("model_type") in (None, "llama")
    for read in (layer_positions, describe_config, frequencies_from_config):
        if not transcribed:  # refused for its model_type alone, before any key is looked at
            with pytest.raises(ValueError, match=f"model_type {who} is not a family the reader transcribes"):
                read(cfg)
        # read as Llama on request (or as it always was, without model_type): still refused, by the key
        with pytest.raises(ValueError, match=key) as raised:
            read(cfg) if transcribed else read(cfg, assume="llama")
        assert who in str(raised.value) and "refuses rather than guess" in str(raised.value)


def test_a_bidirectional_gemma_3_sees_half_its_window_on_each_side():
    layers = layer_positions(HAND["Gemma 3 bidirectional (EmbeddingGemma)"])
    assert [x.window for x in layers] == [512] * 5 + [None]  # the whole span: 256 on each side
    assert "sees 256 tokens on each side" in describe_config(HAND["Gemma 3 bidirectional (EmbeddingGemma)"])
    odd = {**HAND["Gemma 3 bidirectional (EmbeddingGemma)"], "sliding_window": 513}
    assert layer_positions(odd)[0].window == 512 and hf.hf_layers(odd)[0]["sliding_window"] == 257


def test_gemma_2_alternates_and_granite_scales_by_its_multiplier():
    gemma2 = layer_positions(HAND["Gemma 2 defaults"])
    assert [(x.layer_type, x.window) for x in gemma2] == [("sliding_attention", 4096), ("full_attention", None)] * 2
    assert {x.softmax_scale for x in gemma2} == {256 ** -0.5} and {x.head_dim for x in gemma2} == {256}
    own = layer_positions(HAND["Gemma 2 with its own scalar and window"])
    assert {x.softmax_scale for x in own} == {144 ** -0.5} and own[0].window == 2048
    granite = layer_positions(HAND["Granite attention_multiplier"])
    assert {x.softmax_scale for x in granite} == {0.015625} and granite[0].head_dim == 64
    assert {x.softmax_scale for x in layer_positions(HAND["Granite defaults"])} == {1.0}
    assert "attention_multiplier 0.015625" in describe_config(HAND["Granite attention_multiplier"])
    with pytest.raises(ValueError, match="use_bidirectional_attention: model_type 'gemma2'"):
        layer_positions({**HAND["Gemma 2 defaults"], "use_bidirectional_attention": True})


def test_the_class_defaults_of_the_qwen_and_mistral_windows():
    # spelled out, beside the transcription: which layers get which window
    qwen2 = layer_positions(HAND["Qwen2 use_sliding_window, default window and max_window_layers"])
    assert [x.window for x in qwen2] == [None] * 28 + [4096] * 2
    moe = layer_positions(HAND["Qwen3-MoE window on every layer (no layer_types, no max_window_layers)"])
    # no layer_types: named as transformers' cache names a windowed layer (get_layer_types_and_kwargs)
    assert [x.window for x in moe] == [4096] * 30 and {x.layer_type for x in moe} == {"sliding_attention"}
    assert [x.window for x in layer_positions(HAND["Qwen3-MoE without use_sliding_window"])] == [None] * 3
    assert [x.window for x in layer_positions(HAND["Mistral without sliding_window: the class's 4096"])] == [4096] * 3
    assert [x.window for x in layer_positions(HAND["Phi-3 window on every layer"])] == [2047] * 3
    assert [x.window for x in layer_positions(HAND["Starcoder2 window on every layer"])] == [4096] * 2
    assert [x.window for x in layer_positions(HAND["Starcoder2 without sliding_window"])] == [None] * 2
    assert "4096" in describe_config(HAND["Mistral without sliding_window: the class's 4096"])
    with pytest.raises(ValueError, match="layer_types: model_type 'qwen3_moe' reads none"):
        layer_positions({**HAND["Qwen3-MoE without use_sliding_window"], "layer_types": ["full_attention"] * 3})


@pytest.mark.parametrize("model_type", ["qwen3", "qwen2", "llama4_text", "exaone4", "cohere2", "smollm3", "mistral"])
def test_a_nested_rope_parameters_is_refused_where_the_familys_rotary_reads_one_flat_dict(model_type):
    # transformers 5.24.0: only Gemma 3 and 4, OLMo 3 and ModernBERT build a rotary embedding per layer type; the
    # others read config.rope_parameters["rope_type"], which a dict nested under declared layer types lacks, and
    # raise a KeyError when the model is built (models/qwen3/modeling_qwen3.py, Qwen3RotaryEmbedding.__init__)
    cfg = {"model_type": model_type, "num_hidden_layers": 2, "head_dim": 64, "num_attention_heads": 4,
           "hidden_size": 256, "max_position_embeddings": 4096, "layer_types": ["full_attention"] * 2,
           "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6}}}
    for read in (layer_positions, describe_config, frequencies_from_config):
        with pytest.raises(ValueError, match="nested by layer type") as raised:
            read(cfg)
        assert repr(model_type) in str(raised.value) and "one flat" in str(raised.value)
    flat = {**cfg, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6}}
    # the same numbers, flat, are read (Cohere 2 and EXAONE 4 rotate on their sliding layers only)
    assert all(x.base == 1e6 for x in layer_positions(flat) if x.rope)


def test_a_family_the_reader_does_not_know_is_read_only_when_asked_and_then_says_so():
    # one scheme on every layer, no window, no family scale: refused by its model_type, read as Llama on request
    plain = {"model_type": "some_new_model", "num_hidden_layers": 3, "head_dim": 64, "rope_theta": 5e5,
             "sliding_window": None, "use_sliding_window": False}
    with pytest.raises(ValueError, match="model_type 'some_new_model' is not a family the reader transcribes"):
        layer_positions(plain)
    layers = layer_positions(plain, assume="llama")
    assert [(x.layer_type, x.window, x.rope, x.rotary_dim) for x in layers] == [("full_attention", None, True, 64)] * 3
    assert layers[0].base == 5e5 and layers[0].softmax_scale == 64 ** -0.5
    assert {x.read_as for x in layers} == {"Llama (assumed: model_type 'some_new_model' is not transcribed; "
                                           "assume='llama')"}


def test_a_pattern_without_a_layer_count_is_refused_not_guessed():
    with pytest.raises(ValueError, match="num_hidden_layers is missing"):
        frequencies_from_config({"model_type": "gemma3_text", "head_dim": 8, "rope_theta": 1e6})
    inv, _ = frequencies_from_config({"model_type": "deepseek_v3", "qk_rope_head_dim": 8, "rope_theta": 1e4})
    assert inv.shape == (4,)  # one scheme on every layer: the count does not matter


def test_defaults_the_reader_falls_back_to_are_stated():
    text = describe_config({"model_type": "gemma4_text", "num_hidden_layers": 6})
    assert "Gemma4TextConfig's defaults" in text and "no layer_types" in text
    text = describe_config({"model_type": "olmo3", "num_hidden_layers": 4, "head_dim": 64, "rope_theta": 1e6})
    assert "sliding_attention: base 500,000 assumed" in text  # OLMo 3 hands rope_theta to the full layers only
    text = describe_config({"model_type": "smollm3", "num_hidden_layers": 2, "head_dim": 8, "no_rope_layers": [1, 0]})
    assert "base 2,000,000 assumed" in text and "1 means RoPE" in text


@pytest.mark.parametrize("beta", [1.0, 32.0])
def test_deepseek_yarn_with_equal_betas_is_read_as_transformers_reads_it(beta):
    # beta_fast == beta_slow (a shipped DeepSeek config has both 1): transformers' find_correction_range gives a
    # ramp of zero width and widens it by 0.001; the reader used to refuse it
    cfg = {"model_type": "deepseek_v3", "num_hidden_layers": 2, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
           "max_position_embeddings": 163840,
           "rope_scaling": {"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                            "beta_fast": beta, "beta_slow": beta, "mscale": 1.0, "mscale_all_dim": 1.0}}
    layers = assert_matches_hf(cfg)
    lit = literal_shipped.yarn(64, 10000.0, 40.0, 4096, beta_fast=beta, beta_slow=beta)
    np.testing.assert_allclose(layers[0].inv_freq, lit, rtol=1e-12)
    # the paper's ramp divides by beta_fast − beta_slow: there equal betas are still refused, by name
    with pytest.raises(ValueError, match="need 0 < beta_slow < beta_fast .* for ramp 'paper'"):
        yarn_ramp(64, 10000.0, original_max_position=4096, beta_fast=beta, beta_slow=beta)


def test_qk_norm_is_read_per_layer_as_each_attention_class_applies_it():
    # Llama 4: the weightless norm on RoPE layers only, after the rotation; none on its NoPE layers
    llama4 = layer_positions({"model_type": "llama4_text", "num_hidden_layers": 4, "head_dim": 64,
                              "no_rope_layers": [1, 1, 1, 0]})
    assert [None if x.qk_norm is None else x.qk_norm.where for x in llama4] == ["after_rope"] * 3 + [None]
    assert llama4[0].qk_norm == QKNorm("after_rope", "head", "rms", "none")
    # OLMo 3 normalises the whole projection; Gemma 3 scales by 1 + w; Qwen2 normalises nothing, Qwen3 does
    olmo = layer_positions({"model_type": "olmo3", "num_hidden_layers": 4, "head_dim": 64})
    assert {x.qk_norm for x in olmo} == {QKNorm("before_rope", "all_heads", "rms", "learned")}
    gemma = layer_positions({"model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 64})
    assert {x.qk_norm.weight for x in gemma} == {"one_plus_learned"}
    qwen2 = layer_positions({"model_type": "qwen2", "num_hidden_layers": 2, "head_dim": 64})
    qwen3 = layer_positions({"model_type": "qwen3", "num_hidden_layers": 2, "head_dim": 64})
    assert [x.qk_norm for x in qwen2] == [None, None] and all(x.qk_norm.where == "before_rope" for x in qwen3)
    # Qwen3-Next's linear-attention layers L2-normalise q and k inside the delta rule: no RoPE there
    nxt = layer_positions({"model_type": "qwen3_next", "num_hidden_layers": 4, "head_dim": 256})
    assert [(x.layer_type, x.qk_norm.kind, x.qk_norm.where) for x in nxt][2:] == [
        ("linear_attention", "l2", "no_rope"), ("full_attention", "rms", "before_rope")]
    # Llama normalises neither; a family the reader has not read is unknown, not guessed to be either
    plain = {"num_hidden_layers": 2, "head_dim": 64, "rope_theta": 1e4}
    assert {x.qk_norm for x in layer_positions({**plain, "model_type": "llama"})} == {None}
    assert {x.qk_norm for x in layer_positions({**plain, "model_type": "some_new_model"}, assume="llama")} == {
        QK_NORM_UNKNOWN}
    assert {x.qk_norm for x in layer_positions(plain)} == {QK_NORM_UNKNOWN}


def test_the_qk_norm_comparison_catches_a_planted_misreading(monkeypatch):
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 4, "head_dim": 64}
    assert_matches_hf(cfg)
    monkeypatch.setattr(configs_families, "_LLAMA4_QK_NORM", QKNorm("before_rope", "head", "rms", "none"))
    with pytest.raises(AssertionError):
        assert_matches_hf(cfg)


def test_a_config_without_head_dim_takes_its_class_default_not_hidden_over_heads():
    # Qwen3Config and Qwen3VLTextConfig state head_dim = 128, Qwen3_5TextConfig 256 (transformers 5.24.0,
    # configuration_qwen3.py, configuration_qwen3_vl.py, configuration_qwen3_5.py); Qwen2Config states none, so
    # Qwen2's code takes hidden_size // num_attention_heads. Hidden 1024 over 16 heads is 64, unlike either.
    sizes = {"num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "rope_theta": 1e6}
    widths = {t: {x.head_dim for x in layer_positions({**sizes, "model_type": t}) if x.rope}
              for t in ("qwen2", "qwen3", "qwen3_vl_text", "qwen3_5_text")}
    assert widths == {"qwen2": {64}, "qwen3": {128}, "qwen3_vl_text": {128}, "qwen3_5_text": {256}}
    said = describe_config({**sizes, "model_type": "qwen3"})
    assert "all 128 dims of each head (head_dim assumed: the config class's default)" in said, said
    assert "assumed" not in describe_config({**sizes, "model_type": "qwen2"})
    assert len(layer_positions({**sizes, "model_type": "qwen3"})[0].inv_freq) == 64  # 128 dims: 64 pairs
    # Qwen3.5 with only linear-attention layers (its first full layer is the fourth): records, not a StopIteration
    linear_only = layer_positions({**sizes, "num_hidden_layers": 2, "model_type": "qwen3_5_text"})
    assert [(x.layer_type, x.rope) for x in linear_only] == [("linear_attention", False)] * 2
