"""What the config reader does not know, it refuses by name or says it assumed (the newcomer review of issue 42 §2).

* keys only another family's code gives a meaning (its kind of position, Qwen 1's NTK and log-n switches, the layer
  count or key-value head count under another name) are refused, naming the key and its value, by every entry
  point, for a config read Llama-style: with ``assume="llama"``, and without ``model_type``;
"""

from __future__ import annotations

import pytest

from posenc_helpers.configs import (
    FAMILY_KEYS,
    config_summary,
    describe_config,
    frequencies_from_config,
    layer_positions,
    per_layer,
    rope_settings,
)
from posenc_helpers.kvcache import kv_cache, kv_layers

# Llama 3 8B's sizes, with head_dim and a dtype so the KV counter reads a config without model_type too
LLAMA_LIKE = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
              "head_dim": 128, "rope_theta": 500000.0, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}

# each key, and a value a real config of its family carries
OTHER_FAMILY = {
    "position_embedding_type": "absolute",  # BERT-like, ESM: a learned absolute table
    "use_dynamic_ntk": True,  # Qwen (1), Qwen-7B's config.json
    "use_logn_attn": True,  # Qwen (1)
    "num_layers": 28,  # ChatGLM, GPT-Neo, T5
    "n_layer": 32,  # GPT-2, CodeGen, Qwen (1)
    "multi_query_group_num": 2,  # ChatGLM2/3: the key and value heads
}

ENTRY_POINTS = {
    "rope_settings": rope_settings,
    "layer_positions": layer_positions,
    "describe_config": describe_config,
    "config_summary": config_summary,
    "frequencies_from_config": frequencies_from_config,
    "kv_layers": kv_layers,
    "kv_cache": lambda config, assume=None: kv_cache(config, 1024, assume=assume),
}


@pytest.mark.parametrize("key", sorted(OTHER_FAMILY))
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("how", ["assume llama", "no model_type"])
def test_another_familys_key_is_refused_by_name_and_value(key, entry, how):
    assert key in FAMILY_KEYS
    value = OTHER_FAMILY[key]
    config = {**LLAMA_LIKE, key: value}
    if how == "assume llama":
        config["model_type"] = "mystery_lm"
    assume = "llama" if how == "assume llama" else None
    with pytest.raises(ValueError) as refusal:
        ENTRY_POINTS[entry](config, assume=assume)
    said = str(refusal.value)
    assert f"its {key} = {value!r} means what that family's code makes of it" in said, said
    who = ("model_type 'mystery_lm' is not one of the families the reader transcribes (assume='llama' given)"
           if how == "assume llama" else "the config has no model_type, and no key names its family")
    assert said.startswith(who), said
    assert "\n" not in said


@pytest.mark.parametrize("key", sorted(OTHER_FAMILY))
def test_a_key_set_to_null_or_false_asks_for_nothing(key):
    # as for sliding_window: null (or use_logn_attn: false) switches nothing on, and the config is read as before
    for value in (None, False):
        config = {**LLAMA_LIKE, key: value}
        assert not per_layer(config)
        assert rope_settings(config).rotary_dim == 128


def test_gpt_j_keys_without_model_type_are_still_read_as_gpt_j():
    # rotary_dim with n_embd names GPT-J, whose own name for the layer count is n_layer: not refused
    gptj = {"n_embd": 4096, "n_head": 16, "n_layer": 28, "rotary_dim": 64, "n_positions": 2048}
    assert not per_layer(gptj)
    assert rope_settings(gptj).rotary_dim == 64
    assert layer_positions({**gptj, "num_hidden_layers": 28})[0].read_as == "GPT-J"
