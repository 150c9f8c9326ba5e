"""The sweep of the schemes built for length generalisation, and of every scheme on retrieval past L.

Two parts, one file each (``length_results.json``, and
``length_results_heldout.json`` for the held-out seeds):

- ``"prev"`` and ``"first"``: the five schemes of :data:`.model.LENGTH_SCHEMES`
  (Ruoss et al.'s randomized positions on sinusoidal, learned, RoPE and ALiBi;
  Li et al.'s FIRE), trained at the lab's budget and scored as the headline
  sweep scores its schemes: accuracy at :data:`.results.SWEEP_LENGTHS` over
  every position, and past L only.
- ``"passkey"``: every scheme (:data:`.model.ALL_SCHEMES`) trained on the
  passkey task and read on :func:`.passkey.passkey_grid`'s depth × length grid;
  each RoPE model also with the test-time rescalings (PI, NTK, YaRN at
  s = T/L).

The seeds are :data:`SEEDS`, the first six of the headline sweep's (a
budget: 23 models a seed), and the held-out seeds are the lab's
(:data:`.results.HELD_OUT`), whose rows for these schemes and this task no
claim was written with. ``make lab-length`` runs both parts
(``python -m posenc_helpers.lab.length_results``, then ``--held-out``);
the held-out run prints no numbers. Notebook 17 reads the files; the seed
test (tests/test_lab_length.py) checks its claims on both.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from .evaluate import accuracy
from .model import ALL_SCHEMES, LENGTH_SCHEMES
from .passkey import DEPTHS, GRID_LENGTHS, passkey_grid
from .pool import pool_map
from .results import HELD_OUT, SWEEP_LENGTHS
from .train import DEFAULTS, train

__all__ = [
    "SEEDS", "HELD_OUT", "TASKS", "PASSKEY_SCHEMES", "METHODS", "PATH", "HELD_OUT_PATH", "jobs", "row", "sweep", "save",
    "load", "main",
]

#: The seeds of this sweep: the first six of the headline sweep's (and of the extra-task sweep's).
SEEDS = (0, 1, 2, 3, 4, 5)

#: The tasks the five new schemes are swept on, beside "passkey" (which every scheme is swept on).
TASKS = ("prev", "first")

#: Every scheme on the passkey task.
PASSKEY_SCHEMES = ALL_SCHEMES

#: The test-time rescalings every RoPE passkey model is also read with (s = T/L).
METHODS = ("pi", "ntk", "yarn")

PATH = Path(__file__).with_name("length_results.json")
HELD_OUT_PATH = Path(__file__).with_name("length_results_heldout.json")


def jobs(seeds) -> list:
    """Every ``(seed, task, scheme)`` of the sweep for ``seeds``: the new schemes on prev and first, all on passkey.

    >>> len(jobs(SEEDS)), jobs([0])[0], jobs([0])[-1]
    (138, (0, 'prev', 'rand_sinusoidal'), (0, 'passkey', 'fire'))
    """
    out = []
    for seed in seeds:
        out += [(seed, task, scheme) for task in TASKS for scheme in LENGTH_SCHEMES]
        out += [(seed, "passkey", scheme) for scheme in PASSKEY_SCHEMES]
    return out


def row(seed, task, scheme) -> dict:
    """Train one model at the lab's budget and score it: one row of the file."""
    start = time.perf_counter()
    run = train(scheme, task, seed=seed, progress=False)
    trained = time.perf_counter() - start
    out = {"seed": seed, "task": task, "scheme": scheme, "final_loss": float(run.losses[-1])}
    if task == "passkey":
        grid = passkey_grid(run, seed=seed)
        out["key"], out["token"] = grid["key"].tolist(), grid["token"].tolist()
        if scheme == "rope":
            out["scaled"] = {}
            for m in METHODS:
                g = passkey_grid(run, seed=seed, method=m)
                out["scaled"][m] = {"key": g["key"].tolist(), "token": g["token"].tolist()}
    else:
        lengths = list(SWEEP_LENGTHS)
        out["accuracy"] = accuracy(run, lengths, seed=seed).tolist()
        past = [n for n in lengths if n > run.train_len]
        out["beyond"] = [None] + accuracy(run, past, seed=seed, positions="beyond").tolist()
    out["train_seconds"] = round(trained, 1)
    out["eval_seconds"] = round(time.perf_counter() - start - trained, 1)
    return out


def sweep(seeds, *, workers=None, log=print, partial=None) -> dict:
    """Every row of :func:`jobs` for ``seeds``, in the lab's pool; the file's dictionary.

    ``partial``: a path the rows finished so far are written to after each one
    (JSON lines), and read back first, so an interrupted sweep resumes where it stopped.
    """
    start = time.perf_counter()
    rows = []
    if partial is not None and Path(partial).exists():
        rows = [json.loads(line) for line in Path(partial).read_text().splitlines() if line.strip()]
    resumed = len(rows)
    have = {(r["seed"], r["task"], r["scheme"]) for r in rows}
    todo = [job for job in jobs(seeds) if job not in have]

    def done(i, r):
        rows.append(r)
        if partial is not None:
            with open(partial, "a") as f:
                f.write(json.dumps(r) + "\n")
        if log is not None:
            log(f"{i + 1}/{len(todo)} seed {r['seed']} {r['task']} {r['scheme']}: trained in {r['train_seconds']} s")

    pool_map(row, todo, workers=workers, on_result=done)
    order = {job: n for n, job in enumerate(jobs(seeds))}
    rows.sort(key=lambda r: order[(r["seed"], r["task"], r["scheme"])])
    return {
        "about": "the length-generalisation schemes on prev and first, and every scheme on passkey "
        "(regenerate: make lab-length)",
        "seeds": sorted(seeds),
        "train_len": DEFAULTS["train_len"],
        "steps": DEFAULTS["steps"],
        "lengths": list(SWEEP_LENGTHS),
        "depths": list(DEPTHS),
        "grid_lengths": list(GRID_LENGTHS),
        "methods": list(METHODS),
        "seconds_wall": round(time.perf_counter() - start, 1),  # this run's; a resumed run's excludes the earlier rows
        "rows_from_partial": resumed,
        "row_seconds": round(sum(r["train_seconds"] + r["eval_seconds"] for r in rows), 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "workers": workers or os.cpu_count(),
        "rows": rows,
    }


def save(doc, path) -> None:
    Path(path).write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")


def load(path=PATH) -> dict:
    """The file as ``{"seeds", "lengths", ..., "table": {(seed, task, scheme): row}}`` with arrays.

    >>> doc = load()
    >>> doc["seeds"] == SEEDS, doc["table"][(0, "passkey", "rope")]["key"].shape    # depths × lengths
    (True, (5, 4))
    """
    doc = json.loads(Path(path).read_text())
    table = {}
    for r in doc["rows"]:
        entry = dict(r)
        for name in ("accuracy", "beyond", "key", "token"):
            if name in entry:
                entry[name] = np.array(entry[name], dtype=float)
        if "scaled" in entry:
            entry["scaled"] = {m: {k: np.array(x, dtype=float) for k, x in g.items()} for m, g in entry["scaled"].items()}
        table[(r["seed"], r["task"], r["scheme"])] = entry
    out = {k: v for k, v in doc.items() if k != "rows"}
    out["seeds"] = tuple(doc["seeds"])
    out["table"] = table
    return out


def main(argv=None) -> None:
    """``python -m posenc_helpers.lab.length_results [--held-out] [WORKERS]``.

    Rows are appended to ``length_results.partial`` (``.partial`` beside the
    held-out file) as they finish, so a stopped run resumes where it stopped;
    the partial file is removed once the whole file is written.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    held_out = "--held-out" in argv
    argv = [a for a in argv if a != "--held-out"]
    workers = int(argv[0]) if argv else None
    seeds, path = (HELD_OUT, HELD_OUT_PATH) if held_out else (SEEDS, PATH)
    partial = path.with_suffix(".partial")
    # the held-out run prints which rows it trained, not their numbers: the seed test reads them first
    doc = sweep(seeds, workers=workers, partial=partial)
    save(doc, path)
    partial.unlink(missing_ok=True)  # the file is whole: the next run starts afresh
    print(f"wrote {path} in {doc['seconds_wall']} s")


if __name__ == "__main__":
    from posenc_helpers.lab.length_results import main as _main

    _main()
