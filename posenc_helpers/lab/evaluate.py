"""Evaluation: accuracy and loss at any test length, test-time RoPE scaling, attention weights.

Test batches come from their own seed (different from training's), so a model
is scored on sequences it never saw. Every new length compiles the forward pass
anew, so the notebooks evaluate a fixed list of lengths once and reuse it.
Taught in notebooks/12-extrapolation-lab.ipynb and 13-trained-heads.ipynb.
"""

from __future__ import annotations

import functools
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..core import frequencies
from ..scaling import scaled_frequencies, yarn_attention_factor
from .model import forward
from .tasks import make_batch

__all__ = [
    "LENGTHS", "SCALINGS", "EVAL_BATCH", "accuracy", "evaluate", "attention", "test_batch", "rope_scaling",
    "attention_by_distance", "learned_similarity", "rope_pair_usage",
]

#: Test lengths of the headline figure: the training length 32 up to 8× it.
LENGTHS = (32, 64, 128, 256)

#: Test-time RoPE scaling methods (from posenc_helpers.scaling), applied with no fine-tuning.
SCALINGS = ("pi", "ntk", "yarn")

#: Sequences per test batch.
EVAL_BATCH = 32

#: Offset that keeps test seeds apart from training seeds.
_TEST_SEED = 1_000_003


def _lengths(lengths):
    if isinstance(lengths, (numbers.Integral, np.integer)) and not isinstance(lengths, bool):
        lengths = [lengths]
    try:
        items = list(lengths)
    except TypeError:
        raise TypeError(f"lengths must be an integer or a list of integers, got {lengths!r}") from None
    if not items:
        raise ValueError("lengths must hold at least one length, got an empty list")
    return [v.positive_int("length", n) for n in items]


def test_batch(task, length, *, seed=0, batch=EVAL_BATCH, vocab=16):
    """The test batch ``(tokens, target, mask)`` of ``length`` tokens for ``seed``: never a training batch."""
    length = v.positive_int("length", length)
    key = jax.random.key(_TEST_SEED + seed)
    return make_batch(task, jax.random.fold_in(key, length), batch=batch, length=length, vocab=vocab)


def rope_scaling(run, method, factor, *, beta_fast=None, beta_slow=None):
    """``(omega, logit_scale)`` for evaluating a RoPE run at ``factor`` × its training length, no fine-tuning.

    ``omega`` is ``scaled_frequencies(head_dim, base, method, factor,
    original_max_position=train_len)``; ``logit_scale`` is 1, except YaRN's
    (0.1·ln s + 1)², its temperature applied to q and k alike. ``method=None``
    gives the trained frequencies. ``beta_fast`` and ``beta_slow`` (YaRN only)
    are the ramp's thresholds β and α in turns within the training length;
    None keeps ``scaled_frequencies``' defaults, the paper's β = 32, α = 1 set
    for LLaMA's L = 4,096: with L = 32 they keep no pair of this model at its
    trained frequency. β = 4, α = 1 (the thresholds of Llama 3.1's rule, see
    :mod:`posenc_helpers.scaling`) keep the fastest pair, which turns about 5
    times within L = 32.

    >>> from posenc_helpers.lab.model import Config
    >>> class R: config = Config(scheme="rope", d_model=16, heads=4); train_len = 32
    >>> omega, scale = rope_scaling(R, "pi", 4)
    >>> omega.round(4), scale                         # [1, 0.01] / 4, head_dim 4
    (array([0.25  , 0.0025]), 1.0)
    """
    config = run.config
    if config.scheme != "rope":
        raise ValueError(f"test-time RoPE scaling needs a RoPE model, got scheme {config.scheme!r}")
    if method is None:
        if beta_fast is not None or beta_slow is not None:
            raise ValueError("beta_fast and beta_slow are YaRN's thresholds, got them with method None")
        return frequencies(config.head_dim, config.base), 1.0
    if method not in SCALINGS:
        raise ValueError(f"method must be one of {', '.join(map(repr, SCALINGS))} or None, got {method!r}")
    thresholds = {k: val for k, val in (("beta_fast", beta_fast), ("beta_slow", beta_slow)) if val is not None}
    if thresholds and method != "yarn":
        raise ValueError(f"beta_fast and beta_slow are YaRN's thresholds, got them with method {method!r}")
    omega = scaled_frequencies(
        config.head_dim, config.base, method, factor, original_max_position=run.train_len, **thresholds
    )
    scale = yarn_attention_factor(factor) ** 2 if method == "yarn" else 1.0
    return omega, scale


@functools.partial(jax.jit, static_argnames=("config",))
def _scores(params, tokens, target, mask, omega, logit_scale, *, config):
    logits = forward(params, tokens, config, omega=omega, logit_scale=logit_scale)
    # correct[b, t] and −log p(target)[b, t]: (batch, T)
    correct = (logits.argmax(-1) == target) & mask
    nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), target[..., None], axis=-1)[..., 0] * mask
    return correct, nll


def evaluate(run, lengths, *, seed=0, method=None, factor=None, positions="all", beta_fast=None, beta_slow=None):
    """Accuracy and loss per test length: ``{"accuracy": array, "loss": array}``.

    ``positions="all"`` scores every position with an answer; ``"beyond"``
    only those at or past the training length (every length must then exceed
    it), which removes the floor the first L positions set. ``method`` and
    ``factor`` apply test-time RoPE scaling (see :func:`rope_scaling`, which
    also takes YaRN's ``beta_fast`` and ``beta_slow``); with
    ``factor=None`` the factor is each length ÷ the training length (at least 1).
    Entries are NaN only where the scheme cannot run: the learned table past
    its length.

    A fine-tuned run (from :func:`.train.finetune`) is evaluated with the
    rescaling it was fine-tuned with: ``method=None, factor=None`` then mean
    its own ``run.method`` at its own ``run.factor`` at every length (pass a
    method to evaluate it otherwise); ``"beyond"`` is past its original L.
    """
    lengths = _lengths(lengths)
    if positions not in ("all", "beyond"):
        raise ValueError(f"positions must be 'all' or 'beyond', got {positions!r}")
    config = run.config
    if method is None and factor is None and getattr(run, "factor", None) is not None:
        method, factor = run.method, run.factor  # a fine-tuned run: its own rescaling
    acc = np.full(len(lengths), np.nan)
    loss = np.full(len(lengths), np.nan)
    for i, T in enumerate(lengths):
        if positions == "beyond" and T <= run.train_len:
            raise ValueError(f"positions='beyond' needs lengths past the training length {run.train_len}, got {T}")
        if config.scheme == "learned" and T > run.train_len:
            continue  # cannot run: the table has train_len rows
        tokens, target, mask = test_batch(run.task, T, seed=seed, vocab=config.vocab)
        if positions == "beyond":
            mask = mask & (jnp.arange(T) >= run.train_len)
        if config.scheme == "rope":
            s = max(T / run.train_len, 1.0) if factor is None else factor
            omega, scale = rope_scaling(run, method, s, beta_fast=beta_fast, beta_slow=beta_slow)
        elif method is not None:
            raise ValueError(f"test-time RoPE scaling needs a RoPE model, got scheme {config.scheme!r}")
        else:
            omega, scale = np.zeros(max(config.head_dim // 2, 1)), 1.0
        correct, nll = _scores(
            run.params, tokens, target, mask, jnp.asarray(omega, jnp.float32), jnp.float32(scale), config=config
        )
        n = float(mask.sum())
        acc[i] = float(correct.sum()) / n
        loss[i] = float(nll.sum()) / n
    return {"accuracy": acc, "loss": loss}


def accuracy(
    run, lengths, *, seed=0, method=None, factor=None, positions="all", beta_fast=None, beta_slow=None
) -> np.ndarray:
    """Accuracy of ``run`` at each test length: one value per length, in [0, 1].

    The value is NaN only for a length the scheme cannot run: the learned
    table past its training length ("cannot run"; nothing is clamped). Other
    arguments as in :func:`evaluate`.

    >>> from posenc_helpers.lab.train import train
    >>> run = train("learned", "prev", steps=50, progress=False)
    >>> acc = accuracy(run, [32, 64])
    >>> bool(np.isnan(acc[1]))              # 64 > 32 table rows: cannot run
    True
    """
    return evaluate(
        run, lengths, seed=seed, method=method, factor=factor, positions=positions,
        beta_fast=beta_fast, beta_slow=beta_slow,
    )["accuracy"]


def attention(run, tokens) -> np.ndarray:
    """Attention weights of ``run`` on ``tokens`` (one sequence, shape (T,)): shape (layers, heads, T, T).

    ``weights[l, h, i, j]`` is how much query i reads key j in head h of layer l.
    A learned table past its length raises the ValueError of ``add_positions``.
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be one sequence of integer token ids, shape (T,), got {tokens.dtype} {tokens.shape}")
    if tokens.size == 0 or tokens.min() < 0 or tokens.max() >= run.config.vocab:
        raise ValueError(f"tokens must be ids in [0, {run.config.vocab}), got {tokens.size} tokens")
    _, maps = forward(run.params, jnp.asarray(tokens)[None], run.config, return_attention=True)
    # maps: (layers, batch = 1, heads, T, T)
    return np.asarray(maps[:, 0])


def attention_by_distance(maps) -> np.ndarray:
    """Mean attention weight at each distance d = i − j, over the queries that can reach it: (..., T).

    ``maps`` has shape (..., T, T) (query i, key j), e.g. the output of :func:`attention`.

    >>> w = np.array([[1.0, 0.0], [0.25, 0.75]])     # d = 0: (1 + 0.75)/2; d = 1: 0.25/1
    >>> attention_by_distance(w)
    array([0.875, 0.25 ])
    """
    maps = np.asarray(maps, dtype=float)
    T = maps.shape[-1]
    # profile[d] = mean over i ≥ d of w[i, i − d]
    return np.stack([np.diagonal(maps, -d, axis1=-2, axis2=-1).mean(-1) for d in range(T)], axis=-1)


def learned_similarity(run) -> np.ndarray:
    """Cosine similarity between every pair of rows of a trained learned table: (train_len, train_len)."""
    if run.config.scheme != "learned":
        raise ValueError(f"only the 'learned' scheme has a table, got scheme {run.config.scheme!r}")
    table = np.asarray(run.params["pos"], dtype=float)
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    # sim[m, n] = P[m]·P[n] / (|P[m]| |P[n]|)
    return unit @ unit.T


def rope_pair_usage(run, tokens) -> np.ndarray:
    """How much each RoPE pair contributes to the attention logits: (layers, heads, head_dim/2), rows sum to 1.

    For pair k the contribution is |q_k|·|k_k|, the largest value its term of
    q·k can take, averaged over every causal (query, key) pair of ``tokens``,
    then divided by the sum over pairs.
    """
    from .model import _layer_norm, _mlp
    from .model import attention as attend

    config = run.config
    if config.scheme != "rope":
        raise ValueError(f"pair usage needs a RoPE model, got scheme {config.scheme!r}")
    params = run.params
    x = params["embed"][jnp.asarray(tokens)[None]]
    B, T, d = x.shape
    H, Dh = config.heads, config.head_dim
    usage = []
    for block in params["blocks"]:
        h = _layer_norm(x, block["ln1"])
        # q, k: (heads, T, head_dim/2, 2) — a pair's norm does not change under rotation
        q, k, _ = (h @ block["qkv"]).reshape(T, 3, H, Dh // 2, 2).transpose(1, 2, 0, 3, 4)
        qn, kn = jnp.linalg.norm(q, axis=-1), jnp.linalg.norm(k, axis=-1)
        causal = np.tril(np.ones((T, T)))
        # u[h, k] = Σ_{j ≤ i} |q_ik|·|k_jk| / (number of causal pairs)
        u = jnp.einsum("hik,hjk,ij->hk", qn, kn, causal) / causal.sum()
        usage.append(np.asarray(u / u.sum(-1, keepdims=True)))
        out, _ = attend(h, block, config)
        x = x + out
        x = x + _mlp(_layer_norm(x, block["ln2"]), block)
    return np.stack(usage)
