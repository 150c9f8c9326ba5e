"""Issue 42 §2: the reader never guesses, for every family.

The families read since issue 42 (OLMo 2, GLM / GLM-4, GLM-4-MoE, Phi, StableLM, Cohere, Gemma, Falcon, Nemotron)
are held to transcriptions of transformers 5.24.0 (tests/hf5_reference.py: the config classes, the rotary
classes, the attention classes, and apply_rotary_pos_emb on one head), and their KV counts to a literal count
(tests/literal_kvcache.py). Every reader function refuses a model_type it does not transcribe, and a family
without RoPE, by name; ``assume="llama"`` reads an unknown one and says so; every one takes a config.json's text or
path. The four edge cases the issue found against transformers' code each have a test.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import hf5_reference as hf
import literal_kvcache as lit
import numpy as np
import pytest
from family_shapes import EDGE, NEW, NEW_2026
from hypothesis import assume as hypothesis_assume
from hypothesis import given, settings
from hypothesis import strategies as st
from test_layer_positions import assert_matches_hf

from posenc_helpers import base_bound
from posenc_helpers import kvcache as kc
from posenc_helpers.configs import (
    FAMILIES,
    NOT_ROPE,
    QK_NORM_UNKNOWN,
    QKNorm,
    bundled_configs,
    config_summary,
    describe_config,
    frequencies_from_config,
    layer_positions,
    load_config,
    per_layer,
    rope_settings,
)
from posenc_helpers.configs import families as configs_families
from posenc_helpers.configs import layers as configs_layers

POSITIONS = np.array([0, 1, 2, 7, 100, 4095, 4096, 65535])
# each shape built by transformers 5.24.0's own config class (python -m tools.hf_reference --configs)
REFERENCE = json.loads((Path(__file__).parent / "data" / "hf_config_reference.json").read_text(encoding="utf-8"))


def rotate_by_record(layer, x: np.ndarray, positions) -> np.ndarray:
    """What a record says the layer does to one head: turn pair k by p·ω_k, pairs as ``layout`` says, within the
    first rotary_dim dims, or the last ones when ``rotated`` is ``"trailing"``."""
    out = x.copy()
    d = layer.rotary_dim
    start = layer.head_dim - d if layer.rotated == "trailing" else 0
    for k in range(d // 2):
        i, j = (2 * k, 2 * k + 1) if layer.layout == "interleaved" else (k, k + d // 2)
        i, j = i + start, j + start
        angle = np.asarray(positions, dtype=np.float64) * layer.inv_freq[k]
        c, s = np.cos(angle) * layer.attention_factor, np.sin(angle) * layer.attention_factor
        out[:, i] = x[:, i] * c - x[:, j] * s
        out[:, j] = x[:, i] * s + x[:, j] * c
    return out


def assert_rotation_matches_hf(config: dict) -> None:
    layer = layer_positions(config)[0]
    x = np.random.default_rng(42).standard_normal((len(POSITIONS), layer.head_dim))
    np.testing.assert_allclose(rotate_by_record(layer, x, POSITIONS), hf.rotate(config, x, POSITIONS),
                               rtol=0, atol=1e-9)


# --- every new family against transformers 5.24.0 -------------------------------------------------------------------


@pytest.mark.parametrize("shape", sorted(NEW))
def test_each_new_family_matches_transformers_5(shape):
    layers = assert_matches_hf(NEW[shape])
    assert len(layers) == NEW[shape]["num_hidden_layers"]
    text = describe_config(NEW[shape])
    model_type = NEW[shape]["model_type"]
    if model_type == "llama":  # Llama's one scheme: the single-scheme report
        assert text.startswith("rotation: 64 pairs, all 128 dims of each head, base 500,000")
    else:  # the per-layer report names the family, its pairing and its q/k norm
        assert text.startswith(f"layers: {len(layers)}, read as ") and f"(model_type {model_type!r})" in text
        assert "layout: " in text and "q and k normalised: " in text


def test_the_transcribed_config_classes_are_what_transformers_builds():
    # tests/hf5_reference.construct against the config objects transformers 5.24.0 built from the same dicts
    assert REFERENCE["transformers_version"] == "5.24.0" and set(REFERENCE["shapes"]) == set(NEW) | set(EDGE)
    for name, built in REFERENCE["shapes"].items():
        shape = {**NEW, **EDGE}[name]
        assert built["config"] == json.loads(json.dumps(shape)), name  # the file is current
        ours = hf.construct(shape)
        split = ours["hidden_size"] // ours["num_attention_heads"]
        assert (built["head_dim"] or split) == (ours.get("head_dim") or split), name
        assert built["sliding_window"] == ours.get("sliding_window"), name
        assert built["rope_parameters"] == ours["rope_parameters"], name
        if built["layer_types"] is not None:  # a class without layer_types: every layer full in the reference
            assert built["layer_types"] == ours["layer_types"], name


@pytest.mark.parametrize("name", sorted(set(NEW) | set(EDGE)))
def test_the_kv_count_sizes_keys_as_the_built_config_does(name):
    built, shape = REFERENCE["shapes"][name], {**NEW, **EDGE}[name]
    if built["config_class"] == "FalconConfig":  # FalconAttention decides its cached heads: test_the_kv_heads_...
        return
    heads = shape["num_attention_heads"]
    # the attention's width: head_dim, else hidden_size // heads (StableLmAttention always splits)
    head = shape["hidden_size"] // heads if built["config_class"] == "StableLmConfig" else (
        built["head_dim"] or shape["hidden_size"] // heads)
    layers, _notes = kc.kv_layers(shape)
    assert {x.numbers_per_token for x in layers if x.kind != "linear"} == {2 * built["num_key_value_heads"] * head}
    assert {x.head_dim for x in layer_positions(shape)} == {head}


@pytest.mark.parametrize("shape", sorted(NEW))
def test_each_new_family_rotates_one_head_as_its_apply_rotary_pos_emb_does(shape):
    assert_rotation_matches_hf(NEW[shape])


def test_the_new_families_spelled_out():
    # the numbers worked out by hand from the config classes, beside the transcription
    glm = layer_positions(NEW["GLM defaults (head_dim 128, partial 0.5)"])[0]
    assert (glm.head_dim, glm.rotary_dim, glm.layout) == (128, 64, "interleaved")   # int(128 · 0.5) = 64
    np.testing.assert_allclose(glm.inv_freq, [1e4 ** (-2 * k / 64) for k in range(32)], rtol=1e-13)
    phi = layer_positions(NEW["Phi partial 0.4"])[0]
    assert (phi.head_dim, phi.rotary_dim, phi.layout) == (80, 32, "half-split")      # int(80 · 0.4) = 32
    stablelm = layer_positions(NEW["StableLM defaults (partial 0.25)"])[0]
    assert (stablelm.head_dim, stablelm.rotary_dim) == (80, 20)                      # int(80 · 0.25) = 20
    nemotron = layer_positions(NEW["Nemotron defaults (partial 0.5)"])[0]
    assert (nemotron.head_dim, nemotron.rotary_dim) == (128, 64)
    cohere = layer_positions(NEW["Cohere defaults (base 500,000)"])[0]
    assert (cohere.base, cohere.layout, cohere.rotary_dim) == (500_000.0, "interleaved", 128)
    gemma = layer_positions(NEW["Gemma defaults (head_dim 256)"])[0]
    assert (gemma.head_dim, gemma.softmax_scale) == (256, 256 ** -0.5)               # not query_pre_attn_scalar
    falcon = layer_positions(NEW["Falcon multi-query"])[0]
    assert (falcon.head_dim, falcon.rotary_dim, falcon.layout) == (64, 64, "half-split")   # 4544 // 71
    olmo2 = layer_positions(NEW["OLMo 2"])[0]
    assert olmo2.qk_norm == QKNorm("before_rope", "all_heads", "rms", "learned")
    assert layer_positions(NEW["Phi defaults with qk_layernorm"])[0].qk_norm.weight == "learned_and_bias"
    assert layer_positions(NEW["StableLM qk_layernorm, partial 0.5"])[0].qk_norm.kind == "layer"
    assert layer_positions(NEW["Cohere use_qk_norm"])[0].qk_norm.weight == "learned_per_head"
    assert layer_positions(NEW["Cohere defaults (base 500,000)"])[0].qk_norm is None
    assert {x.read_as for x in layer_positions(NEW["GLM-4-MoE defaults"])} == {"GLM-4-MoE (GLM-4.5)"}


def test_the_report_says_where_a_partial_rotation_pairs_its_dims():
    glm = describe_config(NEW["GLM defaults (head_dim 128, partial 0.5)"])
    assert "layout: interleaved (pair k is dims 2k and 2k + 1, within the first 64 of 128 dims; dims 64–127 pass " \
           "unrotated)" in glm
    assert "no partial_rotary_factor: 0.5 (the GLM / GLM-4 config class's default)" in glm
    assert "no head_dim: 128 assumed (the config class's default)" in glm
    phi = describe_config(NEW["Phi partial 0.4"])
    assert "layout: half-split (pair k is dims k and k + 16, within the first 32 of 80 dims" in phi
    olmo2 = describe_config(NEW["OLMo 2"])
    assert "q and k normalised: RMS norm over all heads together, a learned weight, before the rotation" in olmo2
    # DeepSeek-V3's MLA turns the last 64 of its 192 dims: no "first 64" there
    deepseek = describe_config({"model_type": "deepseek_v3", "num_hidden_layers": 1, "rope_theta": 1e4})
    assert "layout: interleaved (pair k is dims 2k and 2k + 1)" in deepseek and "within the first" not in deepseek


def test_rope_settings_reads_a_family_whose_layers_turn_alike_by_its_own_rules():
    s = rope_settings(NEW["GLM defaults (head_dim 128, partial 0.5)"])
    assert (s.head_dim, s.rotary_dim, s.base) == (128, 64, 1e4)
    assert "no partial_rotary_factor: 0.5 (the GLM / GLM-4 config class's default)" in s.notes
    inv, att = frequencies_from_config(NEW["Cohere defaults (base 500,000)"])
    np.testing.assert_allclose(inv, [5e5 ** (-2 * k / 128) for k in range(64)], rtol=1e-13)
    # layers that differ (Gemma 3), and MLA's rotated part narrower than its q·k head, are not one scheme
    with pytest.raises(ValueError, match="use layer_positions"):
        rope_settings({"model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 64})
    with pytest.raises(ValueError, match="the rotated head is not the q·k head"):
        rope_settings({"model_type": "deepseek_v3", "num_hidden_layers": 2, "rope_theta": 1e4})
    with pytest.raises(ValueError, match="sets position per layer"):
        config_summary(NEW["OLMo 2"])


@settings(max_examples=40, deadline=None)
@given(family=st.sampled_from(["glm", "glm4", "glm4_moe", "phi", "stablelm", "nemotron"]),
       heads=st.integers(1, 8), head_dim=st.sampled_from([8, 16, 40, 64, 80, 96, 128]),
       factor=st.sampled_from([None, 0.25, 0.4, 0.5, 0.75, 1.0]), base=st.sampled_from([1e4, 5e5]))
def test_partial_rotation_of_every_partial_family_matches_transformers_5(family, heads, head_dim, factor, base):
    default = {"glm": 0.5, "glm4": 0.5, "glm4_moe": 0.5, "phi": 0.5, "nemotron": 0.5, "stablelm": 0.25}[family]
    rotated = int(head_dim * (default if factor is None else factor))
    hypothesis_assume(rotated >= 2 and rotated % 2 == 0)  # an odd width does not run in transformers (refused here)
    cfg = {"model_type": family, "num_hidden_layers": 1, "hidden_size": heads * head_dim, "num_attention_heads": heads,
           "rope_theta": base, "num_key_value_heads": heads}
    if family in ("glm", "glm4"):
        cfg["head_dim"] = head_dim  # their class default is 128, not hidden_size // heads
    if factor is not None:
        cfg["partial_rotary_factor"] = factor
    layers = assert_matches_hf(cfg)
    assert layers[0].rotary_dim == rotated
    assert_rotation_matches_hf(cfg)


# --- a planted misreading fails the comparison ---------------------------------------------------------------------


def test_a_planted_misreading_of_each_new_rule_fails(monkeypatch):
    glm, stablelm = NEW["GLM defaults (head_dim 128, partial 0.5)"], NEW["StableLM defaults (partial 0.25)"]
    phi, falcon = NEW["Phi defaults with qk_layernorm"], NEW["Falcon multi-query"]
    for cfg in (glm, stablelm, phi, falcon):
        assert_matches_hf(cfg)
    with monkeypatch.context() as m:  # GLM read with the half-split pairing
        m.setattr(configs_layers, "_layout", lambda config, family: "half-split")
        with pytest.raises(AssertionError):
            assert_matches_hf(glm)
        with pytest.raises(AssertionError):
            assert_rotation_matches_hf(glm)
    with monkeypatch.context() as m:  # StableLM with GLM's default fraction
        m.setitem(configs_families.PARTIAL_DEFAULTS, "stablelm", 0.5)
        with pytest.raises(AssertionError):
            assert_matches_hf(stablelm)
    with monkeypatch.context() as m:  # Phi's q/k LayerNorm forgotten
        m.delitem(configs_families._OPTIONAL_QK_NORM, "phi")
        with pytest.raises(AssertionError):
            assert_matches_hf(phi)
    with monkeypatch.context() as m:  # Falcon's head_dim read as a class default of 128
        m.setitem(configs_layers._HEAD_DIM_RULES, "falcon", (128, False))
        with pytest.raises(AssertionError):
            assert_matches_hf(falcon)


# --- the families of 2026 (issue 44 §2): DeepSeek V4, GLM-5, Kimi Linear, against transformers 5.25.0 ---------------


def assert_scores_match_hf(config: dict) -> None:
    """q·k of two heads at many pairs of positions, every layer, as the record turns them and as the family's code
    does (GLM-5's apply_rotary_pos_emb_interleave reorders the pairs it returns, alike for q and k)."""
    rng = np.random.default_rng(7)
    for index, layer in enumerate(layer_positions(config)):
        q, k = rng.standard_normal((2, len(POSITIONS), layer.head_dim))
        ours = (rotate_by_record(layer, q, POSITIONS) if layer.rope else q) @ (
            rotate_by_record(layer, k, POSITIONS[::-1]) if layer.rope else k).T
        theirs = hf.rotate(config, q, POSITIONS, layer=index) @ hf.rotate(config, k, POSITIONS[::-1], layer=index).T
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9, err_msg=f"layer {index}")


@pytest.mark.parametrize("shape", sorted(NEW_2026))
def test_each_2026_family_matches_transformers_5_25(shape):
    layers = assert_matches_hf(NEW_2026[shape])
    assert len(layers) == NEW_2026[shape]["num_hidden_layers"]
    assert_scores_match_hf(NEW_2026[shape])
    text = describe_config(NEW_2026[shape])
    assert text.startswith(f"layers: {len(layers)}, read as ") and "layout: " in text


@pytest.mark.parametrize("name", ["DeepSeek V4 Flash", "GLM-5", "Kimi Linear 48B-A3B"])
def test_each_bundled_2026_config_turns_q_and_k_as_its_code_does(name):
    config = copy.deepcopy(bundled_configs("2026")[name])
    config["num_hidden_layers"] = 4 if name != "Kimi Linear 48B-A3B" else 27  # the first layers are enough
    if name == "DeepSeek V4 Flash":
        config["compress_ratios"] = config["compress_ratios"][:4]
    assert_scores_match_hf(config)


def test_the_2026_families_spelled_out():
    # the numbers worked out by hand from the config classes, beside the transcription
    flash = layer_positions(bundled_configs("2026")["DeepSeek V4 Flash"])
    assert [x.layer_type for x in flash[:4]] == ["sliding_attention", "sliding_attention",
                                                 "compressed_sparse_attention", "heavily_compressed_attention"]
    sliding, csa, hca = flash[0], flash[2], flash[3]
    assert (sliding.head_dim, sliding.rotary_dim, sliding.rotated, sliding.layout) == (512, 64, "trailing",
                                                                                       "interleaved")
    assert {x.window for x in flash} == {128} and all(x.sinks for x in flash) and sliding.compressed is None
    # "main": 10,000^(−2k/64), no scaling; "compress": YaRN ×16 over 160,000^(−2k/64), attention_factor forced to 1
    np.testing.assert_allclose(sliding.inv_freq, [1e4 ** (-2 * k / 64) for k in range(32)], rtol=1e-13)
    assert sliding.rope_type == "default" and csa.rope_type == "yarn" and csa.attention_factor == 1.0
    np.testing.assert_allclose(csa.inv_freq[:4], [1.0, 160000 ** (-2 / 64), 160000 ** (-4 / 64),
                                                  160000 ** (-6 / 64)], rtol=1e-13)  # fast pairs: not interpolated
    assert csa.inv_freq[-1] == pytest.approx(160000 ** (-62 / 64) / 16, rel=1e-13)  # slowest: divided by 16
    np.testing.assert_array_equal(csa.inv_freq, hca.inv_freq)
    assert (csa.compressed.rate, csa.compressed.span, csa.compressed.top_k) == (4, 8, 512)
    assert (hca.compressed.rate, hca.compressed.span, hca.compressed.top_k) == (128, 128, None)
    assert csa.compressed.entry_positions(3).tolist() == [0, 4, 8] and hca.compressed.visible(255) == 2
    assert (csa.indexer.heads, csa.indexer.head_dim, csa.indexer.top_k) == (64, 128, 512) and hca.indexer is None
    assert sliding.softmax_scale == 512 ** -0.5
    glm = layer_positions(bundled_configs("2026")["GLM-5"])
    assert {(x.head_dim, x.rotary_dim, x.rotated, x.layout) for x in glm} == {(256, 64, "trailing", "interleaved")}
    assert glm[0].softmax_scale == 256 ** -0.5 and glm[0].window is None
    assert {(x.indexer.heads, x.indexer.head_dim, x.indexer.rotary_dim, x.indexer.rotated, x.indexer.top_k)
            for x in glm} == {(32, 128, 64, "leading", 2048)}
    kimi = layer_positions(bundled_configs("2026")["Kimi Linear 48B-A3B"])
    # full_attn_layers [4, 8, ..., 24, 27] are 1-indexed: layers 3, 7, ..., 23, 26 counting from 0
    assert [i for i, x in enumerate(kimi) if x.layer_type == "full_attention"] == [3, 7, 11, 15, 19, 23, 26]
    assert not any(x.rope for x in kimi) and {x.head_dim for x in kimi} == {192, 128}
    shapes = layer_positions(NEW_2026["GLM-5 index_topk_freq 2, YaRN with mscale_all_dim"])
    # max(i − 2 + 1, 0) % 2 == 0: layers 0, 1, 3, 5 run their indexer, 2 and 4 reuse the last one's choice
    assert [x.indexer.scores for x in shapes] == ["tokens", "tokens", "reused", "tokens", "reused", "tokens"]
    mscale = 0.1 * 1.0 * math.log(4.0) + 1
    assert shapes[0].softmax_scale == pytest.approx(128 ** -0.5 * mscale ** 2, rel=1e-13)


def test_a_planted_misreading_of_each_2026_rule_fails(monkeypatch):
    from posenc_helpers.configs import records as configs_records
    flash = copy.deepcopy(bundled_configs("2026")["DeepSeek V4 Flash"])
    yarn = NEW_2026["DeepSeek V4 legacy compress_ratios, YaRN, qk_rope_head_dim 32"]
    glm, kimi = NEW_2026["GLM-5 index_topk_freq 2, YaRN with mscale_all_dim"], NEW_2026["Kimi Linear 1-indexed layer lists"]
    for cfg in (flash, yarn, glm, kimi):
        assert_matches_hf(cfg)
    with monkeypatch.context() as m:  # a compressed entry turned at its block's last token, not its first
        m.setattr(configs_records.CompressedBranch, "entry_positions",
                  lambda self, n: np.arange(n) * self.rate + self.rate - 1)
        with pytest.raises(AssertionError):
            assert_matches_hf(yarn)
    with monkeypatch.context() as m:  # a query that sees the block it is still reading
        m.setattr(configs_records.CompressedBranch, "visible", lambda self, t: t // self.rate + 1)
        with pytest.raises(AssertionError):
            assert_matches_hf(yarn)
    with monkeypatch.context() as m:  # YaRN on the sliding layers too (one parameter set for every layer)
        original = configs_families._deepseek_v4_params
        m.setattr(configs_families, "_deepseek_v4_params",
                  lambda config, types, notes: {t: original(config, types, notes)["compressed_sparse_attention"]
                                                for t in types})
        with pytest.raises(AssertionError):
            assert_matches_hf(yarn)
    with monkeypatch.context() as m:  # the rotated dims taken from the front of the head
        m.setattr(configs_layers, "_record", _with(configs_layers._record, rotated="leading"))
        with pytest.raises(AssertionError):
            assert_matches_hf(flash)
        with pytest.raises(AssertionError):
            assert_scores_match_hf(yarn)
    with monkeypatch.context() as m:  # GLM-5 read with the half-split pairing
        m.setattr(configs_layers, "_layout", lambda config, family: "half-split")
        with pytest.raises(AssertionError):
            assert_matches_hf(glm)
        with pytest.raises(AssertionError):
            assert_scores_match_hf(glm)
    with monkeypatch.context() as m:  # Kimi Linear's layer lists read 0-indexed
        m.setattr(configs_families, "_types_2026", _kimi_zero_indexed(configs_families._types_2026))
        with pytest.raises(AssertionError):
            assert_matches_hf(kimi)


def _with(record_fn, **fields):
    """A _record that overrides some fields of every record it returns (a planted misreading)."""
    import dataclasses

    def planted(*args, **kwargs):
        x = record_fn(*args, **kwargs)
        return dataclasses.replace(x, **{k: v for k, v in fields.items() if x.rope})
    return planted


def _kimi_zero_indexed(types_fn):
    def planted(config, family, n, notes):
        if family != "kimi_linear":
            return types_fn(config, family, n, notes)
        linear = config["linear_attn_config"]
        types = ["linear_attention"] * n
        for layer in linear["full_attn_layers"]:
            if layer < n:
                types[layer] = "full_attention"
        return types
    return planted


def test_the_2026_readers_refuse_what_their_code_would_not_read():
    with pytest.raises(ValueError, match=r"compress_ratios must list 0, 4 or 128 for each layer"):
        layer_positions({"model_type": "deepseek_v4", "num_hidden_layers": 2, "compress_ratios": [0, 8]})
    with pytest.raises(ValueError, match=r"rope_parameters\['main'\] has no partial_rotary_factor.*build order"):
        layer_positions({"model_type": "deepseek_v4", "num_hidden_layers": 2, "compress_ratios": [0, 4],
                         "rope_parameters": {"main": {"rope_type": "default"},
                                             "compress": {"rope_type": "yarn", "factor": 4.0,
                                                          "original_max_position_embeddings": 1024}}})
    with pytest.raises(ValueError, match="linear_attn_config.full_attn_layers holds 0: layers are numbered 1 to 3"):
        layer_positions({"model_type": "kimi_linear", "num_hidden_layers": 3,
                         "linear_attn_config": {"full_attn_layers": [0], "kda_layers": [1, 2]}})
    with pytest.raises(ValueError, match="names layer 3 in neither full_attn_layers nor kda_layers"):
        layer_positions({"model_type": "kimi_linear", "num_hidden_layers": 3,
                         "linear_attn_config": {"full_attn_layers": [1], "kda_layers": [2]}})
    with pytest.raises(ValueError, match="indexer_types starts with 'shared'"):
        layer_positions({"model_type": "glm_moe_dsa", "num_hidden_layers": 2, "index_topk_pattern": "SF"})
    # Gemma 4 with use_bidirectional_attention "all" halves its window and attends both ways: not transcribed;
    # "vision" (the bundled 26B-A4B) changes only the masks over image tokens, and the report says so
    with pytest.raises(ValueError, match="use_bidirectional_attention 'all': model_type 'gemma4' is read for None"):
        layer_positions({"model_type": "gemma4_text", "num_hidden_layers": 6, "use_bidirectional_attention": "all"})
    assert "text attends causally" in describe_config(bundled_configs("2026")["Gemma 4 26B-A4B"])


# --- the four edge cases of issue 42 §2 ----------------------------------------------------------------------------


def test_qwen2_without_use_sliding_window_has_no_window_whatever_layer_types_say():
    cfg = EDGE["Qwen2 use_sliding_window false, sliding layer_types"]
    layers = assert_matches_hf(cfg)
    assert [x.window for x in layers] == [None] * 4                 # Qwen2Config: sliding_window = None
    assert [x.layer_type for x in layers][2:] == ["sliding_attention"] * 2
    text = describe_config(cfg)
    assert "use_sliding_window is false" in text and "window 1,024" not in text
    cache = kc.kv_cache(cfg, 5000)
    assert cache.layer_tokens == (5000,) * 4 and {x.kind for x in cache.layers} == {"full"}
    assert cache.total_bytes == 4 * 2 * 2 * 64 * 5000 * 2
    assert any("use_sliding_window is false" in n for n in cache.notes)
    # with use_sliding_window, the same layer_types window their two layers
    on = assert_matches_hf({**cfg, "use_sliding_window": True})
    assert [x.window for x in on] == [None, None, 1024, 1024]


def test_qwen2_vl_windows_from_max_window_layers_80():
    layers = assert_matches_hf(EDGE["Qwen2.5-VL use_sliding_window (max_window_layers 80)"])
    assert [x.window for x in layers] == [None] * 80 + [2048] * 2


def test_cohere2_reads_its_head_dim_key_and_the_kv_count_uses_it():
    cfg = EDGE["Cohere2 head_dim key"]
    layers = assert_matches_hf(cfg)
    # Cohere2Config.__post_init__ sets hidden_size // heads = 128, then the head_dim key (not a field) is set back
    assert {x.head_dim for x in layers} == {256} and layers[0].rotary_dim == 256
    n = 10_000
    kv = kc.kv_cache(cfg, n)
    assert {x.numbers_per_token for x in kv.layers} == {2 * 2 * 256}
    # 3 sliding layers keep 511 tokens, the full one every token; with hidden // heads it would be half
    assert kv.total_bytes == (3 * 511 + n) * 2 * 2 * 256 * 2
    without = kc.kv_cache({k: x for k, x in cfg.items() if k != "head_dim"}, n)
    assert kv.total_bytes == 2 * without.total_bytes


def test_ministral3_with_sliding_window_windows_every_layer_and_keeps_w_minus_1():
    cfg = EDGE["Ministral 3 sliding_window"]
    layers = assert_matches_hf(cfg)
    assert [x.window for x in layers] == [4096] * 3
    cache = kc.kv_cache(cfg, 100_000)
    assert cache.layer_tokens == (4095,) * 3 and {x.kind for x in cache.layers} == {"sliding"}
    assert cache.total_bytes == lit.family_cache(cfg, 100_000, 2) == 3 * 2 * 8 * 128 * 4095 * 2
    assert [x.window for x in layer_positions({**cfg, "sliding_window": None})] == [None] * 3
    with pytest.raises(ValueError, match="layer_types: model_type 'ministral3' declares none"):
        kc.kv_layers({**cfg, "layer_types": ["full_attention"] * 3})


def test_qwen35_without_mrope_section_falls_back_to_11_11_10_and_the_count_does_not_need_it():
    cfg = EDGE["Qwen3.5 without mrope_section"]
    layers = assert_matches_hf(cfg)   # 128 · 0.25 = 32 dims: 16 pairs, fewer than 11 + 11 + 10
    full = layers[3]
    assert (full.mrope_section, full.mrope_interleaved, full.pairs) == ((11, 11, 10), True, 16)
    # recomposition_frequencies slices pairs k < 3·section: with 16 pairs, t h w t h w ... up to pair 15
    assert full.mrope_axes == ("t", "h", "w") * 5 + ("t",)
    cache = kc.kv_cache(cfg, 100)
    assert cache.total_bytes == cache.state_bytes + 1 * 2 * 2 * 128 * 100 * 2
    # a RoPE-only key the count does not need: YaRN without a factor stops the RoPE reader, not the KV count
    broken = {**cfg, "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e7}}
    with pytest.raises(ValueError, match="rope_type 'yarn' needs"):
        layer_positions(broken)
    assert kc.kv_cache(broken, 100).total_bytes == cache.total_bytes


# --- the KV count of the new families, against the literal count -------------------------------------------------


@pytest.mark.parametrize("shape", sorted(NEW))
def test_each_new_family_caches_what_its_attention_sizes(shape):
    cfg = NEW[shape]
    for n in (1, 4095, 4096, 100_000):
        assert kc.kv_cache(cfg, n, bytes_per_number=2).total_bytes == lit.family_cache(cfg, n, 2), (shape, n)


def test_the_kv_heads_each_family_caches():
    falcon = NEW["Falcon multi-query"]
    assert kc.kv_layers(falcon)[0][0].numbers_per_token == 2 * 1 * 64            # multi_query: one key head
    wide = kc.kv_layers(NEW["Falcon new architecture, dynamic"])
    assert wide[0][0].numbers_per_token == 2 * 16 * 64                            # broadcast to every query head
    assert any("broadcasts" in n for n in wide[1])
    assert kc.kv_layers(NEW["GLM defaults (head_dim 128, partial 0.5)"])[0][0].numbers_per_token == 2 * 2 * 128
    assert kc.kv_layers(NEW["Gemma defaults (head_dim 256)"])[0][0].numbers_per_token == 2 * 16 * 256
    with pytest.raises(ValueError, match="num_key_value_heads is missing or null, and model_type 'nemotron'"):
        kc.kv_layers({k: x for k, x in NEW["Nemotron defaults (partial 0.5)"].items() if k != "num_key_value_heads"})
    with pytest.raises(ValueError, match="num_kv_heads = 4 without new_decoder_architecture or multi_query"):
        kc.kv_layers({**falcon, "multi_query": False, "num_kv_heads": 4})


# --- refusals: unknown families, families without RoPE, keys a family does not read ---------------------------------

ENTRY = {
    "rope_settings": rope_settings,
    "layer_positions": layer_positions,
    "describe_config": describe_config,
    "config_summary": config_summary,
    "frequencies_from_config": frequencies_from_config,
    "per_layer": per_layer,
    "kv_layers": kc.kv_layers,
    "kv_cache": lambda c, **kw: kc.kv_cache(c, 8, bytes_per_number=2, **kw),
    "kv_bytes": lambda c, **kw: kc.kv_bytes(c, [8], bytes_per_number=2, **kw),
    "config_bounds": lambda c, **kw: base_bound.config_bounds(c, step=0.05, **kw),
}
PLAIN = {"num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
         "head_dim": 64, "rope_theta": 1e4, "max_position_embeddings": 512}


@pytest.mark.parametrize("entry", sorted(ENTRY))
def test_every_entry_point_refuses_an_unknown_model_type_by_name(entry):
    read = ENTRY[entry]
    with pytest.raises(ValueError) as raised:
        read({**PLAIN, "model_type": "made_up"})
    message = str(raised.value)
    assert "model_type 'made_up' is not a family the reader transcribes" in message and "\n" not in message
    assert all(name in message for name in ("llama", "glm4", "olmo2", "gemma3_text")) and "assume='llama'" in message
    read({**PLAIN, "model_type": "made_up"}, assume="llama")     # read on request
    read({**PLAIN, "model_type": "llama"})                       # Llama itself is transcribed
    read(PLAIN)                                                  # no model_type: read Llama-style, as before
    with pytest.raises(ValueError, match="assume must be None or one of 'llama', got 'gemma'"):
        read({**PLAIN, "model_type": "made_up"}, assume="gemma")


@pytest.mark.parametrize("entry", sorted(ENTRY))
@pytest.mark.parametrize("model_type", sorted(NOT_ROPE))
def test_every_entry_point_names_a_family_without_rope(entry, model_type):
    kind = "ALiBi" if model_type in ("bloom", "mpt") else "learned positions"
    for assume in (None, "llama"):
        with pytest.raises(ValueError, match=f"model_type '{model_type}' uses {kind} .*, not RoPE"):
            ENTRY[entry]({**PLAIN, "model_type": model_type}, assume=assume)


def test_falcon_with_alibi_is_named_as_alibi():
    for read in ENTRY.values():
        with pytest.raises(ValueError, match="model_type 'falcon' uses ALiBi .*, not RoPE"):
            read({**NEW["Falcon multi-query"], "alibi": True})


def test_an_assumed_family_is_said_in_every_output_that_has_words():
    cfg = {**PLAIN, "model_type": "made_up"}
    said = "model_type 'made_up' is not a family the reader transcribes: read as Llama's code reads it, because " \
           "assume='llama'"
    assert said in describe_config(cfg, assume="llama")
    assert rope_settings(cfg, assume="llama").notes[0].startswith(said)
    assert config_summary(cfg, assume="llama")["notes"][0].startswith(said)
    assert any(n.startswith(said) for n in kc.kv_layers(cfg, assume="llama")[1])
    assert any(n.startswith(said) for n in kc.kv_cache(cfg, 8, bytes_per_number=2, assume="llama").notes)
    records = layer_positions(cfg, assume="llama")
    assert {x.read_as for x in records} == {"Llama (assumed: model_type 'made_up' is not transcribed; assume='llama')"}
    assert {x.qk_norm for x in records} == {QK_NORM_UNKNOWN}     # Llama's code has none; this family's may
    # read as Llama, it reads as Llama does: the same frequencies, scale and windows
    llama = layer_positions({**cfg, "model_type": "llama"})
    assert [(x.window, x.softmax_scale) for x in records] == [(x.window, x.softmax_scale) for x in llama]
    np.testing.assert_array_equal(records[0].inv_freq, llama[0].inv_freq)
    # a proportional rope_type has no line in the single-scheme report: the per-layer report says it in its head
    per_layer_cfg = {**cfg, "rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.5,
                                                "rope_theta": 1e4}}
    head = describe_config(per_layer_cfg, assume="llama").splitlines()[0]
    assert head == ("layers: 2, read as Llama-style code reads them (model_type 'made_up', which the reader does not "
                    "transcribe: assumed, as assume='llama' asks)")


def test_a_multimodal_configs_language_model_decides():
    # the outer model_type may be unknown (a vision-language wrapper); its text_config's is what is read
    wrapped = {"model_type": "some_vlm", "text_config": {**PLAIN, "model_type": "gemma", "hidden_size": 512}}
    assert layer_positions(wrapped)[0].head_dim == 64
    with pytest.raises(ValueError, match="model_type 'made_up'"):
        layer_positions({"model_type": "some_vlm", "text_config": {**PLAIN, "model_type": "made_up"}})


@pytest.mark.parametrize("model_type", ["olmo2", "glm4", "phi", "stablelm", "cohere", "gemma", "falcon", "nemotron",
                                        "llama"])
def test_a_family_without_per_layer_code_refuses_a_per_layer_key(model_type):
    cfg = {**PLAIN, "model_type": model_type, "num_kv_heads": 2}
    cfg.pop("head_dim")
    assert layer_positions(cfg)
    for key, value in (("sliding_window", 128), ("layer_types", ["full_attention"] * 2), ("no_rope_layers", [1, 0])):
        for read in (layer_positions, describe_config, kc.kv_layers):
            with pytest.raises(ValueError, match=f"model_type '{model_type}'.* reads no such key.*{key}"):
                read({**cfg, key: value})
    assert layer_positions({**cfg, "sliding_window": None, "use_sliding_window": False})  # null and false ask nothing


def test_head_dim_keys_a_familys_code_cannot_take_are_refused():
    with pytest.raises(ValueError, match="FalconConfig's head_dim is a read-only property"):
        layer_positions({**NEW["Falcon multi-query"], "head_dim": 64})
    with pytest.raises(ValueError, match="StableLmAttention sizes its heads hidden_size // num_attention_heads = 80"):
        kc.kv_layers({**NEW["StableLM defaults (partial 0.25)"], "head_dim": 128})
    with pytest.raises(ValueError, match="head_dim is null, which model_type 'gemma' does not read"):
        layer_positions({**NEW["Gemma defaults (head_dim 256)"], "head_dim": None})
    with pytest.raises(ValueError, match="use_bidirectional_attention: model_type 'gemma'"):
        layer_positions({**NEW["Gemma defaults (head_dim 256)"], "use_bidirectional_attention": True})


def test_every_family_the_reader_lists_is_read_by_name():
    # each model_type of FAMILIES has a name the report uses, and reads a minimal config (or asks for one key)
    for model_type, family in FAMILIES.items():
        assert family in configs_families._FAMILY_NAMES, model_type
    assert not set(FAMILIES) & set(NOT_ROPE)


# --- a config.json's text, or its path, wherever a dict is accepted -------------------------------------------------

JSON_TEXT = """{
  "architectures": ["Glm4ForCausalLM"],
  "model_type": "glm4",
  "attention_bias": true,
  "head_dim": 128,
  "hidden_size": 4096,
  "num_attention_heads": 32,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "partial_rotary_factor": 0.5,
  "rope_scaling": null,
  "rope_theta": 10000.0,
  "max_position_embeddings": 32768,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16"
}"""


@pytest.mark.parametrize("entry", sorted(ENTRY))
def test_every_entry_point_takes_json_text_and_paths(entry, tmp_path):
    read = ENTRY[entry]
    as_dict = json.loads(JSON_TEXT)
    path = tmp_path / "config.json"
    path.write_text(JSON_TEXT, encoding="utf-8")
    expected = read(copy.deepcopy(as_dict)) if entry != "config_summary" else None
    for given_config in (JSON_TEXT, str(path), path, "\n  " + JSON_TEXT):
        if entry == "config_summary":  # GLM-4 sets its own pairing: no single-row summary, by name
            with pytest.raises(ValueError, match="sets position per layer"):
                read(given_config)
            continue
        got = read(given_config)
        if isinstance(got, np.ndarray):
            np.testing.assert_array_equal(got, expected)
        elif isinstance(got, tuple) and got and isinstance(got[0], np.ndarray):
            np.testing.assert_array_equal(got[0], expected[0])
        else:
            assert got == expected, entry


def test_the_json_texts_true_false_and_null_are_read():
    cfg = load_config(JSON_TEXT)
    assert cfg["attention_bias"] is True and cfg["tie_word_embeddings"] is False and cfg["rope_scaling"] is None
    text = describe_config(JSON_TEXT)
    assert "read as GLM / GLM-4 code reads them (model_type 'glm4')" in text


@pytest.mark.parametrize("bad, error, message", [
    ("{'model_type': 'glm4', 'rope_scaling': None}", ValueError,
     r"config is not valid JSON \(Expecting property name enclosed in double quotes at line 1, column 2\); "
     r"a config.json writes \"double quotes\", true, false and null"),
    ('{"head_dim": 64,}', ValueError, r"config is not valid JSON \(Expecting property name .* line 1, column 17\)"),
    # pasted between triple quotes: the text's line 3 is the pasted file's line 2
    ('\n{"head_dim": 64,\n "rope_theta": 1e4,}', ValueError,
     r"not valid JSON \(Expecting property name .* line 3, column 20, line 2 from the line of the first '\{'\)"),
    ("no/such/config.json", ValueError, "config 'no/such/config.json' is neither a config.json's JSON text"),
    ("   ", ValueError, "config is an empty string"),
    (42, TypeError, "config must be a dict shaped like a config.json, its JSON text, or the path of one, got 42"),
])
def test_a_bad_config_string_is_refused_naming_the_argument(bad, error, message):
    for read in (load_config, layer_positions, describe_config, kc.kv_layers):
        with pytest.raises(error, match=message) as raised:
            read(bad)
        assert "\n" not in str(raised.value)


def test_a_json_file_that_is_not_one_object_is_refused(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"config \(the file '.*list.json'\) holds a JSON list, not an object"):
        describe_config(path)
    broken = tmp_path / "broken.json"
    broken.write_text('{"head_dim": 64\n "x": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"config \(the file .*broken.json'\) is not valid JSON \(.* line 2, column 2"):
        layer_positions(str(broken))


def test_a_pasted_config_reads_as_the_dict_does():
    # what notebooks 11 and 14 invite: paste the file's text; the same records as the dict
    records = layer_positions(JSON_TEXT)
    assert records == layer_positions(json.loads(JSON_TEXT))
    assert math.isclose(records[0].inv_freq[1], 1e4 ** (-2 / 64))
