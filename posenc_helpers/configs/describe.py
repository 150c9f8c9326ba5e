"""The plain-language reports: :func:`describe_config` and :func:`config_summary`.

One line per fact for a single-scheme config; for a per-layer config, each
kind of layer once with its count and the layers' pattern, the softmax
scale, QK-norm, query temperatures and every default the reader fell back
to. Taught in notebooks/11-rope-as-shipped.ipynb and
notebooks/14-position-per-layer.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as v
from ..core import frequencies
from .families import _FAMILY_NAMES, UNTYPED_NOTE, _family, _nested_params, check_family
from .layers import _language_model, _resolve, frequencies_from_config, per_layer, rope_settings
from .load import context_field, load_config
from .records import QK_NORM_UNKNOWN, LayerPositions, llama4_query_temperature
from .single import RopeSettings


def config_summary(config, *, assume=None) -> dict:
    """The numbers :func:`describe_config` reports, as a dict.

    Keys: ``pairs``, ``rotary_dim``, ``head_dim``, ``base``, ``fastest`` and
    ``slowest`` (wavelengths 2π/ω in tokens, unscaled), ``length`` (the L the
    scaling uses, or ``max_position_embeddings`` without scaling),
    ``never_turn`` (pairs whose unscaled wavelength exceeds L),
    ``rope_type``, ``factor``, ``attention_factor``, ``slowest_scaled``
    (slowest wavelength of the frequencies used on long inputs) and
    ``context`` (``max_position_embeddings``). Taught in notebooks/11-rope-as-shipped.ipynb.

    A config that sets position per layer (see :func:`per_layer`) has no single summary: a ValueError
    points to :func:`layer_positions` and :func:`describe_config`. ``config`` and ``assume`` as in
    :func:`rope_settings` (an assumed family is stated in ``notes``).

    >>> s = config_summary({"head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096})
    >>> s["pairs"], s["never_turn"], round(s["slowest"])   # 2π·10000^(126/128)
    (64, 18, 54410)
    """
    config = load_config(config)
    if per_layer(config, assume=assume):
        # a key the reader refuses (a family's own key in a config read Llama-style) is named first
        _family(_language_model(config, []), [], assume)
        raise ValueError(
            "this config sets position per layer (or needs its model's own code): config_summary has one row per "
            "model; use layer_positions(config), or describe_config(config) for the report"
        )
    s = rope_settings(config, assume=assume)
    omega = frequencies(s.rotary_dim, s.base)
    wavelength = 2.0 * np.pi / omega
    long_seq = None if s.original_max_position is None else 2 * s.original_max_position
    if s.rope_type == "default":
        scaled, att = omega, 1.0
    else:
        scaled, att = frequencies_from_config(config, seq_len=long_seq, assume=assume)
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


def describe_config(config, *, assume=None) -> str:
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

    ``config`` may be a dict, a config.json's JSON text (paste the file as it is) or its path. A ``model_type``
    the reader does not transcribe is refused by name, unless ``assume="llama"``: then it is read as Llama's code
    would read it, and the report says so in a note. A family without RoPE (BLOOM, MPT: ALiBi; GPT-2, OPT:
    learned positions) is named and refused. A config without ``model_type`` (and no key only one family's config
    has) is read Llama-style, and the report's last line says so (:data:`~posenc_helpers.configs.UNTYPED_NOTE`).
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> cfg = {"model_type": "llama", "head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096}
    >>> print(describe_config(cfg))
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
    config = load_config(config)
    assumed = check_family(config, assume)
    if per_layer(config, assume=assume):
        return _describe_layers(config, assume)
    s = rope_settings(config, assume=assume)
    summary = config_summary(config, assume=assume)
    if s.rotary_dim == s.head_dim:
        width = f"all {s.head_dim} dims of each head"
    else:
        width = f"the first {s.rotary_dim} of {s.head_dim} dims of each head"
    if any(n.startswith("no head_dim") for n in s.notes):
        width += " (head_dim assumed: the config class's default)"
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
    if assumed is not None or s.notes[:1] == (UNTYPED_NOTE,):
        lines.append(f"note: {s.notes[0]}")  # what was assumed: no family named, or assume='llama'
    return "\n".join(lines)


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
    for lead in range(1, 4):  # a few different first layers, then a repeating pattern (DeepSeek V4: 2 sliding)
        if p is not None or plain.count(" then ") < 4 or n - lead < 4:
            break
        rest = keys[lead:]
        q = next((q for q in range(2, len(rest) // 2 + 1) if all(rest[i] == rest[i - q] for i in range(q, len(rest)))),
                 None)
        if q is not None:
            whole, extra = divmod(len(rest), q)
            return (runs(keys[:lead], layers[:lead]) + ", then " + runs(rest[:q], layers[lead:lead + q])
                    + f", repeated ({whole} times" + (f", then the first {extra} again" if extra else "") + ")")
    return plain


def _describe_layers(config, assume=None) -> str:
    layers, notes, family = _resolve(config, need_count=True, assume=assume)
    inner = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    keys = [
        (x.layer_type, x.window, x.rope, x.rope_type, x.base, x.rotary_dim,
         None if x.inv_freq is None else x.inv_freq.tobytes(), x.attention_factor, x.softmax_scale,
         repr(x.query_temperature))
        for x in layers
    ]
    model = inner.get("model_type")
    how = f"model_type {model!r}" if model else "no model_type"
    if model and check_family(inner, assume) is not None:
        how += ", which the reader does not transcribe: assumed, as assume='llama' asks"
    lines = [f"layers: {len(layers)}, read as {_FAMILY_NAMES[family]} code reads them ({how})",
             f"pattern: {_pattern(layers, keys)}"]
    length, length_name = _counting_length(inner, family, layers)
    seen = []
    for key, x in zip(keys, layers, strict=True):
        if key not in seen:
            seen.append(key)
            lines.append(_kind_line(x, keys.count(key), inner, family, length, length_name))
    lines.append(_scale_line(inner, family, layers))
    lines.append(_qk_norm_sentence(layers, model))
    lines.extend(_extra_lines(family, layers))
    field = context_field({**inner, "model_type": family}, keys=("max_position_embeddings",))
    where, max_pos = (None, None) if field is None else field
    if where == "model_max_length":
        where = "model_max_length, which KimiLinearConfig reads as max_position_embeddings"
    if max_pos is None:
        lines.append("declared context: not stated (no max_position_embeddings)")
    else:
        lines.append(f"declared context: {int(max_pos):,} tokens ({where})")
    lines.extend(f"note: {n}" for n in notes)
    return "\n".join(lines)


def _counting_length(inner: dict, family: str, layers: list[LayerPositions]) -> tuple[int | None, str | None]:
    """The span a full layer's turns are counted in: the training length for YaRN, Llama 3 and LongRoPE, else
    the declared context; (None, None) when the config states neither."""
    # scaling factors for the brief: read back from each layer type's parameters
    params = _nested_params(inner, family, [x.layer_type for x in layers], [])
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
    return length, length_name


def _kind_line(x: LayerPositions, count: int, inner: dict, family: str, length, length_name) -> str:
    """One kind of layer: its count, RoPE (pairs, width, base, type) and how many pairs never finish a turn."""
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
        if x.window is not None and x.compressed is None:
            span, span_name = x.window, "chunk" if x.layer_type == "chunked_attention" else "window"
        elif x.compressed is not None:  # DeepSeek V4's CSA/HCA: compressed entries reach back to the first token,
            # so count over the layer's own training length (its YaRN's original_max_position_embeddings)
            span, span_name = _counting_length(inner, family, [x])
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
    return f"{head}: {what}"


def _scale_line(inner: dict, family: str, layers: list[LayerPositions]) -> str:
    """The softmax scale on q·k, and why the family's attention class sets it so."""
    scales = sorted({x.softmax_scale for x in layers})
    # the widths in the order of the scales they give (a wider head, a smaller scale)
    widths = sorted({x.head_dim for x in layers}, reverse=len(scales) > 1)
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
    return f"softmax scale on q·k: {scale_text} ({why})"


def _extra_lines(family: str, layers: list[LayerPositions]) -> list[str]:
    """MLA's split head, attention factors, query temperatures, multimodal sections and the layout."""
    lines: list[str] = []
    widths = sorted({x.head_dim for x in layers})
    first_rope = next((x for x in layers if x.rope), None)
    if family in ("deepseek_v3", "glm_moe_dsa"):
        rope_dim = first_rope.rotary_dim if first_rope else 0
        lines.append(
            f"MLA: each q·k head is {widths[0]} dims, {widths[0] - rope_dim} position-free (qk_nope_head_dim) and "
            f"{rope_dim} rotated (qk_rope_head_dim), the rotated key shared by all heads"
        )
    lines.extend(_lines_2026(family, layers))
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
    lines.append(_layout_sentence(first_rope or layers[0], family))
    return lines


def _lines_2026(family: str, layers: list[LayerPositions]) -> list[str]:
    """DeepSeek V4's compressed branches, sinks and K = V; GLM-5's indexer; Kimi Linear's NoPE MLA and KDA."""
    lines: list[str] = []
    seen = set()
    for x in layers:
        c = x.compressed
        if c is not None and (x.layer_type, c) not in seen:
            seen.add((x.layer_type, c))
            count = sum(y.layer_type == x.layer_type for y in layers)
            pooled = (f"{c.span} tokens (block w − 1 and block w, overlapping)" if c.span > c.rate
                      else f"the {c.rate} tokens of block w")
            keep = (f"; of those, its lightning indexer keeps the top {c.top_k:,} per query"
                    if c.top_k is not None else "; every visible entry is attended")
            lines.append(f"compressed branch ({_short(x)} ×{count}): entry w pools {pooled} into one key = value, "
                         f"rotated at position {c.rate}·w (the first token of block w) with this layer's frequencies; "
                         f"a query at t sees the entries w < ⌊(t + 1)/{c.rate}⌋{keep}")
    first = next((x for x in layers if x.indexer is not None), None)
    if first is not None and family == "glm_moe_dsa":
        i = first.indexer
        shared = sum(x.indexer is not None and x.indexer.scores == "reused" for x in layers)
        lines.append(f"DSA indexer: {i.heads} heads of {i.head_dim} dims, RoPE on their {i.rotated} {i.rotary_dim} dims "
                     f"with the layer's frequencies; keeps the top {i.top_k:,} tokens per query"
                     + (f" ({shared} layers reuse the last full layer's choice)" if shared else " (every layer)"))
    if family == "deepseek_v4":
        lines.append("keys = values: one key-value head serves as both, so the values carry the rotation too; "
                     "the attention output is turned back by −p·θ at the query's position p before the output "
                     "projection")
    if any(x.sinks for x in layers):
        lines.append("attention sinks: a learned logit per head joins each softmax (s_aux)")
    if family == "kimi_linear":
        full = next((x for x in layers if x.layer_type == "full_attention"), None)
        if full is not None:
            lines.append(f"MLA without RoPE: q·k heads of {full.head_dim} dims (qk_nope_head_dim + qk_rope_head_dim), "
                         "none rotated: the full-attention layers see no position")
        lines.append("linear attention (Kimi Delta Attention): position enters only through the order of the "
                     "recurrence and a short causal convolution")
    return lines


def _layout_sentence(x: LayerPositions, family: str) -> str:
    """Which dims form pair k; for a partial rotation, within the rotated part, the rest passing unrotated.

    (DeepSeek-V3's MLA rotates the last qk_rope_head_dim dims of its q·k head, as the MLA line says; Gemma 4's
    proportional RoPE pairs the whole head, with ω = 0 on the pairs that do not turn.)"""
    if not x.rope:
        return "layout: none (no layer turns q or k)"
    pairing = " (pair k is dims 2k and 2k + 1)" if x.layout == "interleaved" else " (pair k is dims k and k + d/2)"
    if x.rotated == "trailing" and family != "deepseek_v3" and 0 < x.rotary_dim < x.head_dim:
        d, h = x.rotary_dim, x.head_dim
        first = h - d
        pairing = ((f" (pair k is dims {first} + 2k and {first} + 2k + 1" if x.layout == "interleaved"
                    else f" (pair k is dims {first} + k and {first} + k + {d // 2}")
                   + f", within the last {d} of {h} dims; dims 0–{first - 1} pass unrotated)")
        return f"layout: {x.layout}" + pairing
    if (x.rope and 0 < x.rotary_dim < x.head_dim and x.rope_type != "proportional"
            and family != "deepseek_v3"):
        d = x.rotary_dim
        pairing = (" (pair k is dims 2k and 2k + 1" if x.layout == "interleaved" else f" (pair k is dims k and k + {d // 2}"
                   ) + f", within the first {d} of {x.head_dim} dims; dims {d}–{x.head_dim - 1} pass unrotated)"
    return f"layout: {x.layout}" + pairing


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
