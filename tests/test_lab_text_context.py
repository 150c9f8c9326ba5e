"""posenc_helpers.lab.text_context: context use and sliding windows against literal loops, properties, bad input, the file.

The literal references call the lab's ``forward`` on one window at a time and
pick each target's loss by hand, with no code of text_context: the windows are
cut from the validation string, the window that scores a character is found by
its own rule, and the block means are plain loops.
"""

from __future__ import annotations

import json
import math

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers.lab import text as T
from posenc_helpers.lab import text_context as C
from posenc_helpers.lab.model import forward

# the lab's forward, compiled once per window length (the loops below call it once per window)
_forward = jax.jit(forward, static_argnames=("config",))

TINY = dict(steps=2, train_len=8, d_model=16, heads=2, layers=1, progress=False)


@pytest.fixture(scope="module")
def runs():
    # two steps: the parameters hardly matter, only that the vectorised code and the loops agree
    out = {s: T.train(s, **TINY) for s in ("alibi", "rope", "learned")}
    # T5's 16 buckets need max_distance = L > 8 (model.Config), so its tiny model reads L = 16
    out["t5"] = T.train("t5", **{**TINY, "train_len": 16})
    return out


def _val():
    return T.split()[1]


def _losses(run, window):
    """Loss in bits at every position of one window (a list of ids), predicting the character after each."""
    logits = np.asarray(_forward(run.params, np.asarray(window[:-1], dtype=np.int32)[None], run.config)[0], np.float64)
    out = []
    for t, nxt in enumerate(window[1:]):
        row = logits[t]
        top = row.max()
        log_z = top + math.log(sum(math.exp(z - top) for z in row))
        out.append((log_z - row[nxt]) / math.log(2))
    return out


def _literal_sliding(run, length, stride, n_chars):
    val = _val().tolist()
    out, cache = [], {}
    for j in range(n_chars):  # the loss of character j + 1
        # the window that scores it: the first (a = 0) for j < T, else the one whose last `stride` targets hold j
        a = 0 if j < length else stride * math.ceil((j - length + 1) / stride)
        if a not in cache:
            cache[a] = _losses(run, val[a : a + length + 1])
        out.append(cache[a][j - a])
    return np.array(out)


def _literal_context(run, n_windows, factor):
    val = _val().tolist()
    L = run.train_len
    W = factor * L
    whole, last = [], []
    for w in range(n_windows):
        a = w * W
        full = _losses(run, val[a : a + W + 1])
        mine = []
        for t in range(W):
            if t < L:
                mine.append(full[t])
            else:  # the window of L characters ending at position t
                mine.append(_losses(run, val[a + t - L + 1 : a + t + 2])[-1])
        whole.append(full)
        last.append(mine)
    blocks = {"whole": [], "last_L": [], "gain": [], "gain_se": []}
    for k in range(factor):
        per_w = []
        for w in range(n_windows):
            f = sum(whole[w][k * L : (k + 1) * L]) / L
            g = sum(last[w][k * L : (k + 1) * L]) / L
            per_w.append((f, g))
        blocks["whole"].append(sum(f for f, _ in per_w) / n_windows)
        blocks["last_L"].append(sum(g for _, g in per_w) / n_windows)
        gains = [g - f for f, g in per_w]
        mean = sum(gains) / n_windows
        blocks["gain"].append(mean)
        sd = math.sqrt(sum((x - mean) ** 2 for x in gains) / (n_windows - 1))
        blocks["gain_se"].append(sd / math.sqrt(n_windows))
    return blocks


@pytest.mark.parametrize("scheme", ["alibi", "rope", "t5"])
def test_context_use_is_the_literal_loop_over_windows_and_positions(runs, scheme):
    run = runs[scheme]
    got = C.context_use(run, n_windows=2, factor=3)
    want = _literal_context(run, 2, 3)
    for name in ("whole", "last_L", "gain"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)
    np.testing.assert_allclose(got["gain_se"], want["gain_se"], rtol=1e-3, atol=1e-5)
    assert got["gain"][0] == 0.0  # block 0: the whole window is no longer than L


@pytest.mark.parametrize("scheme,length,stride", [("alibi", 16, 4), ("rope", 8, 1), ("t5", 16, 16)])
def test_sliding_is_the_literal_loop_over_windows(runs, scheme, length, stride):
    run = runs[scheme]
    got = C.sliding_nll(run, length, stride, n_chars=32)
    np.testing.assert_allclose(got, _literal_sliding(run, length, stride, 32), rtol=1e-4, atol=1e-5)
    assert C.sliding_bits(run, length, stride, 32) == pytest.approx(got.mean())


@settings(max_examples=12, deadline=None)
@given(length=st.sampled_from([8, 16]), windows=st.integers(1, 6), scheme=st.sampled_from(["alibi", "rope"]))
def test_stride_T_is_the_non_overlapping_evaluation(runs, length, windows, scheme):
    run = runs[scheme]
    n = windows * length
    # text's own non-overlapping windows, the first n / T of them
    want = T._window_nll(run, length, None)[:windows]
    np.testing.assert_allclose(C.sliding_nll(run, length, length, n), want.ravel(), rtol=1e-5, atol=1e-6)
    assert C.nonoverlapping_bits(run, length, n) == pytest.approx(want.mean(), rel=1e-6)


@settings(max_examples=12, deadline=None)
@given(stride=st.sampled_from([1, 2, 4, 8, 16]), windows=st.integers(1, 4))
def test_the_first_window_scores_every_target_whatever_the_stride(runs, stride, windows):
    run = runs["alibi"]
    n = 16 * windows
    first = T._window_nll(run, 16, None)[0]
    np.testing.assert_allclose(C.sliding_nll(run, 16, stride, n)[:16], first, rtol=1e-5, atol=1e-6)


def test_non_overlapping_over_the_whole_text_is_bits_per_char(runs):
    run = runs["rope"]
    n = (_val().size - 1) // 16 * 16
    assert C.nonoverlapping_bits(run, 16, n) == pytest.approx(T.bits_per_char(run, [16])[0], rel=1e-6)


def test_the_learned_table_past_L_is_nan_and_stated(runs):
    run = runs["learned"]
    use = C.context_use(run, n_windows=2, factor=2)
    assert np.isnan(use["whole"]).all() and np.isnan(use["gain"]).all() and np.isnan(use["gain_se"]).all()
    assert np.isfinite(use["last_L"]).all()  # windows of L it can read
    assert np.isnan(C.sliding_bits(run, 16, 4, 32)) and np.isfinite(C.sliding_bits(run, 8, 1, 32))


def test_row_reuses_the_stride_one_losses_and_orders_the_lengths(runs):
    run = runs["alibi"]
    r = C.row(run, n_windows=2, factor=8, n_chars=128)
    assert r["scheme"] == "alibi" and r["seed"] == 0 and len(r["sliding"]) == len(C.MULTIPLES) == 5
    assert r["sliding"][0] == pytest.approx(C.sliding_bits(run, 8, 1, 128), rel=1e-9)
    for m, (s, p) in zip(C.MULTIPLES, zip(r["sliding"], r["nonoverlapping"], strict=True), strict=True):
        assert p == pytest.approx(C.nonoverlapping_bits(run, 8 * m, 128), rel=1e-9)
        assert s == pytest.approx(C.sliding_bits(run, 8 * m, C.strides(8)[C.MULTIPLES.index(m)], 128), rel=1e-9)
    assert C.strides(8) == [1, 8, 8, 8, 8]


def test_bad_input_is_a_named_value_error(runs):
    run = runs["alibi"]
    with pytest.raises(ValueError, match="stride must be at least 1, got 0"):
        C.sliding_bits(run, 16, 0, 64)
    with pytest.raises(ValueError, match="stride must be at least 1, got -4"):
        C.sliding_bits(run, 16, -4, 64)
    with pytest.raises(ValueError, match="stride=32 must not exceed length=16"):
        C.sliding_bits(run, 16, 32, 64)
    with pytest.raises(ValueError, match="length=16 must be a multiple of stride=3"):
        C.sliding_bits(run, 16, 3, 64)
    with pytest.raises(ValueError, match="n_chars=8 is too small: it must hold at least one window of length=16"):
        C.sliding_bits(run, 16, 4, 8)
    with pytest.raises(ValueError, match="n_chars=40 must be a multiple of length=16"):
        C.sliding_bits(run, 16, 4, 40)
    with pytest.raises(ValueError, match="n_chars=99328 needs 99329 validation characters"):
        C.sliding_bits(run, 16, 4, 99_328)
    with pytest.raises(ValueError, match="stride must be an integer, got 2.0"):
        C.sliding_bits(run, 16, 2.0, 64)
    with pytest.raises(ValueError, match="length"):
        C.sliding_bits(run, 1, 1, 64)
    with pytest.raises(ValueError, match="n_windows must be at least 2, got 1"):
        C.context_use(run, n_windows=1)
    with pytest.raises(ValueError, match="factor must be at least 2, got 1"):
        C.context_use(run, factor=1)
    with pytest.raises(ValueError, match="n_windows=2000 windows of factor × L = 64 characters need 128001 validation"):
        C.context_use(run, n_windows=2000, factor=8)
    with pytest.raises(ValueError, match="n_chars=64 must be n_windows × factor × L = 128"):
        C.row(run, n_windows=2, factor=8, n_chars=64)
    with pytest.raises(TypeError, match="run must be a text run"):
        C.context_use("alibi")


def test_sweep_writes_the_file_with_seconds_and_load_average(tmp_path):
    # a stand-in for the job: the file's layout, not the models
    table = C.sweep((0, 1), schemes=("alibi", "learned"), workers=1, log=None, job=_fake_job)
    assert {"seconds_wall", "load_average", "versions", "strides", "lengths", "n_chars"} <= set(table)
    assert table["strides"] == [1, 64, 64, 64, 64] and table["lengths"] == [64, 128, 256, 512, 1024]
    path = tmp_path / "context.json"
    C.save(table, path)
    assert "NaN" not in path.read_text() and json.loads(path.read_text())["schemes"] == ["alibi", "learned"]
    back = C.load(path)
    assert back["gain"]["alibi"].shape == (2, 8) and back["sliding"]["learned"].shape == (2, 5)
    assert np.isnan(back["gain"]["learned"]).all() and back["gain"]["alibi"][1, 3] == 1.03


def _fake_job(scheme, seed):
    nan = float("nan") if scheme == "learned" else None
    gain = [nan if nan is not None else seed + k / 100 for k in range(8)]
    return {
        "scheme": scheme, "seed": seed, "seconds_wall": 0.0, "model_seconds_wall": 0.0,
        "blocks": {"whole": gain, "last_L": gain, "gain": gain, "gain_se": gain},
        "sliding": [2.0] * 5, "nonoverlapping": [2.1] * 5,
    }


# ---- the shipped file -----------------------------------------------------------------------------------------


def test_the_shipped_file_has_every_scheme_and_sweep_seed():
    table = C.load()
    assert table["seeds"] == list(C.SEEDS) == list(T.SEEDS[:3]) and sorted(table["schemes"]) == sorted(T.TEXT_SCHEMES)
    assert table["n_windows"] == C.N_WINDOWS and table["n_chars"] == C.N_CHARS == 64 * 8 * 64
    assert table["strides"] == C.strides(64) and table["lengths"] == [64 * m for m in C.MULTIPLES]
    assert table["seconds_wall"] > 0 and len(table["load_average"]) == 3
    for s in table["schemes"]:
        assert table["gain"][s].shape == (3, 8) and table["sliding"][s].shape == (3, 5), s
        if s == "learned":
            assert np.isnan(table["gain"][s]).all() and np.isnan(table["sliding"][s][:, 1:]).all()
        else:
            assert (table["gain"][s][:, 0] == 0).all() and np.isfinite(table["gain"][s]).all(), s


def test_the_stored_non_overlapping_numbers_agree_with_the_text_sweep_at_8L():
    # the first 64 windows of 8L are a third of the validation windows: close to, not equal to, text_results' bits
    ctx, res = C.load(), T.load()
    for s in ctx["schemes"]:
        if s == "learned":
            continue
        i, k = res["lengths"].index(512), [res["seeds"].index(seed) for seed in ctx["seeds"]]
        assert np.abs(ctx["nonoverlapping"][s][:, 3] - res["bits"][s][k, i]).max() < 0.1, s


def test_the_held_out_file_is_the_held_out_seed_only():
    table = C.load(C.HELD_OUT_PATH)
    assert table["seeds"] == [T.HELD_OUT_SEED] and sorted(table["schemes"]) == sorted(T.TEXT_SCHEMES)
