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
in-distribution failure, never an extrapolation result):

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

Taught in notebooks/12-extrapolation-lab.ipynb.

>>> import jax
>>> tokens, target, mask = make_batch("prev", jax.random.key(0), batch=1, length=5, vocab=16)
>>> bool((target[0, 1:] == tokens[0, :-1]).all()), mask[0].tolist()   # target[t] = x[t − 1], t ≥ 1
(True, [False, True, True, True, True])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _validate as v

__all__ = [
    "TASKS", "EXTRA_TASKS", "ALL_TASKS", "TASK_TITLES", "RECALL_PAIRS", "check_task", "make_batch", "recall_pairs",
    "chance", "chance_uniform", "windows",
]

#: The headline tasks: every scheme learns them at the training length within the default budget.
TASKS = ("prev", "first")

#: Shown apart from the headline: not every scheme learns it within the notebook's budget.
EXTRA_TASKS = ("back3", "recall")

ALL_TASKS = TASKS + EXTRA_TASKS

#: What each task asks, for titles and legends.
TASK_TITLES = {
    "prev": "previous token (k = 1)",
    "back3": "token 3 back (k = 3)",
    "first": "first token",
    "recall": "multi-query associative recall",
}

_BACK = {"prev": 1, "back3": 3}

#: Key–value pairs in a recall sequence, the same at every length ≥ 4·RECALL_PAIRS (see :func:`recall_pairs`).
RECALL_PAIRS = 8


def check_task(task) -> str:
    """Return ``task`` if it is a known task name, else a ValueError listing the valid names.

    >>> check_task("copy")
    Traceback (most recent call last):
    ...
    ValueError: task must be one of 'prev', 'first', 'back3', 'recall', got 'copy'
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
    if task == "first":
        tokens = jax.random.randint(key, (batch, length), 0, vocab, dtype=jnp.int32)
        # target[t] = x[0], scored from t = 1 on
        target = jnp.broadcast_to(tokens[:, :1], (batch, length))
        mask = jnp.broadcast_to(jnp.arange(length) >= 1, (batch, length))
        return tokens, target, mask
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


def chance_uniform(vocab) -> float:
    """Accuracy of guessing a token uniformly over the whole vocabulary: 1/vocab, for any task.

    >>> chance_uniform(16), chance_uniform(32)
    (0.0625, 0.03125)
    """
    vocab = v.positive_int("vocab", vocab)
    return 1.0 / vocab


def chance(task, vocab, *, length=None) -> float:
    """The accuracy of a sensible guess with no position information: 1/vocab, or for recall the value in context.

    For the k-back tasks and "first" every token is uniform over the
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

    >>> chance("prev", 16), chance("recall", 32), chance("recall", 16)   # (1 + 7/16)/8; (1 + 7/8)/8
    (0.0625, 0.1796875, 0.234375)
    """
    task = check_task(task)
    vocab = v.positive_int("vocab", vocab)
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
