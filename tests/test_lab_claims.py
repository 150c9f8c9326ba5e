"""The seed test: every claim notebooks 12 and 13 assert, on every seed of the shipped sweeps and on held-out seeds.

The claims live in :mod:`posenc_helpers.lab.claims`, each a sentence and its
check on one seed's numbers. The fast tests check them on the shipped files
(the sweep's seeds), that each claim can fail, and that each holds on the
held-out seeds of the ledger's check of claims.py (issue 43: seeds derived
from its hash, used by no notebook and no sweep, :func:`results.ledger_check`),
whose rows ``make lab-heldout`` trains with the sweeps' own functions and
stores in ``results_heldout.json``. Until the ledger holds a check of
claims.py as it is now, the held-out tests are expected failures. That the stored rows are what the code
trains is checked in every run on a sample (tests/test_lab_reproduce.py), and
in full by the test marked ``full`` here (``make test-all``), which retrains
every held-out row, compares what training decides (the final loss, the
accuracy at L) with the file and checks the claims on the fresh rows (see
``IN_DISTRIBUTION`` for why not every number). If a claim fails for one seed here, the notebooks' prose is not
robust and must change.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from posenc_helpers.lab import claims, ledger, results, stats


@pytest.fixture(scope="module")
def sweep():
    return results.load()


@pytest.fixture(scope="module")
def extra():
    return results.load_extra()


def test_the_files_hold_their_seeds_and_no_held_out_seed(sweep, extra):
    assert sweep["seeds"] == results.SEEDS and len(results.SEEDS) >= 20  # issue 26: at least 20 seeds
    assert extra["seeds"] == results.EXTRA_SEEDS and len(results.EXTRA_SEEDS) >= 8  # and 8 for the extra tasks
    assert set(results.EXTRA_SEEDS) <= set(results.SEEDS)
    assert results.HELD_OUT_SEEDS >= 5  # issue 43: at least 5 held-out seeds per sweep
    seen = {s for e in ledger.entries("claims") for s in e["seeds"]}  # every seed a check of claims.py ran on
    assert not seen & (set(results.SEEDS) | set(results.EXTRA_SEEDS))
    assert not set(results.FORMER_HELD_OUT) & seen  # a former held-out seed (11 and 12 joined the sweep) is never drawn


def _holds_what_this_release_computes(head, more):
    # what a full sweep computes (results.evaluate_run); results.add_rows added it to the older rows: iRoPE with
    # its other masks, the s = 8 fine-tunes
    keys = {key for key, _, _ in results.FINETUNE_SETTINGS}
    for (seed, task, scheme), row in head.items():
        if scheme == "irope":
            assert set(row["masks"]) == set(results.IROPE_MASKS), (seed, task)
        if scheme == "rope":
            assert set(row["finetune"]) == keys, (seed, task)
    for (seed, task, scheme), row in more.items():
        if (task, scheme) == ("recall", "rope"):
            assert set(row["finetune"]) == keys, (seed, task)


def test_the_files_hold_what_this_release_computes_for_every_row(sweep, extra):
    # and the factor grid past L, which only the sweep's rows keep
    _holds_what_this_release_computes(sweep["table"], extra["table"])
    for (seed, task, scheme), row in sweep["table"].items():
        if scheme == "rope":
            grid = row["grid_beyond"]
            assert set(grid) == set(results.SCALINGS) and all(g.shape == (8, 8) for g in grid.values()), (seed, task)
            assert all(np.isnan(g[:, 0]).all() and not np.isnan(g[:, 1:]).any() for g in grid.values())
            # at s = 1 every method is plain RoPE: the three grids' first rows agree (measured: exactly), and
            # they are the row's own accuracy past L measured on the grid's 64 test sequences instead of its 256,
            # so they agree with it within 4 SEs of the difference. The per-sequence spread comes from the row's
            # SE over 256 sequences: over 64 the SE is twice that, and the difference's SE is √(2² + 1) times it
            # (measured on 17 seeds: at most 1.9 such SEs)
            firsts = np.array([g[0, 1:] for g in grid.values()])
            np.testing.assert_allclose(firsts, np.broadcast_to(firsts[0], firsts.shape), atol=3e-4)
            se = np.sqrt(5) * np.asarray(row["beyond_se"][1:], dtype=float)
            assert (np.abs(firsts[0] - row["beyond"][1:]) <= 4 * se + 1e-4).all(), (seed, task)


@pytest.mark.parametrize("group", sorted(claims.groups()))
def test_every_claim_holds_on_every_seed_of_the_files(sweep, extra, group):
    table = claims.check_files(group, sweep, extra)
    assert not claims.failures(table), claims.report(table)


@pytest.mark.parametrize("group", sorted(claims.groups()))
def test_every_claim_can_fail(sweep, extra, group):
    # every claim fails on at least one of four made-up seeds built from seed 0's numbers:
    # every number 1, every number 0, every number x replaced by 1 - x, every number random
    views = claims.views(sweep, extra, seeds=(0,))[0]
    never_fail = [
        c.text for c in claims.groups()[group] if all(c.holds(v) for v in claims.made_up(views))
    ]
    assert not never_fail, never_fail


def _views_by_seed(sweep, extra, group):
    seeds = (extra if group == "12 extra" else sweep)["seeds"]
    return dict(zip(seeds, claims.views(sweep, extra, seeds=seeds), strict=True))


#: A claim about accuracies clears its worst seed by this many binomial standard errors of the evaluation
#: (issue 26: the SE at most a quarter of the margin); a claim about a number with no binomial error (an
#: attention weight, an entropy, a cosine) by at least NO_SE_MARGIN.
MIN_RATIO = 4
NO_SE_MARGIN = 0.04


@pytest.mark.parametrize("group", sorted(claims.groups()))
def test_every_claim_clears_its_evaluation_noise_on_the_sweep(sweep, extra, group):
    table = claims.margins(claims.groups()[group], _views_by_seed(sweep, extra, group))
    thin = {
        text: m for text, m in table.items()
        if m["margin"] is not None and (m["ratio"] < MIN_RATIO if m["ratio"] is not None else m["margin"] < NO_SE_MARGIN)
    }
    assert not thin, claims.margin_report(thin)


@pytest.mark.parametrize("group", sorted(claims.over_seeds()))
def test_every_spread_and_share_holds_over_the_sweep(sweep, extra, group):
    views = _views_by_seed(sweep, extra, group)
    assert all(claims.check_over(claims.over_seeds()[group], views).values()), [
        (st.text, st.margin(views)) for st in claims.over_seeds()[group]
    ]


@pytest.mark.parametrize("group", sorted(claims.over_seeds()))
def test_every_spread_and_share_can_fail(sweep, extra, group):
    # each fails over three copies of one of the made-up seeds (all ones, all zeros, 1 - x, random)
    made = claims.made_up(claims.views(sweep, extra, seeds=(0,))[0])
    never_fail = [st.text for st in claims.over_seeds()[group] if all(st.holds_over([v] * 3) for v in made)]
    assert not never_fail, never_fail


def test_the_spread_check_covers_every_group():
    assert set(claims.over_seeds()) == set(claims.groups())


#: The groups the held-out seeds check: every claim of notebooks 12 and 13, the extra tasks' too.
HELD_OUT_GROUPS = ("12", "12 scaling", "12 fine-tune", "12 extra", "13")


def test_the_held_out_check_covers_every_group():
    assert set(HELD_OUT_GROUPS) == set(claims.groups())


def test_held_out_sweep_runs_both_sweeps_rows_in_one_pool(monkeypatch):
    # one pool for the headline and the extra rows, RoPE's first; every row lands in its own table
    calls = []

    def fake_pool_map(fn, jobs, *, workers=None):
        calls.append(jobs)
        return list(jobs)

    checked = []
    monkeypatch.setattr(results, "pool_map", fake_pool_map)
    monkeypatch.setattr(results, "_check_stamp", lambda doc, path: checked.append(path))  # the stored files' code
    head, more = results.held_out_sweep((11, 12))
    assert checked == [results.RESULTS_PATH, results.EXTRA_PATH]  # both sweeps' files are checked first
    (jobs,) = calls
    assert len(jobs) == 8 * len(results.ROWS)  # both sweeps train every row, the other iRoPE chunks included
    assert [job[3] for job in jobs[:8]] == ["rope"] * 8 and "rope" not in [job[3] for job in jobs[8:]]
    assert set(head) == {(s, t, m) for s in (11, 12) for t in results.TASKS for m in results.ROWS}
    assert set(more) == {(s, t, m) for s in (11, 12) for t in results.EXTRA_BUDGETS for m in results.ROWS}
    assert all(head[k] == ("sweep", *k) for k in head) and all(more[k] == ("extra", *k) for k in more)


@pytest.fixture(scope="module")
def checked():
    """The ledger's last check of claims.py, which must be of claims.py as it is now: its seeds are the held-out ones.

    Until it exists, an expected failure, the state tests/test_lab_ledger.py marks with NOT_YET_CHECKED.
    """
    digest = stats.source_hash(results.CLAIMS_SOURCE)
    mine = ledger.entries("claims")
    if not mine or mine[-1]["hash"] != digest:
        pytest.xfail(f"issue 43: the ledger holds no check of claims.py at its hash {digest[:12]}… yet: its held-out "
                     "seeds, drawn from that hash, are trained after the claims' commit and checked by make lab-heldout "
                     "(results.ledger_check), which appends the entry when every row is in")
    return mine[-1]


@pytest.fixture(scope="module")
def held_out(checked):
    return results.load_held_out()


def test_the_held_out_file_holds_every_row_of_the_held_out_seeds_only(checked, held_out):
    # exactly the ledger's seeds, every row of them, computed by this code's rows for this claims.py
    head, more = held_out
    seeds = tuple(checked["seeds"])
    assert head["seeds"] == more["seeds"] == seeds
    assert head["stamp"] == results.row_stamp(), "results_heldout.json was computed by other row code"
    assert head["hash"] == checked["hash"] and head["drawn"] == checked["drawn"]
    assert set(head["table"]) == {(s, t, m) for s in seeds for t in results.TASKS for m in results.ROWS}
    assert set(more["table"]) == {(s, t, m) for s in seeds for t in results.EXTRA_BUDGETS for m in results.ROWS}
    _holds_what_this_release_computes(head["table"], more["table"])


@pytest.mark.parametrize("group", HELD_OUT_GROUPS)
def test_every_claim_holds_on_the_held_out_seeds(checked, held_out, group):
    sweep, extra = held_out
    table = claims.check_files(group, sweep, extra, seeds=checked["seeds"])
    assert not claims.failures(table), claims.report(table)


@pytest.mark.parametrize("group", HELD_OUT_GROUPS)
def test_every_spread_and_share_holds_over_the_sweep_with_the_held_out_seeds(sweep, extra, checked, held_out, group):
    head, more = held_out
    both = {**sweep, "table": {**sweep["table"], **head["table"]}}
    both_extra = {**extra, "table": {**extra["table"], **more["table"]}}
    seeds = [*(extra if group == "12 extra" else sweep)["seeds"], *checked["seeds"]]
    table = claims.check_over_files(group, both, both_extra, seeds=seeds)
    assert all(table.values()), table


@pytest.fixture(scope="module")
def retrained_held_out(checked):
    # held_out_sweep refuses a results file computed by other row code: while the sweep is re-scored (issue 43), an
    # expected failure that names both stamps, not an error
    stamp = json.loads(results.RESULTS_PATH.read_text()).get("stamp")
    if stamp != results.row_stamp():
        pytest.xfail(f"results.json was computed by other row code (stamp {stamp!r}, this code's {results.row_stamp()!r}): "
                     "the sweep is being re-scored by sequence (issue 43)")
    head, more = results.held_out_sweep(checked["seeds"])
    sweep = {"table": head, "lengths": np.array(results.SWEEP_LENGTHS)}
    extra = {"table": more, "lengths": np.array(results.EXTRA_LENGTHS)}
    return sweep, extra


#: What a held-out row, retrained on another machine, reproduces. Measured on 2026-12-02: the 56 rows of
#: results_heldout.json retrained on a second machine (the file was made on another). Every row's final
#: training loss came back within 1e-4 of the file and its accuracy at L identical, so training reproduces. Nine
#: rows' numbers far outside training did not: accuracy past L by up to 0.05 (sinusoidal on back3, near
#: chance), the attention of heads the task leaves free by up to 0.28 in weight and 0.56 nats in entropy
#: (ALiBi and NoPE on "first"), while every claim of 12 and 13 held on the fresh rows. So the retrained rows
#: are held digit by digit where training decides them, and through the claims everywhere else. This catches a
#: change to training on every row whose loss has not saturated; it does not tell seeds apart on a saturated task
#: (back3 with the learned table: the former held-out seeds 11 and 12 stored the same loss and accuracy at L).
#: The reproduction check of every run (tests/test_lab_reproduce.py) holds its sample rows, which did reproduce,
#: in every number.
IN_DISTRIBUTION = ("final_loss", "accuracy at L")


def _in_distribution(entry) -> dict:
    return {"final_loss": entry["final_loss"], "accuracy at L": np.asarray(entry["accuracy"], dtype=float)[:1]}


@pytest.mark.slow
@pytest.mark.full
def test_the_held_out_rows_retrain_to_the_file_and_every_claim_holds_on_them(checked, retrained_held_out, held_out):
    from lab_rows import largest_difference, same_machine, say_another_machine, within_spread
    from test_lab_reproduce import ROW_TOLERANCE

    exact, reason = same_machine(results.HELD_OUT_PATH)
    if not exact:
        say_another_machine("results_heldout.json", reason)
    sweeps = (results.load(), results.load_extra())
    for fresh, stored, sweep in zip(retrained_held_out, held_out, sweeps, strict=True):
        for key, entry in fresh["table"].items():
            got = _in_distribution(results._clean({k: v for k, v in entry.items() if k in results.KEPT}))
            want = _in_distribution(results._clean(stored["table"][key]))
            if exact:
                worst, where = largest_difference(got, want)
                assert worst <= ROW_TOLERANCE, f"{key}: {where} moved by {worst:.3g}; regenerate with make lab-heldout?"
                continue
            # another machine: what training decides lies within the sweep's spread over its seeds
            others = [_in_distribution(results._clean(sweep["table"][(s, *key[1:])])) for s in sweep["seeds"]]
            for name in IN_DISTRIBUTION:
                value = float(np.ravel(got[name])[0])
                assert within_spread(value, [float(np.ravel(o[name])[0]) for o in others]), (key, name, value)
    for group in HELD_OUT_GROUPS:
        table = claims.check_files(group, *retrained_held_out, seeds=checked["seeds"])
        assert not claims.failures(table), claims.report(table)
