"""The sweeps' worker pool: results in job order, one XLA thread per worker, the same numbers as in-process."""

from __future__ import annotations

import os

import numpy as np
import pytest

from posenc_helpers import lab
from posenc_helpers.lab import cache, results

#: A tiny model (one layer, width 16, three steps): the pool's point is its numbers, not the model's quality.
TINY = {"train_len": 8, "d_model": 16, "heads": 2, "layers": 1, "steps": 3, "progress": False}


def tiny_job(scheme, seed):
    """Train a tiny model and score it, as a sweep's job does; also the worker's XLA flags."""
    run = lab.train(scheme, "prev", seed=seed, cache=False, **TINY)  # trained here, never read from the model cache
    numbers = (run.losses, lab.accuracy(run, [8, 16]), lab.accuracy(run, [16], positions="beyond"))
    return os.environ.get("XLA_FLAGS", ""), numbers


#: Three jobs for two workers, so one worker runs two; each job is another model.
JOBS = [("alibi", 0), ("none", 1), ("alibi", 2)]


@pytest.fixture(scope="module")
def pooled():
    """One pool for this module's checks (spawning workers, each importing JAX, is the slow part)."""
    seen = []
    out = results.pool_map(tiny_job, JOBS, workers=2, on_result=lambda i, r: seen.append(i))
    return out, seen


def test_pool_map_keeps_job_order_and_reports_each_result(pooled):
    out, seen = pooled
    assert seen == [0, 1, 2] and len(out) == 3
    losses = [numbers[0] for _, numbers in out]
    assert all(not np.array_equal(a, b) for i, a in enumerate(losses) for b in losses[i + 1 :])  # three models


def test_each_worker_runs_xla_with_one_thread(pooled):
    out, _ = pooled
    assert all(results.XLA_ONE_THREAD in flags for flags, _ in out)


def test_training_in_the_pool_gives_the_numbers_of_this_process(pooled):
    out, _ = pooled
    for job, (_, got) in zip(JOBS, out, strict=True):
        _, want = tiny_job(*job)
        for a, b in zip(got, want, strict=True):
            # one XLA thread may sum in another order than this process's threads: rounding, not a new model
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=str(job))


def test_workers_1_runs_in_this_process_in_job_order():
    seen = []
    out = results.pool_map(pow, [(2, 3), (3, 2), (5, 1)], workers=1, on_result=lambda i, r: seen.append((i, r)))
    assert out == [8, 9, 5] and seen == [(0, 8), (1, 9), (2, 5)]


@pytest.mark.slow  # trains four full-size models (two in spawned workers) and scores each at every sweep length
@pytest.mark.full  # make test-all only (about 200 s): the tiny pool test above proves the same point in every run
def test_a_sweep_in_the_pool_matches_one_in_this_process(monkeypatch):
    monkeypatch.setenv(cache.ENV, "off")  # both sweeps train (the workers inherit it), neither reads the other's models
    kw = {"seeds": (0,), "tasks": ("prev",), "schemes": ("alibi", "none"), "steps": 50}
    pooled = results.sweep(workers=2, **kw)
    local = results.sweep(workers=1, **kw)
    assert pooled.keys() == local.keys() == {(0, "prev", "alibi"), (0, "prev", "none")}
    for key in local:
        for name in ("accuracy", "beyond"):
            np.testing.assert_allclose(pooled[key][name], local[key][name], atol=0.01)


def squares(x):
    return x * x


def test_resumable_computes_only_what_its_partial_file_lacks(monkeypatch, tmp_path):
    from posenc_helpers.lab import pool

    monkeypatch.setenv(cache.ENV, str(tmp_path / "models"))
    lines = []
    first = pool.resumable(squares, [(1,), (2,)], name="t", workers=1, log=lines.append)
    assert first == {(1,): 1, (2,): 4}
    calls = []
    monkeypatch.setattr(pool, "pool_map", lambda fn, jobs, **kw: calls.append(jobs) or [
        kw["on_result"](i, fn(*job)) for i, job in enumerate(jobs)])
    again = pool.resumable(squares, [(2,), (3,), (1,)], name="t", workers=1, log=lines.append)
    assert again == {(2,): 4, (3,): 9, (1,): 1} and calls == [[(3,)]]  # only the new job ran
    assert "2 of 3 jobs read from" in lines[-2]
    other = pool.resumable(squares, [(1,)], name="another code version", workers=1)
    assert other == {(1,): 1} and len(list((tmp_path / "models" / "partials").glob("*.jsonl"))) == 2


def test_resumable_keeps_nothing_with_the_cache_off(monkeypatch, tmp_path):
    from posenc_helpers.lab import pool

    monkeypatch.setenv(cache.ENV, "off")
    written = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda f, *a, **k: written.append(f) or real_open(f, *a, **k))
    assert pool.resumable(squares, [(4,)], name="t", workers=1) == {(4,): 16}
    assert written == []  # no partial file opened, anywhere


def test_resumable_drops_a_result_cut_off_mid_write(monkeypatch, tmp_path):
    from posenc_helpers.lab import pool

    monkeypatch.setenv(cache.ENV, str(tmp_path / "models"))
    pool.resumable(squares, [(1,), (2,)], name="t", workers=1)
    path = tmp_path / "models" / "partials" / "t.jsonl"
    path.write_text(path.read_text() + '{"job": [3], "res')  # a run killed while writing job 3's result
    calls = []
    monkeypatch.setattr(pool, "pool_map", lambda fn, jobs, **kw: calls.append(jobs) or [
        kw["on_result"](i, fn(*job)) for i, job in enumerate(jobs)])
    assert pool.resumable(squares, [(1,), (2,), (3,)], name="t", workers=1) == {(1,): 1, (2,): 4, (3,): 9}
    assert calls == [[(3,)]] and path.read_text().count("\n") == 3  # job 3 computed again, the file whole


def fail_first(x, folder):
    """Job x of the failure test: marks that it started; x < 0 fails at once, x = 1 takes a while, others are quick."""
    import pathlib
    import time

    pathlib.Path(folder, f"started-{x}").touch()
    if x < 0:
        raise ValueError(f"job with x={x} fails")
    if x == 1:
        time.sleep(3)
    return x * x


def test_a_failing_job_stops_the_rest_reports_the_running_and_is_named(tmp_path):
    from posenc_helpers.lab.pool import pool_map

    seen = []
    jobs = [(-1, str(tmp_path)), (1, str(tmp_path)), (2, str(tmp_path)), (3, str(tmp_path))]
    with pytest.raises(ValueError, match="x=-1 fails") as info:
        pool_map(fail_first, jobs, workers=2, ordered=False, on_result=lambda i, r: seen.append((i, r)))
    assert any("pool_map: job 0, fail_first(-1," in note for note in info.value.__notes__)
    # two jobs were handed to the two workers; job 1, running when job 0 failed, finished and was reported; the
    # others never started
    assert sorted(p.name for p in tmp_path.iterdir()) == ["started--1", "started-1"]
    assert seen == [(1, 1)]


def test_a_failing_job_in_this_process_is_named():
    from posenc_helpers.lab.pool import pool_map

    with pytest.raises(ZeroDivisionError) as info:
        pool_map(divmod, [(4, 2), (1, 0)], workers=1)
    assert info.value.__notes__ == ["pool_map: job 1, divmod(1, 0), failed"]


def test_recycle_spawns_a_worker_per_job_even_with_one_worker():
    from posenc_helpers.lab.pool import pool_map

    pids = pool_map(os.getpid, [(), (), ()], workers=1, recycle=True)  # spawn not asked for: recycle implies it
    assert len(set(pids)) == 3 and os.getpid() not in pids


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_a_bad_number_of_workers_is_refused_by_name(workers):
    from posenc_helpers.lab.pool import pool_map

    message = f"workers must be a number of worker processes \\(1 or more\\) or None, got {workers!r}"
    with pytest.raises(ValueError, match=message):
        pool_map(pow, [(2, 3)], workers=workers)


def test_a_cut_line_is_truncated_in_place_and_a_bad_line_named(tmp_path):
    from posenc_helpers.lab.pool import read_lines

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n\n[2]\n{"cut')
    inode = path.stat().st_ino
    assert read_lines(path) == [(1, {"a": 1}), (3, [2])]
    assert path.read_bytes() == b'{"a": 1}\n\n[2]\n' and path.stat().st_ino == inode  # the same file, truncated
    path.write_text('{"a": 1}\n<<<<<<< HEAD\n')
    with pytest.raises(ValueError, match=r"rows.jsonl, line 2, is not a line of JSON .*'<<<<<<< HEAD'"):
        read_lines(path)


def test_resumable_refuses_what_it_cannot_read_back(monkeypatch, tmp_path):
    from posenc_helpers.lab import pool

    monkeypatch.setenv(cache.ENV, str(tmp_path / "models"))
    path = tmp_path / "models" / "partials" / "t.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"job": [1], "result": 1}\n{"job": [1], "result": 1}\n')  # the same result twice: read once
    assert pool.resumable(squares, [(1,)], name="t", workers=1) == {(1,): 1}
    path.write_text('{"job": [1], "result": 1}\n{"job": [1], "result": 999}\n')
    with pytest.raises(ValueError, match=r"job \(1,\) is kept twice with different results \(lines 1 and 2\)"):
        pool.resumable(squares, [(1,)], name="t", workers=1)
    path.write_text('{"job": [1]}\n')
    with pytest.raises(ValueError, match="line 1, is not a kept result"):
        pool.resumable(squares, [(1,)], name="t", workers=1)
    with pytest.raises(ValueError, match=r"jobs: \(\(1, 2\),\) does not come back from JSON as itself"):
        pool.resumable(squares, [((1, 2),)], name="u", workers=1)


def test_resumable_computes_a_job_named_twice_once(monkeypatch, tmp_path):
    from posenc_helpers.lab import pool

    monkeypatch.setenv(cache.ENV, str(tmp_path / "models"))
    assert pool.resumable(squares, [(5,), (5,), (6,)], name="t", workers=1) == {(5,): 25, (6,): 36}
    assert (tmp_path / "models" / "partials" / "t.jsonl").read_text().count("\n") == 2
