"""StreamingLLM in miniature: the text lab's RoPE models, in numpy, reading a long text through a rolling cache.

The text lab (notebook 15) trains character-level models on windows of L = 64
characters. Eight of its RoPE models ship here as float16 weights
(``data/text_rope/seed_<N>.npz``, with the training settings in
``settings.json``), so this module runs them without JAX: :func:`forward` is
the lab's model (``posenc_helpers/lab/model.py``) written again in numpy, the
same formulas in the same order.

A stream of characters is read one token at a time through a key-value cache
that holds L entries in every setting (Xiao et al. 2024, "Efficient Streaming
Language Models with Attention Sinks", arXiv:2309.17453, §3 and Fig. 1):

==================  ==================================================================
``"window"``        (a) the last L tokens; each key rotated at its position in the
                    text when it is cached
``"sinks"``         (b) the first 4 tokens of the stream kept as sinks, plus the last
                    L − 4; keys rotated at their text positions, so the distance
                    from a query to a sink grows without bound
``"sinks_cache"``   (c) as (b), with positions counted inside the cache, as
                    StreamingLLM does: sinks at 0 … 3, the recent tokens at 4 … L − 1
``"recompute"``     (d) every window of the last L tokens run from scratch at
                    positions 0 … L − 1 (StreamingLLM's "Sliding Window with
                    Re-computation" baseline, a reference, not an upper bound)
==================  ==================================================================

Each prediction is scored in bits (−log₂ p of the next character).
:func:`evaluate` runs all four on a batch of streams; :func:`seed_row` is one
seed's row of the stored results (``data/inference_results.json``, written by
``make lab-inference``), and :data:`CLAIMS` says what the rows show.
Taught in notebooks/16-position-at-inference.ipynb.

>>> params = random_params(vocab=5, d_model=8, heads=2, layers=1, seed=0)
>>> tokens = np.arange(12)[None] % 5
>>> bits = stream_bits(params, tokens, heads=2, cache=4, sinks=1, positions="cache")
>>> bits.shape                           # one stream, 11 predictions (of tokens 1 … 11)
(1, 11)
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import math
import time
import zipfile
from collections.abc import Callable
from importlib import resources

import numpy as np

from . import _validate as v
from .core import frequencies

__all__ = [
    "CACHE", "SINKS", "STREAMS", "STREAM_CHARS", "SETTINGS", "SETTING_TITLES", "POSITIONS", "PARAM_NAMES",
    "text", "vocab", "encode", "validation", "settings", "seeds", "load_params", "write_params", "write_float16", "random_params",
    "forward", "bits_at_length", "streams", "recompute_bits", "stream_bits", "evaluate", "seed_row",
    "results", "rows", "view_of", "finetuned_bits", "Claim", "CLAIMS", "check", "margins", "report",
]

#: The cache size L in every setting: the lab's training length.
CACHE = 64
#: The sinks of settings (b) and (c): StreamingLLM's four initial tokens.
SINKS = 4
#: The streams :func:`seed_row` reads: this many, each of STREAM_CHARS characters, spread over the validation text.
STREAMS = 16
#: Characters per stream: 32L + 1, so 32L predictions, the last 31L of them with a full cache that evicts.
STREAM_CHARS = 32 * CACHE + 1
#: The four settings, in the order (a) … (d).
SETTINGS = ("window", "sinks", "sinks_cache", "recompute")
SETTING_TITLES = {
    "window": "(a) window of L",
    "sinks": "(b) 4 sinks + window, text positions",
    "sinks_cache": "(c) 4 sinks + window, cache positions",
    "recompute": "(d) window recomputed",
}
#: Where a cached key's position is counted: in the text (stream), or by its slot in the cache.
POSITIONS = ("text", "cache")

_PACKAGE = resources.files("posenc_helpers")
_DATA = "data/text_rope"
_RESULTS = "data/inference_results.json"
_HELD_OUT = "data/inference_results_heldout.json"
_MAKE = "make lab-inference"


# ---- the text, without JAX: the same rule as posenc_helpers.lab.text -------------------------------------------


@functools.cache
def text() -> str:
    """The lab's text as shipped: ``posenc_helpers/lab/data/tragedies.txt`` (read here, not through the JAX lab)."""
    return _PACKAGE.joinpath("lab/data/tragedies.txt").read_text(encoding="ascii")


@functools.cache
def vocab() -> str:
    """The character vocabulary: the text's distinct characters, sorted by code point (``lab.text.VOCAB``).

    >>> len(vocab()), vocab()[0] == "\\n"
    (73, True)
    """
    return "".join(sorted(set(text())))


def encode(s) -> np.ndarray:
    """Character ids of the string ``s``: (len(s),) int64. A character outside :func:`vocab` is a ValueError.

    >>> encode("ab").tolist()
    [46, 47]
    """
    if not isinstance(s, str):
        raise TypeError(f"the text to encode must be a string, got {type(s).__name__}")
    index = {c: i for i, c in enumerate(vocab())}
    bad = sorted(set(s) - set(index))
    if bad:
        raise ValueError(f"characters outside the vocabulary: {''.join(bad)!r}")
    return np.array([index[c] for c in s], dtype=np.int64)


@functools.cache
def validation() -> np.ndarray:
    """The validation ids: the last 10 % of the text by position, as the lab cuts it (cut = ⌊0.9·N⌋).

    >>> validation().size                      # 993,274 characters; the last 99,328 of them
    99328
    """
    ids = encode(text())
    # cut = ⌊0.9 · N⌋
    out = ids[int(0.9 * ids.size):]
    out.flags.writeable = False
    return out


# ---- the shipped weights -------------------------------------------------------------------------------------


@functools.cache
def settings() -> dict:
    """The shipped models' training settings (``data/text_rope/settings.json``, written by ``make lab-inference``)."""
    path = _PACKAGE.joinpath(_DATA, "settings.json")
    if not path.is_file():
        raise FileNotFoundError(f"the shipped text models' settings are missing ({_DATA}/settings.json); run {_MAKE}")
    return json.loads(path.read_text(encoding="utf-8"))


def seeds() -> tuple:
    """The seeds whose RoPE models ship (the text sweep's, ``lab.text.SEEDS``).

    >>> seeds()
    (0, 1, 2, 3, 4, 5, 7, 9627)
    """
    return tuple(settings()["seeds"])


#: The names of a model's arrays as they are stored: "blocks.<i>.<name>" per layer.
PARAM_NAMES = ("embed", "ln_f.gain", "ln_f.bias", "unembed")
_BLOCK_NAMES = ("ln1.gain", "ln1.bias", "qkv", "out", "ln2.gain", "ln2.bias", "mlp_in", "mlp_in_bias", "mlp_out",
                "mlp_out_bias")


def _flatten(params) -> dict:
    flat = {"embed": params["embed"], "ln_f.gain": params["ln_f"]["gain"], "ln_f.bias": params["ln_f"]["bias"],
            "unembed": params["unembed"]}
    for i, block in enumerate(params["blocks"]):
        for name in _BLOCK_NAMES:
            part, _, leaf = name.partition(".")
            flat[f"blocks.{i}.{name}"] = block[part][leaf] if leaf else block[part]
    return flat


def _unflatten(flat, where) -> dict:
    missing = [n for n in PARAM_NAMES if n not in flat]
    layers = sorted({int(n.split(".")[1]) for n in flat if n.startswith("blocks.")})
    missing += [f"blocks.{i}.{n}" for i in layers for n in _BLOCK_NAMES if f"blocks.{i}.{n}" not in flat]
    if missing or layers != list(range(len(layers))) or not layers:
        raise ValueError(f"{where} is not a lab text model: missing {missing or 'a contiguous list of blocks'}")
    blocks = []
    for i in layers:
        block = {}
        for name in _BLOCK_NAMES:
            part, _, leaf = name.partition(".")
            value = np.asarray(flat[f"blocks.{i}.{name}"], dtype=np.float32)
            if leaf:
                block.setdefault(part, {})[leaf] = value
            else:
                block[part] = value
        blocks.append(block)
    f32 = lambda n: np.asarray(flat[n], dtype=np.float32)  # noqa: E731
    return {"embed": f32("embed"), "blocks": blocks, "ln_f": {"gain": f32("ln_f.gain"), "bias": f32("ln_f.bias")},
            "unembed": f32("unembed")}


def load_params(seed) -> dict:
    """The shipped RoPE model of sweep seed ``seed``: the lab's nested dict of arrays (float16 stored, float32 here).

    >>> p = load_params(0)
    >>> p["embed"].shape, len(p["blocks"]), p["blocks"][0]["qkv"].shape     # (vocab, d_model); 2 layers; 64 → 3·64
    ((73, 64), 2, (64, 192))
    >>> load_params(6)
    Traceback (most recent call last):
    ...
    ValueError: seed must be one of the shipped seeds (0, 1, 2, 3, 4, 5, 7, 9627), got 6
    """
    if not v._is_int(seed) or int(seed) not in seeds():
        raise ValueError(f"seed must be one of the shipped seeds {seeds()}, got {v._show(seed)}")
    path = _PACKAGE.joinpath(_DATA, f"seed_{int(seed)}.npz")
    with path.open("rb") as fh, np.load(io.BytesIO(fh.read())) as npz:
        return _unflatten(dict(npz), f"{_DATA}/seed_{int(seed)}.npz")


def write_params(path, params) -> int:
    """Write ``params`` as float16 to an ``.npz`` at ``path``, byte for byte the same on every run; returns its size.

    A zip of one ``.npy`` per array (names as :data:`PARAM_NAMES` and
    "blocks.<i>.<name>"), deflated, every entry dated 1980-01-01 so that the
    same weights give the same file. :func:`load_params` reads it back.
    """
    return write_float16(path, _flatten(params))


def write_float16(path, flat: dict) -> int:
    """Write the named arrays of ``flat`` as float16 to an ``.npz`` at ``path``, the same bytes on every run; its size.

    A zip of one ``.npy`` per name, deflated, every entry dated 1980-01-01, so that the same weights give the same
    file (:func:`write_params` and :func:`posenc_helpers.serving.load_lab_model`'s files are written by it). A value
    float16 cannot hold is a ValueError naming the array, never a silent inf.
    """
    big = {n: float(np.abs(np.asarray(a, dtype=np.float64)).max()) for n, a in flat.items()}
    over = {n: m for n, m in big.items() if not m < float(np.finfo(np.float16).max)}
    if over:
        raise ValueError(f"params hold values float16 cannot store (beyond ±65504): {over}")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(flat):
            array = io.BytesIO()
            np.lib.format.write_array(array, np.ascontiguousarray(np.asarray(flat[name], dtype=np.float16)),
                                      allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, array.getvalue(), compresslevel=9)
    data = buffer.getvalue()
    with open(path, "wb") as fh:
        fh.write(data)
    return len(data)


def random_params(*, vocab, d_model=16, heads=2, layers=2, mlp_ratio=4, seed=0, scale=1.0) -> dict:
    """Random parameters in the lab's layout (float64), for tests and small experiments.

    Weights N(0, scale²/fan-in), as the lab's ``init``; LayerNorm gains near 1
    and biases near 0 (jittered, so a test sees them used).

    >>> p = random_params(vocab=5, d_model=8, heads=2, layers=1)
    >>> p["blocks"][0]["mlp_in"].shape               # d_model → mlp_ratio · d_model
    (8, 32)
    """
    vocab, d, heads, layers = (v.positive_int(n, x) for n, x in
                               (("vocab", vocab), ("d_model", d_model), ("heads", heads), ("layers", layers)))
    mlp_ratio = v.positive_int("mlp_ratio", mlp_ratio)
    if d % heads or (d // heads) % 2:
        raise ValueError(f"d_model/heads must be an even integer (RoPE turns pairs), got d_model={d}, heads={heads}")
    rng = np.random.default_rng(seed)
    h = mlp_ratio * d

    def dense(n_in, n_out):
        return rng.standard_normal((n_in, n_out)) * scale / math.sqrt(n_in)

    def norm():
        return {"gain": 1 + 0.1 * rng.standard_normal(d), "bias": 0.1 * rng.standard_normal(d)}

    blocks = [{"ln1": norm(), "qkv": dense(d, 3 * d), "out": dense(d, d), "ln2": norm(), "mlp_in": dense(d, h),
               "mlp_in_bias": 0.1 * rng.standard_normal(h), "mlp_out": dense(h, d),
               "mlp_out_bias": 0.1 * rng.standard_normal(d)} for _ in range(layers)]
    return {"embed": rng.standard_normal((vocab, d)), "blocks": blocks, "ln_f": norm(), "unembed": dense(d, vocab)}


# ---- the model: posenc_helpers/lab/model.py in numpy -----------------------------------------------------------


#: The float types the numpy model computes in: float64 (the default) or float32 (the JAX lab's, about twice as fast).
DTYPES = (np.float64, np.float32)


def _cast(params, dtype=np.float64) -> dict:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32, got {v._show(dtype)}")
    try:
        blocks = params["blocks"]
        out = {"embed": np.asarray(params["embed"], dtype), "unembed": np.asarray(params["unembed"], dtype),
               "ln_f": {k: np.asarray(params["ln_f"][k], dtype) for k in ("gain", "bias")}, "blocks": []}
        for block in blocks:
            b = {k: np.asarray(block[k], dtype) for k in _BLOCK_NAMES if "." not in k}
            b.update({n: {k: np.asarray(block[n][k], dtype) for k in ("gain", "bias")} for n in ("ln1", "ln2")})
            out["blocks"].append(b)
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"params must be the lab's nested dict (embed, blocks, ln_f, unembed), missing {exc}") from None
    d = out["embed"].shape[1]
    if not out["blocks"] or any(b["qkv"].shape != (d, 3 * d) for b in out["blocks"]):
        raise ValueError(f"params' blocks must hold qkv of shape ({d}, {3 * d}), the embedding's width d_model = {d}")
    return out


def _layer_norm(x, p):
    # (x − mean) / √(var + ε) · gain + bias, ε = 1e-5, over the last axis
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * p["gain"] + p["bias"]


def _mlp(x, block):
    # x → W_out · gelu(W_in · x + b_in) + b_out, gelu as jax.nn.gelu's default (the tanh form):
    # gelu(u) = u/2 · (1 + tanh(√(2/π) · (u + 0.044715 u³)))
    u = x @ block["mlp_in"] + block["mlp_in_bias"]
    gelu = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * (u * u * u))))
    return gelu @ block["mlp_out"] + block["mlp_out_bias"]


def _angles(pos, head_dim, base, dtype=np.float64):
    # θ[t, k] = pos_t · ω_k, ω_k = base^(−2k/head_dim): cos and sin (…, head_dim/2), computed in float64
    theta = np.asarray(pos, np.float64)[..., None] * frequencies(head_dim, base)
    return np.cos(theta).astype(dtype), np.sin(theta).astype(dtype)


def _turn(x, cos, sin):
    # each (even, odd) pair (a, b) → (a cos θ − b sin θ, a sin θ + b cos θ): the lab's rotate_qk, core.rope
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def _split_heads(h, block, heads):
    # q, k, v: (…, heads, T, head_dim) from h (…, T, d_model)
    *lead, T, d = h.shape
    qkv = (h @ block["qkv"]).reshape(*lead, T, 3, heads, d // heads)
    qkv = np.moveaxis(qkv, -3, 0)  # (3, …, T, heads, head_dim)
    return qkv.swapaxes(-3, -2)


def _softmax(logits):
    z = np.exp(logits - logits.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def _check_tokens(tokens, n_vocab, name="tokens", *, least=1) -> np.ndarray:
    arr = np.asarray(tokens)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be integer token ids, got {v._show(tokens)} (dtype {arr.dtype})")
    if arr.ndim not in (1, 2) or arr.shape[-1] < least:
        raise ValueError(f"{name} must have shape (T,) or (batch, T) with T ≥ {least}, got shape {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() >= n_vocab):
        raise ValueError(f"{name} must lie in 0 … {n_vocab - 1} (the model's vocabulary), got {arr.min()} … {arr.max()}")
    return arr.astype(np.int64)


def _check_heads(p, heads) -> int:
    heads = v.positive_int("heads", heads)
    d = p["embed"].shape[1]
    if d % heads or (d // heads) % 2:
        raise ValueError(f"heads must split d_model = {d} into even head dimensions, got heads={heads}")
    return heads


def forward(params, tokens, *, heads, base=10000.0, return_attention=False, dtype=np.float64):
    """Logits for every position, as the lab's ``model.forward`` with scheme "rope": (…, T, vocab).

    ``tokens`` (T,) or (batch, T) at positions 0 … T − 1. Each layer:
    x ← x + attn(LN(x)), x ← x + MLP(LN(x)), with q and k turned by t·ω_k
    before the scores q·k/√head_dim; then LN and the unembedding. With
    ``return_attention=True`` also the weights (layers, …, heads, T, T).
    ``dtype``: one of :data:`DTYPES`.

    >>> p = random_params(vocab=5, d_model=8, heads=2, layers=1)
    >>> logits, w = forward(p, [0, 1, 2], heads=2, return_attention=True)
    >>> logits.shape, w.shape, bool(np.allclose(w.sum(-1), 1))    # each query's weights sum to 1
    ((3, 5), (1, 2, 3, 3), True)
    """
    p = _cast(params, dtype)
    heads = _check_heads(p, heads)
    tokens = _check_tokens(tokens, p["embed"].shape[0])
    T, d = tokens.shape[-1], p["embed"].shape[1]
    cos, sin = _angles(np.arange(T), d // heads, base, dtype)
    # x: (…, T, d_model)
    x = p["embed"][tokens]
    causal = np.tril(np.ones((T, T), dtype=bool))
    maps = []
    for block in p["blocks"]:
        q, k, val = _split_heads(_layer_norm(x, block["ln1"]), block, heads)
        q, k = _turn(q, cos, sin), _turn(k, cos, sin)
        # logits[…, h, i, j] = q_i · k_j / √head_dim, causal: (…, heads, T, T)
        logits = np.where(causal, q @ k.swapaxes(-1, -2) / math.sqrt(d // heads), -np.inf)
        weights = _softmax(logits)
        # out: (…, heads, T, head_dim) → (…, T, d_model)
        out = np.moveaxis(weights @ val, -3, -2).reshape(*tokens.shape, d)
        x = x + out @ block["out"]
        x = x + _mlp(_layer_norm(x, block["ln2"]), block)
        maps.append(weights)
    logits = _layer_norm(x, p["ln_f"]) @ p["unembed"]
    return (logits, np.stack(maps)) if return_attention else logits


def _bits(logits, target):
    # −log₂ p(target) = (logsumexp(logits) − logits[target]) / ln 2, in float64
    logits = np.asarray(logits, np.float64)
    top = logits.max(-1, keepdims=True)
    lse = np.log(np.exp(logits - top).sum(-1)) + top[..., 0]
    return (lse - np.take_along_axis(logits, target[..., None], -1)[..., 0]) / math.log(2)


def bits_at_length(params, length, *, heads, base=10000.0, ids=None, dtype=np.float64) -> float:
    """Bits per character on non-overlapping windows of ``length``, as ``lab.text.bits_per_char`` reads them.

    The ids (default: :func:`validation`) are cut into ⌊(N − 1)/T⌋ windows of
    T characters; every position of every window is scored, then averaged.

    >>> p = random_params(vocab=5, d_model=8, heads=2, layers=1)
    >>> p["unembed"][:] = 0                     # every logit 0: each of the 5 characters gets p = 1/5
    >>> round(bits_at_length(p, 4, heads=2, ids=np.arange(9) % 5), 4), round(math.log2(5), 4)   # two windows of 4
    (2.3219, 2.3219)
    """
    length = v.positive_int("length", length)
    p = _cast(params, dtype)
    ids = validation() if ids is None else _check_tokens(ids, p["embed"].shape[0], "ids")
    n = (ids.size - 1) // length
    if n < 1:
        raise ValueError(f"length must leave one window in the {ids.size} ids, got length={length}")
    tokens, target = ids[: n * length].reshape(n, length), ids[1 : n * length + 1].reshape(n, length)
    total = 0.0
    for i in range(0, n, 128):
        logits = forward(p, tokens[i : i + 128], heads=heads, base=base, dtype=dtype)
        total += _bits(logits, target[i : i + 128]).sum()
    return float(total / (n * length))


# ---- the streams -----------------------------------------------------------------------------------------------


def streams(n=STREAMS, length=STREAM_CHARS, *, ids=None) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens, offsets)``: ``n`` streams of ``length`` ids, at evenly spread offsets of the validation text.

    offset_i = round(i · (N − length)/(n − 1)), from the start to the end of the
    N ids (default: :func:`validation`); one stream starts at 0.

    >>> tokens, offsets = streams(3, 10, ids=np.arange(30))
    >>> offsets.tolist(), tokens[2].tolist()[:3]           # 0, (30 − 10)/2, 30 − 10
    ([0, 10, 20], [20, 21, 22])
    """
    n, length = v.positive_int("n", n), v.positive_int("length", length)
    ids = validation() if ids is None else np.asarray(ids)
    if length > ids.size:
        raise ValueError(f"length must fit in the {ids.size} ids, got length={length}")
    # offset_i = round(i · (N − length) / (n − 1))
    offsets = np.rint(np.arange(n) * (ids.size - length) / max(n - 1, 1)).astype(np.int64)
    return np.stack([ids[o : o + length] for o in offsets]), offsets


def _check_cache(cache, sinks):
    cache = v.positive_int("cache", cache)
    if not v._is_int(sinks) or sinks < 0:
        raise ValueError(f"sinks must be a non-negative integer, got {v._show(sinks)}")
    if sinks >= cache:
        raise ValueError(f"sinks must leave room for the recent tokens: sinks < cache, got sinks={sinks}, cache={cache}")
    return cache, int(sinks)


def _prepare(params, tokens, heads, dtype):
    p = _cast(params, dtype)
    heads = _check_heads(p, heads)
    tokens = _check_tokens(tokens, p["embed"].shape[0], least=2)
    return p, heads, tokens.reshape(-1, tokens.shape[-1])


def recompute_bits(params, tokens, *, heads, base=10000.0, cache=CACHE, dtype=np.float64, chunk=64) -> np.ndarray:
    """(d): the bits of each prediction when every window of the last ``cache`` tokens is run from scratch.

    Query t reads tokens max(0, t − L + 1) … t at positions 0, 1, … and
    predicts token t + 1: (streams, T − 1). For t < L that is the full forward
    of the first L tokens. The windows are run in batches of ``chunk``; the
    last layer computes its last query only (the only one whose logits count).

    >>> p = random_params(vocab=5, d_model=8, heads=2, layers=2)
    >>> x = np.arange(9)[None] % 5
    >>> full = forward(p, x[:, :5], heads=2)           # a window of 5 that holds the first 5 tokens
    >>> bool(np.allclose(recompute_bits(p, x, heads=2, cache=5)[0, :4], _bits(full[0, :4], x[0, 1:5])))
    True
    """
    p, heads, tokens = _prepare(params, tokens, heads, dtype)
    cache, _ = _check_cache(cache, 0)
    chunk = v.positive_int("chunk", chunk)
    S, T = tokens.shape
    L = min(cache, T - 1)
    out = np.empty((S, T - 1))
    # t < L: the full forward of the first L tokens
    out[:, :L] = _bits(forward(p, tokens[:, :L], heads=heads, base=base, dtype=dtype), tokens[:, 1 : L + 1])
    if T - 1 > L:
        # the windows ending at t = L … T − 2, each of L tokens: (streams · (T − 1 − L), L)
        flat = np.lib.stride_tricks.sliding_window_view(tokens[:, 1 : T - 1], L, axis=1).reshape(-1, L)
        target = tokens[:, L + 1 :].reshape(-1)
        bits = np.empty(flat.shape[0])
        cos, sin = _angles(np.arange(L), p["embed"].shape[1] // heads, base, dtype)
        for i in range(0, flat.shape[0], chunk):
            bits[i : i + chunk] = _bits(_last_logits(p, flat[i : i + chunk], heads, cos, sin), target[i : i + chunk])
        out[:, L:] = bits.reshape(S, T - 1 - L)
    return out


def _last_logits(p, windows, heads, cos, sin):
    """The logits of the last position of each window (W, L) → (W, vocab); the last layer runs its last query only."""
    W, L = windows.shape
    d = p["embed"].shape[1]
    x = p["embed"][windows]
    causal = np.tril(np.ones((L, L), dtype=bool))
    for i, block in enumerate(p["blocks"]):
        last = i == len(p["blocks"]) - 1
        q, k, val = _split_heads(_layer_norm(x, block["ln1"]), block, heads)
        q, k = (_turn(q[..., -1:, :], cos[-1:], sin[-1:]) if last else _turn(q, cos, sin)), _turn(k, cos, sin)
        logits = q @ k.swapaxes(-1, -2) / math.sqrt(d // heads)
        if not last:
            logits = np.where(causal, logits, -np.inf)
        out = np.moveaxis(_softmax(logits) @ val, -3, -2).reshape(W, q.shape[-2], d)
        x = (x[:, -1:] if last else x) + out @ block["out"]
        x = x + _mlp(_layer_norm(x, block["ln2"]), block)
    return _layer_norm(x[:, -1], p["ln_f"]) @ p["unembed"]


def _stream(p, tokens, rows, *, heads, base, cache, sinks):
    """The token-by-token loop behind :func:`stream_bits` and :func:`evaluate`.

    ``rows``: one (stream index, keeps sinks, positions) per row, all read at
    once. The cache of each row is a ring of L slots: a row with sinks keeps
    slots 0 … s − 1 for the stream's first s tokens and turns the other L − s
    over the recent tokens; a row without, all L. Softmax does not care in
    which slot a key sits, only at which position it was turned:

    * keys are turned once, at their text position t, when they are cached;
    * with positions counted in the cache (StreamingLLM), the query sits at
      slot min(t, L − 1) and a recent key at its slot in age order, so every
      query-to-recent-key distance is the text distance t − n, as with text
      positions; only the sinks differ: sink i sits at slot i, distance
      L − 1 − i from the query, which is the text position t − (L − 1) + i.
      So their unturned keys are kept and turned there at every step, once
      the cache is full. (tests/literal_streaming.py turns every key at its
      slot, literally, and agrees.)

    Returns (bits (rows, T − 1), the weight on each sink slot per layer and
    head, summed over the queries t ≥ L: (rows, layers, heads, s)).
    """
    T = tokens.shape[1]
    R, L, s = len(rows), cache, sinks
    dtype = p["embed"].dtype
    d = p["embed"].shape[1]
    Dh, n_layers = d // heads, len(p["blocks"])
    stream = np.array([r[0] for r in rows])
    keeps = np.array([bool(r[1]) and s > 0 for r in rows])
    cache_rows = np.flatnonzero([r[2] == "cache" for r in rows] & keeps)
    cos, sin = _angles(np.arange(T), Dh, base, dtype)
    K = np.zeros((n_layers, R, heads, L, Dh), dtype)
    V = np.zeros((n_layers, R, heads, L, Dh), dtype)
    raw = np.zeros((n_layers, R, heads, max(s, 1), Dh), dtype)  # the sinks' keys, unturned
    # a row with sinks: slot t for t < s, then s + (t − s) mod (L − s); a row without: t mod L
    first = np.where(keeps, s, 0)
    span = L - first
    on_sink = (np.arange(max(s, 1)) < first[:, None])[:, None, :]  # (rows, 1, s): which slots hold a sink
    sink_weight = np.zeros((R, n_layers, heads, max(s, 1)))
    bits = np.empty((R, T - 1))
    rr, scale = np.arange(R), 1 / math.sqrt(Dh)
    for t in range(T - 1):
        slot = np.where(t < first, t, first + (t - first) % span)
        c, sn = cos[t], sin[t]
        moved = t >= L and cache_rows.size
        if moved:
            # StreamingLLM: sink i at slot i, i.e. text position t − (L − 1) + i
            cs, ss = cos[t - L + 1 : t - L + 1 + s], sin[t - L + 1 : t - L + 1 + s]
        x = p["embed"][tokens[stream, t]]
        for li, block in enumerate(p["blocks"]):
            # q, k, v: (rows, heads, head_dim)
            q, k, val = (_layer_norm(x, block["ln1"]) @ block["qkv"]).reshape(R, 3, heads, Dh).transpose(1, 0, 2, 3)
            K[li, rr, :, slot] = _turn(k, c, sn)
            V[li, rr, :, slot] = val
            if t < s:
                raw[li, :, :, t] = k
            if moved:
                K[li, cache_rows, :, :s] = _turn(raw[li, cache_rows], cs, ss)
            # logits over the cached keys: (rows, heads, L), the slots not yet filled masked
            logits = np.einsum("rhd,rhld->rhl", _turn(q, c, sn), K[li]) * scale
            if t < L - 1:
                logits[..., t + 1 :] = -np.inf
            w = _softmax(logits)
            if t >= L and s:
                sink_weight[:, li] += np.where(on_sink, w[..., :s], 0.0)
            x = x + np.einsum("rhl,rhld->rhd", w, V[li]).reshape(R, d) @ block["out"]
            x = x + _mlp(_layer_norm(x, block["ln2"]), block)
        bits[:, t] = _bits(_layer_norm(x, p["ln_f"]) @ p["unembed"], tokens[stream, t + 1])
    return bits, sink_weight


def stream_bits(params, tokens, *, heads, base=10000.0, cache=CACHE, sinks=0, positions="text",
                dtype=np.float64) -> np.ndarray:
    """Bits of each prediction of a stream read token by token through a rolling cache of ``cache`` entries.

    ``tokens`` (T,) or (streams, T): query t predicts token t + 1, so the
    result is (streams, T − 1). The cache holds the first ``sinks`` tokens
    of the stream and the last ``cache − sinks``. ``positions="text"``: every
    key turned at its position in the stream when cached (settings (a), (b));
    ``"cache"``: keys cached unturned and turned at their slot (sinks 0 … s − 1,
    then the recent tokens in order), the query at the last slot (setting (c)).
    Until the cache is full nothing is evicted, and every setting equals the
    full forward.

    >>> p = random_params(vocab=5, d_model=8, heads=2, layers=2)
    >>> x = np.arange(8)[None] % 5
    >>> full = _bits(forward(p, x, heads=2)[0, :-1], x[0, 1:])
    >>> bool(np.allclose(stream_bits(p, x, heads=2, cache=8, sinks=2, positions="cache")[0], full))
    True
    >>> stream_bits(p, x, heads=2, cache=4, sinks=4)
    Traceback (most recent call last):
    ...
    ValueError: sinks must leave room for the recent tokens: sinks < cache, got sinks=4, cache=4
    """
    p, heads, tokens = _prepare(params, tokens, heads, dtype)
    cache, sinks = _check_cache(cache, sinks)
    if positions not in POSITIONS:
        raise ValueError(f"positions must be one of {', '.join(map(repr, POSITIONS))}, got {v._show(positions)}")
    rows = [(i, True, positions) for i in range(tokens.shape[0])]
    return _stream(p, tokens, rows, heads=heads, base=base, cache=cache, sinks=sinks)[0]


def evaluate(params, tokens, *, heads, base=10000.0, cache=CACHE, sinks=SINKS, dtype=np.float64) -> dict:
    """All four settings on the streams ``tokens`` (streams, T), and the attention the first tokens receive.

    Returns a dict:

    * ``"bits"``: {setting: (streams, T − 1)}, the bits of each prediction, for each of :data:`SETTINGS`;
    * ``"sink_weight"``: {"sinks", "sinks_cache": (streams, layers, heads)}, the mean
      weight on the ``sinks`` sink keys together, over the queries t ≥ L;
    * ``"first_weight"``, ``"first4_weight"``: (streams, layers, heads), in
      setting (d)'s windows of L from scratch (the non-overlapping windows at
      stream positions 0, L, 2L, …): the mean weight a query at window
      position i ≥ 4 puts on position 0, and on positions 0 … 3;
    * ``"seconds"``: {"stream": the loop of (a)-(c), "recompute": (d)}, wall time.

    >>> p = random_params(vocab=5, d_model=8, heads=2, layers=1)
    >>> out = evaluate(p, np.arange(40).reshape(2, 20) % 5, heads=2, cache=8, sinks=2)
    >>> out["bits"]["sinks_cache"].shape, out["sink_weight"]["sinks"].shape
    ((2, 19), (2, 1, 2))
    """
    p, heads, tokens = _prepare(params, tokens, heads, dtype)
    cache, sinks = _check_cache(cache, sinks)
    S, T = tokens.shape
    if sinks < 1 or T - 1 <= cache:
        raise ValueError(f"evaluate needs sinks ≥ 1 and streams longer than cache + 1 = {cache + 1} tokens (something "
                         f"to evict), got sinks={sinks} and T={T}")
    rows = [(i, keep, pos) for keep, pos in ((False, "text"), (True, "text"), (True, "cache")) for i in range(S)]
    t0 = time.perf_counter()
    bits, weight = _stream(p, tokens, rows, heads=heads, base=base, cache=cache, sinks=sinks)
    t1 = time.perf_counter()
    recompute = recompute_bits(p, tokens, heads=heads, base=base, cache=cache, dtype=dtype)
    t2 = time.perf_counter()
    # (d)'s windows from scratch: the non-overlapping windows of L; maps (layers, S·n, heads, L, L)
    n = T // cache
    _, maps = forward(p, tokens[:, : n * cache].reshape(S * n, cache), heads=heads, base=base, return_attention=True,
                      dtype=dtype)
    # the mean over the queries i ≥ 4 and the windows of each stream: (S, layers, heads)
    first = maps[..., 4:, 0].mean(-1).reshape(len(p["blocks"]), S, n, heads).mean(2).swapaxes(0, 1)
    first4 = maps[..., 4:, :4].sum(-1).mean(-1).reshape(len(p["blocks"]), S, n, heads).mean(2).swapaxes(0, 1)
    scored = T - 1 - cache
    return {
        "bits": {"window": bits[:S], "sinks": bits[S : 2 * S], "sinks_cache": bits[2 * S :], "recompute": recompute},
        "sink_weight": {"sinks": weight[S : 2 * S].sum(-1) / scored, "sinks_cache": weight[2 * S :].sum(-1) / scored},
        "first_weight": first.astype(np.float64), "first4_weight": first4.astype(np.float64),
        "seconds": {"stream": t1 - t0, "recompute": t2 - t1},
    }


# ---- one seed's row of the stored results ----------------------------------------------------------------------


def _nested(a, digits=5):
    return np.round(np.asarray(a, np.float64), digits).tolist()


def seed_row(params, *, heads=4, base=10000.0, n=STREAMS, length=STREAM_CHARS, cache=CACHE, sinks=SINKS,
             dtype=np.float32) -> dict:
    """What the stored results keep of one model: :func:`evaluate` on :func:`streams`, summarised per stream.

    * ``"bits"``: {setting: one number per stream}, the mean bits of its
      predictions made with a full cache (queries t ≥ L, (T − 1 − L) of them);
    * ``"by_block"``: {setting: the mean over streams of each block of L
      predictions}, from the first (t < L, the same in every setting) on;
    * ``"sink_weight"``, ``"first_weight"``, ``"first4_weight"``: as
      :func:`evaluate`, (streams, layers, heads) nested lists;
    * ``"bits_at_L"``: :func:`bits_at_length` at L on the whole validation text;
    * ``"seconds"``: the wall time of the (a)-(c) loop and of (d).
    """
    tokens, _ = streams(n, length)
    out = evaluate(params, tokens, heads=heads, base=base, cache=cache, sinks=sinks, dtype=dtype)
    T = tokens.shape[1]
    blocks = (T - 1) // cache
    return {
        "bits": {k: _nested(b[:, cache:].mean(1)) for k, b in out["bits"].items()},
        "by_block": {k: _nested(b[:, : blocks * cache].reshape(n, blocks, cache).mean((0, 2)))
                     for k, b in out["bits"].items()},
        "sink_weight": {k: _nested(w) for k, w in out["sink_weight"].items()},
        "first_weight": _nested(out["first_weight"]),
        "first4_weight": _nested(out["first4_weight"]),
        "bits_at_L": round(bits_at_length(params, cache, heads=heads, base=base, dtype=dtype), 5),
        "seconds": {k: round(s, 1) for k, s in out["seconds"].items()},
    }


def results(held_out=False) -> dict:
    """The stored results as written by ``make lab-inference``: ``data/inference_results.json`` (the sweep's
    seeds), or with ``held_out=True`` ``data/inference_results_heldout.json`` (the held-out seed, read by the
    tests only)."""
    if not isinstance(held_out, bool):
        raise TypeError(f"held_out must be True or False, got {v._show(held_out)}")
    name = _HELD_OUT if held_out else _RESULTS
    path = _PACKAGE.joinpath(name)
    if not path.is_file():
        raise FileNotFoundError(f"{name} is missing; run {_MAKE}")
    return json.loads(path.read_text(encoding="utf-8"))


def _lab_json(held_out):
    name = "lab/text_results_heldout.json" if held_out else "lab/text_results.json"
    return json.loads(_PACKAGE.joinpath(name).read_text(encoding="utf-8"))


def finetuned_bits(seed, *, held_out=False) -> dict:
    """Bits per character at L, 2L, 4L, 8L and 16L after the brief fine-tune at 4L, per method, for one seed.

    "plain", "pi", "ntk", "yarn" from the text lab's stored sweep
    (``lab/text_results.json``, ``row["finetuned"]``; ``held_out=True``: its
    held-out file), and "abf" (the base raised to 500,000, Xiong et al. 2023)
    from :func:`results`. Each an array of 5.

    >>> {m: round(float(b[3]), 2) for m, b in finetuned_bits(0).items()}       # at 8L = 512
    {'plain': 2.71, 'pi': 3.1, 'ntk': 3.64, 'yarn': 3.03, 'abf': 2.74}
    """
    lab = {r["seed"]: r for r in _lab_json(held_out)["rows"] if r["scheme"] == "rope"}
    ours = {r["seed"]: r for r in results(held_out)["rows"]}
    if not v._is_int(seed) or seed not in lab or seed not in ours:
        raise ValueError(f"seed must be one of {sorted(set(lab) & set(ours))} (held_out={held_out}), got {v._show(seed)}")
    out = {m: np.asarray(b, float) for m, b in lab[seed]["finetuned"].items()}
    out["abf"] = np.asarray(ours[seed]["abf"]["bits"], float)
    return out


# ---- what the stored rows show: the claims ---------------------------------------------------------------------


def uniform_share(keys, *, cache=CACHE, first_query=4) -> float:
    """The weight ``keys`` first keys would get if every query spread its attention evenly.

    In a window from scratch, query i reads i + 1 keys, so the first k get
    k/(i + 1); averaged over the queries i = first_query … L − 1. (With a full
    cache every query reads L keys: ``uniform_share(k, first_query=cache - 1)``
    is k/L.)

    >>> round(uniform_share(1), 4), round(uniform_share(4), 4), uniform_share(4, first_query=63)   # L = 64
    (0.0443, 0.1774, 0.0625)
    """
    keys, cache = v.positive_int("keys", keys), v.positive_int("cache", cache)
    if not v._is_int(first_query) or not 0 <= first_query < cache:
        raise ValueError(f"first_query must be an integer in 0 … {cache - 1}, got {v._show(first_query)}")
    i = np.arange(first_query, cache)
    # mean over i of min(k, i + 1)/(i + 1)
    return float(np.mean(np.minimum(keys, i + 1) / (i + 1)))


def rows(held_out=False) -> dict:
    """``{seed: view}``: each stored row (:func:`results`) with arrays, and its fine-tunes (:func:`finetuned_bits`).

    A view holds ``"bits"`` {setting: (streams,)}, ``"sink_weight"``
    {"sinks", "sinks_cache": (streams, layers, heads)}, ``"first_weight"``,
    ``"first4_weight"`` (streams, layers, heads), ``"abf_se"`` (5,), and
    ``"finetuned"`` {method: (5,)} at ``"lengths"`` L … 16L.
    """
    table = results(held_out)
    return {row["seed"]: view_of(row, finetuned_bits(row["seed"], held_out=held_out)) for row in table["rows"]}


def view_of(row, finetuned) -> dict:
    """One seed's view (as :func:`rows` gives it) from its row (as ``make lab-inference`` writes it) and its
    fine-tunes' bits at L … 16L (``{"plain", "pi", "ntk", "yarn", "abf"}``, as :func:`finetuned_bits`)."""
    return {
        "bits": {k: np.asarray(b, float) for k, b in row["bits"].items()},
        "sink_weight": {k: np.asarray(w, float) for k, w in row["sink_weight"].items()},
        "first_weight": np.asarray(row["first_weight"], float),
        "first4_weight": np.asarray(row["first4_weight"], float),
        "finetuned": {m: np.asarray(b, float) for m, b in finetuned.items()},
        "abf_se": np.asarray(row["abf"]["se"], float),
        "lengths": tuple(row["abf"]["lengths"]),
    }


#: A claim's margin must be at least this many evaluation standard errors on every sweep seed (docs/CLAIMS.md's rule).
NOISE_RATIO = 4


@dataclasses.dataclass(frozen=True)
class Claim:
    """A sentence about the stored rows, and its check on one seed's view (:func:`rows`).

    ``measure(view)`` returns the numbers the sentence compares, each as
    ``(value, se)``: se is its evaluation noise (the standard error over the
    streams, or over the validation windows). The claim says every value lies
    above ``above`` and below ``below`` (None: open). Its margin on a seed is
    the smallest distance of a value from its bound (negative: it fails); its
    ratio the smallest margin/se.

    >>> c = Claim("x is small", lambda view: [(view["x"], 0.01)], below=0.1)
    >>> round(c.margin({"x": 0.04}), 3), round(c.ratio({"x": 0.04}), 1), c.holds({"x": 0.2})
    (0.06, 6.0, False)
    """

    text: str
    measure: Callable[[dict], list]
    above: float | None = None
    below: float | None = None

    def _margins(self, view):
        out = []
        for value, se in self.measure(view):
            sides = ([value - self.above] if self.above is not None else []) + (
                [self.below - value] if self.below is not None else [])
            out.append((min(sides), se, value))
        return out

    def margin(self, view) -> float:
        return min(m for m, _, _ in self._margins(view))

    def ratio(self, view) -> float:
        return min(m / se if se > 0 else math.inf for m, se, _ in self._margins(view))

    def value(self, view) -> float:
        """The value of the comparison closest to failing."""
        return min(self._margins(view))[2]

    def holds(self, view) -> bool:
        return self.margin(view) > 0


def _paired(view, x, y):
    # the mean over streams of bits[x] − bits[y], and its SE over the streams
    d = view["bits"][x] - view["bits"][y]
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))


def _every_head(w):
    # per layer and head: the mean over streams and its SE over the streams (w: (streams, layers, heads))
    mean, se = w.mean(0), w.std(0, ddof=1) / math.sqrt(w.shape[0])
    return list(zip(mean.ravel().tolist(), se.ravel().tolist(), strict=True))


def _all_heads(w):
    # the mean over layers and heads, its SE over the streams
    per_stream = w.mean((1, 2))
    return float(per_stream.mean()), float(per_stream.std(ddof=1) / math.sqrt(per_stream.size))


def _abf_minus(view, method, multiples):
    # ABF tuned − method tuned at multiples of L; SE √2 × ABF's SE over the validation windows (the other fine-tune's
    # SE taken equal, and the two not paired: an upper bound on the noise of the difference)
    L = view["lengths"][0]
    out = []
    for m in multiples:
        i = view["lengths"].index(m * L)
        out.append((float(view["finetuned"]["abf"][i] - view["finetuned"][method][i]), math.sqrt(2) * view["abf_se"][i]))
    return out


#: What the sweep's 8 RoPE models show (fixed on the sweep seeds, then checked on the held-out seed).
CLAIMS = [
    Claim("S1 the window alone (a) costs less than 0.01 bit per character against recomputing every window (d): "
          "no collapse when the first tokens leave the cache",
          lambda v: [_paired(v, "window", "recompute")], below=0.01),
    Claim("S2 sinks kept at their text positions (b) are more than 0.5 bit worse than recomputation (d)",
          lambda v: [_paired(v, "sinks", "recompute")], above=0.5),
    Claim("S3 StreamingLLM's cache positions (c) bring the sinks back within 0.02 bit of recomputation (d)",
          lambda v: [_paired(v, "sinks_cache", "recompute")], above=-0.02, below=0.02),
    Claim("S4 the sinks neither help nor hurt: (c) within 0.02 bit of the window alone (a)",
          lambda v: [_paired(v, "sinks_cache", "window")], above=-0.02, below=0.02),
    Claim("S5 no head makes the first token a sink: in windows from scratch (d), every layer and head puts less "
          "than half the uniform share (0.022) on position 0",
          lambda v: _every_head(v["first_weight"]), below=0.5 * uniform_share(1)),
    Claim("S6 in (b) the far sinks draw attention: more than 0.15 of the weight on the 4 sinks, averaged over layers "
          "and heads (uniform: 4/64 = 0.0625)",
          lambda v: [_all_heads(v["sink_weight"]["sinks"])], above=0.15),
    Claim("S7 in (c) the sinks get less than their uniform share: below 4/64 = 0.0625, averaged over layers and heads",
          lambda v: [_all_heads(v["sink_weight"]["sinks_cache"])], below=uniform_share(SINKS, first_query=CACHE - 1)),
    Claim("F1 ABF tuned beats PI tuned by more than 0.2 bit at L, 2L, 4L and 8L",
          lambda v: _abf_minus(v, "pi", (1, 2, 4, 8)), below=-0.2),
    Claim("F2 ABF tuned and YaRN tuned agree within 0.1 bit from L to 4L (the fine-tune's length)",
          lambda v: _abf_minus(v, "yarn", (1, 2, 4)), above=-0.1, below=0.1),
    Claim("F3 at 8L ABF tuned beats YaRN tuned and NTK tuned by more than 0.15 bit",
          lambda v: _abf_minus(v, "yarn", (8,)) + _abf_minus(v, "ntk", (8,)), below=-0.15),
    Claim("F4 at 16L ABF tuned breaks: more than 0.5 bit behind plain RoPE tuned",
          lambda v: _abf_minus(v, "plain", (16,)), above=0.5),
]


def check(views, claims=None) -> dict:
    """``{claim text: {seed: holds}}`` for every claim (default :data:`CLAIMS`) on every seed's view."""
    claims = CLAIMS if claims is None else claims
    return {c.text: {seed: c.holds(view) for seed, view in views.items()} for c in claims}


def margins(views, claims=None) -> dict:
    """Per claim: the median and range over the seeds of its value closest to failing, and its worst seed.

    ``{text: {"median", "low", "high", "margin", "ratio", "seed", "k", "n"}}``: ``margin`` and ``ratio`` are
    the smallest over the seeds (``seed`` where the margin is smallest), ``k`` of ``n`` seeds hold.
    """
    claims = CLAIMS if claims is None else claims
    if not views:
        raise ValueError("views must hold at least one seed's view, got none")
    out = {}
    for c in claims:
        values = np.array([c.value(view) for view in views.values()])
        worst = min(views, key=lambda s: c.margin(views[s]))
        out[c.text] = {"median": float(np.median(values)), "low": float(values.min()), "high": float(values.max()),
                       "margin": c.margin(views[worst]), "ratio": min(c.ratio(view) for view in views.values()),
                       "seed": worst, "k": sum(c.holds(view) for view in views.values()), "n": len(views)}
    return out


def report(views, claims=None) -> str:
    """:func:`margins` as text: a line per claim: seeds that hold, median [range], worst margin, margin/SE."""
    lines = [f"{'holds':>5} {'median [lowest, highest]':>26} {'margin':>7} {'/SE':>6}  claim"]
    for text, m in margins(views, claims).items():
        spread = f"{m['median']:.3f} [{m['low']:.3f}, {m['high']:.3f}]"
        lines.append(f"{m['k']:>2}/{m['n']:<2} {spread:>26} {m['margin']:>7.3f} {min(m['ratio'], 999):>6.1f}  {text}")
    return "\n".join(lines)
