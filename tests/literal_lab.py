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

The schemes built for length generalisation read ``positions``, one list of
integers for the sequence (the draw the lab makes, passed in): the input adds
row p_t of the table (``"rand_learned"``) or PE(p_t) (``"rand_sinusoidal"``);
``"rand_rope"`` turns q_i and k_j by p_i·ω_k and p_j·ω_k; ``"rand_alibi"``
adds −m_h·p_(i−j), the distance drawn for offset i − j; ``"fire"`` adds
f(u)_h with u = ln(1 + |c·(i − j)|) / (ln(1 + |c·max(τ, i)|) + 10⁻⁶),
τ = |m·τ_0| and f a one-hidden-layer ReLU network, one unit at a time, from
the layer's own ``fire`` parameters.
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
    return config.scheme in ("rope", "rand_rope") or (config.scheme in ("rope_nope", "irope") and layer not in config.nope_layers)


def _reads(config, layer, i, j):
    # may query i read key j on this layer (j <= i is given)?
    if config.scheme != "irope" or not _rotates(config, layer) or config.rope_mask == "full":
        return True
    W = config.rope_window
    if config.rope_mask == "chunked":
        return i // W == j // W
    return i - j < W


def _literal_fire(fire, config, i, j, h):
    c, tau = float(fire["c"]), abs(float(fire["m"]) * config.fire_threshold)
    u = math.log(1 + abs(c * (i - j))) / (math.log(1 + abs(c * max(tau, i))) + 1e-6)
    width = len(fire["b1"])
    hidden = [max(0.0, u * float(fire["w1"][0][n]) + float(fire["b1"][n])) for n in range(width)]
    return sum(hidden[n] * float(fire["w2"][n][h]) for n in range(width)) + float(fire["b2"][h])


def literal_weights(x, wqkv, config, layer=0, *, table=None, omega=None, logit_scale=1.0, positions=None, fire=None):
    """Attention weights (heads, T, T) of one layer with input ``x`` (T, d_model), one score at a time.

    ``table`` is the ``"t5"`` bias table (buckets, heads); ``positions`` the
    randomized schemes' draw; ``fire`` the layer's FIRE parameters.
    """
    where = list(range(len(x))) if config.scheme != "rand_rope" else [int(p) for p in positions]
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
                q = _turn(q, where[i], omega)
            elif config.scheme in ("rope_nope", "irope") and config.query_temperature:
                factor = 1.0 + config.attn_scale * math.log(1.0 + math.floor((i + 1) / config.floor_scale))
                q = [a * factor for a in q]
            scores, keys = [], [j for j in range(i + 1) if _reads(config, layer, i, j)]
            for j in keys:
                k = qkv[j][d + h * Dh:d + (h + 1) * Dh]
                if _rotates(config, layer):
                    k = _turn(k, where[j], omega)
                s = logit_scale * sum(a * b for a, b in zip(q, k, strict=True)) / math.sqrt(Dh)
                if config.scheme == "alibi":
                    s -= slopes[h] * (i - j)
                if config.scheme == "rand_alibi":
                    s -= slopes[h] * int(positions[i - j])
                if config.scheme == "fire":
                    s += _literal_fire(fire, config, i, j, h)
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


def literal_forward(params, tokens, config, *, omega=None, logit_scale=1.0, positions=None):
    """Logits (T, vocab) and attention weights (layers, heads, T, T) of the whole model.

    ``positions``: the randomized schemes' draw for this one sequence (a list of T integers).
    """
    p = _np(params)
    d, H = config.d_model, config.heads
    Dh = d // H
    T = len(tokens)
    x = [p["embed"][t].copy() for t in tokens]
    if config.scheme == "learned":
        x = [x[t] + p["pos"][t] for t in range(T)]
    if config.scheme == "sinusoidal":
        x = [x[t] + np.array(literal_pe(t, d, config.base)) for t in range(T)]
    if config.scheme == "rand_learned":
        x = [x[t] + p["pos"][int(positions[t])] for t in range(T)]
    if config.scheme == "rand_sinusoidal":
        x = [x[t] + np.array(literal_pe(int(positions[t]), d, config.base)) for t in range(T)]
    maps = []
    for layer, blk in enumerate(p["blocks"]):
        h = np.array([_layer_norm(x[i], blk["ln1"]) for i in range(T)])
        w = literal_weights(h, blk["qkv"], config, layer, table=p.get("t5_bias"), omega=omega,
                            logit_scale=logit_scale, positions=positions, fire=blk.get("fire"))
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
