"""The lab's rule for weighing evidence, written once: the unit of noise, the standard error, bounds over seeds.

Every claim of the lab about trained models (:mod:`.claims`, :mod:`.text_claims`,
:mod:`.length_claims`, the streaming claims, the experiment harness) is weighed
here, so the rule is stated in one place:

1. **The sequence is the unit of noise.** The answers of one test sequence
   share its tokens and fail together (on the first-token task every answer
   of a sequence shares one target), so an accuracy is the mean of
   per-sequence scores and its standard error is computed over sequences
   (:func:`summarize`): √(s²/n), s² the sample variance of the n per-sequence
   scores. Counting tokens as independent draws understates it many times.
2. **A claim clears its noise by 4 standard errors,** weighed where the claim
   would fail (:func:`se_at`): an accuracy that sits at 1.00 is weighed as if
   it sat at the threshold it is compared with, with the worst case for how
   its sequences fail, whole sequences: q(1 − q)/n. With 256 sequences a
   perfect score can then be said to be at least 0.94 (0.97 clears it by 2.8
   SEs).
3. **Seeds bound a failure rate, not a certainty.** A claim that held on k of
   n seeds drawn independently bounds the per-seed failure rate by the
   Clopper–Pearson upper limit (:func:`failure_bound`): 5 of 5 still allows
   45 % at 95 % confidence, 20 of 20 allows 14 %.
4. **Held-out seeds are fixed by the claims they test** (:func:`held_out_seeds`):
   drawn from the SHA-256 of the claims' own source, so changing a claim
   changes its seeds, and a seed looked at while writing a claim cannot be
   one of them. The check of a module on them is appended to the ledger
   (:mod:`.ledger`): notebook 16's claims have one; the others wait for their
   re-scored sweeps.

Taught in notebooks/17-your-own-experiment.ipynb and docs/CLAIMS.md.

>>> scores = np.array([1.0] * 31 + [0.0])      # 31 of 32 sequences right at every position, one wrong at every one
>>> s = summarize(scores)
>>> round(s.value, 5), round(s.se, 4), s.n     # the SE of a mean of 32 per-sequence scores, not of 6,144 tokens
(0.96875, 0.0312, 32)
"""

from __future__ import annotations

import dataclasses
import hashlib
import math

import numpy as np

from .. import _validate as v

__all__ = [
    "RULE", "Score", "summarize", "per_sequence", "se_at", "combined_se", "failure_bound", "failure_percent", "seeds_needed",
    "held_out_seeds", "source_hash",
]

#: The project's rule: a claim's margin on its worst seed is at least this many standard errors.
RULE = 4.0


@dataclasses.dataclass(frozen=True)
class Score:
    """An accuracy measured on ``n`` test sequences: the mean of per-sequence scores and its standard error."""

    value: float
    se: float
    n: int


def per_sequence(correct, mask) -> np.ndarray:
    """Each sequence's score: the share of its scored answers that are right, shape (batch,).

    ``correct`` and ``mask`` are (batch, T) booleans (``correct`` False where
    ``mask`` is). A sequence with no scored answer has no score: a ValueError.

    >>> per_sequence(np.array([[1, 1, 0], [0, 0, 0]], bool), np.array([[0, 1, 1], [0, 1, 1]], bool)).tolist()
    [0.5, 0.0]
    """
    correct, mask = np.asarray(correct, bool), np.asarray(mask, bool)
    if correct.shape != mask.shape or correct.ndim != 2:
        raise ValueError(f"correct and mask must be (batch, T) arrays of one shape, got {correct.shape} and {mask.shape}")
    counts = mask.sum(axis=1)
    if (counts == 0).any():
        raise ValueError(f"every sequence needs a scored answer; sequences {np.flatnonzero(counts == 0).tolist()} have none")
    return (correct & mask).sum(axis=1) / counts


def summarize(scores) -> Score:
    """The mean of per-sequence ``scores`` (each in [0, 1]) and its standard error √(s²/n) over the n sequences.

    s² is the sample variance (n − 1 in the denominator); with one sequence the SE is undefined: a ValueError.

    >>> s = summarize([0.5, 1.0, 1.0, 0.5])
    >>> s.value, round(s.se, 4), s.n
    (0.75, 0.1443, 4)
    """
    a = np.asarray(scores, dtype=float).ravel()
    if a.size < 2:
        raise ValueError(f"a standard error over sequences needs at least 2 sequences, got {a.size}")
    if not np.isfinite(a).all() or a.min() < 0 or a.max() > 1:
        raise ValueError("per-sequence scores must be finite and in [0, 1]")
    return Score(float(a.mean()), float(a.std(ddof=1) / math.sqrt(a.size)), int(a.size))


def se_at(q, value, se, n) -> float:
    """The standard error an accuracy measured as ``value`` ± ``se`` on ``n`` sequences is weighed with at ``q``.

    The per-sequence variance of scores in [0, 1] with mean q is at most
    q(1 − q), reached when each sequence is all right or all wrong, and that
    worst case is what a claim is weighed with: √(q(1 − q)/n), whatever the
    measured SE. (Until 2026-12-07 the measured design effect d = n·se² /
    (value(1 − value)) was carried to q. Near 1 that d rests on a handful of
    wrong answers, so a score with one wrong token cleared "≥ 0.97" by 15.9 SEs
    where a perfect one cleared it by 2.8: a lab review found 74 of 116 kept
    cells between 0.97 and 1 clearing 4 SEs only through it. The bound must not
    shrink because a model made errors.) ``value`` and ``se`` are still checked.

    >>> round(se_at(0.97, 1.0, 0.0, 256), 4)          # a perfect score weighed at 0.97: whole sequences
    0.0107
    >>> round(se_at(0.97, 0.9999, 0.0001, 256), 4)    # one wrong token weighs no lighter
    0.0107
    >>> round(se_at(0.5, 0.5, 0.01, 256), 4)          # at 1/2: √(0.25/256)
    0.0312
    """
    q, value, se = float(q), float(value), float(se)
    n = v.positive_int("n", n)
    if not (0 <= q <= 1 and 0 <= value <= 1) or se < 0:
        raise ValueError(f"q and value must be in [0, 1] and se ≥ 0, got q={q!r}, value={value!r}, se={se!r}")
    return math.sqrt(q * (1 - q) / n)


def combined_se(parts, margin) -> float:
    """The SE of a compared difference Σ c·x, each accuracy x weighed at the point within ``margin`` nearest 1/2.

    ``parts`` are ``(c, value, se, n)``. Each term is weighed where its noise
    would be largest anywhere between its value and the threshold (so a score
    of 1.00 compared with 0.99 is weighed at 0.99, not at 1); the variances add.

    >>> round(combined_se([(1.0, 1.0, 0.0, 256)], 0.03), 4)      # 1.00 against 0.97
    0.0107
    """
    var = 0.0
    for c, value, se, n in parts:
        lo, hi = max(0.0, value - abs(margin)), min(1.0, value + abs(margin))
        q = min(max(0.5, lo), hi)  # the point of [lo, hi] nearest 1/2, where q(1 − q) is largest
        var += c * c * se_at(q, value, se, n) ** 2
    return math.sqrt(var)


def failure_bound(k, n, *, confidence=0.95) -> float:
    """The Clopper–Pearson upper limit on the per-seed failure rate of a claim that held on ``k`` of ``n`` seeds.

    One-sided, at ``confidence``: the failure rate f whose chance of at most
    n − k failures in n seeds is 1 − confidence. With no failure it is
    1 − (1 − confidence)^(1/n).

    >>> round(failure_bound(5, 5), 3), round(failure_bound(8, 8), 3), round(failure_bound(20, 20), 3)
    (0.451, 0.312, 0.139)
    >>> round(failure_bound(19, 20), 3)
    0.216
    """
    k, n = int(k), v.positive_int("n", n)
    if not 0 <= k <= n:
        raise ValueError(f"k must be between 0 and n = {n}, got {k}")
    alpha = 1 - float(confidence)
    failures = n - k
    if failures == n:
        return 1.0
    # the f at which P(X ≤ failures | n, f) = α, X ~ Binomial(n, f): bisection on the binomial tail
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        tail = sum(math.comb(n, i) * mid**i * (1 - mid) ** (n - i) for i in range(failures + 1))
        lo, hi = (mid, hi) if tail > alpha else (lo, mid)
    return (lo + hi) / 2


def failure_percent(k, n, *, confidence=0.95) -> float:
    """:func:`failure_bound` in percent, rounded *up* to a tenth of a percent, so that "below" stays true (5 of 5:
    45.07 %, "below 45.1 %"; rounded to the nearest tenth, 19 of 20, 21.61 %, would read "below 21.6 %").

    >>> failure_percent(5, 5), failure_percent(8, 8), failure_percent(19, 20)
    (45.1, 31.3, 21.7)
    """
    return math.ceil(1000 * failure_bound(k, n, confidence=confidence)) / 10


def seeds_needed(rate, *, confidence=0.95) -> int:
    """How many seeds, all passing, bound the per-seed failure rate below ``rate`` at ``confidence``.

    >>> seeds_needed(0.45), seeds_needed(0.2), seeds_needed(0.1)
    (6, 14, 29)
    """
    rate = float(rate)
    if not 0 < rate < 1:
        raise ValueError(f"rate must be strictly between 0 and 1, got {rate!r}")
    return math.ceil(math.log(1 - float(confidence)) / math.log(1 - rate))


def source_hash(path) -> str:
    """SHA-256 of a claims module's code, what fixes its held-out seeds: its syntax tree without comments and
    docstrings (:func:`.cache.code_text`), so that rewording a comment draws no new seeds; any change to what the
    claims compute does."""
    from pathlib import Path

    from .cache import code_text

    return hashlib.sha256(code_text(Path(path).read_text(encoding="utf-8")).encode()).hexdigest()


def held_out_seeds(digest, k, *, exclude=()) -> tuple[int, ...]:
    """``k`` seeds in 1,000 … 9,999 drawn from the hex ``digest`` of the claims they test, none in ``exclude``.

    Seed i is int(SHA-256(digest:j)[:8], 16) mod 9,000 + 1,000 for j = 0, 1,
    … skipping repeats and excluded seeds: fixed by the claims, unknown
    until they are written, and the same on every machine.

    >>> held_out_seeds("00" * 32, 3)
    (5644, 5866, 8892)
    """
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"digest must be a SHA-256 in hex, got {digest!r}")
    k = v.positive_int("k", k)
    out, j, excluded = [], 0, {int(s) for s in exclude}
    while len(out) < k:
        seed = int(hashlib.sha256(f"{digest}:{j}".encode()).hexdigest()[:8], 16) % 9000 + 1000
        if seed not in excluded and seed not in out:
            out.append(seed)
        j += 1
    return tuple(sorted(out))
