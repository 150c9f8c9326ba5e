"""Literal reference implementations for RoPE as shipped, one element at a time.

Each is written the way the code base it imitates writes it (Hugging Face
``transformers``: modeling_gpt_neox.py, modeling_gptj.py,
modeling_rope_utils.py, modeling_t5.py, modeling_qwen2_vl.py), with plain
Python floats and the math module: no numpy, nothing shared with
posenc_helpers.
"""

from __future__ import annotations

import math


def inv_freq(dim: int, base: float) -> list[float]:
    """1 / base^(arange(0, dim, 2) / dim), as every Hugging Face RoPE module builds it."""
    return [1.0 / base ** (i / dim) for i in range(0, dim, 2)]


def neox_partial(x, pos: float, rotary_ndims: int, base: float = 10000.0) -> list[float]:
    """GPT-NeoX: q_rot = q[:r], q_pass = q[r:]; q_rot·cos + rotate_half(q_rot)·sin with emb = cat(freqs, freqs)."""
    r = rotary_ndims
    freqs = [pos * f for f in inv_freq(r, base)]
    emb = freqs + freqs
    rot = [float(v) for v in x[:r]]
    half = r // 2
    rotate_half = [-rot[i + half] for i in range(half)] + [rot[i] for i in range(half)]
    out = [rot[i] * math.cos(emb[i]) + rotate_half[i] * math.sin(emb[i]) for i in range(r)]
    return out + [float(v) for v in x[r:]]


def gptj_partial(x, pos: float, rotary_dim: int) -> list[float]:
    """GPT-J: sin/cos repeat_interleave(2); k_rot·cos + rotate_every_two(k_rot)·sin; base fixed at 10000."""
    r = rotary_dim
    freqs = [pos * f for f in inv_freq(r, 10000.0)]
    sin = [math.sin(freqs[i // 2]) for i in range(r)]
    cos = [math.cos(freqs[i // 2]) for i in range(r)]
    rot = [float(v) for v in x[:r]]
    # rotate_every_two: stack((-x[1::2], x[::2]), -1).flatten()
    every_two = []
    for j in range(r // 2):
        every_two += [-rot[2 * j + 1], rot[2 * j]]
    out = [rot[i] * cos[i] + every_two[i] * sin[i] for i in range(r)]
    return out + [float(v) for v in x[r:]]


def dynamic_ntk(dim: int, base: float, factor: float, max_position_embeddings: int, seq_len) -> list[float]:
    """_compute_dynamic_ntk_parameters: seq_len = max(seq_len, L); base·((s·seq_len/L) − (s − 1))^(dim/(dim−2))."""
    seq = max_position_embeddings if seq_len is None else max(seq_len, max_position_embeddings)
    base = base * ((factor * seq / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    return inv_freq(dim, base)


def llama3(dim: int, base: float, factor: float, low: float, high: float, old_context_len: int) -> list[float]:
    """_compute_llama3_parameters, one frequency at a time."""
    out = []
    low_freq_wavelen = old_context_len / low
    high_freq_wavelen = old_context_len / high
    for f in inv_freq(dim, base):
        wavelen = 2 * math.pi / f
        if wavelen < high_freq_wavelen:
            out.append(f)
        elif wavelen > low_freq_wavelen:
            out.append(f / factor)
        else:
            smooth = (old_context_len / wavelen - low) / (high - low)
            out.append((1 - smooth) * f / factor + smooth * f)
    return out


def yarn(dim, base, factor, original_max_position_embeddings, beta_fast=32, beta_slow=1, truncate=True):
    """_compute_yarn_parameters' frequencies: the index ramp between the correction range."""

    def correction_dim(num_rotations):
        return (dim * math.log(original_max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    out = []
    for j, f in enumerate(inv_freq(dim, base)):
        ramp = min(max((j - low) / (high - low), 0.0), 1.0)
        extrapolation = 1 - ramp
        out.append((f / factor) * (1 - extrapolation) + f * extrapolation)
    return out


def yarn_attention(factor, attention_factor=None, mscale=None, mscale_all_dim=None):
    """_compute_yarn_parameters' attention factor, with get_mscale."""

    def get_mscale(scale, m=1):
        if scale <= 1:
            return 1.0
        return 0.1 * m * math.log(scale) + 1.0

    if attention_factor is not None:
        return attention_factor
    if mscale and mscale_all_dim:
        return get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
    return get_mscale(factor)


def longrope(dim, base, short_factor, long_factor, max_position_embeddings, original, seq_len, factor=None):
    """_compute_longrope_parameters: ext factors by seq_len; attention √(1 + ln s / ln L)."""
    if factor is None:
        factor = max_position_embeddings / original
    attention = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    ext = long_factor if (seq_len and seq_len > original) else short_factor
    freqs = [1.0 / (ext[j] * base ** (i / dim)) for j, i in enumerate(range(0, dim, 2))]
    return freqs, attention


def t5_relative_position_bucket(relative_position: int, bidirectional=True, num_buckets=32, max_distance=128) -> int:
    """T5Attention._relative_position_bucket for one integer (float64 instead of torch's float32)."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0) * num_buckets
        relative_position = abs(relative_position)
    else:
        relative_position = -min(relative_position, 0)
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if is_small:
        return relative_buckets + relative_position
    if_large = max_exact + int(
        math.log(relative_position / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    )
    if_large = min(if_large, num_buckets - 1)
    return relative_buckets + if_large


def qwen2_vl_mrope(x, t, h, w, mrope_section, base=10000.0) -> list[float]:
    """apply_multimodal_rotary_pos_emb: cos/sin per id, split by mrope_section * 2, section i from id i % 3."""
    dim = len(x)
    freqs = inv_freq(dim, base)
    ids = (t, h, w)
    # emb[a] = cat(freqs·id_a, freqs·id_a) for a = 0, 1, 2
    emb = [[ids[a] * f for f in freqs] * 2 for a in range(3)]
    sections = list(mrope_section) * 2
    cos, sin, start = [], [], 0
    for i, size in enumerate(sections):
        for j in range(start, start + size):
            cos.append(math.cos(emb[i % 3][j]))
            sin.append(math.sin(emb[i % 3][j]))
        start += size
    half = dim // 2
    rotate_half = [-x[i + half] for i in range(half)] + [x[i] for i in range(half)]
    return [x[i] * cos[i] + rotate_half[i] * sin[i] for i in range(dim)]
