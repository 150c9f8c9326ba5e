"""Synthetic tasks for the extrapolation lab, generated from a seed (nothing is downloaded).

Every task is a batch of random token sequences and, for each position, the
token the model must predict there. Positions that have no answer (the first
k of "k back") are masked out of the loss and the accuracy.

Headline tasks (every scheme learns them at the training length within the
notebook's budget):

* ``"prev"``: predict the previous token, target[t] = x[t − 1]: a local task.
* ``"first"``: predict the first token of the sequence, target[t] = x[0]: the
  answer sits ever further away.

Extra tasks (not every scheme learns them within the budget; an
in-distribution failure, never an extrapolation result), and the distance
task ``"half"`` (:data:`DISTANCE_TASKS`):

* ``"back3"``: predict the token exactly 3 back, target[t] = x[t − 3].
* ``"recall"`` (extra task): multi-query associative recall. The sequence opens
  with P = :data:`RECALL_PAIRS` = 8 key–value pairs at every test length (fewer
  only when the sequence or the vocabulary is too short: P = min(8, length // 4,
  vocab // 2)); keys are distinct, from the lower half of the vocabulary, values
  drawn with replacement from the upper half. The rest repeats keys, and at each
  repeated key the model must predict that key's value. The answer sits at
  a distance that varies from query to query, so no local rule solves it, and
  a longer sequence means more queries and longer distances, never more pairs.
  The pair is found by content, and every answer sits at one of the positions
  1, 3, …, 15, inside any training length of 16 or more: recall tests reaching
  back by content, not telling long distances apart. Its chance level,
  :func:`chance`, is that of guessing one of the values in context; guessing
  uniformly over the vocabulary is :func:`chance_uniform`.

* ``"half"``: predict the token at half the position, target[t] = x[⌊t/2⌋],
  scored from t = 1 on. The answer sits ⌈t/2⌉ back: a distance that grows
  with the position, so past L every answer lies further back than any
  answer of training (at most 16 at L = 32), and a scheme that only reads
  near tokens cannot score. Where the answer is depends on the query's
  position alone, not on content: the model must tell both where it is and
  how far back half of that lies.

Retrieval task (scored by depth and length with :mod:`.passkey`):

* ``"passkey"``: a needle in a haystack. The vocabulary V is split in three:
  filler tokens [0, ⌊V/2⌋), key tokens [⌊V/2⌋, V − 1) and one marker, V − 1.
  A sequence of T tokens is F = T − 2K − 1 filler tokens (uniform, with
  replacement) with the needle, the marker then K = :data:`PASSKEY_LEN` = 3
  distinct key tokens, inserted after the first a of them (a uniform in
  {0, …, F} in training; a = ⌊d·F⌋ for a depth d in [0, 1], see
  :func:`passkey_batch`); then the query: the marker again, followed by the
  key's first K − 1 tokens (teacher forcing). The answers are the key's K
  tokens, at the query's marker and at each of the K − 1 echoes, the last K
  positions; nothing else is scored. Every token of the answer is right
  exactly when greedy decoding from the marker writes the whole key.

Taught in notebooks/12-extrapolation-lab.ipynb.

>>> import jax
>>> tokens, target, mask = make_batch("prev", jax.random.key(0), batch=1, length=5, vocab=16)
>>> bool((target[0, 1:] == tokens[0, :-1]).all()), mask[0].tolist()   # target[t] = x[t − 1], t ≥ 1
(True, [False, True, True, True, True])
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import jax
import jax.numpy as jnp

from .. import _validate as v

__all__ = [
    "TASKS", "EXTRA_TASKS", "DISTANCE_TASKS", "ALL_TASKS", "TASK_TITLES", "RECALL_PAIRS", "check_task", "make_batch",
    "recall_pairs", "chance", "chance_uniform", "windows", "RETRIEVAL_TASKS", "PASSKEY_LEN", "passkey_batch",
    "passkey_position",
]

#: The headline tasks: every scheme learns them at the training length within the default budget.
TASKS = ("prev", "first")

#: Shown apart from the headline: not every scheme learns it within the notebook's budget.
EXTRA_TASKS = ("back3", "recall")

#: An answer at a distance that grows with the position: past L every answer lies further back than any of
#: training's, so no scheme is favoured for reading only near tokens (and not every scheme learns it at L).
DISTANCE_TASKS = ("half",)

#: Retrieval: a key at a controlled depth inside filler, asked for at the end (see :mod:`.passkey`).
RETRIEVAL_TASKS = ("passkey",)

ALL_TASKS = TASKS + EXTRA_TASKS + DISTANCE_TASKS + RETRIEVAL_TASKS

#: What each task asks, for titles and legends.
TASK_TITLES = {
    "prev": "previous token (k = 1)",
    "back3": "token 3 back (k = 3)",
    "first": "first token",
    "recall": "multi-query associative recall",
    "half": "token at half the position (x[⌊t/2⌋])",
    "passkey": "passkey retrieval (K = 3 key tokens)",
}

_BACK = {"prev": 1, "back3": 3}

#: Key–value pairs in a recall sequence, the same at every length ≥ 4·RECALL_PAIRS (see :func:`recall_pairs`).
RECALL_PAIRS = 8

#: Tokens K in a passkey's key (see :func:`passkey_batch`).
PASSKEY_LEN = 3


def check_task(task) -> str:
    """Return ``task`` if it is a known task name, else a ValueError listing the valid names.

    >>> check_task("copy")
    Traceback (most recent call last):
    ...
    ValueError: task must be one of 'prev', 'first', 'back3', 'recall', 'half', 'passkey', got 'copy'
    """
    if not isinstance(task, str) or task not in ALL_TASKS:
        names = ", ".join(repr(t) for t in ALL_TASKS)
        raise ValueError(f"task must be one of {names}, got {task!r}")
    return task


def make_batch(task, key, *, batch, length, vocab):
    """A batch of ``task``: ``(tokens, target, mask)``, each of shape (batch, length).

    ``tokens`` are int32 in [0, vocab); ``target[b, t]`` is the token to predict
    at position t; ``mask[b, t]`` is True where there is an answer to score.
    Pure in ``key``: the same key gives the same batch. Works inside ``jax.jit``
    (``batch``, ``length`` and ``vocab`` must be static there).
    """
    task = check_task(task)
    if task in _BACK:
        back = _BACK[task]
        # tokens: (batch, length), uniform over the vocabulary
        tokens = jax.random.randint(key, (batch, length), 0, vocab, dtype=jnp.int32)
        # target[t] = x[t − k]; the first k positions have no answer
        target = jnp.roll(tokens, back, axis=1)
        mask = jnp.broadcast_to(jnp.arange(length) >= back, (batch, length))
        return tokens, target, mask
    if task == "half":
        tokens = jax.random.randint(key, (batch, length), 0, vocab, dtype=jnp.int32)
        # target[t] = x[⌊t/2⌋], ⌈t/2⌉ back; scored from t = 1 on (at t = 0 it would be the token itself)
        target = tokens[:, jnp.arange(length) // 2]
        mask = jnp.broadcast_to(jnp.arange(length) >= 1, (batch, length))
        return tokens, target, mask
    if task == "first":
        tokens = jax.random.randint(key, (batch, length), 0, vocab, dtype=jnp.int32)
        # target[t] = x[0], scored from t = 1 on
        target = jnp.broadcast_to(tokens[:, :1], (batch, length))
        mask = jnp.broadcast_to(jnp.arange(length) >= 1, (batch, length))
        return tokens, target, mask
    if task == "passkey":
        return passkey_batch(key, batch=batch, length=length, vocab=vocab)
    return _recall_batch(key, batch, length, vocab)


def recall_pairs(length, vocab) -> int:
    """The number P of key–value pairs a recall sequence of ``length`` tokens opens with.

    P = min(RECALL_PAIRS, length // 4, vocab // 2): 8 at every length ≥ 32
    with a vocabulary of at least 16; fewer only when the pairs would take more
    than half the sequence, or there are fewer than 8 distinct keys.

    >>> recall_pairs(32, 32), recall_pairs(256, 32), recall_pairs(20, 32), recall_pairs(64, 8)
    (8, 8, 5, 4)
    """
    return min(RECALL_PAIRS, length // 4, vocab // 2)


def _recall_batch(key, batch, length, vocab):
    half_vocab = vocab // 2
    pairs = recall_pairs(length, vocab)  # key-value pairs first: k1 v1 k2 v2 …, distinct keys
    k_keys, k_vals, k_query = jax.random.split(key, 3)
    # distinct keys per sequence: the first `pairs` of a random permutation of the lower half
    keys = jax.vmap(lambda k: jax.random.permutation(k, half_vocab)[:pairs])(jax.random.split(k_keys, batch))
    # values: uniform over the upper half, with replacement (two keys may share a value)
    values = jax.random.randint(k_vals, (batch, pairs), half_vocab, vocab, dtype=jnp.int32)
    # context: (batch, 2·pairs), keys and values interleaved
    context = jnp.stack([keys, values], axis=-1).reshape(batch, 2 * pairs)
    n_query = length - 2 * pairs
    which = jax.random.randint(k_query, (batch, n_query), 0, pairs)
    queries = jnp.take_along_axis(keys, which, axis=1)
    answers = jnp.take_along_axis(values, which, axis=1)
    tokens = jnp.concatenate([context, queries], axis=1).astype(jnp.int32)
    target = jnp.concatenate([jnp.zeros_like(context), answers], axis=1).astype(jnp.int32)
    mask = jnp.broadcast_to(jnp.arange(length) >= 2 * pairs, (batch, length))
    return tokens, target, mask


def _passkey_sizes(length, vocab, key_len):
    # F = T − 2K − 1 filler tokens; ⌊V/2⌋ filler tokens, V − 1 − ⌊V/2⌋ key tokens, one marker
    length = v.positive_int("length", length)
    vocab = v.positive_int("vocab", vocab)
    key_len = v.positive_int("key_len", key_len)
    filler = length - 2 * key_len - 1
    if filler < 0:
        raise ValueError(
            f"length must be at least 2·key_len + 1 = {2 * key_len + 1} (needle: marker + {key_len} key tokens; "
            f"query: marker + {key_len - 1} echoes), got {length}"
        )
    if vocab - 1 - vocab // 2 < key_len:  # ⌊V/2⌋ filler tokens, V − 1 − ⌊V/2⌋ ≥ K key tokens: V ≥ 2K + 1
        raise ValueError(
            f"vocab must be at least 2·key_len + 1 = {2 * key_len + 1} (⌊V/2⌋ filler tokens, V − 1 − ⌊V/2⌋ ≥ {key_len} "
            f"distinct key tokens, one marker), got {vocab}"
        )
    return length, vocab, key_len, filler


def _depth(depth) -> float:
    depth = v.real_scalar("depth", depth)
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"depth must be a fraction of the filler in [0, 1], got {depth!r}")
    return depth


def passkey_position(depth, length, *, key_len=PASSKEY_LEN) -> int:
    """Where the needle's marker sits in a passkey sequence of ``length`` tokens at ``depth``: a = ⌊d·F⌋.

    F = T − 2K − 1 is the number of filler tokens; a of them come before the
    needle and F − a after it, so depth 0 opens the sequence with the needle
    and depth 1 puts it right before the query. The marker is at position a,
    the key at a + 1 … a + K, and the query's marker at T − K; the distance
    from the query to the key's first token is T − K − a − 1. The floor is
    the needle-in-a-haystack test's first step (``insertion_point =
    int(len(tokens_context) * (depth_percent / 100))``, insert_needle in
    gkamradt/LLMTest_NeedleInAHaystack, needlehaystack/llm_needle_haystack_tester.py
    at commit 9c5b8eaa82941d16b2f94e3b9b8c779bdc8eb2d4, which then moves
    back to a sentence break; here there are no sentences), taken on d as
    written in decimal, exactly: 0.29 of 100 filler tokens is 29, where the
    float product 0.29·100 = 28.999999999999996 would floor to 28.

    >>> passkey_position(0.0, 32), passkey_position(0.5, 32), passkey_position(1.0, 32)   # F = 32 − 7 = 25
    (0, 12, 25)
    >>> passkey_position(0.29, 107)                                                         # F = 100
    29
    >>> passkey_position(1.5, 32)
    Traceback (most recent call last):
    ...
    ValueError: depth must be a fraction of the filler in [0, 1], got 1.5
    """
    depth = _depth(depth)
    _, _, _, filler = _passkey_sizes(length, 2 * v.positive_int("key_len", key_len) + 1, key_len)
    # a = ⌊d·F⌋, d read exactly as the shortest decimal that gives this float
    return math.floor(Fraction(repr(depth)) * filler)


def passkey_batch(key, *, batch, length, vocab, depth=None, key_len=PASSKEY_LEN):
    """A batch of the passkey task: ``(tokens, target, mask)``, each of shape (batch, length).

    Tokens: filler in [0, ⌊V/2⌋), key tokens in [⌊V/2⌋, V − 1), the marker
    V − 1 (V = ``vocab``). Each sequence of T = ``length`` tokens reads

        f_0 … f_{a−1}  M k_1 … k_K  f_a … f_{F−1}  M k_1 … k_{K−1}

    with F = T − 2K − 1 filler tokens f (uniform, with replacement), K =
    ``key_len`` distinct key tokens k (uniform without replacement, every
    order alike), and the needle after a filler tokens: a uniform in
    {0, …, F} per sequence for
    ``depth=None`` (training), else a = ⌊d·F⌋ for every sequence
    (:func:`passkey_position`). ``target`` is k_1 … k_K on the last K
    positions (the query's marker and the K − 1 echoes), 0 elsewhere;
    ``mask`` is True exactly there. The filler and the key are drawn from
    ``key`` independently of the depth, so two depths with the same key give
    the same haystack and key, only moved. Each draw is ⌊u·n⌋ of a float32
    uniform u, which takes 2²³ equally spaced values: each of the n choices
    has probability within 2⁻²² of 1/n. The key's tokens are those of the K
    largest of V − 1 − ⌊V/2⌋ such u (a tie, probability about 2.5·10⁻⁶ for
    7 of them, goes to the lower token). Works inside ``jax.jit`` with
    ``batch``, ``length``, ``vocab``, ``depth`` and ``key_len`` static.

    >>> tokens, target, mask = passkey_batch(jax.random.key(0), batch=2, length=12, vocab=16, depth=0.5)
    >>> a = passkey_position(0.5, 12)                        # F = 12 − 7 = 5: a = ⌊2.5⌋ = 2
    >>> a, int(tokens[0, a]), int(tokens[0, 9])              # the marker V − 1 = 15 at a and at T − K = 9
    (2, 15, 15)
    >>> bool((tokens[0, a + 1:a + 4] == target[0, 9:]).all()), mask[0].tolist()[8:]   # the answers: the key
    (True, [False, True, True, True])
    """
    batch = v.positive_int("batch", batch)
    length, vocab, key_len, filler = _passkey_sizes(length, vocab, key_len)
    # a < 0: draw a per sequence; a ≥ 0: that position for all (traced, so every depth shares one compiled program)
    a = -1 if depth is None else passkey_position(depth, length, key_len=key_len)
    return _passkey_arrays(key, jnp.int32(a), batch=batch, length=length, vocab=vocab, key_len=key_len)


@functools.partial(jax.jit, static_argnames=("batch", "length", "vocab", "key_len"))
def _passkey_arrays(key, a, *, batch, length, vocab, key_len):
    filler = length - 2 * key_len - 1
    half, marker = vocab // 2, vocab - 1
    n_keys = marker - half
    # one uniform draw u in [0, 1) per sequence and slot (one random-number program to compile, not three):
    # F for the filler, one per key token, one for the depth
    u = jax.random.uniform(key, (batch, filler + n_keys + 1))
    # filler: (batch, F), ⌊u·⌊V/2⌋⌋, uniform over [0, ⌊V/2⌋)
    fill = jnp.floor(u[:, :filler] * half).astype(jnp.int32)
    # key: (batch, K), the key tokens [⌊V/2⌋, V − 1) of the K largest u, largest first: K distinct, every order alike
    keys = (jax.lax.top_k(u[:, filler:filler + n_keys], key_len)[1] + half).astype(jnp.int32)
    # a: (batch, 1), ⌊u·(F + 1)⌋, uniform over {0, …, F} when drawn
    drawn = jnp.floor(u[:, -1:] * (filler + 1)).astype(jnp.int32)
    a = jnp.where(a < 0, drawn, a)
    # the haystack, positions p = 0 … F + K: f_p before the needle, M at a, k_{p−a} on it, f_{p−K−1} after
    p = jnp.arange(filler + key_len + 1)[None, :]
    spare = jnp.pad(fill, ((0, 0), (0, 1)))  # one unused column, so that F = 0 still indexes
    before = jnp.take_along_axis(spare, jnp.clip(p, 0, filler), axis=1)
    after = jnp.take_along_axis(spare, jnp.clip(p - key_len - 1, 0, filler), axis=1)
    on = jnp.take_along_axis(keys, jnp.clip(p - a - 1, 0, key_len - 1), axis=1)
    hay = jnp.where(p < a, before, jnp.where(p == a, marker, jnp.where(p <= a + key_len, on, after)))
    query = jnp.concatenate([jnp.full((batch, 1), marker, jnp.int32), keys[:, :-1]], axis=1)
    tokens = jnp.concatenate([hay, query], axis=1).astype(jnp.int32)
    # answers on the last K positions: k_1 … k_K
    target = jnp.concatenate([jnp.zeros((batch, length - key_len), jnp.int32), keys], axis=1)
    mask = jnp.broadcast_to(jnp.arange(length) >= length - key_len, (batch, length))
    return tokens, target, mask


def chance_uniform(vocab) -> float:
    """Accuracy of guessing a token uniformly over the whole vocabulary: 1/vocab, for any task.

    >>> chance_uniform(16), chance_uniform(32)
    (0.0625, 0.03125)
    """
    vocab = v.positive_int("vocab", vocab)
    return 1.0 / vocab


def chance(task, vocab, *, length=None) -> float:
    """The accuracy of a sensible guess with no position information: 1/vocab, a value in context (recall), a key token (passkey).

    For the k-back tasks, "first" and "half" every token is uniform over the
    vocabulary, so any guess is right with probability 1/V (V = ``vocab``).

    For "recall", a model that has learned the task's format but cannot find
    the right pair guesses one of the values present in the context: it picks
    a pair g uniformly among the P pairs (P = :func:`recall_pairs`, 8 unless
    ``length`` is short; ``length=None`` means any length ≥ 4·RECALL_PAIRS) and answers
    its value. The answer is pair a's value v_a. Either g = a, probability
    1/P, and the guess is right; or g ≠ a, probability (P − 1)/P, and it is
    right only if v_g = v_a, which has probability 1/(V/2), the values being
    drawn independently and uniformly, with replacement, from the V/2 tokens
    of the upper half (for an odd V, the upper half's V − ⌊V/2⌋ tokens). So

        chance = 1/P + (P − 1)/P · 1/(V/2) = (1 + (P − 1)/(V/2)) / P.

    With V = 32, P = 8: (1 + 7/16)/8 = 0.1797, above both 1/P = 0.125 and
    the uniform guess over the vocabulary, 1/V (:func:`chance_uniform`).

    For "passkey" (K = :data:`PASSKEY_LEN` key tokens; the answers are
    scored per token), the key tokens are the only tokens of their part of
    the vocabulary, so even a bag of the visible tokens, with no order at
    all, tells which they are and, seen twice, which ones the query has
    already echoed. With no position information the order is what is
    missing: at the query's marker the guess is one of the K key tokens,
    right with probability 1/K; after i echoes, one of the K − i not yet
    echoed, 1/(K − i). Averaged over the K answers,

        chance = (1/K)·(1/K + 1/(K − 1) + … + 1/1) = H_K / K,

    11/18 ≈ 0.611 for K = 3, whatever V and ``length``. The whole key is
    right with probability 1/K! = 1/6 (:func:`.passkey.chance_key`).

    >>> chance("prev", 16), chance("recall", 32), chance("recall", 16)   # (1 + 7/16)/8; (1 + 7/8)/8
    (0.0625, 0.1796875, 0.234375)
    >>> round(chance("passkey", 16), 4)                                   # (1/3 + 1/2 + 1)/3 = 11/18
    0.6111
    """
    task = check_task(task)
    vocab = v.positive_int("vocab", vocab)
    if task == "passkey":
        _passkey_sizes(2 * PASSKEY_LEN + 1 if length is None else length, vocab, PASSKEY_LEN)
        # H_K / K: the mean over the K answers of 1/(K − i), i = 0 … K − 1
        return sum(1.0 / (PASSKEY_LEN - i) for i in range(PASSKEY_LEN)) / PASSKEY_LEN
    if task != "recall":
        return 1.0 / vocab
    P = recall_pairs(4 * RECALL_PAIRS if length is None else v.positive_int("length", length), vocab)
    if P < 1:
        raise ValueError(f"a recall sequence needs at least one pair: length ≥ 4 and vocab ≥ 2, got {length} and {vocab}")
    values = vocab - vocab // 2  # the upper half: V/2 tokens (V even)
    # (1 + (P − 1)/(V/2)) / P
    return (1.0 + (P - 1) / values) / P


def windows(text, key, *, batch, length):
    """``batch`` random windows of a token array, for next-token language modelling.

    Each window is ``length`` + 1 consecutive tokens of ``text`` starting at a
    uniform random offset; the model reads the first ``length`` and predicts
    the last ``length``: tokens[b, t] = text[s_b + t], target[b, t] =
    text[s_b + t + 1], every position scored. Used by notebooks/15-lab-on-real-text.ipynb.

    >>> tokens, target, mask = windows(jnp.arange(100), jax.random.key(0), batch=2, length=4)
    >>> bool((target[:, :-1] == tokens[:, 1:]).all()), tokens.shape, bool(mask.all())
    (True, (2, 4), True)
    """
    # s_b ~ uniform{0, …, len(text) − length − 1}: (batch,)
    starts = jax.random.randint(key, (batch,), 0, text.shape[0] - length)
    idx = starts[:, None] + jnp.arange(length + 1)
    chunk = text[idx]
    return chunk[:, :-1], chunk[:, 1:], jnp.ones((batch, length), dtype=bool)
