"""A literal KV-cache count for the bundled models: raw JSON fields, plain loops, nothing from posenc_helpers.

Written from transformers 5.24.0 independently of posenc_helpers.kvcache and of layer_positions:

* cache_utils.py, get_layer_types_and_kwargs: config.layer_types when the config has them, else "sliding_attention"
  for a layer whose sliding_window is set; DynamicLayer.update keeps every token (torch.cat);
  DynamicSlidingWindowLayer.update keeps full_key_states[:, :, -sliding_window + 1:, :];
  LinearAttentionLayer keeps a conv state (conv_dim, kernel) and a recurrent state (v_heads, k_dim, v_dim);
* configuration_qwen2.py / configuration_qwen2_5_vl.py: sliding layers only with use_sliding_window, from
  max_window_layers on; configuration_mistral.py / configuration_phi3.py: no layer_types, so sliding_window
  windows every layer;
* modeling_deepseek_v3.py, DeepseekV3Attention.forward: cache.update(kv_nope, k_rot), kv_lora_rank + qk_rope_head_dim;
* modeling_qwen3_5.py, Qwen3_5GatedDeltaNet: conv_dim = 2 · key_dim + value_dim; torch_chunk_gated_delta_rule casts
  to float32, so the recurrent state is 4 bytes a number.

The designs of 2026 (:func:`literal_cache_2026`) are written from transformers 5.25.0: configuration_gemma4.py
(per_layer_config, kv_sharing_modes), configuration_llama4.py, configuration_/modeling_deepseek_v4.py
(DeepseekV4HCACache, DeepseekV4CSACache, the two compressors and the indexer), configuration_/modeling_glm_moe_dsa.py
with cache_utils.py's DynamicIndexedLayer, and configuration_/modeling_kimi_linear.py.
"""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "posenc_helpers" / "data" / "rope_configs.json"

BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


def raw_models() -> dict:
    """{name: entry} straight from the JSON file."""
    return {m["name"]: m for m in json.loads(DATA.read_text(encoding="utf-8"))["models"]}


def language_fields(entry) -> tuple[dict, dict]:
    """(the language model's keys, the outer keys): RoPE config and kv fields laid over each other by hand."""
    config, kv = entry["config"], entry["kv"]
    outer = {}
    for key in config:
        outer[key] = config[key]
    for key in kv.get("top_level_fields") or {}:
        outer[key] = kv["top_level_fields"][key]
    lang = {}
    base = config["text_config"] if kv["level"] == "text_config" else config
    for key in base:
        lang[key] = base[key]
    for key in kv["fields"]:
        lang[key] = kv["fields"][key]
    return lang, outer


def bytes_per_number(lang, outer):
    """The bytes of the stated dtype, or None when no file states one."""
    for part in (outer, lang):
        for key in ("dtype", "torch_dtype"):
            if part.get(key) is not None:
                return BYTES[part[key]]
    return None


def layer_plan(lang) -> list[tuple[str, int | None]]:
    """(kind, window) for every layer: "full", "sliding", or "linear"."""
    n = lang.get("num_hidden_layers")
    if n is None:
        n = lang["n_layer"]
    model_type = lang.get("model_type")
    plan = []
    for i in range(n):
        if lang.get("layer_types") is not None:
            name = lang["layer_types"][i]
            if name == "sliding_attention":
                plan.append(("sliding", lang["sliding_window"]))
            elif name == "linear_attention":
                plan.append(("linear", None))
            else:
                plan.append(("full", None))
        elif model_type in ("mistral", "phi3") and lang.get("sliding_window") is not None:
            plan.append(("sliding", lang["sliding_window"]))
        elif model_type in ("qwen2", "qwen2_5_vl") and lang.get("use_sliding_window") and i >= lang["max_window_layers"]:
            plan.append(("sliding", lang["sliding_window"]))
        else:
            plan.append(("full", None))
    return plan


def numbers_per_token(lang) -> int:
    """Numbers one full or sliding layer caches per token."""
    if "kv_lora_rank" in lang:
        return lang["kv_lora_rank"] + lang["qk_rope_head_dim"]
    heads = lang.get("num_attention_heads")
    if heads is None:
        heads = lang["n_head"]
    hidden = lang.get("hidden_size")
    if hidden is None:
        hidden = lang["n_embd"]
    kv_heads = lang.get("num_key_value_heads")
    if kv_heads is None:
        kv_heads = heads
    head_dim = lang.get("head_dim")
    if head_dim is None:
        head_dim = hidden // heads
    return 2 * kv_heads * head_dim


def held(kind, window, context) -> int:
    """Tokens a layer holds after context tokens."""
    if kind == "linear":
        return 0
    if kind == "full":
        return context
    keep = window - 1
    if context < keep:
        return context
    return keep


def linear_state(lang) -> tuple[int, int]:
    """(conv numbers, recurrent numbers) of one linear-attention layer."""
    key_dim = lang["linear_key_head_dim"] * lang["linear_num_key_heads"]
    value_dim = lang["linear_value_head_dim"] * lang["linear_num_value_heads"]
    conv = (key_dim + key_dim + value_dim) * lang["linear_conv_kernel_dim"]
    recurrent = lang["linear_num_value_heads"] * lang["linear_key_head_dim"] * lang["linear_value_head_dim"]
    return conv, recurrent


def literal_cache(entry, context) -> tuple[int, int | None]:
    """(numbers cached, bytes cached or None without a dtype) after context tokens, one layer at a time."""
    lang, outer = language_fields(entry)
    size = bytes_per_number(lang, outer)
    if lang.get("model_type") in FAMILIES_2026:
        model, float32 = literal_cache_2026(lang, context)
        return model + float32, (model * size + float32 * 4 if size is not None else None)
    per_token = numbers_per_token(lang)
    numbers, total = 0, 0
    for kind, window in layer_plan(lang):
        if kind == "linear":
            conv, recurrent = linear_state(lang)
            numbers += conv + recurrent
            if size is not None:
                total += conv * size + recurrent * 4
        else:
            count = per_token * held(kind, window, context)
            numbers += count
            if size is not None:
                total += count * size
    return numbers, (total if size is not None else None)


def reach_by_simulation(windows, context) -> list[int]:
    """How far back the last token's state depends, after each layer, by propagating sets of source positions."""
    sources = [{p} for p in range(context)]
    out = []
    for window in windows:
        new = []
        for p in range(context):
            seen = set()
            for k in range(p + 1):
                if window is None or p - k < window:
                    seen |= sources[k]
            new.append(seen)
        sources = new
        out.append((context - 1) - min(sources[context - 1]))
    return out


def sliding_cache_by_updates(window, chunks) -> int:
    """DynamicSlidingWindowLayer.update on a list: append each chunk, keep [-window + 1:]; return what is kept."""
    kept: list[int] = []
    position = 0
    for size in chunks:
        full = kept + list(range(position, position + size))
        position += size
        kept = full[-window + 1:]
    return len(kept)


# --- hand-built configs of the families read since issue 42, each as its transformers 5.24.0 attention sizes k_proj ---

# the config classes' field defaults (configuration_<m>.py): num_key_value_heads, head_dim
KV_DEFAULTS = {"glm": (2, 128), "glm4": (2, 128), "glm4_moe": (8, None), "gemma": (16, 256), "stablelm": (32, None)}


def family_numbers_per_token(c) -> int:
    """Numbers one layer caches per token: 2 · (heads of k_proj's output as the cache receives them) · head width."""
    model_type = c["model_type"]
    heads = c["num_attention_heads"]
    split = c["hidden_size"] // heads
    if model_type == "falcon":
        # FalconAttention.forward: num_kv_heads = num_heads with new_decoder_architecture (keys broadcast to every
        # query head), else self.num_kv_heads: 1 with multi_query (default True)
        if c.get("new_decoder_architecture"):
            kv = heads
        elif c.get("multi_query", True):
            kv = 1
        else:
            kv = heads
        return 2 * kv * split
    kv_default, head_default = KV_DEFAULTS.get(model_type, (heads, None))
    kv = c["num_key_value_heads"] if "num_key_value_heads" in c else kv_default
    if model_type == "stablelm":  # StableLmAttention: head_dim = hidden_size // num_heads
        return 2 * kv * split
    head = c.get("head_dim")
    if head is None:
        head = head_default if head_default is not None else split
    return 2 * kv * head


def family_cache(c, context, bytes_per_number) -> int:
    """Bytes after context tokens: every layer full, or every layer a window W keeping W − 1 (Ministral 3)."""
    per_token = family_numbers_per_token(c) if c["model_type"] != "ministral3" else 2 * c["num_key_value_heads"] * c["head_dim"]
    window = c.get("sliding_window") if c["model_type"] == "ministral3" else None
    total = 0
    for _layer in range(c["num_hidden_layers"]):
        total += per_token * held("full" if window is None else "sliding", window, context) * bytes_per_number
    return total


# --- the designs of 2026, from transformers 5.25.0 -------------------------------------------------------------------

FAMILIES_2026 = ("gemma4_text", "llama4_text", "deepseek_v4", "glm_moe_dsa", "kimi_linear")


def _upto(context, keep) -> int:
    """What DynamicSlidingWindowLayer's [-W + 1:] leaves after context tokens, keep = W − 1."""
    if context < keep:
        return context
    return keep


def literal_cache_2026(lang, context) -> tuple[int, int]:
    """(numbers in the model's dtype, numbers in float32) after a prefill of context tokens."""
    model_type = lang["model_type"]
    n = lang["num_hidden_layers"]
    model, float32 = 0, 0
    if model_type == "gemma4_text":
        # Gemma4TextConfig: a full layer's head_dim is global_head_dim, its kv heads num_global_key_value_heads when
        # attention_k_eq_v (values = keys, both still cached: cache.update(key_states, value_states)); the last
        # num_kv_shared_layers layers are "reuse" (a DummyLayer: nothing cached)
        first_shared = n - lang.get("num_kv_shared_layers", 0)
        for i in range(first_shared):
            if lang["layer_types"][i] == "sliding_attention":
                model += 2 * lang["num_key_value_heads"] * lang["head_dim"] * _upto(context, lang["sliding_window"] - 1)
            else:
                heads = lang["num_key_value_heads"]
                if lang.get("attention_k_eq_v", False) and lang.get("num_global_key_value_heads") is not None:
                    heads = lang["num_global_key_value_heads"]
                model += 2 * heads * lang["global_head_dim"] * context
    elif model_type == "llama4_text":
        # Llama4TextConfig: no_rope_layers default int((i + 1) % 4 != 0); a RoPE layer is chunked_attention, cached
        # in a DynamicSlidingWindowLayer of attention_chunk_size; a NoPE layer full
        no_rope = lang.get("no_rope_layers") or [int((i + 1) % 4 != 0) for i in range(n)]
        for i in range(n):
            held = _upto(context, lang["attention_chunk_size"] - 1) if no_rope[i] else context
            model += 2 * lang["num_key_value_heads"] * lang["head_dim"] * held
    elif model_type == "deepseek_v4":
        model, float32 = _deepseek_v4_literal(lang, context)
    elif model_type == "glm_moe_dsa":
        # DynamicIndexedLayer on every layer: cache.update(k_pass, k_rot) (kv_lora_rank, qk_rope_head_dim) and, where
        # the layer has its own GlmMoeDsaIndexer ("full"), update_indexer(k) (index_head_dim); GLM-5 states no
        # index_topk_freq or pattern: freq 1, every layer "full"
        assert lang.get("index_topk_freq") is None and lang.get("index_topk_pattern") is None
        for _ in range(n):
            model += (lang["kv_lora_rank"] + lang["qk_rope_head_dim"] + lang["index_head_dim"]) * context
    elif model_type == "kimi_linear":
        linear = lang["linear_attn_config"]
        full = [layer - 1 for layer in linear["full_attn_layers"]]  # 1-indexed in the checkpoint
        for i in range(n):
            if i in full:  # KimiLinearAttention: cache.update(kv_nope, k_rot), never rotated
                model += (lang["kv_lora_rank"] + lang["qk_rope_head_dim"]) * context
            else:  # LinearAttentionLayer: conv state (3 · heads · head_dim, kernel); recurrent (heads, d, d), float32
                model += 3 * linear["num_heads"] * linear["head_dim"] * linear["short_conv_kernel_size"]
                float32 += linear["num_heads"] * linear["head_dim"] * linear["head_dim"]
    return model, float32


def _deepseek_v4_literal(lang, context) -> tuple[int, int]:
    """DeepSeek V4 by list simulation of a prefill: each cache class's update and store_compression_weights."""
    ratio_to_type = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}
    rates = {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}  # default_compress_rates
    head, index, window = lang["head_dim"], lang["index_head_dim"], lang["sliding_window"]
    model, float32 = 0, 0
    for ratio in lang["compress_ratios"][: lang["num_hidden_layers"]]:  # layer_types[:num_hidden_layers]
        layer_type = ratio_to_type[ratio]
        tokens = list(range(context))
        kept = tokens[-window + 1:]  # full[:, :, -self.sliding_window + 1:, :]
        if layer_type == "sliding_attention":
            model += 2 * head * len(kept)  # DynamicSlidingWindowLayer: self.keys and self.values, two tensors
            continue
        model += head * len(kept)  # DeepseekV4HCACache.update: self.values = self.keys, one tensor
        rate = rates[layer_type]
        csa = layer_type == "compressed_sparse_attention"
        # (name, width of one entry, width of kv_proj = width of gate_proj)
        compressors = [("compressor", head, 2 * head if csa else head)]
        if csa:
            compressors.append(("indexer", index, 2 * index))
        for _name, width, proj in compressors:
            usable = (len(tokens) // rate) * rate  # store_compression_weights: the window-aligned prefix
            buffered = tokens[usable:]  # buffer_kv and buffer_gate keep the rest
            entries = usable // rate  # update_compressor_states: one entry per window
            model += entries * width + len(buffered) * (proj + proj)
            if csa and entries > 0:  # update_overlap_state: chunk[:, -1, :, :head_dim] of kv and of gate
                model += rate * width  # overlap_kv, the model's dtype
                float32 += rate * width  # overlap_gate: gate + position_bias (a float32 parameter)
    return model, float32


def deepseek_v4_entries_by_updates(rate, chunks) -> tuple[int, int, list[int]]:
    """store_compression_weights and update_compressor_states on lists, over prefill/decode chunks: (entries,
    buffered tokens, the position each entry is rotated at: first_window_position + i · rate)."""
    buffer: list[int] = []
    entry_count = 0
    positions: list[int] = []
    position = 0
    for size in chunks:
        kv = buffer + list(range(position, position + size))
        position += size
        first_window_position = entry_count * rate
        usable = (len(kv) // rate) * rate
        buffer = kv[usable:]
        n_windows = usable // rate
        positions += [first_window_position + i * rate for i in range(n_windows)]
        entry_count += n_windows
    return entry_count, len(buffer), positions
