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
