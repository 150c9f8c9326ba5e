"""Literal implementations of posenc_helpers.serving, written from the formulas and the code they cite, for the tests.

Loops over pairs, tokens and slots, no vectorisation, so that they share no code with the module under test.
"""

from __future__ import annotations

import math

import numpy as np


def rotate(x, positions, inv_freq, layout="interleaved", sign=1, factor=1.0):
    """Pair k turned by sign·p·ω_k, element by element; x (T, D), positions (T,)."""
    x = np.asarray(x, float)
    out = np.zeros_like(x)
    D = x.shape[-1]
    for t in range(x.shape[0]):
        for k in range(D // 2):
            a_i, b_i = (2 * k, 2 * k + 1) if layout == "interleaved" else (k, k + D // 2)
            theta = sign * positions[t] * inv_freq[k]
            c, s = math.cos(theta) * factor, math.sin(theta) * factor
            a, b = x[t, a_i], x[t, b_i]
            out[t, a_i] = a * c - b * s
            out[t, b_i] = a * s + b * c
    return out


def hf_permute(w, n_heads):
    """transformers' convert_llama_weights_to_hf.permute on the rows of w (out, in), in numpy:
    ``w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)``."""
    dim1, dim2 = w.shape
    return w.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(0, 2, 1, 3).reshape(dim1, dim2)


def packed_segments(position_ids):
    """A new sequence wherever a position is not the previous one plus 1; row by row, token by token."""
    out = []
    for row in position_ids:
        seg, ids = 0, []
        for t, p in enumerate(row):
            if t > 0 and p != row[t - 1] + 1:
                seg += 1
            ids.append(seg)
        out.append(ids)
    return np.array(out)


def window_mask(T, window):
    return np.array([[j <= i and (window is None or i - j < window) for j in range(T)] for i in range(T)])


def ring_prefill_mask(T, W):
    """Write tokens 0 … T − 1 into W slots (slot t mod W), then let query i read slots 0 … min(i, W − 1)."""
    slots = [None] * W
    for t in range(T):
        slots[t % W] = t
    causal = [[j <= i for j in range(T)] for i in range(T)]  # the global causal mask over positions
    out = np.zeros((T, T), dtype=bool)
    for i in range(T):
        for s in range(W):  # cut to the buffer's W columns
            if s < T and causal[i][s] and slots[s] is not None:
                out[i, slots[s]] = True
    return out


def quantize(x, n_bits, axis):
    """Per slice along ``axis``: 2^n_bits levels evenly from min to max, each element to the nearest (ties to even)."""
    x = np.asarray(x, float)
    moved = np.moveaxis(x, axis, -1)
    out = np.empty_like(moved)
    for index in np.ndindex(moved.shape[:-1]):
        v = moved[index]
        lo, hi = min(v), max(v)
        step = (hi - lo) / (2**n_bits - 1) if hi > lo else 1.0
        out[index] = [lo + step * round((e - lo) / step) for e in v]
    return np.moveaxis(out, -1, axis)


def _layer_norm(x, g, b):
    m = sum(x) / len(x)
    var = sum((e - m) ** 2 for e in x) / len(x)
    return np.array([(e - m) / math.sqrt(var + 1e-5) * gi + bi for e, gi, bi in zip(x, g, b, strict=True)])


def stream_one_layer(params, tokens, heads, cache, keep, policy, positions="true", base=10000.0):
    """:func:`serving.stream` for a ONE-layer model, from scratch at every step.

    With one layer a cached key and value depend only on their token and the position the key was turned at, so the
    cache is a list of (token, position its key was turned at, position the cell now has), and each prediction is
    recomputed from that list. One stream (tokens (T,)); returns the bits of each prediction.
    """
    (block,) = params["blocks"]
    d = params["embed"].shape[1]
    Dh = d // heads
    omega = [base ** (-2 * k / Dh) for k in range(Dh // 2)]

    def qkv(token):
        h = _layer_norm(np.asarray(params["embed"][token], float), block["ln1"]["gain"], block["ln1"]["bias"])
        return (h @ np.asarray(block["qkv"], float)).reshape(3, heads, Dh)

    def turn(vec, p):
        return rotate(vec[None], [p], omega)[0]

    cells, nxt, out = [], 0, []  # cell: [token, position turned at, position now]
    for t in range(len(tokens) - 1):
        if len(cells) == cache:
            drop = 1 if policy == "roll" else (cache - keep) // 2
            cells = cells[:keep] + cells[keep + drop:]
            if policy in ("shift", "shift_unrotated", "recompute"):
                for cell in cells[keep:]:
                    cell[2] -= drop
                    if policy in ("shift", "recompute"):
                        cell[1] = cell[2]  # the key now turned at its new position (recompute: run again there)
                nxt -= drop
        position = nxt if positions == "true" else len(cells)
        cells.append([tokens[t], position, position])
        q, _, _ = qkv(tokens[t])
        x = np.asarray(params["embed"][tokens[t]], float).copy()
        attn = np.zeros(d)
        for h in range(heads):
            qh = turn(q[h], position)
            scores = [qh @ turn(qkv(tok)[1][h], at) / math.sqrt(Dh) for tok, at, _ in cells]
            top = max(scores)
            w = [math.exp(s - top) for s in scores]
            total = sum(w)
            attn[h * Dh:(h + 1) * Dh] = sum(wi / total * qkv(tok)[2][h] for wi, (tok, _, _) in zip(w, cells, strict=True))
        x = x + attn @ np.asarray(block["out"], float)
        h2 = _layer_norm(x, block["ln2"]["gain"], block["ln2"]["bias"])
        u = h2 @ np.asarray(block["mlp_in"], float) + np.asarray(block["mlp_in_bias"], float)
        gelu = np.array([0.5 * e * (1 + math.tanh(math.sqrt(2 / math.pi) * (e + 0.044715 * e**3))) for e in u])
        x = x + gelu @ np.asarray(block["mlp_out"], float) + np.asarray(block["mlp_out_bias"], float)
        logits = _layer_norm(x, params["ln_f"]["gain"], params["ln_f"]["bias"]) @ np.asarray(params["unembed"], float)
        top = max(logits)
        lse = top + math.log(sum(math.exp(z - top) for z in logits))
        out.append((lse - logits[tokens[t + 1]]) / math.log(2))
        nxt = position + 1
    return np.array(out)


def sliding_sizes(window, chunks, kind, max_cache_len=None):
    """transformers 5.24.0's sliding layers as lists of token indices: (held after, handed to attention) per chunk."""
    held, total, out = [], 0, []
    size = window if kind == "dynamic" else min(window, max_cache_len)
    for n in chunks:
        new = list(range(total, total + n))
        total += n
        if kind == "dynamic":
            full = held + new
            held = full if window == 1 else full[-(window - 1):]
            out.append((len(held), len(full)))
            continue
        if len(held) >= size:
            full = held[1:] + new  # roll by one (n = 1), or drop the oldest held key and append
            handed = size if n == 1 else len(full)
            held = full[-size:]
        elif len(held) + n > size:
            full = held + new
            handed = len(full)
            held = full[-size:]
        else:
            held = held + new
            handed = size  # the whole static buffer, empty slots masked
        out.append((len(held), handed))
    return out


def attention_change(q, k, k_hat):
    """Mean over queries of ½·Σ_j |w_j − ŵ_j|, causal softmax(q·k/√d), row by row."""
    T, d = q.shape
    total = 0.0
    def weights(keys, i):
        s = [float(q[i] @ keys[j]) / math.sqrt(d) for j in range(i + 1)]
        top = max(s)
        e = [math.exp(x - top) for x in s]
        return [x / sum(e) for x in e]

    for i in range(T):
        w, w_hat = weights(k, i), weights(k_hat, i)
        total += 0.5 * sum(abs(a - b) for a, b in zip(w, w_hat, strict=True))
    return total / T
