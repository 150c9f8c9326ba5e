"""The text lab's claims: they hold on every sweep seed and on a seed no sweep or notebook uses.

``text_claims`` is the list of claims notebooks/15-lab-on-real-text.ipynb asserts
about the sweep (numbered as in its "What the run shows"); each must hold on
every sweep seed and on ``HELD_OUT_SEED``, whose rows ``make lab-heldout``
trains with the sweep's own functions and stores in
``text_results_heldout.json``. The fast tests read the files; a text row is
retrained in every run by tests/test_lab_reproduce.py, and the test marked
``full`` (``make test-all``, about 8 minutes on 2 cores) retrains the held-out
seed, compares it with its file and checks the claims on the fresh rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from posenc_helpers.lab import text as T


def text_claims(bits, scaled, by_position, unigram, lengths, train_len, finetuned) -> dict[str, bool]:
    """Every claim notebooks/15 asserts about the sweep, for one seed.

    ``bits[scheme]``, ``scaled[method]`` and ``finetuned[m]`` (m: plain, pi, ntk,
    yarn) at ``lengths`` (L, 2L, 4L, 8L, 16L); ``by_position[scheme]`` the loss
    at each position of a window of 8L.
    """
    at = {n: i for i, n in enumerate(lengths)}
    L = train_len
    i2, i4, i8, i16 = at[2 * L], at[4 * L], at[8 * L], at[16 * L]
    b, sc, pos, ft = bits, scaled, by_position, finetuned
    zs = {"plain": b["rope"], **sc}  # the same variants at test time only
    gap = {s: b[s] - b[s][0] for s in ("alibi", "sinusoidal", "rope", "none")}
    inside = {s: pos[s][L // 2 : L].mean() for s in ("sinusoidal", "rope", "alibi")}

    def past(s, a, z):
        return pos[s][a:z].mean() - inside[s]

    return {
        "every scheme learns the text: more than 1.9 bits below the unigram baseline at L": all(
            b[s][0] < unigram - 1.9 for s in b
        ),
        "the learned table cannot run past L": bool(np.isnan(b["learned"][1:]).all()),
        "sinusoidal breaks at once: 2 to 9 characters past L, more than 2 bits above [L/2, L)": (
            past("sinusoidal", L + 2, L + 10) > 2.0
        ),
        "RoPE holds for L/2 past L (within 0.25 bit), then breaks (more than 3 bits from 2L to 4L)": (
            abs(past("rope", L, L + L // 2)) < 0.25 and past("rope", 2 * L, 4 * L) > 3.0
        ),
        "ALiBi by position: within 0.1 bit from L to 8L": abs(past("alibi", L, 8 * L)) < 0.1,
        "1 RoPE best at L, NoPE worst by more than 0.4 bit": all(b["rope"][0] < b[s][0] for s in b if s != "rope")
        and all(b["none"][0] > b[s][0] + 0.4 for s in b if s != "none"),
        "2 ALiBi within 0.05 bit of L up to 16L, lower at 2L": bool((np.abs(gap["alibi"][1:]) < 0.05).all())
        and gap["alibi"][i2] < 0,
        "3 sinusoidal more than 1.5 bits worse at 2L": gap["sinusoidal"][i2] > 1.5,
        "4 RoPE beats sinusoidal at 2L and 4L, more than 2.5 bits worse at 8L": all(
            b["rope"][i] < b["sinusoidal"][i] for i in (i2, i4)
        )
        and gap["rope"][i8] > 2.5,
        "5 sinusoidal and RoPE above the unigram baseline at 8L and 16L": all(
            b[s][i] > unigram for s in ("sinusoidal", "rope") for i in (i8, i16)
        ),
        "6 NoPE more than 0.5 bit worse at 16L, beats sinusoidal and RoPE at 8L and 16L, loses to ALiBi": (
            gap["none"][i16] > 0.5
        )
        and all(b["none"][i] < b[s][i] for s in ("sinusoidal", "rope") for i in (i8, i16))
        and bool((b["alibi"] < b["none"]).all()),
        "7 NTK and YaRN beat RoPE at 2L-8L, YaRN by 1 bit at 8L; PI worse at 2L-8L; none within 1 bit of ALiBi": all(
            sc[m][i] < b["rope"][i] for m in ("ntk", "yarn") for i in (i2, i4, i8)
        )
        and sc["yarn"][i8] < b["rope"][i8] - 1.0
        and all(sc["pi"][i] > b["rope"][i] for i in (i2, i4, i8))
        and all(sc[m][i8] > b["alibi"][i8] + 1.0 for m in sc),
        "8 every variant more than 0.6 bit better at 4L after the fine-tune": all(
            ft[m][i4] < zs[m][i4] - 0.6 for m in ft
        ),
        "9 NTK, YaRN tuned at 4L below RoPE at L, ALiBi at 4L and plain tuned; PI tuned above plain": all(
            ft[m][i4] < min(b["rope"][0], b["alibi"][i4]) and ft[m][i4] < ft["plain"][i4] for m in ("ntk", "yarn")
        )
        and ft["pi"][i4] > ft["plain"][i4],
        "10 PI tuned more than 0.2 bit worse at L": ft["pi"][0] > b["rope"][0] + 0.2,
        "11 tuned: 0.5 bit worse at 16L than 4L, behind ALiBi at 16L; plain best at 8L and 16L": all(
            ft[m][i16] > ft[m][i4] + 0.5 and ft[m][i16] > b["alibi"][i16] for m in ft
        )
        and all(ft["plain"][i] <= ft[m][i] for m in ft for i in (i8, i16)),
    }


def _claims_of(table, k):
    bits = {s: b[k] for s, b in table["bits"].items()}
    scaled = {m: b[k] for m, b in table["scaled"].items()}
    by_position = {s: p[k] for s, p in table["by_position"].items()}
    finetuned = {m: b[k] for m, b in table["finetuned"].items()}
    return text_claims(
        bits, scaled, by_position, table["unigram_bits"], table["lengths"], table["defaults"]["train_len"], finetuned
    )


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
    failed = [name for name, ok in _claims_of(table, 0).items() if not ok]
    assert not failed, f"held-out seed {T.HELD_OUT_SEED}: {failed}"


@pytest.mark.slow
@pytest.mark.full
def test_the_held_out_seed_retrains_to_its_file_and_every_claim_holds(tmp_path, monkeypatch):
    from lab_rows import TEXT_KEPT, largest_difference
    from test_lab_reproduce import TEXT_TOLERANCE

    monkeypatch.setenv("POSENC_MODEL_CACHE", "off")  # a real retraining
    fresh = T.sweep(seeds=(T.HELD_OUT_SEED,), workers=2, log=None)
    T.save(fresh, path=tmp_path / "held_out.json")
    stored = {r["scheme"]: r for r in T._clean(T.load(T.HELD_OUT_PATH))["rows"]}
    for row in T._clean(fresh)["rows"]:
        worst, where = largest_difference(
            {k: v for k, v in row.items() if k in TEXT_KEPT}, {k: v for k, v in stored[row["scheme"]].items() if k in TEXT_KEPT}
        )
        assert worst <= TEXT_TOLERANCE, f"{row['scheme']}: {where} moved by {worst:.3g}; regenerate with make lab-heldout?"
    table = T.load(tmp_path / "held_out.json")
    failed = [name for name, ok in _claims_of(table, 0).items() if not ok]
    assert not failed, f"held-out seed {T.HELD_OUT_SEED}: {failed}"
