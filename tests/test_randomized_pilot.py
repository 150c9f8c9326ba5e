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
        assert seed not in results.SEEDS and seed not in results.FORMER_HELD_OUT
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
    keys = [rp._key(x) for x in rows]
    assert len(keys) == len(set(keys))
    for x in rows:
        assert rp.on_ladder(rp.recipe_of(x))  # the first ladder's recipes are rungs the second can reach too
        assert x["scheme"] in {name for pair in rp.PAIRS for name in pair} and x["seed"] in rp.SEEDS
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


def test_the_length_sweep_trains_a_randomized_scheme_only_on_the_recipe_the_rule_decided():
    from posenc_helpers.lab import length_results

    # a recipe the length sweep trains on is the one the second rule chose; a scheme the rule has not decided is left
    # out, and its rows wait
    for rand, _ in rp.PAIRS:
        if rand in length_results.RANDOMIZED_RECIPE:
            assert length_results.RANDOMIZED_RECIPE[rand] == rp.length_options(rp.choose(rand))


def test_the_pilot_gives_every_model_a_fresh_spawned_worker(monkeypatch, tmp_path):
    from posenc_helpers.lab import pool

    asked = []

    def in_this_process(fn, jobs, *, workers=None, on_result=None, spawn=False, ordered=True, recycle=False):
        asked.append((spawn, recycle))
        for i, (scheme, task, seed, recipe) in enumerate(jobs):
            on_result(i, {**_rrow(scheme, task, recipe, seed, 1.0, 0.0), "seconds": 1})

    load = rp.load
    monkeypatch.setattr(pool, "pool_map", in_this_process)
    monkeypatch.setattr(rp, "PATH", tmp_path / "pilot.jsonl")
    monkeypatch.setattr(rp, "load", lambda path=None: load(tmp_path / "pilot.jsonl"))
    rp.run_missing(workers=1)
    assert asked and all(a == (True, True) for a in asked)
    # every model at the ceiling on the sweep's recipe: every scheme is decided on it, and a second round trains
    # the authors' arm, which the pilot trains whatever the ladder chooses
    assert len(asked) == 2 and all(rp.choose(rand) == rp.BASE for rand, _ in rp.PAIRS)
    assert all(len(rp.cells(rand, rp.AUTHORS_ARM)) == 6 for rand, _ in rp.PAIRS)


# ---- the second rule


def _rrow(scheme, task, recipe, seed, at_l, se, past=0.5):
    return {"scheme": scheme, "task": task, **recipe, "seed": seed, "lengths": list(rp.LENGTHS),
            "accuracy": [at_l, 0, 0, 0], "accuracy_se": [se, 0, 0, 0], "beyond": [None, 0, 0, past],
            "beyond_se": [None, 0, 0, 0]}


def _rung(scheme, recipe, at_l, se=0.0005, past=0.5):
    # every task and seed of a rung, at_l a number or {(task, seed): number}
    get = at_l if callable(at_l) else (lambda t, s: at_l)
    return [_rrow(scheme, t, recipe, s, get(t, s), se, past) for t in rp.TASKS for s in rp.SEEDS]


def _ceilings(at_l=1.0, se=0.0):
    return [r for _, plain in rp.PAIRS for r in _rung(plain, rp.BASE, at_l, se)]


def _with(recipe, **changes):
    return {**recipe, **changes}


def test_reaches_against_a_literal_bar():
    # the bar is the ceiling's: its value less 0.002 and 2 of its own SE, whatever the randomized model's noise
    for acc, top, top_se in [(0.997, 1.0, 0.0), (0.998, 1.0, 0.0), (0.9979, 1.0, 0.0), (0.995, 0.999, 0.001),
                             (0.99, 0.99, 0.0), (0.987, 0.99, 0.0), (1.0, 0.9, 0.05)]:
        bar = top - 0.002 - 2 * top_se
        assert rp.reaches(acc, top, top_se) == (acc >= bar - 1e-12), (acc, top, top_se)
    assert rp.NOISE_SE == 2.0 and rp.TOLERANCE == 0.002
    # a noisy randomized model gets no looser bar: rand_alibi's 0.9932 ± 0.0048 against a perfect ceiling misses
    assert not rp.reaches(0.9932, 1.0, 0.0)


def test_the_ladder_changes_one_factor_per_rung_towards_the_authors_recipe():
    assert rp.BASE == {"optimiser": "lab", "max_position": 2048, "curriculum": False, "batch": 32, "steps": 1000}
    assert rp.FACTORS == (("optimiser", "authors"), ("curriculum", True), ("batch", 128), ("steps", 3000),
                          ("steps", 6000))
    for k, v in rp.FACTORS:
        assert rp.on_ladder(_with(rp.BASE, **{k: v})) and v != rp.BASE[k]
    # every factor at its last value is the authors' arm; M is the authors' 2,048 throughout
    last = dict(rp.BASE)
    for k, v in rp.FACTORS:
        last[k] = v
    assert last == rp.AUTHORS_ARM and rp.AUTHORS_ARM["max_position"] == 2048
    assert not rp.on_ladder(_with(rp.BASE, batch=64)) and not rp.on_ladder(_with(rp.BASE, max_position=512))
    assert not rp.on_ladder({"batch": 32})


def test_fit_change_is_the_paired_mean_and_its_se_over_tasks_and_seeds():
    before = {("prev", 500): 0.990, ("prev", 501): 0.992, ("prev", 502): 0.991, ("first", 500): 1.0,
              ("first", 501): 0.99, ("first", 502): 1.0}
    after = {("prev", 500): 0.993, ("prev", 501): 0.992, ("prev", 502): 0.995, ("first", 500): 1.0,
             ("first", 501): 1.0, ("first", 502): 0.998}
    authors = _with(rp.BASE, optimiser="authors")
    rows = (_rung("rand_rope", rp.BASE, lambda t, s: before[(t, s)])
            + _rung("rand_rope", authors, lambda t, s: after[(t, s)]))
    d = [after[k] - before[k] for k in before]
    mean = sum(d) / 6
    se = (sum((x - mean) ** 2 for x in d) / 5) ** 0.5 / 6**0.5
    got = rp.fit_change("rand_rope", rp.BASE, authors, rows)
    assert got == pytest.approx((mean, se))


def test_choose_walks_the_ladder_keeping_the_authors_value_unless_it_clearly_lowers_the_fit():
    base = rp.BASE
    authors = _with(base, optimiser="authors")
    noisy = {("prev", 500): 0.0, ("prev", 501): 0.004, ("prev", 502): -0.003, ("first", 500): 0.0,
             ("first", 501): 0.0, ("first", 502): -0.002}
    rows = _ceilings() + _rung("rand_rope", base, 0.990)
    assert rp.choose("rand_rope", rows) is None  # the first rung has no rows yet
    assert rp.missing("rand_rope", rows)[:6] == [("rand_rope", t, s, authors) for t in rp.TASKS for s in rp.SEEDS]
    # the authors' optimiser misses the ceiling and changes the fit within its noise (−0.0002 ± 0.001): kept
    rows += _rung("rand_rope", authors, lambda t, s: 0.990 + noisy[(t, s)])
    curriculum = _with(authors, curriculum=True)
    assert rp.missing("rand_rope", rows)[0][3] == curriculum
    # the curriculum lowers the fit clearly (by 0.01 on every pair): dropped, batch 128 is tried without it
    rows += _rung("rand_rope", curriculum, lambda t, s: 0.980 + noisy[(t, s)])
    assert rp.missing("rand_rope", rows)[0][3] == _with(authors, batch=128)
    # batch 128 reaches the ceiling on every task and seed: the choice, and no dearer rung is trained
    rows += _rung("rand_rope", _with(authors, batch=128), 0.9995)
    assert rp.choose("rand_rope", rows) == _with(authors, batch=128)
    # ... but the authors' arm is, whatever the ladder chose
    assert rp.missing("rand_rope", rows) == [("rand_rope", t, s, rp.AUTHORS_ARM) for t in rp.TASKS for s in rp.SEEDS]
    rows += _rung("rand_rope", rp.AUTHORS_ARM, 0.97)
    assert rp.missing("rand_rope", rows) == [] and rp.choose("rand_rope", rows) == _with(authors, batch=128)
    # one seed short of the ceiling on one task is enough to miss it
    low = {("first", rp.SEEDS[1]): 0.99}
    rows2 = [r for r in rows if rp.recipe_of(r) != _with(authors, batch=128)]
    rows2 += _rung("rand_rope", _with(authors, batch=128), lambda t, s: low.get((t, s), 0.9995))
    assert rp.choose("rand_rope", rows2) is None
    assert rp.missing("rand_rope", rows2)[0][3] == _with(authors, batch=128, steps=3000)


def test_choose_reads_accuracy_at_l_only():
    rows = _ceilings() + _rung("rand_alibi", rp.BASE, 0.99, past=0.9)
    rows += _rung("rand_alibi", _with(rp.BASE, optimiser="authors"), 0.9995, past=0.1)
    again = [{**r, "beyond": [None, 0.7, 0.7, 0.99]} for r in rows]
    assert rp.choose("rand_alibi", rows) == rp.choose("rand_alibi", again) == _with(rp.BASE, optimiser="authors")


def test_with_every_factor_kept_and_no_rung_at_the_ceiling_the_choice_is_the_authors_arm():
    rows = _ceilings() + _rung("rand_learned", rp.BASE, 0.990)
    kept = dict(rp.BASE)
    for k, v in rp.FACTORS:
        kept = _with(kept, **{k: v})
        rows += _rung("rand_learned", kept, 0.990)  # no change: every factor kept
    assert kept == rp.AUTHORS_ARM
    assert rp.choose("rand_learned", rows) == rp.AUTHORS_ARM and rp.missing("rand_learned", rows) == []


def test_before_the_sweeps_recipe_is_in_only_its_rows_are_asked_for():
    jobs = rp.missing("rand_sinusoidal", [])
    assert {j[3]["optimiser"] for j in jobs} == {"lab"} and {j[0] for j in jobs} == {"rand_sinusoidal", "sinusoidal"}
    assert len(jobs) == 2 * len(rp.TASKS) * len(rp.SEEDS)


def test_a_rule_of_the_first_ladder_reads_none_of_the_second_s_rows():
    base = rp.RECIPES[0]
    rows = [_row(p, t, base, s, 1.0, 0.0) for _, p in rp.PAIRS for t in rp.TASKS for s in rp.SEEDS]
    before = rp.verdict(rows)
    rows += _rung("rand_rope", _with(rp.BASE, optimiser="authors"), 0.5)
    assert rp.verdict(rows) == before


def test_length_options_name_only_what_differs_from_the_lab_s():
    assert rp.length_options(rp.BASE) == {"batch": 32, "steps": 1000, "curriculum": False}
    assert rp.length_options(rp.AUTHORS_ARM) == {"batch": 128, "steps": 6000, "curriculum": True,
                                                 "optimiser": "authors"}


def test_the_pilot_trains_the_ladder_rung_by_rung_and_the_authors_arm_last(monkeypatch, tmp_path):
    from posenc_helpers.lab import pool

    rounds = []

    def in_this_process(fn, jobs, *, workers=None, on_result=None, spawn=False, ordered=True, recycle=False):
        rounds.append({(job[0], rp._rkey(job[3])) for job in jobs})
        for i, (scheme, task, seed, recipe) in enumerate(jobs):
            at_l = 1.0 if scheme in dict(rp.PAIRS).values() else 0.99  # no randomized model reaches the ceiling
            on_result(i, {**_rrow(scheme, task, recipe, seed, at_l, 0.0), "seconds": 1})

    load = rp.load
    monkeypatch.setattr(pool, "pool_map", in_this_process)
    monkeypatch.setattr(rp, "PATH", tmp_path / "pilot.jsonl")
    monkeypatch.setattr(rp, "load", lambda path=None: load(tmp_path / "pilot.jsonl"))
    rp.run_missing(workers=1)
    # the sweep's recipe, then one rung per round (no change in fit: every factor kept), the last rung the arm
    assert len(rounds) == 1 + len(rp.FACTORS)
    arm = rp._rkey(rp.AUTHORS_ARM)
    assert all(arm not in {r for _, r in round_} for round_ in rounds[:-1])
    assert {r for _, r in rounds[-1]} == {arm}
    assert all(rp.choose(rand) == rp.AUTHORS_ARM for rand, _ in rp.PAIRS)
