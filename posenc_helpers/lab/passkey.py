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
from .evaluate import (
    _TEST_SEED,
    EVAL_BATCH,
    EVAL_CHUNK,
    EVAL_SEQUENCES,
    _check_logn,
    _check_sequences,
    _lengths,
    _own_rescaling,
    _rescaling,
    _scores,
    position_key,
    test_key,
)
from .tasks import PASSKEY_LEN, _depth, _passkey_sizes, chance, passkey_batch

__all__ = ["DEPTHS", "GRID_LENGTHS", "chance_key", "cell_batch", "passkey_grid", "haystack_scores", "far_summary"]

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


def cell_batch(length, depth, *, seed=0, batch=EVAL_BATCH, vocab=16, test_set=0):
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
    if test_set == 0:  # as before test sets existed: the same batches, bit for bit
        key = jax.random.fold_in(jax.random.key(_TEST_SEED + seed), length)
    else:  # an independent test set (test_set >= 1), as evaluate.test_key draws one
        key = test_key(length, seed=seed, test_set=test_set)
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


def haystack_scores(
    run, lengths=GRID_LENGTHS, depths=DEPTHS, *, seed=0, sequences=EVAL_SEQUENCES, test_set=0, method=None,
    factor=None, logn=False, beta_fast=None, beta_slow=None,
) -> dict:
    """Whole-key scores per haystack: the grid of :func:`passkey_grid`, kept sequence by sequence.

    ``{"whole": (D, N, n), "right": (D, N, n), "distance": (D, N), "depths",
    "lengths", "train_len", "sequences"}``: ``right[i, j, b]`` counts the
    key's tokens it gets right, and ``whole[i, j, b]`` is 1 when the model writes
    the whole key of haystack b at depth d_i and length T_j (teacher forcing,
    as :func:`passkey_grid` scores it), 0 when not, NaN where the scheme cannot
    run; ``distance[i, j]`` is how many positions the needle's first key token
    lies before the query's marker. The depths of one length share their
    haystacks and keys (:func:`cell_batch`: only the needle moves), so the
    haystack, not the (haystack, depth) pair, is the unit that fails
    independently: :func:`far_summary` averages over depths within a haystack
    first. ``sequences`` haystacks run in chunks of
    :data:`.evaluate.EVAL_CHUNK`; a randomized scheme draws its positions per
    chunk as :func:`.evaluate.sequence_scores` does. Other arguments as in
    :func:`passkey_grid`; ``test_set`` ≥ 1 draws an independent set of
    haystacks.
    """
    if getattr(run, "task", None) != "passkey":
        raise ValueError(f"haystack_scores needs a run trained on 'passkey', got task {getattr(run, 'task', None)!r}")
    lengths, depths = _lengths(lengths), _depths(depths)
    sequences = _check_sequences(sequences)
    logn = _check_logn(logn)
    config = run.config
    for T in lengths:
        _passkey_sizes(T, config.vocab, PASSKEY_LEN)
    method, factor = _own_rescaling(run, method, factor)
    whole = np.full((len(depths), len(lengths), sequences), np.nan)
    counts = np.full((len(depths), len(lengths), sequences), np.nan)
    distance = np.zeros((len(depths), len(lengths)), dtype=int)
    chunk = min(EVAL_CHUNK, sequences)
    for j, T in enumerate(lengths):
        omega, scale = _rescaling(run, T, method, factor, logn, beta_fast, beta_slow)
        pkey = position_key(config, T, seed=seed, test_set=test_set)
        for i, d in enumerate(depths):
            tokens, target, mask = cell_batch(T, d, seed=seed, batch=sequences, vocab=config.vocab, test_set=test_set)
            markers = np.argmax(np.asarray(tokens) == config.vocab - 1, axis=1)  # the needle's marker comes first
            if len(set(markers.tolist())) != 1:
                raise AssertionError(f"depth {d} at length {T}: the needle moved between haystacks")
            distance[i, j] = (T - PASSKEY_LEN) - (int(markers[0]) + 1)
            if config.scheme == "learned" and T > run.train_len:
                continue  # cannot run: the table has train_len rows
            right = []
            for b in range(0, sequences, chunk):
                key = None if pkey is None else jax.random.fold_in(pkey, b // chunk)
                correct, _ = _scores(run.params, tokens[b:b + chunk], target[b:b + chunk], mask[b:b + chunk], omega,
                                     scale, key, config=config)
                right.append(np.asarray(correct).sum(axis=1))
            counts[i, j] = np.concatenate(right)
            whole[i, j] = (counts[i, j] == PASSKEY_LEN).astype(float)
    return {"whole": whole, "right": counts, "distance": distance, "depths": np.array(depths), "lengths": np.array(lengths),
            "train_len": run.train_len, "sequences": sequences}


def far_summary(scores) -> dict:
    """Whole-key accuracy past L, counted by haystack, from :func:`haystack_scores`.

    At each length, only the depths whose needle lies more than L before the
    query count ("far"); each haystack scores the mean of its whole keys over
    those depths, and the length's value is the mean over haystacks with its
    SE over them (:func:`.stats.summarize`). Also each depth alone:
    ``{"far": (N,), "far_se": (N,), "far_depths": (D, N) bool, "key": (D, N),
    "key_se": (D, N)}``, NaN where no depth is far or the scheme cannot run.

    >>> whole = np.zeros((2, 1, 4)); whole[0, 0] = [1, 1, 0, 1]; whole[1, 0] = 1
    >>> out = far_summary({"whole": whole, "distance": np.array([[40], [3]]), "train_len": 32})
    >>> out["far"].tolist(), out["far_depths"][:, 0].tolist(), out["key"][:, 0].tolist()
    ([0.75], [True, False], [0.75, 1.0])
    """
    from .stats import summarize

    whole, distance, L = np.asarray(scores["whole"], dtype=float), np.asarray(scores["distance"]), scores["train_len"]
    D, N, _ = whole.shape
    far_depths = distance > L
    out = {k: np.full(N, np.nan) for k in ("far", "far_se")}
    out.update({k: np.full((D, N), np.nan) for k in ("key", "key_se")})
    out["far_depths"] = far_depths
    for j in range(N):
        for i in range(D):
            if not np.isnan(whole[i, j]).any():
                score = summarize(whole[i, j])
                out["key"][i, j], out["key_se"][i, j] = score.value, score.se
        rows = whole[far_depths[:, j], j]  # (far depths, haystacks)
        if rows.size and not np.isnan(rows).any():
            score = summarize(rows.mean(axis=0))  # each haystack's mean over the far depths
            out["far"][j], out["far_se"][j] = score.value, score.se
    return out
