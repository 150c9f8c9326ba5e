"""tools/inference_lab.py --ledger: notebook 16's claims checked on seeds fixed by their code, the outcome appended.

The training and streaming are stood in for (each takes minutes); what is tested is the check's bookkeeping: the
seeds come from the hash of streaming.py and the ledger, each claim's k of n is what streaming.check gives on the
rows, the rows are kept, and a second check of the same code is refused.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

from posenc_helpers import streaming
from posenc_helpers.lab import ledger, stats
from posenc_helpers.lab import text as T
from tools import inference_lab as IL


def _fake_row(seed, run, params, log):
    log(f"seed {seed}: streamed")
    return {"seed": seed, "bits": {"window": [0.1]}, "sink_weight": {}, "first_weight": [0.0], "first4_weight": [0.0],
            "abf": {"bits": [1.0] * 5, "se": [0.01] * 5, "lengths": [64, 128, 256, 512, 1024]}, "seconds": {}}


def test_the_ledger_check_runs_on_the_hash_seeds_and_appends_k_of_n(monkeypatch, tmp_path):
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setattr(IL, "LEDGER_ROWS", tmp_path / "rows.json")
    monkeypatch.setattr(IL, "_train", lambda seed: types.SimpleNamespace(seed=seed, params={}))
    monkeypatch.setattr(IL, "_float16", lambda params: params)
    monkeypatch.setattr(IL, "_row", _fake_row)
    monkeypatch.setattr(T, "finetune_bits", lambda run, m: [2.0] * 5)
    seen = {}

    def fake_check(views):
        seen.update(views)
        return {"S1": {s: True for s in views}, "S2": {s: s != min(views) for s in views}}  # S2 fails on one seed

    monkeypatch.setattr(streaming, "check", fake_check)
    lines = []
    entry = IL.ledger_check(k=3, log=lines.append, ledger_path=path)
    digest = stats.source_hash(IL.ROOT / "posenc_helpers" / "streaming.py")
    exclude = sorted(set(T.SEEDS) | {T.HELD_OUT_SEED})
    want = list(stats.held_out_seeds(digest, 3, exclude=exclude))
    assert entry["hash"] == digest and entry["drawn"] == want and sorted(seen) == want
    assert entry["claims"] == {"S1": [3, 3], "S2": [2, 3]}
    assert ledger.read(path) == [entry]
    view = seen[want[0]]
    np.testing.assert_array_equal(view["finetuned"]["pi"], [2.0] * 5)
    np.testing.assert_array_equal(view["finetuned"]["abf"], [1.0] * 5)
    kept = json.loads((tmp_path / "rows.json").read_text())["checks"]
    assert len(kept) == 1 and kept[0]["hash"] == digest and kept[0]["seeds"] == want
    assert not any(ch.isdigit() and "." in line for line in lines[1:-1] for ch in line)  # no held-out number printed
    with pytest.raises(ValueError, match="its held-out seeds have been seen"):
        IL.ledger_check(k=3, log=lines.append, ledger_path=path)


def test_the_committed_check_recomputes_from_its_kept_rows():
    # anyone can recompute the ledger's outcome for notebook 16's claims from the rows the check kept
    entries = ledger.entries("streaming")
    if not entries:
        pytest.skip("no check of streaming.py recorded yet")
    entry = entries[-1]
    kept = {c["hash"]: c for c in json.loads(IL.LEDGER_ROWS.read_text())["checks"]}
    check = kept[entry["hash"]]
    assert check["seeds"] == entry["seeds"] and check["drawn"] == entry["drawn"]
    views = {r["seed"]: streaming.view_of(r, {**r["finetuned"], "abf": r["abf"]["bits"]}) for r in check["rows"]}
    outcome = streaming.check(views)
    assert {text: [sum(by_seed.values()), len(by_seed)] for text, by_seed in outcome.items()} == entry["claims"]
