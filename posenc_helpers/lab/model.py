"""A tiny causal transformer in plain JAX, with one switch for the positional scheme.

Read it top to bottom, in the order the data meets it: the config, the
parameters, the embedding (where "learned" and "sinusoidal" add positions),
attention (where "rope" rotates q and k and "alibi" biases the logits), the
MLP, a pre-norm block, the model, and the loss. ``"none"`` (NoPE) adds no
position anywhere: the causal mask alone tells a token how many came before it.

The scheme enters in exactly three small functions, each built on the course's
own helpers: :func:`add_positions` (``sinusoidal``), :func:`rotate_qk` (the pair
rotation of ``rope``, with frequencies from ``frequencies`` or
``scaled_frequencies``) and :func:`bias_logits` (``alibi_bias``).
Taught in notebooks/12-extrapolation-lab.ipynb and 13-trained-heads.ipynb.

>>> import jax
>>> config = Config(scheme="rope")
>>> params = init(jax.random.key(0), config)
>>> tokens = jax.numpy.zeros((2, 10), dtype="int32")
>>> forward(params, tokens, config).shape      # (batch, T, vocab)
(2, 10, 16)
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..core import alibi_bias, frequencies, sinusoidal

__all__ = [
    "SCHEMES",
    "SCHEME_TITLES",
    "Config",
    "check_scheme",
    "init",
    "count_params",
    "add_positions",
    "rotate_qk",
    "bias_logits",
    "attention",
    "forward",
    "loss_fn",
]

#: Every positional scheme the model knows.
SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi")

#: How each scheme is labelled in figures and tables.
SCHEME_TITLES = {
    "none": "NoPE",
    "learned": "learned table",
    "sinusoidal": "sinusoidal",
    "rope": "RoPE",
    "alibi": "ALiBi",
}


def check_scheme(scheme) -> str:
    """Return ``scheme`` if it is known, else a ValueError listing the valid names.

    >>> check_scheme("t5")
    Traceback (most recent call last):
    ...
    ValueError: scheme must be one of 'none', 'learned', 'sinusoidal', 'rope', 'alibi', got 't5'
    """
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        names = ", ".join(repr(s) for s in SCHEMES)
        raise ValueError(f"scheme must be one of {names}, got {scheme!r}")
    return scheme


@dataclasses.dataclass(frozen=True)
class Config:
    """Everything that fixes the model's shape. Frozen, so ``jax.jit`` can take it as a static argument."""

    scheme: str = "rope"  # one of SCHEMES
    vocab: int = 16  # token ids 0 … vocab − 1
    d_model: int = 64  # width of the residual stream
    heads: int = 4  # attention heads per layer
    layers: int = 2  # transformer blocks
    mlp_ratio: int = 4  # MLP hidden width = mlp_ratio · d_model
    train_len: int = 32  # the length of every training sequence (and of the learned table)
    base: float = 10000.0  # RoPE's and the sinusoids' frequency base

    def __post_init__(self):
        check_scheme(self.scheme)
        for name in ("vocab", "d_model", "heads", "layers", "mlp_ratio", "train_len"):
            v.positive_int(name, getattr(self, name))
        v.base_value(self.base)
        if self.d_model % self.heads:
            raise ValueError(f"d_model must be a multiple of heads, got d_model={self.d_model} and heads={self.heads}")
        if self.scheme == "rope" and self.head_dim % 2:
            raise ValueError(
                f"RoPE rotates pairs, so the head dimension d_model/heads must be even, "
                f"got {self.d_model}/{self.heads} = {self.head_dim}"
            )
        if self.scheme == "sinusoidal" and self.d_model % 2:
            raise ValueError(f"the sinusoidal table needs an even d_model, got {self.d_model}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


# ---- parameters: a nested dict of arrays -------------------------------------------------------


def init(key, config: Config) -> dict:
    """Random parameters for ``config``: a nested dict of float32 arrays.

    Weights are normal with standard deviation 1/√(fan-in); LayerNorm gains
    start at 1 and biases at 0. Only ``"learned"`` has a ``"pos"`` table, of
    shape (train_len, d_model).
    """
    d, h = config.d_model, config.mlp_ratio * config.d_model
    keys = iter(jax.random.split(key, 4 + 4 * config.layers))

    def dense(n_in, n_out):
        return jax.random.normal(next(keys), (n_in, n_out)) / math.sqrt(n_in)

    params = {"embed": jax.random.normal(next(keys), (config.vocab, d))}
    if config.scheme == "learned":
        params["pos"] = jax.random.normal(next(keys), (config.train_len, d))
    params["blocks"] = [
        {
            "ln1": {"gain": jnp.ones(d), "bias": jnp.zeros(d)},
            "qkv": dense(d, 3 * d),
            "out": dense(d, d),
            "ln2": {"gain": jnp.ones(d), "bias": jnp.zeros(d)},
            "mlp_in": dense(d, h),
            "mlp_in_bias": jnp.zeros(h),
            "mlp_out": dense(h, d),
            "mlp_out_bias": jnp.zeros(d),
        }
        for _ in range(config.layers)
    ]
    params["ln_f"] = {"gain": jnp.ones(d), "bias": jnp.zeros(d)}
    params["unembed"] = dense(d, config.vocab)
    return params


def count_params(params) -> int:
    """Number of trainable numbers in ``params``."""
    return int(sum(np.size(p) for p in jax.tree_util.tree_leaves(params)))


# ---- where position enters: three small functions ------------------------------------------------


def add_positions(x, params, config: Config):
    """Absolute schemes add a position vector to each token's embedding.

    ``"learned"`` adds row t of the trained table, which only has
    ``train_len`` rows: a longer input raises a ValueError naming both.
    ``"sinusoidal"`` adds ``sinusoidal(t, d_model)``, the course's own table.
    Every other scheme returns x unchanged.
    """
    # x: (batch, T, d_model)
    T = x.shape[1]
    if config.scheme == "learned":
        table = params["pos"]
        if T > table.shape[0]:
            raise ValueError(
                f"the learned table has {table.shape[0]} rows (its training length), "
                f"so it cannot embed a sequence of length {T}"
            )
        # x_t ← x_t + P[t]
        return x + table[:T]
    if config.scheme == "sinusoidal":
        # x_t ← x_t + PE(t), PE from the course's sinusoidal(): (T, d_model)
        return x + jnp.asarray(sinusoidal(np.arange(T), config.d_model, config.base), dtype=x.dtype)
    return x


def rotate_qk(q, k, omega):
    """Rotate every (even, odd) pair of q and k at position t by the angle t·ω_k, as ``rope`` does.

    ``omega`` holds one frequency per pair (head_dim/2 of them), normally
    ``frequencies(head_dim, base)``; a test-time scaling method passes
    ``scaled_frequencies(...)`` instead.
    """
    # q, k: (batch, heads, T, head_dim); omega: (head_dim/2,)
    T = q.shape[2]
    # θ[t, k] = t·ω_k: (T, head_dim/2)
    theta = jnp.arange(T, dtype=q.dtype)[:, None] * jnp.asarray(omega, dtype=q.dtype)
    cos, sin = jnp.cos(theta), jnp.sin(theta)

    def turn(x):
        a, b = x[..., 0::2], x[..., 1::2]
        # (a, b) → (a cos θ − b sin θ, a sin θ + b cos θ), then interleave back
        return jnp.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)

    return turn(q), turn(k)


def bias_logits(logits, config: Config):
    """ALiBi adds −slope_h·|i − j| to head h's logits: the course's ``alibi_bias``. Other schemes pass through."""
    # logits: (batch, heads, T, T)
    if config.scheme != "alibi":
        return logits
    T = logits.shape[-1]
    return logits + jnp.asarray(alibi_bias(T, config.heads), dtype=logits.dtype)


# ---- the model ---------------------------------------------------------------------------------


def _layer_norm(x, p):
    # (x − mean) / √(var + ε) · gain + bias, over the last axis
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * p["gain"] + p["bias"]


def attention(x, block, config: Config, *, omega=None, logit_scale=1.0):
    """Causal multi-head self-attention; returns ``(output, weights)``.

    ``weights[b, h, i, j]`` is how much query i of head h reads key j (zero for
    j > i). RoPE rotates q and k by ``omega`` (default: ``frequencies(head_dim,
    base)``); ``logit_scale`` multiplies the logits (YaRN's temperature).
    """
    B, T, d = x.shape
    H, Dh = config.heads, config.head_dim
    # q, k, v: (batch, heads, T, head_dim)
    q, k, val = (x @ block["qkv"]).reshape(B, T, 3, H, Dh).transpose(2, 0, 3, 1, 4)
    if config.scheme == "rope":
        q, k = rotate_qk(q, k, frequencies(Dh, config.base) if omega is None else omega)
    # logits[b, h, i, j] = q_i · k_j / √head_dim: (batch, heads, T, T)
    logits = jnp.einsum("bhid,bhjd->bhij", q, k) * (logit_scale / math.sqrt(Dh))
    logits = bias_logits(logits, config)
    causal = jnp.tril(jnp.ones((T, T), dtype=bool))
    logits = jnp.where(causal, logits, -jnp.inf)
    weights = jax.nn.softmax(logits, axis=-1)
    # out: (batch, heads, T, head_dim) → (batch, T, d_model)
    out = jnp.einsum("bhij,bhjd->bhid", weights, val).transpose(0, 2, 1, 3).reshape(B, T, d)
    return out @ block["out"], weights


def _mlp(x, block):
    # x → W_out · gelu(W_in · x + b_in) + b_out
    return jax.nn.gelu(x @ block["mlp_in"] + block["mlp_in_bias"]) @ block["mlp_out"] + block["mlp_out_bias"]


def forward(params, tokens, config: Config, *, omega=None, logit_scale=1.0, return_attention=False):
    """Logits for every position: (batch, T, vocab). Pure: no state, no globals.

    With ``return_attention=True`` it returns ``(logits, weights)``, the weights
    of shape (layers, batch, heads, T, T). ``omega`` and ``logit_scale`` are the
    test-time RoPE scaling knobs of :func:`attention`.
    """
    # x: (batch, T, d_model)
    x = params["embed"][tokens]
    x = add_positions(x, params, config)
    maps = []
    for block in params["blocks"]:
        # pre-norm residual block: x ← x + attn(LN(x)); x ← x + mlp(LN(x))
        out, weights = attention(_layer_norm(x, block["ln1"]), block, config, omega=omega, logit_scale=logit_scale)
        x = x + out
        x = x + _mlp(_layer_norm(x, block["ln2"]), block)
        maps.append(weights)
    # logits: (batch, T, vocab)
    logits = _layer_norm(x, params["ln_f"]) @ params["unembed"]
    if return_attention:
        return logits, jnp.stack(maps)
    return logits


def loss_fn(params, tokens, target, mask, config: Config, *, omega=None, logit_scale=1.0):
    """Mean cross-entropy over the scored positions (where ``mask`` is True).

    ``omega`` and ``logit_scale`` go to :func:`forward`: a fine-tune with
    rescaled RoPE frequencies trains with them (see :func:`.train.finetune`).
    """
    logits = forward(params, tokens, config, omega=omega, logit_scale=logit_scale)
    # −log p(target) at each position: (batch, T)
    nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), target[..., None], axis=-1)[..., 0]
    return (nll * mask).sum() / mask.sum()
