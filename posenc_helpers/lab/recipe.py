"""Training a randomized scheme on its authors' optimiser: Adam at a constant rate after clipping the gradient norm.

Ruoss et al.'s code trains every model with (google-deepmind/randomized_positional_encodings at e8c6474,
``experiments/training.py``)::

    if training_params.l2_weight is None or training_params.l2_weight == 0:
      optimizer = optax.adam(training_params.learning_rate)
    ...
    optimizer = optax.chain(
        optax.clip_by_global_norm(training_params.max_grad_norm), optimizer
    )

with ``max_grad_norm: float = 1.0`` there, and ``learning_rate=1e-3, l2_weight=0.0`` in ``experiments/example.py``.
The lab's own optimiser (:func:`.train.train`) is AdamW at 3e-3 with a warm-up, a cosine decay and weight decay
0.01. The randomized pilot (``tools/randomized_pilot.py``) tries the authors' as one rung of its ladder.

:func:`train_authors` runs the very loop :func:`.train.fit` runs (the same compiled chunk, batches, curriculum and
starting parameters; a test checks that with the lab's optimiser it gives :func:`.train.train`'s model bit for bit)
with the authors' optimiser. It lives here, not as an option of ``fit``, because an edit to ``train.py`` moves the
model cache's code version and with it the stamp of every sweep's rows (:func:`.cache.code_version`), while the
headline sweep's held-out rows must still be trained by the code that trained its rows. Fold it into ``fit`` once
they are. Its models are not kept in the model cache.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import optax

from .. import _validate as v
from .model import Config, check_scheme
from .tasks import check_task
from .train import STEPS_PER_CALL, Run, _seed, _train_chunk, curriculum_lengths, initial_params

__all__ = ["AUTHORS", "train_authors"]

#: Ruoss et al.'s optimiser: Adam (no weight decay, ``l2_weight=0.0``) at a constant ``lr`` after the gradients'
#: global norm is clipped at ``max_grad_norm`` (see the module's docstring for the lines of their code).
AUTHORS = {"lr": 1e-3, "max_grad_norm": 1.0}


def _count_clipped(max_norm) -> optax.GradientTransformation:
    # passes the gradients on unchanged; its state counts the steps whose global norm exceeds max_norm (those the
    # clip that follows it rescales)
    import jax.numpy as jnp

    def init(params):
        return jnp.zeros((), jnp.int32)

    def update(updates, state, params=None):
        return updates, state + (optax.tree.norm(updates) > max_norm).astype(jnp.int32)

    return optax.GradientTransformation(init, update)


class _Authors:
    """The authors' optimiser, hashable, so that the compiled chunk can take it as a static argument. The first
    element of its state counts the steps on which the clip acted (it changes no update)."""

    def __init__(self, lr, max_grad_norm):
        self.key = ("clip_by_global_norm, adam", float(lr), float(max_grad_norm))
        self.tx = optax.chain(_count_clipped(max_grad_norm), optax.clip_by_global_norm(max_grad_norm),
                              optax.adam(lr))

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Authors) and self.key == other.key

    def init(self, params):
        return self.tx.init(params)

    def update(self, grads, state, params):
        return self.tx.update(grads, state, params)


def _loop(config, task, *, seed, steps, batch, curriculum, optimizer):
    # train.fit's loop without its cache, checkpoints, text and rescaling: (params, losses, starting params,
    # the optimiser's last state)
    _, data_key = jax.random.split(jax.random.key(seed))
    start = initial_params(config, seed)
    params, opt_state = start, optimizer.init(start)
    lengths = curriculum_lengths(task, config.train_len, steps, seed) if curriculum else None
    losses, done = [], 0
    while done < steps:
        n, at = min(STEPS_PER_CALL, steps - done), config
        if curriculum:  # one step per call, at that step's length
            n, at = 1, dataclasses.replace(config, train_len=int(lengths[done]))
        params, opt_state, chunk = _train_chunk(
            params, opt_state, data_key, done, None, None, None, config=at, task=task, batch=batch, n=n,
            optimizer=optimizer,
        )
        losses.append(np.asarray(chunk))
        done += n
    return params, np.concatenate(losses), start, opt_state


def train_authors(scheme, task, *, seed, steps, batch, curriculum=False, train_len=32, d_model=64, heads=4,
                  layers=2, vocab=None, return_clipped=False, **scheme_options):
    """Train a fresh model as :func:`.train.train` does, on the authors' optimiser (:data:`AUTHORS`); a :class:`.train.Run`.

    Every argument means what it means to :func:`.train.train` (a keyword it does not take is a field of
    :class:`.model.Config`, such as ``max_position``). ``return_clipped=True`` returns ``(run, clipped)``: on how
    many of the steps the clip acted (the gradient's global norm above :data:`AUTHORS`' ``max_grad_norm``). Both losses
    are a mean cross-entropy per scored token (theirs, ``jnp.mean(jnp.sum(task.pointwise_loss_fn(output, target),
    axis=-1))`` in ``experiments/example.py``, sums ``-target * log_softmax(output)`` over the one-hot class axis), so
    the clip's threshold means the same in both.

    >>> tiny = dict(train_len=8, d_model=16, heads=2, layers=1)   # a tiny model: one layer, width 16, L = 8
    >>> run = train_authors("rand_rope", "prev", seed=0, steps=3, batch=4, max_position=32, **tiny)
    >>> run.losses.shape, run.config.max_position
    ((3,), 32)
    >>> train_authors("rand_rope", "prev", seed=0, steps=3, batch=0)
    Traceback (most recent call last):
    ...
    ValueError: batch must be a positive integer, got 0
    """
    scheme, task = check_scheme(scheme), check_task(task)
    steps, batch = v.positive_int("steps", steps), v.positive_int("batch", batch)
    seed = _seed(seed)
    if not isinstance(curriculum, (bool, np.bool_)):
        raise TypeError(f"curriculum must be True or False, got {curriculum!r}")
    if curriculum and scheme == "learned":
        raise ValueError("curriculum=True cannot train the learned table: its rows are the training length")
    fields = {f.name for f in dataclasses.fields(Config)}
    unknown = sorted(set(scheme_options) - fields)
    if unknown:
        raise TypeError(f"train_authors got unknown keyword arguments {unknown}; Config's fields are {sorted(fields)}")
    if vocab is None:
        vocab = 32 if task == "recall" else 16
    config = Config(scheme=scheme, vocab=vocab, d_model=d_model, heads=heads, layers=layers, train_len=train_len,
                    **scheme_options)
    params, losses, start, state = _loop(config, task, seed=seed, steps=steps, batch=batch,
                                         curriculum=bool(curriculum), optimizer=_Authors(**AUTHORS))
    run = Run(scheme, task, train_len, params, losses, config, seed, steps, initial_params=start)
    return (run, int(state[0])) if return_clipped else run
