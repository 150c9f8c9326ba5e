"""Retrieval past L: passkey accuracy by depth and by length, the grid long-context papers draw as a heat map.

A model trained on the ``"passkey"`` task (:func:`.tasks.passkey_batch`: a
marker and K = 3 key tokens hidden in filler, asked for by the marker at the
end) is scored cell by cell: at every test length T and every depth d (the
fraction of the filler placed before the needle, 0 = the needle opens the
sequence, 1 = it sits right before the query), on a test batch of its own. A
cell gives two accuracies: the whole key right (every one of its K tokens,
which is what greedy decoding from the marker would write out) and per
token. This is the "needle in a haystack" grid (depth down, context length
across) and RULER's single-needle test in miniature. The RoPE rescalings
(PI, NTK, YaRN, log-n) apply exactly as in :func:`.evaluate.evaluate`, so
their effect on retrieval can be read cell by cell. The plot is
:func:`posenc_helpers.viz.passkey.plot_passkey_grid`.

Nothing here trains; a run comes from ``lab.train(scheme, "passkey")``.
"""

from __future__ import annotations

import math
import numbers

import jax
import numpy as np

from .. import _validate as v
from .evaluate import _TEST_SEED, EVAL_BATCH, _check_logn, _lengths, _own_rescaling, _rescaling, _scores, position_key
from .tasks import PASSKEY_LEN, _depth, _passkey_sizes, chance, passkey_batch

__all__ = ["DEPTHS", "GRID_LENGTHS", "chance_key", "cell_batch", "passkey_grid"]

#: Depths of the default grid: the needle at the start of the filler, a quarter, half, three quarters in, at its end.
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)

#: Lengths of the default grid: the training length 32 up to 8× it.
GRID_LENGTHS = (32, 64, 128, 256)


def chance_key(key_len=PASSKEY_LEN) -> float:
    """The chance that a guess with no position information writes the whole key: 1/K!.

    A guess that knows the K key tokens (they are the only tokens of their
    part of the vocabulary) but not their order picks one of the K − i not
    yet written at answer i, so it writes the whole key with probability
    (1/K)·(1/(K − 1))·…·(1/1) = 1/K!. Per token it scores
    ``chance("passkey", vocab)`` = H_K/K.

    >>> chance_key(), chance_key(2)        # 1/3!, 1/2!
    (0.16666666666666666, 0.5)
    """
    return 1.0 / math.factorial(v.positive_int("key_len", key_len))


def _depths(depths) -> list:
    if isinstance(depths, (numbers.Real, np.integer, np.floating)) and not isinstance(depths, (bool, np.bool_)):
        depths = [depths]
    if isinstance(depths, (str, bytes)):
        raise TypeError(f"depths must be a fraction in [0, 1] or a list of them, got {v._show(depths)}")
    try:
        items = list(depths)
    except TypeError:
        raise TypeError(f"depths must be a fraction in [0, 1] or a list of them, got {v._show(depths)}") from None
    if not items:
        raise ValueError("depths must hold at least one depth, got an empty list")
    return [_depth(d) for d in items]


def cell_batch(length, depth, *, seed=0, batch=EVAL_BATCH, vocab=16):
    """The test batch ``(tokens, target, mask)`` of one grid cell: ``length`` tokens, the needle at ``depth``.

    Drawn by :func:`.tasks.passkey_batch` with ``depth`` from the key
    ``fold_in(key(1_000_003 + seed), length)``, the key of
    :func:`.evaluate.test_batch` at that length (never a training batch).
    The filler and the key depend on the key alone, so the cells of one
    length share their haystacks and keys: only the needle moves.

    >>> tokens, target, mask = cell_batch(12, 1.0, batch=2)    # F = 12 − 7 = 5, depth 1: a = 5
    >>> tokens[:, 5].tolist(), tokens[:, 9].tolist(), int(mask.sum())   # the marker 15 at a and at T − K = 9
    ([15, 15], [15, 15], 6)
    """
    length = v.positive_int("length", length)
    key = jax.random.fold_in(jax.random.key(_TEST_SEED + seed), length)
    return passkey_batch(key, batch=batch, length=length, vocab=vocab, depth=depth)


def passkey_grid(
    run, lengths=GRID_LENGTHS, depths=DEPTHS, *, seed=0, batch=EVAL_BATCH, method=None, factor=None, logn=False,
    beta_fast=None, beta_slow=None,
) -> dict:
    """Passkey accuracy of ``run`` at every (depth, length): the whole key and per token.

    For depth d_i and length T_j the cell's batch is :func:`cell_batch`
    (``batch`` sequences, the needle after ⌊d_i·F⌋ of the F = T_j − 2K − 1
    filler tokens). With c[b, n] = 1 when the model's most likely token at
    answer n of sequence b is the key's token n (teacher forcing: the query
    holds the key's earlier tokens),

        key[i, j]   = (1/B) Σ_b Π_n c[b, n]          (the whole key right)
        token[i, j] = (1/(B·K)) Σ_b Σ_n c[b, n]      (per token),

    B = ``batch``, K = :data:`.tasks.PASSKEY_LEN`. The whole key is right under
    teacher forcing exactly when greedy decoding from the query's marker
    writes it. ``method``, ``factor``, ``logn``, ``beta_fast`` and
    ``beta_slow`` rescale as in :func:`.evaluate.evaluate` (``factor=None``:
    T_j/L at each length, at least 1; a fine-tuned run uses its own
    rescaling). A learned table cannot run past its length: those columns
    are NaN. Returns ``{"key": (D, N), "token": (D, N), "depths": (D,),
    "lengths": (N,), "train_len": L, "batch": B, "chance": {"key": 1/K!,
    "token": H_K/K}}`` (D depths, N lengths).

    >>> from posenc_helpers.lab.model import Config, init
    >>> from posenc_helpers.lab.train import Run
    >>> config = Config(scheme="alibi", d_model=16, heads=2, layers=1, train_len=8)   # untrained, L = 8
    >>> run = Run("alibi", "passkey", 8, init(jax.random.key(0), config), np.zeros(1), config, 0, 1)
    >>> grid = passkey_grid(run, [12], [0.0, 1.0], batch=2)
    >>> grid["key"].shape, grid["depths"].tolist(), grid["lengths"].tolist(), grid["chance"]["key"]
    ((2, 1), [0.0, 1.0], [12], 0.16666666666666666)
    >>> passkey_grid(run, [6], [0.5])
    Traceback (most recent call last):
    ...
    ValueError: length must be at least 2·key_len + 1 = 7 (needle: marker + 3 key tokens; query: marker + 2 echoes), got 6
    """
    if getattr(run, "task", None) != "passkey":
        raise ValueError(f"passkey_grid needs a run trained on 'passkey', got task {getattr(run, 'task', None)!r}")
    lengths = _lengths(lengths)
    depths = _depths(depths)
    batch = v.positive_int("batch", batch)
    logn = _check_logn(logn)
    config = run.config
    for T in lengths:
        _passkey_sizes(T, config.vocab, PASSKEY_LEN)  # every length fits the needle and the query, before any work
    method, factor = _own_rescaling(run, method, factor)
    key = np.full((len(depths), len(lengths)), np.nan)
    token = np.full((len(depths), len(lengths)), np.nan)
    for j, T in enumerate(lengths):
        if config.scheme == "learned" and T > run.train_len:
            continue  # cannot run: the table has train_len rows
        omega, scale = _rescaling(run, T, method, factor, logn, beta_fast, beta_slow)
        for i, d in enumerate(depths):
            tokens, target, mask = cell_batch(T, d, seed=seed, batch=batch, vocab=config.vocab)
            correct, _ = _scores(
                run.params, tokens, target, mask, omega, scale, position_key(config, T, seed=seed), config=config
            )
            # right[b]: how many of the K answers of sequence b are right
            right = np.asarray(correct).sum(axis=1)
            key[i, j] = float((right == PASSKEY_LEN).mean())
            token[i, j] = float(right.sum()) / (batch * PASSKEY_LEN)
    return {
        "key": key,
        "token": token,
        "depths": np.array(depths),
        "lengths": np.array(lengths),
        "train_len": run.train_len,
        "batch": batch,
        "chance": {"key": chance_key(), "token": chance("passkey", config.vocab)},
    }
