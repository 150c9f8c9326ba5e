"""The sweeps' worker pool: results in job order, one XLA thread per worker, the same numbers as in-process."""

from __future__ import annotations

import os

import numpy as np

from posenc_helpers.lab import results


def test_pool_map_keeps_job_order_and_reports_each_result():
    seen = []
    out = results.pool_map(pow, [(2, 3), (3, 2), (5, 1)], workers=2, on_result=lambda i, r: seen.append((i, r)))
    assert out == [8, 9, 5]
    assert seen == [(0, 8), (1, 9), (2, 5)]


def test_each_worker_runs_xla_with_one_thread():
    flags = results.pool_map(os.getenv, [("XLA_FLAGS",), ("XLA_FLAGS",)], workers=2)
    assert all(results.XLA_ONE_THREAD in f for f in flags)


def test_a_sweep_in_the_pool_matches_one_in_this_process():
    kw = {"seeds": (0,), "tasks": ("prev",), "schemes": ("alibi", "none"), "steps": 50}
    pooled = results.sweep(workers=2, **kw)
    local = results.sweep(workers=1, **kw)
    assert pooled.keys() == local.keys() == {(0, "prev", "alibi"), (0, "prev", "none")}
    for key in local:
        for name in ("accuracy", "beyond"):
            np.testing.assert_allclose(pooled[key][name], local[key][name], atol=0.01)
