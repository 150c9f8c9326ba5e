"""Your own experiment: train short, test long, and check your claims on seeds nobody chose.

An :class:`Experiment` names the schemes (each a name of :data:`.model.SCHEMES`
or a :class:`Variant` with a test-time rescaling or a fine-tune), a task, the
training length L, the test lengths (all past L), the number of training
seeds, and the claims, written before training. :func:`run` prints how long
the run will take on this machine, asks before a long one, and trains every
(scheme, seed) in the lab's pool of worker processes (reading the model cache
where it holds a model). The :class:`Outcome` holds

* a tidy :class:`Table`, one row per (scheme, seed, length): the accuracy on
  the positions past L, the number n of answers it counts and its binomial
  standard error √(q(1 − q)/n) (:func:`.claims.standard_error`); at L itself,
  the accuracy over all positions (in distribution);
* :meth:`Outcome.verdict`: every claim checked on the training seeds, then on
  fresh seeds the harness drew itself (``secrets``, as docs/CLAIMS.md draws
  held-out seeds) and trained with the others, and reveals only there.

A claim is a :class:`.claims.Claim` (a per-seed check), a :class:`.claims.Spread`
or :class:`.claims.Share` (a statement over the seeds), or a plain function of
one seed's numbers returning a margin (holds when ≥ 0) or a bool. One seed's
numbers ``v`` are ``v[scheme, T]``: accuracy past L at test length T, or over
all positions at T = L; each is a :class:`.claims.Measured`, so a margin is
weighed against its binomial standard error, and the course's rule applies: a
claim stated on trained models clears its worst seed by at least
:data:`MIN_RATIO` = 4 standard errors.

Taught in the notebook "Your own experiment" (issue 30).

>>> e = Experiment(["alibi", "rope"], "prev", lengths=[64, 128], seeds=3,
...                claims=[lambda v: v["alibi", 128] - v["rope", 128]])
>>> e.names, e.lengths, e.training_seeds
(('alibi', 'rope'), (64, 128), (0, 1, 2))
>>> Experiment(["rope"], "prev", lengths=[32])
Traceback (most recent call last):
...
ValueError: lengths must all exceed train_len = 32 (the harness measures past L; L itself is always scored), got 32
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import secrets
import time

import numpy as np

from .. import _validate as v
from . import claims as C
from .evaluate import SCALINGS
from .model import check_scheme
from .tasks import check_task
from .train import DEFAULTS, STEPS_PER_CALL

__all__ = [
    "Variant", "Experiment", "Estimate", "Table", "Outcome", "Verdict", "NotRun", "run", "estimate", "time_steps",
    "TIMING_KEYS", "in_cache", "check_claims", "draw_fresh_seeds", "MIN_SEEDS", "MIN_RATIO", "FRESH_SEEDS", "COLUMNS",
]

#: Fewest training seeds: a median and a range need three.
MIN_SEEDS = 3

#: The course's rule (docs/CLAIMS.md): an accuracy claim clears its worst seed by this many binomial standard errors.
MIN_RATIO = 4.0

#: Fresh seeds drawn per run, as many as the lab's held-out seeds (results.HELD_OUT).
FRESH_SEEDS = 2

#: The columns of :class:`Table`, in order.
COLUMNS = ("scheme", "seed", "length", "positions", "accuracy", "n", "se")


class NotRun(RuntimeError):
    """The run was not started: its estimate is above ``max_minutes`` and it was not confirmed."""


# ---- what to run ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Variant:
    """One line of the experiment: a scheme, optionally rescaled at test time or fine-tuned.

    ``method`` (``"pi"``, ``"ntk"``, ``"yarn"``; RoPE only) rescales RoPE's
    frequencies at test time with factor ``factor`` (None: s = T/L at each
    length), as :func:`.evaluate.accuracy` does; ``logn=True`` adds log-n query
    scaling. With ``finetune`` (a length above L), the trained model is first
    fine-tuned at that length for ``finetune_steps`` steps with ``method``
    (None: plain RoPE) and ``factor`` (:func:`.train.finetune`), and evaluated
    with that rescaling. ``name`` labels it in the table, figure and claims.

    >>> Variant("rope", method="yarn").name, Variant("rope", method="pi", finetune=128).name
    ('rope+yarn', 'rope ft128+pi')
    >>> Variant("alibi", method="pi")
    Traceback (most recent call last):
    ...
    ValueError: Variant: method='pi' rescales RoPE's frequencies, so it needs scheme 'rope', got 'alibi'
    """

    scheme: str
    method: str | None = None
    factor: float | None = None
    logn: bool = False
    finetune: int | None = None
    finetune_steps: int = 100
    label: str | None = None

    def __post_init__(self):
        check_scheme(self.scheme)
        if self.method is not None and self.method not in SCALINGS:
            raise ValueError(f"Variant: method must be one of {', '.join(map(repr, SCALINGS))} or None, got {self.method!r}")
        if (self.method is not None or self.finetune is not None) and self.scheme != "rope":
            what = f"method={self.method!r}" if self.method is not None else f"finetune={self.finetune!r}"
            raise ValueError(f"Variant: {what} rescales RoPE's frequencies, so it needs scheme 'rope', got {self.scheme!r}")
        if self.factor is not None:
            if self.method is None:
                raise ValueError(f"Variant: factor is a rescaling's s, so it needs a method, got factor={self.factor!r}")
            if v.real_scalar("factor", self.factor) < 1:
                raise ValueError(f"Variant: factor must be at least 1, got {self.factor!r}")
        if not isinstance(self.logn, (bool, np.bool_)):
            raise TypeError(f"Variant: logn must be True or False, got {self.logn!r}")
        if self.finetune is not None:
            v.positive_int("finetune", self.finetune)
        v.positive_int("finetune_steps", self.finetune_steps)
        if self.label is not None and (not isinstance(self.label, str) or not self.label):
            raise ValueError(f"Variant: label must be a non-empty string or None, got {self.label!r}")

    @property
    def name(self) -> str:
        if self.label is not None:
            return self.label
        out = self.scheme + (f" ft{self.finetune}" if self.finetune is not None else "")
        out += f"+{self.method}" if self.method is not None else ""
        out += f"@{self.factor:g}" if self.factor is not None else ""
        return out + ("+logn" if self.logn else "")


def _variant(item) -> Variant:
    if isinstance(item, Variant):
        return item
    if isinstance(item, str):
        return Variant(item)
    raise TypeError(f"schemes must hold scheme names or lab.experiment.Variant, got {item!r}")


def _seeds_count(seeds) -> int:
    if isinstance(seeds, bool) or not isinstance(seeds, (numbers.Integral, np.integer)):
        raise TypeError(f"seeds must be a number of seeds (an integer), got {seeds!r}")
    if seeds < MIN_SEEDS:
        raise ValueError(f"seeds must be at least {MIN_SEEDS} to state a median and a range over seeds, got {seeds}")
    return int(seeds)


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A question: schemes, a task, train at ``train_len``, test at ``lengths``, ``seeds`` seeds, and the claims.

    ``schemes``: names of :data:`.model.SCHEMES` or :class:`Variant`. ``task``:
    any name :func:`.tasks.check_task` accepts. ``lengths``: test lengths, each
    above ``train_len``. The training seeds are 0 … seeds − 1 (the lab's sweep
    seeds, so its cached models are reused); ``fresh`` more are drawn at run
    time. ``claims``: see the module's docstring. ``steps`` and ``options``
    (``lr``, ``batch``, ``d_model``, ``heads``, ``layers``, a Config field) go to
    :func:`.train.train`. ``max_minutes``: above this estimate, :func:`run`
    asks before training.
    """

    schemes: tuple
    task: str
    train_len: int = DEFAULTS["train_len"]
    lengths: tuple = (64, 128, 256)
    seeds: int = 5
    claims: tuple = ()
    steps: int = DEFAULTS["steps"]
    options: dict = dataclasses.field(default_factory=dict)
    fresh: int = FRESH_SEEDS
    max_minutes: float = 5.0

    def __post_init__(self):
        if isinstance(self.schemes, (str, Variant)):
            raise TypeError(f"schemes must be a list of schemes, got the single {self.schemes!r}: write [{self.schemes!r}]")
        variants = tuple(_variant(s) for s in self.schemes)
        if not variants:
            raise ValueError("schemes must name at least one scheme, got none")
        names = [x.name for x in variants]
        if len(set(names)) != len(names):
            raise ValueError(f"schemes must not repeat a name, got {names}; give a Variant a label to tell them apart")
        object.__setattr__(self, "schemes", variants)
        check_task(self.task)
        L = v.positive_int("train_len", self.train_len)
        lengths = [self.lengths] if isinstance(self.lengths, numbers.Integral) else list(self.lengths)
        lengths = [v.positive_int("length", n) for n in lengths]
        if not lengths:
            raise ValueError("lengths must hold at least one test length, got none")
        short = [n for n in lengths if n <= L]
        if short:
            raise ValueError(
                f"lengths must all exceed train_len = {L} (the harness measures past L; L itself is always scored), "
                f"got {', '.join(map(str, short))}"
            )
        for x in variants:
            if x.finetune is not None and x.finetune <= L:
                raise ValueError(f"Variant {x.name!r}: finetune must exceed train_len = {L}, got {x.finetune}")
        object.__setattr__(self, "lengths", tuple(sorted(set(lengths))))
        _seeds_count(self.seeds)
        if isinstance(self.fresh, bool) or not isinstance(self.fresh, (numbers.Integral, np.integer)) or self.fresh < 0:
            raise ValueError(f"fresh must be a number of fresh seeds (0 or more), got {self.fresh!r}")
        given = [self.claims] if callable(self.claims) or isinstance(self.claims, (C.Claim, C.Spread, C.Share)) else self.claims
        made = tuple(_claim(c, i) for i, c in enumerate(given))
        texts = [c.text for c in made]
        if len(set(texts)) != len(texts):
            raise ValueError(f"claims must have distinct texts (the verdict names each), got {texts}")
        object.__setattr__(self, "claims", made)
        v.positive_int("steps", self.steps)
        bad = sorted(set(self.options) & {"scheme", "task", "seed", "steps", "train_len", "progress", "cache"})
        if bad:
            raise ValueError(f"options must not set {bad}: they are the Experiment's own fields or the harness's")
        if v.real_scalar("max_minutes", self.max_minutes) <= 0:
            raise ValueError(f"max_minutes must be positive, got {self.max_minutes!r}")

    @property
    def names(self) -> tuple:
        return tuple(x.name for x in self.schemes)

    @property
    def training_seeds(self) -> tuple:
        return tuple(range(self.seeds))

    @property
    def bases(self) -> tuple:
        """The distinct schemes to train: variants of one scheme share its trained model."""
        return tuple(dict.fromkeys(x.scheme for x in self.schemes))

    @property
    def vocab(self) -> int:
        # train's rule: the options' vocabulary, else 32 tokens for recall and 16 for the other tasks
        return int(self.options.get("vocab") or (32 if self.task == "recall" else 16))


# ---- claims ----------------------------------------------------------------------------------------


def _claim(item, i):
    if isinstance(item, (C.Claim, C.Spread, C.Share)):
        return item
    if callable(item):
        doc = (getattr(item, "__doc__", None) or "").strip().splitlines()
        text = doc[0] if doc else getattr(item, "__name__", "claim")
        if text == "<lambda>":
            text = f"claim {i + 1} (a lambda)"
        return C.Claim(text, _Margin(item, text))
    raise TypeError(f"claims must be lab.claims.Claim, Spread, Share or functions of one seed's numbers, got {item!r}")


class _Margin:
    """A function returning a margin (holds when ≥ 0) or a bool, as a Claim's test."""

    def __init__(self, fn, text):
        self.fn, self.text = fn, text

    def __call__(self, view) -> bool:
        out = self.fn(view)
        if isinstance(out, (bool, np.bool_)):
            return bool(out)
        if isinstance(out, (numbers.Real, np.floating)):
            return out >= 0  # a Measured margin records its comparison, so margins() weighs it
        raise TypeError(f"returned {out!r}: a claim function returns a margin (a number, ≥ 0 when it holds) or a bool")


def _text(claim) -> str:
    return claim.text


def _call(claim, what, fn):
    # run a claim's check; a claim that raises is named, with what it was checked on
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - any failure of the learner's function is reported by the claim's name
        raise ValueError(f"claim {_text(claim)!r} raised {type(error).__name__}: {error} (checked on {what})") from error


def check_claims(experiment) -> None:
    """Run every claim on made-up numbers with the experiment's keys, before any training: a claim that raises
    (a misspelt scheme, a length not tested) is named now, not after the run.

    >>> e = Experiment(["rope"], "prev", lengths=[64], seeds=3, claims=[lambda v: v["alibi", 64] >= 0.9])
    >>> check_claims(e)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: claim 'claim 1 (a lambda)' raised KeyError: ('alibi', 64) (checked on made-up numbers; keys: ... in [32, 64])
    """
    views = [_made_up_view(experiment, q) for q in (0.25, 0.5, 0.75)]
    keys = f"keys: (scheme, T), scheme in {list(experiment.names)}, T in {[experiment.train_len, *experiment.lengths]}"
    for claim in experiment.claims:
        if isinstance(claim, C.Claim):
            for view in views:
                _call(claim, f"made-up numbers; {keys}", lambda claim=claim, view=view: claim.holds(view))
        else:
            _call(claim, f"made-up numbers; {keys}", lambda claim=claim: claim.margin(views))


def _made_up_view(experiment, q):
    view = {}
    for name in experiment.names:
        for T in (experiment.train_len, *experiment.lengths):
            view[name, T] = C.Measured(q, 1024)
    return view


# ---- the budget ------------------------------------------------------------------------------------


def _time_here(scheme, task, train_len, lengths, steps, options, vocab) -> dict:
    # time_steps's measurements, in this process: step, compile and evaluate seconds
    import jax

    from .evaluate import accuracy
    from .model import Config
    from .train import Run, _Optimizer, _train_chunk, initial_params

    fields = {f.name for f in dataclasses.fields(Config)}
    config = Config(
        scheme=scheme, vocab=vocab, train_len=train_len, **{k: val for k, val in options.items() if k in fields and k != "vocab"}
    )
    optimizer = _Optimizer(options.get("lr", DEFAULTS["lr"]), DEFAULTS["warmup"], steps, DEFAULTS["weight_decay"])
    params = initial_params(config, 0)
    state = optimizer.init(params)
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        out = _train_chunk(params, state, jax.random.key(0), 0, config=config, task=task,
                           batch=options.get("batch", DEFAULTS["batch"]), n=STEPS_PER_CALL, optimizer=optimizer)
        jax.block_until_ready(out)
        seconds.append(time.perf_counter() - start)
    run = Run(scheme, task, train_len, params, np.zeros(1), config, 0, 1)
    start = time.perf_counter()
    accuracy(run, [train_len])
    if scheme != "learned":  # the learned table cannot run past L: nothing to score there
        accuracy(run, list(lengths), positions="beyond")
    evaluate = time.perf_counter() - start
    return {"step": seconds[1] / STEPS_PER_CALL, "compile": max(seconds[0] - seconds[1], 0.0), "evaluate": evaluate,
            "inside": sum(seconds) + evaluate}


def time_steps(experiment, *, workers=1) -> dict:
    """Time the experiment's model on this machine as the run will train it, in seconds: what :class:`Estimate` needs.

    ``"step"``: one training step, from a compiled chunk of
    :data:`.train.STEPS_PER_CALL` steps of the first scheme run twice (untimed,
    then timed); ``"compile"``: the first call's extra time; ``"evaluate"``:
    scoring one line at L and at every test length (compiling included), on
    the untrained model; ``"start"``: a worker process starting and importing
    the lab. With ``workers`` > 1 they are timed in as many workers of the
    kind the run uses (spawned, one XLA thread: :func:`.results.pool_map`) at
    once, so they share the cores as the run will (the slowest counts); with
    1, in this process (``"start"`` 0). Nothing is stored.
    """
    job = (experiment.schemes[0].scheme, experiment.task, experiment.train_len, experiment.lengths, experiment.steps,
           dict(experiment.options), experiment.vocab)
    if v.positive_int("workers", workers) == 1:
        return {**{k: val for k, val in _time_here(*job).items() if k != "inside"}, "start": 0.0}
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from .pool import one_thread_worker as _one_thread_worker

    start = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_one_thread_worker) as pool:
        # as many timings at once as the run has workers: they share the cores as the run's workers will
        got = [f.result() for f in [pool.submit(_time_here, *job) for _ in range(workers)]]
    wall = time.perf_counter() - start
    slowest = {k: max(g[k] for g in got) for k in ("step", "compile", "evaluate", "inside")}
    return {**{k: slowest[k] for k in ("step", "compile", "evaluate")}, "start": max(wall - slowest["inside"], 0.0)}


#: The keys of :func:`time_steps`'s answer, which :func:`estimate` and :func:`run` take as ``timing``.
TIMING_KEYS = ("step", "compile", "evaluate", "start")


def in_cache(experiment, scheme, seed, *, one_thread) -> bool:
    """Does the model cache (:mod:`.cache`) hold the model :func:`measure_scheme` trains for ``scheme`` and ``seed``?

    The key is :func:`.train.fit`'s for a fresh model as :func:`.train.train`
    makes it, on this machine, with ``XLA_FLAGS`` as a worker of the lab's pool
    sets them (``one_thread=True``, :data:`.results.XLA_ONE_THREAD`) or as this
    process has them: a model trained in a worker is another entry than one
    trained here. tests/test_lab_experiment.py holds it to fit's own key.
    """
    import inspect
    import os

    from . import cache as model_cache
    from .model import Config
    from .pool import XLA_ONE_THREAD
    from .train import fit, initial_params, train

    if model_cache.directory() is None:
        return False
    given = inspect.signature(train).parameters
    shape = {k: experiment.options.get(k, given[k].default) for k in ("d_model", "heads", "layers")}
    extra = {k: val for k, val in experiment.options.items() if k not in ("batch", "lr", "vocab", *shape)}
    config = Config(scheme=check_scheme(scheme), vocab=experiment.vocab, train_len=experiment.train_len, **shape, **extra)
    defaults = inspect.signature(fit).parameters
    material = {
        "config": dataclasses.asdict(config), "task": experiment.task, "seed": int(seed), "steps": experiment.steps,
        "batch": experiment.options.get("batch", given["batch"].default),
        "lr": float(experiment.options.get("lr", given["lr"].default)), "warmup": defaults["warmup"].default,
        "weight_decay": defaults["weight_decay"].default, "constant_lr": False, "text": None,
        "start": model_cache.flatten(initial_params(config, int(seed))), "omega": None, "logit_scale": 1.0,
        "checkpoints": [],
    }
    flags = os.environ.get("XLA_FLAGS")
    try:
        if one_thread and XLA_ONE_THREAD not in (flags or ""):
            os.environ["XLA_FLAGS"] = f"{flags or ''} {XLA_ONE_THREAD}".strip()
        key = model_cache.key_of(material)
    finally:
        if flags is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = flags
    return model_cache.load(key) is not None


@dataclasses.dataclass(frozen=True)
class Estimate:
    """How long :func:`run` will take: ``models`` trainings of ``steps`` steps (``cached`` more are read from the
    model cache), ``finetune_steps`` in all, ``lines`` scorings, shared by ``workers``; ``timing`` from
    :func:`time_steps` (None when nothing is trained)."""

    models: int
    cached: int
    steps: int
    finetune_steps: int
    lines: int
    workers: int
    timing: dict | None

    @property
    def minutes(self) -> float:
        t = self.timing
        if t is None:
            return 0.0  # every model is read back from the model cache; scoring only
        # the workers start once; the busiest trains ⌈models / workers⌉ (compile + steps each); the rest is shared
        train = math.ceil(self.models / self.workers) * (t["compile"] + self.steps * t["step"])
        shared = (self.finetune_steps * t["step"] + self.lines * t["evaluate"]) / self.workers
        return (t["start"] + train + shared) / 60

    def __str__(self):
        read = f"{self.cached} read from the model cache" if self.cached else "none in the model cache"
        if self.timing is None:
            return f"nothing to train: {read}; {self.lines} lines to score"
        t = self.timing
        return (
            f"about {self.minutes:.1f} min on this machine: {self.models} models × {self.steps} steps ({read})"
            + (f" + {self.finetune_steps} fine-tune steps" if self.finetune_steps else "")
            + f", {self.workers} at a time (timed here: {1000 * t['step']:.1f} ms a step, {t['compile']:.1f} s to "
            f"compile, {t['evaluate']:.1f} s to score a line)"
        )


def estimate(experiment, *, workers=2, timing=None) -> Estimate:
    """The run's :class:`Estimate`, before it trains: every (scheme, seed), the fresh seeds included.

    A training seed's model already in the model cache (:func:`in_cache`) is
    not counted as trained; fresh seeds are new, and fine-tunes are always
    counted. ``timing``: a dict with the keys :data:`TIMING_KEYS`, in seconds;
    None times the model now (:func:`time_steps`), unless nothing is to train.

    >>> e = Experiment(["rope", Variant("rope", method="pi", finetune=64)], "prev", lengths=[64], seeds=3, fresh=1)
    >>> est = estimate(e, workers=2, timing={"step": 0.01, "compile": 3.0, "evaluate": 1.0, "start": 2.0})
    >>> est.models + est.cached, est.finetune_steps, est.lines   # a RoPE model per seed, 4 seeds; 100 fine-tune steps each
    (4, 400, 8)
    """
    n_seeds = experiment.seeds + experiment.fresh
    total = len(experiment.bases) * n_seeds
    workers = max(1, min(v.positive_int("workers", workers), total))
    cached = sum(in_cache(experiment, b, s, one_thread=workers > 1) for b in experiment.bases for s in experiment.training_seeds)
    tune = sum(x.finetune_steps for x in experiment.schemes if x.finetune is not None) * n_seeds
    lines = len(experiment.schemes) * n_seeds
    if total - cached == 0 and tune == 0:
        return Estimate(0, cached, experiment.steps, 0, lines, workers, None)
    timing = time_steps(experiment, workers=workers) if timing is None else dict(timing)
    if sorted(timing) != sorted(TIMING_KEYS):
        raise ValueError(f"timing must have the keys {TIMING_KEYS}, got {sorted(timing)}")
    timing = {k: v.real_scalar(f"timing[{k!r}]", timing[k]) for k in TIMING_KEYS}
    return Estimate(total - cached, cached, experiment.steps, tune, lines, workers, timing)


# ---- training and measuring --------------------------------------------------------------------------


def _spec(experiment) -> tuple:
    # what a worker needs (picklable: no claims)
    return experiment.task, experiment.train_len, experiment.lengths, experiment.steps, dict(experiment.options)


def measure_scheme(spec, scheme, seed, variants) -> dict:
    """Train ``scheme`` on ``seed`` (or read it from the model cache) and score each variant of it.

    ``{variant name: {"at_L": accuracy over all positions at L, "beyond": [accuracy past L at each length]}}``.
    Runs in a worker of the lab's pool; returns numbers only.
    """
    from .evaluate import accuracy
    from .train import finetune, train

    task, L, lengths, steps, options = spec
    base = train(scheme, task, train_len=L, steps=steps, seed=seed, progress=False, **options)
    out = {}
    for x in variants:
        model, how = base, {"method": x.method, "factor": x.factor}
        if x.finetune is not None:
            model = finetune(base, length=x.finetune, method=x.method, factor=x.factor, steps=x.finetune_steps,
                             seed=seed, progress=False)
            how = {}  # a fine-tuned run is evaluated with its own rescaling
        at_L = accuracy(model, [L], seed=seed, logn=x.logn, **how)
        beyond = accuracy(model, list(lengths), seed=seed, positions="beyond", logn=x.logn, **how)
        out[x.name] = {"at_L": float(at_L[0]), "beyond": [float(a) for a in beyond]}
    return out


@functools.lru_cache(maxsize=None)
def _answers(task, length, seed, vocab, train_len, positions) -> int:
    # the n of an accuracy: the scored answers of the evaluation's test batch (evaluate.test_batch, EVAL_BATCH rows)
    from .evaluate import test_batch

    _, _, mask = test_batch(task, length, seed=seed, vocab=vocab)
    mask = np.asarray(mask)
    return int(mask[:, train_len:].sum() if positions == "beyond" else mask.sum())


def _rows(experiment, seed, numbers) -> list[dict]:
    L, rows = experiment.train_len, []
    for name in experiment.names:
        got = numbers[name]
        beyond = list(got["beyond"])
        if len(beyond) != len(experiment.lengths):
            raise ValueError(f"{name!r} on seed {seed}: {len(beyond)} accuracies past L for {len(experiment.lengths)} lengths")
        cells = [(L, "all", got["at_L"])] + [(T, "beyond", a) for T, a in zip(experiment.lengths, beyond, strict=True)]
        for T, positions, acc in cells:
            n = _answers(experiment.task, T, seed, experiment.vocab, L, positions)
            acc = float(acc)
            se = float("nan") if np.isnan(acc) else C.standard_error(acc, n)
            rows.append({"scheme": name, "seed": seed, "length": T, "positions": positions, "accuracy": acc, "n": n, "se": se})
    return rows


def draw_fresh_seeds(k, *, avoid=()) -> tuple:
    """``k`` distinct seeds drawn with ``secrets.randbelow(9000) + 1000`` (docs/CLAIMS.md's rule), none in ``avoid``
    nor a seed of the lab's shipped sweeps or held-out rows.

    >>> len(draw_fresh_seeds(3)), all(1000 <= s < 10000 for s in draw_fresh_seeds(3))
    (3, True)
    """
    from . import results

    taken = set(avoid) | set(results.SEEDS) | set(results.EXTRA_SEEDS) | set(results.HELD_OUT)
    out = []
    while len(out) < k:
        seed = secrets.randbelow(9000) + 1000
        if seed not in taken and seed not in out:
            out.append(seed)
    return tuple(out)


# ---- the outcome -----------------------------------------------------------------------------------


class Table:
    """The tidy table: one row per (scheme, seed, length), a dict with the keys :data:`COLUMNS`.

    ``positions`` is ``"beyond"`` (the positions past L) at every test length,
    ``"all"`` at L; ``n`` the answers the accuracy counts (the lab's test batch,
    :data:`.evaluate.EVAL_BATCH` sequences), ``se`` its binomial standard error
    (NaN where the scheme cannot run: the learned table past L).

    >>> t = Table([{"scheme": "rope", "seed": 0, "length": 64, "positions": "beyond", "accuracy": 0.5, "n": 1024,
    ...             "se": 0.015625}])
    >>> len(t), t.column("se")
    (1, array([0.015625]))
    """

    columns = COLUMNS

    def __init__(self, rows):
        self.rows = tuple(dict(r) for r in rows)
        for r in self.rows:
            if tuple(r) != COLUMNS:
                raise ValueError(f"a row must have the columns {COLUMNS} in order, got {tuple(r)}")

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def column(self, name) -> np.ndarray:
        if name not in COLUMNS:
            raise ValueError(f"column must be one of {COLUMNS}, got {name!r}")
        return np.array([r[name] for r in self.rows])

    def to_pandas(self):
        """The table as a pandas DataFrame, one column per name of :data:`COLUMNS`; pandas must be installed."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Table.to_pandas needs pandas, which posenc_helpers does not install: run `pip install pandas` "
                "(or read Table.rows, a tuple of dicts)"
            ) from None
        return pd.DataFrame(list(self.rows), columns=list(COLUMNS))

    def summary(self) -> dict:
        """``{(scheme, length): (median, lowest, highest)}`` of the accuracy over the seeds (NaN: cannot run)."""
        out: dict = {}
        for r in self.rows:
            out.setdefault((r["scheme"], r["length"]), []).append(r["accuracy"])
        return {k: (float(np.median(a)), float(np.min(a)), float(np.max(a))) for k, a in out.items()}

    def __str__(self):
        summary = self.summary()
        schemes = list(dict.fromkeys(s for s, _ in summary))
        lengths = sorted({T for _, T in summary})
        seeds = len({r["seed"] for r in self.rows})
        head = f"{'':<16}" + "".join(f"{f'T = {T}':>20}" for T in lengths)
        lines = [f"accuracy, median (range) over {seeds} seeds; at L all positions, past L the positions past L", head]
        for s in schemes:
            cells = []
            for T in lengths:
                med, lo, hi = summary[s, T]
                cells.append("cannot run" if np.isnan(med) else f"{med:.2f} ({lo:.2f}–{hi:.2f})")
            lines.append(f"{s:<16}" + "".join(f"{c:>20}" for c in cells))
        return "\n".join(lines)

    def __repr__(self):
        return f"<Table: {len(self)} rows, columns {', '.join(COLUMNS)}>"


def _views(experiment, table) -> dict:
    # {seed: {(scheme, T): Measured(accuracy, n)}}, the numbers a claim reads
    out: dict = {}
    for r in table:
        out.setdefault(r["seed"], {})[r["scheme"], r["length"]] = C.Measured(r["accuracy"], r["n"])
    return out


class Outcome:
    """What :func:`run` returns: ``experiment``, ``table`` (training seeds), ``estimate``, :meth:`verdict`, :meth:`figure`.

    The fresh seeds' rows are kept apart and shown by :meth:`verdict` only.
    """

    def __init__(self, experiment, table, fresh_table, fresh_seeds, estimate=None):
        self.experiment, self.table, self.estimate = experiment, table, estimate
        self._fresh_table, self._fresh_seeds = fresh_table, tuple(fresh_seeds)
        self._verdict = None

    @property
    def fresh_seeds(self):
        """The fresh seeds, once :meth:`verdict` has checked the claims on them; None before."""
        return None if self._verdict is None else self._fresh_seeds

    @property
    def fresh_table(self):
        """The fresh seeds' rows, once :meth:`verdict` has checked the claims on them; None before."""
        return None if self._verdict is None else self._fresh_table

    def verdict(self) -> Verdict:
        """Every claim on the training seeds, then on the fresh seeds (:class:`Verdict`); computed once."""
        if self._verdict is None:
            self._verdict = judge(
                self.experiment, _views(self.experiment, self.table), _views(self.experiment, self._fresh_table)
            )
        return self._verdict

    def figure(self, *, chance=None):
        """The standard figure of the training seeds: median and range over seeds per scheme, past L shaded.

        ``chance``: the task's chance level, drawn as a dotted line (e.g. ``lab.chance(task, 16)``); None draws none.
        Returns ``(fig, {scheme: median line})``.
        """
        from ..viz.experiment import make_experiment_figure

        return make_experiment_figure(self.table, self.experiment.train_len, chance=chance, title=_title(self.experiment))

    def __repr__(self):
        e = self.experiment
        return f"<Outcome: {', '.join(e.names)} on {e.task}, L = {e.train_len}, {e.seeds} training seeds; .verdict()>"


def _title(experiment) -> str:
    return f"{experiment.task}: trained at L = {experiment.train_len}, {experiment.seeds} seeds"


# ---- the verdict -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Each claim on the training seeds and on the fresh ones: ``lines`` (one dict per claim) and ``fresh_seeds``.

    Each line has ``text``, ``kind`` (``"claim"``, ``"spread"``, ``"share"``),
    ``training`` and ``fresh`` (True: holds), ``noise`` (holds, but its worst
    seed is within :data:`MIN_RATIO` standard errors), ``report`` (the
    sentence). ``holds``: every claim holds on both, outside the noise. Printed,
    each claim is marked ✓ (holds), ≈ (holds, within the noise) or ✗ (fails).
    """

    lines: tuple
    fresh_seeds: tuple

    @property
    def holds(self) -> bool:
        return all(x["training"] and x["fresh"] and not x["noise"] for x in self.lines)

    def __str__(self):
        # ✓ holds, ≈ holds but within MIN_RATIO standard errors on a training seed, ✗ fails somewhere
        def mark(x):
            return "✗" if not (x["training"] and x["fresh"]) else "≈" if x["noise"] else "✓"

        return "\n".join(f"{mark(x)} {x['text']}\n    {x['report']}" for x in self.lines)


def _seed_margin(claim, seed, view) -> dict:
    # one seed's check of a Claim: holds, and its comparison closest to failing (margins' rule)
    m = _call(claim, f"seed {seed}", lambda: C.margins([claim], {seed: view}))[claim.text]
    return {"seed": seed, "holds": bool(m["k"]), "margin": m["margin"], "se": m["se"], "ratio": m["ratio"]}


def _where(m) -> str:
    if m["margin"] is None:
        return f"seed {m['seed']}"
    se = "" if m["se"] is None else f", SE {m['se']:.3f}" + (f", {m['ratio']:.1f} SE" if m["ratio"] is not None else "")
    return f"seed {m['seed']}: margin {m['margin']:+.3f}{se}"


def _fresh(k) -> str:
    # "the fresh seed", "the 2 fresh seeds"
    return "the fresh seed" if k == 1 else f"the {k} fresh seeds"


def _judge_claim(claim, train_views, fresh_views) -> dict:
    train = [_seed_margin(claim, s, vw) for s, vw in train_views.items()]
    fresh = [_seed_margin(claim, s, vw) for s, vw in fresh_views.items()]
    held = [m for m in train if m["holds"]]
    failed = [m for m in train if not m["holds"]]
    ratios = [m for m in held if m["ratio"] is not None]
    worst = min(ratios, key=lambda m: m["ratio"]) if ratios else None
    noise = not failed and worst is not None and worst["ratio"] < MIN_RATIO
    report = f"holds on {len(held)}/{len(train)}"
    if failed:
        report += "; fails on " + "; ".join(_where(m) for m in failed)
    elif worst is not None:
        report += f" (closest: {_where(worst)})"
    if noise:
        report += f": within {MIN_RATIO:g} SE of failing, too close for the course to state it"
    bad = [m for m in fresh if not m["holds"]]
    if not fresh:
        report += "; no fresh seeds drawn"
    elif not bad:
        report += f", and on {_fresh(len(fresh))} (" + "; ".join(_where(m) for m in fresh) + ")"
    else:
        fails = "; ".join(_where(m) for m in bad)
        which = _fresh(1) if len(fresh) == 1 else f"{len(bad)} of {_fresh(len(fresh))}"
        report += f", but fails on {which}: {fails}"
    return {"text": claim.text, "kind": "claim", "training": not failed, "fresh": not bad, "noise": noise, "report": report}


def _over(claim, views) -> tuple[bool, str]:
    margin = _call(claim, f"seeds {sorted(views)}", lambda: claim.margin(views))
    if isinstance(claim, C.Spread):
        what = claim.describe(views)
    else:
        k, n = claim.count(views)
        what = f"on {k} of {n} seeds"
    return margin >= 0, f"{what} (margin {margin:+.3f})"


def _judge_over(claim, train_views, fresh_views) -> dict:
    ok, report = _over(claim, train_views)
    out = {"text": claim.text, "kind": "spread" if isinstance(claim, C.Spread) else "share", "training": ok, "noise": False}
    if fresh_views:
        both = {**train_views, **fresh_views}
        ok_both, with_fresh = _over(claim, both)
        report += f"; with {_fresh(len(fresh_views))} ({', '.join(map(str, fresh_views))}) added: {with_fresh}"
    else:
        ok_both = True
        report += "; no fresh seeds drawn"
    return {**out, "fresh": ok_both, "report": ("holds: " if ok and ok_both else "fails: ") + report}


def judge(experiment, train_views, fresh_views) -> Verdict:
    """The :class:`Verdict` of the experiment's claims on ``{seed: view}`` of the training and of the fresh seeds.

    A :class:`.claims.Claim` (or a margin function) must hold on every seed,
    training and fresh, and clear its worst training seed by
    :data:`MIN_RATIO` binomial standard errors; a Spread or Share must hold
    over the training seeds, and over them with the fresh seeds added (as
    :func:`.claims.check_seeds` does).

    >>> e = Experiment(["rope"], "prev", lengths=[64], seeds=3, claims=[lambda v: v["rope", 64] - 0.5])
    >>> seen = {s: {("rope", 32): C.Measured(1.0, 992), ("rope", 64): C.Measured(q, 1024)}
    ...         for s, q in [(0, 0.9), (1, 0.8), (2, 0.7)]}
    >>> print(judge(e, seen, {4321: {("rope", 32): C.Measured(1.0, 992), ("rope", 64): C.Measured(0.4, 1024)}}))
    ✗ claim 1 (a lambda)
        holds on 3/3 (closest: seed 2: margin +0.200, SE 0.016, 12.8 SE), but fails on the fresh seed:
        seed 4321: margin -0.100, SE 0.016, -6.4 SE
    """
    lines = []
    for claim in experiment.claims:
        if isinstance(claim, C.Claim):
            lines.append(_judge_claim(claim, train_views, fresh_views))
        else:
            lines.append(_judge_over(claim, train_views, fresh_views))
    return Verdict(tuple(lines), tuple(fresh_views))


# ---- the run ---------------------------------------------------------------------------------------


def run(experiment, *, workers=2, progress=True, confirm=None, measure=None, timing=None) -> Outcome:
    """Check the claims' keys, estimate, ask if above ``max_minutes``, then train and score every (scheme, seed).

    Prints the :class:`Estimate` first. Above ``experiment.max_minutes`` it
    asks (``input``) unless ``confirm`` is given: ``True`` trains, ``False``
    raises :class:`NotRun` (as does any answer but "y"). Every scheme is
    trained on the training seeds and on :data:`FRESH_SEEDS` fresh ones (drawn
    now, shown only by :meth:`Outcome.verdict`), in the lab's pool of
    ``workers`` processes (:func:`.results.pool_map`), with one progress bar.
    ``measure`` stands in for :func:`measure_scheme` (tests; it runs in this
    process), ``timing`` for :func:`time_steps` (a dict with the keys
    :data:`TIMING_KEYS`).
    """
    if not isinstance(experiment, Experiment):
        raise TypeError(f"experiment must be a lab.experiment.Experiment, got {type(experiment).__name__}")
    if confirm is not None and not isinstance(confirm, (bool, np.bool_)):
        raise TypeError(f"confirm must be None (ask), True or False, got {confirm!r}")
    check_claims(experiment)
    est = estimate(experiment, workers=workers, timing=timing)
    fresh_count = f"{experiment.fresh} fresh seed{'s' if experiment.fresh != 1 else ''}"
    print(f"{_title(experiment)} + {fresh_count}, {len(experiment.names)} lines: {est}")
    if est.minutes > experiment.max_minutes:
        ask = f"That is above max_minutes = {experiment.max_minutes:g}. Train? [y/N] "
        go = input(ask).strip().lower() in ("y", "yes") if confirm is None else bool(confirm)
        if not go:
            raise NotRun(
                f"not run: the estimate ({est.minutes:.1f} min) is above max_minutes = {experiment.max_minutes:g}; "
                "answer y, pass confirm=True, or raise max_minutes"
            )
    fresh = draw_fresh_seeds(experiment.fresh, avoid=experiment.training_seeds)
    by_scheme = {b: tuple(x for x in experiment.schemes if x.scheme == b) for b in experiment.bases}
    jobs = [(_spec(experiment), b, seed, by_scheme[b]) for seed in (*experiment.training_seeds, *fresh) for b in by_scheme]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc=f"{len(jobs)} models on {experiment.task}", unit="model")
    done = None if bar is None else (lambda i, result: bar.update(1))
    if measure is None:
        from .pool import pool_map

        found = pool_map(measure_scheme, jobs, workers=workers, on_result=done)
    else:
        found = []
        for i, job in enumerate(jobs):
            found.append(measure(*job))
            if done is not None:
                done(i, found[-1])
    if bar is not None:
        bar.close()
    numbers: dict = {}
    for (_, _, seed, _), got in zip(jobs, found, strict=True):
        numbers.setdefault(seed, {}).update(got)
    train_rows = [r for s in experiment.training_seeds for r in _rows(experiment, s, numbers[s])]
    fresh_rows = [r for s in fresh for r in _rows(experiment, s, numbers[s])]
    return Outcome(experiment, Table(train_rows), Table(fresh_rows), fresh, est)
