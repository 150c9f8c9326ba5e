"""The reproduction check: a sample of stored rows retrained in every `make test`, against their files.

The claims of notebooks 12, 13 and 15 are checked on stored rows (the sweeps'
files and the held-out files of ``make lab-heldout``), which takes seconds. So
that a change to the lab cannot leave those files behind, every run retrains
one row of each kind, with the files' own regenerating functions and no
model cache, and compares every number of it with the stored row:

- a headline row of the sweep (``results.json``): NoPE on "prev", seed 0;
- a held-out row (``results_heldout.json``): NoPE on "prev", the first held-out seed;
- a text row (``text_results.json``): ALiBi, seed 0.

Each trains in a worker process of the lab's pool with one XLA thread, as
the files were made; ``make test-all`` retrains all three (``make test``
runs only the checks that the comparison can fail). On the machine that made the files the
numbers come back identical to the files' last decimal (the text row within
one rounding step). Another CPU, another thread count or another of
XLA's code paths rounds differently, and a thousand steps of training amplify
that, so the tolerance is measured, not assumed (the numbers are in
``ROW_TOLERANCE`` and ``TEXT_TOLERANCE`` below). A real change to the lab
moves a row much further: the fast tests at the end show that the check tells
another seed from the stored one.
"""

from __future__ import annotations

import json

import pytest
from lab_rows import largest_difference, retrain

from posenc_helpers.lab import results
from posenc_helpers.lab import text as T

#: The first seed the held-out file holds (its seeds come from the ledger's check of claims.py, issue 43).
HELD_OUT_SEED = json.loads(results.HELD_OUT_PATH.read_text())["seeds"][0]

#: The rows retrained: (kind, key...) as :func:`lab_rows.retrain` takes them.
SAMPLE = (("sweep", 0, "prev", "none"), ("held-out", HELD_OUT_SEED, "prev", "none"), ("text", "alibi", 0))

#: The largest difference allowed between a retrained headline row and its stored one, over every number it
#: keeps (accuracies, attention entropies in nats, weights, the final loss; the file rounds each to 4 decimals).
#: Measured on NoPE, "prev", seed 0 (all 99 numbers of the row, retrained from scratch):
#:   - in this process (XLA's multi-threaded Eigen), in a one-thread worker, and in a one-thread worker with
#:     XLA's code limited to AVX2 (``--xla_cpu_max_isa=AVX2``, the vector code of a CPU without AVX-512, like
#:     the machine where this check's issue was measured): each 0 from the file, to its 4 decimals;
#:   - a real change moves it much further: one step more (1,001) by 0.035 (the final loss; accuracies with
#:     log-n by up to 0.009), a learning rate of 3.3e-3 instead of 3e-3 by 1.0 (the previous-token head moved to
#:     another head; entropies by 0.05), another seed by 0.15 to 2.0 (seeds 1-4 of the file).
#: 2e-3 is 20 rounding steps of the file and 17 times smaller than the smallest real change measured.
ROW_TOLERANCE = 2e-3

#: The same for a text row (bits per character at L ... 16L, the loss by position, the final training loss;
#: the file rounds each to 5 decimals). Measured on ALiBi, seed 0 (518 numbers): in a one-thread worker and
#: with XLA limited to AVX2 the row is identical to itself and 1e-5 (one rounding step, in 21 of the 518
#: numbers) from the file, which the evaluation made before its last batch was padded to the batch's shape;
#: another seed moves it by 0.25. 2e-3 is 200 rounding steps and 120 times smaller than another seed.
TEXT_TOLERANCE = 2e-3


def stored_row(kind, *key) -> dict:
    """The row of ``key`` as its file stores it (JSON numbers, null for NaN), without its name."""
    if kind == "text":
        scheme, seed = key
        doc = json.loads(T.RESULTS_PATH.read_text())
        row = next(r for r in doc["rows"] if r["scheme"] == scheme and r["seed"] == seed)
        return {k: v for k, v in row.items() if k in ("bits", "by_position", "final_train_bits")}
    seed, task, scheme = key
    path = results.RESULTS_PATH if kind == "sweep" else results.HELD_OUT_PATH
    doc = json.loads(path.read_text())
    row = next(r for r in doc["rows"] if (r["seed"], r["task"], r["scheme"]) == (seed, task, scheme))
    return {k: v for k, v in row.items() if k not in ("seed", "task", "scheme")}


#: The rows `make test` retrains: none, to keep the test command in its budget (docs/PERFORMANCE.md); `make
#: test-all` retrains all three (marked `full`). `make test` keeps the checks below that the comparison can fail.
IN_TEST = ()


@pytest.fixture(scope="module")
def retrained():
    # a spawned one-thread worker even for one row (pool_map would run a single job in this process)
    return {job: _in_one_thread_worker(job) for job in IN_TEST}


def _in_one_thread_worker(job):
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from posenc_helpers.lab.pool import one_thread_worker

    with ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=one_thread_worker) as pool:
        return pool.submit(retrain, *job).result()


@pytest.mark.slow
@pytest.mark.parametrize("job", [pytest.param(job, marks=() if job in IN_TEST else pytest.mark.full) for job in SAMPLE],
                         ids=lambda job: "-".join(map(str, job)))
def test_a_retrained_row_matches_its_file(request, job):
    _stored_by_this_code(job[0])
    tolerance = TEXT_TOLERANCE if job[0] == "text" else ROW_TOLERANCE
    if job in IN_TEST:
        row = request.getfixturevalue("retrained")[job]
    else:
        row = _in_one_thread_worker(job)
    worst, where = largest_difference(row, stored_row(*job))
    assert worst <= tolerance, f"{job}: {where} moved by {worst:.3g} (tolerance {tolerance}); regenerate the files?"


@pytest.mark.parametrize("kind, task, scheme", [("sweep", "prev", "none"), ("sweep", "first", "rope")])
def test_the_check_tells_another_seed_from_the_stored_one(kind, task, scheme):
    # a row retrained with another seed differs from the stored one by far more than the tolerance
    worst, _ = largest_difference(stored_row(kind, 1, task, scheme), stored_row(kind, 0, task, scheme))
    assert worst > 10 * ROW_TOLERANCE


def test_the_check_tells_another_text_seed_from_the_stored_one():
    worst, _ = largest_difference(stored_row("text", "alibi", 1), stored_row("text", "alibi", 0))
    assert worst > 10 * TEXT_TOLERANCE


def _stored_by_this_code(kind):
    # a headline file computed by other row code cannot match a row retrained by this code: say so, do not compare
    if kind == "text":
        return
    path = results.RESULTS_PATH if kind == "sweep" else results.HELD_OUT_PATH
    stamp = json.loads(path.read_text()).get("stamp")
    if stamp != results.row_stamp():
        pytest.xfail(f"{path.name} was computed by other row code (stamp {stamp!r}, this code's {results.row_stamp()!r}): "
                     "the sweep is being re-scored by sequence (issue 43)")


def retrain_changed(change):
    """NoPE on "prev", seed 0, with one setting changed, as the sweep's row keeps it."""
    import os

    from lab_rows import kept

    from posenc_helpers import lab

    os.environ["POSENC_MODEL_CACHE"] = "off"
    run = lab.train("none", "prev", seed=0, progress=False, **change)
    entry = results.evaluate_run(run, seed=0, grid=False, tune=False)
    entry["final_loss"] = float(run.losses[-1])
    return results._clean(kept(entry, results.KEPT))


@pytest.mark.slow
@pytest.mark.full
@pytest.mark.parametrize("change", [{"steps": 1001}, {"lr": 3.3e-3}], ids=["one-step-more", "learning-rate"])
def test_the_check_catches_one_step_more_and_another_learning_rate(change):
    _stored_by_this_code("sweep")  # against a file of other code every row differs, which would prove nothing
    worst, where = largest_difference(retrain_changed(change), stored_row("sweep", 0, "prev", "none"))
    assert worst > 10 * ROW_TOLERANCE, (change, where, worst)
