"""scaled_frequencies' rope types as real configs name them, and scaling_attention_factor, against Hugging Face's code."""

from __future__ import annotations

import math

import literal_shipped as lit
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import frequencies
from posenc_helpers.scaling import scaled_frequencies, scaling_attention_factor, yarn_ramp

dims = st.sampled_from([4, 8, 32, 64, 96, 128])
bases = st.sampled_from([100.0, 10000.0, 150000.0, 500000.0, 1e6])
factors = st.floats(1.0, 64.0)
lengths = st.sampled_from([64, 1024, 2048, 4096, 8192, 32768])


def test_linear_is_pi():
    np.testing.assert_array_equal(scaled_frequencies(64, 1e4, "linear", 4.0), scaled_frequencies(64, 1e4, "pi", 4.0))


@settings(max_examples=80, deadline=None)
@given(dim=dims, base=bases, s=factors, L=lengths, seq=st.integers(1, 300000))
def test_dynamic_matches_hf(dim, base, s, L, seq):
    got = scaled_frequencies(dim, base, "dynamic", s, original_max_position=L, seq_len=seq)
    np.testing.assert_allclose(got, lit.dynamic_ntk(dim, base, s, L, seq), rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(dim=dims, base=bases, s=factors, L=lengths, frac=st.floats(0.0, 1.0))
def test_dynamic_is_omega_up_to_L(dim, base, s, L, frac):
    seq = max(1, int(frac * L))
    omega = frequencies(dim, base)
    np.testing.assert_array_equal(scaled_frequencies(dim, base, "dynamic", s, original_max_position=L, seq_len=seq), omega)
    np.testing.assert_array_equal(scaled_frequencies(dim, base, "dynamic", s, original_max_position=L), omega)


def test_dynamic_past_L_slows_every_pair_but_the_first():
    omega = frequencies(128, 1e4)
    got = scaled_frequencies(128, 1e4, "dynamic", 2.0, original_max_position=4096, seq_len=8192)
    assert got[0] == omega[0] and np.all(got[1:] < omega[1:])
    # at seq_len = s·L... base' = base·(2·2 − 1)^(128/126): the slowest pair divided by exactly 3
    assert np.isclose(got[-1], omega[-1] / 3)


@settings(max_examples=80, deadline=None)
@given(dim=dims, base=bases, s=factors, L=lengths, lo=st.floats(0.5, 4.0), gap=st.floats(0.5, 32.0))
def test_llama3_matches_hf_and_the_paper_ramp(dim, base, s, L, lo, gap):
    hi = lo + gap
    got = scaled_frequencies(dim, base, "llama3", s, original_max_position=L, low_freq_factor=lo, high_freq_factor=hi)
    np.testing.assert_allclose(got, lit.llama3(dim, base, s, lo, hi, L), rtol=1e-12)
    # the same as YaRN's paper ramp with α = low_freq_factor, β = high_freq_factor
    yarn = scaled_frequencies(dim, base, "yarn", s, original_max_position=L, beta_slow=lo, beta_fast=hi)
    np.testing.assert_allclose(got, yarn, rtol=1e-12)
    # which pairs are kept, which divided by s
    omega = frequencies(dim, base)
    wavelength = 2 * np.pi / omega
    kept, divided = wavelength < L / hi, wavelength > L / lo
    np.testing.assert_array_equal(got[kept], omega[kept])
    np.testing.assert_allclose(got[divided], omega[divided] / s, rtol=1e-15)
    between = ~kept & ~divided
    assert np.all(got[between] <= omega[between] * (1 + 1e-12))
    assert np.all(got[between] >= omega[between] / s * (1 - 1e-12))


def test_llama3_with_llama_31_numbers():
    # Llama 3.1: base 500000, D = 128, s = 8, low 1, high 4, L = 8192
    got = scaled_frequencies(128, 5e5, "llama3", 8.0, original_max_position=8192, low_freq_factor=1, high_freq_factor=4)
    omega = frequencies(128, 5e5)
    wavelength = 2 * np.pi / omega
    assert np.count_nonzero(got == omega) == np.count_nonzero(wavelength < 2048)
    assert np.count_nonzero(np.isclose(got, omega / 8, rtol=1e-15)) == np.count_nonzero(wavelength > 8192)


@settings(max_examples=80, deadline=None)
@given(dim=dims, base=bases, s=factors, L=lengths, truncate=st.booleans(),
       betas=st.sampled_from([(32, 1), (16, 2), (64, 1)]))
def test_yarn_index_ramp_matches_hf(dim, base, s, L, truncate, betas):
    fast, slow = betas
    got = scaled_frequencies(dim, base, "yarn", s, original_max_position=L, beta_fast=fast, beta_slow=slow,
                             ramp="index", truncate=truncate)
    np.testing.assert_allclose(got, lit.yarn(dim, base, s, L, fast, slow, truncate), rtol=1e-12)


def test_yarn_truncate_false_differs_from_true():
    a = yarn_ramp(64, 150000.0, original_max_position=4096, ramp="index", truncate=True)
    b = yarn_ramp(64, 150000.0, original_max_position=4096, ramp="index", truncate=False)
    assert not np.array_equal(a, b)
    assert a[0] == b[0] == 1.0 and a[-1] == b[-1] == 0.0


@settings(max_examples=60, deadline=None)
@given(s=st.floats(0.5, 100.0), af=st.one_of(st.none(), st.floats(0.5, 3.0)),
       ms=st.sampled_from([(None, None), (1.0, 1.0), (0.707, 0.707), (1.0, 0.707), (1.0, None), (0.0, 1.0)]))
def test_yarn_attention_factor_matches_hf(s, af, ms):
    mscale, mscale_all_dim = ms
    if s < 1:
        with pytest.raises(ValueError, match="factor"):
            scaling_attention_factor("yarn", s)
        return
    got = scaling_attention_factor("yarn", s, attention_factor=af, mscale=mscale, mscale_all_dim=mscale_all_dim)
    assert math.isclose(got, lit.yarn_attention(s, af, mscale, mscale_all_dim), rel_tol=1e-14)


def hf_scaled_rotation(x, pos, omega, a):
    """Hugging Face's way: cos and sin multiplied by the attention factor a, then each pair turned by pos·ω_k."""
    out = []
    for k, w in enumerate(omega):
        c, s = a * math.cos(pos * w), a * math.sin(pos * w)
        x0, x1 = x[2 * k], x[2 * k + 1]
        out += [x0 * c - x1 * s, x1 * c + x0 * s]
    return out


def test_attention_factor_is_one_for_the_others_and_squares_into_logits():
    from posenc_helpers.lab.evaluate import rope_scaling
    from posenc_helpers.lab.model import Config, attention

    for method in ("pi", "linear", "ntk", "dynamic", "llama3"):
        assert scaling_attention_factor(method, 8.0) == 1.0
    a = scaling_attention_factor("yarn", 8.0)
    assert math.isclose(a, lit.yarn_attention(8.0), rel_tol=1e-14)  # 0.1·ln 8 + 1
    # Hugging Face scales cos and sin by a and rotates both q and k with them; the lab's model instead rotates
    # with plain cos and sin and multiplies each logit by rope_scaling's logit_scale: the two agree only if that
    # scale is a², so compare the model's attention weights with the literal scaled rotation
    d_model, heads, T = 16, 2, 12
    head_dim = d_model // heads
    config = Config(scheme="rope", d_model=d_model, heads=heads, train_len=32)
    run = type("Run", (), {"config": config, "train_len": 32})
    omega, logit_scale = rope_scaling(run, "yarn", 8.0)
    # the lab's YaRN runs with thresholds scaled to its L = 32 (beta_fast = 4, beta_slow = 1), not LLaMA's 32 and 1
    lab_ramp = scaled_frequencies(head_dim, 10000.0, "yarn", 8.0, original_max_position=32, beta_fast=4.0, beta_slow=1.0)
    np.testing.assert_array_equal(omega, lab_ramp)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, T, d_model)).astype(np.float32)
    block = {"qkv": (rng.standard_normal((d_model, 3 * d_model)) / 2).astype(np.float32),
             "out": np.eye(d_model, dtype=np.float32)}
    _, weights = attention(x, block, config, omega=omega, logit_scale=logit_scale)
    projected = x[0].astype(np.float64) @ block["qkv"].astype(np.float64)  # (T, 3·d_model): q, k, v, head by head
    for h in range(heads):
        q = projected[:, h * head_dim : (h + 1) * head_dim]
        k = projected[:, d_model + h * head_dim : d_model + (h + 1) * head_dim]
        for i in range(T):
            qi = hf_scaled_rotation(q[i], i, omega, a)
            logits = [sum(u * w for u, w in zip(qi, hf_scaled_rotation(k[j], j, omega, a), strict=True))
                      / math.sqrt(head_dim) for j in range(i + 1)]
            top = max(logits)
            expected = [math.exp(z - top) for z in logits]
            expected = [e / sum(expected) for e in expected] + [0.0] * (T - i - 1)
            np.testing.assert_allclose(np.asarray(weights[0, h, i]), expected, rtol=2e-4, atol=1e-6)


phi_like_short = [1.0 + 0.02 * i for i in range(16)]
phi_like_long = [1.0 + 0.5 * i for i in range(16)]


@pytest.mark.parametrize("seq", [None, 1, 4096, 4097, 131072])
@pytest.mark.parametrize("method", ["longrope", "su"])
def test_longrope_matches_hf(seq, method):
    got = scaled_frequencies(32, 1e4, method, 32.0, original_max_position=4096, seq_len=seq,
                             short_factor=phi_like_short, long_factor=phi_like_long)
    expected, attention = lit.longrope(32, 1e4, phi_like_short, phi_like_long, 131072, 4096, seq)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert math.isclose(scaling_attention_factor(method, 32.0, original_max_position=4096), attention, rel_tol=1e-14)


def test_longrope_attention_depends_on_s_and_L_not_seq_len():
    assert scaling_attention_factor("longrope", 1.0, original_max_position=4096) == 1.0
    assert math.isclose(scaling_attention_factor("longrope", 32, original_max_position=4096),
                        math.sqrt(1 + math.log(32) / math.log(4096)))
    assert scaling_attention_factor("longrope", 32, original_max_position=4096, attention_factor=1.5) == 1.5


@pytest.mark.parametrize(
    "kwargs, text",
    [
        ({"method": "dynamic"}, "method='dynamic' needs original_max_position"),
        ({"method": "llama3"}, "method='llama3' needs original_max_position"),
        ({"method": "longrope", "original_max_position": 100}, "method='longrope' needs short_factor"),
        ({"method": "longrope", "original_max_position": 100, "seq_len": 200, "short_factor": [1, 1]},
         "method='longrope' needs long_factor"),
        ({"method": "longrope", "original_max_position": 100, "short_factor": [1, 1, 1]},
         r"short_factor must hold one factor per pair, D/2 = 2 numbers, got shape \(3,\)"),
        ({"method": "longrope", "original_max_position": 100, "short_factor": [1, 0]},
         "short_factor must hold positive numbers"),
        ({"method": "llama3", "original_max_position": 100, "low_freq_factor": 4, "high_freq_factor": 1},
         "need 0 < low_freq_factor < high_freq_factor"),
        ({"method": "dynamic", "original_max_position": 100, "seq_len": 0}, "seq_len must be a positive integer"),
    ],
)
def test_bad_arguments(kwargs, text):
    method = kwargs.pop("method")
    with pytest.raises(ValueError, match=text):
        scaled_frequencies(4, 1e4, method, 2.0, **kwargs)


def test_longrope_attention_needs_length():
    with pytest.raises(ValueError, match="needs original_max_position"):
        scaling_attention_factor("longrope", 4.0)
