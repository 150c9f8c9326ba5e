"""posenc_helpers.base_bound against literal loops (tests/literal_base_bound.py), properties, the paper's table, errors.

Men et al. 2024, "Base of RoPE Bounds Context Length" (arXiv 2405.14591): B_{m,θ} = Σ_i cos(m·θ_i) (Eq. 9),
L_θ = sup{L | B_{m,θ} ≥ 0 ∀ m ∈ [0, L]} (Eq. 10), base_L = inf{base | B_{m,θ} ≥ 0 ∀ m ∈ [0, L]} (Eq. 11), and
Table 2 (context length → lower bound of the base).
"""

from __future__ import annotations

import ast
import json
import math
import pathlib
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from literal_base_bound import literal_first_negative, literal_min_abs, literal_sum, literal_thetas

from posenc_helpers import base_bound as bb
from posenc_helpers.configs import bundled_configs

ROOT = pathlib.Path(__file__).resolve().parents[1]

bases = st.floats(min_value=1.5, max_value=1e7, allow_nan=False)
dims = st.sampled_from([4, 6, 8, 16, 32, 64, 128])


# ---------------------------------------------------------------------------------------------
# B_{m,θ} and the first negative m, against the literal loops
# ---------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(base=bases, d=dims, m=st.lists(st.floats(min_value=-1e5, max_value=1e5, allow_nan=False), min_size=1, max_size=5))
def test_long_term_sum_matches_literal(base, d, m):
    got = bb.long_term_sum(base, m, head_dim=d)
    want = [literal_sum(literal_thetas(base, d), x) for x in m]
    assert got.shape == (len(m),)
    assert np.allclose(got, want, atol=1e-8, rtol=0)


def test_long_term_sum_of_an_inv_freq_array():
    # cos(2·0.5) + cos(2·0.25) + cos 0
    want = math.cos(1.0) + math.cos(0.5) + 1.0
    assert float(bb.long_term_sum([0.5, 0.25, 0.0], 2)) == pytest.approx(want, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(base=st.floats(min_value=2.0, max_value=2e5, allow_nan=False), d=st.sampled_from([4, 8, 16, 32]),
       context=st.integers(min_value=0, max_value=1500))
def test_first_negative_matches_literal(base, d, context):
    thetas = literal_thetas(base, d)
    want = literal_first_negative(thetas, context)
    # a B_m within rounding of 0 could fall either side: only compare clear cases
    assume(literal_min_abs(thetas, context if want is None else want) > 1e-9)
    assert bb.first_negative(base, context, head_dim=d) == want
    assert bb.passes(base, context, head_dim=d) == (want is None)


def test_first_negative_over_a_long_range_matches_literal_at_its_witness():
    # Llama 2's shape (d = 128, base 10,000) over 1,000,000 positions: the first negative m, and B ≥ 0 before it
    m = bb.first_negative(10000.0, 10**6, head_dim=128)
    thetas = literal_thetas(10000.0, 128)
    assert m is not None and literal_sum(thetas, m) < 0
    assert literal_first_negative(thetas, m) == m


def test_the_briefs_example_the_passing_bases_are_not_an_interval():
    # head_dim 16, context 256: 8,620 passes and 10,000 fails (literal)
    assert literal_first_negative(literal_thetas(8620.0, 16), 256) is None
    assert literal_first_negative(literal_thetas(10000.0, 16), 256) is not None
    assert bb.passes(8620.0, 256, head_dim=16) and not bb.passes(10000.0, 256, head_dim=16)


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(base=bases, d=dims, m=st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_sum_is_even_in_m_and_bounded(base, d, m):
    plus, minus = bb.long_term_sum(base, m, head_dim=d), bb.long_term_sum(base, -m, head_dim=d)
    assert float(plus) == float(minus)
    assert -d / 2 - 1e-12 <= float(plus) <= d / 2 + 1e-12


@settings(max_examples=50, deadline=None)
@given(base=bases, d=dims)
def test_sum_at_zero_is_the_number_of_pairs(base, d):
    assert float(bb.long_term_sum(base, 0, head_dim=d)) == d / 2


@settings(max_examples=40, deadline=None)
@given(inv=st.lists(st.floats(min_value=0.0, max_value=2.0, allow_nan=False), min_size=1, max_size=8),
       m=st.floats(min_value=-1e4, max_value=1e4, allow_nan=False))
def test_a_position_free_pair_adds_exactly_one(inv, m):
    with_free = bb.long_term_sum([*inv, 0.0], m)
    assert float(with_free) == pytest.approx(float(bb.long_term_sum(inv, m)) + 1.0, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(base=st.floats(min_value=2.0, max_value=1e6, allow_nan=False), d=st.sampled_from([8, 16, 64]),
       a=st.integers(min_value=0, max_value=3000), b=st.integers(min_value=0, max_value=3000))
def test_first_negative_does_not_depend_on_how_far_one_looks(base, d, a, b):
    short, long_ = sorted((a, b))
    first_long = bb.first_negative(base, long_, head_dim=d)
    first_short = bb.first_negative(base, short, head_dim=d)
    if first_long is not None and first_long <= short:
        assert first_short == first_long
    else:
        assert first_short is None


# ---------------------------------------------------------------------------------------------
# The bound: smallest passing base, the floor, the certified base, scans
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("context", "d"), [(64, 16), (256, 16), (300, 8), (1024, 32)])
def test_base_lower_bound_passes_and_a_hair_below_fails(context, d):
    got = bb.base_lower_bound(context, d, step=0.01, rtol=1e-9)
    assert literal_first_negative(literal_thetas(got, d), context) is None
    assert literal_first_negative(literal_thetas(got * (1 - 3e-9), d), context) is not None


def test_every_grid_base_below_the_bound_fails():
    # the grid floor·1.01^j below the result, each checked by the literal loop
    context, d, step = 256, 16, 0.01
    got = bb.base_lower_bound(context, d, step=step)
    floor = bb.floor_base(context, d)
    j = 0
    while floor * (1 + step) ** j < got * (1 - 1e-6):
        assert literal_first_negative(literal_thetas(floor * (1 + step) ** j, d), context) is not None
        j += 1
    assert j > 100


@pytest.mark.parametrize(("context", "d"), [(2, 16), (3, 16), (256, 16), (1024, 128), (50, 4)])
def test_floor_base_is_where_b2_and_b3_turn_non_negative(context, d):
    floor = bb.floor_base(context, d)
    ms = [m for m in (2, 3) if m <= context]
    above, below = literal_thetas(floor, d), literal_thetas(floor * (1 - 1e-9), d)
    assert all(literal_sum(above, m) >= 0 for m in ms)
    assert any(literal_sum(below, m) < 0 for m in ms)


@settings(max_examples=15, deadline=None)
@given(context=st.integers(min_value=2, max_value=600), d=st.sampled_from([6, 8, 16]),
       factor=st.floats(min_value=1.0, max_value=50.0))
def test_every_base_above_the_certified_one_passes(context, d, factor):
    base = bb.certified_base(context, d) * factor
    assert literal_first_negative(literal_thetas(base, d), context) is None


def test_certified_base_for_head_dim_4_uses_the_exact_minimum_of_cos_m():
    # d = 4: B_m = cos m + cos(m·θ_1); with the θ_0 pair at −1 the bound would never reach 0
    base = bb.certified_base(100, 4)
    assert literal_first_negative(literal_thetas(base, 4), 100) is None


def test_scan_bases_matches_literal_and_counts_alternations():
    scan = bb.scan_bases(256, 16, 8000.0, 12500.0, step=0.01)
    want = [literal_first_negative(literal_thetas(float(b), 16), 256) for b in scan.bases]
    assert scan.first_negative.tolist() == [-1 if m is None else m for m in want]
    passing = [m is None for m in want]
    swaps = sum(1 for x, y in zip(passing, passing[1:], strict=False) if x != y)
    assert scan.alternations == swaps >= 3          # fail, pass, fail, pass: not one threshold
    assert scan.smallest_passing == float(scan.bases[passing.index(True)])
    assert np.allclose(scan.bases[1:] / scan.bases[:-1], 1.01)


def test_pass_summary_at_head_dim_16():
    s = bb.pass_summary(256, 16, step=0.01)
    assert s.smallest < s.stable < s.certified == s.up_to
    assert s.failing_above > 0
    # every grid base from stable up to the certified base passes; a hair below stable fails (literal)
    assert literal_first_negative(literal_thetas(s.stable, 16), 256) is None
    assert literal_first_negative(literal_thetas(s.stable * (1 - 3e-9), 16), 256) is not None
    grid = s.stable * 1.01 ** np.arange(0, int(math.log(s.certified / s.stable) / math.log(1.01)), 25)
    assert all(literal_first_negative(literal_thetas(float(b), 16), 256) is None for b in grid)


def test_pass_summary_stops_at_up_to():
    s = bb.pass_summary(256, 16, step=0.01, up_to=20000.0)
    assert s.up_to == 20000.0 and s.stable <= 20000.0 * 1.01


# ---------------------------------------------------------------------------------------------
# Men et al.'s Table 2 (head_dim 128; "1k" read as 1,024), compared
# ---------------------------------------------------------------------------------------------

# Table 2 as printed: https://arxiv.org/abs/2405.14591 (§4.3). The paper states neither d nor whether 1k = 1,000.
TABLE_2 = {"1k": 4.3e3, "2k": 1.6e4, "4k": 2.7e4, "8k": 8.4e4, "16k": 3.1e5, "32k": 6.4e5, "64k": 2.1e6, "128k": 7.8e6,
           "256k": 3.6e7, "512k": 6.4e7, "1M": 5.1e8}


def test_table_2_is_the_module_constant():
    assert dict(bb.PAPER_TABLE_2) == TABLE_2
    assert [k for k, _ in bb.PAPER_TABLE_2] == list(TABLE_2)


@pytest.mark.parametrize(("label", "context"), [("1k", 1024), ("4k", 4096), ("8k", 8192)])
def test_table_2_agrees_to_two_significant_digits(label, context):
    got = bb.base_lower_bound(context, 128)
    assert float(f"{got:.1e}") == TABLE_2[label]


def test_table_2_at_2k_is_the_first_passing_two_digit_base_not_the_smallest():
    # the smallest passing base is 1.16e4; 1.2e4 … 1.5e4 fail and 1.6e4 passes (checked at every m by the loop)
    got = bb.base_lower_bound(2048, 128)
    assert float(f"{got:.2e}") == 1.16e4
    for base in (1.2e4, 1.3e4, 1.4e4, 1.5e4):
        m = bb.first_negative(base, 2048, head_dim=128)
        assert m is not None and literal_sum(literal_thetas(base, 128), m) < 0
    assert literal_first_negative(literal_thetas(1.6e4, 128), 2048) is None


@pytest.mark.parametrize(("label", "context", "ours"), [("16k", 16384, 2.3e5), ("32k", 32768, 6.3e5)])
def test_table_2_printed_value_fails_where_ours_passes(label, context, ours):
    got = bb.base_lower_bound(context, 128)
    assert float(f"{got:.1e}") == ours
    m = bb.first_negative(TABLE_2[label], context, head_dim=128)
    assert m is not None and literal_sum(literal_thetas(TABLE_2[label], 128), m) < 0


@pytest.mark.parametrize(("label", "context"), [("4k", 4096), ("128k", 131072), ("256k", 262144),
                                              ("512k", 524288), ("1M", 1048576)])
def test_table_2_printed_values_fail_at_their_own_context(label, context):
    # read as 1,024-multiples: B_m < 0 at some m ≤ context for the printed base (the loop checks that one m)
    m = bb.first_negative(TABLE_2[label], context, head_dim=128)
    assert m is not None and literal_sum(literal_thetas(TABLE_2[label], 128), m) < 0


def test_table_2_64k_passes():
    assert bb.passes(TABLE_2["64k"], 65536, head_dim=128)
    assert literal_first_negative(literal_thetas(TABLE_2["64k"], 128), 65536) is None


# ---------------------------------------------------------------------------------------------
# The lab's text model (posenc_helpers/lab/text.py, read as text: importing it needs JAX)
# ---------------------------------------------------------------------------------------------


def _lab_constants() -> dict:
    tree = ast.parse((ROOT / "posenc_helpers" / "lab" / "text.py").read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id in ("DEFAULTS", "ABF_BASE", "FINETUNE_LEN"):
            out[target.id] = ast.literal_eval(node.value)
    return out


def test_lab_text_model_against_the_bound():
    lab = _lab_constants()
    d = lab["DEFAULTS"]["d_model"] // lab["DEFAULTS"]["heads"]
    train, tune = lab["DEFAULTS"]["train_len"], lab["FINETUNE_LEN"] * lab["DEFAULTS"]["train_len"]
    assert (d, train, tune, lab["ABF_BASE"]) == (16, 64, 256, 500_000.0)
    th_trained, th_abf = literal_thetas(10000.0, d), literal_thetas(lab["ABF_BASE"], d)
    # 10,000 passes at L = 64 but fails at 4L = 256; ABF's 500,000 passes at 256
    assert literal_first_negative(th_trained, train) is None
    assert literal_first_negative(th_trained, tune) is not None
    assert literal_first_negative(th_abf, tune) is None
    assert bb.base_lower_bound(train, d) < 10000.0 < bb.base_lower_bound(tune, d) * 1.2
    assert bb.base_lower_bound(tune, d) < lab["ABF_BASE"]


# ---------------------------------------------------------------------------------------------
# Configs: single scheme, per layer, partial rotary, and every bundled model
# ---------------------------------------------------------------------------------------------


def test_config_bounds_single_scheme_against_literal():
    row, = bb.config_bounds({"head_dim": 16, "rope_theta": 10000.0, "max_position_embeddings": 256}, step=0.01)
    want = literal_first_negative(literal_thetas(10000.0, 16), 256)
    assert (row.context, row.first_negative_base, row.first_negative_model, row.first_negative_head) == (
        256, want, want, want)
    assert row.above is True and row.layers == 1


def test_config_bounds_sliding_layers_use_window_minus_one_and_scaled_frequencies():
    cfg = {"model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 16, "sliding_window": 64,
           "max_position_embeddings": 2048,
           "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                               "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}}}
    sliding, full = bb.config_bounds(cfg, step=0.01)
    assert (sliding.layer_type, sliding.layers, sliding.context) == ("sliding_attention", 5, 63)
    assert (full.layer_type, full.layers, full.context) == ("full_attention", 1, 2048)
    scaled = [t / 8.0 for t in literal_thetas(1e6, 16)]
    assert full.first_negative_model == literal_first_negative(scaled, 2048)
    assert full.first_negative_base == literal_first_negative(literal_thetas(1e6, 16), 2048)


def test_config_bounds_partial_rotary_adds_the_free_pairs():
    cfg = {"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4, "rotary_pct": 0.25,
           "rotary_emb_base": 10000, "max_position_embeddings": 2000}
    row, = bb.config_bounds(cfg, step=0.01)
    assert (row.rotary_dim, row.head_dim) == (4, 16)
    rotated = literal_thetas(10000.0, 4)
    assert row.first_negative_model == literal_first_negative(rotated, 2000)
    assert row.first_negative_head == literal_first_negative([*rotated, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 2000)
    assert row.first_negative_head is None


def _raw_models() -> dict:
    return {m["name"]: m["config"] for m in json.loads((ROOT / "posenc_helpers" / "data" / "rope_configs.json")
                                                         .read_text(encoding="utf-8"))["models"]}


@pytest.mark.parametrize("name", ["Gemma 3 27B", "OLMo 3.1 32B Instruct", "EXAONE 4.0 32B"])
def test_bundled_sliding_layers_against_the_raw_json(name):
    raw = _raw_models()[name]
    text = raw.get("text_config", raw)
    rows = bb.config_bounds(bundled_configs("all")[name], step=0.01)
    types = text["layer_types"] if "layer_types" in text else None
    sliding = [r for r in rows if r.layer_type == "sliding_attention"]
    assert len(sliding) == 1 and sliding[0].context == text["sliding_window"] - 1
    if types is not None:
        assert sliding[0].layers == types.count("sliding_attention")
    full = [r for r in rows if r.layer_type == "full_attention"]
    assert full and all(r.context is None or r.context == text["max_position_embeddings"] for r in full)


def test_bundled_gemma_3_local_layers_against_literal():
    row = next(r for r in bb.config_bounds(bundled_configs("all")["Gemma 3 27B"], step=0.01)
               if r.layer_type == "sliding_attention")
    assert (row.base, row.rotary_dim, row.context) == (10000.0, 128, 1023)
    assert row.first_negative_model == literal_first_negative(literal_thetas(10000.0, 128), 1023)


def test_every_bundled_model_is_read():
    for name, cfg in bundled_configs("all").items():
        text = cfg.get("text_config", cfg)
        declared = text.get("max_position_embeddings", text.get("n_positions", cfg.get("max_position_embeddings")))
        declared = declared or text["model_max_length"]  # Kimi Linear: its class reads it as max_position_embeddings
        for r in bb.config_bounds(cfg, context=min(declared, 4096), step=0.05):
            assert r.layers >= 1, name
            if r.rope:
                whole = r.window is None or r.layer_type in bb.COMPRESSED_LAYER_TYPES
                assert r.context == (min(declared, 4096) if whole else min(r.window - 1, declared, 4096)), name
                assert r.bound is not None and r.first_negative_head in (None, *range(r.context + 1)), name


def test_compressed_layers_are_checked_over_the_context():
    # DeepSeek V4: every layer has a window of 128, but a CSA or HCA layer's compressed entries are rotated at
    # w · rate and seen by every later query, so its distances reach the declared context
    config = bundled_configs("all")["DeepSeek V4 Flash"]
    rows = {r.layer_type: r for r in bb.config_bounds(config, bounds="stored")}
    assert {t: (r.window, r.context) for t, r in rows.items()} == {
        "sliding_attention": (128, 127),
        "compressed_sparse_attention": (128, 1048576),
        "heavily_compressed_attention": (128, 1048576),
    }
    assert rows["compressed_sparse_attention"].first_negative_base == bb.first_negative(160000.0, 1048576, head_dim=64)
    # Kimi Linear declares its context as model_max_length and rotates nothing: one row per kind, none with RoPE
    kimi = bb.config_bounds(bundled_configs("all")["Kimi Linear 48B-A3B"], bounds="stored")
    assert sorted(r.layer_type for r in kimi) == ["full_attention", "linear_attention"]
    assert not any(r.rope for r in kimi) and all(r.context is None for r in kimi)


# ---------------------------------------------------------------------------------------------
# Named errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: bb.long_term_sum(10000.0, 1, head_dim=5), ValueError, "head_dim must be even"),
    (lambda: bb.long_term_sum(10000.0, 1, head_dim=0), ValueError, "head_dim must be a positive integer"),
    (lambda: bb.long_term_sum(10000.0, 1), TypeError, "a base needs head_dim"),
    (lambda: bb.long_term_sum(1.0, 1, head_dim=8), ValueError, "base must be a finite number greater than 1"),
    (lambda: bb.long_term_sum([[1.0, 0.1]], 1), ValueError, "inv_freq must be one-dimensional"),
    (lambda: bb.long_term_sum([1.0, -0.1], 1), ValueError, "inv_freq must be non-negative"),
    (lambda: bb.long_term_sum([1.0, float("nan")], 1), ValueError, "inv_freq must be finite"),
    (lambda: bb.long_term_sum([1.0], "m"), TypeError, "m must be a number"),
    (lambda: bb.first_negative(10000.0, -1, head_dim=8), ValueError, "context must be a non-negative integer"),
    (lambda: bb.first_negative(10000.0, 2.5, head_dim=8), TypeError, "context must be a non-negative integer"),
    (lambda: bb.base_lower_bound(1, 16), ValueError, "context must be at least 2"),
    (lambda: bb.base_lower_bound(100, 2), ValueError, "head_dim must be at least 4"),
    (lambda: bb.base_lower_bound(100, 16, step=0), ValueError, "step must be in (0, 1]"),
    (lambda: bb.base_lower_bound(100, 16, rtol=1.5), ValueError, "rtol must be in (0, 1)"),
    (lambda: bb.scan_bases(100, 16, 5000.0, 4000.0), ValueError, "hi must be at least lo"),
    (lambda: bb.scan_bases(100, 16, 2.0, 1e12, step=1e-6), ValueError, "at most 1,000,000"),
    (lambda: bb.config_bounds(["config.json"]), TypeError, "config must be a dict"),
    (lambda: bb.config_bounds("no/such/config.json"), ValueError, "config 'no/such/config.json' is neither"),
    (lambda: bb.config_bounds({"model_type": "made_up", "max_position_embeddings": 8}), ValueError,
     "model_type 'made_up' is not a family the reader transcribes"),
    (lambda: bb.config_bounds({"head_dim": 16, "rope_theta": 1e4}), ValueError, "declares no context"),
    (lambda: bb.config_bounds({"model_type": "modernbert", "max_position_embeddings": 8192}), ValueError,
     "bidirectional"),
    (lambda: bb.config_bounds({"model_type": "gemma3_text", "use_bidirectional_attention": True,
                               "max_position_embeddings": 8192}), ValueError, "bidirectional"),
    (lambda: bb.config_bounds({"model_type": "gemma4_text", "use_bidirectional_attention": "all",
                               "max_position_embeddings": 8192}), ValueError, "bidirectional"),
    (lambda: bb.config_bounds({"head_dim": 16, "rope_theta": 1e4, "max_position_embeddings": 2**40}, step=2.0),
     ValueError, "step must be in (0, 1]"),
])
def test_named_errors(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


# ---- the stored bounds (data/base_bounds.json) ------------------------------------------------------------


def test_every_stored_bound_passes_and_a_hair_below_fails():
    # local minimality by the literal loop's own check is too slow at 1M; first_negative is checked against the
    # literal loop above, so each stored value is held to it here
    stored = bb.stored_bounds()
    assert set(stored) == set(bb.bound_pairs())
    for (context, d), bound in stored.items():
        assert bb.first_negative(bound, context, head_dim=d) is None, (context, d)
        assert bb.first_negative(bound * (1 - 1e-6), context, head_dim=d) is not None, (context, d)


def test_stored_bounds_are_what_base_lower_bound_computes_for_the_short_contexts():
    for (context, d), bound in bb.stored_bounds().items():
        if context <= 8192:
            assert bb.base_lower_bound(context, d) == pytest.approx(bound, rel=1e-8), (context, d)


@pytest.mark.full
def test_every_stored_bound_is_recomputed():
    for (context, d), bound in bb.stored_bounds().items():
        assert bb.base_lower_bound(context, d, step=bb.BOUNDS_STEP, rtol=bb.BOUNDS_RTOL) == pytest.approx(
            bound, rel=1e-8), (context, d)


def test_config_bounds_reads_stored_bounds_as_it_computes_them():
    cfg = {"head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 4096}
    (computed,), (stored,) = bb.config_bounds(cfg), bb.config_bounds(cfg, bounds="stored")
    assert stored.bound == pytest.approx(computed.bound, rel=1e-8) and stored.above == computed.above
    with pytest.raises(ValueError, match="no stored bound for context 4097 and head_dim 128: use bounds='compute'"):
        bb.config_bounds({**cfg, "max_position_embeddings": 4097}, bounds="stored")
    with pytest.raises(ValueError, match="bounds must be 'compute' or 'stored', got 'cached'"):
        bb.config_bounds(cfg, bounds="cached")


def test_a_window_longer_than_the_context_is_checked_over_the_context():
    # Phi-3-mini 128k: every layer slides over 262,144 tokens but the context is 131,072
    cfg = {"model_type": "phi3", "head_dim": 16, "rope_theta": 10000.0, "max_position_embeddings": 300,
           "sliding_window": 1000, "num_hidden_layers": 2}
    (row,) = bb.config_bounds(cfg, step=0.01)
    assert row.window == 1000 and row.context == 300
    assert row.first_negative_base == literal_first_negative(literal_thetas(10000.0, 16), 300)
