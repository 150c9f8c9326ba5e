"""tools/claims_preview.py: only seeds whose every headline row is kept are previewed, read back as the sweep reads them."""

import json

import numpy as np
import pytest

from posenc_helpers.lab import results
from tools import claims_preview


def test_only_whole_seeds_are_taken_and_read_back_as_arrays(tmp_path):
    path = tmp_path / "results-x.jsonl"
    lines = []
    for seed in (0, 1):
        for task in results.TASKS:
            for scheme in results.ROWS:
                if seed == 1 and scheme == results.ROWS[-1] and task == results.TASKS[-1]:
                    continue  # seed 1 misses its last row
                result = {"accuracy": [1.0, None], "final_loss": 0.5, "train_seconds": 2.0, "machine": {"cpu": 1}}
                lines.append(json.dumps({"job": [seed, task, scheme, 1000, True, True], "result": result}))
    path.write_text("\n".join(lines) + "\n")
    table = claims_preview.kept_table(path)
    assert {s for s, _, _ in table} == {0}
    assert len(table) == len(results.TASKS) * len(results.ROWS)
    entry = table[(0, "prev", "alibi")]
    assert isinstance(entry["accuracy"], np.ndarray) and np.isnan(entry["accuracy"][1])
    assert entry["final_loss"] == 0.5 and entry["machine"] == {"cpu": 1} and entry["train_seconds"] == 2.0


def test_a_missing_partial_file_is_named(tmp_path):
    with pytest.raises(SystemExit, match="no rows kept yet under this code's stamp: .*nothing.jsonl does not exist"):
        claims_preview.kept_table(tmp_path / "nothing.jsonl")
