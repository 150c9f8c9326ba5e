"""posenc_helpers.configs: real configs read as Hugging Face reads them, checked against literal formulas."""

from __future__ import annotations

import copy
import math

import literal_shipped as lit
import numpy as np
import pytest

from posenc_helpers.configs import (
    UNTYPED_NOTE,
    bundled_configs,
    bundled_left_out,
    bundled_sources,
    config_summary,
    describe_config,
    frequencies_from_config,
    rope_settings,
)


def test_default_and_partial_widths():
    inv, att = frequencies_from_config({"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0})
    np.testing.assert_allclose(inv, lit.inv_freq(128, 500000.0), rtol=1e-14)
    assert att == 1.0
    # GPT-NeoX: int(head_dim × rotary_pct); Phi-style partial_rotary_factor the same way
    inv, _ = frequencies_from_config({"hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
                                      "rotary_emb_base": 10000})
    np.testing.assert_allclose(inv, lit.inv_freq(24, 10000.0), rtol=1e-14)
    s = rope_settings({"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4})
    assert (s.head_dim, s.rotary_dim) == (80, 32)
    # int() truncates, as Hugging Face does: 80 × 0.33 = 26.4 → 26
    assert rope_settings({"head_dim": 80, "partial_rotary_factor": 0.33}).rotary_dim == 26
    # GPT-J: rotary_dim is absolute, widths from n_embd // n_head
    s = rope_settings({"n_embd": 4096, "n_head": 16, "rotary_dim": 64})
    assert (s.head_dim, s.rotary_dim, s.pairs) == (256, 64, 32)


def test_new_style_rope_parameters():
    cfg = {"head_dim": 64, "max_position_embeddings": 131072,
           "rope_parameters": {"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0,
                               "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0,
                               "truncate": False}}
    inv, att = frequencies_from_config(cfg)
    np.testing.assert_allclose(inv, lit.yarn(64, 150000.0, 32.0, 4096, 32, 1, truncate=False), rtol=1e-12)
    assert math.isclose(att, 0.1 * math.log(32) + 1)
    assert rope_settings(cfg).base == 150000.0


def test_missing_base_falls_back_and_says_so():
    cfg = {"head_dim": 8, "max_position_embeddings": 100}
    inv, _ = frequencies_from_config(cfg)
    np.testing.assert_allclose(inv, lit.inv_freq(8, 10000.0))
    # the first note says the config names no family, so it is read Llama-style (tests/test_configs_guesses.py)
    notes = rope_settings(cfg).notes
    assert notes[0] == UNTYPED_NOTE and "base 10000 assumed" in notes[1]
    assert "assumed: the config names no base" in describe_config(cfg)


@pytest.mark.parametrize("rope_type", ["linear", "dynamic", "yarn", "llama3"])
def test_missing_factor_is_a_clear_error(rope_type):
    cfg = {"head_dim": 8, "rope_theta": 1e4, "max_position_embeddings": 100,
           "rope_scaling": {"rope_type": rope_type, "low_freq_factor": 1, "high_freq_factor": 4}}
    with pytest.raises(ValueError, match=f"rope_type '{rope_type}' needs 'factor' in rope_scaling"):
        frequencies_from_config(cfg)


def test_longrope_derives_factor_like_hf():
    short, long = [1.0, 1.5, 2.0, 2.5], [1.0, 3.0, 9.0, 27.0]
    cfg = {"head_dim": 8, "rope_theta": 10000.0, "max_position_embeddings": 65536,
           "original_max_position_embeddings": 4096,
           "rope_scaling": {"type": "longrope", "short_factor": short, "long_factor": long}}
    for seq in (None, 100, 4096, 4097):
        inv, att = frequencies_from_config(cfg, seq_len=seq)
        expected, expected_att = lit.longrope(8, 10000.0, short, long, 65536, 4096, seq)
        np.testing.assert_allclose(inv, expected, rtol=1e-14)
        assert math.isclose(att, expected_att, rel_tol=1e-14)
    assert any("s = max_position_embeddings / original_max_position_embeddings = 16" in n
               for n in rope_settings(cfg).notes)


def test_yarn_derives_factor_when_absent():
    cfg = {"head_dim": 8, "max_position_embeddings": 16384,
           "rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 4096}}
    assert rope_settings(cfg).factor == 4.0


def test_unknown_type_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown rope_type 'ntk' in rope_scaling; known: 'default', 'linear', "
                                         r"'dynamic', 'yarn', 'longrope', 'llama3'"):
        frequencies_from_config({"head_dim": 8, "rope_scaling": {"type": "ntk", "factor": 2.0}})


@pytest.mark.parametrize(
    "cfg, exc, text",
    [
        ({"rope_theta": 1e4}, ValueError, "config gives no head width"),
        (["not", "a dict"], TypeError, "config must be a dict"),
        ("not a dict", ValueError, "config 'not a dict' is neither a config.json's JSON text"),
        ({"head_dim": 8, "rope_scaling": "yarn"}, TypeError, "rope_scaling must be a dict"),
        ({"head_dim": 8, "rope_theta": 0.5}, ValueError, "rope_theta must be a finite number greater than 1"),
        ({"head_dim": 8, "partial_rotary_factor": 1.5}, ValueError, r"partial_rotary_factor must be a fraction in \(0, 1\]"),
        ({"head_dim": 8, "rotary_dim": 3}, ValueError, "the rotated width must be even"),
        ({"head_dim": 8, "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1,
                                          "high_freq_factor": 4}, "original_max_position_embeddings": 10},
         ValueError, "needs 'original_max_position_embeddings' in rope_scaling"),
        ({"head_dim": 8, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, ValueError,
         "needs max_position_embeddings"),
        ({"head_dim": 8, "max_position_embeddings": 10, "rope_scaling": {"rope_type": "longrope", "short_factor": [1] * 4}},
         ValueError, "needs 'long_factor'"),
    ],
)
def test_bad_configs(cfg, exc, text):
    with pytest.raises(exc, match=text):
        frequencies_from_config(cfg)


def test_dynamic_reads_L_from_max_position_embeddings():
    cfg = {"head_dim": 16, "rope_theta": 1e4, "max_position_embeddings": 2048,
           "rope_scaling": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 1024}}
    for seq in (None, 1000, 2048, 3000, 9000):
        inv, _ = frequencies_from_config(cfg, seq_len=seq)
        np.testing.assert_allclose(inv, lit.dynamic_ntk(16, 1e4, 2.0, 2048, seq), rtol=1e-13)


def test_unrelated_keys_are_ignored():
    cfg = copy.deepcopy(bundled_configs()["Llama 3.1 8B"])
    cfg.update({"vocab_size": 128256, "torch_dtype": "bfloat16", "architectures": ["LlamaForCausalLM"]})
    a, _ = frequencies_from_config(cfg)
    b, _ = frequencies_from_config(bundled_configs()["Llama 3.1 8B"])
    np.testing.assert_array_equal(a, b)


# --- the bundled real configs, each against a literal re-implementation of its published formula ------------------


def test_bundled_llama31_is_llama3():
    inv, att = frequencies_from_config(bundled_configs()["Llama 3.1 8B"])
    np.testing.assert_allclose(inv, lit.llama3(128, 500000.0, 8.0, 1.0, 4.0, 8192), rtol=1e-12)
    assert att == 1.0


def test_bundled_gpt_oss_is_yarn_without_truncation():
    inv, att = frequencies_from_config(bundled_configs()["gpt-oss-20b"])
    np.testing.assert_allclose(inv, lit.yarn(64, 150000.0, 32.0, 4096, 32, 1, truncate=False), rtol=1e-12)
    assert math.isclose(att, lit.yarn_attention(32.0))


def test_bundled_phi3_is_longrope():
    cfg = bundled_configs()["Phi-3-mini 128k"]
    rs = cfg["rope_scaling"]
    for seq in (None, 4096, 4097):
        inv, att = frequencies_from_config(cfg, seq_len=seq)
        expected, expected_att = lit.longrope(96, 10000.0, rs["short_factor"], rs["long_factor"], 131072, 4096, seq)
        np.testing.assert_allclose(inv, expected, rtol=1e-14)
        assert math.isclose(att, expected_att)


@pytest.mark.parametrize("name, dim, base", [("Llama 2 7B", 128, 1e4), ("Qwen2.5 7B", 128, 1e6),
                                             ("Code Llama 7B", 128, 1e6), ("Mistral 7B", 128, 1e4),
                                             ("GPT-NeoX-20B", 24, 1e4), ("GPT-J-6B", 64, 1e4)])
def test_bundled_unscaled(name, dim, base):
    inv, att = frequencies_from_config(bundled_configs()[name])
    np.testing.assert_allclose(inv, lit.inv_freq(dim, base), rtol=1e-14)
    assert att == 1.0


def test_every_bundled_config_has_a_source_and_a_description():
    configs, sources = bundled_configs(), bundled_sources()
    assert set(configs) == set(sources) and len(configs) >= 9
    for name, source in sources.items():
        assert source["repository"].count("/") == 1 and source["path"] and len(source["commit"]) == 40, name
        text = describe_config(configs[name])
        # six lines, and a note when the config names no family (read Llama-style, and the note says so)
        untyped = "model_type" not in configs[name] and name not in ("GPT-NeoX-20B", "GPT-J-6B")
        assert text.count("\n") == 5 + untyped and "pairs never complete a turn" in text, name
        assert (f"note: {UNTYPED_NOTE}" in text) == untyped, name
    # issue 44 §2 asked for Command A too: no public copy of its config was found, and the data says so
    assert set(bundled_left_out()) == {"Command A"} and "no public copy" in bundled_left_out()["Command A"]
    issue = {"Llama 2 7B", "Llama 3.1 8B", "Code Llama 7B", "Mistral 7B", "Qwen2.5 7B", "GPT-NeoX-20B", "GPT-J-6B"}
    assert issue <= set(configs)
    kinds = {rope_settings(cfg).rope_type for cfg in configs.values()}
    assert {"yarn", "longrope"} <= kinds  # one YaRN model and Phi-3 with 128k context


def test_bundled_bases_as_their_sources_state_them():
    # GPT-NeoX-20B names its base (rotary_emb_base); GPT-J's config names none, and Hugging Face's GPT-J code
    # fixes 10000, which is the reader's fallback
    neox, gptj = rope_settings(bundled_configs()["GPT-NeoX-20B"]), rope_settings(bundled_configs()["GPT-J-6B"])
    assert "base 10,000 from rotary_emb_base" in neox.notes and not any("assumed" in n for n in neox.notes)
    assert any(n.startswith("no rope_theta") for n in gptj.notes)
    assert rope_settings(bundled_configs()["Code Llama 7B"]).max_position_embeddings == 16384


def test_summary_counts_unfinished_turns_literally():
    # rotated dims, base and L per bundled config, read from its source file (not from config_summary): L is
    # original_max_position_embeddings where the scaling names one, else the declared max_position_embeddings
    pinned = {
        "Llama 2 7B": (128, 10000.0, 4096), "Llama 3.1 8B": (128, 500000.0, 8192),
        "Code Llama 7B": (128, 1e6, 16384), "Mistral 7B": (128, 10000.0, 32768), "Qwen2.5 7B": (128, 1e6, 131072),
        "GPT-NeoX-20B": (24, 10000.0, 2048), "GPT-J-6B": (64, 10000.0, 2048), "gpt-oss-20b": (64, 150000.0, 4096),
        "Phi-3-mini 128k": (96, 10000.0, 4096),
    }
    configs = bundled_configs()
    for name, (dim, base, length) in pinned.items():
        s = config_summary(configs[name])
        wavelengths = [2 * math.pi / f for f in lit.inv_freq(dim, base)]
        assert (s["rotary_dim"], s["base"], s["length"]) == (dim, base, length), name
        assert s["never_turn"] == sum(w > length for w in wavelengths), name
        assert math.isclose(s["slowest"], wavelengths[-1]) and math.isclose(s["fastest"], 2 * math.pi)


def test_llama3_pairs_that_never_finish_a_turn():
    # 2π·500000^(2k/128) > 8192  ⟺  k > 64·ln(8192/2π)/ln(500000) ≈ 34.98, so k = 35 … 63
    s = config_summary(bundled_configs()["Llama 3.1 8B"])
    threshold = 64 * math.log(8192 / (2 * math.pi)) / math.log(500000)
    assert 34 < threshold < 35
    assert s["never_turn"] == 64 - 35 == 29


# --- issue 15 items 4, 5, 9: what the L line calls L, Qwen2-VL's "mrope", dynamic NTK's wording ------------------


def test_L_is_called_declared_context_or_training_length_by_where_it_comes_from():
    plain = describe_config({"head_dim": 8, "rope_theta": 1e4, "max_position_embeddings": 32768})
    assert "within L = 32,768 tokens (declared context):" in plain
    for name in ("Llama 3.1 8B", "gpt-oss-20b", "Phi-3-mini 128k"):  # all three carry original_max_position_embeddings
        assert "(training length, original_max_position_embeddings)" in describe_config(bundled_configs()[name])
    for name in ("Mistral 7B", "Qwen2.5 7B"):
        assert "(declared context)" in describe_config(bundled_configs()[name])
    missing = describe_config({"head_dim": 8, "rope_theta": 1e4})
    assert "no declared context in the config (max_position_embeddings missing)" in missing
    assert "training length" not in missing


def test_mrope_reads_as_default_frequencies_plus_sections():
    cfg = {"head_dim": 128, "rope_theta": 1e6, "max_position_embeddings": 32768,
           "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
    inv, att = frequencies_from_config(cfg)
    np.testing.assert_allclose(inv, lit.inv_freq(128, 1e6), rtol=1e-14)
    assert att == 1.0 and rope_settings(cfg).rope_type == "default"
    text = describe_config(cfg)
    assert "M-RoPE (mrope_section [16, 24, 24]): pairs 0–15 turn with the time id" in text and "scaling: none" in text
    with pytest.raises(ValueError, match="mrope_section must give 3 counts that add up to the 64 pairs"):
        describe_config({**cfg, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 23]}})


def test_dynamic_ntk_is_described_as_designed_for_inference_without_fine_tuning():
    cfg = {"head_dim": 16, "rope_theta": 1e4, "max_position_embeddings": 2048,
           "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    text = describe_config(cfg)
    assert "designed for inference without fine-tuning" in text and "no model is trained" not in text


def test_per_layer_configs_are_refused_by_the_single_scheme_summary():
    cfg = {"model_type": "smollm3", "num_hidden_layers": 4, "head_dim": 8, "rope_theta": 1e4}
    with pytest.raises(ValueError, match="layer_positions"):
        config_summary(cfg)
    with pytest.raises(ValueError, match="layer_positions"):
        frequencies_from_config(cfg)
