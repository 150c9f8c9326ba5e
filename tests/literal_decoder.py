"""A literal decoder for one unpadded sequence: loops over layers, heads, queries and keys, no vectorised shortcut.

Written from the transformers 5.24.0 classes (Qwen3DecoderLayer, Gemma3DecoderLayer and their attention and
norms) independently of posenc_helpers.decoder, to check it. Slow on purpose: for tiny models only.
"""

from __future__ import annotations

import math

import numpy as np


def rms(x, w, gemma, eps):
    y = [xi / math.sqrt(sum(v * v for v in x) / len(x) + eps) for xi in x]
    return [yi * ((1.0 + wi) if gemma else wi) for yi, wi in zip(y, w, strict=True)]


def matvec(W, x):
    return [sum(W[r][c] * x[c] for c in range(len(x))) for r in range(len(W))]


def rotate(vec, pos, inv_freq, rotary_dim, factor):
    half = rotary_dim // 2
    out = list(vec)
    for k in range(half):
        a = pos * inv_freq[k]
        c, s = math.cos(a) * factor, math.sin(a) * factor
        x1, x2 = vec[k], vec[k + half]
        out[k] = x1 * c - x2 * s
        out[k + half] = x2 * c + x1 * s
    return out


def act(x, gemma):
    if gemma:
        return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return x / (1 + math.exp(-x))


def logits(spec, weights, ids):
    """Logits (T, vocab) of one sequence of token ids, positions 0 … T − 1."""
    gemma = spec.family == "gemma3_text"
    W = {k: np.asarray(v).tolist() for k, v in weights.items()}
    T, d = len(ids), spec.head_dim
    xs = [[v * (math.sqrt(spec.hidden) if gemma else 1.0) for v in W["model.embed_tokens.weight"][t]] for t in ids]
    for i in range(spec.layers):
        p = f"model.layers.{i}."
        hs = [rms(x, W[p + "input_layernorm.weight"], gemma, spec.eps) for x in xs]
        qs, ks, vs = [], [], []
        for t, h in enumerate(hs):
            q, k, v = (matvec(W[p + f"self_attn.{n}_proj.weight"], h) for n in "qkv")
            qh = [rms(q[j * d:(j + 1) * d], W[p + "self_attn.q_norm.weight"], gemma, spec.eps) for j in range(spec.heads)]
            kh = [rms(k[j * d:(j + 1) * d], W[p + "self_attn.k_norm.weight"], gemma, spec.eps) for j in range(spec.kv_heads)]
            args = (spec.inv_freq[i].tolist(), spec.rotary_dim[i], spec.attention_factor[i])
            qs.append([rotate(x, t, *args) for x in qh])
            ks.append([rotate(x, t, *args) for x in kh])
            vs.append([v[j * d:(j + 1) * d] for j in range(spec.kv_heads)])
        group = spec.heads // spec.kv_heads
        window = spec.windows[i]
        new = []
        for t in range(T):
            out = []
            for j in range(spec.heads):
                g = j // group
                keys = [u for u in range(t + 1) if window is None or t - u < window]
                sc = [sum(a * b for a, b in zip(qs[t][j], ks[u][g], strict=True)) * spec.softmax_scale[i] for u in keys]
                extra = [W[p + "self_attn.sinks"][j]] if spec.sinks else []
                top = max(sc + extra)
                e = [math.exp(s - top) for s in sc]
                z = sum(e) + sum(math.exp(s - top) for s in extra)
                out += [sum(e[n] / z * vs[u][g][c] for n, u in enumerate(keys)) for c in range(d)]
            h = matvec(W[p + "self_attn.o_proj.weight"], out)
            x = xs[t]
            if gemma:
                h = rms(h, W[p + "post_attention_layernorm.weight"], gemma, spec.eps)
                x = [a + b for a, b in zip(x, h, strict=True)]
                h = rms(x, W[p + "pre_feedforward_layernorm.weight"], gemma, spec.eps)
            else:
                x = [a + b for a, b in zip(x, h, strict=True)]
                h = rms(x, W[p + "post_attention_layernorm.weight"], gemma, spec.eps)
            gate, up = matvec(W[p + "mlp.gate_proj.weight"], h), matvec(W[p + "mlp.up_proj.weight"], h)
            h = matvec(W[p + "mlp.down_proj.weight"], [act(a, gemma) * b for a, b in zip(gate, up, strict=True)])
            if gemma:
                h = rms(h, W[p + "post_feedforward_layernorm.weight"], gemma, spec.eps)
            new.append([a + b for a, b in zip(x, h, strict=True)])
        xs = new
    head = W["model.embed_tokens.weight"] if spec.tied else W["lm_head.weight"]
    out = []
    for x in xs:
        z = matvec(head, rms(x, W["model.norm.weight"], gemma, spec.eps))
        if spec.final_softcap is not None:
            z = [math.tanh(v / spec.final_softcap) * spec.final_softcap for v in z]
        out.append(z)
    return np.array(out)
