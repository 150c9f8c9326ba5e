"""results.ledger_check (``make lab-heldout``): the claims of notebooks 12 and 13 checked on seeds fixed by claims.py.

Training is stood in for (a row takes minutes), and so are the claims: the real ones are being restated (issue 43)
and read numbers the stand-in rows do not have. What is tested is the check's bookkeeping: the seeds follow from
claims.py's hash by the literal rule, skipping the sweeps' seeds and every former held-out seed; each row is kept as it
finishes, so a stopped check resumes; each claim's k of n is what the claims give on the rows of the file it writes; a
second check of the same code, sweeps of other row code, uncommitted claims and two claims with one text are refused
before anything trains; and no number of a held-out row reaches the log.
"""

from __future__ import annotations

import hashlib
import json
import re
import types

import numpy as np
import pytest

from posenc_helpers.lab import claims, ledger, pool, results, stats
from posenc_helpers.lab.cache import code_text

#: The numbers of the stand-in rows: each distinctive, so that the log can be searched for them.
HIGH, LOW, SE, LOSS = 0.912387, 0.651946, 0.013579, 1.234567

#: The former held-out seeds, written out (results.FORMER_HELD_OUT must hold them all).
FORMER = {11, 12, 7482, 8507}


def _literal_seeds(k, exclude):
    # claims.py's seeds by the rule of docs/CLAIMS.md, written out here, independent of stats and ledger: SHA-256 of
    # its code without comments and docstrings, then int(SHA-256(hash:j)[:8], 16) mod 9,000 + 1,000 for j = 0, 1, ...
    # (the draw itself is test_lab_stats' literal, which that file checks against stats.held_out_seeds)
    from test_lab_stats import literal_seeds

    digest = hashlib.sha256(code_text(results.CLAIMS_SOURCE.read_text(encoding="utf-8")).encode()).hexdigest()
    return digest, list(literal_seeds(digest, k, exclude))


def _sweep_entry(n, value):
    return {"accuracy": np.full(n, value), "beyond": np.r_[np.nan, np.full(n - 1, value)], "final_loss": 0.5}


def _claims():
    # planted claims: one holds on every seed, one fails on the seed whose rows score LOW, one reads the extra tasks;
    # a share that holds over the pooled seeds and a spread that cannot
    groups = {
        "12": [claims.Claim("planted: ALiBi on prev is at least 0.5 at L",
                            lambda v: float(v["prev", "alibi"]["accuracy"][0]) >= 0.5),
               claims.Claim("planted: ALiBi on prev is at least 0.8 at L",
                            lambda v: float(v["prev", "alibi"]["accuracy"][0]) >= 0.8),
               # read through claims.at, so that its margin is weighed in SEs: it holds on every seed, on the LOW one
               # by less than 4 SE
               claims.Claim("planted: ALiBi on prev is at least 0.6 at L, weighed",
                            lambda v: claims.at(v, "prev", "alibi", 32, "accuracy") >= 0.6)],
        "12 extra": [claims.Claim("planted: ALiBi on recall is at least 0.5 at L",
                                  lambda v: float(v["recall", "alibi"]["accuracy"][0]) >= 0.5)],
        "13": [],
    }
    over = {
        "12": [claims.Share("planted: ALiBi on prev is at least 0.8 at L on half the seeds",
                            lambda v: float(v["prev", "alibi"]["accuracy"][0]) >= 0.8, at_least=0.5)],
        "12 extra": [claims.Spread("planted: ALiBi on recall has a median above 2",
                                   lambda v: float(v["recall", "alibi"]["accuracy"][0]), median=(2.0, None))],
        "13": [],
    }
    return groups, over


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    """Sweep files of this row code, a ledger, a held-out file and partial rows in ``tmp_path``; rows and claims
    stood in for. The rows of the first held-out seed score LOW, the others HIGH."""
    exclude = set(results.SEEDS) | set(results.EXTRA_SEEDS) | FORMER
    digest, seeds = _literal_seeds(5, exclude)
    calls, spawned = [], []
    state = types.SimpleNamespace(digest=digest, seeds=seeds, exclude=sorted(exclude), calls=calls, spawned=spawned,
                                  ledger=tmp_path / "ledger.jsonl", stop_after=None, path=tmp_path)

    def fake_row(kind, seed, task, name):
        if state.stop_after is not None and len(calls) >= state.stop_after:
            raise RuntimeError("stopped")  # the session ended
        calls.append((kind, seed, task, name))
        n = len(results.SWEEP_LENGTHS if kind == "sweep" else results.EXTRA_LENGTHS)
        value = LOW if seed == seeds[0] else HIGH
        row = {"accuracy": [value] * n, "beyond": [None] + [value] * (n - 1), "accuracy_se": [SE] * n,
               "beyond_se": [None] + [SE] * (n - 1), "final_loss": LOSS, "machine": {"cpu": "stand-in"}}
        return row | ({"train_seconds": 1.5, "eval_seconds": 2.5} if kind == "sweep" else {})

    def in_this_process(fn, jobs, *, workers=None, on_result=None, spawn=False, ordered=True, recycle=False):
        # the kept rows ask for fresh spawned workers; the stand-in row runs here (it cannot cross to a worker)
        spawned.append((spawn, recycle))
        for i, job in enumerate(jobs):
            on_result(i, fn(*job))

    head = {(s, t, "alibi"): _sweep_entry(len(results.SWEEP_LENGTHS), 0.9) for s in (0, 1, 2) for t in results.TASKS}
    more = {(s, t, "alibi"): _sweep_entry(len(results.EXTRA_LENGTHS), 0.9) for s in (0, 1) for t in results.EXTRA_BUDGETS}
    results.save(head, tmp_path / "results.json")
    results.save_extra(more, tmp_path / "results_extra.json")
    monkeypatch.setattr(results, "RESULTS_PATH", tmp_path / "results.json")
    monkeypatch.setattr(results, "EXTRA_PATH", tmp_path / "results_extra.json")
    monkeypatch.setattr(results, "HELD_OUT_PATH", tmp_path / "results_heldout.json")
    monkeypatch.setattr(results, "PARTIALS", tmp_path / "partials")
    monkeypatch.setattr(results, "_stored_held_out_row", fake_row)
    monkeypatch.setattr(results, "_committed_claims_hash", lambda: stats.source_hash(results.CLAIMS_SOURCE))
    monkeypatch.setattr(pool, "pool_map", in_this_process)
    groups, over = _claims()
    monkeypatch.setattr(claims, "groups", lambda: groups)
    monkeypatch.setattr(claims, "over_seeds", lambda: over)
    return state


def _no_number_of_a_row(lines):
    for line in lines:
        # no decimal outside a quoted claim's text (its threshold): the seeds, counts, seconds and stamps are whole
        assert not re.search(r"\d\.\d", re.sub(r"'[^']*'", "", line)), line
        for x in (HIGH, LOW, SE, LOSS, 1.5, 2.5):
            assert f"{x:.2f}" not in line and f"{x:.3g}" not in line, line


def test_the_check_runs_on_the_seeds_of_claims_hash_and_appends_k_of_n(stand_in):
    lines = []
    entry = results.ledger_check(log=lines.append, ledger_path=stand_in.ledger)
    # the seeds: claims.py's hash by the literal rule, the sweeps' seeds and every former held-out seed skipped
    assert set(results.FORMER_HELD_OUT) == FORMER
    assert entry["hash"] == stand_in.digest and entry["drawn"] == entry["seeds"] == stand_in.seeds
    assert entry["exclude"] == stand_in.exclude and len(stand_in.seeds) == results.HELD_OUT_SEEDS == 5
    assert results.ledger_seeds(stand_in.ledger)[0] == stand_in.digest
    # every row of every seed trained once, headline and extra, RoPE's first, each in a fresh spawned worker
    want = {("sweep", s, t, m) for s in stand_in.seeds for t in results.TASKS for m in results.ROWS}
    want |= {("extra", s, t, m) for s in stand_in.seeds for t in results.EXTRA_BUDGETS for m in results.ROWS}
    assert len(stand_in.calls) == len(want) and set(stand_in.calls) == want
    first = [job[3] for job in stand_in.calls[:(len(results.TASKS) + len(results.EXTRA_BUDGETS)) * len(stand_in.seeds)]]
    assert first == ["rope"] * len(first) and stand_in.spawned == [(True, True)]
    # each claim on k of n = 5 seeds (the planted one fails on the seed whose rows score LOW); each spread and share
    # over the sweep's seeds and the held-out ones, [1, 1] or [0, 1]
    assert entry["claims"] == {
        "planted: ALiBi on prev is at least 0.5 at L": [5, 5],
        "planted: ALiBi on prev is at least 0.8 at L": [4, 5],
        "planted: ALiBi on prev is at least 0.6 at L, weighed": [5, 5],
        "planted: ALiBi on recall is at least 0.5 at L": [5, 5],
        "planted: ALiBi on prev is at least 0.8 at L on half the seeds": [1, 1],
        "planted: ALiBi on recall has a median above 2": [0, 1],
    }
    # each claim's margin on its closest seed in SEs: only the claim read through claims.at has one, and it is the
    # LOW seed's margin over √(q(1 − q)/256) at q = 0.6, the noisiest point within it (written out here)
    weighed = (LOW - 0.6) / np.sqrt(0.6 * 0.4 / 256)
    assert entry["ratios"] == {
        "planted: ALiBi on prev is at least 0.5 at L": None,
        "planted: ALiBi on prev is at least 0.8 at L": None,
        "planted: ALiBi on prev is at least 0.6 at L, weighed": round(weighed, 2),
        "planted: ALiBi on recall is at least 0.5 at L": None,
    } and 1 < weighed < ledger.ROOM
    assert ledger.read(stand_in.ledger) == [entry]
    # the held-out file: exactly these seeds' rows, this row code, claims.py's hash and the drawn seeds
    head, more = results.load_held_out(results.HELD_OUT_PATH)
    assert head["seeds"] == more["seeds"] == tuple(stand_in.seeds)
    assert (head["stamp"], head["hash"], head["drawn"]) == (results.row_stamp(), stand_in.digest, stand_in.seeds)
    assert set(head["table"]) == {k[1:] for k in want if k[0] == "sweep"}
    assert set(more["table"]) == {k[1:] for k in want if k[0] == "extra"}
    assert json.loads(results.HELD_OUT_PATH.read_text())["fingerprint"] == {"cpu": "stand-in"}
    kept = list((stand_in.path / "partials").iterdir())
    assert [p.name for p in kept] == [f"results-heldout-{results.row_stamp()}.jsonl"]
    # the log: the seeds, progress by job, the ledger's status; never a number of a row
    assert str(stand_in.seeds) in lines[0] and lines[-1] == ledger.status("claims", stand_in.digest, stand_in.ledger)
    assert "held on 4 of 5" in lines[-1]
    assert lines[-1].endswith("; 1 of the claims held on some seed by less than 4 SE: "
                              "'planted: ALiBi on prev is at least 0.6 at L, weighed'")
    _no_number_of_a_row(lines)


def test_a_second_check_of_the_same_claims_is_refused_before_anything_trains(stand_in):
    results.ledger_check(log=lambda line: None, ledger_path=stand_in.ledger)
    trained, before = len(stand_in.calls), stand_in.ledger.read_bytes()
    with pytest.raises(ValueError, match=r"claims.py at [0-9a-f]{12}… was checked on .*its held-out seeds have been "
                                         r"seen, so a second check proves nothing"):
        results.ledger_check(log=lambda line: None, ledger_path=stand_in.ledger)
    assert len(stand_in.calls) == trained and stand_in.ledger.read_bytes() == before


def test_a_stopped_check_resumes_from_the_rows_it_kept(stand_in):
    stand_in.stop_after = 7
    with pytest.raises(RuntimeError, match="stopped"):
        results.ledger_check(log=lambda line: None, ledger_path=stand_in.ledger)
    assert not stand_in.ledger.exists() and not results.HELD_OUT_PATH.exists()  # nothing recorded from a part
    (kept,) = (stand_in.path / "partials").iterdir()
    assert len(kept.read_text().splitlines()) == 7
    first = list(stand_in.calls)
    stand_in.stop_after = None
    lines = []
    entry = results.ledger_check(log=lines.append, ledger_path=stand_in.ledger)
    again = stand_in.calls[len(first):]
    jobs = (len(results.TASKS) + len(results.EXTRA_BUDGETS)) * len(results.ROWS) * 5
    assert not set(again) & set(first) and len(first) + len(again) == jobs  # only the rest trained
    assert any(f"7 of {len(first) + len(again)} jobs read from" in line for line in lines)
    assert entry["claims"]["planted: ALiBi on prev is at least 0.8 at L"] == [4, 5]
    _no_number_of_a_row(lines)


def test_the_seeds_of_a_later_check_keep_every_earlier_one(stand_in):
    # an earlier check of other claims: its seeds are skipped by the new draw and checked again
    other = "ab" * 32
    drawn, skip, _ = ledger.seeds_for("claims", other, 2, exclude=stand_in.exclude, path=stand_in.ledger)
    ledger.append("claims", other, drawn, {"c": [2, 2]}, exclude=skip, path=stand_in.ledger)
    digest, seeds = _literal_seeds(5, set(stand_in.exclude) | set(drawn))
    assert results.ledger_seeds(stand_in.ledger) == (digest, seeds, sorted(set(stand_in.exclude) | set(drawn)),
                                                      sorted(set(seeds) | set(drawn)))
    entry = results.ledger_check(log=lambda line: None, ledger_path=stand_in.ledger)
    assert entry["seeds"] == sorted(set(seeds) | set(drawn)) and entry["drawn"] == seeds
    assert all(n == 7 for k, n in entry["claims"].values() if n > 1)


def test_sweeps_of_other_row_code_are_refused_naming_both_stamps(stand_in):
    doc = json.loads(results.RESULTS_PATH.read_text())
    results.RESULTS_PATH.write_text(json.dumps({**doc, "stamp": "0123456789abcdef"}))
    with pytest.raises(ValueError, match=rf"results.json was computed by other row code \(stamp '0123456789abcdef'; "
                                         rf"this code's is '{results.row_stamp()}'\)"):
        results.ledger_check(log=lambda line: None, ledger_path=stand_in.ledger)
    assert not stand_in.calls and not stand_in.ledger.exists()


def test_claims_other_than_their_last_commit_are_refused(stand_in, monkeypatch):
    monkeypatch.setattr(results, "_committed_claims_hash", lambda: "f" * 64)
    with pytest.raises(ValueError, match=r"claims.py is not as its last commit holds it .* commit the claims first"):
        results.ledger_check(log=lambda line: None, ledger_path=stand_in.ledger)
    assert not stand_in.calls and not stand_in.ledger.exists()


def test_two_claims_with_one_text_are_refused_by_name(stand_in, monkeypatch):
    groups, _ = _claims()
    twin = claims.Claim("planted: ALiBi on prev is at least 0.5 at L", lambda v: True)
    monkeypatch.setattr(claims, "groups", lambda: {**groups, "13": [twin]})
    with pytest.raises(ValueError, match=r"given more than once across the groups: \['planted: ALiBi on prev is at "
                                         r"least 0.5 at L'\]"):
        results.ledger_check(log=lambda line: None, ledger_path=stand_in.ledger)
    assert not stand_in.calls and not stand_in.ledger.exists()


def test_every_claim_spread_and_share_of_12_and_13_has_a_text_of_its_own():
    # the real claims: each text is one line of the ledger's entry
    texts = results._claim_texts()
    assert len(texts) == len(set(texts)) == sum(map(len, claims.groups().values())) + sum(
        map(len, claims.over_seeds().values()))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: results.ledger_check(log="print"), "log must be a function that takes a line of text, got 'print'"),
        (lambda: results.ledger_check(log=print, ledger_path=3), "ledger_path must be the path of a ledger file"),
        (lambda: results.ledger_seeds(ledger_path=""), "ledger_path must be the path of a ledger file"),
        (lambda: results.held_out_rows([]), r"seeds=\[\] names no seed to train"),
        (lambda: results.held_out_rows(5000), "seeds must be a list of seeds, got 5000"),
        (lambda: results.held_out_rows([5000, 0]), r"seeds=\[5000, 0\]: seed 0 is a seed of the shipped sweeps"),
        (lambda: results.held_out_rows([5000, 5000]), "names a seed more than once"),
        (lambda: results.held_out_rows([-1]), "-1 is not a non-negative integer"),
        (lambda: results.held_out_rows([True]), "True is not a non-negative integer"),
        (lambda: results.save_held_out({}, {}, "/nonexistent/heldout.json", digest="abc"),
         "digest must be a SHA-256 in hex .* got 'abc'"),
        (lambda: results._stored_held_out_row("text", 5000, "prev", "alibi"), "kind must be 'sweep' or 'extra', got 'text'"),
    ],
)
def test_bad_arguments_are_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_readers_check_refuses_the_seeds_the_held_out_check_draws_before_it_is_recorded():
    # claims.check_seeds (through held_out_sweep) would otherwise show how the claims fare on them before the ledger
    # records the check; refused before anything trains, naming the seeds
    from posenc_helpers.lab import claims, ledger

    digest, drawn, _, _ = results.ledger_seeds()
    if digest in {e["hash"] for e in ledger.entries("claims")}:
        pytest.skip("claims.py at this hash is checked: its seeds may be retrained")
    with pytest.raises(ValueError, match=str(drawn[0])):
        claims.check_seeds([drawn[0]])
    with pytest.raises(ValueError, match="make lab-heldout"):
        results.held_out_sweep([12345, drawn[-1]])
