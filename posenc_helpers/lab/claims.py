"""The claims notebooks 12 and 13 make about trained models, each a named check on one seed's numbers.

A claim is a sentence and a function that says whether it holds for the
numbers of one seed: ``view[task, scheme]``, the entry the sweep keeps for
that model (:func:`.results.evaluate_run`: accuracy over all positions and
past L, with each test-time rescaling, after each fine-tune, attention
numbers). The notebooks check every claim on every seed of the shipped
sweeps; ``tests/test_lab_claims.py`` trains two seeds no notebook or sweep
uses (:data:`.results.HELD_OUT`) with the same functions and checks the same
claims on them. A claim that fails on one of them is not a claim the course
may make: it becomes a range, or goes.

Taught in notebooks/12-extrapolation-lab.ipynb and 13-trained-heads.ipynb.

>>> c = Claim("ALiBi is perfect past L", lambda v: v["prev", "alibi"]["beyond"][1] >= 0.99)
>>> c.holds({("prev", "alibi"): {"beyond": [float("nan"), 1.0]}})
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

__all__ = ["Claim", "view", "check", "report", "failures"]


@dataclasses.dataclass(frozen=True)
class Claim:
    """A sentence a notebook states, and the check of it on one seed's numbers."""

    text: str
    test: Callable[[dict], bool]

    def holds(self, numbers) -> bool:
        return bool(self.test(numbers))


def view(res, seed) -> dict:
    """One seed's entries of a loaded sweep: ``{(task, scheme): entry}``."""
    return {(task, scheme): entry for (s, task, scheme), entry in res["table"].items() if s == seed}


def check(claims, views) -> dict[str, dict[int, bool]]:
    """``{claim text: {seed: holds}}`` for every claim and every seed's view (``{seed: view}``)."""
    return {c.text: {seed: c.holds(v) for seed, v in views.items()} for c in claims}


def failures(table) -> dict[str, list[int]]:
    """The claims of a :func:`check` table that fail on some seed, with those seeds."""
    return {text: [s for s, ok in by_seed.items() if not ok] for text, by_seed in table.items() if not all(by_seed.values())}


def report(table) -> str:
    """The table of :func:`check` as text: one line per claim, a mark per seed (``✓`` holds, ``✗`` fails)."""
    seeds = sorted({s for by_seed in table.values() for s in by_seed})
    lines = ["seed: " + " ".join(f"{s:>2}" for s in seeds)]
    for text, by_seed in table.items():
        lines.append("      " + " ".join(" ✓" if by_seed[s] else " ✗" for s in seeds) + "  " + text)
    return "\n".join(lines)


def _at(entry, key, T, lengths):
    # entry[key] at test length T (one value per length in `lengths`)
    return float(np.asarray(entry[key])[list(lengths).index(T)])


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
    """Three made-up seeds from one seed's numbers, for checking that a claim can fail.

    Every number 1; every number 0; every number x replaced by 1 − x (NaN, "cannot run", stays NaN).
    """
    return [
        _map_numbers(numbers, lambda a: np.ones_like(a)),
        _map_numbers(numbers, lambda a: np.zeros_like(a)),
        _map_numbers(numbers, lambda a: 1 - a),
    ]


def views(group, sweep, extra, *, seeds=None) -> list[dict]:
    """One view per seed (``seeds``, default: every seed of ``sweep``), headline and extra entries together.

    ``sweep`` and ``extra`` are loaded results (:func:`.results.load`,
    :func:`.results.load_extra`) or freshly swept tables in the same shape.
    """
    seeds = sorted({s for s, _, _ in sweep["table"]}) if seeds is None else list(seeds)
    out = []
    for seed in seeds:
        numbers = view(sweep, seed)
        numbers.update(view(extra, seed))
        out.append(numbers)
    return out


def check_files(group, sweep, extra, *, seeds=None) -> dict[str, dict[int, bool]]:
    """:func:`check` of the claims of ``group`` (a key of :data:`GROUPS`) on every seed of the sweeps."""
    seeds = sorted({s for s, _, _ in sweep["table"]}) if seeds is None else list(seeds)
    return check(GROUPS[group], dict(zip(seeds, views(group, sweep, extra, seeds=seeds), strict=True)))
