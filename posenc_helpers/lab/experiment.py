"""Your own experiment: train short, test long, and check your claims on seeds nobody chose.

An :class:`Experiment` names the schemes (each a name of :data:`.model.SCHEMES`
or a :class:`Variant` with a test-time rescaling or a fine-tune), a task, the
training length L, the test lengths (all past L), the number of training
seeds, and the claims, written before training. :func:`run` prints how long
the run will take on this machine, asks before a long one, and trains every
(scheme, seed) in the lab's pool of worker processes (reading the model cache
where it holds a model). The :class:`Outcome` holds

* a tidy :class:`Table`, one row per (scheme, seed, length): the accuracy on
  the positions past L, the number n of test sequences it is measured on
  (:data:`.evaluate.EVAL_SEQUENCES`) and its standard error over them (the
  sequence is the unit of noise: :mod:`.stats`); at L itself, the accuracy
  over all positions (in distribution). On the passkey task a sequence scores
  1 when its whole key is right (as :mod:`.length_claims` counts it), and past
  L it is scored as the length sweep scores it (:func:`.passkey.far_summary`):
  256 haystacks at each of five depths, each haystack's whole keys averaged
  over the depths whose needle lies more than L before the query;
* :meth:`Outcome.verdict`: every claim checked on the training seeds, then on
  fresh seeds the harness drew itself (``secrets``) after the claims were
  fixed, trained with the others, and revealed only there; with what the
  seeds prove (k of n seeds: the per-seed failure rate is below a
  Clopper–Pearson bound).

The claims are fixed before the run: :func:`question_hash` hashes them with
the question, :func:`run` prints the hash and appends every run to a log
beside the model cache (:data:`RUN_LOG`). Running the same question again
adds fresh seeds to those of its earlier runs, and the verdict judges the
claims on all of them, so a retry cannot wash out a failure; changing the
claims after a run has shown fresh seeds makes a new question, whose verdict
says that those seeds were seen and counts them as training seeds. The
training seeds themselves are drawn from the experiment's own hash, never the
stored sweeps' seeds, whose numbers the notebooks print.

A claim is a :class:`.claims.Claim` (a per-seed check), a :class:`.claims.Spread`
or :class:`.claims.Share` (a statement over the seeds), or a plain function of
one seed's numbers returning a margin (holds when ≥ 0) or a bool. One seed's
numbers ``v`` are ``v[scheme, T]``: accuracy past L at test length T, or over
all positions at T = L; each is a :class:`.claims.Measured`, so a margin is
weighed against its standard error over sequences, and the course's rule
applies, on the fresh seeds too: a claim stated on trained models clears its
worst seed by at least :data:`MIN_RATIO` = 4 standard errors. A claim whose
threshold is at or below the task's chance level (a guess passes it) is
refused before anything trains.

Taught in the notebook "Your own experiment" (issue 30).

>>> e = Experiment(["alibi", "rope"], "prev", lengths=[64, 128], seeds=3,
...                claims=[lambda v: v["alibi", 128] - v["rope", 128]])
>>> e.names, e.lengths, len(e.training_seeds), set(e.training_seeds) & set(range(20))
(('alibi', 'rope'), (64, 128), 3, set())
>>> Experiment(["rope"], "prev", lengths=[32])
Traceback (most recent call last):
...
ValueError: lengths must all exceed train_len = 32 (the harness measures past L; L itself is always scored), got 32
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import inspect
import json
import math
import numbers
import secrets
import time

import numpy as np

from .. import _validate as v
from . import claims as C
from . import stats
from .evaluate import EVAL_SEQUENCES, SCALINGS
from .model import check_scheme
from .tasks import check_task
from .train import DEFAULTS, STEPS_PER_CALL

__all__ = [
    "Variant", "Experiment", "Estimate", "Table", "Outcome", "Verdict", "NotRun", "run", "estimate", "time_steps",
    "TIMING_KEYS", "in_cache", "check_claims", "draw_fresh_seeds", "MIN_SEEDS", "MIN_RATIO", "FRESH_SEEDS", "COLUMNS",
    "question_hash", "experiment_hash", "chance_of", "RUN_LOG", "run_log", "earlier_runs", "judge",
]

#: Fewest training seeds: a median and a range need three.
MIN_SEEDS = 3

#: The course's rule (docs/CLAIMS.md, :data:`.stats.RULE`): an accuracy claim clears its worst seed, training or fresh,
#: by this many standard errors over test sequences.
MIN_RATIO = stats.RULE

#: Fresh seeds drawn per run. Each run of a question adds its fresh seeds to those of its earlier runs.
FRESH_SEEDS = 2

#: The file, in the model cache's folder, that every run of the harness is appended to (None with the cache off).
RUN_LOG = "experiment-runs.jsonl"

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
    above ``train_len``. The training seeds are ``seeds`` seeds drawn from the
    experiment's own hash (:func:`experiment_hash`), none a seed of the stored
    sweeps; ``fresh`` more are drawn at run time. ``claims``: see the module's
    docstring. ``steps`` and ``options``
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
        if self.task == "passkey":
            _far_lengths(lengths, L)
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
        """``seeds`` seeds in 1,000 … 9,999 fixed by :func:`experiment_hash`, none a seed of the stored sweeps."""
        from . import results

        avoid = set(results.SEEDS) | set(results.EXTRA_SEEDS) | set(results.FORMER_HELD_OUT)
        return stats.held_out_seeds(experiment_hash(self), self.seeds, exclude=avoid)

    @property
    def bases(self) -> tuple:
        """The distinct schemes to train: variants of one scheme share its trained model."""
        return tuple(dict.fromkeys(x.scheme for x in self.schemes))

    @property
    def vocab(self) -> int:
        # train's rule: the options' vocabulary, else 32 tokens for recall and 16 for the other tasks
        return int(self.options.get("vocab") or (32 if self.task == "recall" else 16))


# ---- what fixes a question: its hash, and the log of its runs ----------------------------------------


def _source(fn) -> str:
    # a function's source, or (where Python has none, e.g. a function built at run time) its code object's bytes
    fn = getattr(fn, "fn", fn)  # a margin function wrapped by _Margin
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        return repr(fn) if code is None else code.co_code.hex() + repr(code.co_consts) + repr(code.co_names)


def _claim_print(claim) -> dict:
    if isinstance(claim, C.Spread):
        return {"kind": "spread", "text": claim.text, "source": _source(claim.number), "median": list(claim.median),
                "wide": claim.wide}
    if isinstance(claim, C.Share):
        return {"kind": "share", "text": claim.text, "source": _source(claim.test), "at_least": claim.at_least}
    return {"kind": "claim", "text": claim.text, "source": _source(claim.test)}


def _digest(material) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=repr).encode()).hexdigest()


def experiment_hash(experiment) -> str:
    """SHA-256 of what is trained and how: the schemes and their variants, the task, L, steps and options.

    Its training seeds follow from it (:attr:`Experiment.training_seeds`).
    """
    return _digest({
        "schemes": [dataclasses.asdict(x) for x in experiment.schemes], "task": experiment.task,
        "train_len": experiment.train_len, "steps": experiment.steps, "options": dict(sorted(experiment.options.items())),
    })


def question_hash(experiment) -> str:
    """SHA-256 of the question: :func:`experiment_hash`, the test lengths and every claim's text and source.

    Fixed before the run (:func:`run` prints it): changing a claim, even its
    threshold, is another question.

    >>> a = Experiment(["rope"], "prev", lengths=[64], seeds=3, claims=[lambda v: v["rope", 64] - 0.5])
    >>> b = Experiment(["rope"], "prev", lengths=[64], seeds=3, claims=[lambda v: v["rope", 64] - 0.4])
    >>> question_hash(a) != question_hash(b), experiment_hash(a) == experiment_hash(b)
    (True, True)
    """
    material = {"experiment": experiment_hash(experiment), "lengths": list(experiment.lengths),
                "claims": [_claim_print(c) for c in experiment.claims]}
    if experiment.task == "passkey":
        # the passkey past L is scored by haystack over the far needles (passkey.far_summary) since issue 43: a run
        # scored the earlier way (the far haystacks of one random-depth batch) is another question, never judged with it
        material["passkey_scoring"] = PASSKEY_SCORING
    return _digest(material)


#: How the harness scores the passkey past L; part of a passkey question's hash, so runs scored another way are never
#: judged together.
PASSKEY_SCORING = "far needles by haystack: passkey.far_summary over passkey.DEPTHS, 256 haystacks"


def run_log():
    """The run log's path (:data:`RUN_LOG` in the model cache's folder), or None when the model cache is off."""
    from .cache import directory

    folder = directory()
    return None if folder is None else folder / RUN_LOG


def earlier_runs(experiment, path=None) -> list[dict]:
    """The log's entries of earlier runs of ``experiment`` (any claims), oldest first."""
    path = run_log() if path is None else path
    if path is None or not path.is_file():
        return []
    key = experiment_hash(experiment)
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e for e in entries if e.get("experiment") == key]


def _append_run(path, entry) -> None:
    if path is None:
        return
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


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


def chance_of(experiment) -> float:
    """The accuracy a guess with no position information gets on the experiment's task, as the harness scores it.

    Per answer, :func:`.tasks.chance` (1/V on the k-back tasks, "first" and
    "half"; a value in context on recall); on the passkey, whose sequences the
    harness scores by the whole key, 1/K! (:func:`.passkey.chance_key`).

    >>> chance_of(Experiment(["rope"], "prev", seeds=3)), chance_of(Experiment(["rope"], "passkey", seeds=3))
    (0.0625, 0.16666666666666666)
    """
    from .passkey import chance_key
    from .tasks import chance

    if experiment.task == "passkey":
        return chance_key()
    return chance(experiment.task, experiment.vocab, length=experiment.train_len)


class _Probe(C.Measured):
    """A made-up accuracy that notes every lower bound a claim puts on it (``≥ x`` or ``> x`` with x a number)."""

    seen: list = []

    def __ge__(self, other):
        self._note(other)
        return super().__ge__(other)

    def __gt__(self, other):
        self._note(other)
        return super().__gt__(other)

    def _note(self, other):
        if not isinstance(other, C.Measured) and isinstance(other, (int, float)) and len(self.parts) == 1:
            _Probe.seen.append(float(other))


def _probe(q, n=EVAL_SEQUENCES):
    return _Probe(q, n, se=float(np.sqrt(q * (1 - q) / n)))


def check_claims(experiment) -> None:
    """Before any training: run every claim on made-up numbers with the experiment's keys, so that a claim that
    raises (a misspelt scheme, a length not tested) is named now, not after the run; and refuse a claim that puts a
    lower bound at or below the task's chance level (:func:`chance_of`), which a model that guesses passes.

    A claim written as a margin function returns ``v[...] - x``: its bound x is
    seen as the margin it returns when the accuracy is x.

    >>> e = Experiment(["rope"], "prev", lengths=[64], seeds=3, claims=[lambda v: v["alibi", 64] >= 0.9])
    >>> check_claims(e)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: claim 'claim 1 (a lambda)' raised KeyError: ('alibi', 64) (checked on made-up numbers; keys: ... in [32, 64])
    >>> check_claims(Experiment(["rope"], "prev", lengths=[64], seeds=3, claims=[lambda v: v["rope", 64] >= 0.05]))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: claim 'claim 1 (a lambda)' bounds an accuracy from below by 0.05, at or below the task's chance level 0.0625 ...
    """
    views = [_made_up_view(experiment, q) for q in (0.25, 0.5, 0.75)]
    keys = f"keys: (scheme, T), scheme in {list(experiment.names)}, T in {[experiment.train_len, *experiment.lengths]}"
    chance = chance_of(experiment)
    for claim in experiment.claims:
        _Probe.seen = []
        if isinstance(claim, C.Claim):
            for view in views:
                _call(claim, f"made-up numbers; {keys}", lambda claim=claim, view=view: claim.holds(view))
                if isinstance(claim.test, _Margin):
                    _bound_of_margin(claim, view)
        else:
            _call(claim, f"made-up numbers; {keys}", lambda claim=claim: claim.margin(views))
        low = [x for x in _Probe.seen if x <= chance + 1e-12]
        if low:
            raise ValueError(
                f"claim {claim.text!r} bounds an accuracy from below by {min(low):g}, at or below the task's chance "
                f"level {chance:g} (a model that guesses passes it): raise the bound above chance"
            )


def _bound_of_margin(claim, view):
    # a margin function v[...] - x holds from the accuracy x on: find x by reading the margin at two made-up values
    # of every number it could read (it is linear in them where it is a difference with a constant)
    fn = claim.test.fn
    keys = list(view)
    for key in keys:
        low = {**view, key: _probe(0.25)}
        high = {**view, key: _probe(0.75)}
        try:
            a, b = fn(low), fn(high)
        except Exception:  # noqa: BLE001 - the claim's own check already ran on these keys
            continue
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (numbers.Real, np.floating)):
            return  # a function returning a bool: its comparisons were noted by the probes
        a, b = float(a), float(b)
        slope = (b - a) / 0.5
        if abs(slope - 1.0) < 1e-9:  # margin = accuracy − x: a lower bound x on that accuracy
            others = [k for k in keys if k != key]
            if all(abs(float(fn({**low, k: _probe(0.5)})) - a) < 1e-9 for k in others):  # reads only this number
                _Probe.seen.append(0.25 - a)


def _made_up_view(experiment, q):
    view = {}
    for name in experiment.names:
        for T in (experiment.train_len, *experiment.lengths):
            view[name, T] = _probe(q)
    return view


# ---- the budget ------------------------------------------------------------------------------------


def _time_here(scheme, task, train_len, lengths, steps, options, vocab) -> dict:
    # time_steps's measurements, in this process: step, compile and evaluate seconds
    import jax

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
    _scores(run, train_len, seed=0, logn=False, how={}, past_only=False)  # what the run scores, as it scores it
    if scheme != "learned":  # the learned table cannot run past L: nothing to score there
        for T in lengths:
            _scores(run, T, seed=0, logn=False, how={}, past_only=True)
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


def _far_lengths(lengths, L):
    # past L the passkey counts only needles more than L before the query (passkey.far_summary): refuse a test length
    # at which no depth of passkey.DEPTHS puts one that far, naming the shortest length that has one
    from .passkey import DEPTHS
    from .tasks import PASSKEY_LEN, passkey_position

    def far(T):
        return any(T - PASSKEY_LEN - passkey_position(d, T) - 1 > L for d in DEPTHS)

    near = [T for T in lengths if not far(T)]
    if near:
        shortest = next(T for T in range(L + 1, 64 * L) if far(T))
        raise ValueError(
            f"lengths: on the passkey, past L only needles more than train_len = {L} before the query count, and at "
            f"{', '.join(map(str, near))} no depth of passkey.DEPTHS puts one that far; the shortest length with one "
            f"is {shortest}"
        )


def _scores(model, T, *, seed, logn, how, past_only):
    # (accuracy, its SE over sequences, sequences) at length T: every scored answer (past_only False) or those past
    # L; on the passkey a sequence scores 1 when its whole key is right, and past L the score is the length sweep's
    # (passkey.far_summary): 256 haystacks at each depth of passkey.DEPTHS, each haystack's whole keys averaged over
    # the depths whose needle lies more than L before the query, the SE over haystacks (NaN, 0 when none is that far)
    from .evaluate import sequence_scores
    from .stats import summarize

    if model.task == "passkey" and past_only:
        from .passkey import DEPTHS, far_summary, haystack_scores

        scores = haystack_scores(model, [T], DEPTHS, seed=seed, logn=logn, **how)
        far = far_summary(scores)
        value, se = float(far["far"][0]), float(far["far_se"][0])
        return value, se, (0 if np.isnan(value) else scores["sequences"])
    cell = sequence_scores(model, T, seed=seed, logn=logn, **how)
    part = cell["beyond"] if past_only else cell["all"]
    if model.task == "passkey":
        part = (part >= 1.0 - 1e-9).astype(float)  # at L: the whole key right, over the test batch's random depths
    if part.size < 2:
        return float("nan"), float("nan"), int(part.size)
    score = summarize(part)
    return score.value, score.se, score.n


def measure_scheme(spec, scheme, seed, variants) -> dict:
    """Train ``scheme`` on ``seed`` (or read it from the model cache) and score each variant of it.

    ``{variant name: {"at_L": (accuracy, se, n), "beyond": [(accuracy, se, n) past L at each length]}}``: accuracy
    over :data:`.evaluate.EVAL_SEQUENCES` test sequences, its standard error over them, and their number (on the
    passkey past L, the haystacks, each averaged over its far needles: :func:`.passkey.far_summary`). Runs in a
    worker of the lab's pool; returns numbers only.
    """
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
        at_L = _scores(model, L, seed=seed, logn=x.logn, how=how, past_only=False)
        if scheme == "learned":  # the table has L rows: it cannot run past L
            beyond = [(float("nan"), float("nan"), 0) for _ in lengths]
        else:
            beyond = [_scores(model, T, seed=seed, logn=x.logn, how=how, past_only=True) for T in lengths]
        out[x.name] = {"at_L": at_L, "beyond": beyond}
    return out


def _rows(experiment, seed, numbers) -> list[dict]:
    L, rows = experiment.train_len, []
    for name in experiment.names:
        got = numbers[name]
        beyond = list(got["beyond"])
        if len(beyond) != len(experiment.lengths):
            raise ValueError(f"{name!r} on seed {seed}: {len(beyond)} accuracies past L for {len(experiment.lengths)} lengths")
        cells = [(L, "all", got["at_L"])] + [(T, "beyond", a) for T, a in zip(experiment.lengths, beyond, strict=True)]
        for T, positions, (acc, se, n) in cells:
            rows.append({"scheme": name, "seed": seed, "length": T, "positions": positions, "accuracy": float(acc),
                         "n": int(n), "se": float(se)})
    return rows


def draw_fresh_seeds(k, *, avoid=()) -> tuple:
    """``k`` distinct seeds drawn with ``secrets.randbelow(9000) + 1000`` (docs/CLAIMS.md's rule), none in ``avoid``
    nor a seed of the lab's shipped sweeps or held-out rows.

    >>> len(draw_fresh_seeds(3)), all(1000 <= s < 10000 for s in draw_fresh_seeds(3))
    (3, True)
    """
    from . import results

    taken = set(avoid) | set(results.SEEDS) | set(results.EXTRA_SEEDS) | set(results.FORMER_HELD_OUT)
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
    ``"all"`` at L; ``n`` the test sequences the accuracy is the mean of
    (:data:`.evaluate.EVAL_SEQUENCES`; on the passkey past L, the haystacks,
    each averaged over its needles more than L before the query), ``se`` its standard
    error over them (NaN where the scheme cannot run: the learned table past L).

    >>> t = Table([{"scheme": "rope", "seed": 1234, "length": 64, "positions": "beyond", "accuracy": 0.5, "n": 256,
    ...             "se": 0.02}])
    >>> len(t), t.column("se")
    (1, array([0.02]))
    """

    columns = COLUMNS

    def __init__(self, rows, task=None):
        self.task = task  # the experiment's task: how the accuracy is scored (the passkey by haystack past L)
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
        what = ("whole keys; at L needles at random depths, past L by haystack over far needles" if self.task == "passkey"
                else "at L all positions, past L the positions past L")
        lines = [f"accuracy, median (range) over {seeds} seeds; {what}", head]
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
    # {seed: {(scheme, T): Measured(accuracy, n, se=...)}}, the numbers a claim reads, with their SE over sequences
    out: dict = {}
    for r in table:
        ok = r["n"] >= 2 and not np.isnan(r["se"])
        value = C.Measured(r["accuracy"], r["n"], se=r["se"]) if ok else C.Measured(r["accuracy"])
        out.setdefault(r["seed"], {})[r["scheme"], r["length"]] = value
    return out


class Outcome:
    """What :func:`run` returns: ``experiment``, ``table`` (training seeds), ``estimate``, :meth:`verdict`, :meth:`figure`.

    The fresh seeds' rows are kept apart and shown by :meth:`verdict` only;
    ``history`` holds the question's hash (``"question"``), this run's number
    among the runs of that question (``"run"``), the fresh rows of its earlier
    runs (``"earlier"``, judged with this run's), and the seeds that earlier
    runs of the same experiment with other claims showed (``"seen"``, judged
    as training seeds). :meth:`more_fresh` trains more fresh seeds.
    """

    def __init__(self, experiment, table, fresh_table, fresh_seeds, estimate=None, history=None):
        self.experiment, self.table, self.estimate = experiment, table, estimate
        self._fresh_table, self._fresh_seeds = fresh_table, tuple(fresh_seeds)
        self.history = history or {"question": question_hash(experiment), "run": 1, "earlier": [], "seen": [],
                                   "log": None}
        self._verdict = None

    @property
    def fresh_seeds(self):
        """The fresh seeds, once :meth:`verdict` has checked the claims on them; None before."""
        return None if self._verdict is None else self._fresh_seeds

    @property
    def fresh_table(self):
        """The fresh seeds' rows, once :meth:`verdict` has checked the claims on them; None before."""
        return None if self._verdict is None else self._fresh_table

    def _header(self) -> str:
        h = self.history
        out = f"question {h['question'][:12]}: run {h['run']} of it"
        if h["earlier"]:
            seeds = sorted({r["seed"] for r in h["earlier"]})
            out += f"; the fresh seeds of its earlier runs ({', '.join(map(str, seeds))}) are judged too"
        if h["seen"]:
            out += (f"; claims changed after earlier runs of this experiment showed seeds {', '.join(map(str, h['seen']))}"
                    ": they are no longer fresh, and count as training seeds")
        if h.get("log") is None:
            out += "; runs are not logged (the model cache is off), so retries cannot be counted"
        return out

    def verdict(self) -> Verdict:
        """Every claim on the training seeds, then on the fresh seeds of this and earlier runs (:class:`Verdict`)."""
        if self._verdict is None:
            e = self.experiment
            train = _views(e, self.table)
            fresh = _views(e, list(self.history["earlier"]) + list(self._fresh_table))
            self._verdict = judge(e, train, fresh, header=self._header())
        return self._verdict

    def more_fresh(self, k, *, workers=2, progress=True, measure=None) -> Verdict:
        """Train ``k`` more fresh seeds of this question, log them, and return the verdict on every fresh seed."""
        k = v.positive_int("k", k)
        taken = set(self.experiment.training_seeds) | set(self.history["seen"]) | set(self._fresh_seeds)
        taken |= {r["seed"] for r in self.history["earlier"]}
        new = draw_fresh_seeds(k, avoid=taken)
        rows = _train_and_score(self.experiment, new, workers=workers, progress=progress, measure=measure)
        self._fresh_table = Table(list(self._fresh_table) + rows, task=self._fresh_table.task)
        self._fresh_seeds = self._fresh_seeds + new
        _append_run(self.history.get("log"), _log_entry(self.experiment, new, rows, more=True))
        self._verdict = None
        return self.verdict()

    def figure(self, *, chance=None):
        """The standard figure of the training seeds: median and range over seeds per scheme, past L shaded.

        ``chance``: the task's chance level, drawn as a dotted line (e.g. :func:`chance_of`); None draws none.
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
    ``training`` and ``fresh`` (True: holds), ``noise`` (holds, but a seed,
    training or fresh, is within :data:`MIN_RATIO` standard errors),
    ``vacuous`` (a spread's or share's fresh-seed check that could not have
    failed), ``bound`` (for a claim: k of n seeds and the Clopper–Pearson
    upper limit on its per-seed failure rate), ``report`` (the sentences).
    ``holds``: every claim holds on both, outside the noise. ``header`` names
    the question's hash and its earlier runs. Printed, each claim is marked ✓
    (holds), ≈ (holds, within the noise) or ✗ (fails).
    """

    lines: tuple
    fresh_seeds: tuple
    header: str = ""

    @property
    def holds(self) -> bool:
        return all(x["training"] and x["fresh"] and not x["noise"] for x in self.lines)

    def __str__(self):
        # ✓ holds, ≈ holds but within MIN_RATIO standard errors on a seed, ✗ fails somewhere
        def mark(x):
            return "✗" if not (x["training"] and x["fresh"]) else "≈" if x["noise"] else "✓"

        body = "\n".join(f"{mark(x)} {x['text']}\n    " + "\n    ".join(x["report"]) for x in self.lines)
        return f"{self.header}\n{body}" if self.header else body


def _seed_margin(claim, seed, view) -> dict:
    # one seed's check of a Claim: holds, and its comparison closest to failing (margins' rule)
    m = _call(claim, f"seed {seed}", lambda: C.margins([claim], {seed: view}))[claim.text]
    return {"seed": seed, "holds": bool(m["k"]), "margin": m["margin"], "se": m["se"], "ratio": m["ratio"],
            "mixed": bool(m["mixed"])}


def _where(m) -> str:
    if m["margin"] is None:
        return f"seed {m['seed']}"
    se = "" if m["se"] is None else f", SE {m['se']:.3f}" + (f", {m['ratio']:.1f} SE" if m["ratio"] is not None else "")
    return f"seed {m['seed']}: margin {m['margin']:+.3f}{se}"


def _fresh(k) -> str:
    # "the fresh seed", "the 2 fresh seeds"
    return "the fresh seed" if k == 1 else f"the {k} fresh seeds"


def _bound(k, n) -> str:
    # the Clopper-Pearson limit rounded up to a tenth of a percent, so that "below" stays true
    limit = stats.failure_percent(k, n)
    return f"{k} of {n} seeds: the per-seed failure rate is below {limit:.1f} % (95 %, Clopper–Pearson)"


def _judge_claim(claim, train_views, fresh_views) -> dict:
    train = [_seed_margin(claim, s, vw) for s, vw in train_views.items()]
    fresh = [_seed_margin(claim, s, vw) for s, vw in fresh_views.items()]
    failed = [m for m in train if not m["holds"]]
    bad = [m for m in fresh if not m["holds"]]
    close = [m for m in train + fresh if m["holds"] and m["ratio"] is not None and m["ratio"] < MIN_RATIO]
    mixed = [m for m in train + fresh if m["mixed"]]
    rated = [m for m in train if m["holds"] and m["ratio"] is not None]
    worst = min(rated, key=lambda m: m["ratio"]) if rated else None
    line = f"holds on {len(train) - len(failed)}/{len(train)} training seeds"
    if failed:
        line += "; fails on " + "; ".join(_where(m) for m in failed)
    elif worst is not None:
        line += f" (closest: {_where(worst)})"
    report = [line]
    if not fresh:
        report.append("no fresh seeds drawn")
    elif not bad:
        report.append(f"and on {_fresh(len(fresh))} (" + "; ".join(_where(m) for m in fresh) + ")")
    else:
        which = _fresh(1) if len(fresh) == 1 else f"{len(bad)} of {_fresh(len(fresh))}"
        report.append(f"fails on {which}: " + "; ".join(_where(m) for m in bad))
    if close and not failed and not bad:
        report.append(f"within {MIN_RATIO:g} SE of failing on " + "; ".join(_where(m) for m in close)
                      + ": too close for the course to state it")
    if mixed and not failed and not bad:
        where = ("seed " if len(mixed) == 1 else "seeds ") + ", ".join(str(m["seed"]) for m in mixed)
        report.append(f"not weighed on {where}: it held while a comparison inside it went the other way (in min or "
                      "max, an `or`, a `not`), so which one decided it is not known; state one bound per comparison, "
                      "choosing with claims.lowest or claims.highest")
    k = len(train) + len(fresh) - len(failed) - len(bad)
    n = len(train) + len(fresh)
    report.append(_bound(k, n))
    return {"text": claim.text, "kind": "claim", "training": not failed, "fresh": not bad, "noise": bool(close or mixed),
            "vacuous": False, "bound": {"k": k, "n": n, "rate": stats.failure_bound(k, n)}, "report": report}


def _over(claim, views) -> tuple[bool, str]:
    margin = _call(claim, f"seeds {sorted(views)}", lambda: claim.margin(views))
    if isinstance(claim, C.Spread):
        what = claim.describe(views)
    else:
        k, n = claim.count(views)
        what = f"on {k} of {n} seeds"
    return margin >= 0, f"{what} (margin {margin:+.3f})"


def _cannot_fail(claim, views, extra) -> bool:
    """Could ``extra`` more seeds, whatever their numbers, make a statement that holds over ``views`` fail?"""
    if extra == 0:
        return True
    if isinstance(claim, C.Share):
        k, n = claim.count(views)
        return k / (n + extra) >= claim.at_least  # every new seed failing still leaves the share
    a = claim.values(views)
    low, high = claim.median
    for fill in (-1e9, 1e9):  # every new seed at one extreme: how far the median can move
        med = float(np.median(np.concatenate([a, np.full(extra, fill)])))
        if (low is not None and med < low) or (high is not None and med > high):
            return False
    return True  # the median stays in its band, and a range only widens as seeds are added


def _judge_over(claim, train_views, fresh_views) -> dict:
    ok, report = _over(claim, train_views)
    kind = "spread" if isinstance(claim, C.Spread) else "share"
    lines = [("holds" if ok else "fails") + f" on the training seeds: {report}"]
    vacuous = False
    if fresh_views:
        both = {**train_views, **fresh_views}
        ok_both, with_fresh = _over(claim, both)
        lines.append(f"with {_fresh(len(fresh_views))} ({', '.join(map(str, fresh_views))}) added: {with_fresh}")
        vacuous = ok and _cannot_fail(claim, train_views, len(fresh_views))
        if vacuous:
            lines.append(f"this check could not fail: no {len(fresh_views)} more seeds, whatever their numbers, can move "
                         f"{'the share below its bound' if kind == 'share' else 'the median out of its band'} "
                         f"(and a range only widens as seeds are added); it tests nothing")
    else:
        ok_both = True
        lines.append("no fresh seeds drawn")
    if kind == "share":
        need = stats.seeds_needed(1 - claim.at_least) if claim.at_least < 1 else None
        if need is not None:
            lines.append(f"to bound the per-seed failure rate below {1 - claim.at_least:.0%} at 95 %, {need} seeds "
                         f"in all must pass: outcome.more_fresh(k) trains k more")
    return {"text": claim.text, "kind": kind, "training": ok, "fresh": ok_both, "noise": False, "vacuous": vacuous,
            "bound": None, "report": lines}


def judge(experiment, train_views, fresh_views, *, header="") -> Verdict:
    """The :class:`Verdict` of the experiment's claims on ``{seed: view}`` of the training and of the fresh seeds.

    A :class:`.claims.Claim` (or a margin function) must hold on every seed,
    training and fresh, and clear each by :data:`MIN_RATIO` standard errors;
    its line says what the seeds prove: k of n seeds and the Clopper–Pearson
    upper limit on the per-seed failure rate. A Spread or Share must hold over
    the training seeds, and over them with the fresh seeds added (as
    :func:`.claims.check_seeds` does); the line says when that second check
    could not have failed.

    >>> e = Experiment(["rope"], "prev", lengths=[64], seeds=3, claims=[lambda v: v["rope", 64] - 0.5])
    >>> seen = {s: {("rope", 32): C.Measured(1.0, 256, se=0.0), ("rope", 64): C.Measured(q, 256, se=0.02)}
    ...         for s, q in [(11, 0.9), (12, 0.8), (13, 0.7)]}
    >>> print(judge(e, seen, {4321: {("rope", 32): C.Measured(1.0, 256, se=0.0), ("rope", 64): C.Measured(0.4, 256, se=0.02)}}))
    ✗ claim 1 (a lambda)
        holds on 3/3 training seeds (closest: seed 13: margin +0.200, SE 0.031, 6.4 SE)
        fails on the fresh seed: seed 4321: margin -0.100, SE 0.031, -3.2 SE
        3 of 4 seeds: the per-seed failure rate is below 75.2 % (95 %, Clopper–Pearson)
    """
    lines = []
    for claim in experiment.claims:
        if isinstance(claim, C.Claim):
            lines.append(_judge_claim(claim, train_views, fresh_views))
        else:
            lines.append(_judge_over(claim, train_views, fresh_views))
    return Verdict(tuple(lines), tuple(fresh_views), header)


# ---- the run ---------------------------------------------------------------------------------------


def _train_and_score(experiment, seeds, *, workers, progress, measure) -> list[dict]:
    # train every scheme of the experiment on `seeds` in the lab's pool and return the table's rows
    by_scheme = {b: tuple(x for x in experiment.schemes if x.scheme == b) for b in experiment.bases}
    jobs = [(_spec(experiment), b, seed, by_scheme[b]) for seed in seeds for b in by_scheme]
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
    return [r for s in seeds for r in _rows(experiment, s, numbers[s])]


def _log_entry(experiment, fresh, rows, *, more=False) -> dict:
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "experiment": experiment_hash(experiment), "question": question_hash(experiment),
        "claims": [c.text for c in experiment.claims], "fresh": list(fresh), "fresh_rows": rows, "more": more,
    }


def run(experiment, *, workers=2, progress=True, confirm=None, measure=None, timing=None, log=None) -> Outcome:
    """Check the claims, print the question's hash and the estimate, ask if above ``max_minutes``, then train and score
    every (scheme, seed): the training seeds, and :data:`FRESH_SEEDS` fresh ones drawn now.

    The claims are fixed by then: :func:`question_hash` is printed and, with
    the fresh seeds and their rows, appended to the run log (``log``: a path;
    default :func:`run_log`, beside the model cache; nothing is logged with
    the cache off). An earlier run of the same question adds its fresh seeds'
    rows to this verdict (a retry cannot wash out a failure). Earlier runs of
    the same experiment with other claims have shown their fresh seeds: those
    seeds join the training seeds, and the verdict says so. Above
    ``experiment.max_minutes`` it asks (``input``) unless ``confirm`` is given:
    ``True`` trains, ``False`` raises :class:`NotRun` (as does any answer but
    "y"). Training runs in the lab's pool of ``workers`` processes
    (:func:`.pool.pool_map`), with one progress bar. ``measure`` stands in for
    :func:`measure_scheme` (tests; it runs in this process), ``timing`` for
    :func:`time_steps` (a dict with the keys :data:`TIMING_KEYS`).
    """
    from pathlib import Path

    if not isinstance(experiment, Experiment):
        raise TypeError(f"experiment must be a lab.experiment.Experiment, got {type(experiment).__name__}")
    if confirm is not None and not isinstance(confirm, (bool, np.bool_)):
        raise TypeError(f"confirm must be None (ask), True or False, got {confirm!r}")
    check_claims(experiment)
    path = run_log() if log is None else Path(log)
    question = question_hash(experiment)
    before = earlier_runs(experiment, path)
    same = [e for e in before if e["question"] == question]
    seen = sorted({s for e in before if e["question"] != question for s in e["fresh"]})
    est = estimate(experiment, workers=workers, timing=timing)
    fresh_count = f"{experiment.fresh} fresh seed{'s' if experiment.fresh != 1 else ''}"
    print(f"question {question[:12]} (claims fixed), run {len(same) + 1} of it")
    print(f"{_title(experiment)} + {fresh_count}, {len(experiment.names)} lines: {est}")
    if est.minutes > experiment.max_minutes:
        ask = f"That is above max_minutes = {experiment.max_minutes:g}. Train? [y/N] "
        go = input(ask).strip().lower() in ("y", "yes") if confirm is None else bool(confirm)
        if not go:
            raise NotRun(
                f"not run: the estimate ({est.minutes:.1f} min) is above max_minutes = {experiment.max_minutes:g}; "
                "answer y, pass confirm=True, or raise max_minutes"
            )
    earlier_rows = [r for e in same for r in e.get("fresh_rows", [])]
    avoid = set(experiment.training_seeds) | set(seen) | {r["seed"] for r in earlier_rows}
    fresh = draw_fresh_seeds(experiment.fresh, avoid=avoid)
    train_seeds = tuple(experiment.training_seeds) + tuple(s for s in seen if s not in experiment.training_seeds)
    rows = _train_and_score(experiment, train_seeds + fresh, workers=workers, progress=progress, measure=measure)
    train_rows = [r for r in rows if r["seed"] in train_seeds]
    fresh_rows = [r for r in rows if r["seed"] in fresh]
    _append_run(path, _log_entry(experiment, fresh, fresh_rows))
    history = {"question": question, "run": len(same) + 1, "earlier": earlier_rows, "seen": seen,
               "log": None if path is None else str(path)}
    return Outcome(experiment, Table(train_rows, experiment.task), Table(fresh_rows, experiment.task), fresh, est,
                   history)
