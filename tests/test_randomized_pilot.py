"""tools/randomized_pilot.py: its jobs, its verdict rule (against a literal recount), and its committed rows."""

import math

import pytest

from tools import randomized_pilot as rp


def _row(scheme, task, recipe, seed, at_l, se, past=0.5):
    batch, steps, curriculum = recipe
    return {"scheme": scheme, "task": task, "batch": batch, "steps": steps, "curriculum": curriculum, "seed": seed,
            "lengths": list(rp.LENGTHS), "accuracy": [at_l, 0, 0, 0], "accuracy_se": [se, 0, 0, 0],
            "beyond": [None, 0, 0, past], "beyond_se": [None, 0, 0, 0]}


def test_jobs_train_the_plain_schemes_only_on_the_sweeps_recipe():
    jobs = rp.jobs()
    assert len(jobs) == len(set(jobs))
    plains = {plain for _, plain in rp.PAIRS}
    for scheme, task, batch, steps, curriculum, seed in jobs:
        assert task in rp.TASKS and seed in rp.SEEDS
        if scheme in plains:
            assert (batch, steps, curriculum) == rp.RECIPES[0]
    # every randomized scheme on every recipe, task and seed; each plain scheme once per task and seed
    assert len(jobs) == len(rp.PAIRS) * len(rp.TASKS) * len(rp.SEEDS) * (len(rp.RECIPES) + 1)


def test_pilot_seeds_are_no_sweeps_and_no_held_out_draw():
    from posenc_helpers.lab import length_results, results

    for seed in rp.SEEDS:
        assert not 1000 <= seed <= 9999  # stats.held_out_seeds draws from 1,000-9,999
        assert seed not in results.SEEDS and seed not in results.HELD_OUT
        assert seed not in length_results.SEEDS


def test_verdict_counts_against_a_literal_recount():
    base, fast = rp.RECIPES[0], rp.RECIPES[1]
    rows = [
        _row("alibi", "prev", base, 500, 0.999, 0.0005),
        _row("alibi", "prev", base, 501, 0.997, 0.001),  # the plain ceiling is the lowest: 0.997
        _row("rand_alibi", "prev", fast, 500, 0.996, 0.001),  # 0.996 >= 0.997 - 0.002: reached
        _row("rand_alibi", "prev", fast, 501, 0.990, 0.05),  # 0.990 < 0.995: not reached, however noisy
        _row("rand_alibi", "prev", fast, 502, 0.9955, 0.0001),  # 0.9955 >= 0.995: reached, however precise
    ]
    v = rp.verdict(rows)[("rand_alibi", "prev", fast)]
    ceiling = min(0.999, 0.997)
    literal = sum(a >= ceiling - 0.002 for a in (0.996, 0.990, 0.9955))
    assert rp.TOLERANCE == 0.002
    assert v["ceiling"] == ceiling and v["of"] == 3 and v["reached"] == literal == 2
    # a recipe with no rows yet counts 0 of 0, and a task with no plain rows has no ceiling
    assert rp.verdict(rows)[("rand_alibi", "prev", rp.RECIPES[2])]["of"] == 0
    assert math.isnan(rp.verdict(rows)[("rand_alibi", "first", fast)]["ceiling"])


@pytest.mark.skipif(not rp.PATH.exists(), reason="no pilot rows committed yet")
def test_committed_rows_are_the_pilots_jobs_once_each():
    rows = rp.load()
    keys = [(x["scheme"], x["task"], x["batch"], x["steps"], x["curriculum"], x["seed"]) for x in rows]
    assert len(keys) == len(set(keys))
    assert set(keys) <= set(rp.jobs())
    for x in rows:
        assert x["lengths"] == list(rp.LENGTHS)
        assert 0 <= x["accuracy"][0] <= 1 and 0 <= x["accuracy_se"][0] < 0.5
        assert len(x["code_commit"]) == 40


def test_recipe_for_is_the_cheapest_recipe_every_seed_passes_on_every_task():
    base, fast, slow = rp.RECIPES
    rows = [_row(plain, task, base, seed, 1.0, 0.0) for _, plain in rp.PAIRS for task in rp.TASKS for seed in rp.SEEDS]
    # rand_alibi: the fast recipe misses on one seed of first, the slow one passes everywhere
    for task in rp.TASKS:
        for seed in rp.SEEDS:
            miss = task == "first" and seed == rp.SEEDS[0]
            rows.append(_row("rand_alibi", task, fast, seed, 0.9 if miss else 1.0, 0.01))
            rows.append(_row("rand_alibi", task, slow, seed, 1.0, 0.0))
    assert rp.recipe_for("rand_alibi", rows) == slow
    assert rp.recipe_for("rand_rope", rows) is None  # no rows: nothing is chosen


def test_decided_waits_only_while_a_row_to_come_can_change_the_choice():
    base, fast, slow = rp.RECIPES
    plain = [_row(p, task, base, seed, 1.0, 0.0) for _, p in rp.PAIRS for task in rp.TASKS for seed in rp.SEEDS]
    # the sweep's recipe: one seed of prev below the ceiling, so it has failed however the other rows come out
    failed = plain + [_row("rand_rope", "prev", base, rp.SEEDS[0], 0.9, 0.01)]
    assert rp.decided("rand_rope", failed) is None  # the fast recipe has no rows yet: it may still pass
    # the fast recipe passing on every seed and task is the choice, with the slow one never trained
    passing = failed + [_row("rand_rope", t, fast, s, 1.0, 0.0) for t in rp.TASKS for s in rp.SEEDS]
    assert rp.decided("rand_rope", passing) == rp.recipe_for("rand_rope", passing) == fast
    # the fast recipe, half trained and all at the ceiling so far: still open
    half = failed + [_row("rand_rope", "prev", fast, s, 1.0, 0.0) for s in rp.SEEDS]
    assert rp.decided("rand_rope", half) is None
    # the fast recipe failing too: the rule takes the slow one, with none of its rows in, and whatever they say
    both = half + [_row("rand_rope", "first", fast, rp.SEEDS[1], 0.95, 0.01)]
    assert rp.decided("rand_rope", both) == slow and rp.recipe_for("rand_rope", both) is None
    assert rp.decided("rand_rope", both + [_row("rand_rope", "prev", slow, 500, 0.5, 0.01)]) == slow


@pytest.mark.skipif(not rp.PATH.exists(), reason="no pilot rows committed yet")
def test_the_length_sweep_trains_a_randomized_scheme_only_on_the_recipe_the_rule_decided():
    from posenc_helpers.lab import length_results

    # a recipe the length sweep trains on is the one the rule decided; a scheme the rule has not decided (or whose
    # decision a review sent back to the pilot) is left out, and its rows wait
    for rand, _ in rp.PAIRS:
        if rand in length_results.RANDOMIZED_RECIPE:
            batch, steps, curriculum = rp.decided(rand)
            assert length_results.RANDOMIZED_RECIPE[rand] == {"batch": batch, "steps": steps, "curriculum": curriculum}


def test_the_pilot_gives_every_model_a_fresh_spawned_worker(monkeypatch, tmp_path):
    from posenc_helpers.lab import pool

    asked = []

    def in_this_process(fn, jobs, *, workers=None, on_result=None, spawn=False, ordered=True, recycle=False):
        asked.append((spawn, recycle))
        for i, (scheme, task, batch, steps, curriculum, seed) in enumerate(jobs):
            on_result(i, {**_row(scheme, task, (batch, steps, curriculum), seed, 1.0, 0.0), "seconds": 1})

    monkeypatch.setattr(pool, "pool_map", in_this_process)
    monkeypatch.setattr(rp, "PATH", tmp_path / "pilot.jsonl")
    monkeypatch.setattr(rp, "load", lambda: [])  # nothing trained yet: every recipe has jobs
    rp.run_missing(workers=1)
    assert asked and all(a == (True, True) for a in asked)
