"""The text lab's claims: they hold on every sweep seed and on a seed no sweep or notebook uses.

The claims live in :mod:`posenc_helpers.lab.text_claims`, the one list notebooks/15-lab-on-real-text.ipynb
checks (numbered as in its "What the run shows"); each must hold on
every sweep seed and on ``HELD_OUT_SEED``, whose rows ``make lab-heldout``
trains with the sweep's own functions and stores in
``text_results_heldout.json``. The fast tests read the files; a text row is
retrained in every run by tests/test_lab_reproduce.py, and the test marked
``full`` (``make test-all``) retrains the held-out
seed, compares it with its file and checks the claims on the fresh rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from posenc_helpers.lab import claims, text_claims
from posenc_helpers.lab import text as T

ALL = text_claims.CLAIMS_15 + text_claims.CLAIMS_15_FINETUNE


def _failed(table):
    return claims.failures(text_claims.check(ALL, table))


def test_every_claim_holds_on_every_sweep_seed():
    # fast: reads the shipped file only
    failed = _failed(T.load())
    assert not failed, failed


def test_the_sweep_has_at_least_eight_seeds_and_not_the_held_out_one():
    # issue 26: the text lab's sweep grows to at least 8 seeds
    assert T.load()["seeds"] == list(T.SEEDS) and len(T.SEEDS) >= 8 and T.HELD_OUT_SEED not in T.SEEDS


def test_every_share_holds_over_the_sweep_and_with_the_held_out_seed():
    sweep = text_claims.views(T.load())
    both = {**sweep, **text_claims.views(T.load(T.HELD_OUT_PATH))}
    for views in (sweep, both):
        table = claims.check_over(text_claims.SHARES_15, views)
        assert all(table.values()), claims.over_report(text_claims.SHARES_15, views)


def test_every_share_can_fail():
    seed0 = text_claims.numbers(T.load(), 0)
    never_fail = [
        st.text for st in text_claims.SHARES_15 if all(st.holds_over([v] * 4) for v in claims.made_up(seed0))
    ]
    assert not never_fail, never_fail


def test_every_claim_can_fail():
    # every claim fails on at least one made-up seed built from seed 0's numbers: every number 1, 0, 1 - x or
    # random (claims.made_up, which keeps NaN), or every NaN ("cannot run") replaced by the unigram baseline
    seed0 = text_claims.numbers(T.load(), 0)
    ran = {**seed0, "bits": {s: np.nan_to_num(b, nan=seed0["unigram"]) for s, b in seed0["bits"].items()}}
    made_up = [*claims.made_up(seed0), ran]
    never_fail = [c.text for c in ALL if all(c.holds(v) for v in made_up)]
    assert not never_fail, never_fail


def test_the_claims_of_the_notebook_are_the_modules():
    # notebook 15 checks the module's two lists and states no claim of its own
    import json
    from pathlib import Path

    notebook = json.loads((Path(__file__).parents[1] / "notebooks" / "15-lab-on-real-text.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert "text_claims.check(text_claims.CLAIMS_15, res)" in code
    assert "text_claims.check(text_claims.CLAIMS_15_FINETUNE, res)" in code
    assert "claims = {" not in code and "ft_claims = {" not in code


def test_results_file_has_every_scheme_and_seed_below_the_baseline():
    table = T.load()
    assert sorted(table["schemes"]) == sorted(T._schemes()) and len(table["seeds"]) >= 3
    assert table["unigram_bits"] == pytest.approx(T.unigram_bits(), abs=1e-4)
    assert sorted(table["finetuned"]) == ["ntk", "pi", "plain", "yarn"]  # the RoPE rows' brief fine-tunes
    assert table["finetune"]["length"] == 4 * table["defaults"]["train_len"] and table["finetune"]["steps"] == 100
    for name, bits in list(table["bits"].items()) + list(table["finetuned"].items()):
        assert bits.shape == (len(table["seeds"]), len(table["lengths"])), name
    for scheme, bits in table["bits"].items():
        assert (bits[:, 0] < table["unigram_bits"] - 1.0).all(), scheme  # every model learned the text at L


def test_every_claim_holds_on_the_held_out_seed():
    table = T.load(T.HELD_OUT_PATH)
    assert table["seeds"] == [T.HELD_OUT_SEED] and T.HELD_OUT_SEED not in T.load()["seeds"]
    assert sorted(table["schemes"]) == sorted(T._schemes())
    failed = _failed(table)
    assert not failed, f"held-out seed {T.HELD_OUT_SEED}: {failed}"


@pytest.mark.slow
@pytest.mark.full
def test_the_held_out_seed_retrains_to_its_file_and_every_claim_holds(tmp_path, monkeypatch):
    from lab_rows import TEXT_KEPT, largest_difference, same_machine, say_another_machine, within_spread
    from test_lab_reproduce import TEXT_TOLERANCE

    monkeypatch.setenv("POSENC_MODEL_CACHE", "off")  # a real retraining
    fresh = T.sweep(seeds=(T.HELD_OUT_SEED,), workers=2, log=None)
    T.save(fresh, path=tmp_path / "held_out.json")
    stored = {r["scheme"]: r for r in T._clean(T.load(T.HELD_OUT_PATH))["rows"]}
    exact, reason = same_machine(T.HELD_OUT_PATH)
    if not exact:
        say_another_machine("text_results_heldout.json", reason)
    sweep_rows = T._clean(T.load())["rows"]
    for row in T._clean(fresh)["rows"]:
        if exact:
            worst, where = largest_difference(
                {k: v for k, v in row.items() if k in TEXT_KEPT},
                {k: v for k, v in stored[row["scheme"]].items() if k in TEXT_KEPT},
            )
            assert worst <= TEXT_TOLERANCE, f"{row['scheme']}: {where} moved by {worst:.3g}; regenerate with make lab-heldout?"
            continue
        # another machine: the bits per character at L lie within the sweep's spread over its seeds
        others = [r["bits"][0] for r in sweep_rows if r["scheme"] == row["scheme"]]
        assert within_spread(row["bits"][0], others, floor=0.02), (row["scheme"], row["bits"][0], others)
    table = T.load(tmp_path / "held_out.json")
    failed = _failed(table)
    assert not failed, f"held-out seed {T.HELD_OUT_SEED}: {failed}"


# ---- does the model use context past L? (text_context.json, claims 14 to 20) ----------------------------------


def _context_failed(table):
    return claims.failures(text_claims.check_context(text_claims.CLAIMS_15_CONTEXT, table))


def test_every_context_claim_holds_on_every_seed_of_the_context_file():
    from posenc_helpers.lab import text_context as C

    failed = _context_failed(C.load())
    assert not failed, failed


def test_every_context_claim_holds_on_the_held_out_seed():
    from posenc_helpers.lab import text_context as C

    table = C.load(C.HELD_OUT_PATH)
    assert table["seeds"] == [T.HELD_OUT_SEED] and T.HELD_OUT_SEED not in C.load()["seeds"]
    failed = _context_failed(table)
    assert not failed, f"held-out seed {T.HELD_OUT_SEED}: {failed}"


def test_every_context_claim_can_fail():
    from posenc_helpers.lab import text_context as C

    seed0 = text_claims.context_numbers(C.load(), 0)
    made_up = claims.made_up(seed0)
    never_fail = [c.text for c in text_claims.CLAIMS_15_CONTEXT if all(c.holds(v) for v in made_up)]
    assert not never_fail, never_fail


def test_the_notebook_checks_the_context_claims():
    import json
    from pathlib import Path

    notebook = json.loads((Path(__file__).parents[1] / "notebooks" / "15-lab-on-real-text.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert "text_claims.check_context(text_claims.CLAIMS_15_CONTEXT, ctx)" in code
