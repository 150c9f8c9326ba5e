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

import os
from pathlib import Path

__all__ = ["XLA_ONE_THREAD", "one_thread_worker", "pool_map", "resumable"]

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
    run that keeps its results then keeps every finished one). If a job
    raises, the jobs not yet started are cancelled and the error is raised.
    ``recycle=True`` gives every job a worker of its own: a worker's memory
    maps grow with every program XLA compiles in it, and a worker that
    trained model after model failed to compile ("Cannot allocate memory")
    with RAM free, likely at ``vm.max_map_count``. ``fn`` must be importable (a module-level function).

    >>> pool_map(pow, [(2, 3), (3, 2)], workers=1)
    [8, 9]
    """
    jobs = [tuple(job) for job in jobs]
    if workers is None:
        workers = os.cpu_count() or 1
    workers = max(1, min(int(workers), len(jobs)))
    results = []
    if workers == 1 and not spawn:
        for i, job in enumerate(jobs):
            results.append(fn(*job))
            if on_result is not None:
                on_result(i, results[-1])
        return results
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    out = [None] * len(jobs)
    per_child = {"max_tasks_per_child": 1} if recycle else {}
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=one_thread_worker, **per_child) as pool:
        futures = [pool.submit(fn, *job) for job in jobs]
        index = {future: i for i, future in enumerate(futures)}
        try:
            for future in (futures if ordered else as_completed(futures)):
                i = index[future]
                out[i] = future.result()
                if on_result is not None:
                    on_result(i, out[i])
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # the jobs not yet started never start
            raise
    return out


def _partials():
    # where a resumable run keeps its finished rows: beside the model cache (None when the cache is off)
    from .cache import directory

    folder = directory()
    return None if folder is None else folder / "partials"


def resumable(fn, jobs, *, name, workers=None, log=None, folder=None, spawn=False, recycle=False) -> dict:
    """:func:`pool_map` that keeps each finished result, so a stopped run started again computes only the rest.

    ``{job: fn(*job)}`` for every job (a tuple of JSON values; ``fn``'s result
    must be JSON too). Each result is appended, as it arrives, to the partial
    file ``<name>.jsonl`` in the model cache's folder (``partials/``); a job
    found there is not computed again. ``name`` must change whenever what
    ``fn`` computes changes (the callers put a hash of their code and of the
    machine in it), so a stale result is never read. With the model cache off,
    nothing is kept. ``log(line)`` hears of every result. ``folder`` keeps the partial file elsewhere (a sweep
    that spans sessions keeps it in the repository, where a commit carries it to the next machine), whether or not
    the model cache is on.
    """
    jobs = [tuple(job) for job in jobs]
    folder = _partials() if folder is None else Path(folder)
    path = None if folder is None else folder / f"{name}.jsonl"
    done = {}
    if path is not None and path.is_file():
        import json

        text = path.read_text()
        if text and not text.endswith("\n"):
            # a run stopped while writing its last result: that result is lost, the others are kept
            text = text[: text.rfind("\n") + 1]
            path.write_text(text)
        for line in text.splitlines():
            if line.strip():
                item = json.loads(line)
                done[tuple(item["job"])] = item["result"]
    todo = [job for job in jobs if job not in done]
    if log is not None:
        log(f"{len(jobs) - len(todo)} of {len(jobs)} jobs read from {path}" if path else f"{len(jobs)} jobs")

    def keep(i, result):
        done[todo[i]] = result
        if path is not None:
            import json

            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a") as f:
                f.write(json.dumps({"job": list(todo[i]), "result": result}) + "\n")
        if log is not None:
            log(f"{len(done)}/{len(jobs)} {todo[i]}")

    if todo:
        pool_map(fn, todo, workers=workers, on_result=keep, spawn=spawn, ordered=False, recycle=recycle)  # as each finishes
    return {job: done[job] for job in jobs}
