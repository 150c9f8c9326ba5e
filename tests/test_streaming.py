"""posenc_helpers.streaming: the numpy text model against JAX's, each streaming setting against a literal loop,
the shipped float16 weights against the text sweep, and the claims on the sweep and on the held-out seed."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import literal_streaming as lit
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import streaming as S

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "posenc_helpers" / "data"


def _tiny(seed=1, layers=2, vocab=5, d_model=8, heads=2):
    return S.random_params(vocab=vocab, d_model=d_model, heads=heads, layers=layers, seed=seed)


# ---- the text, without JAX ---------------------------------------------------------------------------------


def test_vocabulary_and_validation_text_are_the_labs():
    T = pytest.importorskip("posenc_helpers.lab.text")
    assert S.vocab() == T.VOCAB
    assert np.array_equal(S.validation(), T.split()[1])
    assert np.array_equal(S.encode("To be, or not"), T.encode("To be, or not"))


def test_the_module_runs_with_jax_and_the_lab_blocked():
    code = ("import sys\n"
            "for name in ('jax', 'jaxlib', 'optax', 'posenc_helpers.lab'):\n"
            "    sys.modules[name] = None\n"
            "from posenc_helpers import streaming as S\n"
            "p = S.load_params(S.seeds()[0])\n"
            "tokens, _ = S.streams(1, 80)\n"
            "out = S.evaluate(p, tokens, heads=S.settings()['config']['heads'])\n"
            "assert set(out['bits']) == set(S.SETTINGS)\n"
            "print(len(S.results()['rows']), sorted(S.finetuned_bits(0)))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split("\n")[0] == "8 ['abf', 'ntk', 'pi', 'plain', 'yarn']"


# ---- the model -------------------------------------------------------------------------------------------------


def test_turn_is_the_courses_rope():
    from posenc_helpers.core import rope

    x = np.random.default_rng(0).standard_normal((5, 8))
    pos = np.arange(5) * 7.0
    cos, sin = S._angles(pos, 8, 10000.0)
    assert np.abs(S._turn(x, cos, sin) - rope(x, pos)).max() < 1e-12


@pytest.mark.parametrize("layers", [1, 2])
def test_forward_matches_the_literal_model(layers):
    p = _tiny(seed=layers, layers=layers)
    tokens = [3, 1, 4, 1, 0, 2, 2]
    logits, maps = S.forward(p, tokens, heads=2, return_attention=True)
    want, want_maps = lit.full(p, tokens, 2)
    assert np.abs(logits - np.array(want)).max() < 1e-9
    for layer in range(layers):
        for h in range(2):
            for i in range(len(tokens)):
                assert np.abs(maps[layer, h, i, : i + 1] - want_maps[layer][h][i]).max() < 1e-12
                assert (maps[layer, h, i, i + 1 :] == 0).all()


def test_numpy_forward_equals_the_jax_lab_on_the_shipped_weights():
    pytest.importorskip("jax")
    from posenc_helpers.lab.model import Config, forward

    p = S.load_params(S.seeds()[0])
    cfg = S.settings()["config"]
    config = Config(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in cfg.items()})
    tokens = S.validation()[: 4 * 64].reshape(4, 64)
    want = np.asarray(forward(p, tokens, config))
    for dtype in S.DTYPES:
        got = S.forward(p, tokens, heads=config.heads, base=config.base, dtype=dtype)
        # float32 tolerance: the logits reach about 15 in size; measured 2e-5
        assert np.abs(got - want).max() < 1e-4 * np.abs(want).max()


# ---- streaming against the literal loops ---------------------------------------------------------------------------


@pytest.mark.parametrize(("sinks", "positions"), [(0, "text"), (0, "cache"), (2, "text"), (2, "cache"), (1, "cache")])
def test_each_setting_matches_the_literal_loop(sinks, positions):
    p = _tiny(seed=sinks + 3)
    tokens = np.random.default_rng(sinks).integers(0, 5, 23)
    got = S.stream_bits(p, tokens, heads=2, cache=6, sinks=sinks, positions=positions)[0]
    want, _ = lit.stream(p, tokens.tolist(), 2, 6, sinks, positions)
    assert np.abs(got - want).max() < 1e-9


def test_recompute_matches_the_literal_windows():
    p = _tiny(seed=8)
    tokens = np.random.default_rng(8).integers(0, 5, (2, 15))
    got = S.recompute_bits(p, tokens, heads=2, cache=5, chunk=3)
    for row, ids in zip(got, tokens, strict=True):
        assert np.abs(row - lit.recompute(p, ids.tolist(), 2, 5)).max() < 1e-9


def test_evaluate_matches_the_literal_loops_bits_and_attention():
    p = _tiny(seed=4)
    tokens = np.random.default_rng(4).integers(0, 5, (2, 17))
    L, s = 6, 2
    out = S.evaluate(p, tokens, heads=2, cache=L, sinks=s)
    for i, ids in enumerate(tokens.tolist()):
        for name, (sinks, positions) in {"window": (0, "text"), "sinks": (s, "text"), "sinks_cache": (s, "cache")}.items():
            bits, weights = lit.stream(p, ids, 2, L, sinks, positions)
            assert np.abs(out["bits"][name][i] - bits).max() < 1e-9
            if sinks:
                # the weight on the sinks, per layer and head, averaged over the queries t ≥ L
                assert np.abs(out["sink_weight"][name][i] - np.mean(weights[L:], axis=0)).max() < 1e-12
        assert np.abs(out["bits"]["recompute"][i] - lit.recompute(p, ids, 2, L)).max() < 1e-9
        # (d)'s windows from scratch: the non-overlapping windows of L, queries 4 … L − 1
        first, first4 = [], []
        for w in range(len(ids) // L):
            _, maps = lit.full(p, ids[w * L : (w + 1) * L], 2)
            first.append([[np.mean([maps[la][h][q][0] for q in range(4, L)]) for h in range(2)] for la in range(2)])
            first4.append([[np.mean([sum(maps[la][h][q][:4]) for q in range(4, L)]) for h in range(2)] for la in range(2)])
        assert np.abs(out["first_weight"][i] - np.mean(first, axis=0)).max() < 1e-12
        assert np.abs(out["first4_weight"][i] - np.mean(first4, axis=0)).max() < 1e-12


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), cache=st.integers(2, 9), extra=st.integers(0, 8), layers=st.integers(1, 2),
       sinks=st.integers(0, 3), positions=st.sampled_from(S.POSITIONS))
def test_without_eviction_every_setting_is_the_full_forward(seed, cache, extra, layers, sinks, positions):
    p = _tiny(seed=seed, layers=layers)
    T = min(cache, 2 + extra) + 1  # at most cache + 1 tokens: cache predictions, nothing evicted
    tokens = np.random.default_rng(seed).integers(0, 5, T)
    full = S._bits(S.forward(p, tokens, heads=2)[:-1], tokens[1:])
    got = S.stream_bits(p, tokens, heads=2, cache=cache, sinks=min(sinks, cache - 1), positions=positions)[0]
    assert np.abs(got - full).max() < 1e-9
    assert np.abs(S.recompute_bits(p, tokens, heads=2, cache=cache)[0] - full).max() < 1e-9


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), cache=st.integers(2, 6), T=st.integers(8, 20))
def test_a_window_alone_is_the_same_at_text_and_at_cache_positions(seed, cache, T):
    # RoPE sees only q·k's distance: keys turned at their text positions (the fast code, position up to T) give the
    # logits of keys turned at their cache slots 0 … L − 1 (the literal loop), up to rounding
    p = _tiny(seed=seed)
    tokens = np.random.default_rng(seed).integers(0, 5, T)
    text = S.stream_bits(p, tokens, heads=2, cache=cache, positions="text")[0]
    slots, _ = lit.stream(p, tokens.tolist(), 2, cache, 0, "cache")
    assert np.abs(text - slots).max() < 1e-9


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), cache=st.integers(3, 7), T=st.integers(9, 20), sinks=st.integers(1, 2))
def test_sinks_change_nothing_until_the_first_eviction_and_positions_matter_only_for_sinks(seed, cache, T, sinks):
    p = _tiny(seed=seed)
    tokens = np.random.default_rng(seed).integers(0, 5, T)
    a = S.stream_bits(p, tokens, heads=2, cache=cache)[0]
    b = S.stream_bits(p, tokens, heads=2, cache=cache, sinks=sinks, positions="text")[0]
    c = S.stream_bits(p, tokens, heads=2, cache=cache, sinks=sinks, positions="cache")[0]
    assert np.abs(a[:cache] - b[:cache]).max() < 1e-12 and np.abs(b[:cache] - c[:cache]).max() < 1e-12
    assert (a > 0).all() and (b > 0).all() and (c > 0).all()
    # once the cache rolls, keeping sinks changes the bits (a random model attends to every key)
    assert np.abs(a[cache:] - b[cache:]).max() > 1e-6 and np.abs(b[cache + 1 :] - c[cache + 1 :]).max() > 1e-6


def test_float32_agrees_with_float64():
    p = _tiny(seed=2)
    tokens = np.random.default_rng(2).integers(0, 5, (2, 40))
    a = S.evaluate(p, tokens, heads=2, cache=8, sinks=2)
    b = S.evaluate(p, tokens, heads=2, cache=8, sinks=2, dtype=np.float32)
    for name in S.SETTINGS:
        assert np.abs(a["bits"][name] - b["bits"][name]).max() < 1e-4


def test_streams_are_spread_and_do_not_overlap():
    tokens, offsets = S.streams()
    assert tokens.shape == (S.STREAMS, S.STREAM_CHARS) and S.STREAM_CHARS >= 16 * S.CACHE
    assert offsets[0] == 0 and offsets[-1] == S.validation().size - S.STREAM_CHARS
    assert (np.diff(offsets) >= S.STREAM_CHARS).all()
    val = S.validation()
    assert all(np.array_equal(t, val[o : o + S.STREAM_CHARS]) for t, o in zip(tokens, offsets, strict=True))


# ---- the shipped weights ---------------------------------------------------------------------------------------


def test_settings_file_is_the_text_labs_training():
    T = pytest.importorskip("posenc_helpers.lab.text")
    s = S.settings()
    assert s["defaults"] == T.DEFAULTS
    assert tuple(s["seeds"]) == T.SEEDS and T.HELD_OUT_SEED not in s["seeds"]
    assert s["vocab"] == T.VOCAB and s["vocab_size"] == len(T.VOCAB)
    assert s["scheme"] == "rope" and s["base"] == 10000.0 and s["dtype"] == "float16"
    assert s["config"]["heads"] == T.DEFAULTS["heads"] and s["config"]["train_len"] == T.DEFAULTS["train_len"]
    assert len(s["code_version"]) == 64 and "make lab-inference" in s["command"]
    assert {"jax", "numpy"} <= set(s["versions"])


def test_shipped_files_are_float16_listed_with_their_checksums_and_small():
    files = S.settings()["files"]
    assert sorted(files) == sorted(f"seed_{s}.npz" for s in S.seeds())
    total = 0
    for name, info in files.items():
        data = (DATA / "text_rope" / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"] and len(data) == info["bytes"]
        total += len(data)
        with np.load(DATA / "text_rope" / name) as npz:
            assert {a.dtype for a in npz.values()} == {np.dtype(np.float16)}
    assert total < 2_000_000


def test_write_params_round_trips_and_gives_the_same_bytes(tmp_path):
    p = S.load_params(S.seeds()[0])
    size = S.write_params(tmp_path / "a.npz", p)
    again = S.write_params(tmp_path / "b.npz", p)
    assert size == again and (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    # the shipped file is float16, so writing its own weights again is lossless
    assert (tmp_path / "a.npz").read_bytes() == (DATA / "text_rope" / "seed_0.npz").read_bytes()


def test_the_wheel_ships_the_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["posenc_helpers"]
    new = [p.relative_to(ROOT / "posenc_helpers").as_posix() for p in (DATA / "text_rope").iterdir()]
    new += ["data/inference_results.json", "data/inference_results_heldout.json"]
    for name in new:
        assert any(fnmatch.fnmatch(name, g) for g in globs), name


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 7, 9627])
def test_float16_model_reads_the_validation_text_as_the_sweep_did(seed):
    # text_results.json's "bits"[0]: the float32 JAX model on non-overlapping windows of L; the float16 weights,
    # in numpy (float32), land within 0.002 bit (measured: at most 0.00005 on the 8 seeds)
    table = json.loads((ROOT / "posenc_helpers" / "lab" / "text_results.json").read_text())
    want = next(r["bits"][0] for r in table["rows"] if r["scheme"] == "rope" and r["seed"] == seed)
    got = S.bits_at_length(S.load_params(seed), 64, heads=4, dtype=np.float32)
    assert abs(got - want) < 0.002


def _retrain_text_rope(seed):
    # one text RoPE model as tools/inference_lab.py trained it: in a worker of the lab's pool, never from the cache
    import os

    from posenc_helpers.lab import text as T

    os.environ["POSENC_MODEL_CACHE"] = "off"
    return T.train("rope", seed=seed, progress=False, cache=False).params


@pytest.mark.full
def test_a_retrained_model_is_its_shipped_file():
    """Bit for bit after float16 rounding where the shipped models' fingerprint is this machine's; elsewhere the
    retrained model reads the validation text within the shipped seeds' spread (tests/lab_rows.py)."""
    pytest.importorskip("posenc_helpers.lab.text")
    from lab_rows import same_machine, say_another_machine, within_spread

    from posenc_helpers.lab.pool import pool_map

    seed = S.seeds()[0]
    (params,) = pool_map(_retrain_text_rope, [(seed,)], workers=2)
    shipped = S.load_params(seed)
    exact, reason = same_machine(DATA / "text_rope" / "settings.json")
    if exact:
        # training is deterministic on one machine: the retrained weights rounded to float16 are the file's
        for name, a in S._flatten(params).items():
            assert np.array_equal(np.asarray(a, np.float16).astype(np.float32), S._flatten(shipped)[name]), name
        return
    say_another_machine("text_rope", reason)
    rounded = jax_free_tree(params)
    got = S.bits_at_length(rounded, 64, heads=4, dtype=np.float32)
    shipped_bits = [S.bits_at_length(S.load_params(s), 64, heads=4, dtype=np.float32) for s in S.seeds()]
    assert within_spread(got, shipped_bits, floor=0.02), (got, shipped_bits)


def jax_free_tree(params):
    """The retrained parameters as float16-rounded numpy arrays, as the shipped files hold them."""
    if isinstance(params, dict):
        return {k: jax_free_tree(v) for k, v in params.items()}
    if isinstance(params, (list, tuple)):
        return [jax_free_tree(v) for v in params]
    return np.asarray(params, np.float16).astype(np.float32)


# ---- named errors ----------------------------------------------------------------------------------------------


def test_bad_arguments_are_refused_by_name():
    p = _tiny()
    x = np.arange(10) % 5
    with pytest.raises(ValueError, match="seed must be one of the shipped seeds"):
        S.load_params(9072)
    with pytest.raises(ValueError, match="positions must be one of 'text', 'cache', got 'slot'"):
        S.stream_bits(p, x, heads=2, cache=4, positions="slot")
    with pytest.raises(ValueError, match="sinks < cache"):
        S.stream_bits(p, x, heads=2, cache=4, sinks=4)
    with pytest.raises(ValueError, match="sinks must be a non-negative integer"):
        S.stream_bits(p, x, heads=2, cache=4, sinks=-1)
    with pytest.raises(ValueError, match=r"tokens must lie in 0 … 4"):
        S.stream_bits(p, x + 1, heads=2, cache=4)
    with pytest.raises(TypeError, match="tokens must be integer token ids"):
        S.forward(p, [0.5, 1.0], heads=2)
    with pytest.raises(ValueError, match=r"tokens must have shape \(T,\) or \(batch, T\) with T ≥ 2"):
        S.recompute_bits(p, [1], heads=2)
    with pytest.raises(ValueError, match="heads must split d_model = 8"):
        S.forward(p, x, heads=3)
    with pytest.raises(ValueError, match="dtype must be numpy.float64 or numpy.float32"):
        S.forward(p, x, heads=2, dtype=np.float16)
    with pytest.raises(ValueError, match="params must be the lab's nested dict"):
        S.forward({"embed": p["embed"]}, x, heads=2)
    with pytest.raises(ValueError, match="evaluate needs sinks ≥ 1 and streams longer than cache"):
        S.evaluate(p, x, heads=2, cache=4, sinks=0)
    with pytest.raises(ValueError, match="length must fit in the 99328 ids"):
        S.streams(2, 10**6)
    with pytest.raises(TypeError, match="held_out must be True or False"):
        S.results("yes")
    with pytest.raises(ValueError, match="characters outside the vocabulary"):
        S.encode("é")
    with pytest.raises(ValueError, match="seed must be one of"):
        S.finetuned_bits(9072)
    with pytest.raises(ValueError, match="float16 cannot store"):
        S.write_params("/dev/null", {**p, "embed": p["embed"] * 1e6})


# ---- the claims ------------------------------------------------------------------------------------------------


def test_every_claim_holds_on_every_sweep_seed_by_more_than_its_noise():
    views = S.rows()
    assert sorted(views) == sorted(S.seeds())
    for text, m in S.margins(views).items():
        assert m["k"] == m["n"] == 8, text
        assert m["ratio"] >= S.NOISE_RATIO, (text, m)
        assert m["low"] <= m["median"] <= m["high"]


def test_every_claim_holds_on_the_held_out_seed():
    held = S.rows(held_out=True)
    assert list(held) == [9072] and not set(held) & set(S.seeds())
    failed = {text: by_seed for text, by_seed in S.check(held).items() if not all(by_seed.values())}
    assert not failed, S.report(held)


def _planted(view, **bits):
    out = {**view, "bits": {**view["bits"], **bits}, "finetuned": dict(view["finetuned"])}
    return out


def test_a_planted_bad_row_fails_the_claims():
    view = S.rows()[0]
    b = view["bits"]
    # StreamingLLM's paper: the window alone collapses, sinks at cache positions repair it
    paper = _planted(view, window=b["recompute"] + 2.0)
    assert {c.text[:2] for c in S.CLAIMS if not c.holds(paper)} == {"S1", "S4"}
    # sinks at text positions as good as recomputation
    assert not S.CLAIMS[1].holds(_planted(view, sinks=b["recompute"] + 0.01))
    # a head that dumps its attention on the first token
    sink = {**view, "first_weight": view["first_weight"].copy()}
    sink["first_weight"][:, 1, 2] = 0.6
    assert not S.CLAIMS[4].holds(sink)
    # ABF swapped with PI
    swapped = {**view, "finetuned": {**view["finetuned"], "abf": view["finetuned"]["pi"]}}
    assert {c.text[:2] for c in S.CLAIMS if not c.holds(swapped)} >= {"F1", "F2", "F3"}


def test_claims_read_what_they_say():
    view = S.rows()[0]
    # S1 by hand: the mean over the 16 streams of (a) − (d)
    diff = np.array(S.results()["rows"][0]["bits"]["window"]) - np.array(S.results()["rows"][0]["bits"]["recompute"])
    assert S.CLAIMS[0].value(view) == pytest.approx(diff.mean())
    # F4 by hand: ABF tuned minus plain tuned at 16L, text_results.json's plain row
    table = json.loads((ROOT / "posenc_helpers" / "lab" / "text_results.json").read_text())
    plain = next(r["finetuned"]["plain"][4] for r in table["rows"] if r["scheme"] == "rope" and r["seed"] == 0)
    assert S.CLAIMS[10].value(view) == pytest.approx(S.results()["rows"][0]["abf"]["bits"][4] - plain)
    assert S.uniform_share(4, first_query=63) == 4 / 64
    assert S.uniform_share(1) == pytest.approx(sum(1 / (i + 1) for i in range(4, 64)) / 60)


def test_the_stored_rows_are_what_the_code_computes_from_the_shipped_files():
    table = S.results()
    tokens, offsets = S.streams()
    assert table["settings"]["offsets"] == offsets.tolist() and table["seeds"] == list(S.seeds())
    assert (table["settings"]["cache"], table["settings"]["sinks"]) == (S.CACHE, S.SINKS)
    row = table["rows"][0]
    out = S.evaluate(S.load_params(row["seed"]), tokens[:2], heads=4, dtype=np.float32)
    for name in S.SETTINGS:
        assert np.abs(out["bits"][name][:, S.CACHE :].mean(1) - row["bits"][name][:2]).max() < 1e-4, name
    assert np.abs(out["first_weight"] - np.array(row["first_weight"][:2])).max() < 1e-4
    assert np.abs(out["sink_weight"]["sinks"] - np.array(row["sink_weight"]["sinks"][:2])).max() < 1e-4


def test_the_held_out_model_read_the_validation_text_as_the_text_labs_held_out_row():
    # the held-out model is not shipped; its row's bits at L (float16-rounded weights) against the lab's JAX row
    lab = json.loads((ROOT / "posenc_helpers" / "lab" / "text_results_heldout.json").read_text())
    want = next(r["bits"][0] for r in lab["rows"] if r["scheme"] == "rope")
    (row,) = S.results(held_out=True)["rows"]
    assert abs(row["bits_at_L"] - want) < 0.002 and "not shipped" in S.results(held_out=True)["settings"]["weights"]
