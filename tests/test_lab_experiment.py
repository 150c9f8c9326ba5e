"""lab.experiment: the harness for a learner's own question, tested with a stand-in for training.

The stand-in (``_stand_in``) returns accuracies from a formula instead of training, as
tests/test_lab_check_seeds.py does for check_seeds, so the table, the verdict on fresh seeds, the estimate and
its confirmation, and the named errors are tested in seconds. The rows are checked against a literal
computation: the answers n counted by hand from the tasks' definitions, SE = √(q(1 − q)/n) written out. One test
marked ``full`` trains tiny models for real through the lab's pool.
"""

from __future__ import annotations

import math
import sys
import types

import numpy as np
import pytest

from posenc_helpers.lab import claims as C
from posenc_helpers.lab import experiment as X
from posenc_helpers.lab import results

EVAL_BATCH = 32  # sequences per test batch (evaluate.EVAL_BATCH), written out for the literal counts
TIMING = {"step": 0.01, "compile": 2.0, "evaluate": 0.5, "start": 0.0}  # a stand-in for time_steps, in seconds


@pytest.fixture(autouse=True)
def _no_model_cache(monkeypatch):
    # the stand-in trains nothing, so the estimate must not find the lab's models in this machine's cache
    monkeypatch.setenv("POSENC_MODEL_CACHE", "off")


def _accuracy(name, seed, T, fresh_drop=0.0):
    # the stand-in's accuracy: ALiBi flat at 0.96, RoPE falling with T and with the seed, PI in between
    if name == "alibi":
        return 0.96
    if name == "rope":
        return max(0.0, 1.0 - (T / 32 - 1) * (0.1 + 0.02 * (seed % 3)))
    if name == "rope+pi":
        return 0.9 - fresh_drop
    raise AssertionError(name)


def _stand_in(fresh_drop=0.0):
    calls = []

    def measure(spec, scheme, seed, variants):
        task, L, lengths, steps, options = spec
        calls.append((scheme, seed, tuple(x.name for x in variants)))
        drop = fresh_drop if seed >= 1000 else 0.0  # fresh seeds are drawn from 1000-9999
        return {x.name: {"at_L": 1.0, "beyond": [_accuracy(x.name, seed, T, drop) for T in lengths]} for x in variants}

    return measure, calls


def _experiment(**kw):
    base = dict(
        schemes=["alibi", "rope", X.Variant("rope", method="pi")], task="prev", train_len=32, lengths=(64, 128), seeds=3,
        claims=[lambda v: v["rope+pi", 128] - 0.85], fresh=2, max_minutes=60.0,
    )
    return X.Experiment(**{**base, **kw})


def _run(experiment, measure, **kw):
    return X.run(experiment, workers=1, progress=False, measure=measure, timing=TIMING, **kw)


# ---- the table against a literal computation ----------------------------------------------------------


def test_the_table_is_the_literal_rows(capsys):
    measure, calls = _stand_in()
    out = _run(_experiment(), measure)
    # one training per (base scheme, seed): alibi and rope, 3 training seeds + 2 fresh; rope+pi shares rope's model
    assert len(calls) == 2 * 5
    assert sorted({(s, names) for s, _, names in calls}) == [("alibi", ("alibi",)), ("rope", ("rope", "rope+pi"))]
    expected = []
    for name in ("alibi", "rope", "rope+pi"):
        for seed in (0, 1, 2):
            # prev: position t is scored from t = 1; at L all 31 positions of each of 32 rows, past L the T - 32 last
            for T, positions, n, q in [(32, "all", EVAL_BATCH * 31, 1.0)] + [
                (T, "beyond", EVAL_BATCH * (T - 32), _accuracy(name, seed, T)) for T in (64, 128)
            ]:
                se = math.sqrt(q * (1 - q) / n)
                expected.append((name, seed, T, positions, q, n, se))
    got = [(r["scheme"], r["seed"], r["length"], r["positions"], r["accuracy"], r["n"], r["se"]) for r in out.table]
    got, expected = sorted(got, key=lambda r: r[:3]), sorted(expected, key=lambda r: r[:3])
    assert [r[:4] + (r[5],) for r in got] == [r[:4] + (r[5],) for r in expected]
    assert [x for r in got for x in (r[4], r[6])] == pytest.approx([x for r in expected for x in (r[4], r[6])], rel=1e-12)
    assert tuple(out.table.rows[0]) == X.COLUMNS
    printed = capsys.readouterr().out
    assert "10 models × 1000 steps" in printed and "about" in printed


def test_the_summary_is_median_and_range_over_seeds():
    measure, _ = _stand_in()
    summary = _run(_experiment(), measure).table.summary()
    values = [_accuracy("rope", s, 128) for s in (0, 1, 2)]  # 1 - 3·0.10, 1 - 3·0.12, 1 - 3·0.14
    assert summary["rope", 128] == pytest.approx((sorted(values)[1], min(values), max(values)))
    assert summary["alibi", 32] == (1.0, 1.0, 1.0)


def test_to_pandas_builds_a_dataframe_of_the_rows(monkeypatch):
    measure, _ = _stand_in()
    table = _run(_experiment(), measure).table
    made = []
    fake = types.ModuleType("pandas")
    fake.DataFrame = lambda rows, columns: made.append((rows, columns)) or "frame"
    monkeypatch.setitem(sys.modules, "pandas", fake)
    assert table.to_pandas() == "frame"
    assert made == [(list(table.rows), list(X.COLUMNS))]


def test_to_pandas_without_pandas_says_what_to_install(monkeypatch):
    measure, _ = _stand_in()
    table = _run(_experiment(), measure).table
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError, match=r"pip install pandas"):
        table.to_pandas()


def test_to_pandas_with_the_real_pandas():
    pd = pytest.importorskip("pandas")
    measure, _ = _stand_in()
    frame = _run(_experiment(), measure).table.to_pandas()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(X.COLUMNS) and len(frame) == 27


def test_the_figure_draws_the_median_over_seeds():
    measure, _ = _stand_in()
    fig, lines = _run(_experiment(), measure).figure(chance=1 / 16)
    y = lines["rope"].get_ydata()
    literal = [1.0] + [sorted(_accuracy("rope", s, T) for s in (0, 1, 2))[1] for T in (64, 128)]
    assert y.tolist() == pytest.approx(literal)
    assert lines["rope"].get_xdata().tolist() == [32, 64, 128]
    assert set(lines) == {"alibi", "rope", "rope+pi"}
    assert fig.axes[0].get_xlabel() == "test length T (tokens)"
    assert any(list(line.get_ydata()) == [1 / 16, 1 / 16] for line in fig.axes[0].lines)  # the chance line


def test_a_variant_never_takes_a_plain_schemes_colour():
    from posenc_helpers.viz import new_figure
    from posenc_helpers.viz.experiment import plot_experiment
    from posenc_helpers.viz.lab import SCHEME_STYLE

    names = ["t5", "alibi", "rope", "rope+pi", "rope+yarn"]  # T5's colour is the first spare one's otherwise
    rows = [{"scheme": s, "seed": 0, "length": T, "accuracy": 0.5} for s in names for T in (32, 64)]
    _, ax = new_figure()
    lines = plot_experiment(ax, rows, 32)
    colours = [lines[s].get_color() for s in names]
    assert len(set(colours)) == 5 and colours[:3] == [SCHEME_STYLE[s][1] for s in names[:3]]


# ---- the verdict, on the training seeds and on fresh seeds -------------------------------------------------


def test_a_claim_that_holds_everywhere():
    measure, _ = _stand_in()
    out = _run(_experiment(), measure)
    assert out.fresh_seeds is None and out.fresh_table is None  # not revealed before the verdict
    verdict = out.verdict()
    fresh = out.fresh_seeds
    assert len(fresh) == 2 and all(1000 <= s < 10000 for s in fresh) and not set(fresh) & set(results.SEEDS)
    assert {r["seed"] for r in out.table} == {0, 1, 2}
    assert {r["seed"] for r in out.fresh_table} == set(fresh)
    (line,) = verdict.lines
    # margin 0.9 - 0.85 = 0.05 on n = 32·96 = 3072 answers; SE at q = 0.85 (nearest 1/2 within the margin)
    se = math.sqrt(0.85 * 0.15 / (EVAL_BATCH * 96))
    assert line["training"] and line["fresh"] and not line["noise"] and verdict.holds
    assert line["report"].startswith("holds on 3/3 (closest: seed 0: margin +0.050") and f"{0.05 / se:.1f} SE" in line["report"]
    assert "and on the 2 fresh seeds" in line["report"]


def test_a_planted_failure_on_a_fresh_seed_is_shown_with_its_seed_and_margin():
    measure, _ = _stand_in(fresh_drop=0.1)  # PI scores 0.8 on every fresh seed, 0.9 on the training seeds
    out = _run(_experiment(), measure)
    verdict = out.verdict()
    (line,) = verdict.lines
    assert line["training"] and not line["fresh"] and not verdict.holds
    for seed in out.fresh_seeds:
        assert f"seed {seed}: margin -0.050" in line["report"]
    assert "but fails on 2 of the 2 fresh seeds: seed" in line["report"]
    assert str(verdict).startswith("✗ claim 1 (a lambda)")


def test_a_claim_within_four_se_is_flagged_as_noise():
    measure, _ = _stand_in()
    # RoPE at 2L: 0.9, 0.88, 0.86 on seeds 0, 1, 2; against 0.855 the closest margin is 0.005, under 1 SE
    claim = C.Claim("RoPE at 2L: at least 0.855 past L", lambda v: v["rope", 64] >= 0.855)
    verdict = _run(_experiment(claims=[claim]), measure).verdict()
    (line,) = verdict.lines
    assert str(verdict).startswith("≈ RoPE at 2L") and not verdict.holds
    assert line["training"] and line["noise"] and "too close for the course to state it" in line["report"]
    assert "closest: seed 2: margin +0.005" in line["report"]


def test_a_claim_that_fails_on_a_training_seed_names_it():
    measure, _ = _stand_in()
    claim = C.Claim("RoPE at 4L: at least 0.65 past L", lambda v: v["rope", 128] >= 0.65)  # 0.7, 0.64, 0.58
    (line,) = _run(_experiment(claims=[claim]), measure).verdict().lines
    assert not line["training"]
    assert "holds on 1/3; fails on seed 1: margin -0.010" in line["report"] and "seed 2: margin -0.070" in line["report"]


def test_spreads_and_shares_add_the_fresh_seeds(monkeypatch):
    # the stand-in's RoPE depends on seed % 3, so the fresh seeds are fixed here (1001 % 3 = 2, 1002 % 3 = 0):
    # drawn at random, two seeds with seed % 3 = 0 would move the median to 0.70 and fail the spread
    monkeypatch.setattr(X, "draw_fresh_seeds", lambda k, avoid=(): (1001, 1002)[:k])
    measure, _ = _stand_in(fresh_drop=0.3)
    spread = C.Spread("RoPE at 4L varies", lambda v: v["rope", 128], median=(0.6, 0.7), wide=0.1)
    share = C.Share("PI above 0.85 on most seeds", lambda v: v["rope+pi", 128] > 0.85, at_least=0.7)
    out = _run(_experiment(claims=[spread, share]), measure)
    s, h = out.verdict().lines
    assert s["kind"] == "spread" and s["training"] and s["report"].startswith("holds: median 0.64 [0.58–0.70] over 3 seeds")
    # the fresh seeds' RoPE is unchanged (seed % 3 varies), so the spread is checked over 5 seeds
    assert "added: median" in s["report"] and "over 5 seeds" in s["report"]
    # PI drops to 0.6 on both fresh seeds: 3 of 5 = 0.6 < 0.7
    assert h["kind"] == "share" and h["training"] and not h["fresh"] and "on 3 of 5 seeds (margin -0.100)" in h["report"]


# ---- the estimate and the confirmation ---------------------------------------------------------------


def test_the_estimate_is_its_formula():
    e = _experiment(schemes=["rope", X.Variant("rope", method="pi", finetune=64, finetune_steps=50)], seeds=4, fresh=1)
    timing = {"step": 0.02, "compile": 5.0, "evaluate": 1.5, "start": 4.0}
    est = X.estimate(e, workers=2, timing=timing)
    assert (est.models, est.cached, est.steps, est.finetune_steps, est.lines, est.workers) == (5, 0, 1000, 250, 10, 2)
    # 4 s to start; ⌈5/2⌉ = 3 rounds of 5 s compile + 1000 steps · 0.02 s; 250 fine-tune steps and 10 lines shared by 2
    assert est.minutes == pytest.approx((4 + 3 * (5 + 1000 * 0.02) + (250 * 0.02 + 10 * 1.5) / 2) / 60)
    assert X.estimate(e, workers=8, timing=timing).workers == 5  # never more workers than models
    with pytest.raises(ValueError, match="timing must have the keys"):
        X.estimate(e, timing={"step": 0.02})


@pytest.mark.parametrize(("answer", "runs"), [("y", True), ("yes", True), ("n", False), ("", False)])
def test_above_the_limit_it_asks(monkeypatch, answer, runs):
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or answer)
    measure, calls = _stand_in()
    e = _experiment(max_minutes=0.1)  # 10 models: 10 · (2 + 1000 · 0.01) s + 30 lines · 0.5 s = 2.25 min
    if runs:
        assert isinstance(_run(e, measure), X.Outcome)
    else:
        with pytest.raises(X.NotRun, match="above max_minutes = 0.1"):
            _run(e, measure)
        assert not calls
    assert len(asked) == 1 and "above max_minutes = 0.1" in asked[0]


def test_confirm_answers_without_asking(monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: pytest.fail("must not ask"))
    measure, calls = _stand_in()
    with pytest.raises(X.NotRun, match="confirm=True"):
        _run(_experiment(max_minutes=0.1), measure, confirm=False)
    assert not calls
    assert isinstance(_run(_experiment(max_minutes=0.1), measure, confirm=True), X.Outcome)
    assert isinstance(_run(_experiment(max_minutes=60), measure), X.Outcome)  # under the limit: no question


def test_in_cache_finds_the_model_train_stored(monkeypatch, tmp_path):
    from posenc_helpers.lab import train

    monkeypatch.setenv("POSENC_MODEL_CACHE", str(tmp_path))
    tiny = {"d_model": 16, "heads": 2, "layers": 1}
    e = X.Experiment(["alibi", "rope"], "prev", train_len=8, lengths=(16,), seeds=3, steps=3, options=tiny)
    assert not X.in_cache(e, "alibi", 1, one_thread=False)
    train("alibi", "prev", train_len=8, steps=3, seed=1, progress=False, **tiny)  # what measure_scheme trains, here
    assert X.in_cache(e, "alibi", 1, one_thread=False)
    assert not X.in_cache(e, "alibi", 1, one_thread=True)  # a worker's model is another entry
    assert not X.in_cache(e, "alibi", 2, one_thread=False) and not X.in_cache(e, "rope", 1, one_thread=False)
    other = X.Experiment(["alibi"], "prev", train_len=8, lengths=(16,), seeds=3, steps=3, options={**tiny, "lr": 1e-3})
    assert not X.in_cache(other, "alibi", 1, one_thread=False)
    est = X.estimate(e, workers=1, timing=TIMING)
    assert (est.models, est.cached) == (2 * 5 - 1, 1) and "1 read from the model cache" in str(est)


def test_nothing_to_train_needs_no_timing(monkeypatch):
    monkeypatch.setattr(X, "in_cache", lambda *a, **k: True)
    est = X.estimate(_experiment(fresh=0), workers=2, timing=None)  # None would time the model: it must not
    assert est.timing is None and est.minutes == 0
    assert str(est) == "nothing to train: 6 read from the model cache; 9 lines to score"


# ---- named errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "error", "message"),
    [
        ({"schemes": ["xpos"]}, ValueError, "scheme must be one of"),
        ({"schemes": "rope"}, TypeError, "write \\['rope'\\]"),
        ({"schemes": []}, ValueError, "at least one scheme"),
        ({"schemes": ["rope", "rope"]}, ValueError, "must not repeat a name"),
        ({"task": "copy"}, ValueError, "task must be one of"),
        ({"seeds": 2}, ValueError, "seeds must be at least 3 to state a median and a range"),
        ({"seeds": 3.0}, TypeError, "seeds must be a number of seeds"),
        ({"lengths": (32, 64)}, ValueError, "lengths must all exceed train_len = 32"),
        ({"lengths": ()}, ValueError, "at least one test length"),
        ({"fresh": -1}, ValueError, "fresh must be a number of fresh seeds"),
        ({"claims": ["not a claim"]}, TypeError, "claims must be"),
        ({"claims": [C.Claim("a", bool), C.Claim("a", bool)]}, ValueError, "distinct texts"),
        ({"options": {"seed": 3}}, ValueError, "options must not set \\['seed'\\]"),
        ({"max_minutes": 0}, ValueError, "max_minutes must be positive"),
        ({"schemes": [X.Variant("rope", method="pi", finetune=32)]}, ValueError, "finetune must exceed train_len = 32"),
    ],
)
def test_bad_experiments_are_refused_by_name(kw, error, message):
    with pytest.raises(error, match=message):
        _experiment(**kw)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"scheme": "alibi", "method": "pi"}, "needs scheme 'rope', got 'alibi'"),
        ({"scheme": "t5", "finetune": 64}, "finetune=64 rescales RoPE's frequencies"),
        ({"scheme": "rope", "method": "longrope"}, "method must be one of 'pi', 'ntk', 'yarn'"),
        ({"scheme": "rope", "factor": 2.0}, "factor is a rescaling's s, so it needs a method"),
        ({"scheme": "rope", "method": "pi", "factor": 0.5}, "factor must be at least 1"),
        ({"scheme": "rope", "label": ""}, "label must be a non-empty string"),
    ],
)
def test_bad_variants_are_refused_by_name(kw, message):
    with pytest.raises(ValueError, match=message):
        X.Variant(**kw)


def test_a_claim_that_raises_is_named_before_any_training():
    def pi_at_16l(v):
        """PI holds at 16L"""
        return v["rope+pi", 512] - 0.5

    measure, calls = _stand_in()
    with pytest.raises(ValueError, match=r"claim 'PI holds at 16L' raised KeyError: \('rope\+pi', 512\).*made-up"):
        _run(_experiment(claims=[pi_at_16l]), measure)
    assert not calls


def test_a_claim_that_raises_on_the_real_numbers_is_named():
    def odd(v):
        """RoPE never scores 0.9 at 2L"""
        if float(v["rope", 64]) == 0.9:  # seed 0's number; the made-up check passes
            raise ZeroDivisionError("planted")
        return v["rope", 64] - 0.5

    measure, _ = _stand_in()
    out = _run(_experiment(claims=[odd]), measure)
    with pytest.raises(ValueError, match=r"'RoPE never scores 0.9 at 2L' raised ZeroDivisionError: planted \(checked on seed 0"):
        out.verdict()


def test_a_claim_returning_neither_a_margin_nor_a_bool_is_named():
    measure, _ = _stand_in()
    with pytest.raises(ValueError, match="a claim function returns a margin"):
        _run(_experiment(claims=[lambda v: "yes"]), measure)


def test_run_refuses_other_arguments():
    measure, _ = _stand_in()
    with pytest.raises(TypeError, match="experiment must be"):
        X.run({"schemes": ["rope"]}, measure=measure, timing=TIMING)
    with pytest.raises(TypeError, match="confirm must be None"):
        _run(_experiment(), measure, confirm="y")


# ---- for real: tiny models through the pool ---------------------------------------------------------


@pytest.mark.full
def test_a_tiny_experiment_trains_for_real(capsys):
    tiny = {"d_model": 16, "heads": 2, "layers": 1}
    e = X.Experiment(["alibi", "rope", X.Variant("rope", method="pi")], "prev", train_len=8, lengths=(16,), seeds=3,
                     steps=50, options=tiny, fresh=1, claims=[lambda v: v["alibi", 16] - 0.0])
    out = X.run(e, workers=2, progress=False, confirm=True)
    assert len(out.table) == 3 * 3 * 2
    from posenc_helpers.lab import accuracy, train

    run = train("rope", "prev", train_len=8, steps=50, seed=1, progress=False, **tiny)
    row = next(r for r in out.table if (r["scheme"], r["seed"], r["length"]) == ("rope+pi", 1, 16))
    # the worker's model has one XLA thread; here, several: the same seed gives the same accuracy up to rounding
    assert row["accuracy"] == pytest.approx(float(accuracy(run, [16], seed=1, positions="beyond", method="pi")[0]), abs=0.01)
    assert out.verdict().lines[0]["training"]
    timing = X.time_steps(e, workers=2)
    assert sorted(timing) == sorted(X.TIMING_KEYS) and timing["step"] > 0 and timing["start"] > 0
    assert np.isfinite(out.estimate.minutes)
