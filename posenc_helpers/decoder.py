"""A modern decoder from scratch in numpy, with a KV cache: Qwen3's and Gemma 3's blocks as transformers 5 computes them.

Each layer: RMSNorm, grouped-query attention (GQA) with q and k normalised
per head before RoPE, RoPE (over ``rotary_dim`` of the head, as the config
says), a causal mask that a sliding layer limits to its window, an optional
learned sink logit per head (gpt-oss's), then a gated MLP. What each layer
does with position is read from the config by :func:`.configs.layer_positions`
(window, frequencies, rotated dims, softmax scale), so the block and the
course's reader cannot disagree.

Two ways to compute the same logits:

* :func:`forward`: the whole sequence at once, every query against every
  key the mask allows;
* :func:`decode`: a prefill, then one token at a time through a
  :class:`KVCache`, as generation runs. The cache keeps keys *after* RoPE
  (rotated at their own positions, as transformers' ``cache.update`` after
  ``apply_rotary_pos_emb``), and a sliding layer keeps only its last
  ``window - 1`` keys (transformers 5's ``DynamicSlidingWindowLayer``).

They agree to rounding; ``bug=`` switches on one of the classic mistakes of
:data:`BUGS`, to measure what it costs.

Transcribed from transformers 5.24.0: ``models/qwen3/modeling_qwen3.py``
(Qwen3RMSNorm, Qwen3Attention, Qwen3DecoderLayer, Qwen3MLP) and
``models/gemma3/modeling_gemma3.py`` (Gemma3RMSNorm with its weight as
1 + w, Gemma3TextScaledWordEmbedding's √hidden, the four norms of
Gemma3DecoderLayer, ``query_pre_attn_scalar``, the final soft cap);
``cache_utils.py`` (DynamicSlidingWindowLayer); ``masking_utils.py``
(``sliding_window_overlay``: a query at index i reads keys j with
i − W < j ≤ i, counted in the padded sequence). The optional sink (one more
logit per head in the softmax, its weight then dropped) follows
``eager_attention_forward`` of ``models/gpt_oss/modeling_gpt_oss.py`` (the sink
logit is concatenated to each row's scaled, masked scores, the row softmaxed,
the sink's column dropped), read there, not run. ``tests/test_decoder.py`` holds it to a
literal loop implementation (tests/literal_decoder.py) and cached decoding to
the full pass; ``tests/test_decoder_hf.py`` holds :func:`forward` and
:func:`decode` to the logits of tiny random-weight Qwen3 and Gemma 3 models
run in transformers 5.24.0 itself (full pass and cached decoding, a
left-padded row, windows shorter than the sequence), stored in ``tests/data/``
by ``make hf-reference`` (``tools/hf_reference.py``).

>>> spec = tiny_spec("qwen3")
>>> weights = random_weights(spec, seed=0)
>>> ids = np.array([[3, 1, 4, 1, 5, 9, 2, 6, 5, 3]])
>>> full = forward(spec, weights, ids)
>>> step = decode(spec, weights, ids, prefill=4)
>>> full.shape, bool(np.abs(full - step).max() < 1e-9)
((1, 10, 32), True)
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._validate import _show

__all__ = [
    "FAMILIES", "BUGS", "Spec", "spec_from_config", "tiny_config", "tiny_spec", "random_weights", "weight_shapes",
    "forward", "decode", "KVCache", "position_ids_from_mask", "rope_rotate",
]

#: The families the block computes as transformers 5 does.
FAMILIES = ("qwen3", "gemma3_text")

#: The classic mistakes :func:`decode` can make on purpose:
#: ``"rotate_at_read"``: keys cached unrotated, then every cached key rotated at read time with the new
#: query's position (so q·k loses the distance);
#: ``"positions_from_cache"``: the new token's position taken from how many keys the cache holds, which a
#: rolling cache stops counting at its window (StreamingLLM's positions, used with keys rotated at their text
#: positions);
#: ``"ignore_padding"``: position ids 0, 1, 2, … for every row of a left-padded batch, pads included.
BUGS = ("rotate_at_read", "positions_from_cache", "ignore_padding")


@dataclasses.dataclass(frozen=True)
class Spec:
    """What the block reads from a config: sizes, and per layer its window, frequencies and rotated dims."""

    family: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    eps: float
    windows: tuple  # per layer: the sliding window W in tokens, or None (full attention)
    inv_freq: tuple  # per layer: the rotated pairs' frequencies (numpy arrays)
    rotary_dim: tuple  # per layer
    softmax_scale: tuple  # per layer
    attention_factor: tuple  # per layer: the factor on cos and sin
    final_softcap: float | None = None
    tied: bool = False
    sinks: bool = False  # a learned sink logit per head (gpt-oss); not in Qwen3 or Gemma 3

    @property
    def layers(self) -> int:
        return len(self.windows)


def _need(config, key):
    if key not in config or config[key] is None:
        raise ValueError(f"config needs {key!r} for the decoder block, got none (model_type {config.get('model_type')!r})")
    return config[key]


def spec_from_config(config, *, sinks=False) -> Spec:
    """A :class:`Spec` from a transformers-style config dict of a family in :data:`FAMILIES`.

    Position comes from :func:`.configs.layer_positions`; sizes from the config's
    own keys (``hidden_size``, ``num_attention_heads``, ``num_key_value_heads``,
    ``head_dim``, ``intermediate_size``, ``vocab_size``, ``rms_norm_eps``).
    ``sinks=True`` adds gpt-oss's learned sink logit per head.
    """
    from .configs import layer_positions

    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict, got {_show(config)}")
    family = config.get("model_type")
    if family not in FAMILIES:
        raise ValueError(f"config model_type must be one of {FAMILIES}, got {family!r}")
    layers = layer_positions(config)
    if any(not lp.rope for lp in layers):
        raise ValueError("the block expects RoPE on every layer; this config has a layer without it")
    heads, kv = int(_need(config, "num_attention_heads")), int(_need(config, "num_key_value_heads"))
    if heads % kv:
        raise ValueError(f"num_attention_heads={heads} must be a multiple of num_key_value_heads={kv}")
    gemma = family == "gemma3_text"
    return Spec(
        family=family, hidden=int(_need(config, "hidden_size")), heads=heads, kv_heads=kv,
        head_dim=int(_need(config, "head_dim")), intermediate=int(_need(config, "intermediate_size")),
        vocab=int(_need(config, "vocab_size")), eps=float(config.get("rms_norm_eps", 1e-6)),
        windows=tuple(lp.window for lp in layers), inv_freq=tuple(np.asarray(lp.inv_freq, float) for lp in layers),
        rotary_dim=tuple(lp.rotary_dim for lp in layers), softmax_scale=tuple(lp.softmax_scale for lp in layers),
        attention_factor=tuple(lp.attention_factor for lp in layers),
        final_softcap=config.get("final_logit_softcapping") if gemma else None,
        tied=bool(config.get("tie_word_embeddings", gemma)), sinks=bool(sinks),
    )


def tiny_config(family, *, window=6, layers=3) -> dict:
    """A small config of ``family`` with sliding and full layers: what the tests and the notebook build.

    Qwen3: layer 0 full, the rest sliding (``max_window_layers=1``); Gemma 3:
    every third layer full, as its pattern of 5 sliding : 1 full shrunk to 2 : 1.
    """
    common = dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8, intermediate_size=48,
                  vocab_size=32, num_hidden_layers=layers, rms_norm_eps=1e-6, max_position_embeddings=512,
                  sliding_window=window, rope_scaling=None)
    if family == "qwen3":
        return dict(model_type="qwen3", rope_theta=10000.0, use_sliding_window=True, max_window_layers=1,
                    tie_word_embeddings=False, **common)
    if family == "gemma3_text":
        types = ["full_attention" if (i + 1) % 3 == 0 else "sliding_attention" for i in range(layers)]
        return dict(model_type="gemma3_text", rope_theta=1_000_000.0, rope_local_base_freq=10000.0, layer_types=types,
                    query_pre_attn_scalar=8, final_logit_softcapping=30.0, tie_word_embeddings=True, **common)
    raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")


def tiny_spec(family, **kw) -> Spec:
    """:func:`spec_from_config` of :func:`tiny_config`."""
    sinks = kw.pop("sinks", False)
    return spec_from_config(tiny_config(family, **kw), sinks=sinks)


def weight_shapes(spec) -> dict[str, tuple]:
    """Every weight's name and shape, named as transformers' state dict names them (Linear weights as (out, in))."""
    H, d, q, kv, ff = spec.hidden, spec.head_dim, spec.heads * spec.head_dim, spec.kv_heads * spec.head_dim, spec.intermediate
    out = {"model.embed_tokens.weight": (spec.vocab, H), "model.norm.weight": (H,)}
    norms = ["input_layernorm", "post_attention_layernorm"]
    if spec.family == "gemma3_text":
        norms += ["pre_feedforward_layernorm", "post_feedforward_layernorm"]
    for i in range(spec.layers):
        p = f"model.layers.{i}."
        out.update({p + n + ".weight": (H,) for n in norms})
        out.update({p + "self_attn.q_proj.weight": (q, H), p + "self_attn.k_proj.weight": (kv, H),
                    p + "self_attn.v_proj.weight": (kv, H), p + "self_attn.o_proj.weight": (H, q),
                    p + "self_attn.q_norm.weight": (d,), p + "self_attn.k_norm.weight": (d,),
                    p + "mlp.gate_proj.weight": (ff, H), p + "mlp.up_proj.weight": (ff, H),
                    p + "mlp.down_proj.weight": (H, ff)})
        if spec.sinks:
            out[p + "self_attn.sinks"] = (spec.heads,)
    if not spec.tied:
        out["lm_head.weight"] = (spec.vocab, H)
    return out


def random_weights(spec, *, seed=0, scale=0.3) -> dict[str, np.ndarray]:
    """Random weights of every shape of :func:`weight_shapes` (norm weights near their identity), float64."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in weight_shapes(spec).items():
        if name.endswith("norm.weight") or "layernorm" in name:
            base = 0.0 if spec.family == "gemma3_text" else 1.0  # Gemma's norms multiply by 1 + w
            out[name] = base + 0.1 * rng.standard_normal(shape)
        elif name.endswith("sinks"):
            out[name] = rng.standard_normal(shape)
        else:
            out[name] = scale * rng.standard_normal(shape) / math.sqrt(shape[-1]) * 2
    return out


# ---- the pieces ---------------------------------------------------------------------------------


def _rms(x, w, spec):
    # Qwen3RMSNorm: w · x/√(mean x² + eps); Gemma3RMSNorm: the same with (1 + w)
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + spec.eps)
    return y * ((1.0 + w) if spec.family == "gemma3_text" else w)


def _act(x, spec):
    if spec.family == "gemma3_text":  # gelu_pytorch_tanh
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return x / (1 + np.exp(-x))  # silu


def rope_rotate(x, positions, inv_freq, rotary_dim, factor=1.0):
    """Rotate the first ``rotary_dim`` dims of ``x`` (…, T, d) at ``positions`` (…, T), half-split pairs (rotate_half).

    Pair k is dims k and k + rotary_dim/2; dims past ``rotary_dim`` pass through
    (partial rotary). cos and sin carry ``factor`` (transformers' attention_scaling).

    >>> x = np.ones((1, 2, 4))
    >>> np.round(rope_rotate(x, np.array([[0, 1]]), np.array([1.0, 0.5]), 4), 3)[0, 1]
    array([-0.301,  0.398,  1.382,  1.357])
    """
    angle = np.asarray(positions, float)[..., None] * np.asarray(inv_freq, float)  # (…, T, rotary_dim/2)
    cos = np.concatenate([np.cos(angle)] * 2, axis=-1) * factor
    sin = np.concatenate([np.sin(angle)] * 2, axis=-1) * factor
    r, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    half = rotary_dim // 2
    rotated = np.concatenate([-r[..., half:], r[..., :half]], axis=-1)
    return np.concatenate([r * cos + rotated * sin, rest], axis=-1)


def position_ids_from_mask(attention_mask) -> np.ndarray:
    """Position ids of a left-padded batch: each row counts its own tokens from 0 (pads get 0, as generate gives them).

    transformers 5.24.0's ``generation/utils.py`` (``_prepare_position_ids_for_generation``):
    ``attention_mask.cumsum(-1) - 1``, then ``masked_fill(attention_mask == 0, 0)`` (transformers 4 filled
    pads with 1). A pad's position changes no logit of a token: no token reads a pad key.

    >>> position_ids_from_mask(np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]))
    array([[0, 0, 0, 1, 2],
           [0, 1, 2, 3, 4]])
    """
    mask = np.asarray(attention_mask)
    pos = np.cumsum(mask, axis=-1) - 1
    return np.where(mask == 0, 0, pos)


def _check_ids(spec, input_ids, attention_mask):
    ids = np.asarray(input_ids)
    if ids.ndim != 2 or ids.shape[1] == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"input_ids must be a (batch, length) array of token ids, got shape {ids.shape} of {ids.dtype}")
    if ids.min() < 0 or ids.max() >= spec.vocab:
        raise ValueError(f"input_ids must lie in [0, {spec.vocab}), got {int(ids.min())}..{int(ids.max())}")
    mask = np.ones_like(ids) if attention_mask is None else np.asarray(attention_mask)
    if mask.shape != ids.shape or not np.isin(mask, (0, 1)).all():
        raise ValueError(f"attention_mask must be 0/1 of shape {ids.shape}, got shape {mask.shape}")
    if (mask[:, -1] == 0).any() or (np.diff(mask, axis=-1) < 0).any():
        raise ValueError("attention_mask must be left padding: zeros, then ones to the end of each row")
    return ids, mask


def _qkv(spec, weights, i, x, positions, rotate=True):
    # x (B, T, H) → q (B, heads, T, d), k, v (B, kv_heads, T, d); q, k normalised per head, then rotated
    p = f"model.layers.{i}.self_attn."
    B, T, _ = x.shape
    q = (x @ weights[p + "q_proj.weight"].T).reshape(B, T, spec.heads, spec.head_dim).transpose(0, 2, 1, 3)
    k = (x @ weights[p + "k_proj.weight"].T).reshape(B, T, spec.kv_heads, spec.head_dim).transpose(0, 2, 1, 3)
    v = (x @ weights[p + "v_proj.weight"].T).reshape(B, T, spec.kv_heads, spec.head_dim).transpose(0, 2, 1, 3)
    q, k = _rms(q, weights[p + "q_norm.weight"], spec), _rms(k, weights[p + "k_norm.weight"], spec)
    pos = positions[:, None, :]
    args = (spec.inv_freq[i], spec.rotary_dim[i], spec.attention_factor[i])
    q = rope_rotate(q, pos, *args)
    return q, (rope_rotate(k, pos, *args) if rotate else k), v


def _attend(spec, weights, i, q, k, v, allowed):
    # q (B, h, Tq, d); k, v (B, kv, Tk, d); allowed (B, Tq, Tk) → (B, Tq, h·d)
    group = spec.heads // spec.kv_heads
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)  # repeat_kv: head h reads kv head h // group
    scores = q @ k.transpose(0, 1, 3, 2) * spec.softmax_scale[i]
    scores = np.where(allowed[:, None], scores, -np.inf)
    if spec.sinks:  # gpt-oss: one more logit per head, in the softmax's sum, whose weight is then dropped
        sink = np.broadcast_to(weights[f"model.layers.{i}.self_attn.sinks"][None, :, None, None], scores.shape[:-1] + (1,))
        scores = np.concatenate([scores, sink], axis=-1)
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    w = np.exp(scores - top)
    w = w / np.maximum(w.sum(-1, keepdims=True), 1e-300)
    if spec.sinks:
        w = w[..., :-1]
    out = (w @ v).transpose(0, 2, 1, 3)
    return out.reshape(out.shape[0], out.shape[1], -1)


def _layer_rest(spec, weights, i, x, attn):
    # everything after attention: o_proj, the residuals, the norms, the MLP
    p = f"model.layers.{i}."
    h = attn @ weights[p + "self_attn.o_proj.weight"].T
    if spec.family == "gemma3_text":
        h = _rms(h, weights[p + "post_attention_layernorm.weight"], spec)
        x = x + h
        h = _rms(x, weights[p + "pre_feedforward_layernorm.weight"], spec)
    else:
        x = x + h
        h = _rms(x, weights[p + "post_attention_layernorm.weight"], spec)
    h = (_act(h @ weights[p + "mlp.gate_proj.weight"].T, spec) * (h @ weights[p + "mlp.up_proj.weight"].T))
    h = h @ weights[p + "mlp.down_proj.weight"].T
    if spec.family == "gemma3_text":
        h = _rms(h, weights[p + "post_feedforward_layernorm.weight"], spec)
    return x + h


def _embed(spec, weights, ids):
    x = weights["model.embed_tokens.weight"][ids]
    return x * math.sqrt(spec.hidden) if spec.family == "gemma3_text" else x


def _logits(spec, weights, x):
    x = _rms(x, weights["model.norm.weight"], spec)
    head = weights["model.embed_tokens.weight"] if spec.tied else weights["lm_head.weight"]
    logits = x @ head.T
    if spec.final_softcap is not None:
        logits = np.tanh(logits / spec.final_softcap) * spec.final_softcap
    return logits


def _allowed(q_index, k_index, k_valid, window):
    # (B, Tq, Tk): causal, not a pad, and inside the window (indices in the padded sequence)
    ok = (k_index[:, None, :] <= q_index[:, :, None]) & k_valid[:, None, :]
    if window is not None:
        ok &= q_index[:, :, None] - k_index[:, None, :] < window
    return ok


def _pad_rows(logits, mask):
    # a pad query reads no key; its logits mean nothing, so they are NaN in both forward and decode
    return np.where(mask[..., None] == 1, logits, np.nan)


def forward(spec, weights, input_ids, *, attention_mask=None, position_ids=None) -> np.ndarray:
    """Logits (batch, length, vocab) of the whole sequence at once; NaN at pad positions.

    ``attention_mask``: 1 for a token, 0 for left padding (default: all
    tokens). ``position_ids`` default to :func:`position_ids_from_mask`.
    """
    ids, mask = _check_ids(spec, input_ids, attention_mask)
    pos = position_ids_from_mask(mask) if position_ids is None else np.asarray(position_ids)
    B, T = ids.shape
    index = np.broadcast_to(np.arange(T), (B, T))
    x = _embed(spec, weights, ids)
    for i in range(spec.layers):
        h = _rms(x, weights[f"model.layers.{i}.input_layernorm.weight"], spec)
        q, k, v = _qkv(spec, weights, i, h, pos)
        allowed = _allowed(index, index, mask == 1, spec.windows[i])
        x = _layer_rest(spec, weights, i, x, _attend(spec, weights, i, q, k, v, allowed))
    return _pad_rows(_logits(spec, weights, x), mask)


@dataclasses.dataclass
class KVCache:
    """Per layer: the cached keys (rotated unless a bug says otherwise), values, their index in the sequence, and validity.

    A sliding layer keeps its last ``window - 1`` entries after each step
    (transformers 5's DynamicSlidingWindowLayer), a full layer everything.
    ``seen`` counts the tokens fed so far (pads included).
    """

    keys: list
    values: list
    index: list
    valid: list
    seen: int = 0

    @classmethod
    def empty(cls, spec, batch):
        def blank(d):
            return [np.zeros((batch, spec.kv_heads, 0, d)) for _ in range(spec.layers)]

        return cls(blank(spec.head_dim), blank(spec.head_dim), [np.zeros((batch, 0), int) for _ in range(spec.layers)],
                   [np.zeros((batch, 0), bool) for _ in range(spec.layers)])

    def length(self, layer) -> int:
        return self.keys[layer].shape[2]


def _step(spec, weights, cache, ids, mask, pos, bug):
    # feed a chunk (B, t) through every layer, reading and then updating the cache
    B, t = ids.shape
    q_index = np.broadcast_to(np.arange(cache.seen, cache.seen + t), (B, t))
    x = _embed(spec, weights, ids)
    for i in range(spec.layers):
        h = _rms(x, weights[f"model.layers.{i}.input_layernorm.weight"], spec)
        q, k, v = _qkv(spec, weights, i, h, pos, rotate=bug != "rotate_at_read")
        keys = np.concatenate([cache.keys[i], k], axis=2)
        values = np.concatenate([cache.values[i], v], axis=2)
        index = np.concatenate([cache.index[i], q_index], axis=1)
        valid = np.concatenate([cache.valid[i], mask == 1], axis=1)
        read = keys
        if bug == "rotate_at_read":  # every key, old and new, turned by the newest query's position
            read = rope_rotate(keys, np.broadcast_to(pos[:, -1:, None], keys.shape[:3]),
                               spec.inv_freq[i], spec.rotary_dim[i], spec.attention_factor[i])
        allowed = _allowed(q_index, index, valid, spec.windows[i])
        x = _layer_rest(spec, weights, i, x, _attend(spec, weights, i, q, read, values, allowed))
        keep = slice(None) if spec.windows[i] is None else slice(-(spec.windows[i] - 1), None)
        cache.keys[i], cache.values[i] = keys[:, :, keep], values[:, :, keep]
        cache.index[i], cache.valid[i] = index[:, keep], valid[:, keep]
    cache.seen += t
    return _logits(spec, weights, x)


def decode(spec, weights, input_ids, *, attention_mask=None, prefill=1, bug=None, cache=None) -> np.ndarray:
    """Logits of every position, as generation computes them: ``prefill`` tokens at once, then one token per step.

    Position ids are :func:`position_ids_from_mask`, and a new token's
    position is the last one plus 1 (what ``generate`` does), unless ``bug``
    (one of :data:`BUGS`) says otherwise. Without a bug the result equals
    :func:`forward`'s, to rounding. NaN at pad positions. ``cache``: an empty
    :class:`KVCache` (``KVCache.empty(spec, batch)``) to fill, to read what it
    holds afterwards; by default a fresh one.

    >>> spec = tiny_spec("qwen3", window=4, layers=2)
    >>> cache = KVCache.empty(spec, batch=1)
    >>> _ = decode(spec, random_weights(spec), np.arange(10)[None], cache=cache)
    >>> [cache.length(i) for i in range(spec.layers)]   # layer 0 full: 10 keys; layer 1 sliding, W = 4: the last 3
    [10, 3]
    """
    ids, mask = _check_ids(spec, input_ids, attention_mask)
    if bug is not None and bug not in BUGS:
        raise ValueError(f"bug must be None or one of {BUGS}, got {bug!r}")
    T = ids.shape[1]
    if isinstance(prefill, bool) or not isinstance(prefill, (int, np.integer)) or not 1 <= prefill <= T:
        raise ValueError(f"prefill must be a number of tokens from 1 to the length {T}, got {prefill!r}")
    pos = position_ids_from_mask(mask)
    if bug == "ignore_padding":
        pos = np.broadcast_to(np.arange(T), ids.shape)
    if cache is None:
        cache = KVCache.empty(spec, ids.shape[0])
    elif not isinstance(cache, KVCache) or cache.seen or len(cache.keys) != spec.layers or (
            cache.keys[0].shape[0] != ids.shape[0]):
        raise ValueError(f"cache must be an empty KVCache for this spec and a batch of {ids.shape[0]} "
                         f"(KVCache.empty(spec, {ids.shape[0]})), got {_show(cache)}")
    out = [_step(spec, weights, cache, ids[:, :prefill], mask[:, :prefill], pos[:, :prefill], bug)]
    for t in range(prefill, T):
        p = pos[:, t : t + 1]
        if bug == "positions_from_cache":  # the cache's length, which stops growing once a layer rolls
            p = np.full_like(p, min(cache.length(i) for i in range(spec.layers)))
        out.append(_step(spec, weights, cache, ids[:, t : t + 1], mask[:, t : t + 1], p, bug))
    return _pad_rows(np.concatenate(out, axis=1), mask)
