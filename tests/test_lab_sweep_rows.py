"""The headline sweep's rows scored by sequence (issue 43 §1, §3): each accuracy with its SE over the test
sequences, iRoPE trained with chunks shorter than L, a stamp that names the row code, and partial rows kept where a
commit carries them."""

import json

import numpy as np
import pytest

from posenc_helpers.lab import results
from posenc_helpers.lab.evaluate import evaluate_cells
from posenc_helpers.lab.train import finetune, train

TINY = dict(train_len=8, d_model=16, heads=2, layers=2, steps=3, progress=False)
LENGTHS = [8, 16, 24]


def test_each_row_trains_its_scheme_with_its_chunk():
    assert results.model_of("rope") == ("rope", {})
    # chunks of L/4, L/2 and L (the ablation), and Llama 4's floor_scale = chunk for the NoPE layer's temperature
    assert results.model_of("irope") == ("irope", {"rope_window": 8, "floor_scale": 8})
    assert results.model_of("irope_w16") == ("irope", {"rope_window": 16, "floor_scale": 16})
    assert results.model_of("irope_w32") == ("irope", {"rope_window": 32, "floor_scale": 32})
    assert set(results.ROWS) == set(results.SCHEMES) | {"irope_w16", "irope_w32"}
    with pytest.raises(ValueError, match="row must be one of .* got 'irope_w8'"):
        results.model_of("irope_w8")


@pytest.fixture(scope="module")
def rope_run():
    return train("rope", "prev", seed=0, **TINY)


def test_every_accuracy_of_a_row_is_evaluate_cells_with_its_se(rope_run):
    row = results.evaluate_run(rope_run, seed=0, lengths=LENGTHS, grid=False, tune=False)
    whole = evaluate_cells(rope_run, LENGTHS, seed=0)
    for k in ("accuracy", "accuracy_se", "beyond", "beyond_se"):
        np.testing.assert_array_equal(row[k], whole[k])
    # the numbers past L are scored at the lengths past L only, NaN at L
    logn = evaluate_cells(rope_run, LENGTHS[1:], seed=0, logn=True)
    np.testing.assert_array_equal(row["logn"], np.r_[np.nan, logn["beyond"]])
    np.testing.assert_array_equal(row["logn_se"], np.r_[np.nan, logn["beyond_se"]])
    ntk = evaluate_cells(rope_run, LENGTHS[1:], seed=0, method="ntk")
    np.testing.assert_array_equal(row["scaled"]["ntk"], np.r_[np.nan, ntk["beyond"]])
    np.testing.assert_array_equal(row["scaled_se"]["ntk"], np.r_[np.nan, ntk["beyond_se"]])
    assert set(row["scaled"]) == set(row["scaled_se"]) == {"pi", "ntk", "yarn", "yarn_llama"}
    # an SE over 256 sequences: positive where the score is strictly between 0 and 1
    inside = (row["beyond"] > 0) & (row["beyond"] < 1)
    assert (row["beyond_se"][inside] > 0).all()


def test_attention_and_head_numbers_carry_their_se(rope_run):
    from posenc_helpers.lab.evaluate import attention_entropy, attention_to_first

    out = results.attention_numbers(rope_run, seed=0)
    T = out["lengths"][1]  # a length past L: the queries past L
    row = out["none"][1]
    np.testing.assert_allclose(row["entropy"], attention_entropy(rope_run, T, seed=0)["entropy"], rtol=1e-6)
    np.testing.assert_allclose(row["to_first"], attention_to_first(rope_run, T, seed=0), rtol=1e-6)
    assert row["entropy_se"].shape == row["entropy"].shape and (row["entropy_se"] > 0).all()
    assert row["to_first_se"].shape == row["to_first"].shape and (row["to_first_se"] >= 0).all()
    head = results.head_numbers(rope_run)
    assert len(head["one_back"]) == len(head["one_back_se"]) == 2 and all(se >= 0 for se in head["one_back_se"])
    assert 0 <= head["fast_share"] <= 1 and head["fast_share_se"] >= 0


def test_a_fine_tune_is_also_scored_past_its_own_length(rope_run):
    out = results.finetuned(rope_run, seed=0, lengths=[8, 32, 40], keys=("none",))
    cell = out["none"]["25"]
    assert set(cell) == {"accuracy", "accuracy_se", "beyond", "beyond_se", "tuned", "tuned_se"}
    # the fine-tune is at 4L = 32: "tuned" is NaN up to it and a score past it
    assert np.isnan(cell["tuned"][:2]).all() and 0 <= cell["tuned"][2] <= 1
    ft = finetune(rope_run, length=32, method=None, steps=25, seed=0, progress=False)
    np.testing.assert_array_equal(cell["tuned"], evaluate_cells(ft, [8, 32, 40], seed=0)["tuned"])


def test_an_irope_row_keeps_each_mask_with_its_se():
    run = train("irope", "prev", seed=0, rope_window=2, **TINY)
    row = results.evaluate_run(run, seed=0, lengths=LENGTHS, grid=False, tune=False)
    assert set(row["masks"]) == set(row["masks_se"]) == set(results.IROPE_MASKS)
    assert np.isnan(row["masks"]["full"][0]) and np.isfinite(row["masks_se"]["full"][1:]).all()


def test_the_stamp_names_the_row_code(monkeypatch):
    stamp = results.row_stamp()
    assert len(stamp) == 16 and stamp == results.row_stamp()
    monkeypatch.setattr(results, "GRID_SEQUENCES", 32)
    assert results.row_stamp() != stamp
    monkeypatch.undo()
    monkeypatch.setattr(results, "_ROW_CODE", results._ROW_CODE[:-1])  # one function fewer hashed
    assert results.row_stamp() != stamp


def test_rows_are_never_mixed_into_a_file_of_other_row_code(tmp_path):
    doc = json.loads(results.RESULTS_PATH.read_text())
    if doc.get("stamp") == results.row_stamp():
        pytest.skip("the stored sweep is this code's: nothing to refuse")
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(RuntimeError, match=r"results.json was computed by other row code .*regenerate it"):
        results.grow([12345], path=path)


def test_a_kept_sweep_resumes_from_its_partial_file(tmp_path, monkeypatch):
    calls = []

    def fake_row(seed, task, name, steps, grid, tune):
        calls.append((seed, task, name))
        return {"accuracy": [0.5], "final_loss": 1.0, "train_seconds": 0.0, "eval_seconds": 0.0, "machine": {"cpu": 1}}

    from posenc_helpers.lab import pool

    spawned = []

    def in_this_process(fn, jobs, *, workers=None, on_result=None, spawn=False, ordered=True, recycle=False):
        # the kept sweep asks for spawned workers; the stand-in row runs here (it cannot cross to a worker)
        spawned.append((spawn, recycle))
        for i, job in enumerate(jobs):
            on_result(i, fn(*job))

    monkeypatch.setattr(results, "PARTIALS", tmp_path)
    monkeypatch.setattr(results, "_stored_row", fake_row)
    monkeypatch.setattr(pool, "pool_map", in_this_process)
    kw = dict(tasks=("prev",), schemes=("alibi", "rope"), workers=1, keep=True)
    first = results.sweep((0,), **kw)
    assert calls == [(0, "prev", "alibi"), (0, "prev", "rope")]
    files = list(tmp_path.glob("results-*.jsonl"))
    assert [f.name for f in files] == [f"results-{results.row_stamp()}.jsonl"]
    assert len(files[0].read_text().splitlines()) == 2
    again = results.sweep((0, 1), **kw)  # seed 0 read back, only seed 1 trained
    assert calls[2:] == [(1, "prev", "alibi"), (1, "prev", "rope")]
    np.testing.assert_array_equal(again[(0, "prev", "rope")]["accuracy"], first[(0, "prev", "rope")]["accuracy"])
    assert again[(0, "prev", "rope")]["machine"] == {"cpu": 1}  # each kept row names the machine that computed it
    assert results._machines(again) == [{"cpu": 1}]
    assert spawned == [(True, True), (True, True)]  # every kept row in a fresh one-thread worker, even the last alone


def test_one_job_can_be_sent_to_a_spawned_worker():
    import os

    from posenc_helpers.lab.pool import pool_map

    assert pool_map(os.getpid, [()], workers=1) == [os.getpid()]  # one job, no spawn: this process
    (pid,) = pool_map(os.getpid, [()], workers=1, spawn=True)
    assert pid != os.getpid()


def test_a_kept_extra_run_resumes_from_its_own_partial_file(tmp_path, monkeypatch):
    from posenc_helpers.lab import pool

    calls = []

    def fake_row(seed, task, name):
        calls.append((seed, task, name))
        return {"accuracy": [0.25], "final_loss": 2.0, "machine": {"cpu": 2}}

    def in_this_process(fn, jobs, *, workers=None, on_result=None, spawn=False, ordered=True, recycle=False):
        assert spawn and recycle  # a kept row is computed in a fresh spawned one-thread worker
        for i, job in enumerate(jobs):
            on_result(i, fn(*job))

    monkeypatch.setattr(results, "PARTIALS", tmp_path)
    monkeypatch.setattr(results, "_stored_extra_row", fake_row)
    monkeypatch.setattr(pool, "pool_map", in_this_process)
    kw = dict(tasks=("recall",), schemes=("alibi",), workers=1, keep=True)
    results.extra_sweep((0,), **kw)
    table = results.extra_sweep((0, 1), **kw)  # seed 0 read back
    assert calls == [(0, "recall", "alibi"), (1, "recall", "alibi")]
    assert [f.name for f in tmp_path.glob("*.jsonl")] == [f"results-extra-{results.row_stamp()}.jsonl"]
    np.testing.assert_array_equal(table[(0, "recall", "alibi")]["accuracy"], [0.25])


def test_claims_read_a_re_scored_row_with_its_own_se():
    from posenc_helpers.lab import claims

    nan = np.nan
    row = {"accuracy": np.array([1.0, 0.9]), "accuracy_se": np.array([0.0, 0.01]),
           "beyond": np.array([nan, 0.8]), "beyond_se": np.array([nan, 0.02]),
           "scaled": {"pi": np.array([nan, 0.6])}, "scaled_se": {"pi": np.array([nan, 0.03])},
           "finetune": {"none": {"100": {"tuned": np.array([nan, 0.7]), "tuned_se": np.array([nan, 0.04])}}},
           "pi": np.array([[0.5, 0.4]])}
    v = {("prev", "rope"): row, "lengths": {"prev": (32, 64)}}
    for keys, value, se in ((("beyond",), 0.8, 0.02), (("scaled", "pi"), 0.6, 0.03),
                            (("finetune", "none", "100", "tuned"), 0.7, 0.04), (("accuracy",), 0.9, 0.01)):
        got = claims.at(v, "prev", "rope", 64, *keys)
        assert float(got) == value and got.parts[0][2:] == (256, se), keys
    # a number kept with no SE (the factor grid) is weighed as whole sequences failing: n = GRID_SEQUENCES, no SE
    v[("prev", "rope")]["grid"] = {"pi": np.array([0.5, 0.4])}
    got = claims.at(v, "prev", "rope", 64, "grid", "pi")
    assert float(got) == 0.4 and got.parts[0][2:] == (results.GRID_SEQUENCES, None)
    # a stored row of the old files (no SE kept) is read as before: answers
    old = {("prev", "rope"): {"beyond": np.array([nan, 0.8])}, "lengths": {"prev": (32, 64)}}
    assert claims.at(old, "prev", "rope", 64).parts[0][2:] == (claims.answers("prev", 64), None)


def test_a_recycled_pool_gives_each_job_a_worker_of_its_own():
    # XLA keeps a worker's compiled programs mapped: a long run gives each row a fresh worker (vm.max_map_count)
    import os

    from posenc_helpers.lab.pool import pool_map

    pids = pool_map(os.getpid, [(), ()], workers=1, spawn=True, recycle=True)
    assert len(set(pids)) == 2 and os.getpid() not in pids
