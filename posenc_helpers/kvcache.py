"""What a decoder keeps in memory at inference: its KV cache, layer by layer, as transformers 5.24.0 caches it.

Every number is computed from a config (a dict shaped like a ``config.json``):
the layer kinds, windows and NoPE layers come from
:func:`posenc_helpers.configs.layer_positions`, the sizes from the config's own
``num_key_value_heads``, ``head_dim``, dtype and the like (each family's
config-class default where a key is absent, stated in the notes). Each layer is
counted as transformers 5.24.0's code caches it (``cache_utils.py``):

* a full-attention layer (``DynamicLayer.update``) keeps the keys and values of
  every token: 2 · kv_heads · head_dim numbers per token;
* a sliding-window or chunked layer (``DynamicSlidingWindowLayer.update``) keeps
  ``full_key_states[:, :, -sliding_window + 1:, :]``, the last W − 1 tokens
  (a window of 1 slices ``[0:]`` and so keeps every token);
* a linear-attention layer (Qwen3-Next, Qwen3.5: ``LinearAttentionLayer``) keeps a
  conv state of conv_dim × kernel numbers (the model's dtype) and a recurrent
  state of v_heads × k_dim × v_dim numbers (float32), whatever the context;
* a layer that reuses another's cache (Gemma 3n and Gemma 4's
  ``num_kv_shared_layers``: ``kv_sharing_modes`` "reuse") gets a ``DummyLayer``
  and keeps nothing;
* DeepSeek-V3's MLA (``DeepseekV3Attention.forward``) caches the compressed
  latent (kv_lora_rank, after ``kv_a_layernorm``) and the rotated shared key
  (qk_rope_head_dim): 512 + 64 = 576 numbers per token and layer. ``mla="latent"``
  counts DeepSeek's own inference code (``attn_impl = "absorb"``, the same 576),
  ``mla="expanded"`` its ``"naive"`` path, which caches every head's key and value:
  heads · (qk_nope + qk_rope) + heads · v_head_dim = 128 · 192 + 128 · 128 = 40,960.
  Kimi Linear's full-attention layers cache the same two latents (no rotation is
  applied to the second: ``KimiLinearAttention``), and GLM-5's
  (``GlmMoeDsaAttention``, a ``DynamicIndexedLayer``) add the indexer's key
  (index_head_dim) on the layers that run their own indexer;
* Kimi Linear's linear layers (``KimiLinearDeltaAttention``) keep a conv state of
  3 · heads · head_dim × kernel numbers and a recurrent state of heads × head_dim ×
  head_dim numbers (float32), whatever the context;
* DeepSeek V4 (transformers 5.25.0, modeling_deepseek_v4.py): a sliding layer is a
  ``DynamicSlidingWindowLayer`` (keys and values, 2 · head_dim per token, the last
  W − 1 tokens); a CSA or HCA layer (``DeepseekV4CSACache``, ``DeepseekV4HCACache``)
  keeps its window's keys once (``self.values = self.keys``: head_dim per token) and
  adds, per compressor, one entry of head_dim numbers per ``rate`` tokens
  (⌊n / rate⌋ entries), the tokens not yet compressed (n mod rate, their projected
  kv and gate), and for CSA the last full block's "Ca" slice and its gate (the gate
  in float32, after the float32 ``position_bias``); CSA also keeps its lightning
  indexer's entries (index_head_dim each) the same way.

Bytes are numbers times the config's dtype (bfloat16 and float16: 2, float32: 4);
a config that states no dtype is refused unless ``bytes_per_number=`` is given.
One sequence (batch 1). Taught in notebooks/16-position-at-inference.ipynb.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from . import _validate as v
from .configs import UNTYPED_NOTE, bundled_configs, bundled_kv_fields, check_family, context_field, load_config
from .configs.layers import _compress_rates, _indexer_types, _kimi_linear_sizes, _plan

__all__ = [
    "format_bytes",
    "CompressedCache",
    "MLA_MODES",
    "DTYPE_BYTES",
    "RECURRENT_STATE_BYTES",
    "CONTEXTS",
    "LayerCache",
    "CacheSize",
    "bundled_kv_config",
    "dtype_bytes",
    "kv_layers",
    "kv_cache",
    "kv_bytes",
    "receptive_field",
    "hypothetical_config",
    "kv_table",
    "kv_table_text",
]

#: How MLA layers are counted: the code of transformers 5.24.0 (the compressed latent plus the rotary key), DeepSeek's
#: own inference code with attn_impl "absorb" (the same two tensors), or its "naive" path (every head's key and value).
MLA_MODES = ("transformers", "latent", "expanded")

#: Bytes per number of each dtype a config may state (``dtype`` or the older ``torch_dtype``).
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}

#: Bytes per number of a linear-attention layer's recurrent state: ``torch_chunk_gated_delta_rule`` (transformers 5.24.0,
#: models/qwen3_5/modeling_qwen3_5.py) casts its inputs to float32, so the state it returns, and the cache keeps, is float32.
RECURRENT_STATE_BYTES = 4

#: The contexts of the issue's table: 8K, 128K and 1M tokens.
CONTEXTS = (8192, 131072, 1048576)

# What each model_type's config class and attention read (transformers 5.24.0, models/<m>/configuration_<m>.py and
# modeling_<m>.py), as (num_key_value_heads, head_dim):
# an int is the class default when the key is absent; "heads" = num_attention_heads (default None, set in
# __post_init__); "split" = hidden_size // num_attention_heads (no field, or None, and the attention's
# getattr(config, "head_dim", hidden_size // num_attention_heads)); "always ..." = the code never reads the key.
_SIZES = {
    "llama": ("heads", "split"),
    "mistral": (8, "split"),
    "phi3": ("heads", "split"),
    "qwen2": (32, "split"),
    "qwen3": (32, 128),
    "qwen3_moe": (4, "split"),
    "qwen2_vl": (8, "always split"),       # Qwen2VLAttention: head_dim = hidden_size // num_heads
    "qwen2_5_vl": (8, "always split"),
    "qwen3_vl": (32, 128),
    "gemma2": (4, 256),
    "gemma3": (4, 256),
    "gemma3n": (2, 256),
    "gemma4": (4, 256),                    # full layers: global_head_dim (default 512), see _gemma4_full
    "gpt_oss": (8, 64),
    "olmo3": ("heads", "split"),
    "exaone4": (32, "split"),
    "ministral3": (8, 128),
    "qwen3_5": (4, 256),
    "qwen3_next": (2, 256),
    "llama4": (8, 128),
    "smollm3": (4, "split"),
    "cohere2": ("heads", "split"),  # Cohere2Config.__post_init__: hidden_size // heads, which a head_dim key replaces
    "granite": ("heads", "split"),
    "starcoder2": (2, "split"),
    "gptj": ("always heads", "always split"),      # GPTJAttention: head_dim = embed_dim // num_attention_heads, no GQA
    "gpt_neox": ("always heads", "always split"),  # GPTNeoXAttention: head_size = hidden_size // heads, no GQA
    "olmo2": ("heads", "split"),
    "glm": (2, 128),                       # GlmConfig: num_key_value_heads 2, head_dim 128
    "glm4": (2, 128),
    "glm4_moe": (8, "split"),
    "phi": ("heads", "split"),
    "stablelm": (32, "always split"),      # StableLmAttention: head_dim = hidden_size // num_heads
    "cohere": ("heads", "split"),
    "gemma": (16, 256),
    "nemotron": ("given", "split"),        # NemotronConfig leaves num_key_value_heads None; the attention divides by it
    "falcon": ("falcon", "always split"),  # see _falcon_kv_heads
}

# model_types whose config class turns an explicit null num_key_value_heads into num_attention_heads
_KV_NULL_IS_HEADS = {"llama", "mistral", "phi3", "qwen2", "qwen3", "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "gpt_oss",
                     "olmo3", "ministral3", "llama4", "smollm3", "cohere2", "granite", "deepseek_v3", "olmo2", "phi",
                     "cohere"}
# model_types whose code turns an explicit null head_dim into hidden_size // num_attention_heads
_HEAD_NULL_IS_SPLIT = {"llama", "mistral", "ministral3", "llama4", "starcoder2", "nemotron"}

# Linear attention (Qwen3NextConfig, Qwen3_5TextConfig): (key, default)
_LINEAR_DEFAULTS = (("linear_conv_kernel_dim", 4), ("linear_key_head_dim", 128), ("linear_value_head_dim", 128),
                    ("linear_num_key_heads", 16), ("linear_num_value_heads", 32))

# DeepseekV3Config's defaults for the MLA sizes
_MLA_DEFAULTS = (("kv_lora_rank", 512), ("qk_rope_head_dim", 64), ("qk_nope_head_dim", 128), ("v_head_dim", 128),
                 ("num_attention_heads", 128))

# GPTJConfig.attribute_map: the names GPT-J's config.json uses
_GPTJ_NAMES = {"n_layer": "num_hidden_layers", "n_head": "num_attention_heads", "n_embd": "hidden_size",
               "n_positions": "max_position_embeddings"}


@dataclass(frozen=True)
class CompressedCache:
    """What one compressor of a DeepSeek V4 CSA or HCA layer keeps (``DeepseekV4HCACache``, ``DeepseekV4CSACache``).

    * ``name``: ``"compressor"`` (the layer's compressed keys = values) or ``"indexer"`` (CSA's lightning indexer);
    * ``rate``: source tokens per entry; ``numbers_per_entry``: numbers of one entry (``compressed_kv[name]``);
    * ``buffer_numbers_per_token``: numbers kept per token not yet compressed (``buffer_kv`` and ``buffer_gate``:
      the projected kv and gate, in the model's dtype);
    * ``overlap_numbers`` and ``overlap_float32_numbers``: CSA's saved Ca slice of the last full block
      (``overlap_kv``, model dtype) and its gate (``overlap_gate``, float32), kept once a block has been
      compressed; 0 for HCA.

    >>> c = CompressedCache("compressor", 128, 512, 1024, 0, 0)
    >>> c.numbers(300)     # 2 entries · 512 + 44 buffered tokens · 1,024; nothing in float32
    (46080, 0)
    """

    name: str
    rate: int
    numbers_per_entry: int
    buffer_numbers_per_token: int
    overlap_numbers: int
    overlap_float32_numbers: int

    def numbers(self, context) -> tuple:
        """(numbers in the model's dtype, numbers in float32) after ``context`` tokens (int or int array)."""
        n = context
        # ⌊n / rate⌋ entries, n mod rate buffered tokens, the overlap once a block is compressed
        done = n // self.rate
        model = (done * self.numbers_per_entry + (n % self.rate) * self.buffer_numbers_per_token
                 + (done > 0) * self.overlap_numbers)
        return model, (done > 0) * self.overlap_float32_numbers


@dataclass(frozen=True)
class LayerCache:
    """What one decoder layer caches, independent of the context and the dtype.

    * ``index``: the layer (0 = first); ``layer_type``: the config's name for it;
    * ``kind``: ``"full"`` (every token), ``"sliding"`` or ``"chunked"`` (the last ``window`` − 1 tokens),
      ``"linear"`` (a fixed state, no per-token cost), ``"shared"`` (nothing: it reads layer ``shares``'s cache) or
      ``"compressed"`` (DeepSeek V4's CSA and HCA: a window's keys plus ``compressed`` entries);
    * ``window``: the sliding window or chunk W in tokens (None otherwise); ``rope``: False for a NoPE layer;
    * ``numbers_per_token``: numbers cached per token held (keys and values together; MLA's latent and rotary key);
    * ``holds``: the most tokens it keeps (W − 1), None when it keeps every token (or none: linear, shared);
    * ``conv_state_numbers`` and ``recurrent_state_numbers``: a linear-attention layer's fixed state;
    * ``shares``: for a ``"shared"`` layer, the layer whose keys and values it reads;
    * ``cached``: what the tensors are, in words;
    * ``compressed``: a ``"compressed"`` layer's compressors (:class:`CompressedCache`), else empty;
    * ``cache_class``: the transformers 5.25.0 cache layer class that holds it (``cache_utils.py``,
      ``DYNAMIC_LAYER_TYPE_MAPPING``, or the class a model's file registers by ``_layer_type``).
    """

    index: int
    layer_type: str
    kind: str
    window: int | None
    rope: bool
    numbers_per_token: int
    holds: int | None
    conv_state_numbers: int = 0
    recurrent_state_numbers: int = 0
    shares: int | None = None
    cached: str = ""
    compressed: tuple[CompressedCache, ...] = ()
    cache_class: str = ""

    def numbers(self, context) -> tuple:
        """(numbers in the model's dtype, numbers in float32) cached after ``context`` tokens (int or int array).

        >>> LayerCache(0, "sliding_attention", "sliding", 4, True, 2, 3).numbers(10)   # 3 tokens · 2 numbers
        (6, 0)
        """
        held = 0 if self.kind in ("linear", "shared") else context if self.holds is None else np.minimum(
            context, self.holds)
        if np.ndim(held) == 0:
            held = int(held)
        model = self.numbers_per_token * held + self.conv_state_numbers
        float32 = self.recurrent_state_numbers
        for c in self.compressed:
            m, f = c.numbers(context)
            model, float32 = model + m, float32 + f
        return model, float32

    def bytes(self, context, bytes_per_number: int):
        """Bytes after ``context`` tokens: the model-dtype numbers · ``bytes_per_number``, float32 ones · 4."""
        model, float32 = self.numbers(context)
        return model * bytes_per_number + float32 * RECURRENT_STATE_BYTES

    def tokens(self, context: int) -> int:
        """Tokens held after ``context`` tokens: min(context, W − 1) for a window, context if full, 0 if none.

        >>> LayerCache(0, "sliding_attention", "sliding", 1024, True, 4096, 1023).tokens(131072)
        1023
        """
        context = v.positive_int("context", context)
        if self.kind in ("linear", "shared"):
            return 0
        return context if self.holds is None else min(context, self.holds)


@dataclass(frozen=True)
class CacheSize:
    """The cache of one config after ``context`` tokens: its layers, what each holds, and the bytes.

    ``layer_tokens[i]`` and ``layer_bytes[i]`` belong to ``layers[i]``; ``state_bytes`` is the part that does not
    grow with the context (linear attention's states); ``dtype`` says where ``bytes_per_number`` came from
    (the config's dtype, or ``"given"``); ``notes`` the class defaults the count fell back to.
    """

    layers: tuple[LayerCache, ...]
    context: int
    bytes_per_number: int
    dtype: str
    mla: str
    layer_tokens: tuple[int, ...]
    layer_bytes: tuple[int, ...]
    notes: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        """Every layer's bytes together."""
        return int(sum(self.layer_bytes))

    @property
    def state_bytes(self) -> int:
        """The fixed-size part: linear-attention conv states (model dtype) and recurrent states (float32)."""
        return int(sum(x.conv_state_numbers * self.bytes_per_number + x.recurrent_state_numbers * RECURRENT_STATE_BYTES
                       for x in self.layers))

    @property
    def bytes_per_token(self) -> float:
        """total_bytes / context: what each token of context costs on average."""
        return self.total_bytes / self.context


def bundled_kv_config(name: str) -> dict:
    """A bundled model's config with its KV-cache fields merged in: a fresh dict that :func:`kv_cache` reads.

    The RoPE ``config`` of :func:`~posenc_helpers.configs.bundled_configs` plus the ``fields`` of
    :func:`~posenc_helpers.configs.bundled_kv_fields` (into ``text_config`` when the fields sit there) and its
    ``top_level_fields``. A key that both state must agree, or a ValueError names it.
    Taught in notebooks/16-position-at-inference.ipynb.

    >>> cfg = bundled_kv_config("Mistral 7B")
    >>> cfg["model_type"], cfg["num_key_value_heads"], cfg["sliding_window"], cfg["rope_theta"]
    ('mistral', 8, 4096, 10000.0)
    """
    configs = bundled_configs("all")
    if name not in configs:
        raise ValueError(f"name must be one of the bundled models ({', '.join(configs)}), got {v._show(name)}")
    config = copy.deepcopy(configs[name])
    kv = bundled_kv_fields("all")[name]
    target = config["text_config"] if kv["level"] == "text_config" else config
    for into, fields in ((target, kv["fields"]), (config, kv.get("top_level_fields") or {})):
        for key, value in fields.items():
            if key in into and into[key] != value:
                raise ValueError(f"{name}: {key} is {into[key]!r} in the RoPE config but {value!r} in the KV fields")
            into[key] = copy.deepcopy(value)
    return config


def _language(config) -> tuple[dict, dict]:
    """(the language model's config, the whole config): text_config keeps the outer model_type if it has none."""
    config = load_config(config)
    inner = config
    if isinstance(config.get("text_config"), dict):
        inner = dict(config["text_config"])
        if "model_type" not in inner and "model_type" in config:
            inner["model_type"] = config["model_type"]
    if inner.get("model_type") == "gptj" or (inner.get("model_type") is None and "n_layer" in inner):
        inner = {**{_GPTJ_NAMES[k]: x for k, x in inner.items() if k in _GPTJ_NAMES}, **inner}
    return inner, config


def dtype_bytes(config) -> tuple[str, int]:
    """``(dtype, bytes per number)`` from the config's ``dtype`` or ``torch_dtype``, at the top or in text_config.

    transformers 5.24.0 loads a model in the config's dtype by default (``from_pretrained(dtype="auto")``), and
    the cached keys and values take that dtype. Refuses, naming the keys, a config that states none, or states two
    that disagree. Taught in notebooks/16-position-at-inference.ipynb.

    >>> dtype_bytes({"torch_dtype": "bfloat16"}), dtype_bytes({"text_config": {"dtype": "float32"}})
    (('bfloat16', 2), ('float32', 4))
    """
    _inner, outer = _language(config)
    found = {}
    text = outer["text_config"] if isinstance(outer.get("text_config"), dict) else {}
    for where, part in (("", outer), ("text_config.", text)):
        for key in ("dtype", "torch_dtype"):
            if part.get(key) is not None:
                found[where + key] = part[key]
    if not found:
        raise ValueError("the config states no dtype (no 'dtype' or 'torch_dtype' key, at the top or in text_config), "
                         "so the bytes per number are not known: pass bytes_per_number= (2 for bfloat16 or float16, "
                         "4 for float32)")
    if len(set(found.values())) > 1:
        raise ValueError(f"the config's dtypes disagree ({', '.join(f'{k} = {x!r}' for k, x in found.items())}): "
                         "pass bytes_per_number=")
    key, dtype = next(iter(found.items()))
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"{key} {dtype!r} is not one the counter knows ({', '.join(DTYPE_BYTES)}): "
                         "pass bytes_per_number=")
    return dtype, DTYPE_BYTES[dtype]


def _needed(config: dict, key: str, why: str) -> int:
    if config.get(key) is None:
        raise ValueError(f"{key} is missing, and {why} needs it")
    return v.positive_int(key, config[key])


def _heads_and_dim(config: dict, model_type: str, notes: list[str]) -> tuple[int, int]:
    """(num_key_value_heads, head_dim) as the model_type's config class and attention read them."""
    if model_type not in _SIZES:
        who = f"model_type {model_type!r}" if model_type is not None else "a config without model_type"
        for key in ("num_key_value_heads", "head_dim"):
            if config.get(key) is None:
                raise ValueError(f"{key} is missing, and for {who} the default its code falls back to is not known "
                                 f"(known: {', '.join(sorted(_SIZES))}): give {key}")
        return v.positive_int("num_key_value_heads", config["num_key_value_heads"]), v.positive_int(
            "head_dim", config["head_dim"])
    kv_rule, head_rule = _SIZES[model_type]
    why = f"{model_type}'s code sizes its keys from it"
    if kv_rule == "falcon":
        kv = _falcon_kv_heads(config, notes)
    elif kv_rule == "given" and config.get("num_key_value_heads") is None:
        raise ValueError(f"num_key_value_heads is missing or null, and model_type {model_type!r} needs it (its "
                         "config class sets no default, and its attention divides by it): give a number")
    elif kv_rule == "always heads":
        kv = _needed(config, "num_attention_heads", why)  # no grouped-query attention in this family's code
    elif "num_key_value_heads" not in config:
        kv = _needed(config, "num_attention_heads", why) if kv_rule == "heads" else kv_rule
        notes.append(f"no num_key_value_heads: {kv} (the {model_type} config class's default"
                     + (", num_attention_heads)" if kv_rule == "heads" else ")"))
    elif config["num_key_value_heads"] is None:
        if model_type not in _KV_NULL_IS_HEADS:
            raise ValueError(f"num_key_value_heads is null, which model_type {model_type!r} does not read: give a number")
        kv = _needed(config, "num_attention_heads", why)
    else:
        kv = v.positive_int("num_key_value_heads", config["num_key_value_heads"])
    if head_rule == "always split":
        head = _needed(config, "hidden_size", why) // _needed(config, "num_attention_heads", why)
    elif "head_dim" not in config:
        split = head_rule == "split"
        # hidden_size // num_attention_heads, or the class's own default
        head = _needed(config, "hidden_size", why) // _needed(config, "num_attention_heads", why) if split else head_rule
        notes.append(f"no head_dim: {head} (" + ("hidden_size // num_attention_heads, as the "
                     f"{model_type} attention computes it)" if split else f"the {model_type} config class's default)"))
    elif config["head_dim"] is None:
        if model_type not in _HEAD_NULL_IS_SPLIT:
            raise ValueError(f"head_dim is null, which model_type {model_type!r} does not read: give a number")
        head = _needed(config, "hidden_size", why) // _needed(config, "num_attention_heads", why)
    else:
        head = v.positive_int("head_dim", config["head_dim"])
    return kv, head


def _falcon_kv_heads(config: dict, notes: list[str]) -> int:
    """The heads FalconAttention.forward caches (modeling_falcon.py, transformers 5.24.0).

    num_kv_heads = num_heads if new_decoder_architecture (its grouped keys are broadcast to every query head,
    flattened, and cached so); else 1 when multi_query (default True); else num_kv_heads (FalconConfig: None becomes
    num_attention_heads), which must be every head: _split_heads views the fused projection as num_heads triples."""
    heads = _needed(config, "num_attention_heads", "falcon's code sizes its keys from it")
    if config.get("new_decoder_architecture"):
        notes.append("new_decoder_architecture: FalconAttention broadcasts its num_kv_heads keys and values to all "
                     f"{heads} query heads before caching them, so the cache holds {heads} heads")
        return heads
    if config.get("multi_query", True):
        if "multi_query" not in config:
            notes.append("no multi_query: True (FalconConfig's default): one key and value head")
        return 1
    kv = heads if config.get("num_kv_heads") is None else v.positive_int("num_kv_heads", config["num_kv_heads"])
    if kv != heads:
        raise ValueError(f"num_kv_heads = {kv} without new_decoder_architecture or multi_query: FalconAttention "
                         f"reshapes its keys into {kv} heads from {heads}, which fails; the model does not run")
    return kv


def _with_default(config: dict, key: str, default: int, owner: str, notes: list[str]) -> int:
    if config.get(key) is None:
        notes.append(f"no {key}: {default} ({owner}'s default)")
        return default
    return v.positive_int(key, config[key])


def _refuse(config: dict, model_type) -> None:
    """Configs whose cache the counter would get wrong: encoders, and keys a family's cache reads differently."""
    if model_type == "modernbert":
        raise ValueError("model_type 'modernbert' is an encoder: it attends both ways and keeps no KV cache")
    if config.get("use_bidirectional_attention") not in (None, False, "vision"):
        raise ValueError(f"use_bidirectional_attention = {config['use_bidirectional_attention']!r}: a model that "
                         "attends both ways is not decoded token by token through a KV cache")
    if model_type in ("mistral", "phi3", "starcoder2", "ministral3") and config.get("layer_types") is not None:
        raise ValueError(f"layer_types: model_type {model_type!r} declares none (its attention windows every layer by "
                         "sliding_window), but transformers' DynamicCache would read them: remove layer_types")


def _sharing(config: dict, model_type, types: list[str], notes: list[str]) -> dict[int, int]:
    """{reusing layer: layer it reads}, from num_kv_shared_layers as Gemma3nTextConfig / Gemma4TextConfig compute it."""
    if model_type not in ("gemma3n", "gemma4"):
        if config.get("num_kv_shared_layers"):
            raise ValueError(f"num_kv_shared_layers: model_type {model_type!r} does not share caches across layers "
                             "(only gemma3n and gemma4 do)")
        return {}
    n = len(types)
    default = 15 if model_type == "gemma3n" else 0
    shared = config.get("num_kv_shared_layers")
    if shared is None:
        shared = default
        notes.append(f"no num_kv_shared_layers: {default} (the {model_type} config class's default)")
    if isinstance(shared, bool) or not isinstance(shared, int) or not 0 <= shared <= n:
        raise ValueError(f"num_kv_shared_layers must be an integer from 0 to the {n} layers, got {v._show(shared)}")
    if shared == 0:
        return {}
    first = n - shared  # kv_sharing_modes: every layer from first on is "reuse"
    if first == 0:
        if model_type == "gemma4":
            return {i: None for i in range(n)}  # every layer "reuse": nothing is cached at all
        raise ValueError("num_kv_shared_layers equals num_hidden_layers: Gemma3nTextConfig.kv_sharing_modes finds no "
                         "layer producing a cache and raises")
    if set(types[:first]) != set(types):
        raise ValueError(f"num_kv_shared_layers = {shared}: the layer types of the last {shared} layers are not all "
                         f"produced by the first {first} (transformers raises the same)")
    # each reusing layer reads the last non-shared layer of its own type
    last = {t: max(i for i in range(first) if types[i] == t) for t in set(types)}
    return {i: last[types[i]] for i in range(first, n)}


def _linear(config: dict, notes: list[str]) -> tuple[int, int, str]:
    """(conv state numbers, recurrent state numbers, description) of one Gated DeltaNet layer."""
    kernel, k_dim, v_dim, k_heads, v_heads = (_with_default(config, key, d, "the linear-attention config", notes)
                                              for key, d in _LINEAR_DEFAULTS)
    # conv_dim = key_dim · 2 + value_dim, key_dim = k_dim · k_heads, value_dim = v_dim · v_heads
    conv_dim = 2 * k_dim * k_heads + v_dim * v_heads
    # conv state: (conv_dim, kernel); recurrent state: (v_heads, k_dim, v_dim)
    return conv_dim * kernel, v_heads * k_dim * v_dim, (
        f"conv state {conv_dim:,} × {kernel} + recurrent state {v_heads} × {k_dim} × {v_dim} (float32)")


def _mla(config: dict, mla: str, notes: list[str]) -> tuple[int, str]:
    """(numbers per token, description) of one MLA layer under the chosen counting."""
    rank, rope, nope, vdim, heads = (_with_default(config, key, d, "DeepseekV3Config", notes) for key, d in _MLA_DEFAULTS)
    if mla == "expanded":
        # DeepSeek's attn_impl "naive": k_cache (heads, qk_nope + qk_rope) and v_cache (heads, v_head_dim)
        return heads * (nope + rope) + heads * vdim, f"{heads} heads × ({nope} + {rope}) keys + {heads} × {vdim} values"
    # transformers 5.24.0: cache.update(kv_nope, k_rot): the latent after kv_a_layernorm and the rotated shared key;
    # DeepSeek's attn_impl "absorb": kv_cache (kv_lora_rank) and pe_cache (qk_rope_head_dim)
    return rank + rope, f"latent {rank} + rotary key {rope}"


def _kimi_linear_cache(config: dict, records, mla: str, notes: list[str]) -> list[LayerCache]:
    """Kimi Linear (modeling_kimi_linear.py, transformers 5.25.0): MLA latents on the full layers, KDA states on the
    linear ones."""
    if mla != "transformers":
        raise ValueError(f"mla={mla!r}: for Kimi Linear the count follows transformers only (mla='transformers')")
    rank = _with_default(config, "kv_lora_rank", 512, "KimiLinearConfig", notes)
    rope = _with_default(config, "qk_rope_head_dim", 64, "KimiLinearConfig", notes)
    sizes = _kimi_linear_sizes(config)
    heads, head, kernel = sizes["heads"], sizes["head_dim"], sizes["kernel"]
    conv_dim = 3 * heads * head  # KimiLinearDeltaAttention: conv_dim = qkv_dim * 3, qkv_dim = heads · head_dim
    out = []
    for i, r in enumerate(records):
        common = {"index": i, "layer_type": r.layer_type, "window": r.window, "rope": r.rope}
        if r.layer_type == "linear_attention":
            # LinearAttentionLayer: conv state (conv_dim, kernel); recurrent state (heads, head_dim, head_dim) float32
            out.append(LayerCache(**common, kind="linear", numbers_per_token=0, holds=None,
                                  conv_state_numbers=conv_dim * kernel, recurrent_state_numbers=heads * head * head,
                                  cached=f"conv state {conv_dim:,} × {kernel} + recurrent state {heads} × {head} × "
                                         f"{head} (float32)", cache_class="LinearAttentionLayer"))
        else:
            # KimiLinearAttention.forward: cache.update(kv_nope, k_rot): the latent and the (unrotated) shared key
            out.append(LayerCache(**common, kind="full", numbers_per_token=rank + rope, holds=None,
                                  cached=f"latent {rank} + shared key {rope} (not rotated)", cache_class="DynamicLayer"))
    return out


def _glm_moe_dsa_cache(config: dict, records, mla: str, notes: list[str]) -> list[LayerCache]:
    """GLM-5 (modeling_glm_moe_dsa.py): a DynamicIndexedLayer per layer, the MLA latents and, on the layers that run
    their own indexer, the indexer's key (update_indexer)."""
    if mla != "transformers":
        raise ValueError(f"mla={mla!r}: for GLM-5 the count follows transformers only (mla='transformers')")
    rank = _with_default(config, "kv_lora_rank", 512, "GlmMoeDsaConfig", notes)
    rope = _with_default(config, "qk_rope_head_dim", 64, "GlmMoeDsaConfig", notes)
    index = _with_default(config, "index_head_dim", 128, "GlmMoeDsaConfig", notes)
    modes = _indexer_types(config, "glm_moe_dsa", len(records))
    out = []
    for i, (r, mode) in enumerate(zip(records, modes, strict=True)):
        extra = index if mode == "full" else 0
        what = f"latent {rank} + rotary key {rope}" + (f" + indexer key {index}" if extra else "")
        out.append(LayerCache(i, r.layer_type, "full", r.window, r.rope, rank + rope + extra, None, cached=what,
                              cache_class="DynamicIndexedLayer"))
    return out


def _deepseek_v4_cache(config: dict, records, mla: str, notes: list[str]) -> list[LayerCache]:
    """DeepSeek V4 (modeling_deepseek_v4.py, transformers 5.25.0): what each layer's cache class keeps."""
    if mla != "transformers":
        raise ValueError(f"mla={mla!r}: for DeepSeek V4 the count follows transformers only (mla='transformers')")
    head = _with_default(config, "head_dim", 512, "DeepseekV4Config", notes)
    index = _with_default(config, "index_head_dim", 128, "DeepseekV4Config", notes)
    rates = _compress_rates(config)
    out = []
    for i, r in enumerate(records):
        common = {"index": i, "layer_type": r.layer_type, "window": r.window, "rope": r.rope}
        holds = r.window - 1 if r.window > 1 else None
        if r.layer_type == "sliding_attention":
            # DynamicSlidingWindowLayer.update(kv, kv): keys and values kept as two tensors
            out.append(LayerCache(**common, kind="sliding", numbers_per_token=2 * head, holds=holds,
                                  cached=f"keys and values, 2 × 1 head × {head} (the same numbers, kept twice)",
                                  cache_class="DynamicSlidingWindowLayer"))
            continue
        rate = rates[r.layer_type]
        if r.layer_type == "heavily_compressed_attention":
            # DeepseekV4HCACompressor: kv_proj and gate_proj of head_dim each; no overlap state
            branches = (CompressedCache("compressor", rate, head, 2 * head, 0, 0),)
            cls = "DeepseekV4HCACache"
        else:
            # DeepseekV4CSACompressor / DeepseekV4Indexer: kv_proj and gate_proj of 2 · width each; the overlap is
            # the last block's Ca slice, rate × width, and its gate (float32)
            branches = (CompressedCache("compressor", rate, head, 4 * head, rate * head, rate * head),
                        CompressedCache("indexer", rate, index, 4 * index, rate * index, rate * index))
            cls = "DeepseekV4CSACache"
        out.append(LayerCache(**common, kind="compressed", numbers_per_token=head, holds=holds,
                              cached=f"window keys = values, 1 head × {head} (one tensor) + "
                                     + " + ".join(f"{c.name} entries of {c.numbers_per_entry} every {c.rate} tokens"
                                                  for c in branches),
                              compressed=branches, cache_class=cls))
    return out


_SIZES_2026 = {"kimi_linear": _kimi_linear_cache, "glm_moe_dsa": _glm_moe_dsa_cache,
               "deepseek_v4": _deepseek_v4_cache}


@dataclass(frozen=True)
class _PlanLayer:
    layer_type: str
    window: int | None
    rope: bool


def kv_layers(config, *, mla: str = "transformers", assume=None) -> tuple[list[LayerCache], list[str]]:
    """One :class:`LayerCache` per decoder layer, and the notes on the class defaults it fell back to.

    The layer kinds, windows and NoPE flags are read as :func:`~posenc_helpers.configs.layer_positions` reads
    them (the same family checks: an unknown ``model_type`` is refused unless ``assume="llama"``), but without the
    RoPE parameters, which the count does not need; the sizes from the config, as the module docstring says.
    ``config`` may be a dict, a config.json's JSON text or its path. Taught in
    notebooks/16-position-at-inference.ipynb.

    >>> layers, notes = kv_layers(bundled_kv_config("Gemma 3 27B"))
    >>> [(x.kind, x.window, x.numbers_per_token, x.holds) for x in layers[4:6]]   # 2 · 16 heads · 128
    [('sliding', 1024, 4096, 1023), ('full', None, 4096, None)]
    """
    if mla not in MLA_MODES:
        raise ValueError(f"mla must be one of {', '.join(repr(m) for m in MLA_MODES)}, got {v._show(mla)}")
    inner, _outer = _language(config)
    notes: list[str] = []
    model_type = inner.get("model_type")
    if check_family(inner, assume) is not None:
        model_type = "llama"  # the sizes too are read as LlamaConfig reads them; the plan's note says so
    model_type = model_type[: -len("_text")] if isinstance(model_type, str) and model_type.endswith("_text") else model_type
    _refuse(inner, model_type)
    plan, plan_notes, _family = _plan(inner, assume=assume)
    # what the count passes on from the layer reading: an assumed family (or none named), and windows a config
    # turns off
    notes += [n for n in plan_notes if n.startswith(("model_type", "layer_types names sliding")) or n == UNTYPED_NOTE]
    records = [_PlanLayer(t, w, r) for t, w, r in plan]
    types = [r.layer_type for r in records]
    shares = _sharing(inner, model_type, types, notes)
    if model_type == "deepseek_v3":
        per_token, what = _mla(inner, mla, notes)
        sizes = {t: (per_token, what) for t in set(types)}
    elif model_type in _SIZES_2026:
        return _SIZES_2026[model_type](inner, records, mla, notes), list(dict.fromkeys(notes))
    else:
        kv, head = _heads_and_dim(inner, model_type, notes)
        # keys and values: 2 · kv_heads · head_dim numbers per token
        sizes = {t: (2 * kv * head, f"keys and values, 2 × {kv} heads × {head}") for t in set(types)}
        if model_type == "gemma4" and "full_attention" in sizes:
            sizes["full_attention"] = _gemma4_full(inner, kv, notes)
    out = []
    for i, r in enumerate(records):
        per_token, what = sizes[r.layer_type]
        common = {"index": i, "layer_type": r.layer_type, "window": r.window, "rope": r.rope}
        if i in shares:
            source = shares[i]
            out.append(LayerCache(**common, kind="shared", numbers_per_token=0, holds=None, shares=source,
                                  cached="nothing" if source is None else f"nothing: reads layer {source}'s keys and values",
                                  cache_class="DummyLayer"))
        elif r.layer_type == "linear_attention":
            conv, recurrent, what = _linear(inner, notes)
            out.append(LayerCache(**common, kind="linear", numbers_per_token=0, holds=None, conv_state_numbers=conv,
                                  recurrent_state_numbers=recurrent, cached=what, cache_class="LinearAttentionLayer"))
        elif r.window is not None:
            kind = "chunked" if r.layer_type == "chunked_attention" else "sliding"
            # DynamicSlidingWindowLayer keeps [-W + 1:]: W − 1 tokens, or all of them when W = 1 ([0:])
            holds = r.window - 1 if r.window > 1 else None
            out.append(LayerCache(**common, kind=kind, numbers_per_token=per_token, holds=holds, cached=what,
                                  cache_class="DynamicSlidingWindowLayer"))
        else:
            out.append(LayerCache(**common, kind="full", numbers_per_token=per_token, holds=None, cached=what,
                                  cache_class="DynamicLayer"))
    return out, list(dict.fromkeys(notes))


def _gemma4_full(config: dict, kv: int, notes: list[str]) -> tuple[int, str]:
    """Gemma4TextConfig.__post_init__: full layers get head_dim = global_head_dim (default 512), and
    num_key_value_heads = num_global_key_value_heads when attention_k_eq_v is set (keys and values are both cached)."""
    head = _with_default(config, "global_head_dim", 512, "Gemma4TextConfig", notes)
    if config.get("attention_k_eq_v") and config.get("num_global_key_value_heads") is not None:
        kv = v.positive_int("num_global_key_value_heads", config["num_global_key_value_heads"])
    return 2 * kv * head, f"keys and values, 2 × {kv} heads × {head}"


def _bytes_per_number(config, bytes_per_number) -> tuple[int, str]:
    if bytes_per_number is None:
        dtype, size = dtype_bytes(config)
        return size, dtype
    return v.positive_int("bytes_per_number", bytes_per_number), "given"


def kv_cache(config, context, *, bytes_per_number=None, mla: str = "transformers", assume=None) -> CacheSize:
    """The KV cache of ``config`` after ``context`` tokens (one sequence), layer by layer.

    bytes of a layer = numbers_per_token · tokens(context) · b + conv_state · b + recurrent_state · 4, with b the
    bytes per number of the config's dtype (or ``bytes_per_number``). Taught in
    notebooks/16-position-at-inference.ipynb.

    >>> cache = kv_cache(bundled_kv_config("Llama 3.1 8B"), 8192)
    >>> cache.total_bytes, cache.bytes_per_token     # 32 layers · 2 · 8 heads · 128 · 2 bytes = 131,072 per token
    (1073741824, 131072.0)
    >>> kv_cache(bundled_kv_config("DeepSeek-V3"), 1).layers[0].numbers_per_token   # latent 512 + rotary key 64
    576
    """
    context = v.positive_int("context", context)
    config = load_config(config)
    layers, notes = kv_layers(config, mla=mla, assume=assume)
    size, dtype = _bytes_per_number(config, bytes_per_number)
    tokens = tuple(x.tokens(context) for x in layers)
    # numbers per token · tokens · b, plus the fixed states (and DeepSeek V4's compressed entries)
    per_layer = tuple(int(x.bytes(context, size)) for x in layers)
    return CacheSize(tuple(layers), context, size, dtype, mla, tokens, per_layer, tuple(notes))


def kv_bytes(config, contexts, *, bytes_per_number=None, mla: str = "transformers", assume=None) -> np.ndarray:
    """Total cache bytes after each of ``contexts`` tokens (an int64 array of their shape).

    Σ over layers of numbers_per_token · min(n, holds) · b, plus the fixed states: the same count as
    :func:`kv_cache`, for many contexts at once. Taught in notebooks/16-position-at-inference.ipynb.

    >>> kv_bytes(bundled_kv_config("Mistral 7B"), [4095, 4096, 8192]).tolist()   # every layer keeps ≤ 4,095 tokens
    [536739840, 536739840, 536739840]
    """
    n = np.asarray(contexts)
    if n.dtype == bool or not np.issubdtype(n.dtype, np.integer) or (n < 1).any():
        raise ValueError(f"contexts must be positive integers (tokens), got {v._show(contexts)}")
    n = n.astype(np.int64)
    config = load_config(config)
    layers = kv_layers(config, mla=mla, assume=assume)[0]
    size, _dtype = _bytes_per_number(config, bytes_per_number)
    total = np.zeros(n.shape, dtype=np.int64)
    for x in layers:
        total += x.bytes(n, size)
    return total


def receptive_field(layer_windows, context) -> np.ndarray:
    """How far back the last token can be influenced after each layer: an int array, one entry per layer.

    r_ℓ is the largest distance d such that the token at n − 1 depends, after layers 0 … ℓ, on the token at
    n − 1 − d. A sliding layer of window W (the query sees itself and the W − 1 tokens before it) adds W − 1:
    r ← min(r + W − 1, n − 1); a layer given as None (full attention, or linear attention's recurrent state) sees
    the whole prefix: r ← n − 1. Starting from r = 0 before the first layer. Taught in
    notebooks/16-position-at-inference.ipynb.

    >>> receptive_field([4, 4, None, 4], 100).tolist()   # 3, 3 + 3, the whole context, still the whole context
    [3, 6, 99, 99]
    """
    context = v.positive_int("context", context)
    if isinstance(layer_windows, str | bytes) or not hasattr(layer_windows, "__iter__"):
        raise TypeError(f"layer_windows must be a sequence of windows (int, or None for full), got {v._show(layer_windows)}")
    out, reach = [], 0
    for i, window in enumerate(layer_windows):
        if window is None:
            reach = context - 1
        else:
            # r ← min(r + W − 1, n − 1)
            reach = min(reach + v.positive_int(f"layer_windows[{i}]", window) - 1, context - 1)
        out.append(reach)
    return np.array(out, dtype=np.int64)


def hypothetical_config(layers, local_per_global, window, kv_heads, head_dim, dtype, context) -> dict:
    """A Gemma-3-style config that :func:`~posenc_helpers.configs.layer_positions` and :func:`kv_cache` read.

    ``local_per_global`` sliding layers of ``window`` tokens, then one full layer, repeated (Gemma 3: 5, 1,024);
    0 makes every layer global. Layer i is full when (i + 1) mod (local_per_global + 1) = 0, Gemma 3's rule.
    ``context`` becomes ``max_position_embeddings``. Taught in notebooks/16-position-at-inference.ipynb.

    >>> cfg = hypothetical_config(6, 2, 512, 8, 128, "bfloat16", 32768)
    >>> cfg["layer_types"][:3], kv_cache(cfg, 4096).total_bytes    # 4 sliding · 511 + 2 full · 4,096 tokens, 4 KiB each
    (['sliding_attention', 'sliding_attention', 'full_attention'], 41926656)
    """
    layers = v.positive_int("layers", layers)
    if isinstance(local_per_global, bool) or not isinstance(local_per_global, int | np.integer) or local_per_global < 0:
        raise ValueError("local_per_global must be an integer ≥ 0 (sliding layers per full one), "
                         f"got {v._show(local_per_global)}")
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPE_BYTES)}, got {v._show(dtype)}")
    every = int(local_per_global) + 1
    types = ["sliding_attention" if (i + 1) % every else "full_attention" for i in range(layers)]
    bases = {"sliding_attention": 10_000.0, "full_attention": 1_000_000.0}  # Gemma3TextConfig's default_theta
    return {
        "model_type": "gemma3_text",
        "num_hidden_layers": layers,
        "layer_types": types,
        "sliding_window": v.positive_int("window", window),
        "num_key_value_heads": v.positive_int("kv_heads", kv_heads),
        "head_dim": v.positive_int("head_dim", head_dim),
        "dtype": dtype,
        "max_position_embeddings": v.positive_int("context", context),
        "rope_parameters": {t: {"rope_type": "default", "rope_theta": bases[t]} for t in bases if t in types},
    }


def _rule(layers: list[LayerCache]) -> str:
    """The counting rule in a few words: how many layers of each kind, and what they keep."""
    groups: dict[tuple, int] = {}
    for x in layers:
        key = ("shared", None, 0, "") if x.kind == "shared" else (
            x.kind, x.window, x.numbers_per_token, x.cached if x.kind == "linear" else _entries_text(x))
        groups[key] = groups.get(key, 0) + 1
    parts = []
    for (kind, window, per_token, what), count in groups.items():
        if kind == "linear":
            parts.append(f"{count} linear ({what})")
        elif kind == "shared":
            parts.append(f"{count} shared (no cache)")
        elif kind == "compressed":
            parts.append(f"{count} compressed W={window:,} (keeps {window - 1:,}) × {per_token:,} numbers per token "
                         f"+ {what}")
        elif window is None or window == 1:
            parts.append(f"{count} full × {per_token:,} numbers per token")
        else:
            parts.append(f"{count} {kind} W={window:,} (keeps {window - 1:,}) × {per_token:,} numbers per token")
    return " + ".join(parts)


def _entries_text(x: LayerCache) -> str:
    """A compressed layer's entries in words: 'compressor 512 numbers per 4 tokens + indexer 128 per 4'."""
    return " + ".join(f"{c.name} {c.numbers_per_entry:,} numbers per {c.rate} tokens" for c in x.compressed)


def kv_table(contexts=CONTEXTS, *, mla: str = "transformers") -> list[dict]:
    """One row per bundled model: its counting rule, dtype, and the cache at each context.

    Each row: ``name``, ``rule`` (layers by kind, window, numbers per token), ``dtype`` (None when the data states
    none), ``numbers`` ({context: numbers cached}), ``bytes`` and ``bytes_per_token`` ({context: value}, None
    without a dtype), ``beyond`` ({context: True when it exceeds the config's max_position_embeddings}) and
    ``notes``. Taught in notebooks/16-position-at-inference.ipynb.

    >>> row = kv_table()[1]
    >>> row["name"], row["bytes"][8192], row["bytes_per_token"][131072]
    ('Llama 3.1 8B', 1073741824, 131072.0)
    """
    contexts = [v.positive_int("contexts", c) for c in contexts]
    rows = []
    for name in bundled_configs("all"):
        config = bundled_kv_config(name)
        layers, notes = kv_layers(config, mla=mla)
        # numbers cached: Σ numbers_per_token · tokens(n) + the fixed states (+ compressed entries), any dtype
        numbers = {n: int(sum(sum(x.numbers(n)) for x in layers)) for n in contexts}
        try:
            dtype, _size = dtype_bytes(config)
            totals = {n: int(b) for n, b in zip(contexts, kv_bytes(config, contexts, mla=mla), strict=True)}
        except ValueError:
            dtype, totals = None, None
        lang = _language(config)[0]
        field = context_field(lang, keys=("max_position_embeddings",))
        limit = None if field is None else field[1]
        rows.append({
            "name": name, "rule": _rule(layers), "dtype": dtype, "numbers": numbers,
            "bytes": dict.fromkeys(contexts) if totals is None else totals,
            "bytes_per_token": {n: None if totals is None else totals[n] / n for n in contexts},
            "beyond": {n: limit is not None and n > limit for n in contexts}, "notes": notes,
        })
    return rows


def format_bytes(x: float) -> str:
    """Bytes in binary units, one decimal below 100 of a unit and whole numbers from 100 up: 56.0 KiB, 512 KiB,
    4.0 GiB (the KV table's cells, and notebook 16's slider readout).

    >>> format_bytes(57344), format_bytes(2**19), format_bytes(4 * 2**30), format_bytes(372 * 2**30)
    ('56.0 KiB', '512 KiB', '4.0 GiB', '372 GiB')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if x >= scale:
            value = x / scale
            return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"
    return f"{x:,.0f} B"


def kv_table_text(contexts=CONTEXTS, *, mla: str = "transformers") -> str:
    """:func:`kv_table` as text to print: the average per token and the total at each context, then each model's rule.

    The first columns give the average per token, the cache divided by the context n (a sliding layer's share of
    it falls once n passes its window, so it is not what the next token costs); the last ones the whole cache.
    A ``*`` marks a context beyond the config's max_position_embeddings. A model whose data states no dtype
    shows the numbers it caches instead of bytes. Taught in notebooks/16-position-at-inference.ipynb.
    """
    rows = kv_table(contexts, mla=mla)
    label = {n: f"{n // 1048576}M" if n % 1048576 == 0 else f"{n // 1024}K" if n % 1024 == 0 else f"{n:,}"
             for n in rows[0]["numbers"]} if rows else {}
    width = 13  # a cell: the value right-aligned in 12 characters, then the mark

    def cell(text: str, beyond: bool) -> str:
        return f"{text:>{width - 1}}" + ("*" if beyond else " ")

    groups = f"{'average per token (cache ÷ n)':^{width * len(label)}}{'total (cache after n tokens)':^{width * len(label)}}"
    head = f"{'model':<23}{'dtype':<9}" + "".join(f"{'n = ' + label[n]:>{width - 1}} " for n in label) * 2
    lines = [" " * 32 + groups.rstrip(), head.rstrip(), "-" * len(head)]
    for row in rows:
        per, total = [], []
        for n in label:
            if row["dtype"] is None:
                per.append(cell(f"{row['numbers'][n] / n:,.0f} num", row["beyond"][n]))
                total.append(cell(f"{row['numbers'][n] / 2**20:,.0f} Mi", row["beyond"][n]))
            else:
                per.append(cell(format_bytes(row["bytes_per_token"][n]), row["beyond"][n]))
                total.append(cell(format_bytes(row["bytes"][n]), row["beyond"][n]))
        lines.append((f"{row['name']:<23}{row['dtype'] or '(none)':<9}" + "".join(per + total)).rstrip())
    lines += ["", "* beyond the context the config declares (max_position_embeddings).",
              "(none): no dtype stated; numbers cached per token and in total (Mi = 2^20 numbers).", ""]
    lines += [f"{row['name']}: {row['rule']}" for row in rows]
    return "\n".join(lines)
