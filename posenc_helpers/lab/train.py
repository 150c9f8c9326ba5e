"""Training: optax AdamW, one jit-compiled chunk of steps, fixed seeds, a progress bar.

The batches are generated inside the compiled step from the step's own key, so
training touches no file and the same seed gives the same losses on one
machine. ``train`` returns a :class:`Run`: the parameters and the loss history.
Taught in notebooks/12-extrapolation-lab.ipynb.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .. import _validate as v
from .model import Config, check_scheme, init, loss_fn
from .tasks import check_task, make_batch, windows

__all__ = ["Run", "DEFAULTS", "train", "fit", "STEPS_PER_CALL"]

#: The notebook's budget: what every scheme gets on every headline task.
DEFAULTS = {"train_len": 32, "steps": 1000, "batch": 32, "lr": 3e-3, "warmup": 50, "weight_decay": 0.01}

#: Steps run by one compiled call (a ``lax.scan``); the progress bar moves once per call.
STEPS_PER_CALL = 50


@dataclasses.dataclass(frozen=True)
class Run:
    """One trained model: what was trained, how, and the result."""

    scheme: str
    task: str
    train_len: int
    params: dict
    losses: np.ndarray  # (steps,) training loss after each step
    config: Config
    seed: int
    steps: int


def _schedule(lr, warmup, steps):
    # linear warm-up to lr over `warmup` steps, then cosine decay to lr/10 at `steps`
    return optax.warmup_cosine_decay_schedule(0.0, lr, min(warmup, steps - 1), steps, end_value=lr / 10)


@functools.partial(jax.jit, static_argnames=("config", "task", "batch", "n", "optimizer"))
def _train_chunk(params, opt_state, key, step0, text=None, *, config, task, batch, n, optimizer):
    """``n`` optimiser steps in one compiled ``lax.scan``; returns the new state and the n losses.

    ``task="text"`` trains a language model on windows of the token array
    ``text`` (see :func:`.tasks.windows`); any other task ignores ``text``.
    """

    def step(carry, i):
        params, opt_state = carry
        # a fresh batch per step from fold_in(key, step): (batch, train_len) each
        step_key = jax.random.fold_in(key, step0 + i)
        if task == "text":
            tokens, target, mask = windows(text, step_key, batch=batch, length=config.train_len)
        else:
            tokens, target, mask = make_batch(
                task, step_key, batch=batch, length=config.train_len, vocab=config.vocab
            )
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, target, mask, config)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), jnp.arange(n))
    return params, opt_state, losses


class _Optimizer:
    """A hashable wrapper, so the optax transformation can be a static jit argument."""

    def __init__(self, lr, warmup, steps, weight_decay):
        self.key = (lr, warmup, steps, weight_decay)
        self.tx = optax.adamw(_schedule(lr, warmup, steps), weight_decay=weight_decay)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Optimizer) and self.key == other.key

    def init(self, params):
        return self.tx.init(params)

    def update(self, grads, state, params):
        return self.tx.update(grads, state, params)


def _seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def train(
    scheme,
    task,
    *,
    train_len=DEFAULTS["train_len"],
    steps=DEFAULTS["steps"],
    seed=0,
    progress=True,
    batch=DEFAULTS["batch"],
    lr=DEFAULTS["lr"],
    d_model=64,
    heads=4,
    layers=2,
    vocab=None,
) -> Run:
    """Train a fresh model with ``scheme`` on ``task``; returns a :class:`Run`.

    ``steps`` optimiser steps of AdamW (linear warm-up, cosine decay) on
    batches of ``batch`` sequences of ``train_len`` tokens. ``seed`` fixes the
    initial parameters and every batch. ``progress=True`` shows a tqdm bar (a
    widget in JupyterLab, text in a terminal); ``progress=False`` prints nothing.
    The vocabulary is 16 tokens for the k-back tasks and 32 for recall.

    >>> run = train("alibi", "prev", steps=50, progress=False)
    >>> run.losses.shape, run.params["embed"].shape      # one loss per step; (vocab, d_model)
    ((50,), (16, 64))
    >>> train("alibi", "prev", steps=0)
    Traceback (most recent call last):
    ...
    ValueError: steps must be a positive integer, got 0
    """
    scheme = check_scheme(scheme)
    task = check_task(task)
    train_len = v.positive_int("train_len", train_len)
    steps = v.positive_int("steps", steps)
    batch = v.positive_int("batch", batch)
    seed = _seed(seed)
    lr = v.real_scalar("lr", lr)
    if vocab is None:
        vocab = 32 if task == "recall" else 16
    config = Config(scheme=scheme, vocab=vocab, d_model=d_model, heads=heads, layers=layers, train_len=train_len)
    params, losses = fit(config, task, seed=seed, steps=steps, batch=batch, lr=lr, progress=progress)
    return Run(scheme, task, train_len, params, losses, config, seed, steps)


def fit(config, task, *, seed, steps, batch, lr, progress, text=None, desc=None):
    """The training loop behind :func:`train`: ``(params, losses)`` for a fresh model of ``config``.

    ``task`` is a task name, or ``"text"`` with ``text`` a 1-D array of token
    ids to train a next-token language model on (every position scored).
    """
    init_key, data_key = jax.random.split(jax.random.key(seed))
    params = init(init_key, config)
    optimizer = _Optimizer(lr, DEFAULTS["warmup"], steps, DEFAULTS["weight_decay"])
    opt_state = optimizer.init(params)
    if text is not None:
        text = jnp.asarray(text, dtype=jnp.int32)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=steps, desc=desc or f"{config.scheme} on {task}", unit="step")
    losses = []
    done = 0
    while done < steps:
        n = min(STEPS_PER_CALL, steps - done)
        params, opt_state, chunk = _train_chunk(
            params, opt_state, data_key, done, text,
            config=config, task=task, batch=batch, n=n, optimizer=optimizer,
        )
        losses.append(np.asarray(chunk))
        done += n
        if bar is not None:
            bar.update(n)
            bar.set_postfix(loss=f"{float(chunk[-1]):.3f}")
    if bar is not None:
        bar.close()
    return params, np.concatenate(losses)
