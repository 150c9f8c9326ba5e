"""Per-layer designs (notebook 14): the weight on one key, pairs that turn, folding, interleaved M-RoPE, sinks.

Each helper is held against a literal per-element implementation written here
from the formula or transcribed from transformers 5.24.0's code (the file is
named at each one), plus hypothesis properties.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from literal import literal_rope

from posenc_helpers.attention import attention_weights, attention_weights_with_sink, softmax_with_sink
from posenc_helpers.conventions import rope_half_split
from posenc_helpers.multiaxis import mrope, mrope_axes, mrope_interleaved, mrope_interleaved_angles
from posenc_helpers.perlayer import (
    fold_residual,
    key_weight,
    pairs_finishing,
    qk_norm_bound,
    rms_norm,
    rope_matrix,
    score_matrix,
)

# ---- literal implementations ------------------------------------------------------------------------------------


def literal_qwen3_vl_axes(mrope_section: list[int], pairs: int) -> list[int]:
    # transformers 5.24.0, models/qwen3_vl/modeling_qwen3_vl.py, recomposition_frequencies:
    # freqs_thw = freq[0]; for dim, offset in enumerate((1, 2), start=1):
    #     freqs_thw[..., slice(offset, mrope_section[dim] * 3, 3)] = freq[dim, ..., idx]
    axes = [0] * pairs
    for dim, offset in enumerate((1, 2), start=1):
        for k in range(offset, min(mrope_section[dim] * 3, pairs), 3):
            axes[k] = dim
    return axes


def literal_sink_softmax(row: list[float], sink: float) -> list[float]:
    # transformers 5.24.0, models/gpt_oss/modeling_gpt_oss.py, eager_attention_forward:
    # combined = cat([attn_weights, sinks]); combined -= max; probs = softmax(combined); scores = probs[..., :-1]
    combined = list(row) + [sink]
    top = max(combined)
    e = [math.exp(s - top) for s in combined]
    total = sum(e)
    return [value / total for value in e[:-1]]


# ---- weight on one key ------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(gap=st.floats(-20, 20), n=st.integers(1, 5000), tau=st.floats(0.5, 3.0))
def test_key_weight_is_the_softmax_of_one_gap(gap, n, tau):
    logits = [tau * gap] + [0.0] * (n - 1)
    expected = literal_sink_softmax(logits, -math.inf)[0] if n > 0 else 1.0
    assert math.isclose(key_weight(gap, n, tau), expected, rel_tol=1e-9, abs_tol=1e-300)


@settings(max_examples=40, deadline=None)
@given(gap=st.floats(0.1, 20), n=st.integers(2, 10**7), tau=st.floats(1.01, 3.0))
def test_key_weight_falls_with_more_keys_and_rises_with_temperature(gap, n, tau):
    assert key_weight(gap, n + 1) <= key_weight(gap, n)
    assert key_weight(gap, n, tau) >= key_weight(gap, n)


# ---- pairs that finish a turn -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dim, base, length", [(128, 10000.0, 1024), (128, 1e6, 131072), (256, 10000.0, 512), (64, 150000.0, 128)]
)
def test_pairs_finishing_counts_wavelengths(dim, base, length):
    omega = [base ** (-2 * k / dim) for k in range(dim // 2)]
    expected = sum(2 * math.pi / w <= length for w in omega)
    assert pairs_finishing(np.array(omega), length) == expected
    # zeros (never turning) are never counted
    assert pairs_finishing(np.array(omega + [0.0] * 7), length) == expected


@settings(max_examples=40, deadline=None)
@given(a=st.floats(1.0, 1e7), b=st.floats(1.0, 1e7), base=st.floats(2.0, 1e7))
def test_pairs_finishing_grows_with_length(a, b, base):
    omega = base ** (-np.arange(0, 128, 2) / 128)
    lo, hi = sorted((a, b))
    assert pairs_finishing(omega, lo) <= pairs_finishing(omega, hi) <= 64


# ---- RoPE as a matrix, and folding ------------------------------------------------------------------------------


@pytest.mark.parametrize("dim, pos", [(2, 0.3), (8, 5.0), (16, 123.0), (10, -7.5)])
def test_rope_matrix_is_rope(dim, pos):
    x = np.random.default_rng(dim).standard_normal(dim)
    np.testing.assert_allclose(rope_matrix(dim, pos) @ x, literal_rope(x.tolist(), pos), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(m=st.floats(-500, 500), n=st.floats(-500, 500))
def test_rope_matrices_compose_to_the_difference(m, n):
    np.testing.assert_allclose(rope_matrix(8, m).T @ rope_matrix(8, n), rope_matrix(8, n - m), atol=1e-9)


def test_score_matrix_gives_every_score():
    rng = np.random.default_rng(3)
    w_q, w_k = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    x_m, x_n = rng.standard_normal(6), rng.standard_normal(6)
    q, k = x_m @ w_q, x_n @ w_k
    assert math.isclose(x_m @ score_matrix(w_q, w_k) @ x_n, float(q @ k), rel_tol=1e-12)
    literal = sum(
        a * b for a, b in zip(literal_rope(q.tolist(), 3.0), literal_rope(k.tolist(), 10.0), strict=True)
    )
    assert math.isclose(x_m @ score_matrix(w_q, w_k, 3.0, 10.0) @ x_n, literal, rel_tol=1e-10)
    np.testing.assert_allclose(
        score_matrix(w_q, w_k, 3.0, 10.0), score_matrix(w_q, w_k, 20.0, 27.0), atol=1e-10
    )
    assert not np.allclose(score_matrix(w_q, w_k, 3.0, 10.0), score_matrix(w_q, w_k, 3.0, 11.0))
    with pytest.raises(ValueError, match="give both m and n"):
        score_matrix(w_q, w_k, 3.0)


def test_fold_residual_is_zero_without_rope_and_not_with_it():
    rng = np.random.default_rng(5)
    q, c, w = rng.standard_normal((40, 8)), rng.standard_normal((30, 6)), rng.standard_normal((8, 6))
    keys = c @ w.T  # k_j = W·c_j, 8-dim
    plain = q @ keys.T
    assert fold_residual(q, c, plain) < 1e-12
    m, n = np.arange(40.0), np.arange(30.0) * 3
    rotated = np.array(
        [
            [
                literal_rope(q[i].tolist(), m[i]) @ np.array(literal_rope(keys[j].tolist(), n[j]))
                for j in range(30)
            ]
            for i in range(40)
        ]
    )
    assert fold_residual(q, c, rotated) > 0.1


# ---- interleaved M-RoPE -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("section", [[24, 20, 20], [16, 24, 24], [2, 1, 1], [1, 1, 1], [10, 3, 7], [4, 6, 2]])
def test_interleaved_axes_match_qwen3_vl_code(section):
    pairs = sum(section)
    np.testing.assert_array_equal(
        mrope_axes(section, interleaved=True), literal_qwen3_vl_axes(section, pairs)
    )
    blocks = [0] * section[0] + [1] * section[1] + [2] * section[2]
    np.testing.assert_array_equal(mrope_axes(section), blocks)


def test_qwen3_vl_section_is_k_mod_3_then_time():
    axes = mrope_axes([24, 20, 20], interleaved=True)
    np.testing.assert_array_equal(axes[:60], np.arange(60) % 3)
    np.testing.assert_array_equal(axes[60:], [0, 0, 0, 0])
    assert np.bincount(axes).tolist() == [24, 20, 20]


@pytest.mark.parametrize("section", [[24, 20, 20], [2, 1, 1], [10, 3, 7]])
def test_interleaved_rotation_matches_a_literal_loop(section):
    dim = 2 * sum(section)
    rng = np.random.default_rng(dim)
    x, (t, h, w) = rng.standard_normal(dim), (3.0, 11.0, 40.0)
    axes = literal_qwen3_vl_axes(section, dim // 2)
    ids = (t, h, w)
    half = dim // 2
    expected = list(x)
    for k in range(half):
        theta = ids[axes[k]] * 10000.0 ** (-2 * k / dim)
        a, b = x[k], x[k + half]
        expected[k] = a * math.cos(theta) - b * math.sin(theta)
        expected[k + half] = a * math.sin(theta) + b * math.cos(theta)
    np.testing.assert_allclose(mrope_interleaved(x, t, h, w, section), expected, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(0, 100000), dt=st.integers(-50, 50), dh=st.integers(-50, 50), dw=st.integers(-50, 50))
def test_interleaved_text_is_1d_rope_and_scores_are_relative(p, dt, dh, dw):
    rng = np.random.default_rng(p % 97)
    q, k = rng.standard_normal(128), rng.standard_normal(128)
    np.testing.assert_allclose(mrope_interleaved(q, p, p, p, [24, 20, 20]), rope_half_split(q, p), atol=1e-9)
    a = mrope_interleaved(q, 4, 2, 9, [24, 20, 20]) @ mrope_interleaved(k, 1, 5, 5, [24, 20, 20])
    b = mrope_interleaved(q, 4 + dt, 2 + dh, 9 + dw, [24, 20, 20]) @ mrope_interleaved(
        k, 1 + dt, 5 + dh, 5 + dw, [24, 20, 20]
    )
    assert math.isclose(a, b, rel_tol=1e-7, abs_tol=1e-7)


def test_blocks_and_interleaving_differ_off_the_diagonal():
    x = np.random.default_rng(0).standard_normal(128)
    assert not np.allclose(mrope_interleaved(x, 3, 7, 7, [24, 20, 20]), mrope(x, 3, 7, 7, [24, 20, 20]))
    assert mrope_interleaved_angles([0.0, 1.0], 0.0, 0.0, 8, [2, 1, 1]).shape == (2, 4)
    with pytest.raises(ValueError, match="must add up to the number of pairs 64"):
        mrope_axes([16, 24, 20], 64, interleaved=True)
    with pytest.raises(TypeError, match="interleaved must be True or False"):
        mrope_axes([1, 1, 1], interleaved="yes")


# ---- sinks ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sink", [-3.0, 0.0, 2.5, 10.0])
def test_sink_softmax_matches_gpt_oss_code(sink):
    rows = np.random.default_rng(1).standard_normal((5, 7)) * 3
    got = softmax_with_sink(rows, sink)
    np.testing.assert_allclose(got, [literal_sink_softmax(r.tolist(), sink) for r in rows], rtol=1e-12)
    # per-row sinks (one per head in gpt-oss) broadcast against the rows
    sinks = np.linspace(-2, 2, 5)
    np.testing.assert_allclose(
        softmax_with_sink(rows, sinks),
        [literal_sink_softmax(r.tolist(), s) for r, s in zip(rows, sinks, strict=True)],
        rtol=1e-12,
    )


@settings(max_examples=50, deadline=None)
@given(sink=st.floats(-8, 30), seed=st.integers(0, 1000), causal=st.booleans())
@example(sink=0.0, seed=239, causal=False)  # rows whose sink share is below float64's rounding of 1
@example(sink=1.0, seed=387, causal=False)  # a share of 1.4e-11, where 1 − total is off by 3e-16
@example(sink=24.0, seed=140, causal=True)  # a share that rounds to exactly 1.0 in float64
def test_sink_rows_sum_below_one_and_the_order_of_keys_is_kept(sink, seed, causal):
    rng = np.random.default_rng(seed)
    x, w_q, w_k = rng.standard_normal((6, 4)), rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    with_sink = attention_weights_with_sink(x, w_q, w_k, sink, causal=causal)
    plain = attention_weights(x, w_q, w_k, causal=causal)
    totals = with_sink.sum(axis=1)
    # the sink's share, written out: e^sink / (e^sink + sum_j e^s_ij) over the keys each query may see
    q, k = x @ w_q, x @ w_k
    scores = [[float(q[i] @ k[j]) / math.sqrt(3) for j in range(6) if not causal or j <= i] for i in range(6)]
    others = [sum(math.exp(s - sink) for s in row) for row in scores]  # Σ_j e^(s_ij − sink) over the real keys
    shares = [1.0 / (1.0 + rest) for rest in others]
    # below one in exact arithmetic on every row, since the real keys' part is positive; in float64 a sink far
    # above the scores (sink 24, seed 140) rounds the share itself to exactly 1.0, so the test reads the part
    assert all(rest > 0.0 for rest in others) and all(0.0 < share <= 1.0 for share in shares)
    # in float64 a share below the rounding of 1 (a sink far below the scores) leaves a total of exactly 1, and
    # 1 − total carries the rounding of the seven-term sum: a few ulps of 1 (2.2e-16 each), hence atol 1e-15
    np.testing.assert_allclose(1.0 - totals, shares, rtol=1e-6, atol=1e-15)
    assert np.all(totals <= 1.0) and np.all(totals > 0.0)
    # dividing by the row total gives back the plain softmax: the sink only takes a share
    np.testing.assert_allclose(with_sink / totals[:, None], plain, rtol=1e-9, atol=1e-300)


def test_sink_refuses_bad_input():
    with pytest.raises(ValueError, match="sink of shape"):
        softmax_with_sink(np.zeros((3, 4)), np.zeros(2))
    with pytest.raises(ValueError, match="non-empty last axis"):
        softmax_with_sink([], 0.0)
    with pytest.raises(ValueError, match="sink must be finite"):
        softmax_with_sink([0.0], math.inf)


# ---- QK-norm ----------------------------------------------------------------------------------------------------


def literal_rms_norm(row: list[float], weight: list[float] | None, one_plus: bool, eps: float) -> list[float]:
    # transformers 5.24.0, models/qwen3/modeling_qwen3.py, Qwen3RMSNorm.forward:
    # variance = hidden_states.pow(2).mean(-1, keepdim=True); hidden_states * torch.rsqrt(variance + eps); weight * ...
    # models/gemma3/modeling_gemma3.py, Gemma3RMSNorm.forward: output * (1.0 + self.weight)
    variance = sum(a * a for a in row) / len(row)
    inv = 1.0 / math.sqrt(variance + eps)
    if weight is None:
        return [a * inv for a in row]
    return [a * inv * ((1.0 + w) if one_plus else w) for a, w in zip(row, weight, strict=True)]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**31 - 1), st.booleans(), st.sampled_from([0.0, 1e-6, 0.5]))
def test_rms_norm_matches_the_literal_loop(d, seed, one_plus, eps):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, d)) * rng.uniform(0.01, 100.0, (3, 1))
    w = rng.standard_normal(d)
    for weight in (None, w):
        got = rms_norm(x, weight, one_plus=one_plus, eps=eps)
        want = [literal_rms_norm(list(row), None if weight is None else list(weight), one_plus, eps) for row in x]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([2, 4, 8, 64]), st.integers(0, 2**31 - 1), st.floats(1e-3, 1e3))
def test_normalised_logits_stay_within_the_bound_at_any_scale_and_position(d, seed, scale):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 5, d)) * scale
    g_q, g_k = rng.standard_normal((2, d)) * 2.0
    m, n = rng.integers(0, 10**6, 5).astype(float), rng.integers(0, 10**6, 5).astype(float)
    q_hat = np.array([literal_rope(row, p) for row, p in zip(rms_norm(q, g_q), m, strict=True)])
    k_hat = np.array([literal_rope(row, p) for row, p in zip(rms_norm(k, g_k), n, strict=True)])
    logits = q_hat @ k_hat.T / math.sqrt(d)
    assert np.abs(logits).max() <= qk_norm_bound(g_q, g_k) * (1 + 1e-12)
    # the bound is reached: with unit weights, q = k = e_0 normalise to √d·e_0, and at m = n the logit is √d
    e = np.eye(d)[0]
    top = rms_norm(e, eps=0.0) @ rms_norm(e, eps=0.0) / math.sqrt(d)
    assert math.isclose(top, qk_norm_bound(np.ones(d), np.ones(d)), rel_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([2, 4, 16]), st.integers(0, 2**31 - 1), st.floats(0.0, 1e4))
def test_a_weightless_norm_commutes_with_the_rotation_and_a_learned_one_only_if_tied_per_pair(d, seed, pos):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(d)
    np.testing.assert_allclose(rms_norm(literal_rope(x, pos)), literal_rope(rms_norm(x), pos), atol=1e-12)
    tied = np.repeat(rng.uniform(0.5, 2.0, d // 2), 2)  # one weight per interleaved pair (2k, 2k + 1)
    np.testing.assert_allclose(rms_norm(literal_rope(x, pos), tied), literal_rope(rms_norm(x, tied), pos), atol=1e-12)


def test_a_learned_weight_after_the_rotation_breaks_relative_position():
    # normalise then rotate: the score of (m, n) equals that of (m + s, n + s); a per-channel weight applied after
    # the rotation, different within a pair, makes it depend on m and n themselves
    rng = np.random.default_rng(3)
    q, k, g = rng.standard_normal(8), rng.standard_normal(8), np.array([1.0, 3.0] * 4)

    def before(m, n):
        return np.dot(literal_rope(rms_norm(q, g), m), literal_rope(rms_norm(k, g), n))

    def after(m, n):
        return np.dot(rms_norm(literal_rope(q, m), g), rms_norm(literal_rope(k, n), g))

    assert math.isclose(before(2.0, 7.0), before(102.0, 107.0), rel_tol=1e-9)
    assert abs(after(2.0, 7.0) - after(102.0, 107.0)) > 0.1


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rms_norm(np.zeros(4), eps=0.0), "all-zero row"),
        (lambda: rms_norm(np.ones(4), np.ones(3)), "weight must have one entry per channel"),
        (lambda: rms_norm(np.ones(4), eps=-1.0), "eps must be ≥ 0"),
        (lambda: rms_norm(2.0), "x must have a last axis"),
        (lambda: rms_norm([1.0, float("nan")]), "x"),
        (lambda: qk_norm_bound(np.ones(4), np.ones(3)), "weight_q and weight_k"),
        (lambda: qk_norm_bound(np.ones((2, 2)), np.ones((2, 2))), "vectors of one length"),
    ],
)
def test_qk_norm_helpers_refuse_bad_input_by_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()
