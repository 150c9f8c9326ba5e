"""lab.ledger: checks on held-out seeds appended, never rewritten; a second check of the same claims refused."""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import re
import subprocess
from pathlib import Path

import pytest

ledger = pytest.importorskip("posenc_helpers.lab.ledger")

ROOT = Path(__file__).resolve().parent.parent
H1, H2 = "a" * 64, "b" * 64
DAY = datetime.date(2026, 12, 6)


def _check(module, digest, k, claims, path, *, exclude=(), **kw):
    # a check as it is meant to run: its seeds from seeds_for, then append with the outcome
    drawn, skip, seeds = ledger.seeds_for(module, digest, k, exclude=exclude, path=path)
    return ledger.append(module, digest, drawn, claims, exclude=skip, date=DAY, path=path, **kw), seeds


def test_an_appended_check_reads_back_and_says_what_it_proved(tmp_path):
    path = tmp_path / "ledger.jsonl"
    assert ledger.read(path) == [] and "no check" in ledger.status("claims", H1, path)
    entry, seeds = _check("claims", H1, 2, {"alibi keeps prev": (2, 2), "nope on first": [1, 2]}, path, exclude=[0, 1])
    _check("text_claims", H1, 1, {"t5 beats nope": (1, 1)}, path)
    # the seeds follow from the hash alone, by the literal rule (independent of stats.held_out_seeds)
    literal, j = [], 0
    while len(literal) < 2:
        s = int(hashlib.sha256(f"{H1}:{j}".encode()).hexdigest()[:8], 16) % 9000 + 1000
        if s not in literal and s not in (0, 1):
            literal.append(s)
        j += 1
    assert entry["drawn"] == sorted(literal) == seeds and entry["exclude"] == [0, 1]
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["claims"] == {"alibi keeps prev": [2, 2], "nope on first": [1, 2]}
    assert [e["module"] for e in ledger.read(path)] == ["claims", "text_claims"]
    assert ledger.status("claims", H1, path) == (f"claims: checked on 2026-12-06 on seeds {seeds}: 1 of 2 claims "
                                                 "held on every seed checked; failed: 'nope on first' held on 1 of 2")
    assert "changed since their last check" in ledger.status("claims", H2, path)


def test_a_check_records_each_claims_se_ratio_and_its_status_counts_the_thin_ones(tmp_path):
    path = tmp_path / "ledger.jsonl"
    outcome = {"roomy": (2, 2), "thin": (2, 2), "no se": (2, 2), "failed": (1, 2)}
    ratios = {"roomy": 12.3456, "thin": 3.999, "no se": None, "failed": -0.5}
    entry, seeds = _check("claims", H1, 2, outcome, path, ratios=ratios)
    assert entry["ratios"] == {"roomy": 12.35, "thin": 4.0, "no se": None, "failed": -0.5}  # kept to 2 decimals
    assert ledger.read(path)[0]["ratios"] == entry["ratios"]
    # 3.999 is kept as 4.0: the count reads what the ledger keeps, so it is not thin; a ratio of 3.99 is
    _check("claims", H2, 1, {"thin": (3, 3)}, path, ratios={"thin": 3.99})
    assert ledger.status("claims", H1, path) == (
        f"claims: checked on 2026-12-06 on seeds {seeds}: 3 of 4 claims held on every seed checked; failed: 'failed' "
        "held on 1 of 2")
    assert ledger.status("claims", H2, path).endswith("; 1 of the claims held on some seed by less than 4 SE: 'thin'")
    # the report: the status, then each claim's k/n, its ratio and the limit on its failure rate (5/5: 45.07 %, and
    # 1 of 2: 97.47 %, by the Clopper–Pearson formulas written out here); a [k, 1] statement (a spread) gets none
    assert ledger.report("claims", H1, path).splitlines()[1:] == [
        "   held  ratio  failure rate  claim",
        "  2/2     12.3      < 77.7 %  roomy",
        "  2/2      4.0      < 77.7 %  thin",
        "  2/2        —      < 77.7 %  no se",
        "  1/2     -0.5      < 97.5 %  failed",
    ]
    assert round(1 - 0.05 ** (1 / 2), 4) == 0.7764 and round(math.sqrt(1 - 0.05), 4) == 0.9747  # 2/2 and 1/2
    _check("length_claims", H1, 3, {"c": (3, 3), "a spread": (1, 1)}, path, ratios={"c": 5.0})
    assert ledger.report("length_claims", H1, path).splitlines()[2:] == [
        "  3/3      5.0      < 63.2 %  c", "  1/1        —" + " " * 16 + "a spread"]
    # a [k, 1] statement is counted apart from the claims
    assert ledger.status("length_claims", H1, path).endswith(
        ": 1 of 1 claims held on every seed checked, and 1 of 1 spreads and shares over the pooled seeds (the sweep "
        "and these)")
    assert ledger.report("claims", "c" * 64, path) == ledger.status("claims", "c" * 64, path)
    # an entry without ratios (the checks recorded before them) still reads
    _check("text_claims", H1, 1, {"c": (1, 1)}, path)
    assert "ratios" not in ledger.entries("text_claims", path)[0]


def test_a_second_check_of_the_same_claims_is_refused(tmp_path):
    path = tmp_path / "ledger.jsonl"
    _, first = _check("claims", H1, 2, {"c": (2, 2)}, path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="was checked on 2026-12-06: its held-out seeds have been seen"):
        _check("claims", H1, 2, {"c": (4, 4)}, path)
    assert path.read_bytes() == before
    from posenc_helpers.lab.stats import held_out_seeds

    with pytest.raises(ValueError, match=re.escape(f"checked before on seeds {first}: the new seeds must be drawn")):
        ledger.append("claims", H2, list(held_out_seeds(H2, 2)), {"c": (2, 2)}, date=DAY, path=path)  # seen seeds shed
    _, seeds = _check("claims", H2, 2, {"c": (4, 4)}, path)  # new claims, old seeds kept
    assert set(first) < set(seeds) and len(seeds) == 4
    assert len(ledger.entries("claims", path)) == 2 and ledger.seeds_so_far("claims", path) == seeds


def test_seeds_not_derived_from_the_hash_are_refused(tmp_path):
    path = tmp_path / "ledger.jsonl"
    with pytest.raises(ValueError, match=r"seeds \[11, 12\] are not the 2 that stats.held_out_seeds derives"):
        ledger.append("claims", H1, [11, 12], {"c": (2, 2)}, date=DAY, path=path)
    assert not path.exists()


def test_a_hand_added_second_check_or_shed_seed_is_refused_on_reading(tmp_path):
    path = tmp_path / "ledger.jsonl"
    _check("claims", H1, 2, {"c": (1, 2)}, path)
    first = path.read_text()
    path.write_text(first + first.replace('"c": [1, 2]', '"c": [2, 2]'))  # the same version checked again, by hand
    with pytest.raises(ValueError, match=r"line 2: a second check of claims at aaaaaaaaaaaa… \(the first is line 1\)"):
        ledger.read(path)
    entry = json.loads(first)
    from posenc_helpers.lab.stats import held_out_seeds

    shed = {**entry, "hash": H2, "drawn": list(held_out_seeds(H2, 2)), "seeds": list(held_out_seeds(H2, 2))}
    path.write_text(first + json.dumps(shed) + "\n")  # a new version that drops the first seeds, by hand
    with pytest.raises(ValueError, match=re.escape(f"line 2: claims was checked before on seeds {entry['seeds']}")):
        ledger.read(path)


@pytest.mark.parametrize("change, named", [
    ({"module": "results"}, "module must be one of"),
    ({"digest": "A" * 64}, "hash must be a SHA-256"),
    ({"digest": "ab"}, "hash must be a SHA-256"),
    ({"drawn": []}, "seeds must be a non-empty list"),
    ({"drawn": [True, 2]}, "seeds must be a non-empty list"),
    ({"claims": {}}, "claims must map"),
    ({"claims": {"c": (3, 2)}}, "claim 'c' must hold on"),
    ({"claims": {"c": (1, 3)}}, "claim 'c' must hold on"),
    ({"claims": {"c": (0, 0)}}, "claim 'c' must hold on"),
    ({"claims": {"c": (1.0, 2)}}, "claim 'c' must hold on"),
    ({"date": "6 Dec 2026"}, "date must be YYYY-MM-DD"),
    ({"ratios": {"other": 5.0}}, "ratios must map claims of the entry"),
    ({"ratios": {"c": float("nan")}}, "the ratio of claim 'c' must be a finite number or null"),
    ({"ratios": {"c": float("inf")}}, "the ratio of claim 'c' must be a finite number or null"),
    ({"ratios": {"c": "4"}}, "the ratio of claim 'c' must be a finite number or null"),
])
def test_bad_entries_are_refused_by_name_and_nothing_is_written(tmp_path, change, named):
    from posenc_helpers.lab.stats import held_out_seeds

    path = tmp_path / "ledger.jsonl"
    args = {"module": "claims", "digest": H1, "drawn": list(held_out_seeds(H1, 2)), "claims": {"c": (2, 2)},
            "date": DAY, **change}
    with pytest.raises(ValueError, match=named):
        ledger.append(args.pop("module"), args.pop("digest"), args.pop("drawn"), args.pop("claims"), path=path, **args)
    assert not path.exists()


def test_a_malformed_line_is_named_by_its_number(tmp_path):
    path = tmp_path / "ledger.jsonl"
    _check("claims", H1, 1, {"c": (1, 1)}, path)
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(ValueError, match=r"ledger.jsonl, line 2 is not JSON"):
        ledger.read(path)


def test_a_hand_edited_file_is_not_appended_to(tmp_path):
    path = tmp_path / "ledger.jsonl"
    _check("claims", H1, 1, {"c": (1, 1)}, path)
    path.write_text(path.read_text().rstrip("\n"))
    with pytest.raises(ValueError, match="does not end with a newline"):
        _check("claims", H2, 1, {"c": (1, 1)}, path)


def test_is_prefix_catches_every_rewrite():
    a, b, c = '{"n": 1}\n', '{"n": 2}\n', '{"n": 3}\n'
    assert ledger.is_prefix("", a) and ledger.is_prefix(a, a + b) and ledger.is_prefix(a + b, a + b + c)
    assert not ledger.is_prefix(a + b, a)  # a line removed
    assert not ledger.is_prefix(a + b, b + a)  # reordered
    assert not ledger.is_prefix(a + b, a + '{"n": 9}\n' + c)  # an old line rewritten
    assert not ledger.is_prefix(a.rstrip("\n"), a + b)  # the old text ended mid-line


def test_every_committed_version_of_the_ledger_begins_with_the_one_before():
    """Every committed version of the ledger begins with the one before, and the file begins with the last."""
    rel = ledger.PATH.relative_to(ROOT).as_posix()
    log = subprocess.run(["git", "log", "--format=%H", "--reverse", "--", rel], cwd=ROOT, capture_output=True,
                         text=True)
    if log.returncode != 0:
        pytest.skip("not a git checkout")
    if not log.stdout.split():
        pytest.skip("no version of the ledger is committed yet (issue 43: its first checks await the re-scored sweeps)")
    old = ""
    for commit in log.stdout.split():
        shown = subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=ROOT, capture_output=True, text=True)
        new = shown.stdout if shown.returncode == 0 else ""
        assert ledger.is_prefix(old, new), commit
        old = new
    if ledger.PATH.is_file():
        assert ledger.is_prefix(old, ledger.PATH.read_text())
        ledger.read()  # and every line is a well-formed entry, its seeds derived from its hash
    # every entry's hash is the code of a version of its module that was committed before the entry was
    from posenc_helpers.lab.cache import code_text

    for entry in ledger.read():
        rel_module = SOURCES[entry["module"]]
        commits = subprocess.run(["git", "log", "--format=%H", "--", rel_module], cwd=ROOT, capture_output=True,
                                 text=True).stdout.split()
        hashes = set()
        for commit in commits:
            text = subprocess.run(["git", "show", f"{commit}:{rel_module}"], cwd=ROOT, capture_output=True, text=True)
            if text.returncode == 0:
                hashes.add(hashlib.sha256(code_text(text.stdout).encode()).hexdigest())
        assert entry["hash"] in hashes, (entry["module"], entry["date"], "checks claims no commit holds")


#: The claims modules and their sources, as the done-when check reads them.
SOURCES = {"claims": "posenc_helpers/lab/claims.py", "text_claims": "posenc_helpers/lab/text_claims.py",
           "length_claims": "posenc_helpers/lab/length_claims.py", "streaming": "posenc_helpers/streaming.py"}


#: The modules not yet checked on seeds derived from their hash (issue 43: the text and length sweeps are still being
#: re-scored, and their claims restated on them). Strict: a module's mark must come off when its entry lands.
NOT_YET_CHECKED = ("text_claims", "length_claims")


@pytest.mark.parametrize("module", [
    pytest.param(m, marks=pytest.mark.xfail(strict=True, reason="issue 43: not yet checked on seeds derived from its "
                                                                "hash (the text and length sweeps are being "
                                                                "re-scored)"))
    if m in NOT_YET_CHECKED else m
    for m in ledger.MODULES
])
def test_each_modules_last_check_is_of_its_current_claims_and_every_claim_held(module):
    from posenc_helpers.lab import stats

    mine = ledger.entries(module)
    assert mine, f"{module}: no check recorded"
    last = mine[-1]
    assert last["hash"] == stats.source_hash(ROOT / SOURCES[module]), f"{module}: its claims changed since the check"
    assert all(k == n for k, n in last["claims"].values()), last["claims"]
