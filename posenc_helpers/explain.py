"""`posenc explain`'s report: a model's config explained layer by layer, as data.

One dict per decoder layer (:data:`LAYER_FIELDS`: attention kind, window, RoPE
and its frequencies, softmax scale, QK-norm, sinks, what the layer caches)
comes from an *engine*: :func:`course_layers` reads the config with the
course's own reader (:func:`posenc_helpers.configs.layer_positions` and
:func:`posenc_helpers.kvcache.kv_layers`, no torch, no transformers), and
:mod:`posenc_helpers.explain_hf` builds the same dicts from transformers
itself. :func:`build_report` turns either list into the report: the distinct
kinds of layer, the runs of identical layers, the KV cache per token and at
chosen contexts, Men et al.'s base-context check and the notes.
:mod:`posenc_helpers.explain_text` renders it; :mod:`posenc_helpers.explain_cli`
is the command.

>>> cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
...        "num_key_value_heads": 2, "rope_theta": 10000.0, "max_position_embeddings": 256,
...        "torch_dtype": "bfloat16"}
>>> report = explain(cfg, contexts=[1024])
>>> [(k["id"], k["count"], k["pairs"], k["kv_numbers_per_token"]) for k in report["kinds"]]   # 2 · 2 heads · 16
[('A', 2, 8, 64)]
>>> report["kv_cache"]["contexts"][0]["bytes"]                   # 2 layers · 64 numbers · 1,024 tokens · 2 bytes
262144

Taught in notebooks/11-rope-as-shipped.ipynb (the command), after notebooks 14 and 16.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .base_bound import _checked_length, base_lower_bound, first_negative, stored_bounds
from .configs import (
    CONTEXT_KEYS,
    FAMILIES,
    check_family,
    context_field,
    describe_config,
    frequencies_from_config,
    layer_positions,
    per_layer,
    rope_settings,
)

# _language: the KV counter's reading of a config's language model (text_config, and GPT-J's own key names), the
# one place the package maps them; private there, so tests/test_explain.py holds this module's use of it to the
# reader on every bundled config and hand-built shape
from .kvcache import DTYPE_BYTES, RECURRENT_STATE_BYTES, CompressedCache, _language, dtype_bytes, kv_layers

#: The report's format version (``report["format"]``).
FORMAT = 1

#: The contexts the KV cache is shown at when none are asked for: 8K, 128K and 1M tokens.
DEFAULT_CONTEXTS = (8192, 131072, 1048576)

#: What each layer's dict holds, in this order (both engines fill every one; "not traced" where one cannot).
LAYER_FIELDS = (
    "layer_type", "attention", "window", "rope", "pairs", "rotary_dim", "head_dim", "layout", "rope_type", "base",
    "factor", "attention_factor", "inv_freq", "softmax_scale", "query_temperature", "qk_norm", "sinks",
    "kv_kind", "kv_numbers_per_token", "kv_holds", "kv_state_numbers", "cache_layer", "kv_cached",
)

#: The value a field takes when its engine cannot read it (it is then left out of ``--check``).
NOT_TRACED = "not traced"

#: The transformers cache layer class (transformers 5.25.0, ``cache_utils.py``, ``DYNAMIC_LAYER_TYPE_MAPPING``)
#: that holds each kind the course's counter (:mod:`posenc_helpers.kvcache`) counts.
CACHE_LAYER = {"full": "DynamicLayer", "sliding": "DynamicSlidingWindowLayer", "chunked": "DynamicSlidingWindowLayer",
               "linear": "LinearAttentionLayer", "shared": "DummyLayer"}

#: Attention sinks (a learned logit per head that takes part in the softmax), per family of
#: :data:`posenc_helpers.configs.FAMILIES`: only gpt-oss has them among the families the reader transcribes
#: (transformers 5.25.0, models/gpt_oss/modeling_gpt_oss.py: ``self.sinks = nn.Parameter(...)``, passed to the
#: attention as ``s_aux``); Llama's attention has none; any other family's code decides ("unknown").
SINK_FAMILIES = ("gpt_oss",)


def attention_kind(layer_type: str, window) -> str:
    """"chunked", "linear", "sliding" (a window on the layer) or "full", the name the report uses.

    >>> attention_kind("full_attention", 4096), attention_kind("chunked_attention", 8192)   # Mistral windows every layer
    ('sliding', 'chunked')
    """
    if layer_type == "chunked_attention":
        return "chunked"
    if layer_type == "linear_attention":
        return "linear"
    return "full" if window is None else "sliding"


def language_config(config: dict) -> dict:
    """The language model's part, as the KV counter reads it: a multimodal config's text_config (keeping the
    outer model_type), GPT-J's keys (n_layer, n_head, n_embd, n_positions) under their attribute_map names."""
    return _language(config)[0]


def reader_config(config: dict) -> dict:
    """The config the course's reader is given: a multimodal config as it is (the reader reads its text_config
    and says so), any other as :func:`language_config` reads it (GPT-J's keys named as the reader reads them)."""
    return config if isinstance(config.get("text_config"), dict) else language_config(config)


def _sinks(model_type) -> bool | str:
    family = FAMILIES.get(model_type)
    if family is None:
        return False if model_type == "llama" else "unknown"
    return family in SINK_FAMILIES


def _temperature_text(fn) -> str | None:
    """A query temperature (a functools.partial of the reader's) in words, or None."""
    if fn is None:
        return None
    kw = fn.keywords
    if "floor_scale" in kw:
        return f"1 + {kw['attn_scale']:g}·ln(1 + ⌊(p + 1)/{kw['floor_scale']:,.0f}⌋)"
    return f"1 + {kw['beta']:g}·ln(1 + ⌊p/{kw['original_max_position']:,.0f}⌋)"


def _qk_norm(value):
    """The reader's QKNorm as {"where", "over", "kind", "weight"}, None, or "unknown"."""
    if value is None or isinstance(value, str):
        return value
    return {"where": value.where, "over": value.over, "kind": value.kind, "weight": value.weight}


#: The kinds :func:`kv_summary` totals: :data:`CACHE_LAYER`'s, and DeepSeek V4's "compressed" layers (a window's
#: keys plus compressed entries, ``DeepseekV4CSACache`` or ``DeepseekV4HCACache``), counted as
#: :class:`posenc_helpers.kvcache.CompressedCache` counts them.
KV_KINDS = (*CACHE_LAYER, "compressed")


def _kv_fields(kv) -> dict:
    if kv is None:
        return {"kv_kind": None, "kv_numbers_per_token": None, "kv_holds": None, "kv_state_numbers": None,
                "cache_layer": None, "kv_cached": None}
    fields = {"kv_kind": kv.kind, "kv_numbers_per_token": kv.numbers_per_token, "kv_holds": kv.holds,
              "kv_state_numbers": {"conv": kv.conv_state_numbers, "recurrent": kv.recurrent_state_numbers},
              "cache_layer": kv.cache_class or CACHE_LAYER[kv.kind], "kv_cached": kv.cached}
    if kv.compressed:  # DeepSeek V4: the entries each compressor adds (not a LAYER_FIELDS field: the course's own)
        fields["kv_compressed"] = [dataclasses.asdict(c) for c in kv.compressed]
    return fields


def course_layers(config: dict, *, assume: str | None = None) -> tuple[list[dict], list[str]]:
    """One dict per decoder layer (:data:`LAYER_FIELDS`) read by the course's reader, and its notes.

    A config the reader refuses raises its ValueError (naming the model_type or the key); ``assume="llama"``
    reads a model_type the reader does not transcribe as Llama's code would (the reader's first note says so).
    The KV counter may refuse a config the reader reads (an encoder, an unknown family without
    num_key_value_heads): then the layers' KV fields are None and a note says why.
    """
    records = layer_positions(config, assume=assume)
    notes = reader_notes(config, assume=assume)
    try:
        kv, kv_notes = kv_layers(config, assume=assume)
        notes += kv_notes
    except ValueError as exc:
        kv = [None] * len(records)
        notes.append(f"KV cache not counted: {exc}")
    model_type = language_config(config).get("model_type")
    layers = []
    for r, cache in zip(records, kv, strict=True):
        inv = None if r.inv_freq is None else [float(x) for x in r.inv_freq]
        layers.append({
            "layer_type": r.layer_type, "attention": attention_kind(r.layer_type, r.window), "window": r.window,
            "rope": r.rope, "pairs": 0 if inv is None else len(inv),
            "rotary_dim": 0 if inv is None else 2 * int(np.count_nonzero(r.inv_freq > 0)), "head_dim": r.head_dim,
            "layout": r.layout if r.rope else None, "rope_type": r.rope_type, "base": r.base, "factor": r.factor,
            "attention_factor": r.attention_factor, "inv_freq": inv, "softmax_scale": r.softmax_scale,
            "query_temperature": _temperature_text(r.query_temperature), "qk_norm": _qk_norm(r.qk_norm),
            "sinks": True if r.sinks else _sinks(model_type), **_kv_fields(cache),
        })
    return layers, notes


def reader_notes(config: dict, *, assume: str | None = None) -> list[str]:
    """The defaults and readings the reader states, in its words.

    For one scheme on every layer, :func:`~posenc_helpers.configs.rope_settings`' notes (but where the base
    came from). For a per-layer config, the reader exposes its notes only in :func:`describe_config`'s report,
    one ``note: `` line each, after every other line: they are read back from there (tests/test_explain.py
    holds the result to the reader's own list on every bundled config and hand-built shape).

    >>> reader_notes({"model_type": "gemma3_text", "num_hidden_layers": 2, "head_dim": 64})[:1]
    ['no layer_types: every 6th layer full, the others sliding (the class default)']
    """
    if per_layer(config, assume=assume):
        lines = describe_config(config, assume=assume).splitlines()
        return [line[len("note: "):] for line in lines if line.startswith("note: ")]
    return [n for n in rope_settings(config, assume=assume).notes if not n.startswith("base ")]


def declared_context(config: dict) -> int | None:
    """max_position_embeddings (or n_positions; Kimi Linear's model_max_length), in text_config or at the top; None
    when neither states one."""
    for source in (language_config(config), config):
        # each key as context_field orders them (Kimi Linear's model_max_length last), each taken only when valid
        for field in [(key, source.get(key)) for key in CONTEXT_KEYS] + [context_field(source, keys=())]:
            limit = None if field is None else field[1]
            if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
                return limit
    return None


def resolve_dtype(config: dict, dtype: str | None) -> tuple[str | None, int | None, str]:
    """(dtype, bytes per number, where it came from): ``dtype`` if given, else the config's, else (None, None, why).

    An unknown ``dtype`` raises a ValueError naming it and the known ones.

    >>> resolve_dtype({"torch_dtype": "bfloat16"}, None), resolve_dtype({}, "float32")
    (('bfloat16', 2, 'the config'), ('float32', 4, '--dtype'))
    """
    if dtype is not None:
        if dtype not in DTYPE_BYTES:
            raise ValueError(f"unknown dtype {dtype!r} (--dtype); known: {', '.join(DTYPE_BYTES)}")
        return dtype, DTYPE_BYTES[dtype], "--dtype"
    try:
        name, size = dtype_bytes(config)
    except ValueError as exc:
        return None, None, str(exc).split(": pass bytes_per_number=")[0] + ": give --dtype"
    return name, size, "the config"


# the fields that make two layers the same kind (every field but the cache's description)
_KIND_FIELDS = tuple(f for f in LAYER_FIELDS if f != "kv_cached")


def _kind_key(layer: dict) -> str:
    return repr([layer[f] for f in _KIND_FIELDS])


def kinds_and_runs(layers: list[dict]) -> tuple[list[dict], list[dict]]:
    """The distinct kinds of layer (lettered A, B, ... in order of first use, with their count) and the runs.

    A run is a stretch of consecutive layers of one kind: ``{"first", "last", "kind"}``.

    >>> a, b = {f: 0 for f in LAYER_FIELDS}, {f: 1 for f in LAYER_FIELDS}
    >>> kinds, runs = kinds_and_runs([a, a, b, a])
    >>> [(k["id"], k["count"]) for k in kinds], [(r["first"], r["last"], r["kind"]) for r in runs]
    ([('A', 3), ('B', 1)], [(0, 1, 'A'), (2, 2, 'B'), (3, 3, 'A')])
    """
    ids: dict[str, str] = {}
    kinds: list[dict] = []
    runs: list[dict] = []
    for i, layer in enumerate(layers):
        key = _kind_key(layer)
        if key not in ids:
            ids[key] = _letter(len(ids))
            kinds.append({"id": ids[key], "count": 0, **layer})
        kinds[[k["id"] for k in kinds].index(ids[key])]["count"] += 1
        if runs and runs[-1]["kind"] == ids[key]:
            runs[-1]["last"] = i
        else:
            runs.append({"first": i, "last": i, "kind": ids[key]})
    return kinds, runs


def _letter(n: int) -> str:
    """A, B, ..., Z, AA, AB, ..."""
    return _letter(n // 26 - 1) + chr(65 + n % 26) if n >= 26 else chr(65 + n)


def _held(layer: dict, context: int) -> int:
    """Tokens a layer holds after ``context`` tokens: min(context, holds), context when it keeps all, 0 for none."""
    if layer["kv_kind"] in ("linear", "shared"):
        return 0
    return context if layer["kv_holds"] is None else min(context, layer["kv_holds"])


def kv_summary(layers: list[dict], contexts, size: int | None) -> dict | None:
    """The cache per token and at each context, from the layers' KV fields; None when a layer's are unknown.

    numbers at n tokens = Σ numbers_per_token · min(n, holds) + the fixed states; bytes = numbers · b, the
    recurrent state at 4 bytes (float32), as :func:`posenc_helpers.kvcache.kv_cache` counts.
    """
    if any(x["kv_numbers_per_token"] is None or x["kv_numbers_per_token"] == NOT_TRACED
           or x["kv_kind"] not in KV_KINDS or x["kv_holds"] == NOT_TRACED
           or (x["kv_kind"] == "compressed" and "kv_compressed" not in x) for x in layers):
        return None  # a layer's count is unknown (the transformers engine measures no compressed entries)
    traced = all(isinstance(x["kv_state_numbers"], dict) for x in layers)
    conv = sum(x["kv_state_numbers"]["conv"] for x in layers) if traced else 0
    recurrent = sum(x["kv_state_numbers"]["recurrent"] for x in layers) if traced else 0
    per_token = sum(x["kv_numbers_per_token"] for x in layers if x["kv_kind"] not in ("linear", "shared"))
    rows = []
    for n in contexts:
        numbers = sum(x["kv_numbers_per_token"] * _held(x, n) for x in layers) + conv + recurrent
        # DeepSeek V4's compressed entries: model-dtype numbers, and the float32 overlap kept with them
        entries = [CompressedCache(**c).numbers(n) for x in layers for c in x.get("kv_compressed", ())]
        float32 = recurrent + sum(int(f) for _, f in entries)
        numbers += sum(int(m) + int(f) for m, f in entries)
        # bytes = Σ numbers_per_token · tokens · b + conv · b + (recurrent + float32 overlaps) · 4
        total = None if size is None else (numbers - float32) * size + float32 * RECURRENT_STATE_BYTES
        rows.append({"context": n, "numbers": numbers, "bytes": total,
                     "bytes_per_token": None if total is None else total / n})
    return {"numbers_per_token": per_token, "bytes_per_token": None if size is None else per_token * size,
            "state_numbers": {"conv": conv, "recurrent": recurrent, "traced": traced},
            "state_bytes": None if size is None or not traced else conv * size + recurrent * RECURRENT_STATE_BYTES,
            "contexts": rows}


def _bidirectional(config: dict) -> bool:
    # Gemma 4's "vision": an image's tokens see each other both ways, text tokens stay causal (the reader notes it)
    return any(part.get("model_type") == "modernbert"
               or part.get("use_bidirectional_attention") not in (None, False, "vision")
               for part in (config, language_config(config)))


def base_check(kinds: list[dict], context: int | None, *, long_freqs=None, compute_bound: bool = False) -> list[dict]:
    """Men et al.'s check (arXiv 2405.14591, Eq. 10-11) for each kind of layer with RoPE, as data.

    Each row: the kind, the largest distance checked L (``context`` for a full layer, min(window − 1, context) for
    a sliding or chunked one, as :func:`posenc_helpers.base_bound.config_bounds` checks), the first m ≤ L where
    B_m = Σ cos(m·θ_i) < 0 with the layer's own frequencies (``first_negative_model``) and with the head's
    position-free pairs added (``first_negative_head``), None when B_m ≥ 0 at every m; Eq. 11's bound for
    (L, rotary_dim) from the stored table (``bound_from`` "stored"), computed when ``compute_bound``, else None.
    ``long_freqs`` replaces a kind's frequencies ({kind id: inv_freq}), e.g. LongRoPE's long factors.
    """
    if context is None:
        return []
    table = stored_bounds()
    rows, seen = [], {}
    for kind in kinds:
        if kind["rope"] is not True or not kind["inv_freq"]:
            continue
        inv = np.asarray((long_freqs or {}).get(kind["id"], kind["inv_freq"]), dtype=np.float64)
        inv = inv[inv > 0]  # the turning pairs; ω = 0 pairs count as position-free, as config_bounds counts them
        # kinds that differ only in their cache (Gemma 4 E2B's shared layers) have one check, as config_bounds does
        same = (kind["layer_type"], kind["window"], kind["rotary_dim"], kind["head_dim"], kind["base"], inv.tobytes())
        if same in seen:
            seen[same]["kinds"].append(kind["id"])
            continue
        # a compressed layer's entries (DeepSeek V4) reach the whole context, as config_bounds checks them
        length = _checked_length(kind["window"], context, kind.get("layer_type"))
        free = max(kind["head_dim"] // 2 - inv.size, 0) if isinstance(kind["head_dim"], int) else 0
        bound, source = table.get((length, kind["rotary_dim"])), "stored"
        if bound is None and compute_bound and length >= 2 and kind["rotary_dim"] >= 4:
            bound, source = base_lower_bound(length, kind["rotary_dim"]), "computed"
        rows.append({
            "kind": kind["id"], "kinds": [kind["id"]], "context": length, "rotary_dim": kind["rotary_dim"],
            "base": kind["base"],
            "first_negative_model": first_negative(inv, length),
            "first_negative_head": first_negative(np.concatenate([inv, np.zeros(free)]), length),
            "bound": bound, "bound_from": source if bound is not None else None,
            "above": None if bound is None or not isinstance(kind["base"], float | int) else kind["base"] >= bound,
        })
        seen[same] = rows[-1]
    return rows


def build_report(layers: list[dict], notes: list[str], config: dict, *, engine: dict, contexts=DEFAULT_CONTEXTS,
                 dtype: str | None = None, source: str | None = None, long_freqs=None,
                 compute_bound: bool = False, assumed: dict | None = None) -> dict:
    """The whole report from one engine's layers: kinds, runs, KV cache, base-context check and notes.

    ``assumed`` (``{"model_type": ..., "read_as": "llama"}``, or None) records that the course's reader read a
    model_type it does not transcribe as another family's code would, on request."""
    contexts = tuple(contexts)
    name, size, dtype_from = resolve_dtype(config, dtype)
    kinds, runs = kinds_and_runs(layers)
    context = declared_context(config)
    inner = language_config(config)
    notes = list(dict.fromkeys(notes))
    if name is None:
        notes.append(f"KV cache in numbers, not bytes: {dtype_from}")
    if context is None:
        notes.append("no base-context check: the config declares no context (max_position_embeddings)")
    elif _bidirectional(config):
        notes.append("no base-context check: the model attends both ways (Men et al.'s check is for causal decoders)")
        context = None
    kinds_long = {k["id"]: long_freqs[_kind_key(k)] for k in kinds if long_freqs and _kind_key(k) in long_freqs}
    other = sorted({str(x["kv_kind"]) for x in layers if x["kv_kind"] not in (None, NOT_TRACED, *KV_KINDS)})
    if any(x["kv_kind"] == NOT_TRACED for x in layers):
        notes.append("KV cache not traced: the forward pass ran without a cache")
    if other:
        notes.append(f"KV cache not totalled: cache layers of kind {', '.join(other)}, which the report does not count")
    if any(x["kv_kind"] == "compressed" and "kv_compressed" not in x for x in layers):
        notes.append("KV cache not totalled: the compressed entries of DeepSeek V4's CSA and HCA layers are not "
                     "measured by this engine (the course's engine counts them)")
    return {
        "format": FORMAT, "engine": engine, "source": source, "model_type": inner.get("model_type"),
        "assumed": assumed, "text_config": isinstance(config.get("text_config"), dict), "num_layers": len(layers),
        "declared_context": declared_context(config), "kinds": kinds, "runs": runs,
        "kv_cache": {"dtype": name, "bytes_per_number": size, "dtype_from": dtype_from if name else None,
                     **(kv_summary(layers, contexts, size) or {"contexts": None})},
        "base_check": base_check(kinds, context, long_freqs=kinds_long, compute_bound=compute_bound),
        "notes": notes,
    }


def course_engine() -> dict:
    """What the report says about the course's engine: its name and the package version."""
    from . import __version__

    return {"name": "course", "reader": "posenc_helpers.configs", "version": f"posenc_helpers {__version__}"}


def _long_frequencies(config: dict, layers: list[dict], assume: str | None = None) -> dict | None:
    """A single-scheme dynamic or LongRoPE config's frequencies at its declared context, by kind key, for the
    base check (the layers hold the short-sequence ones); None otherwise."""
    context = declared_context(config)
    if (per_layer(config, assume=assume) or context is None or not layers
            or layers[0]["rope_type"] not in ("dynamic", "longrope")):
        return None
    inv, _att = frequencies_from_config(config, seq_len=context, assume=assume)
    return {_kind_key(layers[0]): [float(x) for x in inv]}


def assumption(config: dict, assume: str | None) -> tuple[dict | None, str | None]:
    """(what was assumed, as the report's data, or None; a note when ``assume`` was given but not needed).

    The reader's own check (:func:`~posenc_helpers.configs.check_family`) decides: a model_type it does not
    transcribe is read as ``assume`` asks; a family it transcribes, or a config without model_type, is read as
    always, and ``assume`` changes nothing.

    >>> assumption({"model_type": "mystery_lm"}, "llama")
    ({'model_type': 'mystery_lm', 'read_as': 'llama'}, None)
    >>> assumption({"model_type": "qwen3"}, "llama")[1]
    "assume='llama' not used: model_type 'qwen3' is a family the reader transcribes"
    """
    model_type = check_family(config, assume)
    if model_type is not None:
        return {"model_type": model_type, "read_as": assume}, None
    if assume is None:
        return None, None
    named = language_config(config).get("model_type")
    why = (f"model_type {named!r} is a family the reader transcribes" if named is not None
           else "the config has no model_type, and is read Llama-style where no key names a family")
    return None, f"assume={assume!r} not used: {why}"


def explain(config: dict, *, contexts=DEFAULT_CONTEXTS, dtype: str | None = None, source: str | None = None,
            compute_bound: bool = False, assume: str | None = None) -> dict:
    """The report of ``config`` by the course's engine (see the module docstring); a refused config raises.

    ``assume="llama"`` reads a model_type the reader does not transcribe as Llama's code would: the report's
    ``assumed`` says so as data, and the reader's first note in words."""
    if not isinstance(config, dict):
        raise ValueError(f"the config must be a JSON object (a dict), got {type(config).__name__}")
    assumed, unused = assumption(config, assume)
    layers, notes = course_layers(reader_config(config), assume=assume)
    if unused:
        notes.insert(0, unused)
    long_freqs = _long_frequencies(config, layers, assume)
    if long_freqs:
        notes.append(f"base-context check with the {layers[0]['rope_type']} frequencies at the declared context")
    return build_report(layers, notes, config, engine=course_engine(), contexts=contexts, dtype=dtype,
                        source=source, long_freqs=long_freqs, compute_bound=compute_bound, assumed=assumed)


#: The fields ``--check`` holds the two engines to, per layer (a field either engine could not read is skipped).
COMPARED = ("attention", "window", "rope", "pairs", "rotary_dim", "head_dim", "layout", "rope_type", "base",
            "attention_factor", "inv_freq", "softmax_scale", "qk_norm", "sinks", "kv_kind", "kv_numbers_per_token",
            "kv_holds", "cache_layer")

# relative tolerances: transformers computes inv_freq in float32 (1 / base^(2k/d) in torch.float), the reader in
# float64; the scales and factors are Python floats on both sides
_RTOL = {"inv_freq": 1e-5, "attention_factor": 1e-9, "softmax_scale": 1e-9, "base": 1e-12}


def _unknown(value) -> bool:
    return value in (NOT_TRACED, "unknown") if isinstance(value, str) else False


def _same(field: str, a, b) -> bool | None:
    """Whether two engines' values agree; None when either could not read it."""
    if _unknown(a) or _unknown(b):
        return None
    if field == "qk_norm" and isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in ("where", "over", "kind", "weight") if not (_unknown(a.get(k)) or _unknown(b.get(k)))]
        return all(a.get(k) == b.get(k) for k in keys)
    if field in _RTOL and a is not None and b is not None:
        x, y = np.atleast_1d(np.asarray(a, dtype=np.float64)), np.atleast_1d(np.asarray(b, dtype=np.float64))
        return x.shape == y.shape and bool(np.allclose(x, y, rtol=_RTOL[field], atol=0.0))
    return a == b


def compare_layers(course: list[dict], other: list[dict]) -> tuple[list[dict], list[str]]:
    """Every (layer, field) of :data:`COMPARED` where the engines disagree, and the fields left uncompared.

    >>> a = {f: None for f in LAYER_FIELDS} | {"inv_freq": [1.0, 0.01], "window": 4096}
    >>> b = a | {"inv_freq": [1.0, 0.0100000001], "window": 4095}
    >>> compare_layers([a], [b])[0]
    [{'layer': 0, 'field': 'window', 'course': 4096, 'transformers': 4095}]
    """
    if len(course) != len(other):
        return [{"layer": None, "field": "num_layers", "course": len(course), "transformers": len(other)}], []
    diffs, skipped = [], []
    for i, (a, b) in enumerate(zip(course, other, strict=True)):
        for field in COMPARED:
            # the course's KV counter may refuse a config the reader reads: its KV fields are then None
            counted = a["kv_kind"] is not None or field not in ("kv_kind", "kv_numbers_per_token", "kv_holds",
                                                                 "cache_layer")
            same = _same(field, a[field], b[field]) if counted else None
            if same is None:
                skipped.append(field)
            elif not same:
                diffs.append({"layer": i, "field": field, "course": a[field], "transformers": b[field]})
    return diffs, sorted(set(skipped))
