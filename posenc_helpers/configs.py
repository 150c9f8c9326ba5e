"""Read a real model's config: which RoPE it ships, and what that does to each pair.

:func:`frequencies_from_config` takes a dict shaped like a Hugging Face
``config.json`` (old files with ``rope_scaling``, newer ones with
``rope_parameters``) and returns the frequencies and attention factor the
model uses, following Hugging Face ``transformers``' ``modeling_rope_utils``.
:func:`describe_config` says the same in plain language. A few real configs
ship with the package (:func:`bundled_configs`), each with the repository and
file it was copied from (:func:`bundled_sources`).

Taught in notebooks/11-rope-as-shipped.ipynb.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
]

#: The ``rope_type`` values Hugging Face knows, and the legacy name ``"su"`` for LongRoPE.
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
_LEGACY = {"su": "longrope"}

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
      read as ``"longrope"``; no dict (or ``"default"``) means no scaling;
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
        raise ValueError(f"unknown rope_type {raw_type!r} in {where}; known: {known} (and 'su', the old name of 'longrope')")
    if raw_type != rope_type:
        notes.append(f"type {raw_type!r} is the old name of {rope_type!r}")

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
    (1 except for YaRN and LongRoPE). ``seq_len`` matters only for
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
    ValueError: unknown rope_type 'ntk-by-parts' in rope_scaling; known: 'default', 'linear', ..., 'llama3' (and 'su', ...)
    """
    s = rope_settings(config)
    p = s.params
    if seq_len is not None:
        seq_len = v.positive_int("seq_len", seq_len)
    if s.rope_type == "default":
        return frequencies(s.rotary_dim, s.base), 1.0
    if s.rope_type == "linear":
        return scaled_frequencies(s.rotary_dim, s.base, "linear", s.factor), 1.0
    if s.rope_type == "dynamic":
        inv = scaled_frequencies(
            s.rotary_dim, s.base, "dynamic", s.factor, original_max_position=s.original_max_position, seq_len=seq_len
        )
        return inv, 1.0
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

    >>> s = config_summary({"head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096})
    >>> s["pairs"], s["never_turn"], round(s["slowest"])   # 2π·10000^(126/128)
    (64, 18, 54410)
    """
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
            f"scaling: dynamic NTK with factor {s.factor:g}, at inference only: beyond L = {length:,} tokens "
            "the base grows with the sequence length"
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

    One line each: the rotated pairs (and the base, with any fallback
    stated), the fastest and slowest wavelength (unscaled), how many pairs
    never complete one turn within L, the scaling and the length it starts
    from, the attention factor, and the effective context
    (``max_position_embeddings``). Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> print(describe_config({"head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096}))
    rotation: 64 pairs, all 128 dims of each head, base 10,000
    wavelengths: fastest 6.3 tokens (pair 0), slowest 54,410 tokens (pair 63)
    within L = 4,096 tokens: 18 of 64 pairs never complete a turn
    scaling: none
    attention factor: 1 (logits unchanged)
    effective context: 4,096 tokens (max_position_embeddings)
    """
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
        lines.append("no training length in the config (max_position_embeddings missing)")
    else:
        lines.append(
            f"within L = {summary['length']:,} tokens: {summary['never_turn']} of {s.pairs} pairs never complete a turn"
        )
    lines.append(_scaling_sentence(s, summary))
    att = summary["attention_factor"]
    if att == 1.0:
        lines.append("attention factor: 1 (logits unchanged)")
    else:
        lines.append(f"attention factor: {att:.4f} on cos and sin, so logits × {att * att:.4f}")
    if s.max_position_embeddings is None:
        lines.append("effective context: not stated (no max_position_embeddings)")
    elif s.rope_type == "dynamic":
        lines.append(
            f"effective context: {s.max_position_embeddings:,} tokens declared; dynamic NTK keeps stretching beyond"
        )
    else:
        lines.append(f"effective context: {s.max_position_embeddings:,} tokens (max_position_embeddings)")
    return "\n".join(lines)


def _load() -> dict:
    text = resources.files("posenc_helpers").joinpath("data/rope_configs.json").read_text(encoding="utf-8")
    return json.loads(text)


def bundled_configs() -> dict[str, dict]:
    """The RoPE fields of a few real models, by name (a fresh copy each call).

    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> sorted(bundled_configs())[:3]
    ['Code Llama 7B', 'GPT-J-6B', 'GPT-NeoX-20B']
    >>> bundled_configs()["Code Llama 7B"]["rope_theta"]
    1000000
    >>> bundled_configs()["Llama 3.1 8B"]["rope_theta"]
    500000.0
    """
    return {m["name"]: m["config"] for m in _load()["models"]}


def bundled_sources() -> dict[str, dict]:
    """Where each bundled config was copied from: ``{"repository", "path", "commit", "note"}`` by name."""
    return {m["name"]: m["source"] for m in _load()["models"]}


def bundled_left_out() -> dict[str, str]:
    """Models the issue asked for that are not bundled, and why (empty when all are bundled)."""
    return dict(_load()["left_out"])

