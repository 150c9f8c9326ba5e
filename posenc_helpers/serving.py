"""Position when serving: the text lab's models with every knob a serving stack turns, in numpy.

The text lab's RoPE models (notebook 15; shipped as float16 and read by
:func:`posenc_helpers.streaming.load_params`) are written here once more,
with the places where serving code decides about position made explicit:

* the **layout** of the rotated pairs: ``"interleaved"`` (pair k is dims 2k
  and 2k + 1, Meta's and the lab's) or ``"half"`` (pair k is dims k and
  k + D/2, Hugging Face's ``rotate_half``), and :func:`to_half_split`, the
  permutation of the q and k projections that converts one into the other;
* the **sign** of the rotation (nanochat turns by −θ) and
  :func:`flip_rotation_sign`, the weights that make the two signs agree;
* the **positions** each token is rotated at and the **mask** of which keys it
  may read (left padding, packed sequences, windows), as arguments of
  :func:`forward`, which a cached generation loop is equivalent to when every
  key is rotated once, at the position its token was given;
* a token-by-token **cache** (:func:`stream`) that evicts, shifts (llama.cpp's
  context shift: the kept keys turned back by the shift) or recomputes, and
  that can take a new token's position from the wrong counter;
* what transformers 5.24.0's sliding-window caches keep
  (:func:`sliding_cache_sizes`), and the mask of a ring buffer filled by a
  prefill longer than its window (:func:`ring_prefill_mask`);
* the two conventions of partial rotary (:func:`partial_frequencies`), and
  the uniform quantizer of a key cache (:func:`quantize`).

With the defaults, :func:`forward` is the lab's ``model.forward`` for scheme
``"rope"`` (and ``"learned"``, a table of positions added to the embeddings);
``tests/test_serving.py`` holds it to :func:`posenc_helpers.streaming.forward`
and to the lab's JAX model, and every other helper to a literal
implementation (``tests/literal_serving.py``). Everything is float64.
Taught in notebooks/18-position-when-serving.ipynb.

>>> from posenc_helpers.streaming import random_params
>>> params = random_params(vocab=5, d_model=8, heads=2, layers=1, seed=0)
>>> tokens = np.array([[0, 1, 2, 3, 4, 0]])
>>> right = forward(params, tokens, heads=2)
>>> ported = forward(to_half_split(params, heads=2), tokens, heads=2, layout="half")
>>> bool(np.abs(right - ported).max() < 1e-12)            # the permutation makes the layouts agree exactly
True
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate as v
from .conventions import half_split_to_interleaved, interleaved_to_half_split
from .core import frequencies

__all__ = [
    "LAYOUTS", "SCHEMES", "POLICIES", "POSITION_RULES", "CONVENTIONS", "CACHE_KINDS",
    "to_half_split", "to_interleaved", "flip_rotation_sign", "rotate", "forward", "bits",
    "window_mask", "packed_segments", "packed_mask", "jumped_positions", "table_rows", "stream",
    "sliding_cache_sizes", "ring_prefill_mask", "partial_frequencies", "quantize", "attention_change",
    "key_accuracy", "LAB_MODELS_DIR", "lab_model_settings", "lab_model_file", "load_lab_model", "flatten_params",
    "unflatten_params",
]

#: Where the two coordinates of rotated pair k sit: dims (2k, 2k + 1), or dims (k, k + D/2).
LAYOUTS = ("interleaved", "half")
#: The lab's schemes :func:`forward` runs: RoPE on q and k, or a learned table added to the embeddings.
SCHEMES = ("rope", "learned")
#: What :func:`stream` does when its cache is full.
POLICIES = ("roll", "drop", "shift", "shift_unrotated", "recompute")
#: Where :func:`stream` takes a new token's position from.
POSITION_RULES = ("true", "kept")
#: The two conventions of partial rotary (:func:`partial_frequencies`).
CONVENTIONS = ("neox", "proportional")
#: transformers 5.24.0's two sliding-window cache layers (:func:`sliding_cache_sizes`).
CACHE_KINDS = ("dynamic", "static")


def _choice(name, value, allowed):
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {v._show(value)}")
    return value


# ---- layouts and signs: permutations of the q and k projections -----------------------------------------------


def _heads(params, heads) -> tuple[int, int]:
    heads = v.positive_int("heads", heads)
    try:
        d = int(np.shape(params["embed"])[1])
        blocks = params["blocks"]
    except (KeyError, TypeError, IndexError):
        raise ValueError("params must be the lab's nested dict (embed, blocks, ln_f, unembed)") from None
    if d % heads or (d // heads) % 2:
        raise ValueError(f"heads must split d_model = {d} into even head dimensions, got heads={heads}")
    if not blocks or any(np.shape(b["qkv"]) != (d, 3 * d) for b in blocks):
        raise ValueError(f"params' blocks must hold qkv of shape ({d}, {3 * d})")
    return heads, d // heads


def _with_qk_columns(params, heads, change):
    # a copy of params whose qkv columns of q and k pass through change(columns of one head) -> new columns
    heads, head_dim = _heads(params, heads)
    d = heads * head_dim
    out = dict(params)
    out["blocks"] = []
    for block in params["blocks"]:
        qkv = np.array(block["qkv"], dtype=np.float64)
        for part in (0, 1):  # q, then k; v keeps its columns
            for h in range(heads):
                start = part * d + h * head_dim
                qkv[:, start:start + head_dim] = change(qkv[:, start:start + head_dim])
        out["blocks"].append({**block, "qkv": qkv})
    return out


def to_half_split(params, *, heads) -> dict:
    """The weights of an interleaved-layout model, converted for half-split code (transformers' permutation).

    Every head's q and k columns of ``qkv`` are reordered by notebook 07's
    permutation P (:func:`~posenc_helpers.conventions.interleaved_to_half_split`:
    new dim j·D/2 + i is old dim 2i + j), which is what transformers'
    ``convert_llama_weights_to_hf.py`` does to the rows of every head of ``wq``
    and ``wk``: ``w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2)``.
    Values and everything else are untouched. The model then gives the same
    logits with ``layout="half"`` as the original with ``layout="interleaved"``
    (the module's example).
    """
    return _with_qk_columns(params, heads, interleaved_to_half_split)


def to_interleaved(params, *, heads) -> dict:
    """The inverse of :func:`to_half_split`: half-split weights converted for interleaved code (llama2.c's export)."""
    return _with_qk_columns(params, heads, half_split_to_interleaved)


def flip_rotation_sign(params, *, heads, layout="interleaved") -> dict:
    """Weights for code that turns by −θ that give the same logits as ``params`` under +θ.

    R(−θ) = F·R(θ)·F with F = diag(1, −1) on every pair, and F is its own
    inverse and orthogonal, so (R(−m)·F·q)·(R(−n)·F·k) = (R(m)·q)·(R(n)·k):
    negating the second coordinate of every pair in the q and k projections
    absorbs the sign exactly (in ``layout``'s pairing).

    >>> from posenc_helpers.streaming import random_params
    >>> p = random_params(vocab=5, d_model=8, heads=2, layers=1)
    >>> x = np.array([[1, 2, 3, 4]])
    >>> gap = forward(flip_rotation_sign(p, heads=2), x, heads=2, sign=-1) - forward(p, x, heads=2)
    >>> bool(np.abs(gap).max() < 1e-12)
    True
    """
    layout = _choice("layout", layout, LAYOUTS)
    head_dim = _heads(params, heads)[1]
    second = np.arange(1, head_dim, 2) if layout == "interleaved" else np.arange(head_dim // 2, head_dim)

    def flip(cols):
        cols = cols.copy()
        cols[:, second] *= -1
        return cols

    return _with_qk_columns(params, heads, flip)


# ---- the model ------------------------------------------------------------------------------------------------------


def rotate(x, positions, inv_freq, *, layout="interleaved", sign=1, factor=1.0) -> np.ndarray:
    """Turn every pair k of ``x`` (…, T, D) by sign·p·ω_k at positions ``p`` (…, T); cos and sin times ``factor``.

    ``layout`` says which dims form pair k (:data:`LAYOUTS`); D must be
    2·len(inv_freq) (the whole head turns, as in the lab).

    >>> rotate(np.array([[1.0, 0.0, 1.0, 0.0]]), [1.0], [np.pi / 2, 0.0]).round(6).tolist()
    [[0.0, 1.0, 1.0, 0.0]]
    >>> rotate(np.array([[1.0, 1.0, 0.0, 0.0]]), [1.0], [np.pi / 2, 0.0], layout="half").round(6).tolist()
    [[0.0, 1.0, 1.0, 0.0]]
    """
    layout = _choice("layout", layout, LAYOUTS)
    if sign not in (1, -1):
        raise ValueError(f"sign must be 1 or -1, got {v._show(sign)}")
    x = np.asarray(x, dtype=np.float64)
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    if x.shape[-1] != 2 * inv_freq.size:
        raise ValueError(f"x's last axis must be 2·len(inv_freq) = {2 * inv_freq.size}, got {x.shape[-1]}")
    # θ[…, t, k] = sign·p_t·ω_k
    theta = sign * np.asarray(positions, dtype=np.float64)[..., None] * inv_freq
    cos, sin = np.cos(theta) * factor, np.sin(theta) * factor
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty(np.broadcast_shapes(x.shape, cos.shape[:-1] + (x.shape[-1],)))
        # (a, b) → (a cos θ − b sin θ, a sin θ + b cos θ)
        out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
        return out
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def _layer_norm(x, p):
    # (x − mean) / √(var + ε) · gain + bias, ε = 1e-5, over the last axis
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * np.asarray(p["gain"], np.float64) + np.asarray(p["bias"], np.float64)


def _mlp(x, block):
    # W_out · gelu(W_in · x + b_in) + b_out, gelu in its tanh form (jax.nn.gelu's default)
    u = x @ np.asarray(block["mlp_in"], np.float64) + np.asarray(block["mlp_in_bias"], np.float64)
    gelu = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u**3)))
    return gelu @ np.asarray(block["mlp_out"], np.float64) + np.asarray(block["mlp_out_bias"], np.float64)


def _softmax(logits):
    top = np.max(logits, axis=-1, keepdims=True)
    w = np.exp(logits - np.where(np.isfinite(top), top, 0.0))
    return w / w.sum(-1, keepdims=True)


def _tokens(params, tokens):
    arr = np.asarray(tokens)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.ndim not in (1, 2) or arr.shape[-1] < 1:
        raise ValueError(f"tokens must be integer ids of shape (T,) or (batch, T), got {v._show(tokens)}")
    vocab = np.shape(params["embed"])[0]
    if arr.min() < 0 or arr.max() >= vocab:
        raise ValueError(f"tokens must lie in 0 … {vocab - 1} (the model's vocabulary), got {arr.min()} … {arr.max()}")
    return arr.reshape(-1, arr.shape[-1]).astype(np.int64)


def _positions_and_mask(positions, allowed, B, T):
    pos = np.broadcast_to(np.arange(T), (B, T)) if positions is None else np.asarray(positions)
    if pos.shape not in ((T,), (B, T)) or not np.issubdtype(pos.dtype, np.number) or pos.dtype == bool:
        raise ValueError(f"positions must be numbers of shape ({T},) or ({B}, {T}), got {v._show(positions)}")
    mask = np.tril(np.ones((T, T), dtype=bool)) if allowed is None else np.asarray(allowed)
    if mask.dtype != bool or mask.shape not in ((T, T), (B, T, T)):
        raise ValueError(f"allowed must be booleans of shape ({T}, {T}) or ({B}, {T}, {T}), got {v._show(allowed)}")
    if not np.broadcast_to(mask, (B, T, T)).any(-1).all():
        raise ValueError("allowed must let every query read at least one key (a row of False has no softmax)")
    return np.broadcast_to(pos, (B, T)), np.broadcast_to(mask, (B, T, T))


def _check_scheme(params, scheme, layout, sign, inv_freq, attention_factor):
    scheme = _choice("scheme", scheme, SCHEMES)
    if scheme == "learned":
        if "pos" not in params:
            raise ValueError("scheme 'learned' needs params['pos'], the table of positions; these params have none")
        for name, value, default in (("layout", layout, "interleaved"), ("sign", sign, 1), ("inv_freq", inv_freq, None),
                                     ("attention_factor", attention_factor, 1.0)):
            if not (value is default or (value is not None and default is not None and value == default)):
                raise ValueError(f"{name} is a setting of scheme 'rope' only, got {name}={v._show(value)} with 'learned'")
    return scheme


def forward(params, tokens, *, heads, base=10000.0, scheme="rope", layout="interleaved", sign=1, positions=None,
            allowed=None, inv_freq=None, attention_factor=1.0, return_qk=False):
    """Logits (batch, T, vocab) of the lab's model, with the knobs of serving code; (logits, taps) with ``return_qk``.

    * ``positions`` (T,) or (batch, T): the position each token is rotated at
      (default 0 … T − 1); for ``scheme="learned"``, the row of the table it
      reads (beyond the table's rows is a ValueError naming both);
    * ``allowed`` (T, T) or (batch, T, T) booleans: which keys query i may
      read (default: causal); a cached loop that rotates every key once, at
      the position its token was given, computes exactly this;
    * ``layout``, ``sign``: which dims pair up and which way they turn;
    * ``inv_freq``: the frequencies (default ``frequencies(head_dim, base)``),
      ``attention_factor``: the factor on cos and sin (YaRN's), so logits
      grow by its square.

    ``taps`` holds per layer the rotated queries and keys, both before
    rotation, and the values, (batch, heads, T, head_dim) each:
    ``{"q", "k", "q_raw", "k_raw", "v"}``.
    """
    scheme = _check_scheme(params, scheme, layout, sign, inv_freq, attention_factor)
    heads, head_dim = _heads(params, heads)
    tokens = _tokens(params, tokens)
    B, T = tokens.shape
    pos, mask = _positions_and_mask(positions, allowed, B, T)
    omega = frequencies(head_dim, base) if inv_freq is None else np.asarray(inv_freq, np.float64)
    # x: (batch, T, d_model)
    x = np.asarray(params["embed"], np.float64)[tokens]
    if scheme == "learned":
        table = np.asarray(params["pos"], np.float64)
        if not np.issubdtype(pos.dtype, np.integer) or pos.min() < 0 or pos.max() >= table.shape[0]:
            raise ValueError(f"the learned table has {table.shape[0]} rows (its training length), so positions must be "
                             f"integers in 0 … {table.shape[0] - 1}, got {pos.min()} … {pos.max()}")
        # x_t ← x_t + P[p_t]
        x = x + table[pos]
    taps = []
    for block in params["blocks"]:
        # q, k, val: (batch, heads, T, head_dim)
        qkv = _layer_norm(x, block["ln1"]) @ np.asarray(block["qkv"], np.float64)
        q, k, val = qkv.reshape(B, T, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
        raw_q, raw = q, k
        if scheme == "rope":
            where = pos[:, None, :]
            q = rotate(q, where, omega, layout=layout, sign=sign, factor=attention_factor)
            k = rotate(k, where, omega, layout=layout, sign=sign, factor=attention_factor)
        # logits[b, h, i, j] = q_i · k_j / √head_dim, where allowed
        logits = np.where(mask[:, None], q @ k.swapaxes(-1, -2) / math.sqrt(head_dim), -np.inf)
        out = (_softmax(logits) @ val).transpose(0, 2, 1, 3).reshape(B, T, heads * head_dim)
        x = x + out @ np.asarray(block["out"], np.float64)
        x = x + _mlp(_layer_norm(x, block["ln2"]), block)
        taps.append({"q": q, "k": k, "q_raw": raw_q, "k_raw": raw, "v": val})
    logits = _layer_norm(x, params["ln_f"]) @ np.asarray(params["unembed"], np.float64)
    return (logits, taps) if return_qk else logits


def bits(logits, targets) -> np.ndarray:
    """−log₂ p(target) for every position: (…,) from logits (…, vocab) and integer targets (…).

    >>> bits(np.zeros((1, 4)), np.array([2])).round(4).tolist()       # 4 equal logits: log₂ 4 = 2 bits
    [2.0]
    """
    logits = np.asarray(logits, np.float64)
    targets = np.asarray(targets)
    if logits.shape[:-1] != targets.shape or not np.issubdtype(targets.dtype, np.integer):
        raise ValueError(f"targets must be integers of shape {logits.shape[:-1]}, got {v._show(targets)}")
    top = logits.max(-1, keepdims=True)
    # (logsumexp − logit of the target) / ln 2
    lse = np.log(np.exp(logits - top).sum(-1)) + top[..., 0]
    return (lse - np.take_along_axis(logits, targets[..., None], -1)[..., 0]) / math.log(2)


# ---- masks and positions --------------------------------------------------------------------------------------------


def window_mask(length, window=None) -> np.ndarray:
    """(length, length) booleans: query i reads key j when j ≤ i and i − j < window (transformers' sliding overlay).

    ``window=None`` is the plain causal mask. Each query then reads
    min(i + 1, window) keys: itself and the window − 1 before it.

    >>> window_mask(4, 2).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    """
    length = v.positive_int("length", length)
    i, j = np.arange(length)[:, None], np.arange(length)[None, :]
    ok = j <= i
    if window is not None:
        # masking_utils.sliding_window_overlay: kv_idx > q_idx − sliding_window
        ok &= j > i - v.positive_int("window", window)
    return ok


def packed_segments(position_ids) -> np.ndarray:
    """Which packed sequence each token belongs to, read from its position ids as transformers 5.24.0 reads them.

    ``masking_utils.find_packed_sequence_indices``: a new sequence starts
    wherever a position is not the previous one plus 1,
    ``(diff(position_ids, prepend=first − 1) != 1).cumsum(-1)``. (transformers
    returns None when every row is one sequence; this returns the zeros.)

    >>> packed_segments([[0, 1, 0, 1, 2, 0]]).tolist()
    [[0, 0, 1, 1, 1, 2]]
    >>> packed_segments([[0, 1, 2, 3, 4, 5]]).tolist()       # positions that run on: one sequence
    [[0, 0, 0, 0, 0, 0]]
    """
    pos = np.asarray(position_ids)
    if pos.ndim != 2 or not np.issubdtype(pos.dtype, np.integer):
        raise ValueError(f"position_ids must be integers of shape (batch, T), got {v._show(position_ids)}")
    diff = np.diff(pos, prepend=pos[:, :1] - 1, axis=-1)
    return np.cumsum(diff != 1, axis=-1)


def packed_mask(segments) -> np.ndarray:
    """(batch, T, T) booleans: causal, and query and key in the same packed sequence (``packed_sequence_mask_function``).

    >>> packed_mask([[0, 0, 1]])[0].astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    seg = np.asarray(segments)
    if seg.ndim != 2 or not np.issubdtype(seg.dtype, np.integer):
        raise ValueError(f"segments must be integers of shape (batch, T), got {v._show(segments)}")
    T = seg.shape[1]
    return np.tril(np.ones((T, T), dtype=bool)) & (seg[:, :, None] == seg[:, None, :])


def jumped_positions(prompt, new, jump) -> np.ndarray:
    """Positions a generation loop gives a prompt of ``prompt`` tokens and ``new`` tokens after it, with a gap.

    0 … prompt − 1, then prompt + jump … prompt + jump + new − 1. ``jump=0``
    is right; a loop that counts the prompt twice (tiny-llm's offset, which
    went from 6 to 12 after a 6-token prefill) jumps by the prompt's length;
    one that takes the mask's positions for the prompt but a shared counter
    for the new tokens jumps, in a left-padded row, by the row's pads.

    >>> jumped_positions(3, 2, 3).tolist()
    [0, 1, 2, 6, 7]
    """
    prompt, new = v.positive_int("prompt", prompt), v.positive_int("new", new)
    if not v._is_int(jump) or jump < 0:
        raise ValueError(f"jump must be a non-negative integer, got {v._show(jump)}")
    return np.concatenate([np.arange(prompt), prompt + int(jump) + np.arange(new)])


def table_rows(table, start, count) -> np.ndarray:
    """Rows ``start`` … ``start + count − 1`` of a precomputed cos/sin table, or a ValueError if it is too short.

    Slicing past the end of an array gives fewer rows without a word (numpy
    and PyTorch alike), so code that slices ``table[T0:T0 + T]`` at the
    cache's position T0 must check T0 + T against the table first (nanochat
    PR #520's report).

    >>> table = np.zeros((8, 2))
    >>> table[6:6 + 4].shape                       # the silent slice: 2 rows, not 4
    (2, 2)
    >>> table_rows(table, 6, 4)
    Traceback (most recent call last):
    ...
    ValueError: the table has 8 rows, so rows 6 … 9 (start 6, count 4) do not exist; compute a longer table
    """
    table = np.asarray(table)
    if table.ndim < 1:
        raise ValueError(f"table must have at least one axis, got {v._show(table)}")
    if not v._is_int(start) or start < 0:
        raise ValueError(f"start must be a non-negative integer, got {v._show(start)}")
    count = v.positive_int("count", count)
    if start + count > table.shape[0]:
        raise ValueError(f"the table has {table.shape[0]} rows, so rows {start} … {start + count - 1} (start {start}, "
                         f"count {count}) do not exist; compute a longer table")
    return table[start:start + count]


# ---- a cache, token by token --------------------------------------------------------------------------------------


def _check_stream(params, tokens, heads, cache, keep, policy, positions):
    heads, head_dim = _heads(params, heads)
    tokens = _tokens(params, tokens)
    if tokens.shape[1] < 2:
        raise ValueError(f"tokens must hold at least 2 ids per stream (one prediction), got {tokens.shape[1]}")
    cache = v.positive_int("cache", cache)
    if not v._is_int(keep) or not 0 <= keep < cache - 1:
        raise ValueError(f"keep must be an integer in 0 … cache − 2 = {cache - 2} (room for the rest), got {v._show(keep)}")
    return (heads, head_dim, tokens, cache, int(keep), _choice("policy", policy, POLICIES),
            _choice("positions", positions, POSITION_RULES))


def _evict(state, cache, keep, policy, omega):
    # the cache is full: drop cells, and with a shift move the rest down (and turn their keys back)
    K, V, cell_pos, ids = state["K"], state["V"], state["pos"], state["ids"]
    # this module's rule, keep counting every cell kept: llama.cpp's 2023 main (n_keep + 1 cells kept,
    # n_discard = (n_past − n_keep − 1) / 2 at a full cache); see stream's docstring
    drop = 1 if policy == "roll" else (cache - keep) // 2
    kept = np.r_[0:keep, keep + drop:cache]
    state["ids"], state["pos"] = ids[:, kept], cell_pos[kept]
    state["K"], state["V"] = [k[:, :, kept] for k in K], [x[:, :, kept] for x in V]
    if policy in ("shift", "shift_unrotated", "recompute"):
        # positions of the cells after the kept ones, and the next position, move down by `drop`
        state["pos"] = np.where(np.arange(kept.size) >= keep, state["pos"] - drop, state["pos"])
        state["next"] -= drop
        if policy == "shift":
            # R(−drop)·R(p)·k = R(p − drop)·k: turn the moved keys back by the shift
            state["K"] = [np.concatenate([k[:, :, :keep], rotate(k[:, :, keep:], np.full(kept.size - keep, -drop),
                                                                 omega)], axis=2) for k in state["K"]]
    return drop


def _recompute(params, state, heads, omega):
    # llama.cpp before PR #3228: run the kept tokens again from scratch, at positions 0 … n − 1
    n = state["ids"].shape[1]
    _, taps = forward(params, state["ids"], heads=heads, inv_freq=omega, return_qk=True)
    state["K"], state["V"] = [t["k"] for t in taps], [t["v"] for t in taps]
    state["pos"], state["next"] = np.arange(n), n


def _step(params, state, token, position, heads, head_dim, omega):
    # one token through every layer: its q and k turned at `position`, its k and v appended, attention over the cells
    S = token.shape[0]
    x = np.asarray(params["embed"], np.float64)[token]
    for layer, block in enumerate(params["blocks"]):
        qkv = _layer_norm(x, block["ln1"]) @ np.asarray(block["qkv"], np.float64)
        q, k, val = qkv.reshape(S, 3, heads, head_dim).transpose(1, 0, 2, 3)
        q, k = rotate(q, position, omega), rotate(k, position, omega)
        state["K"][layer] = np.concatenate([state["K"][layer], k[:, :, None]], axis=2)
        state["V"][layer] = np.concatenate([state["V"][layer], val[:, :, None]], axis=2)
        # weights over the cached cells: (streams, heads, cells)
        w = _softmax(np.einsum("shd,shnd->shn", q, state["K"][layer]) / math.sqrt(head_dim))
        x = x + np.einsum("shn,shnd->shd", w, state["V"][layer]).reshape(S, heads * head_dim) @ np.asarray(
            block["out"], np.float64)
        x = x + _mlp(_layer_norm(x, block["ln2"]), block)
    return _layer_norm(x, params["ln_f"]) @ np.asarray(params["unembed"], np.float64)


def stream(params, tokens, *, heads, base=10000.0, cache=64, keep=0, policy="roll", positions="true") -> np.ndarray:
    """Bits of every prediction of streams read token by token through a cache of ``cache`` cells: (streams, T − 1).

    Each new token's key is turned at its position when it enters the cache
    and never again, unless a shift turns it. When the cache is full, before
    the next token enters:

    * ``"roll"``: the oldest cell after the first ``keep`` leaves; nothing
      moves (the rolling window of notebook 16);
    * ``"drop"``: n = (cache − keep) // 2 cells after the first ``keep``
      leave at once; nothing moves. This module's rule, with ``keep``
      counting every cell kept: it is llama.cpp's ``n_discard`` in the
      ``main`` example of 2023 (``n_left = n_past - n_keep - 1``, cells from
      ``n_keep + 1`` removed, shifting when the cache is full), while a later
      ``main`` (``n_left = n_past - n_keep``, shifting one token earlier)
      discards (cache − 1 − keep) // 2;
    * ``"shift"``: llama.cpp's context shift: the same n cells leave, every
      later cell's position moves down by n, and its key is turned back by n,
      R(−n)·R(p)·k = R(p − n)·k;
    * ``"shift_unrotated"``: the same renumbering without turning the keys;
    * ``"recompute"``: the same cells leave, and the kept tokens are run again
      from scratch at positions 0 … (their count − 1) (llama.cpp before its
      context shift: "we pick part of the tokens and recompute the KV cache").

    ``positions``: ``"true"``, a new token's position is the last one plus 1
    (after a shift, renumbered with the rest); ``"kept"``, the bug: the number
    of cells the cache holds when the token arrives. Until the cache first
    fills, every setting is the full forward.

    >>> from posenc_helpers.streaming import random_params
    >>> p = random_params(vocab=5, d_model=8, heads=2, layers=2)
    >>> x = np.arange(12)[None] % 5
    >>> full = bits(forward(p, x[:, :-1], heads=2), x[:, 1:])
    >>> bool(np.abs(stream(p, x, heads=2, cache=16) - full).max() < 1e-12)     # nothing evicted
    True
    """
    heads, head_dim, tokens, cache, keep, policy, rule = _check_stream(params, tokens, heads, cache, keep, policy,
                                                                       positions)
    S, T = tokens.shape
    omega = frequencies(head_dim, base)
    empty = [np.zeros((S, heads, 0, head_dim)) for _ in params["blocks"]]
    state = {"K": empty, "V": [e.copy() for e in empty], "pos": np.zeros(0, int), "ids": np.zeros((S, 0), int),
             "next": 0}
    out = np.empty((S, T - 1))
    for t in range(T - 1):
        if state["ids"].shape[1] == cache:
            _evict(state, cache, keep, policy, omega)
            if policy == "recompute":
                _recompute(params, state, heads, omega)
        position = state["next"] if rule == "true" else state["ids"].shape[1]
        logits = _step(params, state, tokens[:, t], position, heads, head_dim, omega)
        state["ids"] = np.concatenate([state["ids"], tokens[:, t:t + 1]], axis=1)
        state["pos"] = np.append(state["pos"], position)
        state["next"] = position + 1
        out[:, t] = bits(logits, tokens[:, t + 1])
    return out


# ---- sliding windows: what transformers' caches keep, and a ring buffer's prefill --------------------------------------


def sliding_cache_sizes(window, chunks, *, kind="dynamic", max_cache_len=None) -> list[tuple[int, int]]:
    """(tokens held after the update, keys handed to attention) for each chunk fed to one sliding layer's cache.

    Transcribed from transformers 5.24.0's ``cache_utils.py``:

    * ``"dynamic"`` (``DynamicSlidingWindowLayer.update``): the new keys are
      concatenated to the held ones and all of them go to attention; then
      ``full_key_states[:, :, -self.sliding_window + 1:, :]`` is kept, the
      last W − 1 (W = 1 slices ``[-0:]``, so it keeps everything);
    * ``"static"`` (``StaticSlidingWindowLayer``): a buffer of
      M = min(W, ``max_cache_len``) slots. Not yet full: the keys are written
      into it and the whole buffer goes to attention (the mask hides empty
      slots); an update that fills it or comes when it is full with more than
      one token hands over the held keys (all M, or the last M − 1 when full)
      and the new ones, then keeps the last M; one token when full rolls the
      buffer and hands over its M slots.

    >>> sliding_cache_sizes(4, [6, 1, 1])                    # a prefill of 6, then two tokens, W = 4
    [(3, 6), (3, 4), (3, 4)]
    >>> sliding_cache_sizes(4, [6, 1, 1], kind="static", max_cache_len=16)
    [(4, 6), (4, 4), (4, 4)]
    """
    window = v.positive_int("window", window)
    kind = _choice("kind", kind, CACHE_KINDS)
    chunks = [v.positive_int("chunks", c) for c in chunks]
    if kind == "dynamic":
        held, out = 0, []
        for n in chunks:
            full = held + n
            # keys[:, :, -W + 1:]: the last W − 1, or everything when W − 1 = 0 (a slice from -0)
            held = full if window == 1 else min(full, window - 1)
            out.append((held, full))
        return out
    if max_cache_len is None:
        raise ValueError("kind 'static' needs max_cache_len (the static cache's length in tokens), got None")
    size = min(window, v.positive_int("max_cache_len", max_cache_len))
    current, out = 0, []
    for n in chunks:
        if current >= size and n == 1:
            out.append((size, size))  # roll by one, the new key in the last slot, the whole buffer to attention
        elif current >= size:
            out.append((size, size - 1 + n))  # keys[:, :, 1:] and the new ones
        elif current + n > size:
            out.append((size, current + n))  # becoming full: the held keys and the new ones
        else:
            out.append((current + n, size))  # written in place; the whole static buffer goes to attention
        current += n
    return out


def ring_prefill_mask(length, window) -> np.ndarray:
    """The keys each query of a prefill of ``length`` tokens reads from a ring buffer of ``window`` slots.

    The scheme of litgpt #2182: every token of the prefill is written to slot
    t mod W before attention, so a slot ends up holding the last token that
    maps to it; the mask is the causal one of the positions, cut to the
    buffer's W columns, so query i reads slots 0 … min(i, W − 1), whatever
    tokens they hold. Returns (length, length) booleans over the tokens; for
    length > W some queries read keys of tokens after them.

    >>> ring_prefill_mask(5, 3).astype(int).tolist()      # slots hold tokens 3, 4, 2; query 0 reads token 3
    [[0, 0, 0, 1, 0], [0, 0, 0, 1, 1], [0, 0, 1, 1, 1], [0, 0, 1, 1, 1], [0, 0, 1, 1, 1]]
    """
    length, window = v.positive_int("length", length), v.positive_int("window", window)
    # slot s holds the last token t with t mod W = s
    holder = {t % window: t for t in range(length)}
    out = np.zeros((length, length), dtype=bool)
    for i in range(length):
        for s in range(min(i, window - 1) + 1):
            if s in holder:
                out[i, holder[s]] = True
    return out


# ---- partial rotary, quantization, retrieval ---------------------------------------------------------------------


def partial_frequencies(head_dim, fraction, *, base=10000.0, convention="neox") -> tuple[np.ndarray, int]:
    """``(inv_freq, rotary_dim)`` of partial rotary in one of :data:`CONVENTIONS`, for ``decoder.rope_rotate``.

    * ``"neox"`` (transformers' default rope with ``partial_rotary_factor``,
      GPT-NeoX, Qwen3.5): r = int(head_dim·fraction) dims turn, pairs (k, k + r/2)
      inside them, ω_k = base^(−2k/r);
    * ``"proportional"`` (``_compute_proportional_rope_parameters``, Gemma 4):
      the whole head is paired (k, k + head_dim/2), the first
      a = int(fraction·head_dim // 2) pairs turn with ω_k = base^(−2k/head_dim),
      the other head_dim/2 − a have ω = 0.

    >>> omega, r = partial_frequencies(8, 0.5, base=100.0)
    >>> omega.tolist(), r                                  # 100^(−0/4), 100^(−2/4)
    ([1.0, 0.1], 4)
    >>> omega, r = partial_frequencies(8, 0.5, base=100.0, convention="proportional")
    >>> omega.round(4).tolist(), r                         # 100^(−0/8), 100^(−2/8), then zeros
    ([1.0, 0.3162, 0.0, 0.0], 8)
    """
    head_dim = v.positive_int("head_dim", head_dim)
    fraction = v.real_scalar("fraction", fraction)
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    base = v.real_scalar("base", base)
    convention = _choice("convention", convention, CONVENTIONS)
    if convention == "neox":
        rotary = int(head_dim * fraction)
        if rotary < 2 or rotary % 2:
            raise ValueError(f"int(head_dim·fraction) must be an even number ≥ 2, got {rotary}")
        # ω_k = base^(−2k/r)
        return base ** (-np.arange(0, rotary, 2) / rotary), rotary
    if head_dim % 2:
        raise ValueError(f"head_dim must be even for 'proportional', got {head_dim}")
    angles = int(fraction * head_dim // 2)
    # ω_k = base^(−2k/head_dim) for k < a, then zeros
    turning = base ** (-np.arange(0, 2 * angles, 2) / head_dim)
    return np.concatenate([turning, np.zeros(head_dim // 2 - angles)]), head_dim


def quantize(x, n_bits, axis) -> np.ndarray:
    """x rounded to 2^n_bits levels spread evenly between its minimum and maximum along ``axis`` (then dequantized).

    Asymmetric uniform quantization, one scale and zero point per slice:
    s = (max − min)/(2^b − 1), x̂ = min + s·round((x − min)/s) (numpy rounds
    halves to even). ``axis=-2`` on keys (…, tokens, channels) gives one
    range per channel, as KIVI and KVQuant quantize keys.

    >>> quantize(np.array([0.0, 0.3, 1.0]), 1, axis=0).tolist()     # 2 levels: 0 and 1
    [0.0, 0.0, 1.0]
    """
    x = np.asarray(x, np.float64)
    levels = 2 ** v.positive_int("n_bits", n_bits) - 1
    lo, hi = x.min(axis=axis, keepdims=True), x.max(axis=axis, keepdims=True)
    scale = np.where(hi > lo, (hi - lo) / levels, 1.0)
    return lo + scale * np.round((x - lo) / scale)


def attention_change(q, k, k_hat, *, causal=True) -> float:
    """The mean total-variation distance between each query's attention over ``k`` and over ``k_hat``.

    q, k, k_hat: (…, T, d); weights softmax(q·kᵀ/√d) per row, causal by
    default; TV = ½·Σ_j |w_j − ŵ_j|, averaged over every query.

    >>> q = np.ones((2, 2)); k = np.array([[1.0, 0.0], [0.0, 0.0]])
    >>> attention_change(q, k, k)
    0.0
    """
    q, k, k_hat = (np.asarray(a, np.float64) for a in (q, k, k_hat))
    if k.shape != k_hat.shape or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"k and k_hat must have one shape and q the same last axis, got {q.shape}, {k.shape}, {k_hat.shape}")
    d, T = q.shape[-1], k.shape[-2]

    def weights(keys):
        logits = q @ keys.swapaxes(-1, -2) / math.sqrt(d)
        if causal:
            logits = np.where(np.tril(np.ones((q.shape[-2], T), bool)), logits, -np.inf)
        return _softmax(logits)

    return float(0.5 * np.abs(weights(k) - weights(k_hat)).sum(-1).mean())


def key_accuracy(logits, target, mask) -> float:
    """The share of sequences whose every scored answer is the most likely token (the whole passkey right).

    >>> logits = np.eye(3)[None].repeat(2, 0)             # predicts token t at position t
    >>> key_accuracy(logits, np.array([[0, 1, 2], [0, 1, 0]]), np.ones((2, 3), bool))
    0.5
    """
    logits, target, mask = np.asarray(logits), np.asarray(target), np.asarray(mask, bool)
    if logits.shape[:-1] != target.shape or target.shape != mask.shape:
        raise ValueError(f"target and mask must have the logits' shape {logits.shape[:-1]}, got {target.shape}, {mask.shape}")
    right = (logits.argmax(-1) == target) | ~mask
    return float(right.all(-1).mean())


# ---- the lab's models notebook 18 reads, shipped ----------------------------------------------------------------

#: Where the shipped lab models live in the package: ``<scheme>_<task>_seed_<seed>.npz`` (float16) and
#: ``settings.json`` (how each was trained, with its checksum, the code version and the machine), written by
#: ``make lab-serving`` (tools/serving_lab.py).
LAB_MODELS_DIR = "data/serving_lab"


def _lab_files():
    from importlib import resources

    return resources.files("posenc_helpers").joinpath(LAB_MODELS_DIR)


def lab_model_settings() -> dict:
    """The shipped lab models' ``settings.json``: per file its scheme, task, seed, Config, bytes and SHA-256; how
    they were trained (``command``, ``train``), the lab's code version, the library versions and the machine's
    fingerprint."""
    import json

    return json.loads(_lab_files().joinpath("settings.json").read_text())


def lab_model_file(scheme, task, seed) -> str:
    """The file name of a shipped lab model: ``"<scheme>_<task>_seed_<seed>.npz"``."""
    return f"{scheme}_{task}_seed_{seed}.npz"


def load_lab_model(scheme, task, seed) -> dict:
    """A shipped lab model's parameters as numpy float32 (stored float16), in the lab's nested layout; no JAX.

    Notebook 18 reads the RoPE models the lab trained on the passkey task (seeds 0, 1, 2) and the learned-table
    model of the previous-token task (seed 0) from here instead of training them (:func:`lab_model_settings` says
    how each was trained; ``make lab-serving`` writes them again). What is not shipped is refused by name.

    >>> p = load_lab_model("rope", "passkey", 0)
    >>> p["embed"].shape, len(p["blocks"]), p["blocks"][0]["qkv"].dtype
    ((16, 64), 2, dtype('float32'))
    >>> load_lab_model("rope", "passkey", 5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no shipped lab model ('rope', 'passkey', seed 5); shipped: ('learned', 'prev', 0), ('rope', ...
    """
    import io

    files = lab_model_settings()["files"]
    if not v._is_int(seed):
        raise ValueError(f"seed must be an integer, got {v._show(seed)}")
    name = lab_model_file(scheme, task, int(seed))
    if name not in files:
        shipped = ", ".join(str((f["scheme"], f["task"], f["seed"])) for _, f in sorted(files.items()))
        raise ValueError(f"no shipped lab model ({scheme!r}, {task!r}, seed {seed!r}); shipped: {shipped}")
    with _lab_files().joinpath(name).open("rb") as fh, np.load(io.BytesIO(fh.read())) as npz:
        return unflatten_params({k: np.asarray(a, np.float32) for k, a in npz.items()})


def _name_ok(key) -> bool:
    # a dict key flatten_params can write and unflatten_params read back: a non-empty str, no ".", not all digits
    return isinstance(key, str) and key != "" and "." not in key and not (key.isascii() and key.isdigit())


def flatten_params(params, prefix="") -> dict:
    """A nested dict/list of arrays as ``{"blocks.0.ln1.gain": array, ...}`` (list items by their index).

    Only a tree :func:`unflatten_params` gives back exactly is taken: dict keys are non-empty strings without a dot
    and not all digits, and no dict or list is empty; anything else is a ValueError naming the path.

    >>> sorted(flatten_params({"embed": 1, "blocks": [{"ln1": {"gain": 2}}]}))
    ['blocks.0.ln1.gain', 'embed']
    >>> flatten_params({"a.b": 1})
    Traceback (most recent call last):
    ...
    ValueError: params: key 'a.b' cannot be flattened (keys must be non-empty strings, without '.', not all digits)
    """
    where = prefix or "params"
    if isinstance(params, dict):
        bad = [k for k in params if not _name_ok(k)]
        if bad:
            raise ValueError(f"{where}: key {bad[0]!r} cannot be flattened (keys must be non-empty strings, without "
                             "'.', not all digits)")
        items = params.items()
    elif isinstance(params, (list, tuple)):
        items = enumerate(params)
    else:
        return {prefix: params}
    if not params:
        raise ValueError(f"{where}: an empty {type(params).__name__} cannot be flattened (it would vanish)")
    out = {}
    for key, value in items:
        out.update(flatten_params(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def unflatten_params(flat: dict):
    """The inverse of :func:`flatten_params`: a path segment 0, 1, 2 … is a list index (the lists must be whole).

    A path that is not what :func:`flatten_params` writes (an empty or leading-zero segment, a name all digits
    elsewhere, a path that is also the prefix of another) is a ValueError naming it.

    >>> unflatten_params({"blocks.0.ln1.gain": 2, "embed": 1})
    {'blocks': [{'ln1': {'gain': 2}}], 'embed': 1}
    >>> unflatten_params({"a": 1, "a.b": 2})
    Traceback (most recent call last):
    ...
    ValueError: path 'a.b' runs through 'a', which holds a value
    """
    import re

    tree: dict = {}
    for path, value in flat.items():
        if not isinstance(path, str):
            raise ValueError(f"paths must be strings, got {path!r}")
        parts = path.split(".")
        if any(p == "" or (re.fullmatch(r"[0-9]+", p) and p != str(int(p))) for p in parts) or any(
                p.isdigit() and not re.fullmatch(r"[0-9]+", p) for p in parts):
            raise ValueError(f"path {path!r} has an empty segment or a list index that is not 0, 1, 2 …")
        node = tree
        for i, part in enumerate(parts[:-1]):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"path {path!r} runs through {'.'.join(parts[:i + 1])!r}, which holds a value")
        if parts[-1] in node:
            raise ValueError(f"path {path!r} is also the prefix of another path")
        node[parts[-1]] = value

    def lists(node, where):
        if not isinstance(node, dict):
            return node
        digits = [k for k in node if re.fullmatch(r"[0-9]+", k)]
        if digits and len(digits) != len(node):
            raise ValueError(f"{where or 'the top level'} mixes list indices {sorted(digits)} with names")
        if digits:
            keys = sorted(int(k) for k in node)
            if keys != list(range(len(keys))):
                raise ValueError(f"{where or 'the top level'}: list entries {keys} are not 0 … {len(keys) - 1}")
            return [lists(node[str(k)], f"{where}.{k}" if where else str(k)) for k in keys]
        return {k: lists(node[k], f"{where}.{k}" if where else k) for k in sorted(node)}

    return lists(tree, "")
