"""posenc_helpers.scaling against literal per-pair loops, properties, and bad input."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import (
    base_for_wavelength,
    ntk_base,
    scaled_frequencies,
    yarn_attention_factor,
    yarn_ramp,
)

# ---------------------------------------------------------------------------------------------
# Independent literal implementations: one pair at a time, straight from the papers' formulas.
# ---------------------------------------------------------------------------------------------


def literal_omega(dim: int, base: float) -> list[float]:
    return [1.0 / base ** (2 * k / dim) for k in range(dim // 2)]


def literal_pi(dim, base, s):
    # Position Interpolation: the angle of pair k at position p is (p / s)·ω_k
    return [(1.0 / s) * w for w in literal_omega(dim, base)]


def literal_ntk(dim, base, s):
    # NTK-aware: the same formula with base' = base · s^(D/(D−2))
    new_base = base * s ** (dim / (dim - 2))
    return [new_base ** (-2 * k / dim) for k in range(dim // 2)]


def literal_yarn_paper(dim, base, s, length, alpha=1.0, beta=32.0):
    out = []
    for k in range(dim // 2):
        w = base ** (-2 * k / dim)
        wavelength = 2 * math.pi / w
        r = length / wavelength
        if r < alpha:
            gamma = 0.0
        elif r > beta:
            gamma = 1.0
        else:
            gamma = (r - alpha) / (beta - alpha)
        out.append((1 - gamma) * w / s + gamma * w)
    return out


def literal_yarn_reference(dim, base, s, length, beta_fast=32.0, beta_slow=1.0):
    """The reference code's recipe (jquesnelle/yarn, HF _compute_yarn_parameters), transcribed."""

    def correction_dim(num_rotations):
        return (dim * math.log(length / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    out = []
    for k in range(dim // 2):
        pos_freq = base ** (2 * k / dim)
        extrapolation = 1.0 / pos_freq
        interpolation = 1.0 / (s * pos_freq)
        ramp = min(max((k - low) / (high - low), 0.0), 1.0)
        extrapolation_factor = 1.0 - ramp
        out.append(interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor)
    return out


CASES = [(4, 10000.0, 4.0), (8, 10000.0, 2.0), (64, 10000.0, 8.0), (128, 500000.0, 16.0), (16, 100.0, 1.0)]


@pytest.mark.parametrize("dim, base, s", CASES)
def test_pi_matches_literal(dim, base, s):
    np.testing.assert_allclose(scaled_frequencies(dim, base, "pi", s), literal_pi(dim, base, s), rtol=1e-13)


@pytest.mark.parametrize("dim, base, s", CASES)
def test_ntk_matches_literal(dim, base, s):
    np.testing.assert_allclose(scaled_frequencies(dim, base, "ntk", s), literal_ntk(dim, base, s), rtol=1e-12)


@pytest.mark.parametrize("dim, base, s", CASES)
@pytest.mark.parametrize("length", [64, 2048, 4096])
def test_yarn_matches_literal(dim, base, s, length):
    got = scaled_frequencies(dim, base, "yarn", s, original_max_position=length)
    np.testing.assert_allclose(got, literal_yarn_paper(dim, base, s, length), rtol=1e-12)
    got = scaled_frequencies(dim, base, "yarn", s, original_max_position=length, ramp="index")
    np.testing.assert_allclose(got, literal_yarn_reference(dim, base, s, length), rtol=1e-12)


def test_yarn_custom_betas_match_literal():
    got = scaled_frequencies(64, 10000.0, "yarn", 8, original_max_position=4096, beta_fast=16, beta_slow=2)
    want = literal_yarn_paper(64, 10000.0, 8, 4096, alpha=2, beta=16)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_yarn_ramp_known_values():
    # D = 4, L = 100: r_0 = 100/2π = 15.9155, r_1 = 100/(2π·100) = 0.159
    gamma = yarn_ramp(4, 10000.0, original_max_position=100)
    assert math.isclose(gamma[0], (100 / (2 * math.pi) - 1) / 31, rel_tol=1e-12)
    assert gamma[1] == 0.0
    # L = 2π·40 makes r_0 = 40 > 32: pair 0 keeps its frequency (γ = 1)
    assert yarn_ramp(4, 10000.0, original_max_position=252)[0] == 1.0


def test_base_for_wavelength_seed_exercise():
    # The lesson: 2π·√B = 1000  ⇒  B = (1000/2π)² ≈ 25330
    assert math.isclose(base_for_wavelength(4, 1000), (1000 / (2 * math.pi)) ** 2, rel_tol=1e-13)
    assert abs(base_for_wavelength(4, 1000) - 25330) < 1


@given(
    half=st.integers(2, 128),
    wavelength=st.floats(7.0, 1e7),
)
@settings(max_examples=60, deadline=None)
def test_base_for_wavelength_gives_that_longest_wavelength(half, wavelength):
    dim = 2 * half
    base = base_for_wavelength(dim, wavelength)
    # the slowest pair k = D/2 − 1 has λ = 2π·base^(2k/D)
    longest = 2 * math.pi * base ** (2 * (half - 1) / dim)
    assert math.isclose(longest, wavelength, rel_tol=1e-9)


# ---------------------------------------------------------------------------------------------
# Properties.
# ---------------------------------------------------------------------------------------------

even_dims = st.integers(2, 128).map(lambda h: 2 * h)  # D = 4 … 256
factors = st.floats(1.0, 1000.0)
bases = st.floats(2.0, 1e7)


@given(dim=even_dims, base=bases, s=factors)
@settings(max_examples=80, deadline=None)
def test_ntk_keeps_fastest_and_divides_slowest_by_s(dim, base, s):
    omega = scaled_frequencies(dim, base, "ntk", s)
    original = base ** (-2.0 * np.arange(dim // 2) / dim)
    assert omega[0] == 1.0
    assert math.isclose(omega[-1], original[-1] / s, rel_tol=1e-9)
    # in between, pair k is divided by s^(2k/(D−2)): never more than s, never less than 1
    ratio = original / omega
    assert np.all(ratio >= 1 - 1e-12) and np.all(ratio <= s * (1 + 1e-9))
    assert np.all(np.diff(ratio) >= -1e-9 * s)
    assert math.isclose(ntk_base(dim, base, s), base * s ** (dim / (dim - 2)), rel_tol=1e-12)


@given(dim=even_dims, base=bases, s=factors)
@settings(max_examples=80, deadline=None)
def test_pi_divides_every_frequency_by_s(dim, base, s):
    original = base ** (-2.0 * np.arange(dim // 2) / dim)
    np.testing.assert_allclose(scaled_frequencies(dim, base, "pi", s) * s, original, rtol=1e-12)


@given(dim=even_dims, base=bases, s=factors, length=st.integers(16, 1_000_000), ramp=st.sampled_from(["paper", "index"]))
@settings(max_examples=80, deadline=None)
def test_yarn_lies_between_pi_and_the_original(dim, base, s, length, ramp):
    original = base ** (-2.0 * np.arange(dim // 2) / dim)
    yarn = scaled_frequencies(dim, base, "yarn", s, original_max_position=length, ramp=ramp)
    assert np.all(yarn >= original / s * (1 - 1e-12))
    assert np.all(yarn <= original * (1 + 1e-12))
    gamma = yarn_ramp(dim, base, original_max_position=length, ramp=ramp)
    assert np.all((gamma >= 0) & (gamma <= 1))
    # faster pairs are never interpolated more than slower ones
    assert np.all(np.diff(gamma) <= 1e-12)


@given(dim=even_dims, base=bases, length=st.integers(16, 1_000_000))
@settings(max_examples=40, deadline=None)
def test_factor_one_changes_nothing(dim, base, length):
    original = base ** (-2.0 * np.arange(dim // 2) / dim)
    for method in ("pi", "ntk", "yarn"):
        got = scaled_frequencies(dim, base, method, 1.0, original_max_position=length)
        np.testing.assert_allclose(got, original, rtol=1e-12)


def test_yarn_ramp_ends():
    # L = 4096, D = 128: pair 0 turns 4096/2π ≈ 652 times (> 32: γ = 1), the last 0.075 times (< 1: γ = 0)
    gamma = yarn_ramp(128, 10000.0, original_max_position=4096)
    assert gamma[0] == 1.0 and gamma[-1] == 0.0
    omega = scaled_frequencies(128, 10000.0, "yarn", 8, original_max_position=4096)
    assert omega[0] == 1.0
    assert math.isclose(omega[-1], 10000.0 ** (-126 / 128) / 8, rel_tol=1e-12)


def test_yarn_attention_factor():
    assert yarn_attention_factor(1) == 1.0
    assert math.isclose(yarn_attention_factor(8), 0.1 * math.log(8) + 1, rel_tol=1e-15)
    assert math.isclose(yarn_attention_factor(math.e**10), 2.0, rel_tol=1e-12)


# ---------------------------------------------------------------------------------------------
# Bad input: clear errors that name the argument and the value.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["rope", "PI", "", None, 3])
def test_unknown_method(method):
    known = "'pi', 'ntk', 'yarn', 'dynamic', 'llama3', 'longrope' (or the aliases 'linear' = 'pi', 'su' = 'longrope')"
    with pytest.raises(ValueError, match=re.escape(f"method must be one of {known}, got {method!r}")):
        scaled_frequencies(8, 10000.0, method, 2.0)


@pytest.mark.parametrize(
    "factor, exc, text",
    [
        (0.5, ValueError, "factor .* must be >= 1, got 0.5"),
        (0.0, ValueError, "factor .* must be >= 1, got 0.0"),
        (-2, ValueError, "factor .* must be >= 1, got -2"),
        (float("inf"), ValueError, "factor must be finite, got inf"),
        (float("nan"), ValueError, "factor must be finite, got nan"),
        ("2", TypeError, "factor must be a real number, got '2'"),
        (True, TypeError, "factor must be a real number, got True"),
    ],
)
@pytest.mark.parametrize("method", ["pi", "ntk", "yarn"])
def test_bad_factor(factor, exc, text, method):
    with pytest.raises(exc, match=text):
        scaled_frequencies(8, 10000.0, method, factor, original_max_position=1024)


@pytest.mark.parametrize(
    "dim, method, exc, text",
    [
        (7, "pi", ValueError, "dim must be even .*got 7"),
        (2, "ntk", ValueError, "dim must be at least 4 here, got 2"),
        (0, "pi", ValueError, "dim must be a positive integer, got 0"),
        (4.0, "yarn", TypeError, "dim must be a positive integer, got 4.0"),
    ],
)
def test_bad_dim(dim, method, exc, text):
    with pytest.raises(exc, match=text):
        scaled_frequencies(dim, 10000.0, method, 2.0, original_max_position=1024)


def test_bad_base():
    with pytest.raises(ValueError, match="base must be a finite number greater than 1, got 1"):
        scaled_frequencies(8, 1, "pi", 2.0)


def test_yarn_needs_the_training_length():
    with pytest.raises(ValueError, match="method='yarn' needs original_max_position"):
        scaled_frequencies(8, 10000.0, "yarn", 2.0)
    with pytest.raises(ValueError, match="original_max_position must be a positive integer, got -5"):
        scaled_frequencies(8, 10000.0, "yarn", 2.0, original_max_position=-5)
    with pytest.raises(TypeError, match="original_max_position must be a positive integer, got 4096.0"):
        yarn_ramp(8, original_max_position=4096.0)


@pytest.mark.parametrize(
    "kw, text",
    [
        ({"beta_fast": 1.0, "beta_slow": 1.0}, "need 0 < beta_slow < beta_fast .*beta_slow=1.0 and beta_fast=1.0"),
        ({"beta_fast": 1.0, "beta_slow": 32.0}, "need 0 < beta_slow < beta_fast"),
        ({"beta_slow": 0.0}, "need 0 < beta_slow < beta_fast .*beta_slow=0.0"),
        ({"ramp": "linear"}, r"ramp must be one of \('paper', 'index'\), got 'linear'"),
    ],
)
def test_bad_yarn_parameters(kw, text):
    with pytest.raises(ValueError, match=text):
        scaled_frequencies(8, 10000.0, "yarn", 2.0, original_max_position=1024, **kw)


@pytest.mark.parametrize(
    "dim, wavelength, exc, text",
    [
        (2, 100.0, ValueError, "dim must be at least 4 here, got 2"),
        (4, 6.0, ValueError, "wavelength must be greater than 2π"),
        (4, float("inf"), ValueError, "wavelength must be finite"),
    ],
)
def test_bad_base_for_wavelength(dim, wavelength, exc, text):
    with pytest.raises(exc, match=text):
        base_for_wavelength(dim, wavelength)


def test_bad_attention_factor():
    with pytest.raises(ValueError, match="factor .* must be >= 1, got 0.5"):
        yarn_attention_factor(0.5)
