"""One record per decoder layer: :func:`layer_positions`, and the frequencies of a config.

:func:`layer_positions` applies the family's rules (:mod:`.families`) to a
config and builds one :class:`~.records.LayerPositions` per layer;
:func:`frequencies_from_config` answers for a config whose layers all turn
alike. Taught in notebooks/11-rope-as-shipped.ipynb and
notebooks/14-position-per-layer.ipynb.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

import numpy as np

from .. import _validate as v
from .families import (
    _CLASS_DEFAULTS,
    _EVERY_LAYER_WINDOW,
    _FAMILY_NAMES,
    _NO_LAYER_TYPES,
    _PER_LAYER_KEYS,
    FAMILIES,
    PARTIAL_DEFAULTS,
    UNTYPED_NOTE,
    _assumed_note,
    _count,
    _family,
    _family_keys_set,
    _layer_table,
    _nested_params,
    _qk_norm,
    _untyped_llama,
    _window,
    check_family,
)
from .load import load_config
from .records import CompressedBranch, Indexer, LayerPositions, llama4_query_temperature, llama_4_scaling_temperature
from .single import (
    _HEAD_DIM_DEFAULTS,
    DEFAULT_BASE,
    RopeSettings,
    _head_dim,
    _number,
    _phi3,
    _settings,
    _single_frequencies,
)


def _resolve(config, *, need_count: bool, assume=None, settings: dict | None = None
             ) -> tuple[list[LayerPositions], list[str], str]:
    """The records of every layer, the notes on what the reader fell back to, and the family it read as.

    ``settings``, when given, receives each layer type's :class:`~.single.RopeSettings`."""
    notes: list[str] = []
    config = _language_model(config, notes)
    family = _family(config, notes, assume)
    n = _count(config)
    if n is None:
        if need_count or family not in _NO_LAYER_TYPES:
            raise ValueError(
                "num_hidden_layers is missing: layer_positions returns one record per layer"
                + ("" if need_count else f", and {_FAMILY_NAMES[family]}'s layer pattern depends on the count")
            )
        n = 1
    types, rope = _layer_table(config, family, n, notes)
    params = _nested_params(config, family, types, notes)
    given = config.get("rope_parameters")
    # whether Hugging Face's config.rope_parameters ends up nested by layer type
    hf_nested = family in ("gemma3", "gemma3n", "olmo3", "modernbert", "gemma4", "deepseek_v4") or (
        isinstance(given, dict) and any(isinstance(x, dict) for x in given.values()))
    head, qk_width = _head_widths(config, family, params, notes)
    kinds = {t: _layer_kind(config, family, t, p, head[t], hf_nested, len(params) == 1, notes)
             for t, p in params.items()}
    layout = _layout(config, family)
    # a layer type without RoPE parameters (linear attention) takes the attention layers' width, or with none
    # (a config of linear-attention layers only) the config's own head width
    fallback = None if family == "kimi_linear" else next(iter(head.values()), None) or _head_dim(config)
    indexer_types = _indexer_types(config, family, len(types))
    records = [_record(config, family, t, r, kinds, _width(config, family, t, qk_width, head, fallback), layout,
                       indexer_types[i]) for i, (t, r) in enumerate(zip(types, rope, strict=True))]
    kinds_present = {(r.layer_type, r.rope) for r in records}
    for key, default, relevant in _CLASS_DEFAULTS.get(family, ()):
        if key == "sliding_window" and all(r.window is None for r in records):
            continue  # no layer has a window (Qwen2 without use_sliding_window): the default is not used
        if key not in config and any(relevant(t, r) for t, r in kinds_present):
            notes.append(f"no {key}: {default!r} (the {_FAMILY_NAMES[family]} config class's default)")
    for t, (kind_settings, *_rest) in kinds.items():
        for note in kind_settings.notes:
            if "assumed" in note:
                notes.append(f"{t}: {note}")
        if settings is not None:
            settings[t] = kind_settings
    return records, notes, family


def _plan(config, *, assume=None) -> tuple[list[tuple[str, int | None, bool]], list[str], str]:
    """(layer_type, window, rope) per layer, the notes and the family, without reading any RoPE parameter.

    What the KV-cache count needs: the same family checks, layer table and windows as :func:`layer_positions`,
    but no frequencies, so a RoPE-only key the count does not need (an mrope_section, a scaling factor) cannot
    stop it."""
    notes: list[str] = []
    config = _language_model(config, notes)
    family = _family(config, notes, assume)
    n = _count(config)
    if n is None:
        raise ValueError("num_hidden_layers is missing: the count has one entry per layer")
    types, rope = _layer_table(config, family, n, notes)
    return [(t, _window(config, family, t), bool(r)) for t, r in zip(types, rope, strict=True)], notes, family


def _language_model(config, notes: list[str]) -> dict:
    """The config the decoder layers read: a multimodal config's text_config (keeping its model_type)."""
    config = _phi3(load_config(config))
    if isinstance(config.get("text_config"), dict):
        inner = dict(config["text_config"])
        if "model_type" not in inner and "model_type" in config:
            inner["model_type"] = config["model_type"]
        notes.append("read from text_config (the language model's part of a multimodal config)")
        config = inner
    return config


def _head_widths(config: dict, family: str, params: dict, notes: list[str]) -> tuple[dict[str, int], int | None]:
    """The rotated head width per layer type, and the q·k width the softmax scale divides by (MLA only)."""
    if family in ("deepseek_v3", "glm_moe_dsa"):
        # DeepseekV3Config / GlmMoeDsaConfig: head_dim = qk_rope_head_dim, the rotary embedding's width
        rope_dim = v.positive_int("qk_rope_head_dim", config.get("qk_rope_head_dim", 64))
        nope_default = 128 if family == "deepseek_v3" else 192
        nope_dim = v.positive_int("qk_nope_head_dim", config.get("qk_nope_head_dim", nope_default))
        return {t: rope_dim for t in params}, rope_dim + nope_dim
    if family == "deepseek_v4":  # DeepseekV4Attention: one head_dim (512) for q, k = v; RoPE on part of it
        return {t: v.positive_int("head_dim", config.get("head_dim", 512)) for t in params}, None
    if family == "kimi_linear":
        return {}, None  # no layer turns: the widths of its records come from _width
    if family in _HEAD_DIM_RULES:
        common = _family_head_dim(config, family, notes)
    elif config.get("head_dim"):
        common = v.positive_int("head_dim", config["head_dim"])
    elif family in ("gemma2", "gemma3", "gemma3n", "gemma4") or family == "qwen3_next":
        common = 256
        notes.append("no head_dim: 256 assumed (the config class's default)")
    elif config.get("model_type") in _HEAD_DIM_DEFAULTS:
        # the config class states head_dim, so transformers never falls back to hidden_size / heads
        common = _HEAD_DIM_DEFAULTS[config["model_type"]]
        notes.append(f"no head_dim: {common} assumed (the config class's default)")
    else:
        common = _settings({**config, "rope_scaling": None, "rope_parameters": None}).head_dim
    head = {t: common for t in params}
    if family == "gemma4":
        head["full_attention"] = v.positive_int("global_head_dim", config.get("global_head_dim", 512))
    return head, None


# How the attention of each family below sizes its heads in transformers 5.24.0 when the config has no head_dim:
# "split" is hidden_size // num_attention_heads (getattr(config, "head_dim", hidden_size // num_attention_heads),
# or Cohere2Config.__post_init__, whose split a config's own head_dim key then replaces), an int the config class's
# field default; and whether an explicit null is read (NemotronConfig.__post_init__ turns it into the split).
# Falcon and StableLM always split (their head_dim keys are refused in families._refuse_unread).
_HEAD_DIM_RULES = {
    "olmo2": ("split", False), "phi": ("split", False), "cohere": ("split", False), "glm4_moe": ("split", False),
    "cohere2": ("split", False), "glm": (128, False), "gemma": (256, False), "nemotron": ("split", True),
    "stablelm": ("always split", False), "falcon": ("always split", False),
}


def _family_head_dim(config: dict, family: str, notes: list[str]) -> int:
    """head_dim as the family's attention reads it (:data:`_HEAD_DIM_RULES`), a null refused where it breaks."""
    default, null_is_split = _HEAD_DIM_RULES[family]
    if default != "always split" and config.get("head_dim") is not None:
        return v.positive_int("head_dim", config["head_dim"])
    if default != "always split" and "head_dim" in config and not null_is_split:
        raise ValueError(f"head_dim is null, which model_type {config.get('model_type')!r} does not read "
                         f"({_FAMILY_NAMES[family]}'s attention takes the null as its width): give a number")
    if isinstance(default, int):
        notes.append(f"no head_dim: {default} assumed (the config class's default)")
        return default
    for key in ("hidden_size", "num_attention_heads"):
        if config.get(key) is None:
            raise ValueError(f"{key} is missing, and {_FAMILY_NAMES[family]}'s attention sizes its heads "
                             "hidden_size // num_attention_heads")
    return v.positive_int("hidden_size", config["hidden_size"]) // v.positive_int(
        "num_attention_heads", config["num_attention_heads"])


def _width(config: dict, family: str, t: str, qk_width, head: dict, fallback) -> int:
    """The q·k width of a layer of type ``t``: what its softmax scale divides by and its record's head_dim."""
    if family == "kimi_linear":
        if t == "linear_attention":  # KimiLinearDeltaAttention: head_dim = config.linear_head_dim
            return _kimi_linear_sizes(config)["head_dim"]
        # KimiLinearAttention: qk_head_dim = qk_nope_head_dim + qk_rope_head_dim (the rope slice is never turned)
        return (v.positive_int("qk_nope_head_dim", config.get("qk_nope_head_dim", 128))
                + v.positive_int("qk_rope_head_dim", config.get("qk_rope_head_dim", 64)))
    return qk_width or head.get(t, fallback)


def _kimi_linear_sizes(config: dict) -> dict[str, int]:
    """KDA's head_dim, heads and conv kernel, as KimiLinearConfig.__post_init__ reads them: linear_attn_config's
    head_dim / num_heads / short_conv_kernel_size, else linear_head_dim / linear_num_heads / linear_conv_kernel_dim
    (defaults 128, 32, 4)."""
    linear = config.get("linear_attn_config") or {}
    if not isinstance(linear, dict):
        raise TypeError(f"linear_attn_config must be a dict, got {v._show(linear)}")
    out = {}
    for name, key, field, default in (("head_dim", "head_dim", "linear_head_dim", 128),
                                      ("heads", "num_heads", "linear_num_heads", 32),
                                      ("kernel", "short_conv_kernel_size", "linear_conv_kernel_dim", 4)):
        value = linear.get(key, config.get(field, default))
        out[name] = v.positive_int(f"linear_attn_config.{key}" if key in linear else field, value)
    return out


def _layout(config: dict, family: str) -> str:
    """Which dims form a pair: Llama 4, Cohere, Cohere2, GLM and GPT-J interleave, DeepSeek-V3 unless
    rope_interleave is off (GLM on its rotated part only: apply_rotary_pos_emb in modeling_glm.py); DeepSeek V4
    (apply_rotary_pos_emb: repeat_interleave and the even/odd rotate_half) and GLM-5
    (apply_rotary_pos_emb_interleave) always."""
    if family in ("llama4", "cohere2", "gptj", "cohere", "glm", "deepseek_v4", "glm_moe_dsa"):
        return "interleaved"
    if family == "deepseek_v3":
        return "interleaved" if config.get("rope_interleave", True) else "half-split"
    return "half-split"


def _layer_kind(config, family, t, p, head_dim, hf_nested, only_kind, notes) -> tuple:
    """(settings, inv_freq, attention factor, parameters) of one layer type, as its family's rotary class reads them."""
    p = _family_rope_params(config, family, t, dict(p), hf_nested, notes)
    max_pos = config.get("max_position_embeddings", config.get("n_positions"))
    single = {"head_dim": head_dim, "rope_parameters": p, "max_position_embeddings": max_pos}
    for key in ("rotary_dim", "rotary_pct"):
        if config.get(key) is not None:
            single[key] = config[key]
    if only_kind and config.get("original_max_position_embeddings") is not None:
        single["original_max_position_embeddings"] = config["original_max_position_embeddings"]
    settings = _settings(single)
    inv, att = _single_frequencies(single)
    return settings, np.asarray(inv, dtype=np.float64), float(att), p


def _family_rope_params(config, family, t, p, hf_nested, notes) -> dict:
    """One layer type's RoPE parameters with what its family's code adds, drops or fixes."""
    raw_type = p.get("rope_type", p.get("type", "default"))
    if (family in ("qwen3_next", "qwen3_5", *PARTIAL_DEFAULTS) and "partial_rotary_factor" not in p
            and config.get("partial_rotary_factor") is None):
        p["partial_rotary_factor"] = PARTIAL_DEFAULTS.get(family, 0.25)
        notes.append(f"no partial_rotary_factor: {p['partial_rotary_factor']} (the {_FAMILY_NAMES[family]} "
                     "config class's default)")
    elif config.get("partial_rotary_factor") is not None:
        p.setdefault("partial_rotary_factor", config["partial_rotary_factor"])
    for key in ("partial_rotary_factor", "rotary_pct"):
        value = p.get(key, config.get(key))
        if value is not None and not 0.0 < _number(key, value) <= 1.0:
            raise ValueError(f"{key} must be a fraction in (0, 1], got {value!r}")
    if family == "gpt_neox" and p.get("partial_rotary_factor") is None and config.get("rotary_pct") is None:
        p["partial_rotary_factor"] = 0.25
        notes.append("no rotary_pct: 0.25 (GPTNeoXConfig's default)")
    if family == "gptj":
        if config.get("rotary_dim") is None:
            raise ValueError("a GPT-J config needs rotary_dim (GPT-J's code otherwise sizes its table by "
                             "hidden_size, not by the head)")
        if float(p.get("rope_theta", DEFAULT_BASE)) != DEFAULT_BASE:
            notes.append(f"rope_theta {p['rope_theta']} not read: GPT-J's create_sinusoidal_positions fixes 10000")
        p["rope_theta"] = DEFAULT_BASE
    if (family not in ("generic", "qwen3_next", "qwen3_5", "gpt_neox", "deepseek_v4", *PARTIAL_DEFAULTS)
            and raw_type in ("default", "mrope")
            and p.get("partial_rotary_factor") not in (None, 1, 1.0)):
        # the family's compute_default_rope_parameters reads no partial_rotary_factor: the whole head turns
        notes.append(f"{t}: partial_rotary_factor {p.pop('partial_rotary_factor')} not read: "
                     f"{_FAMILY_NAMES[family]}'s default rotary code turns the whole head")
    if raw_type == "yarn" and hf_nested and "truncate" in p and p["truncate"] is not True:
        # _compute_yarn_parameters reads config.rope_parameters.get("truncate", True): the top level
        p["truncate"] = True
        notes.append(f"{t}: truncate read as True, as Hugging Face does for a nested rope_parameters")
    return p


def _record(config, family, t, r, kinds, width, layout, indexer_type=None) -> LayerPositions:
    """The record of one layer of type ``t``, with RoPE when ``r``."""
    if t == "linear_attention" or t not in kinds:
        settings, inv, att, p = None, None, 1.0, {}
    else:
        settings, inv, att, p = kinds[t]
    section, interleaved = _mrope(family, p, r, inv)
    turns = bool(r and settings is not None)
    return LayerPositions(
        layer_type=t, window=_window(config, family, t), rope=bool(r and settings is not None),
        inv_freq=None if not r or inv is None else inv.copy(),
        rotary_dim=0 if not r or settings is None else settings.rotary_dim,
        attention_factor=att if r else 1.0, layout=layout, softmax_scale=_softmax_scale(config, family, width, p),
        query_temperature=_temperature(config, family, r, p), head_dim=width,
        rope_type=settings.rope_type if r and settings else None,
        base=settings.base if r and settings else None,
        factor=settings.factor if r and settings else None,
        mrope_section=section, mrope_interleaved=interleaved,
        qk_norm=_qk_norm(config, family, t, turns),
        read_as=_read_as(config, family),
        rotated=None if not turns else "trailing" if family in ("deepseek_v3", "deepseek_v4", "glm_moe_dsa")
        else "leading",
        compressed=_compressed(config, family, t),
        indexer=_indexer(config, family, t, settings.rotary_dim if turns else 0, indexer_type),
        sinks=family in ("gpt_oss", "deepseek_v4"),
    )


def _compressed(config: dict, family: str, t: str) -> CompressedBranch | None:
    """DeepSeek V4's compressed branch of a CSA or HCA layer (DeepseekV4CSACompressor, DeepseekV4HCACompressor)."""
    if family != "deepseek_v4" or t == "sliding_attention":
        return None
    rate = _compress_rates(config)[t]
    if t == "compressed_sparse_attention":  # entry w pools block w − 1's Ca and block w's Cb: 2m tokens
        return CompressedBranch(rate=rate, span=2 * rate,
                                top_k=v.positive_int("index_topk", config.get("index_topk", 512)))
    return CompressedBranch(rate=rate, span=rate, top_k=None)


def _compress_rates(config: dict) -> dict[str, int]:
    """DeepseekV4Config.compress_rates: the config's dict, else {CSA: 4, HCA: 128}, with the legacy
    compress_rate_csa / compress_rate_hca folded in (configuration_deepseek_v4.py, __post_init__)."""
    given = config.get("compress_rates")
    if given is not None and not isinstance(given, dict):
        raise TypeError(f"compress_rates must be a dict of layer type to rate, got {v._show(given)}")
    rates = dict(given) if given is not None else {"compressed_sparse_attention": 4,
                                                     "heavily_compressed_attention": 128}
    for key, t in (("compress_rate_csa", "compressed_sparse_attention"),
                   ("compress_rate_hca", "heavily_compressed_attention")):
        if config.get(key) is not None:
            rates[t] = config[key]
    for t in ("compressed_sparse_attention", "heavily_compressed_attention"):
        if t not in rates:
            raise ValueError(f"compress_rates has no entry for {t!r} (DeepSeek V4's compressor reads "
                             f"config.compress_rates[{t!r}])")
        rates[t] = v.positive_int(f"compress_rates[{t!r}]", rates[t])
    return rates


def _indexer_types(config: dict, family: str, n: int) -> list[str | None]:
    """GLM-5's per-layer indexer mode, "full" (runs its indexer) or "shared" (reuses the last full layer's top-k),
    as GlmMoeDsaConfig.__post_init__ builds indexer_types; [None] * n for other families."""
    if family != "glm_moe_dsa":
        return [None] * n
    given = config.get("indexer_types")
    if given is None and config.get("index_topk_pattern") is not None:
        pattern = config["index_topk_pattern"]
        given = [{"F": "full", "S": "shared"}.get(c, c) for c in pattern] if isinstance(pattern, str) else list(
            pattern)
    if given is None:
        freq = max(config.get("index_topk_freq", 1), 1)
        offset = config.get("index_skip_topk_offset", 2)
        # "full" if (max(i - offset + 1, 0) % freq) == 0 else "shared"
        given = ["full" if (max(i - offset + 1, 0) % freq) == 0 else "shared" for i in range(n)]
    if not isinstance(given, list | tuple) or len(given) < n or any(x not in ("full", "shared") for x in given[:n]):
        raise ValueError(f"indexer_types must give 'full' or 'shared' for each of the {n} layers, got {v._show(given)}")
    if given[0] == "shared":
        raise ValueError("indexer_types starts with 'shared': a shared layer reuses the previous full layer's top-k, "
                         "and GlmMoeDsaAttention raises without one")
    return list(given[:n])


def _indexer(config: dict, family: str, t: str, rotary_dim: int, mode) -> Indexer | None:
    """The sparse-attention indexer of a layer: GLM-5's DSA (GlmMoeDsaIndexer) or DeepSeek V4's lightning indexer
    (DeepseekV4Indexer, on CSA layers only)."""
    if family == "glm_moe_dsa":
        topk = v.positive_int("index_topk", config.get("index_topk", 2048))
        return Indexer(head_dim=v.positive_int("index_head_dim", config.get("index_head_dim", 128)),
                       heads=v.positive_int("index_n_heads", config.get("index_n_heads", 32)),
                       # q_rot, q_pass = torch.split(q, [qk_rope_head_dim, head_dim - qk_rope_head_dim])
                       rotary_dim=rotary_dim, rotated="leading", top_k=topk,
                       scores="tokens" if mode == "full" else "reused")
    if family == "deepseek_v4" and t == "compressed_sparse_attention":
        return Indexer(head_dim=v.positive_int("index_head_dim", config.get("index_head_dim", 128)),
                       heads=v.positive_int("index_n_heads", config.get("index_n_heads", 64)),
                       rotary_dim=rotary_dim, rotated="trailing",
                       top_k=v.positive_int("index_topk", config.get("index_topk", 512)), scores="compressed entries")
    return None


def _read_as(config: dict, family: str) -> str:
    """The family name a record states, or what was assumed (a model_type outside FAMILIES, read as Llama)."""
    model_type = config.get("model_type")
    if model_type is not None and model_type not in FAMILIES:
        return f"Llama (assumed: model_type {model_type!r} is not transcribed; assume='llama')"
    return _FAMILY_NAMES[family]


def _softmax_scale(config: dict, family: str, width: int, p: dict) -> float:
    """The multiplier on q·k, as the family's attention class sets ``self.scaling``."""
    if family in ("gemma2", "gemma3") or (family == "generic" and config.get("query_pre_attn_scalar") is not None):
        scale = _number("query_pre_attn_scalar", config.get("query_pre_attn_scalar", 256)) ** -0.5
    elif family in ("gemma4", "gemma3n"):  # Gemma4TextAttention, Gemma3nTextAttention: self.scaling = 1.0
        scale = 1.0
    elif family == "granite":  # modeling_granite.py, GraniteAttention: self.scaling = config.attention_multiplier
        scale = _number("attention_multiplier", config.get("attention_multiplier", 1.0))
    else:
        scale = width ** -0.5
    # DeepseekV3Attention, GlmMoeDsaAttention: yarn_apply_mscale(rope_parameters, qk_head_dim ** -0.5)
    if family in ("deepseek_v3", "glm_moe_dsa") and p.get("rope_type", p.get("type", "default")) != "default":
        all_dim = p.get("mscale_all_dim", 0)
        if all_dim:
            # yarn_apply_mscale: scaling × mscale², mscale = 0.1 · mscale_all_dim · ln(factor) + 1
            factor = _number("factor", p["factor"])
            m = 1.0 if factor <= 1 else 0.1 * all_dim * math.log(factor) + 1.0
            scale *= m * m
    return float(scale)


def _temperature(config: dict, family: str, r, p: dict):
    """None, or the factor on each query as a function of position (Llama 4's NoPE layers, Ministral 3)."""
    temperature = None
    if family == "llama4" and not r and config.get("attn_temperature_tuning", True):
        temperature = partial(llama4_query_temperature, attn_scale=float(config.get("attn_scale", 0.1)),
                              floor_scale=float(config.get("floor_scale", 8192)))
    if p.get("llama_4_scaling_beta") is not None:
        temperature = partial(llama_4_scaling_temperature, beta=float(p["llama_4_scaling_beta"]),
                              original_max_position=float(p.get("original_max_position_embeddings")))
    return temperature


def _mrope(family: str, p: dict, r, inv) -> tuple[tuple[int, ...] | None, bool]:
    """Multimodal RoPE's (t, h, w) section and whether the pairs interleave, or (None, False)."""
    if not (family in ("qwen2_vl", "qwen3_vl", "qwen3_5") or p.get("mrope_section") is not None):
        return None, False
    default_section = {"qwen3_vl": [24, 20, 20], "qwen3_5": [11, 11, 10]}.get(family, [16, 24, 24])
    section = tuple(int(x) for x in p.get("mrope_section", default_section))
    # Qwen3-VL's and Qwen3.5's rotary classes always interleave (recomposition_frequencies)
    interleaved = family in ("qwen3_vl", "qwen3_5") or bool(p.get("mrope_interleaved", False))
    # Qwen2-VL's freq.split(mrope_section) needs the sections to add up to the pairs; the interleaved
    # recomposition_frequencies only slices pairs k < 3·section, so it reads any section
    if r and not interleaved and sum(section) != len(inv):
        raise ValueError(f"mrope_section {list(section)} must add up to the {len(inv)} pairs")
    return section, interleaved


def per_layer(config, *, assume=None) -> bool:
    """True when a config needs :func:`layer_positions`: its layers (or its attention) differ from Llama's.

    That is: a key only per-layer designs use, a ``model_type`` whose code differs, or a nested
    ``rope_parameters``. ``config`` may be a dict, a config.json's JSON text or its path (:func:`load_config`);
    a ``model_type`` the reader does not transcribe is refused as :func:`rope_settings` refuses it.
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> per_layer({"head_dim": 64, "rope_theta": 1e4}), per_layer({"head_dim": 64, "no_rope_layers": [1, 1, 1, 0]})
    (False, True)
    """
    config = load_config(config)
    check_family(config, assume)
    if any(k in config for k in _PER_LAYER_KEYS):
        return True
    family = FAMILIES.get(config.get("model_type"))
    if family in (None, "generic") and _family_keys_set(config):
        return True  # a key whose reading depends on a family the reader does not know: layer_positions refuses it
    if family is not None and family not in ("qwen_window", "qwen3_moe", "mistral", "phi3", "starcoder2", "gptj",
                                             "gpt_neox", "generic"):
        return True
    if family in ("mistral", "phi3", "starcoder2") and config.get(
            "sliding_window", _EVERY_LAYER_WINDOW[family]) is not None:
        return True  # their code windows every layer
    if family in ("qwen_window", "qwen3_moe") and config.get("use_sliding_window") and (
            config.get("sliding_window", 4096) is not None):
        return True
    rp = config.get("rope_parameters") or config.get("rope_scaling")
    if not isinstance(rp, dict):
        return False
    # proportional frequencies and Ministral 3's query scaling have no line in the single-scheme report
    return (any(isinstance(x, dict) for x in rp.values()) or rp.get("rope_type", rp.get("type")) == "proportional"
            or "llama_4_scaling_beta" in rp)


def layer_positions(config, *, assume=None) -> list[LayerPositions]:
    """One :class:`LayerPositions` per decoder layer, as transformers 5's code for the model computes them.

    ``config`` is a dict shaped like a ``config.json``, its JSON text, or its path (:func:`load_config`). Its
    ``model_type`` must be one of :data:`FAMILIES` (or absent: then it is read Llama-style, and the report says no
    family named it); a family without RoPE is named and refused, and any other ``model_type`` is refused by
    name unless ``assume="llama"``, which reads it as Llama's code would and adds a note saying so.

    Reads ``layer_types`` (default: every layer ``"full_attention"``, or the family's own rule when the
    config's ``model_type`` names one, see :data:`FAMILIES`), ``rope_parameters`` flat, or nested by layer type
    for the families whose code reads it so (Gemma 3, 3n and 4, OLMo 3, ModernBERT; for any other, a nested one is
    refused, as transformers 5 raises building that model) (and the older ``rope_scaling`` + ``rope_theta``),
    ``sliding_window``, ``sliding_window_pattern``,
    ``rope_local_base_freq`` (Gemma 3 and 3n), ``global_rope_theta`` / ``local_rope_theta`` /
    ``global_attn_every_n_layers`` (ModernBERT), ``no_rope_layers`` (Llama 4, SmolLM3: **1 means RoPE, 0 means
    none**), ``attention_chunk_size``, ``full_attention_interval`` (Qwen3-Next), ``partial_rotary_factor``, the
    ``"proportional"`` rope type (Gemma 4), ``qk_rope_head_dim`` / ``qk_nope_head_dim`` / ``rope_interleave``
    (DeepSeek-V3), ``attn_temperature_tuning`` / ``floor_scale`` / ``attn_scale`` (Llama 4),
    ``llama_4_scaling_beta`` (Ministral 3) and ``query_pre_attn_scalar`` (Gemma). A multimodal config is read
    from its ``text_config``. What the reader does not understand raises a ValueError naming the key; each
    default it falls back to is listed by :func:`describe_config`.
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> cfg = {"model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 4, "sliding_window": 1024,
    ...        "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    ...                            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}}}
    >>> layers = layer_positions(cfg)
    >>> [(x.layer_type, x.window) for x in layers[4:]]
    [('sliding_attention', 1024), ('full_attention', None)]
    >>> layers[0].inv_freq, layers[5].inv_freq       # 10000^(−2k/4); 1e6^(−2k/4) / 8
    (array([1.  , 0.01]), array([0.125   , 0.000125]))
    >>> layers[0].softmax_scale                      # query_pre_attn_scalar 256 (the default): 256^−½
    0.0625

    A config.json's text, pasted as it is (GLM-4: interleaved pairs on int(128 × 0.5) = 64 of 128 dims):

    >>> glm = layer_positions('{"model_type": "glm4", "num_hidden_layers": 1, "head_dim": 128, '
    ...                       '"partial_rotary_factor": 0.5, "rope_scaling": null}')
    >>> glm[0].layout, glm[0].rotary_dim, glm[0].head_dim, glm[0].read_as
    ('interleaved', 64, 128, 'GLM / GLM-4')
    >>> layer_positions({"model_type": "my_model", "num_hidden_layers": 1, "head_dim": 8})[0]
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: model_type 'my_model' is not a family the reader transcribes (it reads cohere, ...); pass assume='llama' ...
    >>> layer_positions({"model_type": "my_model", "num_hidden_layers": 1, "head_dim": 8}, assume="llama")[0].read_as
    "Llama (assumed: model_type 'my_model' is not transcribed; assume='llama')"
    """
    return _resolve(config, need_count=True, assume=assume)[0]


def frequencies_from_config(config, seq_len=None, *, assume=None) -> tuple[np.ndarray, float]:
    """``(inv_freq, attention_factor)`` for a config.json-shaped dict, as Hugging Face computes them.

    ``inv_freq`` holds one frequency per rotated pair (rotary_dim / 2 of
    them); ``attention_factor`` is the number cos and sin are multiplied by
    (1 except for YaRN and LongRoPE). A config whose layers use different RoPE (Gemma 3's local and global
    bases, Llama 4's NoPE layers, ...) raises a ValueError that points to :func:`layer_positions`; a config
    whose layers all turn alike (DeepSeek-V3, a Qwen2-VL ``"mrope"``) is read per layer and answered here.
    ``seq_len`` matters only for
    ``dynamic`` (the base grows past L) and ``longrope`` (long factors past
    L); ``None`` means a short sequence. See :func:`rope_settings` for which
    keys are read, and :func:`layer_positions` for ``config`` and ``assume``.
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> inv_freq, att = frequencies_from_config({"head_dim": 4, "rope_theta": 10000.0})
    >>> inv_freq, att                      # 10000^(−0/4), 10000^(−2/4)
    (array([1.  , 0.01]), 1.0)
    >>> cfg = {"head_dim": 4, "max_position_embeddings": 400,
    ...        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 100}}
    >>> inv, att = frequencies_from_config(cfg)
    >>> round(att, 4)                      # 0.1·ln 4 + 1
    1.1386
    >>> frequencies_from_config({"head_dim": 4, "rope_scaling": {"rope_type": "ntk-by-parts", "factor": 2}})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown rope_type 'ntk-by-parts' in rope_scaling; known: 'default', 'linear', ..., 'proportional' (and 'su', ...)
    """
    config = load_config(config)
    if per_layer(config, assume=assume):
        records = _resolve(config, need_count=False, assume=assume)[0]
        first = records[0]
        same = all(
            r.rope == first.rope and r.attention_factor == first.attention_factor
            and (not r.rope or np.array_equal(r.inv_freq, first.inv_freq))
            for r in records
        )
        if not same:
            raise ValueError(
                "this config sets position per layer (its layers' RoPE differs): use layer_positions(config), "
                "which gives one record per layer"
            )
        if not first.rope:
            raise ValueError("no layer of this config uses RoPE (see layer_positions)")
        if seq_len is not None and first.rope_type in ("dynamic", "longrope"):
            raise ValueError("seq_len with a per-layer config: use layer_positions (short sequences only)")
        return first.inv_freq.copy(), first.attention_factor
    return _single_frequencies(config, seq_len)


def rope_settings(config, *, assume=None) -> RopeSettings:
    """Resolve a config's RoPE fields the way Hugging Face does; a clear ValueError for what is missing.

    * **base**: ``rope_theta`` (top level, or inside ``rope_parameters`` in
      newer files), else ``rotary_emb_base`` (GPT-NeoX's name), else 10000,
      with that fallback written into ``notes``;
    * **head width**: ``head_dim``, else ``hidden_size // num_attention_heads``,
      else ``n_embd // n_head`` (GPT-J's names);
    * **rotated width**: ``rotary_dim`` (an absolute count, GPT-J), else
      int(head_dim × fraction) with the fraction from ``partial_rotary_factor``
      or ``rotary_pct`` (GPT-NeoX), top level or in the scaling dict, as
      Hugging Face computes it; else the whole head;
    * **type**: ``rope_type`` or ``type`` in the scaling dict; ``"su"`` is
      read as ``"longrope"`` and Qwen2-VL's ``"mrope"`` as ``"default"`` (its
      ``mrope_section`` only splits the pairs over time, height and width);
      ``"proportional"`` (Gemma 4) turns int(fraction × head_dim // 2) pairs
      with ω_k = base^(−2k/head_dim) and gives the others ω = 0; no dict (or
      ``"default"``) means no scaling;
    * **lengths**: ``max_position_embeddings`` (``n_positions`` in GPT-J's
      file), and ``original_max_position_embeddings`` from the scaling dict
      or the top level (Phi-3 keeps it at the top).

    Which length L each type compares with follows Hugging Face, which reads
    it from different places than one might guess: ``dynamic`` uses
    ``max_position_embeddings`` (not ``original_max_position_embeddings``);
    ``llama3`` requires ``original_max_position_embeddings`` inside the
    scaling dict; ``yarn`` and ``longrope`` use it when present and
    ``max_position_embeddings`` otherwise. A missing ``factor`` is derived,
    as in current ``transformers``, as max_position_embeddings /
    original_max_position_embeddings for ``yarn`` and ``longrope`` only.
    (Releases 4.4x–4.5x went further: they replaced a YaRN ``factor`` by that
    ratio whenever the scaling dict held ``original_max_position_embeddings``,
    and a LongRoPE one whenever the top level did. The bundled configs give
    the same s either way.) Unrelated keys are ignored.

    ``config`` may be a dict, a config.json's JSON text or its path (:func:`load_config`), and its
    ``model_type`` is checked as :func:`layer_positions` checks it (``assume="llama"`` reads an unknown one as
    Llama's code would, and the first note says so). A family whose code differs from Llama's (see
    :func:`per_layer`) is read by its own rules when all its layers turn alike, and refused otherwise.
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> s = rope_settings({"hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25})
    >>> s.head_dim, s.rotary_dim, s.base, s.rope_type
    (96, 24, 10000.0, 'default')
    >>> print(s.notes[0])
    no rope_theta (or rotary_emb_base) in the config: base 10000 assumed, the value Hugging Face uses when a config names none
    """
    config = load_config(config)
    assumed = check_family(config, assume)
    if not per_layer(config, assume=assume):
        s = _settings(config)
        if assumed is not None:
            return replace(s, notes=(_assumed_note(assumed), *s.notes))
        return replace(s, notes=(UNTYPED_NOTE, *s.notes)) if _untyped_llama(config) else s
    kinds: dict[str, RopeSettings] = {}
    records, notes, _family_name = _resolve(config, need_count=False, assume=assume, settings=kinds)
    first = records[0]
    alike = all(r.rope and r.head_dim == first.head_dim and r.layout == first.layout
                and r.attention_factor == first.attention_factor and np.array_equal(r.inv_freq, first.inv_freq)
                for r in records)
    s = kinds.get(first.layer_type)
    if not alike or s is None or s.head_dim != first.head_dim:
        raise ValueError("this config sets position per layer (its layers' RoPE differs, some layers have none, or "
                         "the rotated head is not the q·k head): use layer_positions(config), one record per layer")
    return replace(s, notes=tuple(dict.fromkeys((*notes, *s.notes))))
