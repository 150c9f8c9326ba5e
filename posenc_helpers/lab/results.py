"""The lab's sweep over seeds, and the small results file the slider demo reads.

:func:`sweep` trains every scheme on every headline task for each seed at the
notebook's budget, and evaluates each model at :data:`SWEEP_LENGTHS`, past
the training length only as well, and (RoPE) with every test-time scaling
method at every factor in :data:`FACTORS`, no fine-tuning. ``make lab-results``
runs it and writes ``posenc_helpers/lab/results.json`` (a few kB), which
notebook 12's ranges and the slider demo of notebooks/13-trained-heads.ipynb
read, so neither trains for them. The seed test (tests/test_lab_claims.py)
trains the same models, and two held-out seeds, in the same pool.

Both sweeps train their models in a pool of worker processes (:func:`pool_map`,
one per core by default, each with one XLA thread), so two cores train two
models at once. Regenerate with ``make lab-results`` (about 10 minutes on 2 cores).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from .evaluate import SCALINGS, accuracy
from .model import SCHEMES
from .tasks import TASKS
from .train import DEFAULTS, train

__all__ = [
    "SWEEP_LENGTHS", "FACTORS", "SEEDS", "RESULTS_PATH", "sweep", "save", "load",
    "EXTRA_LENGTHS", "EXTRA_BUDGETS", "EXTRA_PATH", "extra_run", "extra_sweep", "save_extra", "load_extra",
    "pool_map", "sweep_row", "XLA_ONE_THREAD",
]

#: The XLA flag each worker process gets: one compute thread, so n workers use n cores without fighting.
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false"


def _one_thread_worker():
    # runs in each spawned worker before its first computation (XLA reads the flags then)
    flags = os.environ.get("XLA_FLAGS", "")
    if XLA_ONE_THREAD not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {XLA_ONE_THREAD}".strip()


def pool_map(fn, jobs, *, workers=None, on_result=None) -> list:
    """``[fn(*job) for job in jobs]``, computed in a pool of ``workers`` spawned processes; results in job order.

    ``workers=None`` uses one per core (at most one per job); ``workers=1``
    runs in this process. Each worker runs XLA with one thread
    (:data:`XLA_ONE_THREAD`). ``on_result(index, result)`` is called in job
    order as results arrive. ``fn`` must be importable (a module-level function).
    """
    jobs = [tuple(job) for job in jobs]
    if workers is None:
        workers = os.cpu_count() or 1
    workers = max(1, min(int(workers), len(jobs)))
    results = []
    if workers == 1:
        for i, job in enumerate(jobs):
            results.append(fn(*job))
            if on_result is not None:
                on_result(i, results[-1])
        return results
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_one_thread_worker) as pool:
        futures = [pool.submit(fn, *job) for job in jobs]
        for i, future in enumerate(futures):
            results.append(future.result())
            if on_result is not None:
                on_result(i, results[-1])
    return results

#: Test lengths of the sweep: the training length 32 up to 8× it, in steps of 32.
SWEEP_LENGTHS = tuple(range(32, 257, 32))

#: Test-time RoPE scaling factors s of the sweep.
FACTORS = tuple(range(1, 9))

#: The seeds of the shipped results and of the three-seed test.
SEEDS = (0, 1, 2)

RESULTS_PATH = Path(__file__).with_name("results.json")

#: Test lengths of the extra-task run: the training length, then 2×, 4×, 8× it.
EXTRA_LENGTHS = (32, 64, 128, 256)

#: Training budget per extra task. back3 gets the headline budget (DEFAULTS); recall gets
#: lr 1e-3 for 1000 steps, the budget at which the feasibility run of issue 10 saw it learned.
EXTRA_BUDGETS = {
    "back3": {"steps": DEFAULTS["steps"], "lr": DEFAULTS["lr"]},
    "recall": {"steps": 1000, "lr": 1e-3},
}

#: The extra-task run's results (``make lab-results-extra``), read by notebooks/12-extrapolation-lab.ipynb.
EXTRA_PATH = Path(__file__).with_name("results_extra.json")


def evaluate_run(run, *, seed=0) -> dict:
    """Every number the sweep keeps for one trained run (NaN: cannot run)."""
    past = [n for n in SWEEP_LENGTHS if n > run.train_len]
    out = {
        "accuracy": accuracy(run, SWEEP_LENGTHS, seed=seed),
        "beyond": np.concatenate([[np.nan], accuracy(run, past, seed=seed, positions="beyond")]),
    }
    if run.scheme == "rope":
        for method in SCALINGS:
            # scaled[method][f, j]: accuracy at SWEEP_LENGTHS[j] with factor FACTORS[f]
            out[method] = np.array([accuracy(run, SWEEP_LENGTHS, seed=seed, method=method, factor=f) for f in FACTORS])
    return out


def sweep_row(seed, task, scheme, steps=DEFAULTS["steps"]) -> dict:
    """Train one (seed, task, scheme) at the notebook's budget and keep :func:`evaluate_run`'s numbers."""
    start = time.perf_counter()
    run = train(scheme, task, seed=seed, steps=steps, progress=False)
    trained = time.perf_counter() - start
    entry = evaluate_run(run, seed=seed)
    entry["train_seconds"] = trained
    entry["eval_seconds"] = time.perf_counter() - start - trained
    entry["final_loss"] = float(run.losses[-1])
    return entry


def sweep(seeds=SEEDS, *, tasks=TASKS, schemes=SCHEMES, log=None, workers=None, steps=DEFAULTS["steps"]) -> dict:
    """Train and evaluate every (seed, task, scheme) in a pool: ``{(seed, task, scheme): {...}}`` plus timings."""
    keys = [(seed, task, scheme) for seed in seeds for task in tasks for scheme in schemes]

    def done(i, entry):
        if log is not None:
            seed, task, scheme = keys[i]
            log(f"seed {seed} {task:6s} {scheme:10s} train {entry['train_seconds']:5.1f} s, "
                f"accuracy {np.round(entry['accuracy'][[0, 1, 3, 7]], 3)}")

    entries = pool_map(sweep_row, [key + (steps,) for key in keys], workers=workers, on_result=done)
    return dict(zip(keys, entries, strict=True))


def _clean(x):
    if isinstance(x, np.ndarray):
        return [_clean(y) for y in x.tolist()]
    if isinstance(x, list):
        return [_clean(y) for y in x]
    if isinstance(x, float):
        return None if np.isnan(x) else round(x, 4)
    return x


def save(table, path=RESULTS_PATH) -> None:
    """Write the sweep's accuracies (not its timings) as JSON; NaN becomes null."""
    rows = []
    def order(item):
        (seed, task, scheme), _ = item
        return seed, TASKS.index(task), SCHEMES.index(scheme)

    for (seed, task, scheme), entry in sorted(table.items(), key=order):
        row = {"seed": seed, "task": task, "scheme": scheme}
        row.update({k: _clean(np.asarray(v, dtype=float)) for k, v in entry.items() if k in ("accuracy", "beyond") + SCALINGS})
        rows.append(row)
    doc = {
        "about": "accuracy of the extrapolation lab's models; regenerate with `make lab-results`",
        "defaults": {k: v for k, v in DEFAULTS.items()},
        "lengths": list(SWEEP_LENGTHS),
        "factors": list(FACTORS),
        "rows": rows,
    }
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")


def load(path=RESULTS_PATH) -> dict:
    """The shipped results: ``{(seed, task, scheme): {"accuracy": array, ...}}`` and the axes.

    >>> res = load()
    >>> int(res["lengths"][0]), res["table"][(0, "prev", "alibi")]["accuracy"].shape
    (32, (8,))
    """
    doc = json.loads(Path(path).read_text())
    table = {}
    for row in doc["rows"]:
        key = (row["seed"], row["task"], row["scheme"])
        table[key] = {
            k: np.array([[np.nan if x is None else x for x in r] for r in v]) if isinstance(v[0], list)
            else np.array([np.nan if x is None else x for x in v])
            for k, v in row.items() if k not in ("seed", "task", "scheme")
        }
    return {"lengths": np.array(doc["lengths"]), "factors": np.array(doc["factors"]), "table": table}


def extra_run(seed, task, scheme) -> dict:
    """Train one (seed, extra task, scheme) at :data:`EXTRA_BUDGETS` and evaluate it at :data:`EXTRA_LENGTHS`.

    Returns ``{"accuracy": (len(EXTRA_LENGTHS),) array, "final_loss": float}``;
    NaN marks a length the model cannot run (the learned table past its size).
    """
    budget = EXTRA_BUDGETS[task]
    run = train(scheme, task, seed=seed, steps=budget["steps"], lr=budget["lr"], progress=False)
    return {"accuracy": accuracy(run, EXTRA_LENGTHS, seed=seed), "final_loss": float(run.losses[-1])}


def extra_sweep(seeds=SEEDS, *, tasks=("back3", "recall"), schemes=SCHEMES, log=None, on_seed=None, workers=None) -> dict:
    """:func:`extra_run` for every (seed, task, scheme), in a pool: ``{(seed, task, scheme): {...}}``.

    ``on_seed(table)`` is called once every job of a seed has finished, so a long run keeps what it finished.
    """
    keys = [(seed, task, scheme) for seed in seeds for task in tasks for scheme in schemes]
    table = {}
    start = time.perf_counter()

    def done(i, entry):
        seed, task, scheme = keys[i]
        table[keys[i]] = entry
        if log is not None:
            log(f"seed {seed} {task:6s} {scheme:10s} at {time.perf_counter() - start:6.1f} s, "
                f"accuracy {np.round(entry['accuracy'], 3)}, final loss {entry['final_loss']:.3f}")
        if on_seed is not None and (i + 1 == len(keys) or keys[i + 1][0] != seed):
            on_seed(table)

    pool_map(extra_run, keys, workers=workers, on_result=done)
    return table


def save_extra(table, path=EXTRA_PATH) -> None:
    """Write the extra-task run's accuracies as JSON (NaN becomes null), with its budgets and lengths."""
    order = {t: i for i, t in enumerate(EXTRA_BUDGETS)}
    rows = []
    for (seed, task, scheme), entry in sorted(table.items(), key=lambda kv: (kv[0][0], order[kv[0][1]], SCHEMES.index(kv[0][2]))):
        rows.append({"seed": seed, "task": task, "scheme": scheme,
                     "accuracy": _clean(np.asarray(entry["accuracy"], dtype=float)),
                     "final_loss": round(float(entry["final_loss"]), 4)})
    doc = {
        "about": "in-distribution check of the extra tasks (not an extrapolation result); "
                 "regenerate with `make lab-results-extra`",
        "defaults": dict(DEFAULTS),
        "budgets": EXTRA_BUDGETS,
        "lengths": list(EXTRA_LENGTHS),
        "seeds": sorted({seed for seed, _, _ in table}),
        "rows": rows,
    }
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")


def load_extra(path=EXTRA_PATH) -> dict:
    """The shipped extra-task run: ``{"lengths", "seeds", "budgets", "table": {(seed, task, scheme): {...}}}``.

    >>> res = load_extra()
    >>> int(res["lengths"][0]), res["table"][(0, "recall", "alibi")]["accuracy"].shape
    (32, (4,))
    """
    doc = json.loads(Path(path).read_text())
    table = {
        (row["seed"], row["task"], row["scheme"]): {
            "accuracy": np.array([np.nan if x is None else x for x in row["accuracy"]]),
            "final_loss": row["final_loss"],
        }
        for row in doc["rows"]
    }
    return {"lengths": np.array(doc["lengths"]), "seeds": tuple(doc["seeds"]), "budgets": doc["budgets"], "table": table}


def main_extra(seeds=SEEDS) -> None:
    start = time.perf_counter()
    extra_sweep(seeds, log=lambda line: print(line, flush=True), on_seed=save_extra)
    print(f"wrote {EXTRA_PATH} in {time.perf_counter() - start:.0f} s")


def main() -> None:
    start = time.perf_counter()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()}", flush=True)
    table = sweep(log=lambda line: print(line, flush=True))
    save(table)
    print(f"wrote {RESULTS_PATH} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    import sys

    if "--extra" in sys.argv[1:]:
        main_extra()
    else:
        main()
