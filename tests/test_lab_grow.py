"""results.grow: new seeds join a sweep's file whole, or not at all (training replaced by a stand-in)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from posenc_helpers.lab import results


def stand_in(seed, task, scheme, *rest):
    # what sweep_row or extra_run returns, made from the key so each row can be told apart
    if (seed, task, scheme) == (99, "first", "rope"):
        raise RuntimeError("stopped")
    return {"accuracy": np.full(2, seed + 0.25), "beyond": np.array([np.nan, 0.5]), "final_loss": 0.125,
            "train_seconds": 1.0}


def start_file(tmp_path, tasks, names):
    # a file computed by this code: its stamp is the one the code has now (stand-ins included)
    rows = [{"seed": 0, "task": t, "scheme": s, "accuracy": [1.0, 1.0], "beyond": [None, 0.9], "final_loss": 0.5}
            for t in tasks for s in names]
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({"seeds": [0], "rows": rows, "stamp": results.row_stamp()}))
    return path


@pytest.mark.parametrize("extra", [False, True])
def test_new_seeds_join_whole_and_an_interrupted_seed_not_at_all(tmp_path, monkeypatch, extra):
    tasks = tuple(results.EXTRA_BUDGETS) if extra else results.TASKS
    names = results.ROWS  # both sweeps also train the other iRoPE chunks
    monkeypatch.setattr(results, "extra_run" if extra else "sweep_row", stand_in)
    path = start_file(tmp_path, tasks, names)
    lines = []
    results.grow([7, 3], extra=extra, path=path, workers=1, log=lines.append)
    doc = json.loads(path.read_text())
    assert doc["seeds"] == [0, 3, 7]
    assert [(r["seed"], r["task"], r["scheme"]) for r in doc["rows"]] == [
        (seed, t, s) for seed in (0, 3, 7) for t in tasks for s in names
    ]
    seven = [r for r in doc["rows"] if r["seed"] == 7]
    assert all(r["accuracy"] == [7.25, 7.25] and r["beyond"] == [None, 0.5] for r in seven)
    assert all("train_seconds" not in r for r in doc["rows"])  # timings stay out, as in save()
    assert doc["rows"][0]["beyond"] == [None, 0.9]  # the rows already there are kept as they were
    assert "grown" in doc and [x.split(":")[0] for x in lines if "written" in x] == ["seed 7 written", "seed 3 written"]
    # a seed whose last row never comes is not written: the file still holds whole seeds only
    if not extra:
        with pytest.raises(RuntimeError, match="stopped"):
            results.grow([5, 99], extra=extra, path=path, workers=1, log=lines.append)
        assert json.loads(path.read_text())["seeds"] == [0, 3, 5, 7]


def test_seeds_the_file_holds_or_repeated_are_refused_by_name(tmp_path):
    path = start_file(tmp_path, results.TASKS, results.ROWS)
    with pytest.raises(ValueError, match=r"seeds=\[0\].*holds \[0\]"):
        results.grow([0], path=path, workers=1)
    with pytest.raises(ValueError, match=r"seeds=\[4, 4\]"):
        results.grow([4, 4], path=path, workers=1)


def test_a_file_of_other_row_code_is_refused_by_name(tmp_path):
    path = start_file(tmp_path, results.TASKS, results.ROWS)
    doc = json.loads(path.read_text())
    doc["stamp"] = "0123456789abcdef"
    path.write_text(json.dumps(doc))
    with pytest.raises(RuntimeError, match=r"sweep.json was computed by other row code \(stamp '0123456789abcdef'"):
        results.grow([4], path=path, workers=1)
    assert json.loads(path.read_text()) == doc  # nothing written
