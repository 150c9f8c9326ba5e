"""What the config reader does not know, it refuses by name or says it assumed (the newcomer review of issue 42 §2).

* keys only another family's code gives a meaning (its kind of position, Qwen 1's NTK and log-n switches, the layer
  count or key-value head count under another name) are refused, naming the key and its value, by every entry
  point, for a config read Llama-style: with ``assume="llama"``, and without ``model_type``;
* a config without ``model_type`` (and no key of one family) is read Llama-style, and every entry point says so in
  the reader's one note, :data:`~posenc_helpers.configs.UNTYPED_NOTE`, as ``assume="llama"``'s note says what it
  assumed;
"""

from __future__ import annotations

import pytest

from posenc_helpers.configs import (
    FAMILY_KEYS,
    UNTYPED_NOTE,
    config_summary,
    describe_config,
    frequencies_from_config,
    layer_positions,
    per_layer,
    rope_settings,
)
from posenc_helpers.explain import explain
from posenc_helpers.explain_text import render_text
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


def notes_of_every_entry_point(config: dict, assume=None) -> dict[str, list[str]]:
    """The notes each entry point gives (describe_config's `note: ` lines), by name."""
    said = {"layer_positions report": [line[len("note: "):] for line in describe_config(config, assume=assume)
                                       .splitlines() if line.startswith("note: ")],
            "kv_cache": list(kv_cache(config, 1024, assume=assume).notes),
            "kv_layers": kv_layers(config, assume=assume)[1],
            "explain": explain(config, assume=assume)["notes"]}
    if not per_layer(config, assume=assume):
        said["rope_settings"] = list(rope_settings(config, assume=assume).notes)
        said["config_summary"] = list(config_summary(config, assume=assume)["notes"])
    return said


def test_a_config_without_model_type_says_it_was_read_llama_style_everywhere():
    untyped = {k: x for k, x in LLAMA_LIKE.items() if k != "model_type"}
    said = notes_of_every_entry_point(untyped)
    assert set(said) == {"layer_positions report", "kv_cache", "kv_layers", "explain", "rope_settings",
                         "config_summary"}
    for name, notes in said.items():
        assert notes.count(UNTYPED_NOTE) == 1, (name, notes)
    # first, where the reader states what it assumed (as assume='llama''s note is first)
    assert said["rope_settings"][0] == said["explain"][0] == UNTYPED_NOTE
    # the command's first line says it too
    first = " ".join(render_text(explain(untyped)).split("\nengine: ")[0].split())
    assert first == ("config: (given as data); no model_type, and no key names a family: read Llama-style (assumed; "
                     "see the notes)"), first
    # and a per-layer reading of such a config (proportional RoPE: one record per layer) carries it too
    proportional = {**untyped, "rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.5,
                                                   "rope_theta": 1e6}}
    said = notes_of_every_entry_point(proportional)
    assert "rope_settings" not in said
    for name, notes in said.items():
        assert notes.count(UNTYPED_NOTE) == 1, (name, notes)


def test_the_note_says_what_the_reader_did():
    # half-split pairs on every layer, no window, the same RoPE as model_type 'llama' gives
    untyped = {k: x for k, x in LLAMA_LIKE.items() if k != "model_type"}
    records, llama = layer_positions(untyped), layer_positions({**untyped, "model_type": "llama"})
    assert all(r.layout == "half-split" and r.window is None and r.rope for r in records)
    assert [(r.inv_freq.tolist(), r.rotary_dim, r.head_dim, r.softmax_scale) for r in records] == [
        (r.inv_freq.tolist(), r.rotary_dim, r.head_dim, r.softmax_scale) for r in llama]
    assert "half-split pairs, dim k with dim k + d/2 as rotate_half pairs them" in UNTYPED_NOTE
    assert "the same RoPE on every layer; no window" in UNTYPED_NOTE and UNTYPED_NOTE.endswith("give its model_type")


@pytest.mark.parametrize("config", [
    {**LLAMA_LIKE, "model_type": "llama"},  # a family named
    {**LLAMA_LIKE, "model_type": "qwen3"},
    {**LLAMA_LIKE, "rotary_pct": 0.25},  # no model_type, but a key only GPT-NeoX's config has: read as GPT-NeoX
], ids=["llama", "qwen3", "GPT-NeoX key"])
def test_a_config_whose_family_is_named_gets_no_such_note(config):
    for name, notes in notes_of_every_entry_point(config).items():
        assert UNTYPED_NOTE not in notes, name
    assert "read Llama-style" not in render_text(explain(config))


def test_assume_llama_gives_its_own_note_not_this_one():
    said = notes_of_every_entry_point({**LLAMA_LIKE, "model_type": "mystery_lm"}, assume="llama")
    for name, notes in said.items():
        assert UNTYPED_NOTE not in notes and notes[0].startswith("model_type 'mystery_lm' is not a family"), name


# --- a layer's label says what the reader computed -------------------------------------------------------------------

EVERY_LAYER = {
    "mistral": {"sliding_window": 4096},
    "phi3": {"sliding_window": 2047},
    "starcoder2": {"sliding_window": 4096},
    "ministral3": {"sliding_window": 4096},
    "qwen3_moe": {"use_sliding_window": True, "sliding_window": 4096},
}


@pytest.mark.parametrize("model_type", sorted(EVERY_LAYER))
def test_a_window_on_every_layer_is_labelled_sliding(model_type):
    # these families' attention windows every layer (no layer_types): transformers' cache names such a layer
    # "sliding_attention" (get_layer_types_and_kwargs, cache_utils.py), and so must the reader's record and reports
    config = {**LLAMA_LIKE, "model_type": model_type, "num_hidden_layers": 4, **EVERY_LAYER[model_type]}
    window = EVERY_LAYER[model_type]["sliding_window"]
    records = layer_positions(config)
    assert [(r.layer_type, r.window) for r in records] == [("sliding_attention", window)] * 4
    text = describe_config(config)
    assert f"pattern: 4 sliding (window {window:,}" in text and "full" not in text.split("\nsoftmax")[0], text
    (kind,) = explain(config)["kinds"]
    assert (kind["layer_type"], kind["attention"], kind["window"]) == ("sliding_attention", "sliding", window)
    # without a window the same layers are full
    unwindowed = {**config, "sliding_window": None}
    assert [(r.layer_type, r.window) for r in layer_positions(unwindowed)] == [("full_attention", None)] * 4


def test_no_report_labels_a_windowed_layer_full():
    # every hand-built shape the reader's tests use: a layer with a window is never called full_attention
    from test_explain import hand_built

    for name, config in hand_built().items():
        try:
            rep = explain(config)
        except ValueError:
            continue
        for kind in rep["kinds"]:
            assert not (kind["layer_type"] == "full_attention" and kind["window"] is not None), (name, kind)
