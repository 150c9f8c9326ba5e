"""`posenc explain`'s report as text (:func:`render_text`) and as JSON (:func:`render_json`).

The report is the dict of :func:`posenc_helpers.explain.build_report`; the text says the same, a line per
kind of layer, the runs, the KV cache table, the base-context check and the notes.

>>> from posenc_helpers.explain import explain
>>> cfg = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
...        "num_key_value_heads": 2, "rope_theta": 10000.0, "max_position_embeddings": 256,
...        "torch_dtype": "bfloat16"}
>>> print(render_text(explain(cfg, contexts=[1024])).splitlines()[3])
runs: 0-1 A
"""

from __future__ import annotations

import json
import math

from .configs import UNTYPED_NOTE
from .explain import NOT_TRACED

# whose code an assumed family's config is read as (the report's ``assumed["read_as"]``)
_FAMILY_CODE = {"llama": "Llama's"}


def size_text(x: float) -> str:
    """Bytes in binary units: '512 KiB', '4.0 GiB', '96 B'.

    >>> size_text(131072), size_text(1073741824), size_text(96)
    ('128 KiB', '1.0 GiB', '96 B')
    """
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if x >= scale:
            value = x / scale
            return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"
    return f"{x:,.0f} B"


def context_label(n: int) -> str:
    """8K, 128K, 1M for multiples of 1,024 and 1,048,576; the number otherwise.

    >>> context_label(8192), context_label(1048576), context_label(1000)
    ('8K', '1M', '1,000')
    """
    if n % 1048576 == 0:
        return f"{n // 1048576}M"
    return f"{n // 1024}K" if n % 1024 == 0 else f"{n:,}"


def _rope_text(k: dict, rope_only: bool = False) -> str:
    """The layer's RoPE in words. ``rope_only``: the engine traces the rotary function alone (transformers'), so a
    layer without it has no RoPE, and may still get position elsewhere (an ALiBi bias, a learned table)."""
    if k["rope"] is False:
        if k["attention"] == "linear":
            return "no positional encoding (linear attention: a recurrent state)"
        return "no RoPE (the layer calls no rotary function)" if rope_only else "no positional encoding"
    if k["rope"] == NOT_TRACED:
        return "RoPE not traced"
    width = (f"all {k['head_dim']} dims" if k["rotary_dim"] == k["head_dim"] else f"{k['rotary_dim']} of {k['head_dim']} dims")
    text = f"RoPE on {k['rotary_dim'] // 2} pairs ({width}, {k['layout']})"
    if k["pairs"] * 2 > k["rotary_dim"]:
        text += f" and {k['pairs'] - k['rotary_dim'] // 2} pairs with frequency 0"
    base = k["base"]
    text += f", base {base:,.0f}" if isinstance(base, float | int) else ""
    text += f", rope_type {k['rope_type']}"
    if isinstance(k["factor"], float | int) and k["rope_type"] not in ("default", None):
        text += f" (factor {k['factor']:g})"
    att = k["attention_factor"]
    if isinstance(att, float) and att != 1.0:
        text += f", attention factor {att:.4f}"
    inv = [x for x in k["inv_freq"] if x > 0]
    if inv:
        text += f"; wavelengths {2 * math.pi / max(inv):,.1f} to {2 * math.pi / min(inv):,.0f} tokens"
    return text


def _norm_text(q) -> str:
    if q is None:
        return "no QK-norm"
    if isinstance(q, str):
        return f"QK-norm {q}"
    where = {"before_rope": "before RoPE", "after_rope": "after RoPE", "no_rope": "(no RoPE)"}.get(q["where"], q["where"])
    over = {"head": "per head", "all_heads": "over all heads"}.get(q["over"], q["over"])
    kind = "" if q.get("kind") in (None, NOT_TRACED) else f"{q['kind'].upper()} "
    return f"QK-norm: {kind}{over}, {where}"


def _kv_text(k: dict) -> str:
    kind = k["kv_kind"]
    if kind is None:
        return "KV not counted"
    if kind == "shared":
        return "KV: none (reuses another layer's cache)"
    if kind == "linear":
        return "KV: a fixed state" + (f" ({k['kv_cached']})" if k.get("kv_cached") else "")
    if kind == "compressed":  # DeepSeek V4: a window's keys = values plus compressed entries
        if k.get("kv_cached"):
            return f"KV: {k['kv_cached']}, keeps the window's last {k['kv_holds']:,} tokens"
        return "KV: a window's keys and compressed entries (not measured by this engine)"
    if k["kv_holds"] == NOT_TRACED:
        return f"KV: {k['kv_numbers_per_token']} numbers per token, tokens kept not measured"
    keeps = "every token" if k["kv_holds"] is None else f"the last {k['kv_holds']:,} tokens"
    return f"KV: {k['kv_numbers_per_token']:,} numbers per token, keeps {keeps}"


def kind_line(k: dict, engine: str = "course") -> str:
    """One kind of layer in one line (wrapped by the caller), as ``engine`` ("course" or "transformers") read it."""
    span = ""
    if k["window"] is not None:
        span = f" {'chunk' if k['attention'] == 'chunked' else 'window'} {k['window']:,}"
    parts = [f"{k['attention']} attention{span}", _rope_text(k, rope_only=engine == "transformers")]
    if isinstance(k["softmax_scale"], float):
        parts.append(f"softmax scale {k['softmax_scale']:.6g}")
    if k["query_temperature"] not in (None, NOT_TRACED):
        parts.append(f"query temperature {k['query_temperature']}")
    parts.append(_norm_text(k["qk_norm"]))
    sinks = k["sinks"]
    parts.append("attention sinks" if sinks is True else "no sinks" if sinks is False else f"sinks {sinks}")
    parts.append(_kv_text(k))
    return f"{k['id']} ×{k['count']} ({k['layer_type']}): " + "; ".join(parts)


def _wrap(text: str, width: int = 100) -> list[str]:
    """``text`` in lines of at most ``width`` characters (a longer word stays whole), continued 4 spaces deeper."""
    lead = text[: len(text) - len(text.lstrip(" "))]
    indent = lead + "    "
    lines, line = [], lead
    for word in text.split():
        if line.strip() and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = indent + word
        else:
            line = f"{line} {word}" if line.strip() else line + word
    return lines + [line]


def _runs_text(runs: list[dict]) -> str:
    return ", ".join(f"{r['first']}-{r['last']} {r['kind']}" if r["last"] > r["first"] else f"{r['first']} {r['kind']}"
                     for r in runs)


def _kv_lines(report: dict) -> list[str]:
    kv = report["kv_cache"]
    if kv["contexts"] is None:
        return ["KV cache: not counted (see the notes)"]
    size = kv["bytes_per_number"]
    dtype = (f"{kv['dtype']}, {size} bytes per number, from {kv['dtype_from']}" if size
             else "no dtype: numbers, not bytes")
    per = f"{kv['numbers_per_token']:,} numbers" + (f" = {size_text(kv['bytes_per_token'])}" if size else "")
    lines = [f"KV cache, one sequence ({dtype}):", f"  per token, while every layer still holds it: {per}"]
    state = kv["state_numbers"]
    if state["conv"] or state["recurrent"]:
        fixed = size_text(kv["state_bytes"]) if kv["state_bytes"] is not None else (
            f"{state['conv'] + state['recurrent']:,} numbers")
        lines.append(f"  fixed state of the linear-attention layers: {fixed}")
    if not state["traced"]:
        lines.append("  (the linear-attention layers' fixed state is not traced)")
    limit = report["declared_context"]
    lines.append(f"  {'context':>9} {'cached' if size else 'numbers':>16} {'per token':>12}")
    for row in kv["contexts"]:
        beyond = "  beyond the declared context" if limit is not None and row["context"] > limit else ""
        if size:
            lines.append(f"  {context_label(row['context']):>9} {size_text(row['bytes']):>16} "
                         f"{size_text(row['bytes_per_token']):>12}{beyond}")
        else:
            lines.append(f"  {context_label(row['context']):>9} {row['numbers']:>16,} "
                         f"{row['numbers'] / row['context']:>12,.0f}{beyond}")
    return lines


def _base_lines(report: dict) -> list[str]:
    rows = report["base_check"]
    if not rows:
        return []
    lines = [f"base-context check (Men et al. 2024, Eq. 10-11), declared context {report['declared_context']:,}:"]
    for row in rows:
        first = row["first_negative_model"]
        said = ("B_m >= 0 at every m (the layer's frequencies)" if first is None
                else f"B_m < 0 first at m = {first:,} (the layer's frequencies)")
        if row["bound"] is None:
            bound = "Eq. 11 bound not stored for this (context, rotary_dim): --bound computes it"
        else:
            where = "above" if row["above"] else "below"
            base = f"base {row['base']:,.0f} is {where} it" if row["above"] is not None else "base not read"
            bound = f"Eq. 11 bound {row['bound']:,.0f} ({row['bound_from']}): {base}"
        lines += _wrap(f"  {row['kind']}: m <= {row['context']:,}: {said}; {bound}")
    return lines


def render_text(report: dict) -> str:
    """The report in lines of at most about 100 characters."""
    engine = report["engine"]
    where = report["source"] or "(given as data)"
    model = f"model_type {report['model_type']!r}" if report["model_type"] else "no model_type"
    assumed = report.get("assumed")
    wrap = bool(assumed)
    if assumed:
        code = _FAMILY_CODE.get(assumed["read_as"], assumed["read_as"])
        model += f", not a family the reader transcribes: read as {code} code reads it (assumed on request; see the notes)"
    elif UNTYPED_NOTE in report["notes"]:
        wrap = True  # the reader's own assumption, stated in its note
        model += ", and no key names a family: read Llama-style (assumed; see the notes)"
    first = f"config: {where}; {model}" + (", read from its text_config" if report["text_config"] else "")
    # the first line as it always was (scripts read it); wrapped only when it states an assumption
    lines = [*(_wrap(first) if wrap else [first]),
             f"engine: {engine['version']}" + (f" ({engine['detail']})" if engine.get("detail") else ""),
             f"layers: {report['num_layers']}, {len(report['kinds'])} kind" + ("s" if len(report["kinds"]) > 1 else ""),
             *_wrap("runs: " + _runs_text(report["runs"]))]
    for k in report["kinds"]:
        lines += _wrap("  " + kind_line(k, engine["name"]))
    lines += _kv_lines(report)
    lines += _base_lines(report)
    if report["notes"]:
        lines.append("notes:")
        for note in report["notes"]:
            lines += _wrap(f"  - {note}")
    return "\n".join(lines)


def render_json(report: dict) -> str:
    """The report as JSON (keys in the report's order, two-space indent)."""
    return json.dumps(report, indent=2, ensure_ascii=False)
