"""Read a real model's config: which RoPE it ships, and what that does to each pair.

:func:`frequencies_from_config` takes a dict shaped like a Hugging Face
``config.json`` (old files with ``rope_scaling``, newer ones with
``rope_parameters``) and returns the frequencies and attention factor the
model uses, following Hugging Face ``transformers``' ``modeling_rope_utils``.
:func:`describe_config` says the same in plain language. A few real configs
ship with the package (:func:`bundled_configs`), each with the repository and
file it was copied from (:func:`bundled_sources`).

Models of 2025–26 set position per layer: :func:`layer_positions` gives one
:class:`LayerPositions` record per decoder layer (window, RoPE or none, the
``inv_freq`` buffer, softmax scale, query temperature, ...), as the model's own
code in transformers 5 computes it (``layer_types``, ``rope_parameters`` nested
by layer type, ``no_rope_layers`` where 1 means RoPE and 0 none, the
``"proportional"`` rope type, DeepSeek's MLA fields, Llama 4's temperature),
for the families it transcribes (:data:`FAMILIES`). A config of any other
family is read only where no family's code could read it differently (one
scheme, none of :data:`FAMILY_KEYS`); otherwise it is refused. What the reader
does not understand raises a ValueError naming the key (and the
``model_type``); every default it falls back to is stated by
:func:`describe_config`.

Taught in notebooks/11-rope-as-shipped.ipynb.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import partial
from importlib import resources

import numpy as np

from . import _validate as v
from .core import frequencies
from .scaling import scaled_frequencies, scaling_attention_factor

__all__ = [
    "ROPE_TYPES",
    "DEFAULT_BASE",
    "RopeSettings",
    "rope_settings",
    "frequencies_from_config",
    "config_summary",
    "describe_config",
    "bundled_configs",
    "bundled_sources",
    "bundled_left_out",
    "FAMILIES",
    "FAMILY_KEYS",
    "LAYER_TYPES",
    "LayerPositions",
    "QKNorm",
    "QK_NORM_UNKNOWN",
    "layer_positions",
    "per_layer",
    "llama4_query_temperature",
    "llama_4_scaling_temperature",
]

#: The ``rope_type`` values Hugging Face knows, and the legacy name ``"su"`` for LongRoPE.
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional")
_LEGACY = {"su": "longrope", "mrope": "default"}

#: The base assumed when a config names none (what Hugging Face uses then: LlamaConfig's default, GPT-J's fixed value).
DEFAULT_BASE = 10000.0


@dataclass(frozen=True)
class RopeSettings:
    """Everything a config says about RoPE, resolved as Hugging Face resolves it.

    ``notes`` lists, in words, where each value came from and any fallback used.
    """

    rope_type: str
    base: float
    head_dim: int
    rotary_dim: int
    max_position_embeddings: int | None
    original_max_position: int | None
    factor: float | None
    params: dict
    notes: tuple[str, ...] = field(default=())

    @property
    def pairs(self) -> int:
        """The number of rotated pairs, rotary_dim / 2."""
        return self.rotary_dim // 2


def _number(name: str, value) -> float:
    return v.real_scalar(name, value)


def _scaling_dict(config: dict) -> tuple[dict, str]:
    """The scaling dict and where it was found: ``rope_parameters`` (newer files) or ``rope_scaling``."""
    for key in ("rope_parameters", "rope_scaling"):
        found = config.get(key)
        if found is not None:
            if not isinstance(found, dict):
                raise TypeError(f"{key} must be a dict (or null), got {v._show(found)}")
            return found, key
    return {}, "rope_scaling"


def _phi3(config: dict) -> dict:
    """A ``model_type`` "phi3" config as Phi3Config leaves it (configuration_phi3.py, transformers 5.24.0).

    Its ``"su"`` and ``"yarn"`` become ``"longrope"``, and for llama3, yarn and longrope the top-level
    ``original_max_position_embeddings`` (a field of the class, 4096 by default) replaces the scaling dict's own
    (standardize_rope_params: "we give priority to self.original_max_position_embeddings"). Other configs pass
    through unchanged.

    >>> c = _phi3({"model_type": "phi3", "rope_scaling": {"type": "yarn", "original_max_position_embeddings": 8192}})
    >>> c["rope_scaling"]
    {'type': 'longrope', 'original_max_position_embeddings': 4096}
    """
    if not isinstance(config, dict) or config.get("model_type") != "phi3":
        return config
    params, where = _scaling_dict(config)
    if not params:
        return config
    params = dict(params)
    kind = params.get("rope_type", params.get("type"))
    if kind in ("su", "yarn"):
        params["rope_type" if "rope_type" in params else "type"] = kind = "longrope"
    if kind in ("llama3", "yarn", "longrope"):
        params["original_max_position_embeddings"] = config.get("original_max_position_embeddings", 4096)
    return {**config, where: params}


def rope_settings(config) -> RopeSettings:
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
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> s = rope_settings({"hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25})
    >>> s.head_dim, s.rotary_dim, s.base, s.rope_type
    (96, 24, 10000.0, 'default')
    >>> print(s.notes[0])
    no rope_theta (or rotary_emb_base) in the config: base 10000 assumed, the value Hugging Face uses when a config names none
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict shaped like a config.json, got {v._show(config)}")
    config = _phi3(config)
    params, where = _scaling_dict(config)
    notes: list[str] = []

    # base: rope_theta, rope_parameters.rope_theta, rotary_emb_base, else 10000
    if config.get("rope_theta") is not None:
        base, said = config["rope_theta"], "rope_theta"
    elif params.get("rope_theta") is not None:
        base, said = params["rope_theta"], f"{where}.rope_theta"
    elif config.get("rotary_emb_base") is not None:
        base, said = config["rotary_emb_base"], "rotary_emb_base"
    else:
        base, said = DEFAULT_BASE, None
        notes.append(
            "no rope_theta (or rotary_emb_base) in the config: base 10000 assumed, "
            "the value Hugging Face uses when a config names none"
        )
    base = v.base_value(base, name=said or "base")
    if said:
        notes.append(f"base {int(base):,} from {said}" if base.is_integer() else f"base {base!r} from {said}")

    # head width: head_dim, else hidden_size // num_attention_heads, else n_embd // n_head
    if config.get("head_dim"):
        head_dim = v.positive_int("head_dim", config["head_dim"])
    elif config.get("hidden_size") is not None and config.get("num_attention_heads") is not None:
        head_dim = v.positive_int("hidden_size", config["hidden_size"]) // v.positive_int(
            "num_attention_heads", config["num_attention_heads"]
        )
    elif config.get("n_embd") is not None and config.get("n_head") is not None:
        head_dim = v.positive_int("n_embd", config["n_embd"]) // v.positive_int("n_head", config["n_head"])
    else:
        raise ValueError(
            "config gives no head width: need head_dim, or hidden_size and num_attention_heads, "
            "or n_embd and n_head (GPT-J)"
        )

    # rotated width: rotary_dim (absolute), else int(head_dim × partial_rotary_factor or rotary_pct)
    fraction_key = next(
        (k for k in ("partial_rotary_factor", "rotary_pct") if config.get(k) is not None or params.get(k) is not None),
        None,
    )
    if config.get("rotary_dim") is not None:
        rotary_dim = v.positive_int("rotary_dim", config["rotary_dim"])
        notes.append(f"rotary_dim = {rotary_dim} of a {head_dim}-wide head")
    elif fraction_key is not None:
        fraction = _number(fraction_key, config.get(fraction_key, params.get(fraction_key)))
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"{fraction_key} must be a fraction in (0, 1], got {fraction!r}")
        # as Hugging Face: int(head_dim × fraction)
        rotary_dim = int(head_dim * fraction)
        notes.append(f"{fraction_key} = {fraction:g}: int({head_dim} × {fraction:g}) = {rotary_dim} rotated dims")
    else:
        rotary_dim = head_dim
    if rotary_dim < 2 or rotary_dim % 2 or rotary_dim > head_dim:
        raise ValueError(
            f"the rotated width must be even and between 2 and the head width {head_dim}, got {rotary_dim}"
        )

    raw_type = params.get("rope_type", params.get("type", "default")) if params else "default"
    rope_type = _LEGACY.get(raw_type, raw_type)
    if rope_type not in ROPE_TYPES:
        known = ", ".join(repr(t) for t in ROPE_TYPES)
        raise ValueError(
            f"unknown rope_type {raw_type!r} in {where}; known: {known} (and 'su', the old name of 'longrope', "
            "and 'mrope', Qwen2-VL's name for default frequencies split by mrope_section)"
        )
    if raw_type == "mrope":
        notes.append(
            "type 'mrope' read as Qwen2VLConfig reads it: the default frequencies, split over (t, h, w) by mrope_section"
        )
    elif raw_type != rope_type:
        notes.append(f"type {raw_type!r} is the old name of {rope_type!r}")

    if rope_type == "proportional":
        # as Hugging Face's _compute_proportional_rope_parameters: int(fraction × head_dim // 2) pairs turn,
        # with ω_k = base^(−2k/head_dim) (the whole head's width), and the other pairs get ω = 0
        fraction = 1.0 if fraction_key is None else _number(fraction_key, config.get(fraction_key, params.get(fraction_key)))
        rotary_dim = 2 * int(fraction * head_dim // 2)
        notes[:] = [n for n in notes if not n.startswith(f"{fraction_key} = ")]
        notes.append(
            f"proportional: int({fraction:g} × {head_dim} // 2) = {rotary_dim // 2} of {head_dim // 2} pairs turn, "
            f"with ω_k = base^(−2k/{head_dim}); the other {(head_dim - rotary_dim) // 2} have ω = 0"
        )
        if rotary_dim < 2:
            raise ValueError(f"partial_rotary_factor {fraction:g} leaves no pair turning in a {head_dim}-wide head")

    max_pos = config.get("max_position_embeddings", config.get("n_positions"))
    max_pos = None if max_pos is None else v.positive_int("max_position_embeddings", max_pos)
    original = params.get("original_max_position_embeddings", config.get("original_max_position_embeddings"))
    original = None if original is None else v.positive_int("original_max_position_embeddings", original)

    def need(key: str):
        if params.get(key) is None:
            raise ValueError(f"rope_type {rope_type!r} needs {key!r} in {where}, and the config has none")
        return params[key]

    factor = None
    length = None
    if rope_type in ("linear", "dynamic"):
        factor = _number("factor", need("factor"))
        if rope_type == "dynamic":
            if max_pos is None:
                raise ValueError("rope_type 'dynamic' needs max_position_embeddings (its L), and the config has none")
            length = max_pos
            notes.append("dynamic NTK: L = max_position_embeddings, as in Hugging Face")
    elif rope_type == "llama3":
        factor = _number("factor", need("factor"))
        for key in ("low_freq_factor", "high_freq_factor"):
            need(key)
        if params.get("original_max_position_embeddings") is None:
            raise ValueError(
                f"rope_type 'llama3' needs 'original_max_position_embeddings' in {where} "
                "(Hugging Face reads it there only), and the config has none"
            )
        length = original
    elif rope_type in ("yarn", "longrope"):
        if rope_type == "longrope":
            need("short_factor")
            need("long_factor")
        length = original if original is not None else max_pos
        if length is None:
            raise ValueError(
                f"rope_type {rope_type!r} needs original_max_position_embeddings or max_position_embeddings (its L)"
            )
        if params.get("factor") is not None:
            factor = _number("factor", params["factor"])
        elif original is not None and max_pos is not None:
            # as Hugging Face: s = max_position_embeddings / original_max_position_embeddings
            factor = max_pos / original
            notes.append(f"no factor: s = max_position_embeddings / original_max_position_embeddings = {factor:g}")
        elif rope_type == "longrope":
            factor = 1.0
            notes.append("no factor and no original_max_position_embeddings: s = 1")
        else:
            raise ValueError(
                f"rope_type 'yarn' needs 'factor' in {where} (or both max_position_embeddings and "
                "original_max_position_embeddings to derive it), and the config has none"
            )
    else:
        length = max_pos
    return RopeSettings(
        rope_type=rope_type,
        base=base,
        head_dim=head_dim,
        rotary_dim=rotary_dim,
        max_position_embeddings=max_pos,
        original_max_position=length,
        factor=factor,
        params=dict(params),
        notes=tuple(notes),
    )


def frequencies_from_config(config, seq_len=None) -> tuple[np.ndarray, float]:
    """``(inv_freq, attention_factor)`` for a config.json-shaped dict, as Hugging Face computes them.

    ``inv_freq`` holds one frequency per rotated pair (rotary_dim / 2 of
    them); ``attention_factor`` is the number cos and sin are multiplied by
    (1 except for YaRN and LongRoPE). A config whose layers use different RoPE (Gemma 3's local and global
    bases, Llama 4's NoPE layers, ...) raises a ValueError that points to :func:`layer_positions`; a config
    whose layers all turn alike (DeepSeek-V3, a Qwen2-VL ``"mrope"``) is read per layer and answered here.
    ``seq_len`` matters only for
    ``dynamic`` (the base grows past L) and ``longrope`` (long factors past
    L); ``None`` means a short sequence. See :func:`rope_settings` for which
    keys are read. Taught in notebooks/11-rope-as-shipped.ipynb.

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
    if per_layer(config):
        records = _resolve(config, need_count=False)[0]
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


def _single_frequencies(config, seq_len=None) -> tuple[np.ndarray, float]:
    s = rope_settings(config)
    p = s.params
    if seq_len is not None:
        seq_len = v.positive_int("seq_len", seq_len)
    if s.rope_type == "default":
        return frequencies(s.rotary_dim, s.base), 1.0
    if s.rope_type == "proportional":
        # ω_k = base^(−2k/head_dim) / factor for k < rotary_dim/2, then zeros up to head_dim/2
        factor = _number("factor", p["factor"]) if p.get("factor") is not None else 1.0
        k = np.arange(s.head_dim // 2, dtype=np.float64)
        inv = np.where(k < s.pairs, s.base ** (-2.0 * k / s.head_dim), 0.0) / factor
        return inv, 1.0
    if s.rope_type == "linear":
        return scaled_frequencies(s.rotary_dim, s.base, "linear", s.factor), 1.0
    if s.rope_type == "dynamic":
        inv = scaled_frequencies(
            s.rotary_dim, s.base, "dynamic", s.factor, original_max_position=s.original_max_position, seq_len=seq_len
        )
        return inv, 1.0
    if s.rope_type == "llama3" and float(p["low_freq_factor"]) == float(p["high_freq_factor"]):
        # low = high (Llama 4 Scout: both 1): Hugging Face's blend is empty, so a pair is divided by the factor
        # when its wavelength exceeds L / low, and kept otherwise
        omega = frequencies(s.rotary_dim, s.base)
        edge = s.original_max_position / float(p["low_freq_factor"])
        return np.where(2.0 * np.pi / omega > edge, omega / s.factor, omega), 1.0
    if s.rope_type == "llama3":
        inv = scaled_frequencies(
            s.rotary_dim, s.base, "llama3", s.factor, original_max_position=s.original_max_position,
            low_freq_factor=p["low_freq_factor"], high_freq_factor=p["high_freq_factor"],
        )
        return inv, 1.0
    if s.rope_type == "yarn":
        inv = scaled_frequencies(
            s.rotary_dim, s.base, "yarn", s.factor, original_max_position=s.original_max_position,
            beta_fast=p.get("beta_fast") or 32.0, beta_slow=p.get("beta_slow") or 1.0, ramp="index",
            truncate=p.get("truncate", True),
        )
        att = scaling_attention_factor(
            "yarn", s.factor, attention_factor=p.get("attention_factor"), mscale=p.get("mscale"),
            mscale_all_dim=p.get("mscale_all_dim"),
        )
        return inv, att
    # longrope
    inv = scaled_frequencies(
        s.rotary_dim, s.base, "longrope", 1.0, original_max_position=s.original_max_position, seq_len=seq_len,
        short_factor=p["short_factor"], long_factor=p["long_factor"],
    )
    att = scaling_attention_factor(
        "longrope", max(s.factor, 1.0), original_max_position=s.original_max_position,
        attention_factor=p.get("attention_factor"),
    )
    return inv, att


def config_summary(config) -> dict:
    """The numbers :func:`describe_config` reports, as a dict.

    Keys: ``pairs``, ``rotary_dim``, ``head_dim``, ``base``, ``fastest`` and
    ``slowest`` (wavelengths 2π/ω in tokens, unscaled), ``length`` (the L the
    scaling uses, or ``max_position_embeddings`` without scaling),
    ``never_turn`` (pairs whose unscaled wavelength exceeds L),
    ``rope_type``, ``factor``, ``attention_factor``, ``slowest_scaled``
    (slowest wavelength of the frequencies used on long inputs) and
    ``context`` (``max_position_embeddings``). Taught in notebooks/11-rope-as-shipped.ipynb.

    A config that sets position per layer (see :func:`per_layer`) has no single summary: a ValueError
    points to :func:`layer_positions` and :func:`describe_config`.

    >>> s = config_summary({"head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096})
    >>> s["pairs"], s["never_turn"], round(s["slowest"])   # 2π·10000^(126/128)
    (64, 18, 54410)
    """
    if per_layer(config):
        raise ValueError(
            "this config sets position per layer (or needs its model's own code): config_summary has one row per "
            "model; use layer_positions(config), or describe_config(config) for the report"
        )
    s = rope_settings(config)
    omega = frequencies(s.rotary_dim, s.base)
    wavelength = 2.0 * np.pi / omega
    long_seq = None if s.original_max_position is None else 2 * s.original_max_position
    if s.rope_type == "default":
        scaled, att = omega, 1.0
    else:
        scaled, att = frequencies_from_config(config, seq_len=long_seq)
    return {
        "pairs": s.pairs,
        "rotary_dim": s.rotary_dim,
        "head_dim": s.head_dim,
        "base": s.base,
        "fastest": float(wavelength[0]),
        "slowest": float(wavelength[-1]),
        "length": s.original_max_position,
        "never_turn": None if s.original_max_position is None else int(np.count_nonzero(wavelength > s.original_max_position)),
        "rope_type": s.rope_type,
        "factor": s.factor,
        "attention_factor": float(att),
        "slowest_scaled": float(2.0 * np.pi / scaled[-1]),
        "context": s.max_position_embeddings,
        "notes": s.notes,
    }


def _scaling_sentence(s: RopeSettings, summary: dict) -> str:
    p, length = s.params, s.original_max_position
    if s.rope_type == "default":
        return "scaling: none"
    if s.rope_type == "linear":
        return f"scaling: linear (Position Interpolation), every frequency divided by {s.factor:g}"
    if s.rope_type == "dynamic":
        return (
            f"scaling: dynamic NTK with factor {s.factor:g}, designed for inference without fine-tuning: "
            f"beyond L = {length:,} tokens the base grows with the sequence length"
        )
    if s.rope_type == "llama3":
        lo, hi = float(p["low_freq_factor"]), float(p["high_freq_factor"])
        return (
            f"scaling: llama3 with factor {s.factor:g} from L = {length:,}: pairs with wavelength under "
            f"{length / hi:,.0f} tokens kept, over {length / lo:,.0f} divided by {s.factor:g}, blended between"
        )
    if s.rope_type == "yarn":
        return (
            f"scaling: YaRN with factor {s.factor:g} from L = {length:,} (beta_fast {p.get('beta_fast') or 32:g}, "
            f"beta_slow {p.get('beta_slow') or 1:g}, truncate {p.get('truncate', True)})"
        )
    return (
        f"scaling: LongRoPE with per-pair factors, short ones up to L = {length:,} tokens and long ones beyond "
        f"(s = {s.factor:g})"
    )


def describe_config(config) -> str:
    """A plain-language report of a config's RoPE: pairs, wavelengths, unfinished turns, scaling, context.

    For a config whose layers all use one scheme, one line each: the rotated pairs (and the base, with any
    fallback stated), the fastest and slowest wavelength (unscaled), how many pairs never complete one turn
    within L, and what L is: the declared context (``max_position_embeddings``) or, for a config with
    ``original_max_position_embeddings``, that training length; the scaling and the length it starts from, the
    attention factor, and the declared context. Qwen2-VL's ``"mrope"`` adds a line with its three sections.

    A config that sets position per layer (see :func:`per_layer`) is described per layer kind instead: each
    distinct kind once, with its count and the pattern ("5 sliding (window 1,024, base 10,000) then 1 full
    (base 1,000,000, linear ×8), repeated"), the softmax scale, any query temperature, and a note for each
    default the reader fell back to. Its count of pairs that never complete a turn uses the frequencies the
    model runs with over the span counted in: unscaled within the training length
    (``original_max_position_embeddings``, where the model trained unscaled, as in the single-scheme report),
    the configured (scaled) ones within a window, a chunk or the declared context.
    In ``no_rope_layers``, 1 means RoPE and 0 means none.
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> print(describe_config({"head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096}))
    rotation: 64 pairs, all 128 dims of each head, base 10,000
    wavelengths: fastest 6.3 tokens (pair 0), slowest 54,410 tokens (pair 63)
    within L = 4,096 tokens (declared context): 18 of 64 pairs never complete a turn
    scaling: none
    attention factor: 1 (logits unchanged)
    declared context: 4,096 tokens (max_position_embeddings)
    >>> cfg = {"model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 256, "sliding_window": 1024,
    ...        "max_position_embeddings": 131072, "rope_theta": 1e6, "rope_local_base_freq": 1e4,
    ...        "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    >>> print(describe_config(cfg).splitlines()[1])
    pattern: 5 sliding (window 1,024, base 10,000) then 1 full (base 1,000,000, linear ×8)
    """
    if per_layer(config):
        return _describe_layers(config)
    s = rope_settings(config)
    summary = config_summary(config)
    if s.rotary_dim == s.head_dim:
        width = f"all {s.head_dim} dims of each head"
    else:
        width = f"the first {s.rotary_dim} of {s.head_dim} dims of each head"
    base = f"base {s.base:,.0f}"
    if any(n.startswith("no rope_theta") for n in s.notes):
        base += " (assumed: the config names no base)"
    lines = [
        f"rotation: {s.pairs} pairs, {width}, {base}",
        f"wavelengths: fastest {summary['fastest']:,.1f} tokens (pair 0), slowest {summary['slowest']:,.0f} tokens "
        f"(pair {s.pairs - 1})",
    ]
    if summary["length"] is None:
        lines.append("no declared context in the config (max_position_embeddings missing): no L to count turns in")
    else:
        trained = s.rope_type in ("llama3", "yarn", "longrope") and s.original_max_position != s.max_position_embeddings
        what = "training length, original_max_position_embeddings" if trained else "declared context"
        lines.append(
            f"within L = {summary['length']:,} tokens ({what}): {summary['never_turn']} of {s.pairs} pairs never "
            "complete a turn"
        )
    lines.append(_scaling_sentence(s, summary))
    section = s.params.get("mrope_section")
    if section is not None:
        section = [v.positive_int("mrope_section", x) for x in section]
        if len(section) != 3 or sum(section) != s.pairs:
            raise ValueError(f"mrope_section must give 3 counts that add up to the {s.pairs} pairs, got {section}")
        lines.append(_mrope_sentence(tuple(section), bool(s.params.get("mrope_interleaved", False))))
    att = summary["attention_factor"]
    if att == 1.0:
        lines.append("attention factor: 1 (logits unchanged)")
    else:
        lines.append(f"attention factor: {att:.4f} on cos and sin, so logits × {att * att:.4f}")
    if s.max_position_embeddings is None:
        lines.append("declared context: not stated (no max_position_embeddings)")
    elif s.rope_type == "dynamic":
        lines.append(
            f"declared context: {s.max_position_embeddings:,} tokens; dynamic NTK keeps stretching beyond"
        )
    else:
        lines.append(f"declared context: {s.max_position_embeddings:,} tokens (max_position_embeddings)")
    return "\n".join(lines)


# --- per-layer designs (transformers 5): one record per decoder layer ------------------------------------------------

#: The model families whose transformers-5 code the reader transcribes, by ``model_type``. A config of any other
#: ``model_type`` (or of none that no key identifies) is read only where the reading cannot depend on the family:
#: one scheme for every layer, none of :data:`FAMILY_KEYS`, and ``rope_parameters`` not nested. Otherwise the
#: reader raises a ValueError naming the ``model_type`` and the key, instead of guessing the family's code.
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
}

# each family's config-class default_theta (transformers 5.24.0, models/<family>/configuration_<family>.py);
# a pair is (full / global, sliding / local)
_DEFAULT_THETA = {
    "gemma3": (1_000_000.0, 10_000.0), "gemma3n": (1_000_000.0, 10_000.0), "modernbert": (160_000.0, 10_000.0),
    "llama4": 500_000.0,
    "smollm3": 2_000_000.0, "olmo3": 500_000.0, "gpt_oss": 150_000.0, "qwen2_vl": 1_000_000.0,
    "qwen3_vl": 500_000.0,
}

#: The layer types Hugging Face's configs name, and what the reader does with each.
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")

_PER_LAYER_KEYS = (
    "layer_types", "no_rope_layers", "no_rope_layer_interval", "sliding_window_pattern", "rope_local_base_freq",
    "global_rope_theta", "local_rope_theta", "global_attn_every_n_layers", "full_attention_interval",
    "qk_rope_head_dim", "qk_nope_head_dim", "rope_interleave", "attn_temperature_tuning", "floor_scale",
    "attn_scale", "attention_chunk_size", "query_pre_attn_scalar", "text_config",
)

#: Keys whose meaning depends on the family's code (windows, per-layer patterns, softmax scales, bidirectional
#: attention): a config of a family outside :data:`FAMILIES` that sets one of them is refused by name.
FAMILY_KEYS = tuple(k for k in _PER_LAYER_KEYS if k != "text_config") + (
    "sliding_window", "use_sliding_window", "max_window_layers", "use_bidirectional_attention",
    "attention_multiplier",
)


def _refuse_unknown_family(config: dict) -> None:
    """Raise unless this config of a family outside FAMILIES reads the same whatever the family's code is."""
    model_type = config.get("model_type")
    who = f"model_type {model_type!r} is not one of the families the reader transcribes" if model_type is not None \
        else "the config has no model_type, and no key names its family"
    # a key set to None or False asks for nothing (e.g. "sliding_window": null, "use_sliding_window": false)
    for key in FAMILY_KEYS:
        if key in config and config[key] is not None and config[key] is not False:
            raise ValueError(
                f"{who}; its {key} = {v._show(config[key])} means what that family's code makes of it, so the "
                "reader refuses rather than guess (give one of the model_types in posenc_helpers.configs.FAMILIES, "
                "or remove the key)"
            )
    given = config.get("rope_parameters")
    if isinstance(given, dict) and any(isinstance(x, dict) for x in given.values()):
        raise ValueError(
            f"{who}; its rope_parameters are nested by layer type, and which layer gets which depends on that "
            "family's code, so the reader refuses rather than guess"
        )


@dataclass(frozen=True)
class QKNorm:
    """How one layer normalises its queries and keys, and where that happens relative to RoPE.

    * ``where``: ``"before_rope"`` (q and k are normalised, then rotated), ``"after_rope"`` (rotated, then
      normalised) or ``"no_rope"`` (normalised in a layer that has no RoPE);
    * ``over``: ``"head"`` (each head's ``head_dim`` channels on their own) or ``"all_heads"`` (the whole
      projection, every head together, before it is split into heads: OLMo 3);
    * ``kind``: ``"rms"`` (x / √(mean x² + ε), so the result has norm about √width) or ``"l2"``
      (x / √(Σ x² + ε), norm about 1);
    * ``weight``: ``"learned"`` (times a learned vector w, initialised to ones), ``"one_plus_learned"``
      (times 1 + w, w initialised to zeros: Gemma 3, Qwen3-Next, Qwen3.5) or ``"none"``.
    """

    where: str
    over: str
    kind: str
    weight: str

    def __str__(self) -> str:
        over = "per head" if self.over == "head" else "over all heads together"
        weight = {"learned": "a learned weight", "one_plus_learned": "a learned weight as 1 + w",
                  "none": "no weight"}[self.weight]
        where = {"before_rope": "before the rotation", "after_rope": "after the rotation",
                 "no_rope": "in a layer without RoPE"}[self.where]
        return f"{self.kind.upper()} norm {over}, {weight}, {where}"


#: What ``LayerPositions.qk_norm`` holds for a ``model_type`` outside :data:`FAMILIES` (other than ``"llama"``):
#: whether q and k are normalised is decided by the family's modeling code, which no config key states.
QK_NORM_UNKNOWN = "unknown"


@dataclass(frozen=True)
class LayerPositions:
    """What one decoder layer does with position, as the model's transformers-5 code computes it.

    * ``layer_type``: the config's own name for the layer's attention (``"full_attention"``, ...);
    * ``window``: the sliding window or chunk size in tokens, None for full attention (ModernBERT's is its
      whole bidirectional ``local_attention``; Hugging Face stores half of it as ``sliding_window``; a Gemma 3
      config with ``use_bidirectional_attention``, as EmbeddingGemma's, likewise gets its whole bidirectional
      span, 2·⌊sliding_window/2⌋, where Hugging Face stores ⌊sliding_window/2⌋ + 1 as an exclusive bound);
    * ``rope``: False for a layer with no positional encoding (NoPE);
    * ``inv_freq``: the numpy (float64) version of Hugging Face's ``inv_freq`` buffer for the layer's type,
      same length and order, zeros where Hugging Face has zeros; None when ``rope`` is False;
    * ``rotary_dim``: the number of dimensions rotated (0 without RoPE);
    * ``attention_factor``: Hugging Face's ``attention_scaling``, the factor on cos and sin;
    * ``layout``: ``"half-split"`` (pair k is dims k and k + d/2) or ``"interleaved"`` (dims 2k and 2k + 1);
    * ``softmax_scale``: the multiplier on q·k before the softmax;
    * ``query_temperature``: None, or a function of the position array giving the factor on each query;
    * ``head_dim``: the width of q and k in that layer (rotated and position-free dims together);
    * ``rope_type``, ``base``, ``factor``: the frequency rule, base and scaling factor (None without RoPE);
    * ``mrope_section``, ``mrope_interleaved``: multimodal RoPE's split of the pairs over (t, h, w), if any;
    * ``qk_norm``: a :class:`QKNorm` when the layer normalises q and k, None when it does not, and
      :data:`QK_NORM_UNKNOWN` for a family outside :data:`FAMILIES`, whose code the reader has not read.
    """

    layer_type: str
    window: int | None
    rope: bool
    inv_freq: np.ndarray | None = field(compare=False)
    rotary_dim: int
    attention_factor: float
    layout: str
    softmax_scale: float
    query_temperature: object = field(compare=False)
    head_dim: int = 0
    rope_type: str | None = None
    base: float | None = None
    factor: float | None = None
    mrope_section: tuple[int, ...] | None = None
    mrope_interleaved: bool = False
    qk_norm: QKNorm | str | None = None

    @property
    def pairs(self) -> int:
        """The number of pairs that turn (rotary_dim / 2)."""
        return self.rotary_dim // 2

    @property
    def mrope_axes(self) -> tuple[str, ...] | None:
        """For multimodal RoPE, the axis ("t", "h" or "w") each pair's angle follows; None otherwise.

        Contiguous (Qwen2-VL): the first section's pairs follow t, the next h, the last w. Interleaved
        (Qwen3-VL, Qwen3.5, ``recomposition_frequencies``): pair k follows h when k mod 3 = 1 and
        k < 3·section[1], w when k mod 3 = 2 and k < 3·section[2], t otherwise.
        """
        if self.mrope_section is None or self.inv_freq is None:
            return None
        t, h, w = self.mrope_section
        if not self.mrope_interleaved:
            return ("t",) * t + ("h",) * h + ("w",) * w
        # k % 3 == 1 and k < 3h → h; k % 3 == 2 and k < 3w → w; else t
        return tuple("h" if k % 3 == 1 and k < 3 * h else "w" if k % 3 == 2 and k < 3 * w else "t"
                     for k in range(len(self.inv_freq)))


# Llama 4's NoPE layers (Llama4TextAttention.forward): q ← q · (1 + attn_scale · ln(1 + ⌊(p + 1) / floor_scale⌋))
def llama4_query_temperature(positions, *, attn_scale=0.1, floor_scale=8192):
    """The factor Llama 4 multiplies each query of a NoPE layer by, at positions ``positions``.

    1 + attn_scale · ln(1 + ⌊(p + 1)/floor_scale⌋), from transformers 5's ``Llama4TextAttention.forward``: exactly
    1 for the first floor_scale − 1 positions, then growing like a logarithm.
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> llama4_query_temperature([0, 8190, 8191, 16383]).round(4)
    array([1.    , 1.    , 1.0693, 1.1099])
    """
    p = v.real_array("positions", positions)
    # 1 + attn_scale · ln(1 + ⌊(p + 1) / floor_scale⌋)
    return 1.0 + attn_scale * np.log1p(np.floor((p + 1.0) / floor_scale))


# Ministral 3 (get_llama_4_attn_scale): q ← q · (1 + β · ln(1 + ⌊p / original_max_position_embeddings⌋))
def llama_4_scaling_temperature(positions, *, beta, original_max_position):
    """The factor Ministral 3 multiplies every query by: 1 + β · ln(1 + ⌊p / L⌋), L its original length.

    From transformers 5's ``get_llama_4_attn_scale`` (models/ministral3/modeling_ministral3.py), with
    β = ``rope_parameters["llama_4_scaling_beta"]``. Unlike Llama 4's, it uses p (not p + 1) and acts on every
    layer. Taught in notebooks/14-position-per-layer.ipynb.

    >>> llama_4_scaling_temperature([0, 16383, 16384], beta=0.1, original_max_position=16384).round(4)
    array([1.    , 1.    , 1.0693])
    """
    p = v.real_array("positions", positions)
    # 1 + β · ln(1 + ⌊p / L⌋)
    return 1.0 + beta * np.log1p(np.floor(p / original_max_position))


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
}
# Qwen3NextGatedDeltaNet, Qwen3_5GatedDeltaNet: chunk_gated_delta_rule(..., use_qk_l2norm_in_kernel=True),
# l2norm(x) = x · rsqrt(Σ x² + 1e-6) over each head
_LINEAR_QK_NORM = QKNorm("no_rope", "head", "l2", "none")
# Llama4TextAttention: qk_norm = Llama4TextL2Norm() only if config.use_qk_norm and the layer uses RoPE, applied
# after apply_rotary_emb; despite its name it computes x · rsqrt(mean x² + eps), an RMS norm without weight
_LLAMA4_QK_NORM = QKNorm("after_rope", "head", "rms", "none")


def _qk_norm(config: dict, family: str, layer_type: str, rope: bool) -> QKNorm | str | None:
    """Whether and where this layer normalises q and k, as its transformers-5 attention class does."""
    if layer_type == "linear_attention":
        return _LINEAR_QK_NORM
    if family == "llama4":
        return _LLAMA4_QK_NORM if rope and config.get("use_qk_norm", True) else None
    if family == "qwen_window":  # Qwen2Attention has no q_norm; Qwen3Attention has
        family = config.get("model_type")
    if family == "generic":
        # LlamaAttention normalises neither q nor k; an unknown family's code is not known
        return None if config.get("model_type") == "llama" else QK_NORM_UNKNOWN
    rule = _QK_NORM_RULES.get(family)
    if rule is not None and not rope:
        return QKNorm("no_rope", rule.over, rule.kind, rule.weight)
    # every other family in FAMILIES normalises neither (DeepSeek-V3's q_a_layernorm and kv_a_layernorm normalise
    # the low-rank latents before the up-projections; the rotated key part k_pe is never normalised)
    return rule


def _family(config: dict, notes: list[str]) -> str:
    """The family whose code reads this config: from model_type, else from a key only that family uses."""
    model_type = config.get("model_type")
    if model_type is not None:
        if model_type not in FAMILIES:
            _refuse_unknown_family(config)
        return FAMILIES.get(model_type, "generic")
    clues = (
        ("rope_local_base_freq", "gemma3", "Gemma 3"),
        ("global_rope_theta", "modernbert", "ModernBERT"), ("local_rope_theta", "modernbert", "ModernBERT"),
        ("global_attn_every_n_layers", "modernbert", "ModernBERT"),
        ("qk_rope_head_dim", "deepseek_v3", "DeepSeek-V3"),
        ("full_attention_interval", "qwen3_next", "Qwen3-Next"),
        ("attn_temperature_tuning", "llama4", "Llama 4"), ("floor_scale", "llama4", "Llama 4"),
        ("rotary_pct", "gpt_neox", "GPT-NeoX"), ("rotary_emb_base", "gpt_neox", "GPT-NeoX"),
    )
    if "rotary_dim" in config and "n_embd" in config:
        notes.append("no model_type: read as GPT-J (gptj), whose config names rotary_dim with n_embd")
        return "gptj"
    for key, family, name in clues:
        if key in config:
            notes.append(f"no model_type: read as {name} ({family}), the only family whose config has {key}")
            return family
    if "sliding_window_pattern" in config and "layer_types" not in config:
        raise ValueError(
            "sliding_window_pattern without layer_types or model_type: Gemma 3 keeps RoPE on its full layers while "
            "Cohere2 and EXAONE 4 drop it there, so give model_type"
        )
    _refuse_unknown_family(config)
    return "generic"


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
    wanted = sorted(set(types) & {"full_attention", "sliding_attention", "chunked_attention"})
    nested = rp is not None and any(isinstance(x, dict) for x in rp.values())
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
    if family in ("gemma3", "gemma3n", "olmo3", "modernbert", "gemma4"):
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
        out = {t: dict(flat) for t in wanted}
    missing = [t for t in wanted if t not in out]
    if missing:
        raise ValueError(f"layer type {missing[0]!r} of layer_types has no entry in rope_parameters")
    return out


def _layer_table(config: dict, family: str, n: int, notes: list[str]) -> tuple[list[str], list[bool]]:
    """``layer_types`` and whether each layer has RoPE, with each family's defaults."""
    types = config.get("layer_types")
    if family == "gemma2" and config.get("use_bidirectional_attention"):
        raise ValueError(
            "use_bidirectional_attention: model_type 'gemma2' with bidirectional attention is not read (Gemma 2's "
            "code builds its masks without Gemma 3's bidirectional window; the reader does not transcribe it)"
        )
    if family == "qwen3_moe" and types is not None:
        raise ValueError(
            "layer_types: model_type 'qwen3_moe' reads none (configuration_qwen3_moe.py declares no layer_types, "
            "and modeling_qwen3_moe.py windows every layer or none, by use_sliding_window); remove layer_types"
        )
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
    if types is None:
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
        elif family == "llama4":
            chunk = config.get("attention_chunk_size", 8192)
            types = ["chunked_attention" if r and chunk is not None else "full_attention" for r in nope]
        elif family == "smollm3":
            sliding = config.get("use_sliding_window", False) and config.get("sliding_window") is not None
            types = ["sliding_attention" if sliding and not r else "full_attention" for r in nope]
        elif family == "qwen_window":
            # configuration_qwen2.py / configuration_qwen3.py: sliding_window (default 4096) only with
            # use_sliding_window, and then on the layers from max_window_layers (default 28) on
            sliding = config.get("use_sliding_window", False) and config.get("sliding_window", 4096) is not None
            first = config.get("max_window_layers", 28)
            types = ["sliding_attention" if sliding and i >= first else "full_attention" for i in range(n)]
        elif family == "qwen3_moe":
            types = ["full_attention"] * n  # a window, when there is one, is on every layer (_window)
        else:
            types = ["full_attention"] * n
            if config.get("sliding_window") is not None and family not in _EVERY_LAYER_WINDOW:
                notes.append(
                    "sliding_window given without layer_types: every layer read as full attention, as Llama-style "
                    "code does (Mistral's code applies the window to every layer: give model_type to be exact)"
                )
    if not isinstance(types, list | tuple) or len(types) != n:
        raise ValueError(f"layer_types must name one type for each of the {n} layers, got {v._show(types)}")
    if family == "gemma3" and config.get("use_bidirectional_attention"):
        # configuration_gemma3.py: sliding_window = sliding_window // 2 + 1 (exclusive); modeling_gemma3.py ORs
        # the masks with "every key" (full layers) and |q - k| < sliding_window (sliding layers)
        half = v.positive_int("sliding_window", config.get("sliding_window", 4096)) // 2
        notes.append(f"use_bidirectional_attention: every layer attends both ways; a sliding layer sees {half} "
                     f"tokens on each side (Hugging Face's sliding_window becomes {half + 1}, an exclusive bound)")
    if family == "gemma3n" and config.get("use_bidirectional_attention"):
        # Gemma3nTextConfig declares no use_bidirectional_attention, and modeling_gemma3n.py builds causal masks
        notes.append("use_bidirectional_attention not read: Gemma 3n's code attends causally on every layer")
    if family == "modernbert" and "sliding_attention" in types:
        half = v.positive_int("local_attention", config.get("local_attention", 128)) // 2
        notes.append(f"ModernBERT's window is local_attention, the whole span: each token sees {half} on each side "
                     f"(Hugging Face's sliding_window is {half})")
    bad = [t for t in types if t not in LAYER_TYPES]
    if bad:
        raise ValueError(f"layer_types holds {bad[0]!r}; the reader knows {', '.join(LAYER_TYPES)}")
    if family == "gemma4" and types[-1] != "full_attention":
        types = [*types[:-1], "full_attention"]
        notes.append("Gemma4TextConfig forces the last layer to full_attention")
    if nope is not None:
        rope = [bool(x) for x in nope]
    elif family == "cohere2":
        rope = [t == "sliding_attention" for t in types]
    elif family == "exaone4":
        hybrid = config.get("sliding_window", 4096) is not None
        rope = [not hybrid or t == "sliding_attention" for t in types]
    else:
        rope = [t != "linear_attention" for t in types]
    return list(types), rope


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
}


# families whose attention windows every layer alike, with their config class's default sliding_window
# (Qwen3-MoE's only with use_sliding_window)
_EVERY_LAYER_WINDOW = {"mistral": 4096, "phi3": None, "starcoder2": None, "qwen3_moe": 4096}


def _window(config: dict, family: str, layer_type: str) -> int | None:
    if layer_type == "chunked_attention":
        return v.positive_int("attention_chunk_size", config.get("attention_chunk_size", 8192))
    if family in ("mistral", "phi3", "starcoder2"):
        # MistralAttention, Phi3Attention, Starcoder2Attention: sliding_window=getattr(config, "sliding_window",
        # None) on every layer; the config classes default it to 4096 (Mistral) or None (Phi-3, Starcoder2)
        window = config.get("sliding_window", _EVERY_LAYER_WINDOW[family])
        return None if window is None else v.positive_int("sliding_window", window)
    if family == "qwen3_moe":  # Qwen3MoeConfig: sliding_window (default 4096) only with use_sliding_window
        window = config.get("sliding_window", 4096) if config.get("use_sliding_window", False) else None
        return None if window is None else v.positive_int("sliding_window", window)
    if layer_type != "sliding_attention":
        return None
    if family == "modernbert":
        # the whole window (Hugging Face's sliding_window is half of it: the model attends ± local_attention / 2)
        return v.positive_int("local_attention", config.get("local_attention", 128))
    if family == "gemma3" and config.get("use_bidirectional_attention"):
        # the whole bidirectional span: ± sliding_window // 2 (see _layer_table)
        return 2 * (v.positive_int("sliding_window", config.get("sliding_window", 4096)) // 2)
    defaults = {"gemma2": 4096, "gemma3": 4096, "gemma3n": 512, "gemma4": 512, "cohere2": 4096, "exaone4": 4096,
                "olmo3": 4096, "gpt_oss": 128, "qwen_window": 4096}
    window = config.get("sliding_window", defaults.get(family))
    if window is None:
        raise ValueError(f"a {layer_type} layer needs sliding_window, and the config has none")
    return v.positive_int("sliding_window", window)


def _resolve(config, *, need_count: bool) -> tuple[list[LayerPositions], list[str], str]:
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict shaped like a config.json, got {v._show(config)}")
    config = _phi3(config)
    notes: list[str] = []
    if isinstance(config.get("text_config"), dict):
        inner = dict(config["text_config"])
        if "model_type" not in inner and "model_type" in config:
            inner["model_type"] = config["model_type"]
        notes.append("read from text_config (the language model's part of a multimodal config)")
        config = inner
    family = _family(config, notes)
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
    hf_nested = family in ("gemma3", "gemma3n", "olmo3", "modernbert", "gemma4") or (
        isinstance(given, dict) and any(isinstance(x, dict) for x in given.values()))
    max_pos = config.get("max_position_embeddings", config.get("n_positions"))

    # head width per layer type, and the q·k width the softmax scale divides by
    if family == "deepseek_v3":
        rope_dim = v.positive_int("qk_rope_head_dim", config.get("qk_rope_head_dim", 64))
        nope_dim = v.positive_int("qk_nope_head_dim", config.get("qk_nope_head_dim", 128))
        head = {t: rope_dim for t in params}
        qk_width = rope_dim + nope_dim
    else:
        if family == "cohere2":
            common = v.positive_int("hidden_size", config["hidden_size"]) // v.positive_int(
                "num_attention_heads", config["num_attention_heads"])
        elif config.get("head_dim"):
            common = v.positive_int("head_dim", config["head_dim"])
        elif family in ("gemma2", "gemma3", "gemma3n", "gemma4") or family == "qwen3_next":
            common = 256
            notes.append("no head_dim: 256 assumed (the config class's default)")
        else:
            common = rope_settings({**config, "rope_scaling": None, "rope_parameters": None}).head_dim
        head = {t: common for t in params}
        if family == "gemma4":
            head["full_attention"] = v.positive_int("global_head_dim", config.get("global_head_dim", 512))
        qk_width = None

    # layout
    if family in ("llama4", "cohere2", "gptj"):
        layout = "interleaved"
    elif family == "deepseek_v3":
        layout = "interleaved" if config.get("rope_interleave", True) else "half-split"
    else:
        layout = "half-split"

    kinds: dict[str, tuple] = {}
    for t, p in params.items():
        p = dict(p)
        raw_type = p.get("rope_type", p.get("type", "default"))
        if (family in ("qwen3_next", "qwen3_5") and "partial_rotary_factor" not in p
                and config.get("partial_rotary_factor") is None):
            p["partial_rotary_factor"] = 0.25
            notes.append(f"no partial_rotary_factor: 0.25 (the {_FAMILY_NAMES[family]} config class's default)")
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
        if (family not in ("generic", "qwen3_next", "qwen3_5", "gpt_neox") and raw_type in ("default", "mrope")
                and p.get("partial_rotary_factor") not in (None, 1, 1.0)):
            # the family's compute_default_rope_parameters reads no partial_rotary_factor: the whole head turns
            notes.append(f"{t}: partial_rotary_factor {p.pop('partial_rotary_factor')} not read: "
                         f"{_FAMILY_NAMES[family]}'s default rotary code turns the whole head")
        if raw_type == "yarn" and hf_nested and "truncate" in p and p["truncate"] is not True:
            # _compute_yarn_parameters reads config.rope_parameters.get("truncate", True): the top level
            p["truncate"] = True
            notes.append(f"{t}: truncate read as True, as Hugging Face does for a nested rope_parameters")
        single = {"head_dim": head[t], "rope_parameters": p, "max_position_embeddings": max_pos}
        for key in ("rotary_dim", "rotary_pct"):
            if config.get(key) is not None:
                single[key] = config[key]
        if len(params) == 1 and config.get("original_max_position_embeddings") is not None:
            single["original_max_position_embeddings"] = config["original_max_position_embeddings"]
        settings = rope_settings(single)
        inv, att = _single_frequencies(single)
        kinds[t] = (settings, np.asarray(inv, dtype=np.float64), float(att), p)

    records = []
    for t, r in zip(types, rope, strict=True):
        if t == "linear_attention":
            settings, inv, att, p = None, None, 1.0, {}
        else:
            settings, inv, att, p = kinds[t]
        width = qk_width or head.get(t, next(iter(head.values())))
        if family in ("gemma2", "gemma3") or (family == "generic" and config.get("query_pre_attn_scalar") is not None):
            scalar = _number("query_pre_attn_scalar", config.get("query_pre_attn_scalar", 256))
            scale = scalar ** -0.5
        elif family in ("gemma4", "gemma3n"):  # Gemma4TextAttention, Gemma3nTextAttention: self.scaling = 1.0
            scale = 1.0
        elif family == "granite":  # modeling_granite.py, GraniteAttention: self.scaling = config.attention_multiplier
            scale = _number("attention_multiplier", config.get("attention_multiplier", 1.0))
        else:
            scale = width ** -0.5
        if family == "deepseek_v3" and p.get("rope_type", p.get("type", "default")) != "default":
            all_dim = p.get("mscale_all_dim", 0)
            if all_dim:
                # yarn_apply_mscale: scaling × mscale², mscale = 0.1 · mscale_all_dim · ln(factor) + 1
                factor = _number("factor", p["factor"])
                m = 1.0 if factor <= 1 else 0.1 * all_dim * math.log(factor) + 1.0
                scale *= m * m
        temperature = None
        if family == "llama4" and not r and config.get("attn_temperature_tuning", True):
            temperature = partial(llama4_query_temperature, attn_scale=float(config.get("attn_scale", 0.1)),
                                  floor_scale=float(config.get("floor_scale", 8192)))
        if p.get("llama_4_scaling_beta") is not None:
            temperature = partial(llama_4_scaling_temperature, beta=float(p["llama_4_scaling_beta"]),
                                  original_max_position=float(p.get("original_max_position_embeddings")))
        section, interleaved = None, False
        if family in ("qwen2_vl", "qwen3_vl", "qwen3_5") or p.get("mrope_section") is not None:
            default_section = {"qwen3_vl": [24, 20, 20], "qwen3_5": [11, 11, 10]}.get(family, [16, 24, 24])
            section = tuple(int(x) for x in p.get("mrope_section", default_section))
            # Qwen3-VL's and Qwen3.5's rotary classes always interleave (recomposition_frequencies)
            interleaved = family in ("qwen3_vl", "qwen3_5") or bool(p.get("mrope_interleaved", False))
            if r and sum(section) != len(inv):
                raise ValueError(f"mrope_section {list(section)} must add up to the {len(inv)} pairs")
        records.append(LayerPositions(
            layer_type=t, window=_window(config, family, t), rope=bool(r and settings is not None),
            inv_freq=None if not r or inv is None else inv.copy(),
            rotary_dim=0 if not r or settings is None else settings.rotary_dim,
            attention_factor=att if r else 1.0, layout=layout, softmax_scale=float(scale),
            query_temperature=temperature, head_dim=width,
            rope_type=settings.rope_type if r and settings else None,
            base=settings.base if r and settings else None,
            factor=settings.factor if r and settings else None,
            mrope_section=section, mrope_interleaved=interleaved,
            qk_norm=_qk_norm(config, family, t, bool(r and settings is not None)),
        ))
    kinds_present = {(r.layer_type, r.rope) for r in records}
    for key, default, relevant in _CLASS_DEFAULTS.get(family, ()):
        if key not in config and any(relevant(t, r) for t, r in kinds_present):
            notes.append(f"no {key}: {default!r} (the {_FAMILY_NAMES[family]} config class's default)")
    for t, (settings, *_rest) in kinds.items():
        for note in settings.notes:
            if "assumed" in note:
                notes.append(f"{t}: {note}")
    return records, notes, family


def per_layer(config) -> bool:
    """True when a config needs :func:`layer_positions`: its layers (or its attention) differ from Llama's.

    That is: a key only per-layer designs use, a ``model_type`` whose code differs, or a nested
    ``rope_parameters``. Taught in notebooks/14-position-per-layer.ipynb.

    >>> per_layer({"head_dim": 64, "rope_theta": 1e4}), per_layer({"head_dim": 64, "no_rope_layers": [1, 1, 1, 0]})
    (False, True)
    """
    if not isinstance(config, dict):
        return False
    if any(k in config for k in _PER_LAYER_KEYS):
        return True
    family = FAMILIES.get(config.get("model_type"))
    if family is None and any(config.get(k) not in (None, False) for k in FAMILY_KEYS):
        return True  # a key whose reading depends on a family the reader does not know: layer_positions refuses it
    if family is not None and family not in ("qwen_window", "qwen3_moe", "mistral", "phi3", "starcoder2", "gptj",
                                             "gpt_neox"):
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


def layer_positions(config) -> list[LayerPositions]:
    """One :class:`LayerPositions` per decoder layer, as transformers 5's code for the model computes them.

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
    """
    return _resolve(config, need_count=True)[0]


_FAMILY_NAMES = {
    "gemma2": "Gemma 2", "granite": "Granite",
    "gemma3": "Gemma 3", "gemma3n": "Gemma 3n", "gemma4": "Gemma 4", "llama4": "Llama 4", "smollm3": "SmolLM3",
    "cohere2": "Cohere2",
    "exaone4": "EXAONE 4", "deepseek_v3": "DeepSeek-V3", "qwen3_next": "Qwen3-Next", "qwen2_vl": "Qwen2-VL",
    "qwen3_vl": "Qwen3-VL", "qwen3_5": "Qwen3.5", "olmo3": "OLMo 3", "modernbert": "ModernBERT", "gpt_oss": "gpt-oss",
    "ministral3": "Ministral 3", "qwen_window": "Qwen2/Qwen3", "qwen3_moe": "Qwen3-MoE",
    "mistral": "Mistral", "phi3": "Phi-3", "starcoder2": "Starcoder2", "generic": "Llama-style",
}


def _short(layer: LayerPositions) -> str:
    name = layer.layer_type.removesuffix("_attention")
    return name if layer.rope or layer.layer_type == "linear_attention" else f"{name} NoPE"


def _brief(layer: LayerPositions) -> str:
    """'window 1,024, base 10,000', 'base 1,000,000, linear ×8', 'no position', ..."""
    parts = []
    if layer.window is not None:
        parts.append(f"{'chunk' if layer.layer_type == 'chunked_attention' else 'window'} {layer.window:,}")
    if not layer.rope:
        if layer.layer_type == "linear_attention":
            parts.append("no position")
    else:
        parts.append(f"base {layer.base:,.0f}")
        if layer.rope_type == "proportional":
            parts.append(f"proportional, {layer.pairs} of {len(layer.inv_freq)} pairs turn")
        elif layer.rotary_dim < layer.head_dim:
            parts.append(f"{layer.rotary_dim} of {layer.head_dim} dims rotated")
        if layer.rope_type not in ("default", "proportional"):
            parts.append(f"{layer.rope_type} ×{layer.factor:g}" if layer.factor else layer.rope_type)
    return ", ".join(parts)


def _pattern(layers: list[LayerPositions], keys: list) -> str:
    n = len(keys)

    def runs(seq_keys, seq_layers):
        out, i = [], 0
        while i < len(seq_keys):
            j = i
            while j < len(seq_keys) and seq_keys[j] == seq_keys[i]:
                j += 1
            brief = _brief(seq_layers[i])
            out.append(f"{j - i} {_short(seq_layers[i])}" + (f" ({brief})" if brief else ""))
            i = j
        return " then ".join(out)

    def period(m: int) -> int | None:
        return next((p for p in range(1, m // 2 + 1) if all(keys[i] == keys[i - p] for i in range(p, m))), None)

    def repeated(p: int, m: int) -> str:
        whole, rest = divmod(m, p)
        return (runs(keys[:p], layers[:p]) + f", repeated ({whole} times"
                + (f", then the first {rest} again" if rest else "") + ")")

    p = period(n)
    if p is not None and p > 1:
        return repeated(p, n)
    plain = runs(keys, layers)
    if p is None and plain.count(" then ") >= 4:
        q = period(n - 1)
        if q is not None and q > 1:
            brief = _brief(layers[-1])
            return repeated(q, n - 1) + f", and a last {_short(layers[-1])}" + (f" ({brief})" if brief else "")
    return plain


def _describe_layers(config) -> str:
    layers, notes, family = _resolve(config, need_count=True)
    inner = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    # scaling factors for the brief: read back from each layer type's parameters
    params = _nested_params(inner, family, [x.layer_type for x in layers], [])
    keys = [
        (x.layer_type, x.window, x.rope, x.rope_type, x.base, x.rotary_dim,
         None if x.inv_freq is None else x.inv_freq.tobytes(), x.attention_factor, x.softmax_scale,
         repr(x.query_temperature))
        for x in layers
    ]
    model = inner.get("model_type")
    how = f"model_type {model!r}" if model else "no model_type"
    lines = [f"layers: {len(layers)}, read as {_FAMILY_NAMES[family]} code reads them ({how})",
             f"pattern: {_pattern(layers, keys)}"]
    max_pos = inner.get("max_position_embeddings")
    first_rope = next((x for x in layers if x.rope), None)
    length, length_name = None, None
    if first_rope is not None:
        p = params.get(first_rope.layer_type, {})
        original = p.get("original_max_position_embeddings", inner.get("original_max_position_embeddings"))
        if original is not None and first_rope.rope_type in ("yarn", "llama3", "longrope"):
            length, length_name = int(original), "training length (original_max_position_embeddings)"
        elif max_pos is not None:
            length, length_name = int(max_pos), "declared context (max_position_embeddings)"
    seen = []
    for key, x in zip(keys, layers, strict=True):
        if key in seen:
            continue
        seen.append(key)
        count = keys.count(key)
        head = f"{x.layer_type} ×{count}"
        if not x.rope:
            what = "no positional encoding" + (" (linear attention: a recurrent state, no position ids)"
                                               if x.layer_type == "linear_attention" else "")
            if inner.get("no_rope_layers") is not None or family in ("llama4", "smollm3"):
                what += " (its entry in no_rope_layers is 0; 1 means RoPE)"
        else:
            width = (f"all {x.head_dim} dims" if x.rotary_dim == x.head_dim
                     else f"{x.rotary_dim} of {x.head_dim} dims")
            turning = x.inv_freq[x.inv_freq > 0]
            what = f"RoPE on {x.pairs} pairs ({width}), base {x.base:,.0f}, rope_type {x.rope_type}"
            if x.factor is not None and x.rope_type != "default":
                what += f" (factor {x.factor:g})"
            if len(turning) < len(x.inv_freq):
                what += f", {len(x.inv_freq) - len(turning)} more pairs with ω = 0 (never turn)"
            if x.window is not None:
                span, span_name = x.window, "chunk" if x.layer_type == "chunked_attention" else "window"
            else:
                span, span_name = length, length_name
            # one rule, as in the single-scheme report: count with the frequencies the model uses over that
            # span; within the training length (original_max_position_embeddings) it trained unscaled
            scaled = span_name is not None and span_name.startswith("training length") and x.rope_type not in (
                "default", "proportional")
            if scaled:
                turning = frequencies(x.rotary_dim, x.base)
            wavelength = 2.0 * np.pi / turning
            if span is not None:
                kind = "unscaled wavelength" if scaled else "wavelength"
                what += (f"; slowest {kind} {wavelength.max():,.0f} tokens, {int(np.count_nonzero(wavelength > span))}"
                         f" of {len(turning)} turning pairs never complete a turn within the {span_name} of {span:,}"
                         + (" (unscaled)" if scaled else ""))
        lines.append(f"{head}: {what}")
    scales = sorted({x.softmax_scale for x in layers})
    widths = sorted({x.head_dim for x in layers})
    scale_text = ", ".join(f"{s:.6g}" for s in scales)
    if family in ("gemma2", "gemma3") or (family == "generic" and inner.get("query_pre_attn_scalar") is not None):
        why = f"1/√query_pre_attn_scalar, query_pre_attn_scalar {inner.get('query_pre_attn_scalar', 256)}"
        if inner.get("query_pre_attn_scalar") is None:
            why += " (the config class's default)"
    elif family == "granite":
        why = f"attention_multiplier {inner.get('attention_multiplier', 1.0)}, as GraniteAttention sets scaling"
        if inner.get("attention_multiplier") is None:
            why += " (the config class's default)"
    elif family in ("gemma4", "gemma3n"):
        cls = "Gemma4TextAttention" if family == "gemma4" else "Gemma3nTextAttention"
        why = f"{cls} sets scaling = 1.0; q and k pass through RMSNorm first"
    elif family == "deepseek_v3" and len(scales) == 1 and abs(scales[0] - widths[0] ** -0.5) > 1e-15:
        m = math.sqrt(scales[0] * math.sqrt(widths[0]))
        why = f"1/√{widths[0]} × mscale² with mscale = 0.1·mscale_all_dim·ln(factor) + 1 = {m:.4f}"
    else:
        why = "1/√head_dim, head_dim " + ", ".join(str(w) for w in widths)
    lines.append(f"softmax scale on q·k: {scale_text} ({why})")
    lines.append(_qk_norm_sentence(layers, model))
    if family == "deepseek_v3":
        rope_dim = first_rope.rotary_dim if first_rope else 0
        lines.append(
            f"MLA: each q·k head is {widths[0]} dims, {widths[0] - rope_dim} position-free (qk_nope_head_dim) and "
            f"{rope_dim} rotated (qk_rope_head_dim), the rotated key shared by all heads"
        )
    factors = sorted({x.attention_factor for x in layers if x.rope})
    if any(f != 1.0 for f in factors):
        lines.append("attention factor on cos and sin: " + ", ".join(f"{f:.4f} (logits × {f * f:.4f})" for f in factors))
    temps = {repr(x.query_temperature): x.query_temperature for x in layers if x.query_temperature is not None}
    for t in temps.values():
        kw = t.keywords
        if t.func is llama4_query_temperature:
            lines.append(f"query temperature on NoPE layers: 1 + {kw['attn_scale']:g}·ln(1 + ⌊(p + 1)/{kw['floor_scale']:,.0f}⌋)"
                         " (attn_temperature_tuning)")
        else:
            lines.append(f"query temperature on every layer: 1 + {kw['beta']:g}·ln(1 + ⌊p/{kw['original_max_position']:,.0f}⌋)"
                         " (llama_4_scaling_beta)")
    sections = {x.mrope_section for x in layers if x.mrope_section}
    for sec in sections:
        lines.append(_mrope_sentence(sec, any(x.mrope_interleaved for x in layers)))
    lines.append(f"layout: {layers[0].layout}" + (" (pair k is dims 2k and 2k + 1)" if layers[0].layout == "interleaved"
                                                  else " (pair k is dims k and k + d/2)"))
    if max_pos is None:
        lines.append("declared context: not stated (no max_position_embeddings)")
    else:
        lines.append(f"declared context: {int(max_pos):,} tokens (max_position_embeddings)")
    lines.extend(f"note: {n}" for n in notes)
    return "\n".join(lines)


def _qk_norm_sentence(layers: list[LayerPositions], model_type: str | None) -> str:
    """'q and k normalised: ...' for every distinct QK-norm, with the layers it applies to."""
    if any(x.qk_norm == QK_NORM_UNKNOWN for x in layers):
        who = f"model_type {model_type!r}" if model_type else "a config without model_type"
        return (f"q and k normalised: not known ({who} is not a family the reader transcribes, and no config key "
                "says; the family's attention code decides)")
    groups: dict[str, list[str]] = {}
    for x in layers:
        groups.setdefault("none" if x.qk_norm is None else str(x.qk_norm), []).append(_short(x))
    if len(groups) == 1:
        (what,) = groups
        return "q and k normalised: on no layer" if what == "none" else f"q and k normalised: {what} (every layer)"
    parts = []
    for what, kinds in groups.items():
        counts = ", ".join(f"{k} ×{kinds.count(k)}" for k in dict.fromkeys(kinds))
        parts.append(f"{what} ({counts})")
    return "q and k normalised: " + "; ".join(parts)


def _mrope_sentence(section, interleaved: bool) -> str:
    t, h, w = section
    if interleaved:
        return (f"M-RoPE, interleaved (mrope_section [{t}, {h}, {w}]): pair k turns with the height id when k mod 3 = 1 "
                f"and k < {3 * h}, with the width id when k mod 3 = 2 and k < {3 * w}, else with the time id; "
                "a text token has t = h = w")
    return (f"M-RoPE (mrope_section [{t}, {h}, {w}]): pairs 0–{t - 1} turn with the time id, {t}–{t + h - 1} "
            f"with the height id, {t + h}–{t + h + w - 1} with the width id; a text token has t = h = w")


def _load() -> dict:
    text = resources.files("posenc_helpers").joinpath("data/rope_configs.json").read_text(encoding="utf-8")
    return json.loads(text)


_GROUPS = ("classic", "2025-26", "all")


def _bundled(which: str) -> list[dict]:
    if which not in _GROUPS:
        raise ValueError(f"which must be one of {', '.join(repr(g) for g in _GROUPS)}, got {v._show(which)}")
    models = _load()["models"]
    if which == "all":
        return models
    return [m for m in models if m.get("group", "classic") == which]


def bundled_configs(which: str = "classic") -> dict[str, dict]:
    """The RoPE fields of a few real models, by name (a fresh copy each call).

    ``which="classic"`` (the default) gives the nine single-scheme configs notebook 11 reads;
    ``"2025-26"`` the per-layer designs of 2025–26 (read them with :func:`layer_positions`); ``"all"`` both.
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> sorted(bundled_configs())[:3]
    ['Code Llama 7B', 'GPT-J-6B', 'GPT-NeoX-20B']
    >>> bundled_configs()["Code Llama 7B"]["rope_theta"]
    1000000
    >>> bundled_configs()["Llama 3.1 8B"]["rope_theta"]
    500000.0
    >>> len(bundled_configs("2025-26")) >= 8
    True
    """
    return {m["name"]: m["config"] for m in _bundled(which)}


def bundled_sources(which: str = "classic") -> dict[str, dict]:
    """Where each bundled config was copied from: ``{"repository", "path", "commit", "note", "cross_checked"}`` by name.

    ``which`` as in :func:`bundled_configs`. The note names the second public copies the numbers were checked
    against (repository, path, commit); ``cross_checked`` is ``"every number"``, ``"some numbers"`` or ``"none"``.

    >>> sorted({s["cross_checked"] for s in bundled_sources("all").values()})
    ['every number', 'none', 'some numbers']
    """
    return {m["name"]: m["source"] for m in _bundled(which)}


def bundled_left_out() -> dict[str, str]:
    """Models the issue asked for that are not bundled, and why (empty when all are bundled)."""
    return dict(_load()["left_out"])

