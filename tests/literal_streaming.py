"""The text lab's RoPE model read through a streaming cache, written out literally: the oracle of test_streaming.py.

Plain Python floats and loops, one token, layer, head and key at a time, with no code shared with
``posenc_helpers.streaming``:

- the model as ``posenc_helpers/lab/model.py`` computes it for scheme "rope": token embedding, then per layer
  x ← x + W_out·attn(LN(x)) and x ← x + MLP(LN(x)) (LN with ε = 1e-5, GELU in its tanh form, jax.nn.gelu's
  default), then LN and the unembedding; q and k of head h are dims h·D … (h + 1)·D − 1 of the q and k thirds
  of W_qkv·x, pair j = (2j, 2j + 1) turned by pos·base^(−2j/D);
- the cache as StreamingLLM describes it (Xiao et al. 2024, §3.2): a list of entries in arrival order, each
  holding its token's text position and its *unturned* key and value per layer; when it grows past L, the
  entry just after the ``sinks`` kept first ones is dropped. Every key is turned when it is read, at its
  text position (``positions="text"``) or at its index in the list (``"cache"``), and the query at its own
  text position or at the last index.
"""

from __future__ import annotations

import math


def _lists(params):
    tolist = lambda a: a.tolist() if hasattr(a, "tolist") else a  # noqa: E731
    blocks = []
    for b in params["blocks"]:
        blocks.append({k: ({n: tolist(x) for n, x in val.items()} if isinstance(val, dict) else tolist(val))
                       for k, val in b.items()})
    return {"embed": tolist(params["embed"]), "unembed": tolist(params["unembed"]),
            "ln_f": {n: tolist(x) for n, x in params["ln_f"].items()}, "blocks": blocks}


def layer_norm(x, p):
    mean = sum(x) / len(x)
    var = sum((a - mean) ** 2 for a in x) / len(x)
    return [(a - mean) / math.sqrt(var + 1e-5) * g + b for a, g, b in zip(x, p["gain"], p["bias"], strict=True)]


def vec_mat(x, W):
    # x · W for W stored as rows of the input dimension
    return [sum(x[i] * W[i][j] for i in range(len(x))) for j in range(len(W[0]))]


def gelu(u):
    return 0.5 * u * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u * u * u)))


def turn(vec, pos, base):
    D = len(vec)
    out = list(vec)
    for j in range(D // 2):
        angle = pos * base ** (-2.0 * j / D)
        a, b = vec[2 * j], vec[2 * j + 1]
        out[2 * j] = a * math.cos(angle) - b * math.sin(angle)
        out[2 * j + 1] = a * math.sin(angle) + b * math.cos(angle)
    return out


def mlp(x, b):
    u = [a + c for a, c in zip(vec_mat(x, b["mlp_in"]), b["mlp_in_bias"], strict=True)]
    return [a + c for a, c in zip(vec_mat([gelu(a) for a in u], b["mlp_out"]), b["mlp_out_bias"], strict=True)]


def qkv(x, b, heads):
    d = len(x)
    D = d // heads
    y = vec_mat(layer_norm(x, b["ln1"]), b["qkv"])
    return ([y[h * D:(h + 1) * D] for h in range(heads)], [y[d + h * D:d + (h + 1) * D] for h in range(heads)],
            [y[2 * d + h * D:2 * d + (h + 1) * D] for h in range(heads)])


def attend(q, keys, values, q_pos, k_pos, base):
    """One head: softmax over the keys of q·k/√D, each turned at its position; returns (output, weights)."""
    D = len(q)
    qt = turn(q, q_pos, base)
    scores = [sum(a * b for a, b in zip(qt, turn(k, p, base), strict=True)) / math.sqrt(D)
              for k, p in zip(keys, k_pos, strict=True)]
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    w = [a / sum(e) for a in e]
    return [sum(w[j] * values[j][i] for j in range(len(values))) for i in range(D)], w


def bits_of(logits, target):
    top = max(logits)
    return (math.log(sum(math.exp(a - top) for a in logits)) + top - logits[target]) / math.log(2)


def full(params, tokens, heads, base=10000.0):
    """Logits and attention of one sequence at positions 0 … T − 1: (T lists of vocab), weights[layer][h][i][j]."""
    P = _lists(params)
    xs = [list(P["embed"][t]) for t in tokens]
    maps = []
    for b in P["blocks"]:
        parts = [qkv(x, b, heads) for x in xs]
        layer = [[None] * len(xs) for _ in range(heads)]
        new = []
        for i, x in enumerate(xs):
            out = []
            for h in range(heads):
                o, w = attend(parts[i][0][h], [parts[j][1][h] for j in range(i + 1)],
                              [parts[j][2][h] for j in range(i + 1)], i, list(range(i + 1)), base)
                out += o
                layer[h][i] = w
            x = [a + c for a, c in zip(x, vec_mat(out, b["out"]), strict=True)]
            new.append([a + c for a, c in zip(x, mlp(layer_norm(x, b["ln2"]), b), strict=True)])
        xs = new
        maps.append(layer)
    return [vec_mat(layer_norm(x, P["ln_f"]), P["unembed"]) for x in xs], maps


def stream(params, tokens, heads, cache, sinks, positions, base=10000.0):
    """Bits of each prediction (query t predicts t + 1) and, per query, the weight on the sinks [layer][h]."""
    P = _lists(params)
    entries = []  # each: {"pos": t, "k": [layer][h], "v": [layer][h]}
    bits, sink_weights = [], []
    for t in range(len(tokens) - 1):
        entries.append({"pos": t, "k": [], "v": []})
        if len(entries) > cache:
            del entries[sinks]  # StreamingLLM's eviction: keep the first `sinks`, drop the oldest of the rest
        x = list(P["embed"][tokens[t]])
        on_sinks = []
        for li, b in enumerate(P["blocks"]):
            q, k, val = qkv(x, b, heads)
            entries[-1]["k"].append(k)
            entries[-1]["v"].append(val)
            if positions == "text":
                k_pos, q_pos = [e["pos"] for e in entries], t
            else:
                k_pos, q_pos = list(range(len(entries))), len(entries) - 1
            out, weights = [], []
            for h in range(heads):
                o, w = attend(q[h], [e["k"][li][h] for e in entries], [e["v"][li][h] for e in entries], q_pos, k_pos,
                              base)
                out += o
                weights.append(sum(w[:sinks]) if t >= cache else None)
            on_sinks.append(weights)
            x = [a + c for a, c in zip(x, vec_mat(out, b["out"]), strict=True)]
            x = [a + c for a, c in zip(x, mlp(layer_norm(x, b["ln2"]), b), strict=True)]
        bits.append(bits_of(vec_mat(layer_norm(x, P["ln_f"]), P["unembed"]), tokens[t + 1]))
        sink_weights.append(on_sinks)
    return bits, sink_weights


def recompute(params, tokens, heads, cache, base=10000.0):
    """Bits of each prediction when the window of the last ``cache`` tokens is run from scratch at 0, 1, …"""
    out = []
    for t in range(len(tokens) - 1):
        window = tokens[max(0, t - cache + 1):t + 1]
        logits, _ = full(params, window, heads, base)
        out.append(bits_of(logits[-1], tokens[t + 1]))
    return out
