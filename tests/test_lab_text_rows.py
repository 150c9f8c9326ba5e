"""posenc_helpers.lab.text_rows and text.finetune(factor=): the text lab's rows kept block by block (issue 43).

Each block's loss (and the part of it past a position) is recomputed by hand from the text string and the model's
logits (the model itself is held to literal loops in test_lab_model.py); a rescaling and a fine-tune with s set for a
longer target by their losses with the frequencies and the temperature written out (YaRN's by the paper's formula).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from posenc_helpers.lab import text as T
from posenc_helpers.lab import text_context as C
from posenc_helpers.lab import text_rows as R
from posenc_helpers.lab.model import forward

TEXT = T.TEXT_PATH.read_text()
TINY = dict(train_len=8, d_model=16, heads=2, layers=1)


@pytest.fixture(scope="module")
def runs():
    return {s: T.train(s, steps=2, progress=False, **TINY) for s in ("rope", "learned")}


def literal_yarn(s, L=8, d=8, base=10000.0, alpha=1.0, beta=4.0):
    # Peng et al. 2023, "NTK-by-parts": r_k = L / λ_k turns of pair k within L, γ_k = clamp((r_k − α)/(β − α), 0, 1),
    # ω'_k = (1 − γ_k)·ω_k/s + γ_k·ω_k, with the lab's (α, β) = (1, 4) turns
    out = []
    for k in range(d // 2):
        w = base ** (-2 * k / d)
        gamma = min(max((L / (2 * math.pi / w) - alpha) / (beta - alpha), 0.0), 1.0)
        out.append((1 - gamma) * w / s + gamma * w)
    return np.array(out)


def _bits(run, inputs, nexts, omega=None, scale=1.0):
    # −log2 p(next character) at every position of one window, by hand from the logits
    logits = np.asarray(
        forward(run.params, T.encode(inputs)[None], run.config, omega=omega, logit_scale=scale)[0], dtype=np.float64
    )
    out = []
    for t, c in enumerate(nexts):
        p = np.exp(logits[t] - logits[t].max())
        out.append(-math.log2(p[T.VOCAB.index(c)] / p.sum()))
    return np.array(out)


def _literal_block(run, length, b, *, start=0, block=64, omega=None, scale=1.0):
    # block b of `block` targets, read in non-overlapping windows of `length`: the mean over positions ≥ start
    val_text = TEXT[T.split()[0].size :]
    bits = []
    for w in range(b * block // length, (b + 1) * block // length):
        inputs = val_text[w * length : (w + 1) * length]
        nexts = val_text[w * length + 1 : (w + 1) * length + 1]
        bits.extend(_bits(run, inputs, nexts, omega, scale)[start:])
    return float(np.mean(bits))


@pytest.mark.parametrize(("length", "start"), [(8, 0), (16, 5)])
def test_each_block_is_the_mean_of_its_windows_past_start_by_hand(runs, length, start):
    run = runs["rope"]  # length 16 = 2L with no method: RoPE's own frequencies, as at L
    got = R.block_bits(run, length, start=start, n_blocks=40, block=64)
    assert got.shape == (40,)
    for b in (0, 17, 39):
        assert got[b] == pytest.approx(_literal_block(run, length, b, start=start), rel=1e-4)
    if start == 0:  # over the same targets, the blocks' mean is the windows' mean
        want = T._window_nll(run, length, None)[: 40 * 64 // length].mean()
        assert got.mean() == pytest.approx(want, rel=1e-6)


def test_a_test_time_rescaling_is_read_with_its_frequencies_written_out(runs):
    run = runs["rope"]
    got = R.block_bits(run, 16, method="pi", n_blocks=3, block=64)
    omega = np.array([10000.0 ** (-2 * k / 8) / 2 for k in range(4)])  # PI at 2L: ω_k / 2, d = head_dim = 8
    assert got[1] == pytest.approx(_literal_block(run, 16, 1, omega=omega), rel=1e-4)
    assert got[1] != pytest.approx(R.block_bits(run, 16, n_blocks=3, block=64)[1], rel=1e-6)


def test_the_learned_table_past_L_is_nan_blocks(runs):
    assert np.isnan(R.block_bits(runs["learned"], 16, n_blocks=4, block=64)).all()
    assert not np.isnan(R.block_bits(runs["learned"], 8, n_blocks=4, block=64)).any()


def test_bad_blocks_are_refused_by_name(runs):
    rope = runs["rope"]
    for start in (-1, 8, 2.0, True):
        with pytest.raises(ValueError, match=f"start must be a position in 0 … 7, got {start!r}"):
            R.block_bits(rope, 8, start=start)
    with pytest.raises(ValueError, match="length=24 must divide block=1024"):
        R.block_bits(rope, 24)
    with pytest.raises(ValueError, match="n_blocks=200 blocks of 1024 need 204800 targets"):
        R.block_bits(rope, 8, n_blocks=200)
    with pytest.raises(ValueError, match="block must be an integer of at least 1, got 0"):
        R.block_bits(rope, 8, block=0)


def _first_loss(run, omega, scale):
    # step 0's loss of a fine-tune from seed 2 at 32 characters, with the frequencies and temperature written out
    tokens, target = T.batch(2, length=32, size=32)
    config = dataclasses.replace(run.config, train_len=32)
    logits = np.asarray(forward(run.params, tokens, config, omega=omega, logit_scale=scale), dtype=np.float64)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, target[..., None], -1).mean()


def test_a_pi_finetune_with_s_for_a_longer_target_uses_that_s_written_out(runs):
    rope = runs["rope"]
    ft = T.finetune(rope, length=32, method="pi", factor=8, steps=2, seed=2, progress=False)
    assert (ft.finetune_len, ft.method, ft.factor) == (32, "pi", 8.0)
    omega = np.array([10000.0 ** (-2 * k / 8) / 8 for k in range(4)])  # PI for s = 8, not the fine-tune's 4
    assert ft.losses[0] == pytest.approx(_first_loss(rope, omega, 1.0), rel=1e-5)
    # read with its own s = 8 at every length: at 8L that is what PI gives there, at 4L it is not PI's s = 4
    assert T.bits_per_char(ft, [64])[0] == T.bits_per_char(ft, [64], method="pi")[0]
    assert T.bits_per_char(ft, [32])[0] != T.bits_per_char(ft, [32], method="pi")[0]


def test_a_yarn_finetune_takes_its_ramp_and_temperature_from_s_not_the_finetune_length(runs):
    rope = runs["rope"]
    ft = T.finetune(rope, length=32, method="yarn", factor=8, steps=2, seed=2, progress=False)
    # YaRN for s = 8 from L = 8 with the lab's (α, β) = (1, 4) turns; temperature (0.1 ln 8 + 1)² on the logits
    omega = literal_yarn(8.0)
    assert T.YARN_BETA == (1.0, 4.0)
    assert ft.losses[0] == pytest.approx(_first_loss(rope, omega, (0.1 * math.log(8) + 1) ** 2), rel=1e-5)
    s4 = literal_yarn(4.0)
    assert ft.losses[0] != pytest.approx(_first_loss(rope, s4, (0.1 * math.log(4) + 1) ** 2), rel=1e-5)


def test_a_factor_needs_a_rescaling_and_covers_the_finetune(runs):
    rope = runs["rope"]
    for method in (None, "abf"):
        with pytest.raises(ValueError, match=f"needs method 'pi', 'ntk' or 'yarn', got factor=8 with method {method!r}"):
            T.finetune(rope, length=32, method=method, factor=8)
    with pytest.raises(ValueError, match="factor must be at least length / train_len = 4, got factor=3"):
        T.finetune(rope, length=32, method="yarn", factor=3)


@pytest.fixture
def tiny_row(runs, monkeypatch):
    # a row of the tiny RoPE model (L = 8), its fine-tunes 2 steps long, its context over 64 windows of 8L
    rope = runs["rope"]
    monkeypatch.setattr(T, "train", lambda scheme, **kw: rope)
    monkeypatch.setattr(T.finetune, "__kwdefaults__", {**T.finetune.__kwdefaults__, "steps": 2})
    monkeypatch.setattr(C, "N_CHARS", 64 * 8 * 8)
    return R.row(0, "rope"), rope


def test_a_row_keeps_every_curve_and_every_finetune_past_its_own_length(tiny_row):
    got, rope = tiny_row
    assert set(got["finetuned"]) == set(R.FINETUNES) == {
        "plain", "pi", "ntk", "yarn", "pi_s8", "ntk_s8", "yarn_s8", "pi_s16", "ntk_s16", "yarn_s16"}
    assert set(got["past"]) == {"rope", "scaled:pi", "scaled:ntk", "scaled:yarn"} | {f"finetuned:{n}" for n in R.FINETUNES}
    assert len(got["blocks"]) == len(T.FACTORS) and all(len(b) == R.N_BLOCKS for b in got["blocks"])
    assert all(len(b) == len(R.PAST_FACTORS) for b in got["past"].values())
    # "past" at 16L = 128: each block's mean over the positions 32 … 127 of its windows, by hand, with that
    # fine-tune's own rescaling (YaRN for s = 16 from L = 8, and its temperature)
    ft = T.finetune(rope, length=32, method="yarn", factor=16, progress=False)  # the row's, from the model cache
    omega = literal_yarn(16.0)
    want = _literal_block(ft, 128, 5, start=32, block=1024, omega=omega, scale=(0.1 * math.log(16) + 1) ** 2)
    assert R.block_bits(ft, 128, start=32)[5] == pytest.approx(want, rel=1e-4)
    assert got["past"]["finetuned:yarn_s16"][1][5] == pytest.approx(want, rel=1e-4)


def test_a_rows_context_keeps_what_a_paired_se_needs(tiny_row):
    got, rope = tiny_row
    ctx = got["context"]
    gains = np.array(ctx["gain_windows"])
    assert gains.shape == (64, 8)
    np.testing.assert_allclose(gains.mean(0), ctx["gain"], atol=2e-6)
    # sliding and non-overlapping windows block by block over the same 4,096 characters: their means are
    # text_context's numbers
    for k, m in enumerate(C.MULTIPLES):
        assert len(ctx["sliding_blocks"][k]) == 4
        plain = C.nonoverlapping_bits(rope, m * 8, n_chars=C.N_CHARS)
        assert np.mean(ctx["nonoverlapping_blocks"][k]) == pytest.approx(plain, abs=2e-6)


def test_the_stamp_names_the_settings_and_the_text(monkeypatch, tmp_path):
    before = R.row_stamp()
    monkeypatch.setattr(R, "PAST_FACTORS", (8,))
    assert R.row_stamp() != before
    monkeypatch.undo()
    other = tmp_path / "tragedies.txt"
    other.write_bytes(T.TEXT_PATH.read_bytes().replace(b"Cleopatra", b"Cleopatrb", 1))
    monkeypatch.setattr(T, "TEXT_PATH", other)
    assert R.row_stamp() != before


def test_the_sweep_refuses_the_held_out_seed_and_rows_of_other_code(monkeypatch):
    with pytest.raises(ValueError, match=f"holds the held-out seed {T.HELD_OUT_SEED}"):
        R.sweep((0, T.HELD_OUT_SEED))
    from posenc_helpers.lab import pool

    monkeypatch.setattr(pool, "resumable", lambda fn, jobs, **kw: {job: {"stamp": "0" * 16} for job in jobs})
    with pytest.raises(ValueError, match=r"rows computed by other code than stamp .*\(0, 'none'\): '0000000000000000'"):
        R.sweep((0,))


def test_jobs_are_checked():
    with pytest.raises(ValueError, match="each seed must be an integer of at least 0, got -1"):
        R.jobs((-1,))
    with pytest.raises(ValueError, match="'xpos' is not one of the text lab's"):
        R.jobs((0,), ("xpos",))


def _literal_band(run, length, b, a, z, *, block=64):
    # block b of `block` targets read in windows of `length`: the mean loss over positions a … z − 1 of each window
    val_text = TEXT[T.split()[0].size :]
    bits = []
    for w in range(b * block // length, (b + 1) * block // length):
        inputs = val_text[w * length : (w + 1) * length]
        nexts = val_text[w * length + 1 : (w + 1) * length + 1]
        bits.extend(_bits(run, inputs, nexts)[a:z])
    return float(np.mean(bits))


def test_a_band_is_the_mean_of_its_positions_in_each_window_by_hand(runs):
    run = runs["rope"]
    got = R.band_bits(run, 16, 9, 13, n_blocks=30, block=64)
    assert got.shape == (30,)
    for b in (0, 11, 29):
        assert got[b] == pytest.approx(_literal_band(run, 16, b, 9, 13), rel=1e-4)
    # a band from 0 to the window's end is the whole block
    np.testing.assert_allclose(R.band_bits(run, 16, 0, 16, n_blocks=30, block=64),
                               R.block_bits(run, 16, n_blocks=30, block=64), rtol=1e-12)
    assert np.isnan(R.band_bits(runs["learned"], 16, 0, 4, n_blocks=3, block=64)).all()


def test_bad_bands_are_refused_by_name(runs):
    rope = runs["rope"]
    with pytest.raises(ValueError, match="a=5 must be below z=5"):
        R.band_bits(rope, 16, 5, 5)
    with pytest.raises(ValueError, match="z must be a position in 0 … 16, got 17"):
        R.band_bits(rope, 16, 0, 17)
    with pytest.raises(ValueError, match="a must be a position in 0 … 16, got -1"):
        R.band_bits(rope, 16, -1, 4)
    with pytest.raises(ValueError, match="L must be a multiple of 32, got 8"):
        R.bands(rope)


def test_the_bands_are_the_claims_positions_at_L_and_each_its_band_bits():
    run = T.train("sinusoidal", steps=2, progress=False, train_len=32, d_model=16, heads=2, layers=1)
    got = R.bands(run)
    # at L = 32 the unit L/32 is one character, so the keys are BANDS' own numbers; at L = 64, 66:74 is 2 to 9
    # characters past L and 32:64 is [L/2, L)
    assert list(got) == ["33:37", "16:32", "32:48", "64:128", "32:256"]
    assert R.BANDS[0] == (33, 37) and R.BANDS[1] == (16, 32)
    for key in ("33:37", "64:128"):
        a, z = map(int, key.split(":"))
        np.testing.assert_allclose(got[key], R.band_bits(run, 256, a, z), rtol=1e-12)


def _stamped(seed, scheme):
    return {"seed": seed, "scheme": scheme, "stamp": R.row_stamp()}, {"seed": seed, "scheme": scheme,
                                                                      "stamp": R.band_stamp(), "bands": {}}


def test_the_block_file_keeps_rows_in_order_and_refuses_other_code(tmp_path):
    pairs = [_stamped(1, "rope"), _stamped(0, "t5"), _stamped(0, "none")]
    rows, bands = [p[0] for p in pairs], [p[1] for p in pairs]
    path = tmp_path / "blocks.json"
    R.save_blocks(rows, bands, path, hash="ab")
    back_rows, back_bands = R.load_blocks(path)
    assert [(r["seed"], r["scheme"]) for r in back_rows] == [(0, "none"), (0, "t5"), (1, "rope")]
    assert [(r["seed"], r["scheme"]) for r in back_bands] == [(0, "none"), (0, "t5"), (1, "rope")]
    import json

    doc = json.loads(path.read_text())
    assert (doc["seeds"], doc["hash"], doc["stamp"], doc["band_stamp"]) == ([0, 1], "ab", R.row_stamp(), R.band_stamp())
    with pytest.raises(ValueError, match="the same \\(seed, scheme\\) pairs"):
        R.save_blocks(rows, bands[:2], path)
    old = {**rows[0], "stamp": "0" * 16}
    with pytest.raises(ValueError, match="rows computed by other code \\(stamps \\['0000000000000000'\\]"):
        R.save_blocks([old, *rows[1:]], bands, path)


def test_held_out_rows_refuse_the_sweeps_seeds():
    with pytest.raises(ValueError, match=r"holds sweep seeds \[0\], not held-out ones"):
        R.held_out_rows([0, 4000])
    for bad in ([], [1.5], [-3], [True]):
        with pytest.raises(ValueError, match="seeds must be a non-empty list of non-negative integers"):
            R.held_out_rows(bad)


def test_the_held_out_seeds_come_from_the_claims_hash_and_skip_every_seed_seen(tmp_path):
    from posenc_helpers.lab import stats

    empty = tmp_path / "ledger.jsonl"
    empty.write_text("")
    digest, drawn, skip, seeds = R.ledger_seeds(empty)
    assert digest == stats.source_hash(R.CLAIMS_SOURCE)
    assert skip == sorted(set(T.SEEDS) | {9072, 1569, 1865, 2984}) and T.HELD_OUT_SEED in skip
    assert drawn == seeds == list(stats.held_out_seeds(digest, 3, exclude=skip))
    assert len(drawn) == R.HELD_OUT_SEEDS == 3 and not set(drawn) & set(skip)


def test_main_save_writes_the_kept_rows_and_band_rows(monkeypatch, capsys):
    a, b = _stamped(0, "none")
    monkeypatch.setattr(R, "sweep", lambda **kw: {(0, "none"): a})
    monkeypatch.setattr(R, "band_sweep", lambda **kw: {(0, "none"): b})
    saved = []
    monkeypatch.setattr(R, "save_blocks", lambda rows, bands, *args, **kw: saved.append((rows, bands)))
    R.main(["--save"])
    assert saved == [([a], [b])] and "1 rows and 1 band rows" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="usage: .*--bands \\| --save \\| --held-out"):
        R.main(["x"])
