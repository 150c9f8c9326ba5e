"""Reading one RoPE scheme from a config: the fields, their fallbacks, the frequencies.

:func:`_settings` resolves what a ``config.json``-shaped dict says about
RoPE (base, head width, rotated width, rope type, lengths, factor) the way
Hugging Face ``transformers`` resolves it, and
:func:`_single_frequencies` turns that into ``inv_freq`` and the attention
factor, following ``modeling_rope_utils``. Taught in
notebooks/11-rope-as-shipped.ipynb.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import _validate as v
from ..core import frequencies
from ..scaling import scaled_frequencies, scaling_attention_factor

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


def _settings(config: dict) -> RopeSettings:
    """One scheme's settings, read from a dict as Hugging Face reads them (the rules are listed by the public
    :func:`~posenc_helpers.configs.rope_settings`, which checks the family first)."""
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict shaped like a config.json, got {v._show(config)}")
    config = _phi3(config)
    params, where = _scaling_dict(config)
    notes: list[str] = []
    base = _base(config, params, where, notes)
    head_dim = _head_dim(config, notes)
    rotary_dim, fraction_key = _rotary_dim(config, params, head_dim, notes)
    rope_type = _rope_type(params, where, notes)
    if rope_type == "proportional":
        rotary_dim = _proportional_dim(config, params, fraction_key, head_dim, notes)
    max_pos = config.get("max_position_embeddings", config.get("n_positions"))
    max_pos = None if max_pos is None else v.positive_int("max_position_embeddings", max_pos)
    original = params.get("original_max_position_embeddings", config.get("original_max_position_embeddings"))
    original = None if original is None else v.positive_int("original_max_position_embeddings", original)
    factor, length = _factor_and_length(rope_type, params, where, max_pos, original, notes)
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


def _base(config: dict, params: dict, where: str, notes: list[str]) -> float:
    """rope_theta, rope_parameters.rope_theta, rotary_emb_base, else 10000 (stated in ``notes``)."""
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
    return base


#: head_dim of the config classes, in transformers 5.24.0, that state one where the family's other classes do not:
#: Qwen3Config and Qwen3VLTextConfig 128, Qwen3_5TextConfig 256 (their modeling code reads config.head_dim first).
_HEAD_DIM_DEFAULTS = {"qwen3": 128, "qwen3_vl": 128, "qwen3_vl_text": 128, "qwen3_5": 256, "qwen3_5_text": 256}


def _head_dim(config: dict, notes: list[str] | None = None) -> int:
    """head_dim, else the config class's own default (:data:`_HEAD_DIM_DEFAULTS`), else hidden_size //
    num_attention_heads, else n_embd // n_head (GPT-J's names)."""
    if config.get("head_dim"):
        return v.positive_int("head_dim", config["head_dim"])
    if config.get("model_type") in _HEAD_DIM_DEFAULTS:
        width = _HEAD_DIM_DEFAULTS[config["model_type"]]
        if notes is not None:
            notes.append(f"no head_dim: {width} assumed (the config class's default)")
        return width
    if config.get("hidden_size") is not None and config.get("num_attention_heads") is not None:
        return v.positive_int("hidden_size", config["hidden_size"]) // v.positive_int(
            "num_attention_heads", config["num_attention_heads"]
        )
    if config.get("n_embd") is not None and config.get("n_head") is not None:
        return v.positive_int("n_embd", config["n_embd"]) // v.positive_int("n_head", config["n_head"])
    raise ValueError(
        "config gives no head width: need head_dim, or hidden_size and num_attention_heads, "
        "or n_embd and n_head (GPT-J)"
    )


def _rotary_dim(config: dict, params: dict, head_dim: int, notes: list[str]) -> tuple[int, str | None]:
    """rotary_dim (absolute), else int(head_dim × partial_rotary_factor or rotary_pct); and the fraction's key."""
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
    return rotary_dim, fraction_key


def _rope_type(params: dict, where: str, notes: list[str]) -> str:
    """rope_type or type in the scaling dict, old names read as their new ones; an unknown one refused."""
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
    return rope_type


def _proportional_dim(config: dict, params: dict, fraction_key: str | None, head_dim: int, notes: list[str]) -> int:
    """The turning width of "proportional" RoPE, as _compute_proportional_rope_parameters computes it."""
    # int(fraction × head_dim // 2) pairs turn, with ω_k = base^(−2k/head_dim) (the whole head's width), and the
    # other pairs get ω = 0
    fraction = 1.0 if fraction_key is None else _number(fraction_key, config.get(fraction_key, params.get(fraction_key)))
    rotary_dim = 2 * int(fraction * head_dim // 2)
    notes[:] = [n for n in notes if not n.startswith(f"{fraction_key} = ")]
    notes.append(
        f"proportional: int({fraction:g} × {head_dim} // 2) = {rotary_dim // 2} of {head_dim // 2} pairs turn, "
        f"with ω_k = base^(−2k/{head_dim}); the other {(head_dim - rotary_dim) // 2} have ω = 0"
    )
    if rotary_dim < 2:
        raise ValueError(f"partial_rotary_factor {fraction:g} leaves no pair turning in a {head_dim}-wide head")
    return rotary_dim


def _factor_and_length(rope_type, params, where, max_pos, original, notes) -> tuple[float | None, int | None]:
    """The scaling factor s and the length L the type compares with, from where Hugging Face reads each."""

    def need(key: str):
        if params.get(key) is None:
            raise ValueError(f"rope_type {rope_type!r} needs {key!r} in {where}, and the config has none")
        return params[key]

    if rope_type in ("linear", "dynamic"):
        factor = _number("factor", need("factor"))
        if rope_type == "linear":
            return factor, None  # linear compares with no length
        if max_pos is None:
            raise ValueError("rope_type 'dynamic' needs max_position_embeddings (its L), and the config has none")
        notes.append("dynamic NTK: L = max_position_embeddings, as in Hugging Face")
        return factor, max_pos
    if rope_type == "llama3":
        factor = _number("factor", need("factor"))
        for key in ("low_freq_factor", "high_freq_factor"):
            need(key)
        if params.get("original_max_position_embeddings") is None:
            raise ValueError(
                f"rope_type 'llama3' needs 'original_max_position_embeddings' in {where} "
                "(Hugging Face reads it there only), and the config has none"
            )
        return factor, original
    if rope_type not in ("yarn", "longrope"):
        return None, max_pos
    if rope_type == "longrope":
        need("short_factor")
        need("long_factor")
    length = original if original is not None else max_pos
    if length is None:
        raise ValueError(
            f"rope_type {rope_type!r} needs original_max_position_embeddings or max_position_embeddings (its L)"
        )
    if params.get("factor") is not None:
        return _number("factor", params["factor"]), length
    if original is not None and max_pos is not None:
        # as Hugging Face: s = max_position_embeddings / original_max_position_embeddings
        factor = max_pos / original
        notes.append(f"no factor: s = max_position_embeddings / original_max_position_embeddings = {factor:g}")
        return factor, length
    if rope_type == "longrope":
        notes.append("no factor and no original_max_position_embeddings: s = 1")
        return 1.0, length
    raise ValueError(
        f"rope_type 'yarn' needs 'factor' in {where} (or both max_position_embeddings and "
        "original_max_position_embeddings to derive it), and the config has none"
    )


def _single_frequencies(config, seq_len=None) -> tuple[np.ndarray, float]:
    s = _settings(config)
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
