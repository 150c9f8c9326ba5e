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
  with up to vocab/2 key–value pairs (keys from the lower half of the vocabulary,
  values from the upper half); the rest repeats keys, and at each
  repeated key the model must predict that key's value. The answer sits far
  away, so no local rule solves it.

Taught in notebooks/12-extrapolation-lab.ipynb.

>>> import jax
>>> tokens, target, mask = make_batch("prev", jax.random.key(0), batch=1, length=5, vocab=16)
>>> bool((target[0, 1:] == tokens[0, :-1]).all()), mask[0].tolist()   # target[t] = x[t − 1], t ≥ 1
(True, [False, True, True, True, True])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = [
    "TASKS", "EXTRA_TASKS", "ALL_TASKS", "TASK_TITLES", "check_task", "make_batch", "chance", "windows",
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


def _recall_batch(key, batch, length, vocab):
    half_vocab = vocab // 2
    pairs = min(length // 4, half_vocab)  # key-value pairs first: k1 v1 k2 v2 …, distinct keys
    k_keys, k_vals, k_query = jax.random.split(key, 3)
    # distinct keys per sequence: the first `pairs` of a random permutation of the lower half
    keys = jax.vmap(lambda k: jax.random.permutation(k, half_vocab)[:pairs])(jax.random.split(k_keys, batch))
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


def chance(task, vocab) -> float:
    """Accuracy of guessing uniformly: 1/vocab for the k-back tasks, 2/vocab for recall (values are half).

    >>> chance("prev", 16), chance("recall", 16)
    (0.0625, 0.125)
    """
    task = check_task(task)
    return 2.0 / vocab if task == "recall" else 1.0 / vocab


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
