"""The claims notebooks 12 and 13 make about trained models, each a named check on one seed's numbers.

A claim is a sentence and a function that says whether it holds for the
numbers of one seed: ``view[task, scheme]``, the entry the sweep keeps for
that model (:func:`.results.evaluate_run`: accuracy over all positions and
past L, with each test-time rescaling, after each fine-tune, attention
numbers). The notebooks check every claim on every seed of the shipped
sweeps, each by at least 4 standard errors over test sequences
(:func:`margins`). Held-out seeds come from this module's own code: ``make
lab-heldout`` (:func:`.results.ledger_check`) draws them from its SHA-256,
trains their rows with the same functions and appends each claim's k of n
to the ledger (:mod:`.ledger`), so a claim edited after a check is judged on
new seeds and on every seed checked before. A claim that fails on one of
them is not a claim the course may make: it becomes a spread or a share, or
goes.

Taught in notebooks/12-extrapolation-lab.ipynb and 13-trained-heads.ipynb.

>>> c = Claim("ALiBi is perfect past L", lambda v: v["prev", "alibi"]["beyond"][1] >= 0.99)
>>> c.holds({("prev", "alibi"): {"beyond": [float("nan"), 1.0]}})
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import numbers
from collections.abc import Callable

import numpy as np

__all__ = [
    "Claim", "view", "at", "views", "check", "check_files", "report", "failures", "made_up", "groups", "answers",
    "standard_error", "chunk_ceiling", "Measured", "comparison_error", "margins", "margin_report", "Spread", "Share",
    "check_over", "over_seeds", "check_over_files", "over_report", "REPORT_MARKS_UP_TO", "check_seeds", "Bits",
    "TEXT_GROUP", "Mean", "lowest", "highest",
]


@dataclasses.dataclass(frozen=True)
class Claim:
    """A sentence a notebook states, and the check of it on one seed's numbers."""

    text: str
    test: Callable[[dict], bool]
    live: bool = False  # notebook 12 also checks it on its own run (previous-token task, seed 0)

    def holds(self, numbers) -> bool:
        return bool(self.test(numbers))


@dataclasses.dataclass(frozen=True)
class Spread:
    """A statement about how one number varies from seed to seed: its median in a band, its range at least so wide.

    For behaviour that one seed can move past any bound (RoPE on the
    first-token task), the course states the spread, never a per-seed bound.
    ``number(view)`` is one seed's number; the statement holds over a set of
    seeds when their median lies in ``median`` = (low, high) (None: open on
    that side) and, if ``wide`` is set, their highest minus lowest is at
    least ``wide``. Adding seeds can
    only widen a range, so a held-out seed can break ``wide`` only through
    the median. :meth:`margin` says how far the set is from failing.

    >>> s = Spread("x varies", lambda v: v["x"], median=(0.4, 0.8), wide=0.3)
    >>> s.holds_over([{"x": 0.3}, {"x": 0.6}, {"x": 0.9}]), s.holds_over([{"x": 0.6}, {"x": 0.7}])
    (True, False)
    >>> round(Spread("x high", lambda v: v["x"], median=(0.5, None)).margin([{"x": 0.9}]), 2)
    0.4
    """

    text: str
    number: Callable[[dict], float]
    median: tuple[float, float]
    wide: float | None = None

    def values(self, views) -> np.ndarray:
        views = list(views.values()) if isinstance(views, dict) else list(views)
        if not views:
            raise ValueError(f"{self.text!r}: a spread needs at least one seed's numbers, got none")
        return np.array([float(self.number(v)) for v in views])

    def margin(self, views) -> float:
        """The smallest of: median − low, high − median, and (range − wide) if ``wide`` is set; negative: it fails."""
        a = self.values(views)
        med = float(np.median(a))
        low, high = self.median
        sides = [med - low] if low is not None else []
        sides += [high - med] if high is not None else []
        if not sides:
            raise ValueError(f"{self.text!r}: median={self.median!r} bounds neither side")
        out = min(sides)
        return out if self.wide is None else min(out, float(a.max() - a.min()) - self.wide)

    def holds_over(self, views) -> bool:
        return self.margin(views) >= 0

    def describe(self, views) -> str:
        """"median m [lowest–highest] over n seeds" of the number."""
        a = self.values(views)
        return f"median {np.median(a):.2f} [{a.min():.2f}–{a.max():.2f}] over {a.size} seeds"


@dataclasses.dataclass(frozen=True)
class Share:
    """A claim that holds on at least a share of the seeds ("on at least k of n"), not on every one.

    ``test(view)`` is the per-seed check, as in :class:`Claim`; the statement
    holds over a set of seeds when the share of them on which it holds is at
    least ``at_least``. Checked on the sweep, and on the sweep with the held-out
    seeds added.

    >>> s = Share("x above 0.5 on most seeds", lambda v: v["x"] > 0.5, at_least=0.6)
    >>> s.holds_over([{"x": 0.9}, {"x": 0.7}, {"x": 0.1}]), s.count([{"x": 0.9}, {"x": 0.1}])
    (True, (1, 2))
    """

    text: str
    test: Callable[[dict], bool]
    at_least: float

    def count(self, views) -> tuple[int, int]:
        views = list(views.values()) if isinstance(views, dict) else list(views)
        if not views:
            raise ValueError(f"{self.text!r}: a share needs at least one seed's numbers, got none")
        return sum(bool(self.test(v)) for v in views), len(views)

    def margin(self, views) -> float:
        """The share of seeds on which it holds, minus ``at_least``; negative: it fails."""
        k, n = self.count(views)
        return k / n - self.at_least

    def holds_over(self, views) -> bool:
        return self.margin(views) >= 0


def check_over(statements, views) -> dict[str, bool]:
    """``{text: holds}`` for :class:`Spread` and :class:`Share` statements over one set of seeds' views."""
    return {st.text: st.holds_over(views) for st in statements}


def over_report(statements, views) -> str:
    """:class:`Spread` and :class:`Share` statements as text: a line each, what the seeds gave, ✓ or ✗, the text.

    >>> views = [{"x": 0.3}, {"x": 0.6}, {"x": 0.9}]
    >>> print(over_report([Spread("x varies", lambda v: v["x"], median=(0.4, 0.8), wide=0.3),
    ...                    Share("x above 0.5", lambda v: v["x"] > 0.5, at_least=0.75)], views))
    ✓ median 0.60 [0.30–0.90] over 3 seeds  x varies
    ✗ on 2 of 3 seeds                       x above 0.5
    """
    rows = []
    for st in statements:
        if isinstance(st, Spread):
            what = st.describe(views)
        else:
            k, n = st.count(views)
            what = f"on {k} of {n} seeds"
        rows.append(("✓" if st.holds_over(views) else "✗", what, st.text))
    width = max((len(w) for _, w, _ in rows), default=0)
    return "\n".join(f"{mark} {what:<{width}}  {text}" for mark, what, text in rows)


def view(res, seed) -> dict:
    """One seed's entries of a loaded sweep: ``{(task, scheme): entry}``, and ``"lengths"``: ``{task: lengths}``.

    >>> res = {"lengths": [32, 64], "table": {(0, "prev", "rope"): {"beyond": [float("nan"), 0.9]}}}
    >>> v = view(res, 0)
    >>> at(v, "prev", "rope", 64)
    0.9
    """
    out = {(task, scheme): entry for (s, task, scheme), entry in res["table"].items() if s == seed}
    out["lengths"] = {task: tuple(int(n) for n in res["lengths"]) for task, _ in list(out)}
    return out


def at(numbers, task, scheme, T, *keys) -> float:
    """The number of ``(task, scheme)`` at test length ``T`` under ``keys`` (default ``"beyond"``: past L).

    ``at(v, "prev", "rope", 128, "scaled", "ntk")`` reads
    ``v["prev", "rope"]["scaled"]["ntk"]`` at T = 128.
    """
    root = entry = numbers[task, scheme]
    keys = keys or ("beyond",)
    for key in keys:
        entry = entry[key]
    i = list(numbers["lengths"][task]).index(T)
    value = float(np.asarray(entry, dtype=float)[i])
    if isinstance(root, dict) and "beyond_se" in root:  # a row scored by sequence (issue 43): its own SE
        return _by_sequence(root, keys, i, value)
    return Measured(value, _answers_or_none(task, T, "all" if keys[-1] == "accuracy" else "beyond"))


def _by_sequence(root, keys, i, value) -> Measured:
    # the SE a re-scored row keeps beside the number at keys: "beyond" -> "beyond_se", ("scaled", m) -> ("scaled_se",
    # m), ("finetune", k, steps, "tuned") -> (..., "tuned_se"); a number kept with no SE (the factor grid, scored on
    # results.GRID_SEQUENCES) is weighed as if each of those sequences failed whole, the largest its SE can be
    from .evaluate import EVAL_SEQUENCES

    if len(keys) == 2 and keys[0] in ("scaled", "masks"):
        path = (f"{keys[0]}_se", keys[1])
    else:
        path = (*keys[:-1], f"{keys[-1]}_se")
    entry = root
    for key in path:
        if not isinstance(entry, dict) or key not in entry:
            from .results import GRID_SEQUENCES

            return Measured(value, GRID_SEQUENCES)
        entry = entry[key]
    return Measured(value, EVAL_SEQUENCES, se=float(np.asarray(entry, dtype=float)[i]))


@functools.lru_cache(maxsize=None)
def _answers_or_none(task, T, positions):
    # the n of an accuracy of the sweeps' tasks; None for anything else (a made-up task, past L at L)
    from .tasks import ALL_TASKS as known

    if task not in known or (positions == "beyond" and T <= 32):
        return None
    return answers(task, T, positions=positions)


class _Weighed:
    """What :class:`Measured`, :class:`Bits` and :class:`Mean` share: ``+`` and ``-`` go through the class's
    ``_combine(other, sign)``, and a comparison returns a plain bool and, inside :func:`margins`, records its margin
    (how far the claim's side is from failing) and ``_error(difference, margin)``, the class's standard error of it."""

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        return (-self)._combine(other, 1)

    def __abs__(self):
        return -self if float(self) < 0 else self

    def _compare(self, other, op, margin):
        if _RECORD:
            m = margin(float(self), float(other))
            _RECORD[-1].append((m, self._error(self - other, m)))
        return op(float(self), float(other))

    def __ge__(self, other):
        return self._compare(other, float.__ge__, lambda a, b: a - b)

    def __le__(self, other):
        return self._compare(other, float.__le__, lambda a, b: b - a)

    def __gt__(self, other):
        return self._compare(other, float.__gt__, lambda a, b: a - b)

    def __lt__(self, other):
        return self._compare(other, float.__lt__, lambda a, b: b - a)

    __hash__ = float.__hash__


class Measured(_Weighed, float):
    """A number a claim reads, which remembers what it was measured on, so that a claim's margin can be weighed.

    It is the float it holds (``at`` returns one), with ``parts``: one
    ``(coefficient, accuracy, n, se)`` per measured accuracy it is built from.
    Two kinds of accuracy: measured on ``n`` test sequences with its standard
    error ``se`` over them (``Measured(q, n, se=...)``: the sequence is the unit
    of noise, :mod:`.stats`; the experiment harness's numbers), or, with ``se``
    None, counted as ``n`` independent answers (the rule of the stored sweeps of
    notebooks 12, 13 and 17 until issue 43 re-scores them by sequence). ``n``
    None: a number that is no accuracy (an entropy, a weight, a cosine). Sums,
    differences, scalings and ``abs`` keep the parts; a comparison returns a
    plain bool and, inside :func:`margins`, records its margin (how far the
    claim's side is from failing) and the standard error of that margin
    (:func:`comparison_error`).

    >>> a, b = Measured(0.9, 1024), Measured(0.5, 1024)
    >>> with _recording() as seen:
    ...     ok = a - b >= 0.3
    >>> ok, [round(m, 4) for m, _ in seen]
    (True, [0.1])
    >>> Measured(0.9, 256, se=0.01).parts
    ((1.0, 0.9, 256, 0.01),)
    """

    def __new__(cls, value, n=None, parts=None, *, se=None):
        out = super().__new__(cls, value)
        if se is not None and n is None:
            raise ValueError(f"a standard error over sequences needs their number n, got se={se!r} and n None")
        out.parts = tuple(parts) if parts is not None else ((1.0, float(value), n, se),)
        return out

    def _combine(self, other, sign):
        if isinstance(other, (Bits, Mean)):
            raise TypeError("an accuracy (Measured) cannot be combined with a text number or a head number: their "
                            "noise is of another kind")
        if not isinstance(other, (int, float)):
            return NotImplemented
        value = float(self) + sign * float(other)
        theirs = other.parts if isinstance(other, Measured) else ()
        return Measured(value, parts=self.parts + tuple((sign * c, p, n, e) for c, p, n, e in theirs))

    def __neg__(self):
        return Measured(-float(self), parts=tuple((-c, p, n, e) for c, p, n, e in self.parts))

    def __mul__(self, other):
        if isinstance(other, (Bits, Mean)):
            raise TypeError("an accuracy (Measured) cannot be combined with a text number or a head number: their "
                            "noise is of another kind")
        if isinstance(other, Measured) or not isinstance(other, (int, float)):
            return float(self) * other
        return Measured(float(self) * other, parts=tuple((c * other, p, n, e) for c, p, n, e in self.parts))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (Bits, Mean)):
            raise TypeError("an accuracy (Measured) cannot be combined with a text number or a head number: their "
                            "noise is of another kind")
        return self * (1 / other) if isinstance(other, (int, float)) and not isinstance(other, Measured) else float(self) / other

    @staticmethod
    def _error(difference, margin):
        return comparison_error(difference, margin)


def comparison_error(difference, margin) -> float | None:
    """The standard error of a compared difference, within its margin; None if a part is no accuracy.

    Each measured accuracy p of ``difference`` (a :class:`Measured`) is weighed
    where its noise would be largest anywhere between its value and the
    threshold: at q, the point within ``margin`` of p nearest 1/2 (so a score
    of 1.00 against 0.99 is weighed at 0.99, not at 1). An accuracy over
    sequences counts with :func:`.stats.se_at` (q(1 − q)/n over its sequences:
    the worst case, whole sequences failing); one counted over answers with
    q(1 − q)/n over its answers. The variances add.

    >>> round(comparison_error(Measured(1.0, 1024), 0.01), 5), round(standard_error(0.99, 1024), 5)
    (0.00311, 0.00311)
    >>> round(comparison_error(Measured(1.0, 256, se=0.0), 0.03), 4)   # 256 perfect sequences against 0.97
    0.0107
    """
    from . import stats

    parts = difference.parts if isinstance(difference, Measured) else ()
    if not parts or any(n is None for _, _, n, _ in parts):
        return None
    var = 0.0
    for c, p, n, se in parts:
        lo, hi = max(0.0, p - abs(margin)), min(1.0, p + abs(margin))
        q = min(max(0.5, lo), hi)  # the point of [lo, hi] nearest 1/2, where q(1 - q) is largest
        var += c * c * (q * (1 - q) / n if se is None else stats.se_at(q, p, se, n) ** 2)
    return float(np.sqrt(var))


#: A single text number's SE is taken over groups of this many blocks of :data:`.text_rows.BLOCK` characters (4,096
#: characters), a precaution: a review measured neighbouring 64-character windows of one number correlated (lag 1
#: about 0.2) and blockwise differences of two numbers not (about −0.03); between 1,024-character blocks the
#: correlation is to be measured on the kept rows (the first row, NoPE on seed 0, shows −0.11 to +0.01).
TEXT_GROUP = 4


class Bits(_Weighed, float):
    """A text lab number kept block by block (:mod:`.text_rows`): the mean of its ``blocks``, which remembers them.

    Every model is read on the same validation text, so numbers combine block
    by block (``a - b`` keeps ``a.blocks - b.blocks``), and each remembers the
    sum of the coefficients of the numbers it is built from (``level``: 1 for
    a number, 0 for a difference such as a − b, −1 for a − 2b). Inside
    :func:`margins` a comparison records its margin and the standard error of
    the compared combination: over the blocks when it is a contrast (level 0:
    most of the text's noise cancels), over groups of :data:`TEXT_GROUP` blocks
    otherwise (a number against a constant, or a combination that keeps the
    level of a number). Adding a constant keeps the level; scaling by c
    multiplies it by c. With a numpy array (of Bits, as a view keeps a curve) every operation
    and comparison goes element by element, so ``curve - curve[0]`` pairs each
    number with the first (numpy would otherwise read a Bits as a plain float).
    A number the scheme cannot run has NaN blocks, and every comparison of it
    fails.

    >>> a, b = Bits([1.0, 1.2, 1.1, 1.3]), Bits([1.5, 1.6, 1.7, 1.8])
    >>> with _recording() as seen:
    ...     ok = a < b
    >>> ok, [(round(m, 3), round(se, 4)) for m, se in seen]   # a − b by block: −0.5, −0.4, −0.6, −0.5; √(0.02/3)/2
    (True, [(0.5, 0.0408)])
    """

    __array_ufunc__ = None  # numpy hands every operation with an array back to these methods

    def __new__(cls, blocks, *, paired=False, level=None):
        b = np.asarray(blocks, dtype=float).ravel()
        if b.size < 2:
            raise ValueError(f"blocks must hold at least 2 blocks to give a standard error, got {b.size}")
        out = super().__new__(cls, float(b.mean()))
        out.blocks = b
        out.level = float(level) if level is not None else (0.0 if paired else 1.0)
        return out

    @property
    def paired(self) -> bool:
        """Whether this is a contrast (its coefficients sum to 0), weighed over single blocks."""
        return abs(self.level) < 1e-9

    @staticmethod
    def _each(array, fn, dtype=object):
        out = np.empty(array.shape, dtype=dtype)
        for index, x in np.ndenumerate(array):
            out[index] = fn(x)
        return out

    def _combine(self, other, sign):
        if isinstance(other, np.ndarray):
            return self._each(other, lambda x: self._combine(x, sign))
        if isinstance(other, Bits):
            if other.blocks.shape != self.blocks.shape:
                raise ValueError(f"two text numbers on {self.blocks.size} and {other.blocks.size} blocks cannot be paired")
            return Bits(self.blocks + sign * other.blocks, level=self.level + sign * other.level)
        if isinstance(other, (Measured, Mean)):
            raise TypeError("a text number (Bits) cannot be combined with an accuracy or a head number: their noise "
                            "is of another kind")
        if isinstance(other, numbers.Real):
            if np.isnan(float(other)):
                return float("nan")
            return Bits(self.blocks + sign * float(other), level=self.level)
        return NotImplemented

    def __rsub__(self, other):
        if isinstance(other, np.ndarray):
            return self._each(other, lambda x: x - self)
        return super().__rsub__(other)

    def __neg__(self):
        return Bits(-self.blocks, level=-self.level)

    def __mul__(self, other):
        if isinstance(other, np.ndarray):
            return self._each(other, lambda x: self * x)
        if isinstance(other, (Measured, Mean)):
            raise TypeError("a text number (Bits) cannot be combined with an accuracy or a head number: their noise "
                            "is of another kind")
        if isinstance(other, numbers.Real) and not isinstance(other, Bits):
            return Bits(self.blocks * float(other), level=self.level * float(other))
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (Measured, Mean)):
            raise TypeError("a text number (Bits) cannot be combined with an accuracy or a head number: their noise "
                            "is of another kind")
        if isinstance(other, numbers.Real) and not isinstance(other, Bits):
            return self * (1.0 / float(other))
        return NotImplemented

    def se(self) -> float:
        """The standard error of this number: over its blocks if it is a contrast (:attr:`paired`), else over groups
        of :data:`TEXT_GROUP` blocks (the last, short group left out)."""
        b = self.blocks
        if not self.paired:
            n = b.size // TEXT_GROUP * TEXT_GROUP
            b = b[:n].reshape(-1, TEXT_GROUP).mean(axis=1)
        return float(b.std(ddof=1) / np.sqrt(b.size))

    def _compare(self, other, op, margin):
        if isinstance(other, np.ndarray):
            return self._each(other, lambda x: self._compare(x, op, margin), dtype=bool)
        return super()._compare(other, op, margin)

    @staticmethod
    def _error(difference, margin):
        return difference.se() if isinstance(difference, Bits) else None


class Mean(_Weighed, float):
    """A number that is a mean over random inputs (notebook 13's head numbers), with its standard error ``se`` over them.

    Inside :func:`margins` a comparison records its margin and a bound on the
    standard error of the compared difference: the sum of |coefficient| × SE of
    every Mean it is built from, which holds however the parts are correlated
    (they are read on the same inputs). Adding a constant keeps the SE; scaling
    by c multiplies it by |c|.

    >>> inside, past = Mean(0.62, 0.007), Mean(0.60, 0.003)
    >>> with _recording() as seen:
    ...     ok = abs(past - inside) <= 0.15
    >>> ok, [(round(m, 3), round(se, 4)) for m, se in seen]
    (True, [(0.13, 0.01)])
    """

    def __new__(cls, value, se):
        out = super().__new__(cls, value)
        se = float(se)
        if not se >= 0:
            raise ValueError(f"se must be a standard error (0 or more), got {se!r}")
        out.se = se
        return out

    def _combine(self, other, sign):
        if isinstance(other, Mean):
            return Mean(float(self) + sign * float(other), self.se + other.se)
        if isinstance(other, (Measured, Bits)):
            raise TypeError("a head number (Mean) cannot be combined with an accuracy or a text number: their noise "
                            "is of another kind")
        if isinstance(other, numbers.Real):
            return Mean(float(self) + sign * float(other), self.se)
        return NotImplemented

    def __neg__(self):
        return Mean(-float(self), self.se)

    def __mul__(self, other):
        if isinstance(other, (Measured, Bits)):
            raise TypeError("a head number (Mean) cannot be combined with an accuracy or a text number: their noise "
                            "is of another kind")
        if isinstance(other, numbers.Real) and not isinstance(other, Mean):
            return Mean(float(self) * float(other), abs(float(other)) * self.se)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (Measured, Bits)):
            raise TypeError("a head number (Mean) cannot be combined with an accuracy or a text number: their noise "
                            "is of another kind")
        if isinstance(other, numbers.Real) and not isinstance(other, Mean):
            return self * (1.0 / float(other))
        return NotImplemented

    def __rtruediv__(self, other):
        raise TypeError(f"{other!r} / a head number (Mean) has no SE bound here: divide a Mean by a constant instead")

    @staticmethod
    def _error(difference, margin):
        return difference.se if isinstance(difference, Mean) else None


_RECORD: list[list] = []


def lowest(*values):
    """The smallest of ``values``, chosen without recording the comparisons that choose it (:func:`margins` records
    only the comparisons a claim states; the built-in ``min`` would record its own)."""
    _RECORD.append([])
    try:
        return min(values, key=float)
    finally:
        _RECORD.pop()


def highest(*values):
    """The largest of ``values``, as :func:`lowest` chooses the smallest."""
    _RECORD.append([])
    try:
        return max(values, key=float)
    finally:
        _RECORD.pop()


@contextlib.contextmanager
def _recording():
    _RECORD.append([])
    try:
        yield _RECORD[-1]
    finally:
        _RECORD.pop()


def answers(task, T, *, positions="beyond", train_len=32) -> int:
    """How many answers the sweeps score for one model at test length ``T``: the n of its accuracy.

    The test batch (:data:`.evaluate.EVAL_BATCH` sequences) counts every
    position with an answer (``positions="all"``) or those past ``train_len``
    (``"beyond"``, which needs T > L). The count is the same for every seed.

    >>> answers("prev", 64), answers("prev", 256), answers("recall", 32, positions="all")
    (1024, 7168, 512)
    """
    from .evaluate import _check_positions, test_batch

    if _check_positions(positions) == "beyond" and T <= train_len:
        raise ValueError(f"positions='beyond' needs a length past the training length {train_len}, got T={T}")
    _, _, mask = test_batch(task, T, seed=0, vocab=32 if task == "recall" else 16)  # train's vocabularies
    mask = np.asarray(mask)
    return int(mask[:, train_len:].sum() if positions == "beyond" else mask.sum())


def standard_error(p, n) -> float:
    """The binomial standard error √(p(1 − p)/n) of an accuracy ``p`` measured on ``n`` answers.

    It counts the n answers as independent draws; the answers of one test
    sequence share its tokens, so the seed-to-seed noise of a score can be
    larger, which is why the claims are checked on seeds and not on one
    number. At p = 1/2 it is largest, 1/(2√n).

    >>> standard_error(0.5, 1024), round(standard_error(0.99, 7168), 5)
    (0.015625, 0.00118)
    """
    p = float(p)
    if not 0 <= p <= 1:
        raise ValueError(f"p must be an accuracy in [0, 1], got {p!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive number of answers, got {n!r}")
    return float(np.sqrt(p * (1 - p) / n))


def check(claims, views) -> dict[str, dict[int, bool]]:
    """``{claim text: {seed: holds}}`` for every claim and every seed's view (``{seed: view}``)."""
    return {c.text: {seed: c.holds(v) for seed, v in views.items()} for c in claims}


def margins(claims, views) -> dict[str, dict]:
    """How far each claim is from failing, on its worst seed, against the noise of the numbers it compares.

    ``views`` is ``{seed: view}`` as for :func:`check`. For each claim: ``k``
    of ``n`` seeds on which it holds, and over every comparison it makes on
    every seed, the one closest to failing in units of its binomial standard
    error (:func:`comparison_error`): its ``margin`` (the number's distance
    from the threshold or from the number it is compared with; negative: it
    fails), its ``se``, ``ratio`` = margin / se and its ``seed``. A claim
    whose comparisons are not all of accuracies (an entropy, a weight) has no
    binomial error; then ``se`` and ``ratio`` are None, and ``margin`` is the
    smallest margin. A claim that compares no measured number (a layer index)
    has ``margin`` None. ``mixed``: the seeds on which the claim held while a
    comparison it made went the other way (one inside ``min`` or ``max``, an
    ``or`` branch, a ``not``), so the comparison that decided it is not known
    and the seed is not weighed; state one bound per comparison, choosing with
    :func:`lowest` or :func:`highest`.

    >>> c = Claim("x", lambda v: v["prev", "alibi"]["beyond"][1] >= 0.99)
    >>> v = {("prev", "alibi"): {"beyond": [float("nan"), Measured(1.0, 1024)]}}
    >>> m = margins([c], {0: v})["x"]
    >>> m["k"], m["n"], round(m["margin"], 3), round(m["ratio"], 1)
    (1, 1, 0.01, 3.2)
    """
    out = {}
    for c in claims:
        worst, k, mixed = None, 0, []
        for seed, v in views.items():
            with _recording() as seen:
                holds = c.holds(v)
            k += holds
            if holds and any(margin < 0 for margin, _ in seen):
                # a comparison went the other way while the claim held: one that did not decide it (inside min or
                # max, an `or` branch, a `not`), so which comparison to weigh is not known; said, not guessed
                mixed.append(seed)
                continue
            for margin, se in seen:
                item = {"margin": margin, "se": se, "ratio": None if se is None else (margin / se if se else np.inf),
                        "seed": seed}
                if worst is None or _closer(item, worst):
                    worst = item
        out[c.text] = {"k": k, "n": len(views), **(worst or {"margin": None, "se": None, "ratio": None, "seed": None}),
                       "mixed": mixed}
    return out


def _closer(a, b) -> bool:
    # is comparison a closer to failing than b: a comparison without binomial error counts first, by its margin
    if (a["ratio"] is None) != (b["ratio"] is None):
        return a["ratio"] is None
    if a["ratio"] is None:
        return a["margin"] < b["margin"]
    return a["ratio"] < b["ratio"]


def margin_report(table) -> str:
    """:func:`margins` as text: a line per claim, k/n seeds, worst margin, its SE and the ratio."""
    lines = [f"{'seeds':>7} {'margin':>7} {'SE':>7} {'ratio':>6}  claim"]
    for text, m in table.items():
        margin = "" if m["margin"] is None else f"{m['margin']:.3f}"
        se = "—" if m["se"] is None else f"{m['se']:.4f}"
        ratio = "—" if m["ratio"] is None else f"{min(m['ratio'], 999):.1f}"
        mixed = f"  (not weighed on seeds {m['mixed']}: a comparison inside it went the other way)" if m.get("mixed") else ""
        lines.append(f"{m['k']:>3}/{m['n']:<3} {margin:>7} {se:>7} {ratio:>6}  {text}{mixed}")
    return "\n".join(lines)


def failures(table) -> dict[str, list[int]]:
    """The claims of a :func:`check` table that fail on some seed, with those seeds."""
    return {text: [s for s, ok in by_seed.items() if not ok] for text, by_seed in table.items() if not all(by_seed.values())}


#: Above this many seeds :func:`report` gives each claim's count of seeds instead of a mark per seed.
REPORT_MARKS_UP_TO = 8


def report(table) -> str:
    """The table of :func:`check` as text, one line per claim.

    Up to :data:`REPORT_MARKS_UP_TO` seeds, a mark per seed (``✓`` holds,
    ``✗`` fails); with more, on how many seeds the claim holds (``k/n``) and
    the seeds where it fails.

    >>> print(report({"a": {0: True, 1: False}}))
    seed:  0  1
           ✓  ✗  a
    >>> print(report({"a": {s: s != 11 for s in range(12)}, "b": {s: True for s in range(12)}}))
    holds on  claim
       11/12  a (fails on seed 11)
       12/12  b
    """
    seeds = sorted({s for by_seed in table.values() for s in by_seed})
    if len(seeds) > REPORT_MARKS_UP_TO:
        lines = ["holds on  claim"]
        for text, by_seed in table.items():
            bad = [s for s in seeds if not by_seed[s]]
            k = f"{len(seeds) - len(bad)}/{len(seeds)}"
            tail = f" (fails on seed{'s' if len(bad) > 1 else ''} {', '.join(map(str, bad))})" if bad else ""
            lines.append(f"{k:>8}  {text}{tail}")
        return "\n".join(lines)
    lines = ["seed: " + " ".join(f"{s:>2}" for s in seeds)]
    for text, by_seed in table.items():
        lines.append("      " + " ".join(" ✓" if by_seed[s] else " ✗" for s in seeds) + "  " + text)
    return "\n".join(lines)


def _map_numbers(x, fn):
    # apply fn to every float array in a nested entry; keep NaN (cannot run) as NaN
    if isinstance(x, dict):
        return {k: (v if k == "lengths" else _map_numbers(v, fn)) for k, v in x.items()}
    if isinstance(x, list):
        return [_map_numbers(v, fn) for v in x]
    if isinstance(x, (np.ndarray, float, int)) and not isinstance(x, bool):
        a = np.asarray(x, dtype=float)
        return np.where(np.isnan(a), np.nan, fn(a))
    return x


def made_up(numbers) -> list[dict]:
    """Four made-up seeds from one seed's numbers, for checking that a claim can fail.

    Every number 1; every number 0; every number x replaced by 1 − x; every
    number drawn uniformly from [0, 1] (a fixed seed). NaN ("cannot run") stays NaN.
    """
    rng = np.random.default_rng(0)
    return [
        _map_numbers(numbers, lambda a: np.ones_like(a)),
        _map_numbers(numbers, lambda a: np.zeros_like(a)),
        _map_numbers(numbers, lambda a: 1 - a),
        _map_numbers(numbers, lambda a: rng.uniform(size=a.shape)),
    ]


def views(sweep, extra, *, seeds=None) -> list[dict]:
    """One view per seed (``seeds``, default: every seed of ``sweep``), headline and extra entries together.

    ``sweep`` and ``extra`` are loaded results (:func:`.results.load`,
    :func:`.results.load_extra`) or freshly swept tables in the same shape.
    """
    seeds = sorted({s for s, _, _ in sweep["table"]}) if seeds is None else list(seeds)
    out = []
    for seed in seeds:
        numbers = view(sweep, seed)
        more = view(extra, seed)
        lengths = {**numbers.pop("lengths"), **more.pop("lengths")}
        numbers.update(more)
        numbers["lengths"] = lengths
        out.append(numbers)
    return out


def check_files(group, sweep, extra, *, seeds=None) -> dict[str, dict[int, bool]]:
    """:func:`check` of the claims of ``group`` (a key of :func:`groups`) on every seed of its sweep.

    The seeds default to every seed of ``sweep``, or of ``extra`` for ``"12 extra"``.
    """
    source = extra if group == "12 extra" else sweep
    seeds = sorted({s for s, _, _ in source["table"]}) if seeds is None else list(seeds)
    return check(groups()[group], dict(zip(seeds, views(sweep, extra, seeds=seeds), strict=True)))


def chunk_ceiling(k, L=32, vocab=16) -> float:
    """The accuracy past L of a model that answers "the token k back" perfectly except where its RoPE layer cannot.

    With chunks of L on the RoPE layer, the first k queries of every chunk
    cannot see the token k back on that layer: k in L of the positions past L
    (at every test length that is a multiple of L). If those are guessed at
    random, one in ``vocab`` is still right: 1 − (k/L)(1 − 1/vocab). Not an
    upper bound: the other layer, without RoPE, can still see those tokens, and
    trained models with chunks shorter than the training length score above it.

    >>> round(chunk_ceiling(1), 4), round(chunk_ceiling(3), 4)
    (0.9707, 0.9121)
    """
    return 1 - (k / L) * (1 - 1 / vocab)


# ---- notebook 12: the headline tasks, past L ------------------------------------------------------

_CHANCE = 1 / 16  # the headline tasks' vocabulary of 16


def _lengths(v, task):
    return tuple(T for T in v["lengths"][task] if T > 32)


def _b(v, task, scheme, T, *keys):
    return at(v, task, scheme, T, *keys)


def _ft(v, task, method, steps, T):
    return at(v, task, "rope", T, "finetune", method, str(steps), "beyond")


def _ft_at_l(v, task, method, steps):
    return at(v, task, "rope", 32, "finetune", method, str(steps), "accuracy")


_TASKS = ("prev", "first")
_SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi", "t5", "rope_nope", "irope")

#: iRoPE's chunk settings, by row (:data:`.results.ROW_OPTIONS`): L/4 (the headline), L/2 (the second setting) and L
#: (the ablation, Llama 4's chunk = its original context).
_IROPE = {"irope": 8, "irope_w16": 16, "irope_w32": 32}
_BUT_IROPE = tuple(s for s in _SCHEMES if s != "irope")


def _tuned(v, task, method, steps, T):
    # a fine-tune's accuracy past its own length 4L (positions ≥ 4L of a sequence of T)
    return at(v, task, "rope", T, "finetune", method, str(steps), "tuned")


CLAIMS_12 = [
    # (issue 43) was: "at least 0.9 at L on prev" (3.1 SE on iRoPE with chunks of L/4, 0.957)
    Claim("every model scores at least 0.87 at L on prev",
          lambda v: all(at(v, "prev", s, 32, "accuracy") >= 0.87 for s in _SCHEMES), live=True),
    # (issue 43) was: "every model at least 0.95 at L on first": iRoPE with chunks of L/4 scores 0.71-0.74 there
    Claim("every model but iRoPE with chunks of L/4 scores at least 0.94 at L on first",
          lambda v: all(at(v, "first", s, 32, "accuracy") >= 0.94 for s in _BUT_IROPE)),
    # (issue 43) was: 0.97 (2.8 SE on a perfect score; 0.94 is the most 256 sequences allow, and ALiBi on prev is 0.9996)
    # (one claim per task, so that notebook 12's run on prev checks its own)
    Claim("ALiBi scores at least 0.93 past L on prev at every length",
          lambda v: all(_b(v, "prev", "alibi", T) >= 0.93 for T in _lengths(v, "prev")), live=True),
    Claim("ALiBi scores at least 0.93 past L on first at every length",
          lambda v: all(_b(v, "first", "alibi", T) >= 0.93 for T in _lengths(v, "first"))),
    # (issue 43) was: "at most 4 times chance at 2L, twice chance at 8L" (1.9 SE)
    Claim("sinusoidal on prev: at most 5 times chance past L at 2L, at most 3 times chance at 8L",
          lambda v: _b(v, "prev", "sinusoidal", 64) <= 5 * _CHANCE
          and _b(v, "prev", "sinusoidal", 256) <= 3 * _CHANCE, live=True),
    # (issue 43) was: "at least 0.75 at 2L, and at least 0.2 lower at 8L" (2.3 SE)
    Claim("RoPE on prev degrades: at least 0.72 past L at 2L, and at least 0.1 lower at 8L than at 2L",
          lambda v: _b(v, "prev", "rope", 64) >= 0.72 and _b(v, "prev", "rope", 256) <= _b(v, "prev", "rope", 64) - 0.1,
          live=True),
    # (issue 43) was: 0.97 (2.8 SE)
    Claim("NoPE, T5's bias and RoPE + NoPE find the first token: at least 0.94 past L at every length",
          lambda v: all(_b(v, "first", s, T) >= 0.94 for s in ("none", "t5", "rope_nope") for T in _lengths(v, "first"))),
    # (issue 43) was: "at least 0.15 below ALiBi …, below RoPE at 2L and 4L" (3.0 SE); RoPE's lead is a spread (SPREADS_12)
    # ("above 3 times chance" held by 4.0 SE on 12 seeds and by 3.96 with seeds 12 and 13; 0.1 below ALiBi by 4.2)
    Claim("NoPE on prev: above twice chance and at least 0.08 below ALiBi at every length past L",
          lambda v: all(2 * _CHANCE < _b(v, "prev", "none", T) <= _b(v, "prev", "alibi", T) - 0.08
                        for T in _lengths(v, "prev")), live=True),
    # (issue 43) was: "below ALiBi at every length past L, at most 0.5 at 8L" (3.7 SE, at 2L)
    Claim("RoPE + NoPE on prev degrades: below ALiBi from 3L on, at most 0.5 at 8L",
          lambda v: all(_b(v, "prev", "rope_nope", T) < _b(v, "prev", "alibi", T) for T in _lengths(v, "prev") if T >= 96)
          and _b(v, "prev", "rope_nope", 256) <= 0.5, live=True),
    # (issue 43) was: "below ALiBi at every length past L, at most 0.6 at 8L" (2.2 SE, at 2L)
    Claim("T5's bias on prev degrades: below ALiBi from 3L on, at most 0.6 at 8L",
          lambda v: all(_b(v, "prev", "t5", T) < _b(v, "prev", "alibi", T) for T in _lengths(v, "prev") if T >= 96)
          and _b(v, "prev", "t5", 256) <= 0.6, live=True),
    # iRoPE, re-derived for chunks shorter than L (issue 43 §3); before, four claims described chunks of L, which
    # never act in training
    Claim("iRoPE with chunks of L/4 on prev: at least 0.78 past L at every length",
          lambda v: all(_b(v, "prev", "irope", T) >= 0.78 for T in _lengths(v, "prev")), live=True),
    # with chunks of L/4 the model's final loss on first stays near 0.5 (0.001 with chunks of L/2 or L), and the
    # same weights read with the full mask score 0.92-0.98 past L at 2L: what its chunks take from it is shown, why
    # is not
    Claim("iRoPE on first at L: at most 0.87 with chunks of L/4, at least 0.93 with chunks of L/2 or L",
          lambda v: at(v, "first", "irope", 32, "accuracy") <= 0.87
          and all(at(v, "first", s, 32, "accuracy") >= 0.93 for s in ("irope_w16", "irope_w32"))),
    # (0.72 with chunks of L held by 4 SE on 17 seeds; seed 17 scores 0.608 there at 2L, 3.6 SE: restated 0.75.
    # Chunks of L/4 are left out: those models do not learn the task at L, the claim above, and a model that has
    # not learned a task at L says nothing about extrapolating it)
    Claim("iRoPE on first past L: at most 0.62 with chunks of L/2 and 0.75 with chunks of L (the ablation), at every "
          "length",
          lambda v: all(_b(v, "first", s, T) <= bound for s, bound in (("irope_w16", 0.62), ("irope_w32", 0.75))
                        for T in _lengths(v, "first"))),
    Claim("the same iRoPE models with a sliding window of L instead of chunks score at least 0.92 on prev past L at "
          "every length, for every chunk setting",
          lambda v: all(_b(v, "prev", s, T, "masks", "sliding") >= 0.92 for s in _IROPE for T in _lengths(v, "prev"))),
    Claim("the same iRoPE models with the full mask on prev: at least 0.1 below their chunked score at 4L and 8L, for "
          "every chunk setting",
          lambda v: all(_b(v, "prev", s, T, "masks", "full") <= _b(v, "prev", s, T) - 0.1
                        for s in _IROPE for T in (128, 256))),
]


# ---- notebook 12: RoPE rescaled at test time (past L, s = T/L), and log-n -------------------------

CLAIMS_12_SCALING = [
    # (issue 43) was: 0.97 (2.8 SE)
    Claim("PI and YaRN with the lab's thresholds find the first token: at least 0.94 past L at every length",
          lambda v: all(_b(v, "first", "rope", T, "scaled", m) >= 0.94 for m in ("pi", "yarn")
                        for T in _lengths(v, "first"))),
    Claim("PI collapses on prev: at most 0.5 past L at 2L, at most 3 times chance at 8L",
          lambda v: _b(v, "prev", "rope", 64, "scaled", "pi") <= 0.5
          and _b(v, "prev", "rope", 256, "scaled", "pi") <= 3 * _CHANCE, live=True),
    # (issue 43) was: "at most 0.5 past L at 2L" (2.5 SE; 0.55 held by 4.0 SE on 12 seeds, 3.8 with seeds 12 and 13),
    # and "at most 3 times chance at 8L" (held by 4.0 SE on 19 seeds; seed 9957 scores 0.090 there, 3.98 SE)
    Claim("YaRN with LLaMA's thresholds acts like PI on prev: at most 0.6 past L at 2L, at most 0.2 at 8L",
          lambda v: _b(v, "prev", "rope", 64, "scaled", "yarn_llama") <= 0.6
          and _b(v, "prev", "rope", 256, "scaled", "yarn_llama") <= 0.2, live=True),
    # (issue 43) was: "NTK beats plain RoPE at 8L on both tasks" (1.9 SE on the closest seed; 8 of 12 seeds clear 4 SE):
    # dropped as a claim
    # (issue 43) was: "log-n scaling moves no scheme's accuracy past L by more than 0.15" (2.5 SE; the largest move on any
    # seed is 0.042, but two scores near 1/2, weighed as independent, need about 0.22 between them at 4 SE)
    Claim("log-n scaling moves no scheme's accuracy past L by more than 0.25, on either task, at any length",
          lambda v: all(abs(_b(v, t, s, T, "logn") - _b(v, t, s, T)) <= 0.25
                        for t in _TASKS for s in _SCHEMES if s != "learned" for T in _lengths(v, t))),
]

# ---- notebook 12: RoPE fine-tuned for 100 steps at 4L, per rescaling -------------------------------

CLAIMS_12_FINETUNE = [
    # (issue 43) was: 0.95 on each task (3.6 and 2.8 SE)
    Claim("after 100 steps at 4L every fine-tune (s = 4) scores at least 0.92 past L at 2L and 4L (inside the "
          "fine-tune's length) on prev",
          lambda v: all(_ft(v, "prev", m, 100, T) >= 0.92 for m in ("none", "pi", "ntk", "yarn") for T in (64, 128)),
          live=True),
    Claim("after 100 steps at 4L every fine-tune (s = 4) scores at least 0.92 past L at 2L and 4L (inside the "
          "fine-tune's length) on first",
          lambda v: all(_ft(v, "first", m, 100, T) >= 0.92 for m in ("none", "pi", "ntk", "yarn") for T in (64, 128))),
    # (issue 43) was: "past L at every length up to 8L", 0.9 on prev and 0.95 on first (3.4 SE); now read where the
    # fine-tune never trained: positions past 4L ("tuned")
    # (0.9 held by 4.1 SE on 16 seeds; seed 16 scores 0.935 there, 1.9 SE)
    Claim("plain RoPE fine-tuned at 4L with no rescaling keeps at least 0.84 at the positions past 4L, at every length "
          "up to 8L, on prev",
          lambda v: all(_tuned(v, "prev", "none", 100, T) >= 0.84 for T in (160, 192, 224, 256)), live=True),
    Claim("plain RoPE fine-tuned at 4L with no rescaling keeps at least 0.84 at the positions past 4L, at every length "
          "up to 8L, on first",
          lambda v: all(_tuned(v, "first", "none", 100, T) >= 0.84 for T in (160, 192, 224, 256))),
    # (issue 43) was: "PI and YaRN with s = 4 below plain RoPE fine-tuned at 8L on prev" (0.7 SE, YaRN; 9 of 12 seeds clear
    # 4 SE at the positions past 4L): YaRN's part is dropped as a claim
    Claim("after 100 steps at 4L, PI with s = 4 is below plain RoPE fine-tuned at the positions past 4L at 8L on prev",
          lambda v: _tuned(v, "prev", "pi", 100, 256) < _tuned(v, "prev", "none", 100, 256), live=True),
    # (issue 43) was: 0.95 (2.6 SE)
    Claim("with s = 8 (set for the target 8L), after 100 steps at 4L every fine-tune scores at least 0.91 past L at "
          "2L and 4L (inside the fine-tune's length), on both tasks",
          lambda v: all(_ft(v, t, f"{m}_s8", 100, T) >= 0.91 for t in _TASKS for m in ("pi", "ntk", "yarn")
                        for T in (64, 128))),
    # (issue 43) was: "at least 0.99 past L at 8L" (1.6 SE); now at the positions past 4L
    Claim("with s = 8, NTK and YaRN fine-tuned for 100 steps at 4L keep at least 0.94 at the positions past 4L, at "
          "every length up to 8L, on prev",
          lambda v: all(_tuned(v, "prev", f"{m}_s8", 100, T) >= 0.94 for m in ("ntk", "yarn")
                        for T in (160, 192, 224, 256))),
    # (issue 43) was: "with s = 8, PI below plain RoPE fine-tuned at 8L on prev" (2.5 SE on seed 11; 11 of 12 seeds clear 4
    # SE at the positions past 4L): dropped as a claim
    # (issue 43) was: "NTK and YaRN at least 0.99 past L at 4L, PI at most 0.95" (1.6 SE); PI's part (below NTK and YaRN on
    # 10 of 12 seeds by 4 SE; no bound on PI alone clears 4 SE) is dropped
    Claim("after 25 steps at 4L on prev, NTK and YaRN (s = 4 or 8) score at least 0.94 past L at 4L (inside the "
          "fine-tune's length)",
          lambda v: all(_ft(v, "prev", m + k, 25, 128) >= 0.94 for m in ("ntk", "yarn") for k in ("", "_s8"))),
    # (issue 43) was: "PI's fine-tune starts below plain RoPE's: after 25 steps at most 0.95 at L on prev" (3.3 SE; "at most
    # 0.98" held by 4.3 SE on 12 seeds and 3.9 with seeds 12 and 13; a bound that clears 4 SE, 0.99, says little
    # beside plain RoPE's 1.00): dropped as a claim
]


# ---- what varies from seed to seed: spreads (median in a band, range at least so wide) and shares ----

SPREADS_12 = [
    Spread("RoPE on first past L at 4L varies from seed to seed: median between 0.6 and 0.9, range at least 0.3",
           lambda v: _b(v, "first", "rope", 128), median=(0.6, 0.9), wide=0.3),
    Spread("RoPE on first past L at 8L varies from seed to seed: median between 0.3 and 0.7, range at least 0.4",
           lambda v: _b(v, "first", "rope", 256), median=(0.3, 0.7), wide=0.4),
    Spread("sinusoidal on first past L at 8L: median at least 0.9, but one seed can fall far: range at least 0.3",
           lambda v: _b(v, "first", "sinusoidal", 256), median=(0.9, None), wide=0.3),
    Spread("RoPE's lead over NoPE on prev past L at 8L: median between 0.05 and 0.3, range at least 0.2",
           lambda v: _b(v, "prev", "rope", 256) - _b(v, "prev", "none", 256), median=(0.05, 0.3), wide=0.2),
]

SHARES_12_SCALING = [
    Share("YaRN with the lab's thresholds beats plain RoPE on prev at 8L on at least three seeds in four",
          lambda v: _b(v, "prev", "rope", 256, "scaled", "yarn") > _b(v, "prev", "rope", 256), at_least=0.75),
    Spread("YaRN's gain over plain RoPE on prev past L at 8L: median between 0.3 and 0.6, range at least 0.3",
           lambda v: _b(v, "prev", "rope", 256, "scaled", "yarn") - _b(v, "prev", "rope", 256),
           median=(0.3, 0.6), wide=0.3),
]


def over_seeds() -> dict[str, list]:
    """The statements about the spread over seeds (:class:`Spread`, :class:`Share`) of each group of :func:`groups`."""
    return {
        "12": SPREADS_12,
        "12 scaling": SHARES_12_SCALING,
        "12 fine-tune": [],
        "12 extra": globals().get("SPREADS_12_EXTRA", []),
        "13": globals().get("SPREADS_13", []),
    }


def check_over_files(group, sweep, extra, *, seeds=None) -> dict[str, bool]:
    """:func:`check_over` of the spreads and shares of ``group`` over the seeds (default: its sweep's, as
    :func:`check_files`); ``seeds`` may add held-out seeds to the sweep's, read from the same tables."""
    source = extra if group == "12 extra" else sweep
    seeds = sorted({s for s, _, _ in source["table"]}) if seeds is None else list(seeds)
    return check_over(over_seeds()[group], views(sweep, extra, seeds=seeds))


def groups() -> dict[str, list[Claim]]:
    """Every notebook's claims by group: ``"12"``, ``"12 scaling"``, ``"12 fine-tune"``, ``"12 extra"``, ``"13"``."""
    return {
        "12": CLAIMS_12,
        "12 scaling": CLAIMS_12_SCALING,
        "12 fine-tune": CLAIMS_12_FINETUNE,
        "12 extra": globals().get("CLAIMS_12_EXTRA", []),
        "13": globals().get("CLAIMS_13", []),
    }


def __getattr__(name):
    # GROUPS is computed on access, so lists defined further down the file are included
    if name == "GROUPS":
        return groups()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- notebook 13: what trained heads do with position ------------------------------------


def _c13_back(v, scheme):
    # [mean weight one back for queries inside L, past L] of the previous-token head (results.head_numbers); a re-scored
    # row keeps each with its SE over the head inputs (a Mean), a stored row of before without one
    head = v["prev", scheme]["head"]
    if "one_back_se" in head:
        return tuple(Mean(float(x), float(e)) for x, e in zip(head["one_back"], head["one_back_se"], strict=True))
    return tuple(Measured(float(x)) for x in head["one_back"])


def _c13_share(v):
    # RoPE's previous-token head: the share of |q|·|k| on the pairs with wavelength under 2L (with its SE if kept)
    head = v["prev", "rope"]["head"]
    if "fast_share_se" in head:
        return Mean(float(head["fast_share"]), float(head["fast_share_se"]))
    return Measured(float(head["fast_share"]))


def _c13_first_min(v, variant):
    # RoPE on "first": the smallest over the attention lengths of the largest weight on token 0 over the last
    # layer's heads, with the SE of that head at that length where the row keeps one
    rows = v["first", "rope"]["attention"][variant]
    best = [int(np.argmax(np.asarray(row["to_first"], dtype=float)[-1])) for row in rows]
    values = [float(np.asarray(row["to_first"], dtype=float)[-1][h]) for row, h in zip(rows, best, strict=True)]
    j = int(np.argmin(values))
    if "to_first_se" in rows[j]:
        return Mean(values[j], float(np.asarray(rows[j]["to_first_se"], dtype=float)[-1][best[j]]))
    return Measured(values[j])


def _c13_table(v, task, key):
    # a number of results.table_numbers for the learned table trained on `task`
    return Measured(float(v[task, "learned"]["table"][key]))


def _c13_entropy(v, task, scheme, variant="none"):
    # (entropy (lengths, layers, heads) in nats, uniform entropy (lengths,)) at the attention lengths; a re-scored row
    # keeps each entropy with its SE over the test sequences (a Mean, in an object array), a stored row of before
    # without one (floats). The uniform entropy depends on the mask only: exact, a float either way
    rows = v[task, scheme]["attention"][variant]
    entropy = np.stack([np.asarray(row["entropy"], dtype=float) for row in rows])
    uniform = np.array([float(row["uniform_entropy"]) for row in rows])
    if all("entropy_se" in row for row in rows):
        se = np.stack([np.asarray(row["entropy_se"], dtype=float) for row in rows])
        means = np.empty(entropy.shape, dtype=object)
        for index, x in np.ndenumerate(entropy):
            means[index] = Mean(float(x), float(se[index]))
        entropy = means
    return entropy, uniform


def _c13_number(x):
    # a number an entropy claim compares: a Mean as it is, a float of a stored row as a Measured of no accuracy
    return x if isinstance(x, Mean) else Measured(float(x))


def _c13_beyond(v, task, scheme, key, T):
    # accuracy past L at test length T: key "beyond" (no rescaling), "logn", or a method of "scaled"; read by at(), so
    # a re-scored row's number carries its SE over sequences (before, it was counted over answers here)
    return at(v, task, scheme, T, *(("scaled", key) if key in ("pi", "ntk", "yarn") else (key,)))




def _c13_table_claims():
    both = ("prev", "first")
    return [
        Claim("training moves the learned table: ‖P − P₀‖/‖P₀‖ ≥ 1 and mean row cosine to the start ≤ 0.7, both tasks",
              lambda v: all(_c13_table(v, t, "moved") >= 1 and _c13_table(v, t, "row_cosine") <= 0.7 for t in both)),
        Claim("trained learned table on prev: neighbouring rows more alike than rows 8 or more apart, by ≥ 0.8",
              lambda v: _c13_table(v, "prev", "near") >= _c13_table(v, "prev", "far") + 0.8),
        Claim("trained learned table on prev: neighbouring rows' cosine ≥ 0.8, rows 8 or more apart ≤ 0 on average; "
              "on first, neighbours less alike than on prev",
              lambda v: _c13_table(v, "prev", "near") >= 0.8 and _c13_table(v, "prev", "far") <= 0
              and _c13_table(v, "first", "near") < _c13_table(v, "prev", "near")),
    ]


_C13_PAST_L = ("none", "sinusoidal", "rope", "alibi", "t5", "rope_nope")  # the schemes that run past L


def _c13_ent_last(v, task, scheme, j, variant="none"):
    # the last layer's entropy at the j-th attention length, mean over its heads (nats; a Mean's SE bound is the mean
    # of the heads' SEs)
    heads = _c13_entropy(v, task, scheme, variant)[0][j, -1]
    return _c13_number(sum(heads[1:], heads[0]) / len(heads))


def _c13_alibi_flat(v):
    # ALiBi's head 0 (the steepest slope): largest change of its entropy from T = 64 to 256 over the layers (chosen
    # without recording, highest), and the uniform entropy's rise over the same lengths (exact: a Mean with SE 0)
    entropy, uniform = _c13_entropy(v, "prev", "alibi")
    change = highest(*(abs(_c13_number(a) - _c13_number(b)) for a, b in zip(entropy[-1, :, 0], entropy[1, :, 0],
                                                                              strict=True)))
    rise = float(uniform[-1] - uniform[1])
    return change, (Mean(rise, 0.0) if isinstance(change, Mean) else Measured(rise))


def _c13_rope_sharp(v):
    # RoPE on prev: largest ratio of the last layer's entropy (mean over heads) to the uniform entropy (exact), over
    # lengths, chosen without recording
    entropy, uniform = _c13_entropy(v, "prev", "rope")
    return highest(*(_c13_ent_last(v, "prev", "rope", j) / float(uniform[j]) for j in range(len(uniform))))


CLAIMS_13 = [
    Claim("RoPE + NoPE's previous-token head is on layer 0, its RoPE layer",
          lambda v: v["prev", "rope_nope"]["head"]["head"][0] == 0),
    # (restated, issue 26: "less past L" held by 0.006 on the closest of 20 seeds; the drop is a spread, SPREADS_13)
    Claim("RoPE's previous-token head: ≥ 0.9 of its weight one back inside L",
          lambda v: _c13_back(v, "rope")[0] >= 0.9),
    Claim("ALiBi's previous-token head: the same weight one back inside and past L (within 0.15), at least 0.4",
          lambda v: abs(_c13_back(v, "alibi")[1] - _c13_back(v, "alibi")[0]) <= 0.15 and _c13_back(v, "alibi")[1] >= 0.4),
    Claim("T5 bias's previous-token head: past L, at most half its weight one back inside L",
          lambda v: _c13_back(v, "t5")[1] <= 0.5 * _c13_back(v, "t5")[0]),
    Claim("RoPE + NoPE's previous-token head: at least 0.1 less weight one back past L than inside",
          lambda v: _c13_back(v, "rope_nope")[1] <= _c13_back(v, "rope_nope")[0] - 0.1),
    Claim("sinusoidal's previous-token head: past L, at most a quarter of its weight one back inside L",
          lambda v: _c13_back(v, "sinusoidal")[1] <= 0.25 * _c13_back(v, "sinusoidal")[0]),
    Claim("NoPE's previous-token head: past L, at most half its weight one back inside L",
          lambda v: _c13_back(v, "none")[1] <= 0.5 * _c13_back(v, "none")[0]),
    *_c13_table_claims(),
    Claim("RoPE's previous-token head: the pairs with wavelength under 2L carry ≥ 0.6 of the |q|·|k| share",
          lambda v: _c13_share(v) >= 0.6),
    Claim("RoPE on prev: the last layer's entropy (mean over heads) ≤ 0.35 × the uniform one, at every length to 8L",
          lambda v: _c13_rope_sharp(v) <= 0.35),
    Claim("NoPE and T5 bias on prev: the last layer's entropy rises by ≥ 1.5 nats from T = 32 to 256",
          lambda v: all(_c13_ent_last(v, "prev", s, -1) - _c13_ent_last(v, "prev", s, 0) >= 1.5 for s in ("none", "t5"))),
    # (issue 43) was: "changes ≤ 0.1 nats" (3.6 SE, the bound Σ|c|·SE over the heads' entropies)
    Claim("ALiBi's steepest head: entropy changes ≤ 0.12 nats from T = 64 to 256 (both layers), uniform rises ≥ 0.5",
          lambda v: _c13_alibi_flat(v)[0] <= 0.12 and _c13_alibi_flat(v)[1] >= 0.5),
    # (dropped, issue 26: "RoPE on first: the weight on token 0 is ≥ 0.8 at L and ≥ 0.3 lower at 8L", "log-n
    # raises it at 8L by at most 0.1 …" and "at 8L log-n changes accuracy past L by ≤ 0.1; PI beats both by
    # ≥ 0.1" failed on a seed outside the sweep, on which RoPE did not fail on first; see CLAIMS_12)
    # (issue 43) was: "the weight on token 0 is ≥ 0.7 at every length, accuracy past L at 8L ≥ 0.95" (2.5 SE on the
    # weight)
    Claim("RoPE on first: with PI the weight on token 0 is ≥ 0.5 at every length, accuracy past L at 8L ≥ 0.94",
          lambda v: _c13_first_min(v, "pi") >= 0.5 and _c13_beyond(v, "first", "rope", "pi", 256) >= 0.94),
    # (issue 43) was: "changes no scheme's accuracy past L at 8L by more than 0.1; ALiBi's stays ≥ 0.95" (1.6 SE once
    # its accuracies carry their SE over sequences; the largest change on any seed is 0.031)
    Claim("log-n on prev: changes no scheme's accuracy past L at 8L by more than 0.22; ALiBi's stays at least 0.93",
          lambda v: all(abs(_c13_beyond(v, "prev", s, "logn", 256) - _c13_beyond(v, "prev", s, "beyond", 256)) <= 0.22
                        for s in _C13_PAST_L) and _c13_beyond(v, "prev", "alibi", "logn", 256) >= 0.93),
    # (issue 43) was: "on both tasks" (2.5 SE: the bound adds the two entropies' SEs, though they are read on the same
    # inputs; on prev every seed clears 24 SE, on first 8 of 12 clear 4): stated on prev
    Claim("log-n lowers RoPE's last-layer entropy at T = 256 on prev",
          lambda v: _c13_ent_last(v, "prev", "rope", -1, "logn") < _c13_ent_last(v, "prev", "rope", -1)),
]


# ---- notebook 12: the extra tasks (the extra run's seeds) ----------------------------------------

CLAIMS_12_EXTRA = [
    # (issue 43) restated on the re-scored extra run (8 seeds, 256 test sequences a cell), at least 4 SE each; iRoPE's
    # row is now chunks of L/4, and "iRoPE" in the old claims (chunks of L) is the ablation irope_w32
    # was: "… and iRoPE learn back3: at least 0.97 at L" (iRoPE with chunks of L/4 scores 0.77-0.80 there)
    Claim("the learned table, sinusoidal, RoPE, T5's bias, RoPE + NoPE and iRoPE with chunks of L learn back3: at "
          "least 0.94 at L",
          lambda v: all(at(v, "back3", s, 32, "accuracy") >= 0.94
                        for s in ("learned", "sinusoidal", "rope", "t5", "rope_nope", "irope_w32"))),
    # (issue 43) new: its chunks hide the token 3 back from its RoPE layer at 9 of the 29 positions scored at L (its
    # NoPE layer can still see it; whether a larger budget would make up the rest is not tested)
    Claim("iRoPE with chunks of L/4 does not fully learn back3 within the budget: at most 0.92 at L",
          lambda v: at(v, "back3", "irope", 32, "accuracy") <= 0.92),
    # (dropped, issue 43: "iRoPE on back3: past L, within 0.05 of chunk_ceiling(3) = 0.912 at every length" was drawn
    # for chunks of L; with chunks of L/4 the ceiling is chunk_ceiling(3, L=8) = 0.648, and no band within 0.1 of a
    # score near 0.7 clears 4 SE over 256 sequences: notebook 12 gives each chunk's numbers beside its ceiling)
    # (issue 43) was: "iRoPE on recall, whose answers sit in its first chunk: at least 0.9 past L at 8L" (chunks of L)
    Claim("iRoPE on recall, whose answers past L lie in earlier chunks, where only its NoPE layer attends: at least "
          "0.93 past L at every length with chunks of L/4 and L/2, at least 0.85 with chunks of L",
          lambda v: all(at(v, "recall", s, T) >= bound for s, bound in (("irope", 0.93), ("irope_w16", 0.93),
                                                                          ("irope_w32", 0.85))
                        for T in (64, 128, 256))),
    # (dropped, issue 26: the band "ALiBi does not learn back3 within the budget: between 0.8 and 0.92 at L",
    # drawn around five seeds, failed on a seed outside them)
    # (dropped, issue 43: "ALiBi does not fully learn back3 within the budget: at most 0.95 at L", 2.6 SE from its
    # highest seed, 0.888; the rule first allows 0.991, 3.3 seed SDs above the mean of the eight, too little room for a
    # seed nobody has seen; the spread of SPREADS_12_EXTRA states where it lands)
    # (issue 43) was: "at most 0.5 at L" (2.6 SE)
    Claim("NoPE does not learn back3 within the budget: at most 0.55 at L",
          lambda v: at(v, "back3", "none", 32, "accuracy") <= 0.55),
    # (issue 43) was: "at least 0.95 at L" (3.4 SE); now every iRoPE chunk setting too
    Claim("every scheme but NoPE learns recall, and iRoPE with every chunk setting: at least 0.93 at L",
          lambda v: all(at(v, "recall", s, 32, "accuracy") >= 0.93 for s in (*_SCHEMES[1:], "irope_w16", "irope_w32"))),
    # (issue 43) was: "between 0.6 and 0.92 at L" (3.7 SE)
    Claim("NoPE learns recall only in part within the budget: between 0.6 and 0.93 at L",
          lambda v: 0.6 <= at(v, "recall", "none", 32, "accuracy") <= 0.93),
    # (issue 43) was: "YaRN beats plain RoPE, PI and NTK at 8L": above NTK on 8 of 8 seeds, but on the closest by
    # 1.3 SE; the lead over NTK is a spread (SPREADS_12_EXTRA)
    Claim("on recall past L, with no fine-tuning, YaRN beats plain RoPE and PI at 8L",
          lambda v: all(at(v, "recall", "rope", 256, "scaled", "yarn") > at(v, "recall", "rope", 256, *keys)
                        for keys in (("beyond",), ("scaled", "pi")))),
    Claim("on recall past L, with no fine-tuning, NTK beats plain RoPE at 8L",
          lambda v: at(v, "recall", "rope", 256, "scaled", "ntk") > at(v, "recall", "rope", 256)),
    # (issue 43) was: "every fine-tune scores at least 0.85 past L at 8L", counted from L (positions 32-127 are the
    # fine-tune's own); now at the positions past the fine-tune's length 4L
    Claim("on recall, after 100 steps at 4L with s = 4, every fine-tune scores at least 0.74 at the positions past 4L "
          "at 8L",
          lambda v: all(_tuned(v, "recall", m, 100, 256) >= 0.74 for m in ("none", "pi", "ntk", "yarn"))),
    Claim("on recall, after 100 steps at 4L with s = 4, every fine-tune scores at least 0.92 past L at 2L and 4L "
          "(inside the fine-tune's length)",
          lambda v: all(at(v, "recall", "rope", T, "finetune", m, "100", "beyond") >= 0.92
                        for m in ("none", "pi", "ntk", "yarn") for T in (64, 128))),
    # (issue 43) was: "with s = 8, YaRN beats plain RoPE fine-tuned at 8L" (counted from L, 0.9 SE by the rule of
    # margins; past 4L, 1.2: above it on 8 of 8 seeds, a count notebook 12 gives)
    Claim("on recall, after 100 steps at 4L with s = 8, NTK and YaRN score at least 0.84 at the positions past 4L "
          "at 8L",
          lambda v: all(_tuned(v, "recall", m, 100, 256) >= 0.84 for m in ("ntk_s8", "yarn_s8"))),
]

SPREADS_12_EXTRA = [
    Spread("ALiBi on back3 at L: median between 0.75 and 0.95",
           lambda v: at(v, "back3", "alibi", 32, "accuracy"), median=(0.75, 0.95)),
    # (issue 43) was: scored from L; now at the positions past the fine-tune's length 4L
    Spread("on recall after 100 steps at 4L, plain RoPE fine-tuned leads PI with s = 4 at the positions past 4L at "
           "8L: median between 0.01 and 0.1",
           lambda v: _tuned(v, "recall", "none", 100, 256) - _tuned(v, "recall", "pi", 100, 256), median=(0.01, 0.1)),
    # (issue 43) new: YaRN's lead over NTK, with no fine-tuning, was a claim (1.3 SE on the closest seed)
    Spread("on recall past L at 8L, with no fine-tuning, YaRN leads NTK: median between 0.05 and 0.2",
           lambda v: at(v, "recall", "rope", 256, "scaled", "yarn") - at(v, "recall", "rope", 256, "scaled", "ntk"),
           median=(0.05, 0.2)),
]

SPREADS_13 = [
    Spread("RoPE's previous-token head: the weight one back it loses past L varies from seed to seed: median between "
           "0.1 and 0.5, range at least 0.3",
           lambda v: _c13_back(v, "rope")[0] - _c13_back(v, "rope")[1], median=(0.1, 0.5), wide=0.3),
]


# ---- a seed of the reader's own -------------------------------------------------------------------


def check_seeds(seeds, *, workers=None, train=None) -> dict[str, dict]:
    """Train every row of ``seeds`` as the sweeps do and check every claim of notebooks 12 and 13 on them.

    This is how a reader tests the lab's claims on seeds nobody chose: pick
    seeds no sweep holds (``results.SEEDS``, ``results.EXTRA_SEEDS``), run this
    (about 6 minutes a seed on 2 cores: :func:`.results.held_out_sweep` trains
    every headline and extra-task row, fine-tunes included), and read the
    result. Per group of :func:`groups`, ``"claims"`` is ``{text: {seed:
    holds}}`` on the new seeds (print it with :func:`report`), and ``"over"``
    is ``{text: holds}`` for the group's spreads and shares over the shipped
    sweep's seeds with the new ones added (:func:`check_over`). ``train``
    stands in for :func:`.results.held_out_sweep` in tests.

    >>> check_seeds([0])
    Traceback (most recent call last):
    ...
    ValueError: seeds=[0]: seed 0 is a seed of the shipped sweeps; a check needs seeds they do not hold
    """
    from . import results

    seeds = list(seeds)
    if not seeds:
        raise ValueError(f"seeds={seeds!r} names no seed to check")
    for seed in seeds:
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seeds={seeds!r}: {seed!r} is not a non-negative integer")
        if seed in results.SEEDS or seed in results.EXTRA_SEEDS:
            raise ValueError(
                f"seeds={seeds!r}: seed {seed} is a seed of the shipped sweeps; a check needs seeds they do not hold"
            )
    head, more = (train or results.held_out_sweep)(seeds, workers=workers)
    mine = {"table": head, "lengths": np.array(results.SWEEP_LENGTHS)}
    mine_extra = {"table": more, "lengths": np.array(results.EXTRA_LENGTHS)}
    sweep, extra = results.load(), results.load_extra()
    both = {**sweep, "table": {**sweep["table"], **head}}
    both_extra = {**extra, "table": {**extra["table"], **more}}
    out = {}
    for group in groups():
        source = extra if group == "12 extra" else sweep
        out[group] = {
            "claims": check_files(group, mine, mine_extra, seeds=seeds),
            "over": check_over_files(group, both, both_extra, seeds=[*source["seeds"], *seeds]),
        }
    return out
