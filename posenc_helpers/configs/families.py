"""The families the per-layer reader transcribes, and each one's rules.

Which ``model_type`` belongs to which family (:data:`FAMILIES`), the keys
whose meaning depends on a family (:data:`FAMILY_KEYS`, refused for any
other), and per family: the layer pattern, the nested ``rope_parameters``,
the window and QK-norm, each transcribed from transformers 5.24.0's
``models/<family>/configuration_<family>.py`` and ``modeling_<family>.py``,
named beside the rule. Taught in notebooks/14-position-per-layer.ipynb.
"""

from __future__ import annotations

from .. import _validate as v
from .records import QK_NORM_UNKNOWN, QKNorm
from .single import DEFAULT_BASE

#: The model families whose transformers-5 code the reader transcribes, by ``model_type``. Every reader function
#: refuses any other ``model_type`` by name (:func:`check_family`), unless ``assume="llama"``: then, as for a
#: config without ``model_type``, it is read Llama-style only where the reading cannot depend on the family (one
#: scheme for every layer, none of :data:`FAMILY_KEYS`, ``rope_parameters`` not nested), and refused by key
#: otherwise, instead of guessing the family's code.
FAMILIES = {
    "gemma2": "gemma2",
    "gemma3": "gemma3", "gemma3_text": "gemma3",
    "gemma3n": "gemma3n", "gemma3n_text": "gemma3n",
    "gemma4": "gemma4", "gemma4_text": "gemma4",
    "llama4": "llama4", "llama4_text": "llama4",
    "smollm3": "smollm3",
    "cohere2": "cohere2",
    "exaone4": "exaone4",
    "deepseek_v3": "deepseek_v3",
    "qwen3_next": "qwen3_next",
    "qwen3_5": "qwen3_5", "qwen3_5_text": "qwen3_5",
    "qwen2_vl": "qwen2_vl", "qwen2_vl_text": "qwen2_vl",
    "qwen2_5_vl": "qwen2_vl", "qwen2_5_vl_text": "qwen2_vl",
    "qwen3_vl": "qwen3_vl", "qwen3_vl_text": "qwen3_vl",
    "olmo3": "olmo3",
    "modernbert": "modernbert",
    "gpt_oss": "gpt_oss",
    "ministral3": "ministral3",
    "qwen2": "qwen_window", "qwen3": "qwen_window", "qwen3_moe": "qwen3_moe",
    "mistral": "mistral", "phi3": "phi3", "starcoder2": "starcoder2",
    "granite": "granite",
    "gptj": "gptj", "gpt_neox": "gpt_neox",
    "llama": "generic",
    # one scheme on every layer, each with its own pairing, partial rotary, head width or q/k norm
    # (transformers 5.24.0, models/<family>/configuration_<family>.py and modeling_<family>.py)
    "olmo2": "olmo2", "glm": "glm", "glm4": "glm", "glm4_moe": "glm4_moe", "phi": "phi", "stablelm": "stablelm",
    "cohere": "cohere", "gemma": "gemma", "falcon": "falcon", "nemotron": "nemotron",
    # the designs of 2026 (transformers 5.25.0): compressed attention, linear attention with NoPE MLA, DSA
    "deepseek_v4": "deepseek_v4", "kimi_linear": "kimi_linear", "glm_moe_dsa": "glm_moe_dsa",
}


#: model_types whose transformers-5 code gives position without RoPE: named, and refused, by every reader function.
NOT_ROPE = {
    "bloom": "ALiBi (a linear bias on the attention scores, one slope per head: build_alibi_tensor in "
             "modeling_bloom.py)",
    "mpt": "ALiBi (a linear bias on the attention scores, one slope per head: build_mpt_alibi_tensor in "
           "modeling_mpt.py, on every forward pass)",
    "gpt2": "learned positions (a learned absolute table added to the token embeddings: wpe in modeling_gpt2.py)",
    "gpt_neo": "learned positions (a learned absolute table: wpe in modeling_gpt_neo.py)",
    "gpt_bigcode": "learned positions (a learned absolute table: wpe in modeling_gpt_bigcode.py)",
    "opt": "learned positions (a learned absolute table, offset by 2: OPTLearnedPositionalEmbedding in "
           "modeling_opt.py)",
}


#: What ``assume`` may name: the one family a config of an unknown ``model_type`` can be read as, on request.
ASSUMABLE = ("llama",)


_FAMILY_NAMES = {
    "gemma2": "Gemma 2", "granite": "Granite",
    "gemma3": "Gemma 3", "gemma3n": "Gemma 3n", "gemma4": "Gemma 4", "llama4": "Llama 4", "smollm3": "SmolLM3",
    "cohere2": "Cohere2",
    "exaone4": "EXAONE 4", "deepseek_v3": "DeepSeek-V3", "qwen3_next": "Qwen3-Next", "qwen2_vl": "Qwen2-VL",
    "qwen3_vl": "Qwen3-VL", "qwen3_5": "Qwen3.5", "olmo3": "OLMo 3", "modernbert": "ModernBERT", "gpt_oss": "gpt-oss",
    "ministral3": "Ministral 3", "qwen_window": "Qwen2/Qwen3", "qwen3_moe": "Qwen3-MoE",
    "mistral": "Mistral", "phi3": "Phi-3", "starcoder2": "Starcoder2", "generic": "Llama-style",
    "olmo2": "OLMo 2", "glm": "GLM / GLM-4", "glm4_moe": "GLM-4-MoE (GLM-4.5)", "phi": "Phi (Phi-1, Phi-2)",
    "stablelm": "StableLM", "cohere": "Cohere (Command R)", "gemma": "Gemma", "falcon": "Falcon",
    "nemotron": "Nemotron", "gptj": "GPT-J", "gpt_neox": "GPT-NeoX",
    "deepseek_v4": "DeepSeek V4", "kimi_linear": "Kimi Linear", "glm_moe_dsa": "GLM-5 (GLM-MoE-DSA)",
}


# families whose code reads one flat scheme and no per-layer key: a key of FAMILY_KEYS in their config is refused
_PLAIN = ("generic", "olmo2", "glm", "glm4_moe", "phi", "stablelm", "cohere", "gemma", "falcon", "nemotron")


#: partial_rotary_factor of the config classes that set one (``kwargs.setdefault("partial_rotary_factor", ...)`` in
#: __post_init__, transformers 5.24.0): GlmConfig, Glm4Config, Glm4MoeConfig, PhiConfig, NemotronConfig 0.5;
#: StableLmConfig 0.25. Their rotary classes, like GPT-NeoX's and Qwen3-Next's, turn int(head_dim × factor) dims.
PARTIAL_DEFAULTS = {"glm": 0.5, "glm4_moe": 0.5, "phi": 0.5, "nemotron": 0.5, "stablelm": 0.25}


# each family's config-class default_theta (transformers 5.24.0, models/<family>/configuration_<family>.py);
# a pair is (full / global, sliding / local)
_DEFAULT_THETA = {
    "gemma3": (1_000_000.0, 10_000.0), "gemma3n": (1_000_000.0, 10_000.0), "modernbert": (160_000.0, 10_000.0),
    "llama4": 500_000.0, "cohere": 500_000.0,
    "smollm3": 2_000_000.0, "olmo3": 500_000.0, "gpt_oss": 150_000.0, "qwen2_vl": 1_000_000.0,
    "qwen3_vl": 500_000.0,
}


#: The layer types Hugging Face's configs name, and what the reader does with each.
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")

#: The layer types a family's own config class declares instead (transformers 5.25.0): only these are read for it.
#: DeepSeek V4: DEEPSEEK_V4_LAYER_TYPES (configuration_deepseek_v4.py, validate_layer_type refuses any other);
#: GLM-5: "indexed_attention" on every layer (configuration_glm_moe_dsa.py: "Every layer is DSA", the cache class
#: DynamicIndexedLayer); Kimi Linear: full (MLA) and linear (KDA) attention (configuration_kimi_linear.py).
FAMILY_LAYER_TYPES = {
    "deepseek_v4": ("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"),
    "glm_moe_dsa": ("indexed_attention",),
    "kimi_linear": ("full_attention", "linear_attention"),
}


_PER_LAYER_KEYS = (
    "layer_types", "no_rope_layers", "no_rope_layer_interval", "sliding_window_pattern", "rope_local_base_freq",
    "global_rope_theta", "local_rope_theta", "global_attn_every_n_layers", "full_attention_interval",
    "qk_rope_head_dim", "qk_nope_head_dim", "rope_interleave", "attn_temperature_tuning", "floor_scale",
    "attn_scale", "attention_chunk_size", "query_pre_attn_scalar", "text_config",
    # DeepSeek V4's compressed branches, Kimi Linear's linear layers and NoPE MLA, GLM-5's DSA indexer
    "compress_ratios", "compress_rates", "compress_rope_theta", "linear_attn_config", "mla_use_nope",
    "index_topk", "indexer_types", "index_topk_pattern", "index_topk_freq", "index_skip_topk_offset",
)


# keys of families the reader does not transcribe, each read by that family's code alone (the meaning from the
# config class named, and the code that reads it)
_OTHER_FAMILY_KEYS = (
    # which position the model gives at all: "absolute" (a learned table) or "rotary" in EsmConfig, "rope" or None
    # (no position) in GraniteMoeHybridConfig (transformers 5.25.0, models/esm/modeling_esm.py,
    # models/granitemoehybrid/modeling_granitemoehybrid.py: the rotary embedding only if it is "rope")
    "position_embedding_type",
    # Qwen (1)'s QWenConfig (remote code, Qwen/Qwen-7B configuration_qwen.py; vllm's transformers_utils/configs/
    # qwen.py copies it): dynamic-NTK rescaling of the base past seq_length, and log-n scaling of each query
    "use_dynamic_ntk", "use_logn_attn",
    # the layer count under another name: num_layers (GPT-Neo, T5, ChatGLM's ChatGLMConfig), n_layer (GPT-2,
    # CodeGen, GPT-J, Qwen (1)): attribute_map "num_hidden_layers" in their config classes; LlamaConfig reads
    # num_hidden_layers only
    "num_layers", "n_layer",
    # ChatGLM's ChatGLMConfig (remote code, THUDM chatglm2/3 configuration_chatglm.py): the key and value heads
    # when multi_query_attention, where LlamaConfig reads num_key_value_heads
    "multi_query_group_num",
)


#: Keys whose meaning depends on the family's code (windows, per-layer patterns, softmax scales, bidirectional
#: attention, and keys only another family's config declares: its kind of position, Qwen 1's NTK and log-n
#: switches, a layer count or key-value head count under another name): a config read Llama-style (no
#: ``model_type``, or ``assume="llama"``), or of a family whose code reads none of them (Llama, OLMo 2, GLM, Phi,
#: StableLM, Cohere, Gemma, Falcon, Nemotron), that sets one is refused by name.
FAMILY_KEYS = tuple(k for k in _PER_LAYER_KEYS if k != "text_config") + (
    "sliding_window", "use_sliding_window", "max_window_layers", "use_bidirectional_attention",
    "attention_multiplier",
) + _OTHER_FAMILY_KEYS


# GPT-J's own names (GPTJConfig.attribute_map): a config without model_type that names rotary_dim with n_embd is read
# as GPT-J (see _family), whose config reads n_layer as its layer count
_GPTJ_CLUE = ("rotary_dim", "n_embd")


def _family_keys_set(config: dict) -> list[str]:
    """The keys of :data:`FAMILY_KEYS` a config sets (a value other than None or False), in that order; n_layer
    left out of a config without model_type that names GPT-J's keys (GPT-J's own name for its layer count)."""
    own = ("n_layer",) if config.get("model_type") is None and all(k in config for k in _GPTJ_CLUE) else ()
    return [k for k in FAMILY_KEYS if k not in own and k in config and config[k] is not None and config[k] is not False]


def check_family(config: dict, assume=None) -> str | None:
    """Refuse a config the reader would have to guess at; return the ``model_type`` read as Llama on request.

    The language model's ``model_type`` (``text_config``'s, or the config's own) must be one of :data:`FAMILIES`,
    or absent (then the config is read Llama-style, as it always was, and the report says no family named it). A
    family without RoPE (:data:`NOT_ROPE`, or Falcon with ``alibi``) is named and refused; any other ``model_type``
    is refused by name unless ``assume="llama"``, and then its name is returned so the output can say what was
    assumed. Taught in notebooks/14-position-per-layer.ipynb.

    >>> check_family({"model_type": "gemma3_text"}), check_family({"model_type": "x"}, assume="llama")
    (None, 'x')
    >>> check_family({"model_type": "bloom"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: model_type 'bloom' uses ALiBi (a linear bias on the attention scores, ...), not RoPE: ...
    """
    if assume is not None and assume not in ASSUMABLE:
        raise ValueError(f"assume must be None or one of {', '.join(repr(a) for a in ASSUMABLE)}, got {v._show(assume)}")
    inner = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    model_type = inner.get("model_type", config.get("model_type"))
    if model_type is None:
        return None
    if not isinstance(model_type, str):
        raise TypeError(f"model_type must be a string, got {v._show(model_type)}")
    what = NOT_ROPE.get(model_type)
    if model_type == "falcon" and inner.get("alibi"):
        what = "ALiBi (alibi: true; FalconModel then builds build_alibi_tensor and applies no rotary embedding)"
    if what is not None:
        raise ValueError(f"model_type {model_type!r} uses {what}, not RoPE: the reader (and the KV count built on "
                         "it) reads RoPE families only")
    if model_type in FAMILIES:
        return None
    if assume is None:
        raise ValueError(
            f"model_type {model_type!r} is not a family the reader transcribes (it reads {', '.join(sorted(FAMILIES))}); "
            "pass assume='llama' to read it as Llama's code would, and the output will say so"
        )
    return model_type


#: The note every reader function gives a config it reads Llama-style because the config names no family (no
#: ``model_type``, and no key only one family's config has): in RopeSettings.notes, config_summary's ``notes``,
#: describe_config's report, the KV count's notes and ``posenc explain``'s notes. What it says the reader does: the
#: pairs of :func:`~posenc_helpers.configs.layers._layout` for Llama ("half-split"), one scheme on every layer (a
#: per-layer key is refused, :data:`FAMILY_KEYS`), no window (``sliding_window`` is one of them).
UNTYPED_NOTE = (
    "no model_type, and no key names a family: read Llama-style, its RoPE as for model_type 'llama' (half-split "
    "pairs, dim k with dim k + d/2 as rotate_half pairs them; the same RoPE on every layer; no window); if the model "
    "is of another family, its own code may pair, rotate, window or normalise q and k differently: give its "
    "model_type"
)


def _assumed_note(model_type: str) -> str:
    return (f"model_type {model_type!r} is not a family the reader transcribes: read as Llama's code reads it, "
            "because assume='llama' (its own code may pair, rotate, window or normalise q and k differently)")


def _refuse_family_keys(config: dict, family: str) -> None:
    """Raise when a config read Llama-style, or by a family with no per-layer code, sets a per-layer key."""
    model_type = config.get("model_type")
    if family != "generic":
        who = f"model_type {model_type!r} ({_FAMILY_NAMES[family]}) reads no such key in transformers 5.24.0"
    elif model_type == "llama":
        who = "model_type 'llama' reads no such key in transformers 5.24.0 (LlamaAttention has no window)"
    elif model_type is not None:
        who = f"model_type {model_type!r} is not one of the families the reader transcribes (assume='llama' given)"
    else:
        who = "the config has no model_type, and no key names its family"
    # a key set to None or False asks for nothing (e.g. "sliding_window": null, "use_sliding_window": false);
    # GemmaConfig declares use_bidirectional_attention (refused by _refuse_unread, which says why)
    keys = [k for k in _family_keys_set(config) if not (family == "gemma" and k == "use_bidirectional_attention")]
    if keys:
        key = keys[0]
        raise ValueError(
            f"{who}; its {key} = {v._show(config[key])} means what that family's code makes of it, so the "
            f"reader refuses rather than guess (set the config's model_type to its family if the reader reads it: "
            f"{', '.join(sorted(FAMILIES))}; or remove the key if the model does not use it)"
        )
    given = config.get("rope_parameters")
    if family == "generic" and isinstance(given, dict) and any(isinstance(x, dict) for x in given.values()):
        raise ValueError(
            f"{who}; its rope_parameters are nested by layer type, and which layer gets which depends on that "
            "family's code, so the reader refuses rather than guess"
        )


def _family(config: dict, notes: list[str], assume=None) -> str:
    """The family whose code reads this config: from model_type, else from a key only that family uses."""
    model_type = config.get("model_type")
    assumed = check_family(config, assume)
    if assumed is not None:
        notes.append(_assumed_note(assumed))
    if model_type is not None:
        family = FAMILIES.get(model_type, "generic")
        if family in _PLAIN:
            _refuse_family_keys(config, family)
        return family
    clue = _clue_family(config)
    if clue is not None:
        notes.append(clue[1])
        return clue[0]
    if "sliding_window_pattern" in config and "layer_types" not in config:
        raise ValueError(
            "sliding_window_pattern without layer_types or model_type: Gemma 3 keeps RoPE on its full layers while "
            "Cohere2 and EXAONE 4 drop it there, so give model_type"
        )
    _refuse_family_keys(config, "generic")
    notes.append(UNTYPED_NOTE)
    return "generic"


# keys only one family's config has: a config without model_type that sets one is read as that family
_CLUES = (
    ("rope_local_base_freq", "gemma3", "Gemma 3"),
    ("global_rope_theta", "modernbert", "ModernBERT"), ("local_rope_theta", "modernbert", "ModernBERT"),
    ("global_attn_every_n_layers", "modernbert", "ModernBERT"),
    ("qk_rope_head_dim", "deepseek_v3", "DeepSeek-V3"),
    ("full_attention_interval", "qwen3_next", "Qwen3-Next"),
    ("attn_temperature_tuning", "llama4", "Llama 4"), ("floor_scale", "llama4", "Llama 4"),
    ("rotary_pct", "gpt_neox", "GPT-NeoX"), ("rotary_emb_base", "gpt_neox", "GPT-NeoX"),
)


def _clue_family(config: dict) -> tuple[str, str] | None:
    """For a config without model_type: the family a key of its names, and the note saying so; None if no key does."""
    if all(k in config for k in _GPTJ_CLUE):
        return "gptj", "no model_type: read as GPT-J (gptj), whose config names rotary_dim with n_embd"
    for key, family, name in _CLUES:
        if key in config:
            return family, f"no model_type: read as {name} ({family}), the only family whose config has {key}"
    return None


def _untyped_llama(config: dict) -> bool:
    """Whether a config (its language model's part) is read Llama-style because it names no family: no
    model_type, and no key of one family (:func:`_clue_family`)."""
    inner = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    return (inner.get("model_type", config.get("model_type")) is None and _clue_family(inner) is None)


# q and k normalisation, from each family's attention class in transformers 5.24.0 (models/<m>/modeling_<m>.py)
_RMS_HEAD = QKNorm("before_rope", "head", "rms", "learned")


_RMS_HEAD_1P = QKNorm("before_rope", "head", "rms", "one_plus_learned")


_QK_NORM_RULES = {
    # Qwen3Attention, Qwen3MoeAttention, Qwen3VLTextAttention: q_norm / k_norm = RMSNorm(head_dim), weight ones,
    # on q_proj(h).view(..., head_dim), then apply_rotary_pos_emb ("unlike olmo, only on the head dim!")
    "qwen3": _RMS_HEAD, "qwen3_moe": _RMS_HEAD, "qwen3_vl": _RMS_HEAD,
    # Gemma3nTextAttention, Gemma4TextAttention: Gemma3nRMSNorm / Gemma4RMSNorm(head_dim), weight ones, then
    # apply_rotary_pos_emb (v_norm, weightless, touches values only); a layer that reuses another layer's keys
    # (kv_sharing_modes "reuse") reads keys normalised the same way
    "gemma3n": _RMS_HEAD, "gemma4": _RMS_HEAD,
    # Gemma3Attention: Gemma3RMSNorm(head_dim), output × (1 + weight), weight zeros, then apply_rotary_pos_emb
    "gemma3": _RMS_HEAD_1P,
    # Qwen3NextAttention, Qwen3_5Attention (the full-attention layers): RMSNorm(head_dim) × (1 + weight)
    "qwen3_next": _RMS_HEAD_1P, "qwen3_5": _RMS_HEAD_1P,
    # Olmo3Attention: q_norm = Olmo3RMSNorm(num_attention_heads · head_dim) on q_proj(h), before the view into heads
    "olmo3": QKNorm("before_rope", "all_heads", "rms", "learned"),
    # Exaone4Attention: q_norm / k_norm = Exaone4RMSNorm(head_dim) on every layer, then RoPE where the layer has it
    "exaone4": _RMS_HEAD,
    # Olmo2Attention: q_norm = Olmo2RMSNorm(num_attention_heads · head_dim) on q_proj(h), before the view into heads
    "olmo2": QKNorm("before_rope", "all_heads", "rms", "learned"),
}


# q and k norms a config switches on (transformers 5.24.0): (key, its class default, the norm)
_OPTIONAL_QK_NORM = {
    # PhiAttention: if config.qk_layernorm, nn.LayerNorm(hidden_size // num_attention_heads) (one weight and bias
    # shared by every head) on each head's q and k, before the partial rotation
    "phi": ("qk_layernorm", False, QKNorm("before_rope", "head", "layer", "learned_and_bias")),
    # StableLmAttention: if config.qk_layernorm, StableLmLayerNormPerHead: one nn.LayerNorm(head_dim, bias=False) per
    # head, before the partial rotation
    "stablelm": ("qk_layernorm", False, QKNorm("before_rope", "head", "layer", "learned_per_head")),
    # CohereAttention: if config.use_qk_norm, CohereLayerNorm(hidden_size=(heads, head_dim)): mean removed over
    # each head's head_dim, times a weight of shape (heads, head_dim), no bias; before the rotation
    "cohere": ("use_qk_norm", False, QKNorm("before_rope", "head", "layer", "learned_per_head")),
    # Glm4MoeAttention: if config.use_qk_norm, Glm4MoeRMSNorm(head_dim) on each head, before the rotation
    "glm4_moe": ("use_qk_norm", False, _RMS_HEAD),
}


# Qwen3NextGatedDeltaNet, Qwen3_5GatedDeltaNet: chunk_gated_delta_rule(..., use_qk_l2norm_in_kernel=True),
# l2norm(x) = x · rsqrt(Σ x² + 1e-6) over each head
_LINEAR_QK_NORM = QKNorm("no_rope", "head", "l2", "none")


# Llama4TextAttention: qk_norm = Llama4TextL2Norm() only if config.use_qk_norm and the layer uses RoPE, applied
# after apply_rotary_emb; despite its name it computes x · rsqrt(mean x² + eps), an RMS norm without weight
_LLAMA4_QK_NORM = QKNorm("after_rope", "head", "rms", "none")


# DeepseekV4Attention: q = q_b_norm(q_b_proj(...)) per head (DeepseekV4UnweightedRMSNorm, no weight) and
# kv = kv_norm(kv_proj(h)) (DeepseekV4RMSNorm(head_dim), a weight of ones) on the one key-value head, both before
# apply_rotary_pos_emb (modeling_deepseek_v4.py, transformers 5.25.0)
_DEEPSEEK_V4_QK_NORM = QKNorm("before_rope", "head", "rms", "learned_on_k")


def _qk_norm(config: dict, family: str, layer_type: str, rope: bool) -> QKNorm | str | None:
    """Whether and where this layer normalises q and k, as its transformers-5 attention class does."""
    if layer_type == "linear_attention":
        return _LINEAR_QK_NORM
    if family == "deepseek_v4":
        return _DEEPSEEK_V4_QK_NORM
    if family == "llama4":
        return _LLAMA4_QK_NORM if rope and config.get("use_qk_norm", True) else None
    if family == "qwen_window":  # Qwen2Attention has no q_norm; Qwen3Attention has
        family = config.get("model_type")
    if family == "generic":
        # LlamaAttention normalises neither q nor k; an unknown family's code is not known
        return None if config.get("model_type") == "llama" else QK_NORM_UNKNOWN
    rule = _QK_NORM_RULES.get(family)
    if family in _OPTIONAL_QK_NORM:
        key, default, norm = _OPTIONAL_QK_NORM[family]
        rule = norm if config.get(key, default) else None
    if rule is not None and not rope:
        return QKNorm("no_rope", rule.over, rule.kind, rule.weight)
    # every other family in FAMILIES normalises neither (DeepSeek-V3's, Kimi Linear's and GLM-5's q_a_layernorm and
    # kv_a_layernorm normalise the low-rank latents before the up-projections; the rotated key part is never
    # normalised; GLM-5's indexer normalises its own key, GlmMoeDsaIndexer.k_norm, not the attention's)
    return rule


def _count(config: dict) -> int | None:
    for key in ("num_hidden_layers", "layer_types", "no_rope_layers"):
        if config.get(key) is not None:
            value = config[key]
            return v.positive_int(key, value if key == "num_hidden_layers" else len(value))
    return None


def _pattern_types(n: int, every: int, key: str, *, offset: int = 1) -> list[str]:
    """'sliding_attention' unless (i + offset) % every == 0, the rule of Gemma, Cohere2, EXAONE 4 and OLMo 3."""
    every = v.positive_int(key, every)
    return ["sliding_attention" if (i + offset) % every else "full_attention" for i in range(n)]


# families whose transformers-5 config class declares no layer_types (so a nested rope_parameters is not read)
_NO_LAYER_TYPES = ("generic", "mistral", "phi3", "starcoder2", "qwen3_moe", "gptj", "gpt_neox", "deepseek_v3",
                   "qwen2_vl", "qwen3_vl", "ministral3")


def _nested_params(config: dict, family: str, types: list[str], notes: list[str]) -> dict[str, dict]:
    """One flat dict of RoPE parameters per layer type, as the family's config class builds ``rope_parameters``."""
    rp = config.get("rope_parameters")
    scaling = config.get("rope_scaling")
    for key, value in (("rope_parameters", rp), ("rope_scaling", scaling)):
        if value is not None and not isinstance(value, dict):
            raise TypeError(f"{key} must be a dict (or null), got {v._show(value)}")
    if family == "kimi_linear":
        return {}  # no layer turns q or k (KimiLinearAttention, KimiLinearDeltaAttention)
    if family == "deepseek_v4":
        return _deepseek_v4_params(config, types, notes)
    wanted = sorted(set(types) & {"full_attention", "sliding_attention", "chunked_attention", "indexed_attention"})
    nested = rp is not None and any(isinstance(x, dict) for x in rp.values())
    _check_nesting(config, family, types, rp, nested)
    if family in ("gemma3", "gemma3n", "olmo3", "modernbert", "gemma4"):
        out = _params_per_type(config, family, rp, scaling, nested, notes)
    elif nested:
        # Only the four families above build a rotary embedding per layer type. Every other family's rotary class
        # (e.g. Qwen3RotaryEmbedding in models/qwen3/modeling_qwen3.py, transformers 5.24.0) reads one flat dict,
        # self.config.rope_parameters["rope_type"], and a rope_parameters nested under declared layer types has no
        # such key: transformers raises a KeyError when it builds the model. So does the reader, by name.
        raise ValueError(
            f"rope_parameters is nested by layer type ({', '.join(repr(k) for k in rp)}), but model_type "
            f"{config.get('model_type', family)!r} reads one flat rope_parameters ({_FAMILY_NAMES[family]}'s rotary "
            "embedding reads rope_parameters['rope_type']; transformers 5 raises a KeyError building the model): "
            "give one flat dict"
        )
    else:
        flat = _flat_params(config, family, rp, scaling, notes)
        out = {t: dict(flat) for t in wanted}
    missing = [t for t in wanted if t not in out]
    if missing:
        raise ValueError(f"layer type {missing[0]!r} of layer_types has no entry in rope_parameters")
    return out


def _deepseek_v4_params(config: dict, types: list[str], notes: list[str]) -> dict[str, dict]:
    """DeepSeek V4's two RoPE parameter sets, "main" (sliding layers) and "compress" (CSA and HCA layers).

    Transcribed from DeepseekV4Config.__post_init__ (configuration_deepseek_v4.py, transformers 5.25.0): a flat
    rope_parameters (or the legacy rope_scaling, YaRN in the released configs) becomes the "compress" set with
    base compress_rope_theta and attention_factor 1.0 for YaRN; the "main" set is the default rotation with base
    rope_theta; both turn int(head_dim × partial_rotary_factor) dims, the factor being qk_rope_head_dim / head_dim
    (default 64 / 512). A rope_parameters already nested under "main" and "compress" is taken as it is."""
    given = config.get("rope_scaling") or config.get("rope_parameters") or {}
    if not isinstance(given, dict):
        raise TypeError(f"rope_parameters must be a dict (or null), got {v._show(given)}")
    theta = config.get("rope_theta", 10_000.0)
    head_dim = v.positive_int("head_dim", config.get("head_dim", 512))
    factor = config.get("partial_rotary_factor")
    if factor is None:
        rope_dim = config.get("qk_rope_head_dim")
        factor = 64 / 512 if rope_dim is None else v.positive_int("qk_rope_head_dim", rope_dim) / head_dim
    unknown = [k for k, x in given.items() if isinstance(x, dict) and k not in ("main", "compress")]
    if unknown:
        raise ValueError(f"rope_parameters is nested under {unknown[0]!r}: DeepSeek V4 reads only 'main' and "
                         "'compress' (DeepseekV4Config._rope_type_labels)")
    if isinstance(given.get("main"), dict) and isinstance(given.get("compress"), dict):
        lacking = [k for k in ("main", "compress") if "partial_rotary_factor" not in given[k]]
        scaled = [k for k in ("main", "compress") if given[k].get("rope_type", given[k].get("type", "default"))
                  != "default"]
        if lacking and scaled and config.get("partial_rotary_factor") is None:
            # every rope init function but the default one calls config.standardize_rope_params(), which then adds
            # DeepseekV4Config's computed partial_rotary_factor to the nested sets: buffers built before it turn the
            # whole head, those built after only qk_rope_head_dim of it (modeling_rope_utils.py, transformers 5.25.0)
            raise ValueError(
                f"rope_parameters[{lacking[0]!r}] has no partial_rotary_factor, and the {scaled[0]!r} set is "
                f"{given[scaled[0]].get('rope_type', given[scaled[0]].get('type'))!r}: transformers 5.25.0 then adds "
                "the config's partial_rotary_factor to the sets while it builds the rotary embeddings, so how many "
                "dims turn depends on the build order; give partial_rotary_factor in each set (or at the top level)"
            )
        sets = {}
        for label in ("main", "compress"):
            # convert_rope_params_to_dict: each labelled dict gets the config's rope_theta if it has none
            p = dict(given[label])
            p.setdefault("rope_theta", theta)
            if config.get("partial_rotary_factor") is not None:
                p.setdefault("partial_rotary_factor", config["partial_rotary_factor"])
            p.setdefault("rope_type", p.get("type", "default"))
            if p["rope_type"] in ("llama3", "yarn", "longrope"):  # standardize_rope_params, per nested set
                p.setdefault("original_max_position_embeddings", config.get("max_position_embeddings", 1_048_576))
            sets[label] = p
        notes.append("rope_parameters nested under 'main' and 'compress': read as given (DeepseekV4Config keeps "
                     "them, adding no attention_factor; a set without partial_rotary_factor turns the whole head)")
    else:
        flat = {k: x for k, x in given.items() if k not in ("main", "compress")}
        flat.setdefault("rope_theta", theta)
        flat.setdefault("rope_type", flat.get("type", "default"))
        if flat["rope_type"] in ("llama3", "yarn", "longrope"):
            flat.setdefault("original_max_position_embeddings", config.get("max_position_embeddings", 1_048_576))
        compress = {**flat, "rope_theta": config.get("compress_rope_theta", 160_000.0),
                    "partial_rotary_factor": factor}
        if compress["rope_type"] == "yarn":
            compress.setdefault("attention_factor", 1.0)
        sets = {"main": {"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": factor},
                "compress": compress}
    return {t: dict(sets["main" if t == "sliding_attention" else "compress"]) for t in dict.fromkeys(types)}


def _check_nesting(config: dict, family: str, types: list[str], rp, nested: bool) -> None:
    """A nested rope_parameters needs layer_types naming its keys."""
    if nested and config.get("layer_types") is None and family in _NO_LAYER_TYPES:
        raise ValueError(
            "rope_parameters is nested by layer type, but the config has no layer_types: Hugging Face reads a "
            "nested rope_parameters only under the names layer_types declares, so give layer_types"
        )
    if nested:
        unknown = [k for k, x in rp.items() if isinstance(x, dict) and k not in types]
        if unknown:
            raise ValueError(
                f"rope_parameters is nested under {unknown[0]!r}, which is not a layer type of this config "
                f"(layer_types: {sorted(set(types))}); a nested rope_parameters needs layer_types naming its keys"
            )


def _params_per_type(config: dict, family: str, rp, scaling, nested: bool, notes: list[str]) -> dict[str, dict]:
    """Gemma 3, 3n and 4, OLMo 3 and ModernBERT: one parameter dict per layer type, with each family's bases."""
    if rp is not None and not nested and rp:
        raise ValueError(
            f"rope_parameters must be nested by layer type for model_type {config.get('model_type', family)!r} "
            "(its config class reads only rope_parameters['full_attention'] and ['sliding_attention'])"
        )
    if family == "gemma4" and rp is None:
        out = {"sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
               "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                  "rope_theta": 1_000_000.0}}
        notes.append("no rope_parameters: Gemma4TextConfig's defaults (sliding: base 10,000; full: "
                     "proportional, partial_rotary_factor 0.25, base 1,000,000)")
        return out
    out = {k: dict(x) for k, x in (rp or {}).items() if isinstance(x, dict)}
    for t in ("full_attention", "sliding_attention"):
        out.setdefault(t, {"rope_type": "default"})
    if scaling:
        # Gemma 3, Gemma 3n and OLMo 3 put an old-style rope_scaling on the full layers only; ModernBERT on both
        for t in ("full_attention", "sliding_attention") if family == "modernbert" else ("full_attention",):
            out[t].update(scaling)
    full_key, local_key = {"gemma3": ("rope_theta", "rope_local_base_freq"),
                           "gemma3n": ("rope_theta", "rope_local_base_freq"),
                           "modernbert": ("global_rope_theta", "local_rope_theta"),
                           "olmo3": ("rope_theta", None), "gemma4": ("rope_theta", "rope_theta")}[family]
    full_default, local_default = {"gemma3": _DEFAULT_THETA["gemma3"], "gemma3n": _DEFAULT_THETA["gemma3n"],
                                   "modernbert": _DEFAULT_THETA["modernbert"],
                                   "olmo3": (500_000.0, 500_000.0), "gemma4": (None, None)}[family]
    for t, key, default in (("full_attention", full_key, full_default),
                            ("sliding_attention", local_key, local_default)):
        if out[t].get("rope_theta") is not None:
            continue
        if key is not None and config.get(key) is not None:
            out[t]["rope_theta"] = config[key]
            notes.append(f"{t} base from {key}")
        elif default is None:
            raise ValueError(f"rope_parameters[{t!r}] gives no rope_theta, and the config no rope_theta")
        else:
            out[t]["rope_theta"] = default
            why = ("OLMo 3's config class hands rope_theta to the full layers only; the sliding ones get "
                   "its default_theta" if family == "olmo3" and config.get("rope_theta") is not None
                   else "the config class's default_theta")
            notes.append(f"{t}: base {default:,.0f} assumed ({why})")
    return out


def _flat_params(config: dict, family: str, rp, scaling, notes: list[str]) -> dict:
    """Every other family: one flat dict for every layer, with the family's default base."""
    flat = dict(scaling or rp or {})
    if not flat and family == "gpt_oss":
        flat = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                "original_max_position_embeddings": 4096}
        notes.append("no rope_parameters: GptOssConfig's default (YaRN ×32 from 4,096, truncate False)")
    if not flat and family == "ministral3":
        flat = {"type": "yarn", "rope_theta": 1_000_000.0, "factor": 16.0, "original_max_position_embeddings": 16384,
                "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0, "mscale": 1.0,
                "llama_4_scaling_beta": 0.1}
        notes.append("no rope_parameters: Ministral3Config's default (YaRN ×16 from 16,384, β 0.1)")
    if flat.get("rope_theta") is None:
        if config.get("rope_theta") is not None:
            flat["rope_theta"] = config["rope_theta"]
        elif config.get("rotary_emb_base") is not None:
            flat["rope_theta"] = config["rotary_emb_base"]
        elif family in _DEFAULT_THETA:
            flat["rope_theta"] = _DEFAULT_THETA[family]
            notes.append(f"no rope_theta: base {flat['rope_theta']:,.0f} assumed (the config class's default_theta)")
        else:
            flat["rope_theta"] = DEFAULT_BASE
            notes.append("no rope_theta: base 10,000 assumed (the value Hugging Face uses when a config names none)")
    return flat


def _layer_table(config: dict, family: str, n: int, notes: list[str]) -> tuple[list[str], list[bool]]:
    """``layer_types`` and whether each layer has RoPE, with each family's defaults."""
    types = config.get("layer_types")
    _refuse_unread(config, family, types)
    nope = _no_rope_layers(config, family, n, notes)
    if family in FAMILY_LAYER_TYPES:
        types = _types_2026(config, family, n, notes)
    if types is None:
        types = _pattern_types_of(config, family, n, notes)
    if types is None:
        types = _types_of(config, family, n, nope, notes)
    if not isinstance(types, list | tuple) or len(types) != n:
        raise ValueError(f"layer_types must name one type for each of the {n} layers, got {v._show(types)}")
    _window_notes(config, family, types, notes)
    known = FAMILY_LAYER_TYPES.get(family, LAYER_TYPES)
    bad = [t for t in types if t not in known]
    if bad:
        who = f" for model_type {config.get('model_type')!r}" if family in FAMILY_LAYER_TYPES else ""
        raise ValueError(f"layer_types holds {bad[0]!r}; the reader knows{who} {', '.join(known)}")
    if family == "gemma4" and types[-1] != "full_attention":
        types = [*types[:-1], "full_attention"]
        notes.append("Gemma4TextConfig forces the last layer to full_attention")
    if nope is not None:
        rope = [bool(x) for x in nope]
    elif family == "kimi_linear":
        # KimiLinearAttention and KimiLinearDeltaAttention apply no rotary embedding (modeling_kimi_linear.py)
        rope = [False] * len(types)
    elif family == "cohere2":
        rope = [t == "sliding_attention" for t in types]
    elif family == "exaone4":
        hybrid = config.get("sliding_window", 4096) is not None
        rope = [not hybrid or t == "sliding_attention" for t in types]
    else:
        rope = [t != "linear_attention" for t in types]
    return list(types), rope


# DeepSeek V4's legacy per-layer compress ratios (configuration_deepseek_v4.py, _COMPRESS_RATIO_TO_LAYER_TYPE)
_COMPRESS_RATIO_TO_LAYER_TYPE = {0: "sliding_attention", 4: "compressed_sparse_attention",
                                 128: "heavily_compressed_attention"}


def _types_2026(config: dict, family: str, n: int, notes: list[str]) -> list[str]:
    """layer_types of DeepSeek V4, Kimi Linear and GLM-5, as their config classes' __post_init__ build them."""
    types = config.get("layer_types")
    if family == "deepseek_v4":
        # explicit layer_types > legacy compress_ratios (0/4/128 per layer) > 2 HCA layers then CSA/HCA alternating
        if types is None and config.get("compress_ratios") is not None:
            ratios = config["compress_ratios"]
            if not isinstance(ratios, list | tuple) or any(r not in _COMPRESS_RATIO_TO_LAYER_TYPE for r in ratios):
                raise ValueError(f"compress_ratios must list 0, 4 or 128 for each layer (DeepseekV4Config maps only "
                                 f"these to layer types), got {v._show(ratios)}")
            types = [_COMPRESS_RATIO_TO_LAYER_TYPE[r] for r in ratios]
            source = "compress_ratios"
        elif types is None:
            types = ["heavily_compressed_attention"] * min(n, 2) + [
                "compressed_sparse_attention" if i % 2 else "heavily_compressed_attention" for i in range(max(n - 2, 0))]
            notes.append("no layer_types or compress_ratios: two HCA layers, then CSA and HCA alternating "
                         "(DeepseekV4Config's default)")
            source = None
        else:
            source = "layer_types"
        if isinstance(types, list | tuple) and len(types) > n and source is not None:
            # DeepseekV4Config.__post_init__: self.layer_types = list(self.layer_types[:n])
            notes.append(f"{source} lists {len(types)} layers: the first {n} read, as DeepseekV4Config keeps "
                         f"layer_types[:num_hidden_layers] (the rest describes no decoder layer)")
            types = list(types[:n])
        return types
    if family == "kimi_linear":
        linear = config.get("linear_attn_config") or {}
        if types is None and "full_attn_layers" in linear and "kda_layers" in linear:
            types = [None] * n
            for key, name in (("full_attn_layers", "full_attention"), ("kda_layers", "linear_attention")):
                for layer in linear[key]:
                    # configuration_kimi_linear.py: layer_types[layer - 1] (1-indexed in the checkpoint)
                    if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= n:
                        raise ValueError(f"linear_attn_config.{key} holds {v._show(layer)}: layers are numbered "
                                         f"1 to {n} (1-indexed), and KimiLinearConfig sets layer_types[layer - 1]")
                    types[layer - 1] = name
            missing = [i + 1 for i, t in enumerate(types) if t is None]
            if missing:
                raise ValueError(f"linear_attn_config names layer {missing[0]} in neither full_attn_layers nor "
                                 "kda_layers (1-indexed): KimiLinearConfig leaves it without a type")
        elif types is None:
            types = ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(n)]
            notes.append("no layer_types or linear_attn_config layer lists: layers 4, 8, 12, ... full attention "
                         "(0-indexed), the others linear (KimiLinearConfig's default)")
        return types
    if family == "kimi_linear" and config.get("mla_use_nope") is False:
        notes.append("mla_use_nope false not read: transformers 5.25.0's KimiLinearAttention applies no rotary "
                     "embedding whatever it says (every released checkpoint sets it true)")
    if types is None:  # glm_moe_dsa: configuration_glm_moe_dsa.py, "Every layer is DSA"
        types = ["indexed_attention"] * n
    for key in ("rope_interleave", "indexer_rope_interleave"):
        if family == "glm_moe_dsa" and config.get(key) is False:
            notes.append(f"{key} false not read: GlmMoeDsaAttention and GlmMoeDsaIndexer always pair interleaved "
                         "dims (apply_rotary_pos_emb_interleave)")
    return types


def _refuse_unread(config: dict, family: str, types) -> None:
    """Keys a family's code never reads in the way the config asks: refused by name."""
    if family == "gemma2" and config.get("use_bidirectional_attention"):
        raise ValueError(
            "use_bidirectional_attention: model_type 'gemma2' with bidirectional attention is not read (Gemma 2's "
            "code builds its masks without Gemma 3's bidirectional window; the reader does not transcribe it)"
        )
    if family == "gemma4" and config.get("use_bidirectional_attention") not in (None, "vision"):
        # configuration_gemma4.py: use_bidirectional_attention: Literal["all", "vision"] | None; "all" halves the
        # window (sliding_window // 2 + 1) and sets is_causal False
        raise ValueError(
            f"use_bidirectional_attention {v._show(config.get('use_bidirectional_attention'))}: model_type "
            "'gemma4' is read for None or 'vision' only (with 'all', Gemma4TextConfig halves the window and the "
            "attention runs both ways on every token; the reader does not transcribe those masks)"
        )
    if family == "gemma" and config.get("use_bidirectional_attention"):
        raise ValueError(
            "use_bidirectional_attention: model_type 'gemma' with bidirectional attention is not read (GemmaAttention "
            "then sets is_causal False; the reader does not transcribe that mask)"
        )
    if family == "falcon" and "head_dim" in config:
        raise ValueError(
            f"head_dim = {v._show(config['head_dim'])}: FalconConfig's head_dim is a read-only property "
            "(hidden_size // num_attention_heads), and transformers 5.24.0 raises setting it; remove the key"
        )
    if family == "stablelm" and config.get("head_dim") is not None and config.get("hidden_size") is not None:
        split = v.positive_int("hidden_size", config["hidden_size"]) // v.positive_int(
            "num_attention_heads", config.get("num_attention_heads", 32))
        if config["head_dim"] != split:
            raise ValueError(
                f"head_dim = {v._show(config['head_dim'])}: StableLmAttention sizes its heads hidden_size // "
                f"num_attention_heads = {split} while its rotary class reads head_dim, so the model does not run; "
                "remove head_dim"
            )
    if family == "qwen3_moe" and types is not None:
        raise ValueError(
            "layer_types: model_type 'qwen3_moe' reads none (configuration_qwen3_moe.py declares no layer_types, "
            "and modeling_qwen3_moe.py windows every layer or none, by use_sliding_window); remove layer_types"
        )


def _no_rope_layers(config: dict, family: str, n: int, notes: list[str]) -> list | None:
    """``no_rope_layers`` (1 = RoPE, 0 = none), checked, or Llama 4's and SmolLM3's default; None for others."""
    nope = config.get("no_rope_layers")
    if family == "llama4" and nope is not None and len(nope) == 0:
        nope = None  # Llama4TextConfig: "self.no_rope_layers if self.no_rope_layers else default"
    if nope is not None:
        if not isinstance(nope, list | tuple) or len(nope) != n or any(x not in (0, 1, True, False) for x in nope):
            raise ValueError(
                f"no_rope_layers must list a 0 or 1 for each of the {n} layers (1 = RoPE, 0 = none), got {v._show(nope)}"
            )
    interval = config.get("no_rope_layer_interval", 4)
    if nope is None and family in ("llama4", "smollm3"):
        nope = [int((i + 1) % v.positive_int("no_rope_layer_interval", interval) != 0) for i in range(n)]
        notes.append(f"no no_rope_layers: every {interval}th layer has no RoPE (the config class's default)")
    return nope


def _pattern_types_of(config: dict, family: str, n: int, notes: list[str]) -> list[str] | None:
    """The default layer_types of a family that repeats a pattern of sliding and full layers; None for others."""
    types = None
    if family in ("gemma3", "gemma4", "cohere2"):
        default = {"gemma3": 6, "gemma4": 6, "cohere2": 4}[family]
        types = _pattern_types(n, config.get("sliding_window_pattern", default), "sliding_window_pattern")
        if "sliding_window_pattern" not in config:
            notes.append(f"no layer_types: every {default}th layer full, the others sliding (the class default)")
    elif family == "exaone4":
        if config.get("sliding_window", 4096) is None:
            types = ["full_attention"] * n
        else:
            pattern = config.get("sliding_window_pattern", 4)
            if isinstance(pattern, str):
                raise ValueError(f"sliding_window_pattern {pattern!r}: EXAONE 4's code takes an int here")
            types = _pattern_types(n, pattern, "sliding_window_pattern")
    elif family == "gemma3n":
        # configuration_gemma3n.py, Gemma3nTextConfig.__post_init__: every 5th layer full; the class has no
        # sliding_window_pattern field, so a config's own is kept as an attribute that no code reads
        types = _pattern_types(n, 5, "layer_types")
        notes.append("no layer_types: every 5th layer full, the others sliding (Gemma3nTextConfig's default)")
        if "sliding_window_pattern" in config:
            notes.append(f"sliding_window_pattern {config['sliding_window_pattern']!r} not read: Gemma 3n's "
                         "config class has no such field and builds layer_types without it")
    elif family == "olmo3":
        types = _pattern_types(n, 4, "layer_types")
        notes.append("no layer_types: every 4th layer full, the others sliding (Olmo3Config's default)")
    elif family == "gpt_oss":
        types = _pattern_types(n, 2, "layer_types")
        notes.append("no layer_types: sliding and full alternate, sliding first (GptOssConfig's default)")
    elif family == "gemma2":  # configuration_gemma2.py, Gemma2Config.__post_init__
        types = _pattern_types(n, 2, "layer_types")
        notes.append("no layer_types: sliding and full alternate, sliding first (Gemma2Config's default)")
    elif family == "modernbert":
        every = v.positive_int("global_attn_every_n_layers", config.get("global_attn_every_n_layers", 3))
        types = ["sliding_attention" if i % every else "full_attention" for i in range(n)]
        if "global_attn_every_n_layers" not in config:
            notes.append("no layer_types or global_attn_every_n_layers: layers 0, 3, 6, ... full (the default 3)")
    elif family in ("qwen3_next", "qwen3_5"):
        every = v.positive_int("full_attention_interval", config.get("full_attention_interval", 4))
        types = ["linear_attention" if (i + 1) % every else "full_attention" for i in range(n)]
        if "full_attention_interval" not in config:
            notes.append("no layer_types or full_attention_interval: every 4th layer full (the default)")
    return types


def _types_of(config: dict, family: str, n: int, nope, notes: list[str]) -> list[str]:
    """The default layer_types of every other family: from no_rope_layers, a window from a layer on, or all full."""
    if family == "llama4":
        chunk = config.get("attention_chunk_size", 8192)
        types = ["chunked_attention" if r and chunk is not None else "full_attention" for r in nope]
    elif family == "smollm3":
        sliding = config.get("use_sliding_window", False) and config.get("sliding_window") is not None
        types = ["sliding_attention" if sliding and not r else "full_attention" for r in nope]
    elif family in ("qwen_window", "qwen2_vl"):
        # configuration_qwen2.py / configuration_qwen3.py / configuration_qwen2_vl.py / configuration_qwen2_5_vl.py:
        # sliding_window (default 4096) only with use_sliding_window, and then on the layers from max_window_layers
        # (default 28; Qwen2-VL's and Qwen2.5-VL's text configs: 80) on
        sliding = config.get("use_sliding_window", False) and config.get("sliding_window", 4096) is not None
        first = config.get("max_window_layers", 28 if family == "qwen_window" else 80)
        types = ["sliding_attention" if sliding and i >= first else "full_attention" for i in range(n)]
    elif family in _EVERY_LAYER_WINDOW:
        # Mistral, Phi-3, Starcoder2, Ministral 3, Qwen3-MoE: a window, when there is one, is on every layer
        # (_window); without layer_types transformers names such layers as its cache does
        # (get_layer_types_and_kwargs in cache_utils.py, transformers 5.25.0: "sliding_attention" where
        # config.sliding_window is not None, else "full_attention"), and so does the reader
        windowed = _window(config, family, "full_attention") is not None
        types = ["sliding_attention" if windowed else "full_attention"] * n
    else:
        types = ["full_attention"] * n
        if config.get("sliding_window") is not None and family not in _EVERY_LAYER_WINDOW:
            notes.append(
                "sliding_window given without layer_types: every layer read as full attention, as Llama-style "
                "code does (Mistral's code applies the window to every layer: give model_type to be exact)"
            )
    return types


def _window_notes(config: dict, family: str, types, notes: list[str]) -> None:
    """Notes on windows that attend both ways, or on a bidirectional key a family does not read."""
    if family == "gemma3" and config.get("use_bidirectional_attention"):
        # configuration_gemma3.py: sliding_window = sliding_window // 2 + 1 (exclusive); modeling_gemma3.py ORs
        # the masks with "every key" (full layers) and |q - k| < sliding_window (sliding layers)
        half = v.positive_int("sliding_window", config.get("sliding_window", 4096)) // 2
        notes.append(f"use_bidirectional_attention: every layer attends both ways; a sliding layer sees {half} "
                     f"tokens on each side (Hugging Face's sliding_window becomes {half + 1}, an exclusive bound)")
    if family == "gemma4" and config.get("use_bidirectional_attention") == "vision":
        # modeling_gemma4.py (5.25.0), Gemma4Model.forward: create_masks_for_vision_model only when
        # use_bidirectional_attention == "vision" and the input has image tokens; its sliding mask is
        # AND(sliding_window, OR(causal, blockwise)), its full mask causal only
        notes.append("use_bidirectional_attention 'vision': the tokens of one image see each other both ways on the "
                     "sliding layers (the multimodal model's mask); text attends causally, as read here")
    if family == "gemma3n" and config.get("use_bidirectional_attention"):
        # Gemma3nTextConfig declares no use_bidirectional_attention, and modeling_gemma3n.py builds causal masks
        notes.append("use_bidirectional_attention not read: Gemma 3n's code attends causally on every layer")
    if family in ("qwen_window", "qwen2_vl") and "sliding_attention" in types and not config.get("use_sliding_window"):
        # Qwen2Config.__post_init__: sliding_window = ... if use_sliding_window else None; masking_utils.py,
        # create_sliding_window_causal_mask: "Could not find a `sliding_window` argument in the config, or it is not set"
        notes.append("layer_types names sliding layers, but use_sliding_window is false: the config class sets "
                     "sliding_window to None, so no layer has a window (transformers 5.24.0 then raises building "
                     "their sliding-window mask: the model as configured does not run)")
    if family == "modernbert" and "sliding_attention" in types:
        half = v.positive_int("local_attention", config.get("local_attention", 128)) // 2
        notes.append(f"ModernBERT's window is local_attention, the whole span: each token sees {half} on each side "
                     f"(Hugging Face's sliding_window is {half})")


def _sliding(t, r):
    return t == "sliding_attention"


# defaults each family's config class fills in, stated when the config leaves them out and a layer uses them:
# (key, default, used by a layer of this (layer_type, rope))
_CLASS_DEFAULTS = {
    "gemma2": [("sliding_window", 4096, _sliding), ("query_pre_attn_scalar", 256, lambda t, r: True)],
    "gemma3": [("sliding_window", 4096, _sliding)],
    "gemma3n": [("sliding_window", 512, _sliding)],
    "gemma4": [("sliding_window", 512, _sliding), ("global_head_dim", 512, lambda t, r: t == "full_attention")],
    "cohere2": [("sliding_window", 4096, _sliding)],
    "qwen_window": [("sliding_window", 4096, _sliding)],
    "mistral": [("sliding_window", 4096, lambda t, r: True)],
    "exaone4": [("sliding_window", 4096, lambda t, r: True)],
    "olmo3": [("sliding_window", 4096, _sliding)],
    "gpt_oss": [("sliding_window", 128, _sliding)],
    "modernbert": [("local_attention", 128, _sliding)],
    "llama4": [("attention_chunk_size", 8192, lambda t, r: t == "chunked_attention"),
               ("attn_temperature_tuning", True, lambda t, r: not r), ("attn_scale", 0.1, lambda t, r: not r),
               ("floor_scale", 8192, lambda t, r: not r)],
    "deepseek_v3": [("qk_rope_head_dim", 64, lambda t, r: True), ("qk_nope_head_dim", 128, lambda t, r: True),
                    ("rope_interleave", True, lambda t, r: True)],
    # configuration_deepseek_v4.py, DeepseekV4Config's fields (transformers 5.25.0)
    "deepseek_v4": [("head_dim", 512, lambda t, r: True), ("sliding_window", 128, lambda t, r: True),
                    ("rope_theta", 10000.0, lambda t, r: t == "sliding_attention"),
                    ("compress_rope_theta", 160000.0, lambda t, r: t != "sliding_attention"),
                    ("index_topk", 512, lambda t, r: t == "compressed_sparse_attention")],
    # configuration_kimi_linear.py, KimiLinearConfig's fields
    "kimi_linear": [("qk_nope_head_dim", 128, lambda t, r: t == "full_attention"),
                    ("qk_rope_head_dim", 64, lambda t, r: t == "full_attention")],
    # configuration_glm_moe_dsa.py, GlmMoeDsaConfig's fields
    "glm_moe_dsa": [("qk_rope_head_dim", 64, lambda t, r: True), ("qk_nope_head_dim", 192, lambda t, r: True),
                    ("index_topk", 2048, lambda t, r: True), ("index_head_dim", 128, lambda t, r: True)],
}


# families whose attention windows every layer alike, with their config class's default sliding_window
# (Qwen3-MoE's only with use_sliding_window)
_EVERY_LAYER_WINDOW = {"mistral": 4096, "phi3": None, "starcoder2": None, "qwen3_moe": 4096, "ministral3": None}


def _window(config: dict, family: str, layer_type: str) -> int | None:
    if family == "deepseek_v4":
        # DeepseekV4Attention: sliding_window=config.sliding_window on every layer (the CSA and HCA layers add
        # their compressed entries to the window's keys)
        return v.positive_int("sliding_window", config.get("sliding_window", 128))
    if layer_type == "chunked_attention":
        return v.positive_int("attention_chunk_size", config.get("attention_chunk_size", 8192))
    if family in ("mistral", "phi3", "starcoder2", "ministral3"):
        # MistralAttention, Phi3Attention, Starcoder2Attention, Ministral3Attention: sliding_window=getattr(config,
        # "sliding_window", None) on every layer; the config classes default it to 4096 (Mistral) or None (Phi-3,
        # Starcoder2, Ministral 3)
        window = config.get("sliding_window", _EVERY_LAYER_WINDOW[family])
        return None if window is None else v.positive_int("sliding_window", window)
    if family == "qwen3_moe":  # Qwen3MoeConfig: sliding_window (default 4096) only with use_sliding_window
        window = config.get("sliding_window", 4096) if config.get("use_sliding_window", False) else None
        return None if window is None else v.positive_int("sliding_window", window)
    if layer_type != "sliding_attention":
        return None
    if family in ("qwen_window", "qwen2_vl") and not config.get("use_sliding_window", False):
        # Qwen2Config.__post_init__ (and Qwen3's, Qwen2-VL's): sliding_window = ... if use_sliding_window else None,
        # and Qwen2Attention takes config.sliding_window on a sliding layer: no window, whatever layer_types say
        return None
    if family == "modernbert":
        # the whole window (Hugging Face's sliding_window is half of it: the model attends ± local_attention / 2)
        return v.positive_int("local_attention", config.get("local_attention", 128))
    if family == "gemma3" and config.get("use_bidirectional_attention"):
        # the whole bidirectional span: ± sliding_window // 2 (see _layer_table)
        return 2 * (v.positive_int("sliding_window", config.get("sliding_window", 4096)) // 2)
    defaults = {"gemma2": 4096, "gemma3": 4096, "gemma3n": 512, "gemma4": 512, "cohere2": 4096, "exaone4": 4096,
                "olmo3": 4096, "gpt_oss": 128, "qwen_window": 4096, "qwen2_vl": 4096}
    window = config.get("sliding_window", defaults.get(family))
    if window is None:
        raise ValueError(f"a {layer_type} layer needs sliding_window, and the config has none")
    return v.positive_int("sliding_window", window)
