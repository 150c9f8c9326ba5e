"""Comparing a retrained lab row with its stored row: every number, and the largest difference.

Used by the reproduction check (tests/test_lab_reproduce.py) and by the full
retraining of the held-out seeds (make test-all). A row is what the results
files keep for one model (:data:`posenc_helpers.lab.results.KEPT`, or a text
row's ``bits``, ``by_position`` and ``final_train_bits``); timings are left out.
"""

from __future__ import annotations

import math

import numpy as np

#: The keys of a text row that hold numbers a model decides (the rest are its name and timings).
TEXT_KEPT = ("bits", "by_position", "final_train_bits", "scaled", "finetuned")


def numbers(entry, prefix="") -> dict[str, float]:
    """Every number of a row as ``{"accuracy/3": 0.98, ...}`` (NaN and None as NaN)."""
    out: dict[str, float] = {}
    if isinstance(entry, dict):
        for k, v in entry.items():
            out.update(numbers(v, f"{prefix}{k}/"))
    elif isinstance(entry, (list, tuple)) and entry and all(isinstance(v, dict) for v in entry):
        for i, v in enumerate(entry):
            out.update(numbers(v, f"{prefix}{i}/"))
    else:
        flat = np.asarray([np.nan if x is None else x for x in np.ravel(np.asarray(entry, dtype=object))], dtype=float)
        for i, x in enumerate(flat):
            out[f"{prefix}{i}"] = float(x)
    return out


def largest_difference(got: dict, want: dict) -> tuple[float, str]:
    """``(the largest |got − want| over the numbers both rows hold, where)``; NaN against NaN is equal.

    A number that one row has and the other lacks, or NaN against a number,
    counts as an infinite difference, so a row that changed shape never passes.

    >>> largest_difference({"a": [0.5, 0.25]}, {"a": [0.5, 0.5]})
    (0.25, 'a/1')
    >>> largest_difference({"a": [0.5]}, {"b": [0.5]})[0]
    inf
    """
    g, w = numbers(got), numbers(want)
    if g.keys() != w.keys():
        return math.inf, f"keys differ: {sorted(g.keys() ^ w.keys())[:3]}"
    worst, where = 0.0, ""
    for name in sorted(g):
        a, b = g[name], w[name]
        if math.isnan(a) and math.isnan(b):
            continue
        d = math.inf if math.isnan(a) or math.isnan(b) else abs(a - b)
        if d > worst:
            worst, where = d, name
    return worst, where


def kept(entry: dict, keys) -> dict:
    """The part of a row that a results file keeps."""
    return {k: v for k, v in entry.items() if k in keys}


def retrain(kind: str, *key):
    """Retrain one stored row, as the file's own regenerating function trains it, with no model cache.

    ``("sweep", seed, task, scheme)`` or ``("held-out", seed, task, scheme)``:
    :func:`posenc_helpers.lab.results.sweep_row` (a scheme other than RoPE,
    whose row has no factor grid and no fine-tune); ``("text", scheme, seed)``:
    :func:`posenc_helpers.lab.text.sweep_row`. Returns the row as the file
    keeps it (rounded by the file's own ``_clean``). A module-level function,
    so that the lab's pool of worker processes can run it.
    """
    import os

    os.environ["POSENC_MODEL_CACHE"] = "off"  # a real retraining, never a model read back
    if kind in ("sweep", "held-out"):
        from posenc_helpers.lab import results

        seed, task, scheme = key
        if scheme == "rope":
            raise ValueError("a RoPE row also fine-tunes: pick another scheme for a quick check")
        entry = results.sweep_row(seed, task, scheme, grid=False, tune=False)
        return results._clean(kept(entry, results.KEPT))
    if kind == "text":
        from posenc_helpers.lab import text

        scheme, seed = key
        if scheme == "rope":
            raise ValueError("a RoPE text row also fine-tunes: pick another scheme for a quick check")
        return text._clean(kept(text.sweep_row(scheme, seed, finetuned=False), TEXT_KEPT))
    raise ValueError(f"kind must be 'sweep', 'held-out' or 'text', got {kind!r}")


def same_machine(path) -> tuple[bool, str]:
    """Whether the results file at ``path`` was computed on this kind of machine, by its recorded fingerprint
    (:mod:`posenc_helpers.lab.fingerprint`), as a worker of the lab's pool trains here; and why not."""
    from posenc_helpers.lab import fingerprint

    return fingerprint.same(fingerprint.stored(path), fingerprint.fingerprint(worker=True))


def say_another_machine(what, reason) -> None:
    """Warn that a retrain check compares by the sweep's spread and the claims, not bit for bit, and why."""
    import warnings

    warnings.warn(f"{what}: {reason}; compared by the sweep's spread over seeds and by the claims, not bit for bit",
                  UserWarning, stacklevel=2)


def within_spread(value, seeds_values, *, floor=0.05) -> bool:
    """Whether ``value`` lies within the seeds' range widened on each side by the range itself (at least ``floor``):
    a model retrained on another machine is another draw, like another seed, and six or twenty seeds do not bound
    where the next one falls; a model broken by a change to the code falls far outside."""
    a = np.asarray([x for x in seeds_values if not math.isnan(x)], dtype=float)
    if math.isnan(value) or a.size == 0:
        return math.isnan(value) and a.size == 0
    pad = max(float(a.max() - a.min()), floor)
    return float(a.min()) - pad <= value <= float(a.max()) + pad
