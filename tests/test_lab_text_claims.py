"""Slow: the shipped text sweep regenerates, and its claims hold on a seed no sweep or notebook uses.

``text_claims`` is the one list of claims made about the sweep (the results
file's own checks, and what notebooks/15 may assert); each must hold on every
sweep seed and on ``HELD_OUT_SEED``. Run with ``-m slow``; about 4 minutes on
2 cores (five models in two worker processes, and one retrained row).
"""

from __future__ import annotations

import numpy as np
import pytest

from posenc_helpers.lab import text as T


def text_claims(bits, scaled, unigram, lengths, train_len) -> dict[str, bool]:
    """Every claim about the sweep, for one seed: ``bits[scheme]`` and ``scaled[method]`` at ``lengths``."""
    at = {n: i for i, n in enumerate(lengths)}
    L, L8, L16 = at[train_len], at[8 * train_len], at[16 * train_len]
    b = bits
    return {
        # every model learned the text: at L, at least 1 bit per character below the unigram baseline
        "every scheme learns the text at L": all(b[s][L] < unigram - 1.0 for s in b),
        "the learned table cannot run past L": bool(np.isnan(b["learned"][L + 1 :]).all()),
        "at L, NoPE is more than 0.3 bit worse than every other scheme": all(
            b["none"][L] > b[s][L] + 0.3 for s in b if s != "none"
        ),
        "ALiBi at 16L is within 0.05 bit of ALiBi at L": abs(b["alibi"][L16] - b["alibi"][L]) < 0.05,
        "sinusoidal at 8L is more than 1 bit worse than at L": b["sinusoidal"][L8] > b["sinusoidal"][L] + 1.0,
        "RoPE at 8L is more than 1 bit worse than at L": b["rope"][L8] > b["rope"][L] + 1.0,
        "NoPE at 16L is more than 0.3 bit worse than at L": b["none"][L16] > b["none"][L] + 0.3,
        "ALiBi beats NoPE, RoPE and sinusoidal by more than 0.5 bit at 8L and 16L": all(
            b["alibi"][i] < min(b["none"][i], b["rope"][i], b["sinusoidal"][i]) - 0.5 for i in (L8, L16)
        ),
        "NoPE beats RoPE and sinusoidal at 8L and 16L": all(
            b["none"][i] < min(b["rope"][i], b["sinusoidal"][i]) for i in (L8, L16)
        ),
    }


def _claims_of(table, k):
    bits = {s: b[k] for s, b in table["bits"].items()}
    scaled = {m: b[k] for m, b in table["scaled"].items()}
    return text_claims(bits, scaled, table["unigram_bits"], table["lengths"], table["defaults"]["train_len"])


def test_every_claim_holds_on_every_sweep_seed():
    # fast: reads the shipped file only
    table = T.load()
    for k, seed in enumerate(table["seeds"]):
        failed = [name for name, ok in _claims_of(table, k).items() if not ok]
        assert not failed, f"seed {seed}: {failed}"


def test_results_file_has_every_scheme_and_seed_below_the_baseline():
    table = T.load()
    assert sorted(table["schemes"]) == sorted(T._schemes()) and len(table["seeds"]) >= 3
    assert table["unigram_bits"] == pytest.approx(T.unigram_bits(), abs=1e-4)
    for scheme, bits in table["bits"].items():
        assert bits.shape == (len(table["seeds"]), len(table["lengths"]))
        assert (bits[:, 0] < table["unigram_bits"] - 1.0).all(), scheme  # every model learned the text at L


@pytest.mark.slow
def test_one_row_retrains_to_the_file():
    table = T.load()
    want = next(r for r in table["rows"] if r["scheme"] == "alibi" and r["seed"] == table["seeds"][0])
    got = T.sweep_row("alibi", table["seeds"][0])
    # same machine: the same numbers; another machine's float order may move the last digits of training
    np.testing.assert_allclose(got["bits"], want["bits"], atol=0.02)


@pytest.mark.slow
def test_every_claim_holds_on_the_held_out_seed():
    assert T.HELD_OUT_SEED not in T.load()["seeds"]
    table = T.sweep(seeds=(T.HELD_OUT_SEED,), workers=2, log=None)
    T.save(table, path=_tmp())
    table = T.load(_tmp())
    failed = [name for name, ok in _claims_of(table, 0).items() if not ok]
    assert not failed, f"held-out seed {T.HELD_OUT_SEED}: {failed}"


def _tmp():
    import pathlib
    import tempfile

    return pathlib.Path(tempfile.gettempdir()) / "posenc_text_held_out.json"
