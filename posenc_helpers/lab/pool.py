"""The lab's process pool: jobs in spawned worker processes, each running XLA on one thread.

Two cores train two models at once when each worker uses one XLA thread
(:data:`XLA_ONE_THREAD`); with more threads per worker they would fight over
the cores. Every sweep, :func:`.train.train_all`, the text lab and the
experiment harness run their jobs through :func:`pool_map`. This module
decides no parameter of any model (the worker's XLA flags are part of the
model cache's key, :func:`.cache.environment`), and imports no other lab
module but :mod:`.cache`, for the folder :func:`resumable` keeps its rows in.
"""

from __future__ import annotations

import numbers
import os
from pathlib import Path

__all__ = ["XLA_ONE_THREAD", "one_thread_worker", "pool_map", "read_lines", "resumable"]

#: The XLA flag each worker process gets: one compute thread, so n workers use n cores without fighting.
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false"


def one_thread_worker():
    """Run in each spawned worker before its first computation (XLA reads the flags then)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if XLA_ONE_THREAD not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {XLA_ONE_THREAD}".strip()


def pool_map(fn, jobs, *, workers=None, on_result=None, spawn=False, ordered=True, recycle=False) -> list:
    """``[fn(*job) for job in jobs]``, computed in a pool of ``workers`` spawned processes; results in job order.

    ``workers=None`` uses one per core (at most one per job); ``workers=1``
    runs in this process, unless ``spawn=True``, which runs every job in a
    spawned worker even when there is one (a row kept beside rows of workers
    is then computed as they are). Each worker runs XLA with one thread
    (:data:`XLA_ONE_THREAD`). ``on_result(index, result)`` is called in job
    order as results arrive, or with ``ordered=False`` as each job finishes (a
    run that keeps its results then keeps every finished one). At most
    ``workers`` jobs are handed to the pool at once, so when a job raises, no
    other job starts after it: the jobs already running finish and their
    results are reported, then the first error is raised, with a note naming
    its job. ``recycle=True`` gives every job a spawned worker of its own
    (``spawn`` is implied). The reason: the headline sweep's worker, reused,
    held 22,676 memory maps (of the 65,530 ``vm.max_map_count`` allows) after
    70 rows, and a reused pilot worker twice failed to compile ("Cannot
    allocate memory") with most of the RAM free; that the maps caused it is
    likely, not shown. A fresh worker re-imports JAX and recompiles, a few
    seconds a job. ``fn`` must be importable (a module-level function).

    >>> pool_map(pow, [(2, 3), (3, 2)], workers=1)
    [8, 9]
    """
    jobs = [tuple(job) for job in jobs]
    if workers is None:
        workers = os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be a number of worker processes (1 or more) or None, got {workers!r}")
    if not jobs:
        return []
    workers = min(int(workers), len(jobs))
    spawn = spawn or recycle  # a worker of its own for each job is a spawned worker, even with one
    out = [None] * len(jobs)
    if workers == 1 and not spawn:
        for i, job in enumerate(jobs):
            try:
                out[i] = fn(*job)
            except Exception as e:
                e.add_note(_failed(fn, i, job))
                raise
            if on_result is not None:
                on_result(i, out[i])
        return out
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from multiprocessing import get_context

    # max_tasks_per_child=1: a worker is never reused. Keep it at 1: Python 3.11's pool can hang with a larger
    # value (CPython gh-115634)
    per_child = {"max_tasks_per_child": 1} if recycle else {}
    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=one_thread_worker, **per_child)
    got = [False] * len(jobs)
    pending, submitted, reported, error = {}, 0, 0, None

    def report(i):
        nonlocal reported
        if on_result is None:
            return
        if not ordered:
            on_result(i, out[i])
            return
        while reported < len(jobs) and got[reported]:
            on_result(reported, out[reported])
            reported += 1

    try:
        while True:
            # hand the pool at most `workers` jobs, so that none waits in its queue when a job fails
            while error is None and submitted < len(jobs) and len(pending) < workers:
                pending[pool.submit(fn, *jobs[submitted])] = submitted
                submitted += 1
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                i = pending.pop(future)
                try:
                    out[i] = future.result()
                except Exception as e:
                    if error is None:
                        e.add_note(_failed(fn, i, jobs[i]))
                        error = e
                    continue
                got[i] = True
                report(i)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)  # interrupted: nothing more starts
        raise
    pool.shutdown(wait=True)
    if error is not None:
        raise error
    return out


def _failed(fn, i, job) -> str:
    return f"pool_map: job {i}, {getattr(fn, '__qualname__', fn)}{job!r}, failed"


def _partials():
    # where a resumable run keeps its finished rows: beside the model cache (None when the cache is off)
    from .cache import directory

    folder = directory()
    return None if folder is None else folder / "partials"


def read_lines(path) -> list:
    """The JSON values of a file of JSON lines that a run appends to, each with its line number: ``[(n, value)]``.

    A last line cut off mid-write (a run stopped while writing it) is dropped, and the file truncated to its last
    whole line, in place, so no kept line is ever rewritten. A line that is not JSON is refused, by file and line.
    """
    import json

    path = Path(path)
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        # a run stopped while writing its last line: that line is lost, the others are kept as they are
        os.truncate(path, data.rfind(b"\n") + 1)
        data = data[: data.rfind(b"\n") + 1]
    out = []
    for n, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}, line {n}, is not a line of JSON ({e.msg}): {line[:60]!r}") from None
    return out


def resumable(fn, jobs, *, name, workers=None, log=None, folder=None, spawn=False, recycle=False) -> dict:
    """:func:`pool_map` that keeps each finished result, so a stopped run started again computes only the rest.

    ``{job: fn(*job)}`` for every job (a tuple of JSON values, not nested; ``fn``'s
    result must be JSON too). Each result is appended, as it arrives, to the partial
    file ``<name>.jsonl`` in the model cache's folder (``partials/``); a job
    found there is not computed again. ``name`` must change whenever what
    ``fn`` computes changes (the callers put a hash of their code in it), so a
    stale result is never read. With the model cache off, nothing is kept.
    ``log(line)`` hears of every result. ``folder`` keeps the partial file
    elsewhere (a sweep that spans sessions keeps it in the repository, where a
    commit carries it to the next machine), whether or not the model cache is
    on. ``spawn`` and ``recycle`` are :func:`pool_map`'s. A job named twice is
    computed once; a file that holds one job twice with different results, or
    a line that is not a kept result, is refused by file and line.
    """
    import json

    jobs = list(dict.fromkeys(tuple(job) for job in jobs))  # each job once, in order
    for job in jobs:
        try:
            same = tuple(json.loads(json.dumps(list(job)))) == job
        except (TypeError, ValueError):
            same = False
        if not same:
            raise ValueError(f"jobs: {job!r} does not come back from JSON as itself; a job is a tuple of JSON scalars")
    folder = _partials() if folder is None else Path(folder)
    path = None if folder is None else folder / f"{name}.jsonl"
    done, where = {}, {}
    if path is not None and path.is_file():
        for n, item in read_lines(path):
            if not isinstance(item, dict) or set(item) != {"job", "result"} or not isinstance(item["job"], list):
                raise ValueError(f"{path}, line {n}, is not a kept result (an object with a job and a result)")
            job = tuple(item["job"])
            if job in done and done[job] != item["result"]:
                raise ValueError(f"{path}: job {job!r} is kept twice with different results (lines {where[job]} and {n})")
            done[job], where[job] = item["result"], n
    todo = [job for job in jobs if job not in done]
    if log is not None:
        log(f"{len(jobs) - len(todo)} of {len(jobs)} jobs read from {path}" if path else f"{len(jobs)} jobs")

    def keep(i, result):
        done[todo[i]] = result
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a") as f:
                f.write(json.dumps({"job": list(todo[i]), "result": result}) + "\n")
        if log is not None:
            log(f"{len(done)}/{len(jobs)} {todo[i]}")

    if todo:
        pool_map(fn, todo, workers=workers, on_result=keep, spawn=spawn, ordered=False, recycle=recycle)  # as each finishes
    return {job: done[job] for job in jobs}
