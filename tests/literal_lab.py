"""The lab's tiny transformer, written out literally: the one oracle its model tests compare with.

Everything is float64 numpy and plain Python, one token, head and (query, key)
pair at a time, straight from the formulas, with no code shared with
``posenc_helpers.lab.model``:

- the input: token embedding, plus row t of the learned table (``"learned"``)
  or the literal PE(t) (``"sinusoidal"``);
- attention on layer ``layer``: RoPE turns pair k of q_i and k_j by i·ω_k and
  j·ω_k (``"rope"`` on every layer, ``"rope_nope"`` and ``"irope"`` off their
  ``nope_layers``; ω defaults to base^(−2k/head_dim)); a NoPE layer of those
  two with the query temperature multiplies q_i by
  1 + attn_scale·ln(1 + ⌊(i + 1)/floor_scale⌋) (Llama 4); the score
  q·k/√head_dim is multiplied by ``logit_scale``; then ALiBi adds −m_h·(i − j)
  (Press et al.'s slopes) or T5 adds table[t5_bucket(j − i), h]; a causal
  softmax over j ≤ i, which on an ``"irope"`` RoPE layer also skips every key
  outside query i's chunk (a different quotient of integer division by the
  window W) or, with ``rope_mask="sliding"``, any key W or more back;
- the pre-norm residual block (layer norm, attention, GELU MLP) and the
  unembedding.

``omega`` (test-time RoPE frequencies) reaches ``"rope"`` only, as in the lab.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from literal import literal_alibi_slopes, literal_pe

from posenc_helpers.relative import t5_bucket


def _np(tree):
    return jax.tree_util.tree_map(lambda a: np.asarray(a, dtype=np.float64), tree)


def _layer_norm(x, p):
    mean = sum(x) / len(x)
    var = sum((a - mean) ** 2 for a in x) / len(x)
    return np.array([(a - mean) / math.sqrt(var + 1e-5) for a in x]) * p["gain"] + p["bias"]


def _gelu(x):
    # jax.nn.gelu's default, the tanh approximation
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _turn(x, t, omega):
    out = [float(a) for a in x]
    for k, w in enumerate(omega):
        a, b, th = x[2 * k], x[2 * k + 1], t * float(w)
        out[2 * k], out[2 * k + 1] = a * math.cos(th) - b * math.sin(th), a * math.sin(th) + b * math.cos(th)
    return out


def _rotates(config, layer):
    return config.scheme == "rope" or (config.scheme in ("rope_nope", "irope") and layer not in config.nope_layers)


def _reads(config, layer, i, j):
    # may query i read key j on this layer (j <= i is given)?
    if config.scheme != "irope" or not _rotates(config, layer) or config.rope_mask == "full":
        return True
    W = config.rope_window
    if config.rope_mask == "chunked":
        return i // W == j // W
    return i - j < W


def literal_weights(x, wqkv, config, layer=0, *, table=None, omega=None, logit_scale=1.0):
    """Attention weights (heads, T, T) of one layer with input ``x`` (T, d_model), one score at a time.

    ``table`` is the ``"t5"`` bias table (buckets, heads).
    """
    T, d = x.shape
    H = config.heads
    Dh = d // H
    qkv = [list(x[i] @ wqkv) for i in range(T)]
    if config.scheme != "rope" or omega is None:
        omega = [1.0 / config.base ** (2 * k / Dh) for k in range(Dh // 2)]
    slopes = literal_alibi_slopes(H)
    weights = np.zeros((H, T, T))
    for h in range(H):
        for i in range(T):
            q = qkv[i][h * Dh:(h + 1) * Dh]
            if _rotates(config, layer):
                q = _turn(q, i, omega)
            elif config.scheme in ("rope_nope", "irope") and config.query_temperature:
                factor = 1.0 + config.attn_scale * math.log(1.0 + math.floor((i + 1) / config.floor_scale))
                q = [a * factor for a in q]
            scores, keys = [], [j for j in range(i + 1) if _reads(config, layer, i, j)]
            for j in keys:
                k = qkv[j][d + h * Dh:d + (h + 1) * Dh]
                if _rotates(config, layer):
                    k = _turn(k, j, omega)
                s = logit_scale * sum(a * b for a, b in zip(q, k, strict=True)) / math.sqrt(Dh)
                if config.scheme == "alibi":
                    s -= slopes[h] * (i - j)
                if config.scheme == "t5":
                    bucket = int(t5_bucket(j - i, bidirectional=False, num_buckets=config.t5_buckets,
                                           max_distance=config.t5_max_distance))
                    s += float(table[bucket][h])
                scores.append(s)
            top = max(scores)
            e = [math.exp(s - top) for s in scores]
            for n, j in enumerate(keys):
                weights[h, i, j] = e[n] / sum(e)
    return weights


def literal_forward(params, tokens, config, *, omega=None, logit_scale=1.0):
    """Logits (T, vocab) and attention weights (layers, heads, T, T) of the whole model."""
    p = _np(params)
    d, H = config.d_model, config.heads
    Dh = d // H
    T = len(tokens)
    x = [p["embed"][t].copy() for t in tokens]
    if config.scheme == "learned":
        x = [x[t] + p["pos"][t] for t in range(T)]
    if config.scheme == "sinusoidal":
        x = [x[t] + np.array(literal_pe(t, d, config.base)) for t in range(T)]
    maps = []
    for layer, blk in enumerate(p["blocks"]):
        h = np.array([_layer_norm(x[i], blk["ln1"]) for i in range(T)])
        w = literal_weights(h, blk["qkv"], config, layer, table=p.get("t5_bias"), omega=omega,
                            logit_scale=logit_scale)
        values = [(h[j] @ blk["qkv"])[2 * d:] for j in range(T)]
        att = [np.zeros(d) for _ in range(T)]
        for hd in range(H):
            for i in range(T):
                for j in range(i + 1):
                    att[i][hd * Dh:(hd + 1) * Dh] += w[hd, i, j] * values[j][hd * Dh:(hd + 1) * Dh]
        x = [x[i] + att[i] @ blk["out"] for i in range(T)]
        x = [x[i] + _gelu(_layer_norm(x[i], blk["ln2"]) @ blk["mlp_in"] + blk["mlp_in_bias"]) @ blk["mlp_out"]
             + blk["mlp_out_bias"] for i in range(T)]
        maps.append(w)
    return np.array([_layer_norm(x[i], p["ln_f"]) @ p["unembed"] for i in range(T)]), np.stack(maps)
