"""Training: optax AdamW, one jit-compiled chunk of steps, fixed seeds, a progress bar.

The batches are generated inside the compiled step from the step's own key, so
training touches no file and the same seed gives the same losses on one
machine. ``train`` returns a :class:`Run`: the parameters and the loss history.
:func:`finetune` continues a trained RoPE run at a longer length with its
frequencies rescaled (PI, NTK or YaRN), the papers' regime.
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
from .model import RANDOMIZED, Config, check_scheme, init, loss_fn
from .tasks import check_task, make_batch, windows

__all__ = [
    "Run", "DEFAULTS", "FINETUNE", "train", "train_all", "fit", "finetune", "initial_params", "STEPS_PER_CALL",
    "shortest", "curriculum_lengths",
]

#: The notebook's budget: what every scheme gets on every headline task.
DEFAULTS = {"train_len": 32, "steps": 1000, "batch": 32, "lr": 3e-3, "warmup": 50, "weight_decay": 0.01}

#: The fine-tune's optimiser: AdamW at a constant ``lr`` after a linear warm-up of ``warmup`` steps
#: (step i uses lr·min(1, (i + 1)/warmup)), the pre-training's batch size and weight decay.
FINETUNE = {"lr": 1e-3, "warmup": 10, "batch": DEFAULTS["batch"], "weight_decay": DEFAULTS["weight_decay"]}

#: Steps run by one compiled call (a ``lax.scan``); the progress bar moves once per call.
STEPS_PER_CALL = 50


@dataclasses.dataclass(frozen=True)
class Run:
    """One trained model: what was trained, how, and the result.

    A run from :func:`finetune` also remembers how it was fine-tuned:
    ``train_len`` stays the original training length L, ``finetune_len`` is the
    fine-tune's length, and ``method``/``factor`` the RoPE rescaling it was
    fine-tuned with (and is evaluated with, see :func:`.evaluate.evaluate`).
    """

    scheme: str
    task: str
    train_len: int  # the original training length L
    params: dict
    losses: np.ndarray  # (steps,) training loss after each step
    config: Config
    seed: int
    steps: int
    initial_params: dict | None = None  # the parameters before this training
    method: str | None = None  # fine-tuned runs: the RoPE rescaling ("pi", "ntk", "yarn" or None)
    factor: float | None = None  # fine-tuned runs: the rescaling factor finetune_len / train_len
    finetune_len: int | None = None  # fine-tuned runs: the length the fine-tune trained at


def _schedule(lr, warmup, steps):
    # linear warm-up to lr over `warmup` steps, then cosine decay to lr/10 at `steps`
    return optax.warmup_cosine_decay_schedule(0.0, lr, min(warmup, steps - 1), steps, end_value=lr / 10)


def _constant_schedule(lr, warmup):
    # step i (counted from 0) uses lr · min(1, (i + 1)/warmup): no step at rate 0, then constant
    return lambda count: lr * jnp.minimum(1.0, (count + 1) / warmup)


@functools.partial(jax.jit, static_argnames=("config", "task", "batch", "n", "optimizer"))
def _train_chunk(
    params, opt_state, key, step0, text=None, omega=None, logit_scale=None, *, config, task, batch, n, optimizer
):
    """``n`` optimiser steps in one compiled ``lax.scan``; returns the new state and the n losses.

    ``task="text"`` trains a language model on windows of the token array
    ``text`` (see :func:`.tasks.windows`); any other task ignores ``text``.
    ``omega`` (RoPE's frequencies) and ``logit_scale`` are traced arrays, or
    None for the defaults (which then trace exactly as before they existed).
    """
    scaling = {} if omega is None else {"omega": omega}
    if logit_scale is not None:
        scaling["logit_scale"] = logit_scale

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
        # a randomized scheme draws its positions from a key of its own per step (the other schemes take none)
        drawn = {"key": jax.random.fold_in(step_key, 1)} if config.scheme in RANDOMIZED else {}
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, target, mask, config, **scaling, **drawn)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), jnp.arange(n))
    return params, opt_state, losses


class _Optimizer:
    """A hashable wrapper, so the optax transformation can be a static jit argument."""

    def __init__(self, lr, warmup, steps, weight_decay, constant=False):
        self.key = (lr, warmup, steps, weight_decay, constant)
        schedule = _constant_schedule(lr, warmup) if constant else _schedule(lr, warmup, steps)
        self.tx = optax.adamw(schedule, weight_decay=weight_decay)

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
    cache=True,
    curriculum=False,
    **scheme_options,
) -> Run:
    """Train a fresh model with ``scheme`` on ``task``; returns a :class:`Run`.

    ``steps`` optimiser steps of AdamW (linear warm-up, cosine decay) on
    batches of ``batch`` sequences of ``train_len`` tokens. ``seed`` fixes the
    initial parameters and every batch. ``progress=True`` shows a tqdm bar (a
    widget in JupyterLab, text in a terminal); ``progress=False`` prints nothing.
    The vocabulary is 16 tokens for the k-back tasks and 32 for recall.
    ``cache=False`` trains even when the model cache (:mod:`.cache`) holds
    this very model; by default a model trained before with the same
    settings, code and machine is read from it. ``curriculum=True`` trains
    each step on sequences of a length drawn uniformly from the shortest
    that holds an answer (:func:`shortest`) up to ``train_len`` (see
    :func:`curriculum_lengths`): Ruoss et al.'s recipe for randomized
    positions, whose example trains with ``UniformCurriculum(range(1, 41))``
    at L = 40. The learned table cannot take it (its rows are the training
    length).
    Any other keyword is a field of :class:`.model.Config` for the scheme
    (``query_temperature=True`` for ``"rope_nope"``, ``t5_buckets=...``,
    ``pos_std=...``), checked by Config.

    >>> tiny = dict(train_len=8, d_model=16, heads=2, layers=1)   # a tiny model: one layer, width 16, L = 8
    >>> run = train("alibi", "prev", steps=3, progress=False, **tiny)
    >>> run.losses.shape, run.params["embed"].shape      # one loss per step; (vocab, d_model) = (16, 16)
    ((3,), (16, 16))
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
    fields = {f.name for f in dataclasses.fields(Config)}
    unknown = sorted(set(scheme_options) - fields)
    if unknown:
        raise TypeError(f"train got unknown keyword arguments {unknown}; Config's fields are {sorted(fields)}")
    config = Config(
        scheme=scheme, vocab=vocab, d_model=d_model, heads=heads, layers=layers, train_len=train_len, **scheme_options
    )
    if not isinstance(curriculum, (bool, np.bool_)):
        raise TypeError(f"curriculum must be True or False, got {curriculum!r}")
    if curriculum and scheme == "learned":
        raise ValueError("curriculum=True cannot train the learned table: its rows are the training length")
    params, losses, start = fit(
        config, task, seed=seed, steps=steps, batch=batch, lr=lr, progress=progress, return_initial=True,
        cache=cache, curriculum=bool(curriculum),
    )
    return Run(scheme, task, train_len, params, losses, config, seed, steps, initial_params=start)


def _train_job(scheme, task, options):
    # one model of train_all, in a worker process of the lab's pool
    return train(scheme, task, progress=False, **options)


def train_all(schemes, task, *, workers=None, progress=True, **options) -> dict:
    """:func:`train` for every scheme in ``schemes`` on ``task``, in the lab's pool: ``{scheme: Run}``.

    Each model trains in a worker process (one per core by default, each with
    one XLA thread; see :func:`.pool.pool_map`), so two cores train two
    models at once; ``workers=1`` trains them one after another in this
    process. ``options`` go to every :func:`train` call (``seed``, ``steps``,
    ``cache``, ...). ``progress=True`` shows one bar that moves as each model
    is done. A model is the same whichever worker trains it: a worker runs the
    same compiled programs with the same seed. With the model cache on, a
    second call with the same arguments reads every model back instead of
    training it (the workers' single XLA thread is part of the cache's key,
    so a model trained in this process is a separate entry).

    >>> tiny = dict(train_len=8, d_model=16, heads=2, layers=1)   # a tiny model: one layer, width 16, L = 8
    >>> runs = train_all(["alibi", "none"], "prev", workers=1, steps=3, progress=False, **tiny)
    >>> sorted(runs), runs["none"].losses.shape
    (['alibi', 'none'], (3,))
    """
    from .pool import pool_map

    schemes = [check_scheme(s) for s in schemes]
    if not schemes:
        raise ValueError("schemes must name at least one scheme, got none")
    if len(set(schemes)) != len(schemes):
        raise ValueError(f"schemes must not repeat a scheme, got {schemes}")
    task = check_task(task)
    if "progress" in options or "scheme" in options or "task" in options:
        raise TypeError("train_all takes scheme, task and progress itself, not in options")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(schemes), desc=f"{len(schemes)} models on {task}", unit="model")
    jobs = [(scheme, task, options) for scheme in schemes]
    runs = pool_map(
        _train_job, jobs, workers=workers, on_result=None if bar is None else lambda i, run: bar.update(1)
    )
    if bar is not None:
        bar.close()
    return dict(zip(schemes, runs, strict=True))


def initial_params(config, seed) -> dict:
    """The parameters :func:`fit` starts a fresh model of ``config`` from with ``seed`` (before any step).

    >>> tiny = dict(train_len=8, d_model=16, heads=2, layers=1)   # a tiny model: one layer, width 16, L = 8
    >>> start = initial_params(Config(scheme="learned", **tiny), 0)
    >>> run = train("learned", "prev", steps=3, progress=False, **tiny)
    >>> bool((start["pos"] == run.initial_params["pos"]).all())
    True
    """
    init_key, _ = jax.random.split(jax.random.key(_seed(seed)))
    return init(init_key, config)


#: The shortest sequence of each task that holds an answer to score (passkey: the needle and the query).
_SHORTEST = {"prev": 2, "first": 2, "half": 2, "back3": 4, "recall": 4}


def shortest(task) -> int:
    """The shortest length at which a sequence of ``task`` has an answer to score: the floor of a curriculum.

    >>> shortest("prev"), shortest("back3"), shortest("passkey")    # passkey: 2·3 + 1 (needle and query)
    (2, 4, 7)
    """
    from .tasks import PASSKEY_LEN

    task = check_task(task)
    return 2 * PASSKEY_LEN + 1 if task == "passkey" else _SHORTEST[task]


def curriculum_lengths(task, train_len, steps, seed) -> np.ndarray:
    """The length each step of a curriculum trains at: uniform over :func:`shortest` … ``train_len``, per step.

    Drawn with numpy's PCG64 from ``[seed, 1]``, so the same on every machine.

    >>> curriculum_lengths("prev", 32, 5, 0).tolist()
    [18, 29, 32, 19, 11]
    """
    low = shortest(task)
    if train_len < low:
        raise ValueError(f"a curriculum for {task!r} needs train_len ≥ {low}, got {train_len}")
    return np.random.default_rng([seed, 1]).integers(low, train_len + 1, size=steps)


def fit(
    config,
    task,
    *,
    seed,
    steps,
    batch,
    lr,
    progress,
    text=None,
    desc=None,
    params=None,
    omega=None,
    logit_scale=1.0,
    warmup=DEFAULTS["warmup"],
    weight_decay=DEFAULTS["weight_decay"],
    constant_lr=False,
    return_initial=False,
    checkpoints=(),
    on_checkpoint=None,
    cache=True,
    curriculum=False,
):
    """The training loop behind :func:`train` and :func:`finetune`: ``(params, losses)``.

    ``task`` is a task name, or ``"text"`` with ``text`` a 1-D array of token
    ids to train a next-token language model on (every position scored), on
    windows of ``config.train_len`` tokens. ``seed`` fixes the batches and,
    when ``params`` is None, the fresh model of ``config`` (see
    :func:`initial_params`); given ``params``, training continues from them.
    ``omega`` (one frequency per RoPE pair) and ``logit_scale`` train with a
    rescaled RoPE, as :func:`.model.forward` applies them. The schedule is
    warm-up then cosine decay to lr/10, or with ``constant_lr=True`` warm-up
    then a constant ``lr`` (see :data:`FINETUNE`). ``return_initial=True``
    returns ``(params, losses, initial_params)``. ``on_checkpoint(step, params)``
    is called after each step count in ``checkpoints`` (the compiled chunks
    end there too, so the numbers are those of a run of that many steps).
    ``cache=True`` reads a model trained before with exactly these settings
    on this machine from the model cache (:mod:`.cache`) instead of training
    it again, and stores a model it trains; ``cache=False`` always trains and
    stores nothing. ``curriculum=True`` runs step i on sequences of
    :func:`curriculum_lengths`' i-th length (one compiled call per step, the
    model's Config at that length; the batch key is the same as without it).
    """
    steps = v.positive_int("steps", steps)
    init_key, data_key = jax.random.split(jax.random.key(seed))
    start = init(init_key, config) if params is None else params
    params = start
    optimizer = _Optimizer(lr, warmup, steps, weight_decay, constant=constant_lr)
    opt_state = optimizer.init(params)
    if text is not None:
        text = jnp.asarray(text, dtype=jnp.int32)
    if omega is not None:
        omega = jnp.asarray(omega, dtype=jnp.float32)
        if omega.shape != (config.head_dim // 2,):
            raise ValueError(f"omega must hold head_dim/2 = {config.head_dim // 2} frequencies, got shape {omega.shape}")
    logit_scale = v.real_scalar("logit_scale", logit_scale)
    # the default (no rescaling) passes None, so it compiles exactly the loop it always did
    scale = None if logit_scale == 1.0 and omega is None else jnp.float32(logit_scale)
    stops = sorted({int(c) for c in checkpoints if 0 < int(c) < steps})
    if not isinstance(cache, (bool, np.bool_)):
        raise TypeError(f"cache must be True or False, got {cache!r}")
    lengths = curriculum_lengths(task, config.train_len, steps, seed) if curriculum else None

    def steps_from(params, opt_state):
        # the training loop itself: (params, losses, {checkpoint: params})
        kept = {}
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=steps, desc=desc or f"{config.scheme} on {task}", unit="step")
        losses = []
        done = 0
        while done < steps:
            n = min(STEPS_PER_CALL, steps - done, *(c - done for c in stops if c > done))
            # a curriculum: one step per call, at that step's length
            n, at = (1, dataclasses.replace(config, train_len=int(lengths[done]))) if curriculum else (n, config)
            params, opt_state, chunk = _train_chunk(
                params, opt_state, data_key, done, text, omega, scale,
                config=at, task=task, batch=batch, n=n, optimizer=optimizer,
            )
            losses.append(np.asarray(chunk))
            done += n
            if done in stops:
                kept[done] = params
                if on_checkpoint is not None:
                    on_checkpoint(done, params)
            if bar is not None:
                bar.update(n)
                bar.set_postfix(loss=f"{float(chunk[-1]):.3f}")
        if bar is not None:
            bar.close()
        return params, np.concatenate(losses), kept

    def result(params, losses):
        return (params, losses, start) if return_initial else (params, losses)

    if not cache:
        params, losses, _ = steps_from(params, opt_state)
        return result(params, losses)
    from . import cache as model_cache

    key = model_cache.key_of({
        "config": dataclasses.asdict(config), "task": task, "seed": seed, "steps": steps, "batch": batch,
        "lr": float(lr), "warmup": warmup, "weight_decay": weight_decay, "constant_lr": bool(constant_lr),
        "text": text, "start": model_cache.flatten(start),  # the parameters training starts from
        "omega": omega, "logit_scale": logit_scale, "checkpoints": stops,
        **({"curriculum": lengths} if curriculum else {}),  # absent without one: the keys of before
    })
    # another process training this very model holds its lock: wait, then read it back
    with model_cache.locked(key):
        hit = model_cache.load(key)
        if hit is not None:
            if progress:
                print(f"{desc or f'{config.scheme} on {task}'}: {steps} steps, read from the model cache")
            for n in stops:
                if on_checkpoint is not None:
                    on_checkpoint(n, jax.tree_util.tree_map(jnp.asarray, hit[f"step{n}"]))
            return result(jax.tree_util.tree_map(jnp.asarray, hit["params"]), np.asarray(hit["losses"]))
        params, losses, kept = steps_from(params, opt_state)
        model_cache.store(key, {"params": params, "losses": losses, **{f"step{n}": p for n, p in kept.items()}})
    return result(params, losses)


def check_finetune(run, length, steps, seed, method, methods) -> tuple[int, int, int]:
    """The checks :func:`finetune` and ``lab.text.finetune`` share; returns ``(length, steps, seed)``.

    ``length`` has passed the caller's own length check; ``methods`` are the rescalings it offers.
    """
    if run.config.scheme != "rope":
        raise ValueError(f"run must be a RoPE run to rescale its frequencies, got scheme {run.config.scheme!r}")
    if run.factor is not None:
        raise ValueError(f"run is already fine-tuned (at length {run.finetune_len}); fine-tune the original run")
    length = v.positive_int("length", length)
    if length <= run.train_len:
        raise ValueError(f"length must exceed the run's training length {run.train_len}, got {length}")
    steps = v.positive_int("steps", steps)
    seed = _seed(seed)
    if method is not None and method not in methods:
        raise ValueError(f"method must be one of {', '.join(map(repr, methods))} or None, got {method!r}")
    return length, steps, seed


def finetune(run, *, length, method=None, steps=100, seed=0, progress=True, checkpoints=(), cache=True, factor=None):
    """Continue training a trained RoPE ``run`` at ``length`` tokens, RoPE rescaled by ``method``; a new Run.

    The papers' regime: rescale the frequencies for the factor s = length / L
    (L = ``run.train_len``) with ``method`` ("pi", "ntk", "yarn", or None for
    plain RoPE; the same ``(omega, logit_scale)`` as :func:`.evaluate.rope_scaling`),
    then train briefly on sequences of ``length`` tokens from ``seed``.
    ``factor`` sets s for a target longer than the fine-tune's sequences
    (s = target ÷ L, at least length / L, with a method), the setting in
    which the YaRN paper (Peng et al. 2023, arXiv:2309.00071) reports that
    a model extrapolates beyond the limited context of its fine-tuning
    data. The
    returned run keeps ``train_len`` = L and remembers ``method``, ``factor``
    = s and ``finetune_len`` = length, so ``accuracy(ft, lengths)`` evaluates
    it with that same rescaling, and ``positions="beyond"`` still scores the
    positions past L. ``ft.initial_params`` is ``run.params``.

    The optimiser (:data:`FINETUNE`) is AdamW at a constant 1e-3 after a
    10-step linear warm-up: a third of the pre-training's peak rate (3e-3,
    which had decayed to 3e-4 by its last step), so a few steps move a trained
    model without undoing it, and constant so that the first 25 steps of a
    100-step fine-tune are exactly a 25-step fine-tune (a decaying schedule
    would make every budget a different run). With ``checkpoints`` (step
    counts below ``steps``) it returns ``{n: Run}`` for each checkpoint and for
    ``steps``, from one run: the run at n steps is the n-step fine-tune.

    >>> tiny = dict(train_len=8, d_model=16, heads=2, layers=1)   # a tiny model: one layer, width 16, L = 8
    >>> run = train("rope", "prev", steps=3, progress=False, **tiny)
    >>> ft = finetune(run, length=16, method="pi", steps=2, progress=False)
    >>> ft.train_len, ft.finetune_len, ft.method, ft.factor, ft.losses.shape
    (8, 16, 'pi', 2.0, (2,))
    >>> finetune(run, length=8, method="pi")
    Traceback (most recent call last):
    ...
    ValueError: length must exceed the run's training length 8, got 8
    """
    from .evaluate import SCALINGS, rope_scaling

    if not isinstance(run, Run):
        raise TypeError(f"run must be a lab.Run (from lab.train), got {type(run).__name__}")
    if run.task == "text":
        raise ValueError("run is a text model: fine-tune it with posenc_helpers.lab.text, not lab.finetune")
    length, steps, seed = check_finetune(run, length, steps, seed, method, SCALINGS)
    if factor is None:
        factor = length / run.train_len
    else:
        if method is None:
            raise ValueError(f"factor is the rescaling's s, so it needs a method, got factor={factor!r} with method None")
        factor = v.real_scalar("factor", factor)
        if factor < length / run.train_len:
            raise ValueError(
                f"factor must be at least length / train_len = {length / run.train_len:g}, got factor={factor!r}"
            )
    omega, scale = rope_scaling(run, method, factor)
    config = dataclasses.replace(run.config, train_len=length)
    kept = {}
    params, losses = fit(
        config, run.task, seed=seed, steps=steps, batch=FINETUNE["batch"], lr=FINETUNE["lr"],
        progress=progress, desc=f"fine-tune {method or 'RoPE'} at {length}", params=run.params,
        omega=omega, logit_scale=scale, warmup=FINETUNE["warmup"], weight_decay=FINETUNE["weight_decay"],
        constant_lr=True, checkpoints=checkpoints, on_checkpoint=lambda n, p: kept.__setitem__(n, p), cache=cache,
    )

    def tuned(n, p, loss):
        return Run(
            run.scheme, run.task, run.train_len, p, loss, run.config, seed, n,
            initial_params=run.params, method=method, factor=factor, finetune_len=length,
        )

    final = tuned(steps, params, losses)
    if not checkpoints:
        return final
    return {**{n: tuned(n, p, losses[:n]) for n, p in kept.items()}, steps: final}
