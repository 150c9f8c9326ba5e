"""posenc_helpers.conventions against literal per-element loops of each library's formulation.

Every cross-convention equivalence the notebook 07-conventions asserts is asserted here too:
half_split_rope(P x) = P rope(x), (P q)·(P k) = q·k, rope_complex = rope, and
tensor2tensor's [sin | cos] = P · paper's sinusoid at a matching base.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import (
    half_split_to_interleaved,
    interleaved_to_half_split,
    rope,
    rope_complex,
    rope_half_split,
    rope_score,
    sinusoidal,
    sinusoidal_concat,
)

# ---------------------------------------------------------------------------------------------
# Independent literal implementations, one element at a time, each in its library's own terms.
# ---------------------------------------------------------------------------------------------


def literal_theta(pos: float, dim: int, base: float, k: int) -> float:
    # θ_k = pos / base^(2k/D)
    return pos / base ** (2 * k / dim)


def literal_rope_interleaved(x, pos, base=10000.0):
    """The paper / Meta: pair k is (x[2k], x[2k+1])."""
    dim = len(x)
    out = list(x)
    for k in range(dim // 2):
        t = literal_theta(pos, dim, base, k)
        a, b = x[2 * k], x[2 * k + 1]
        out[2 * k] = a * math.cos(t) - b * math.sin(t)
        out[2 * k + 1] = a * math.sin(t) + b * math.cos(t)
    return out


def literal_rope_half_split(x, pos, base=10000.0):
    """GPT-NeoX / HF, pair by pair: pair k is (x[k], x[k + D/2])."""
    dim = len(x)
    h = dim // 2
    out = [0.0] * dim
    for k in range(h):
        t = literal_theta(pos, dim, base, k)
        a, b = x[k], x[k + h]
        out[k] = a * math.cos(t) - b * math.sin(t)
        out[k + h] = a * math.sin(t) + b * math.cos(t)
    return out


def literal_hf_rotate_half(x, pos, base=10000.0):
    """HF's formula element by element: x·cos + rotate_half(x)·sin, angles repeated as [θ | θ]."""
    dim = len(x)
    h = dim // 2
    rotated = [-x[i + h] if i < h else x[i - h] for i in range(dim)]  # rotate_half(x) = [−x2, x1]
    out = []
    for i in range(dim):
        t = literal_theta(pos, dim, base, i % h)  # emb = cat(freqs, freqs)
        out.append(x[i] * math.cos(t) + rotated[i] * math.sin(t))
    return out


def literal_gptj_rotate_every_two(x, pos, base=10000.0):
    """GPT-J's formula element by element: x·cos + rotate_every_two(x)·sin, angles repeated as θ0 θ0 θ1 θ1 …"""
    dim = len(x)
    rotated = [-x[i + 1] if i % 2 == 0 else x[i - 1] for i in range(dim)]  # stack((−x2, x1)).flatten
    out = []
    for i in range(dim):
        t = literal_theta(pos, dim, base, i // 2)  # duplicate_interleave
        out.append(x[i] * math.cos(t) + rotated[i] * math.sin(t))
    return out


def literal_meta_complex(x, pos, base=10000.0):
    """Meta's Llama: view pairs as complex numbers, multiply by polar(1, θ_k), view as real again."""
    dim = len(x)
    out = []
    for k in range(dim // 2):
        z = complex(x[2 * k], x[2 * k + 1]) * cmath.exp(1j * literal_theta(pos, dim, base, k))
        out += [z.real, z.imag]
    return out


def literal_perm(x):
    """P, one element at a time: (P x)[k] = x[2k], (P x)[k + D/2] = x[2k+1]."""
    h = len(x) // 2
    out = [None] * len(x)
    for k in range(h):
        out[k] = x[2 * k]
        out[k + h] = x[2 * k + 1]
    return out


def literal_t2t(pos, channels, min_timescale=1.0, max_timescale=1.0e4):
    """tensor2tensor's get_timing_signal_1d for one position, transcribed term by term."""
    num_timescales = channels // 2
    log_timescale_increment = math.log(max_timescale / min_timescale) / max(num_timescales - 1, 1)
    inv = [min_timescale * math.exp(-k * log_timescale_increment) for k in range(num_timescales)]
    signal = [math.sin(pos * w) for w in inv] + [math.cos(pos * w) for w in inv]
    return signal + [0.0] * (channels % 2)


def hf_conversion_permute(w, n_heads):
    """HF convert_llama_weights_to_hf.permute, in numpy: view(n_heads, d/2, 2, dim2).transpose(1, 2)."""
    dim1, dim2 = w.shape
    return w.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(0, 2, 1, 3).reshape(dim1, dim2)


# ---------------------------------------------------------------------------------------------
# Known values
# ---------------------------------------------------------------------------------------------


def test_t2t_pos2_dim4_worked_example():
    got = sinusoidal_concat(2, 4)
    np.testing.assert_allclose(got, [math.sin(2), math.sin(2e-4), math.cos(2), math.cos(2e-4)], rtol=1e-12)
    assert got.round(4).tolist() == [0.9093, 0.0002, -0.4161, 1.0]


def test_paper_and_t2t_differ_at_pos2_dim4():
    paper = sinusoidal(2, 4)
    assert paper.round(4).tolist() == [0.9093, -0.4161, 0.02, 0.9998]
    # Same first pair, different layout and a different slow frequency (0.01 vs 1e-4).
    assert not np.allclose(sinusoidal_concat(2, 4), interleaved_to_half_split(paper))


def test_permutation_of_eight():
    assert interleaved_to_half_split(np.arange(8)).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert half_split_to_interleaved(np.arange(8)).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]


def test_rope_half_split_pairs_k_with_k_plus_half():
    # Only x[1] = 1 and x[3] = 0 are non-zero in pair k = 1 of D = 4, which turns by θ_1 = 2/100.
    got = rope_half_split([0.0, 1.0, 0.0, 0.0], 2)
    np.testing.assert_allclose(got, [0.0, math.cos(0.02), 0.0, math.sin(0.02)], atol=1e-15)


# ---------------------------------------------------------------------------------------------
# Against the literal loops
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_rope_half_split_matches_literal_loops(seed):
    rng = np.random.default_rng(200 + seed)
    dim = 2 * int(rng.integers(1, 17))
    base = float(rng.choice([10000.0, 500.0, 1e6]))
    x = rng.standard_normal((3, dim))
    pos = np.array([0.0, 7.0, 4096.5])
    got = rope_half_split(x, pos, base)
    for r in range(3):
        np.testing.assert_allclose(got[r], literal_rope_half_split(x[r].tolist(), pos[r], base), atol=1e-12)
        np.testing.assert_allclose(got[r], literal_hf_rotate_half(x[r].tolist(), pos[r], base), atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_rope_complex_matches_meta_and_gptj_loops(seed):
    rng = np.random.default_rng(300 + seed)
    dim = 2 * int(rng.integers(1, 17))
    x = rng.standard_normal(dim)
    for pos in [0.0, 1.0, 123.25, 1e5]:
        got = rope_complex(x, pos)
        np.testing.assert_allclose(got, literal_meta_complex(x.tolist(), pos), atol=1e-10)
        np.testing.assert_allclose(got, literal_gptj_rotate_every_two(x.tolist(), pos), atol=1e-10)
        np.testing.assert_allclose(got, literal_rope_interleaved(x.tolist(), pos), atol=1e-10)


def test_rope_complex_odd_dim_passes_last_element_through():
    x = [0.3, -1.2, 0.5, 2.0, 7.0]
    got = rope_complex(x, 3.0)
    assert got[4] == 7.0
    np.testing.assert_allclose(got, literal_rope_interleaved(x, 3.0), atol=1e-12)
    assert rope_complex([5.0], 2.0).tolist() == [5.0]


@pytest.mark.parametrize("dim", [2, 4, 5, 6, 10, 33, 64])
def test_sinusoidal_concat_matches_t2t_loop(dim):
    for pos in [0.0, 1.0, 2.0, 37.0, 5000.0]:
        np.testing.assert_allclose(sinusoidal_concat(pos, dim), literal_t2t(pos, dim), atol=1e-12)


def test_sinusoidal_concat_other_timescales_follow_the_documented_formula():
    # timescale_k = min·(max/min)^(k/(n−1)); signal = [sin(pos/timescale) | cos(pos/timescale)]
    dim, lo, hi, pos = 8, 2.0, 500.0, 3.7
    n = dim // 2
    ts = [lo * (hi / lo) ** (k / (n - 1)) for k in range(n)]
    expected = [math.sin(pos / t) for t in ts] + [math.cos(pos / t) for t in ts]
    np.testing.assert_allclose(sinusoidal_concat(pos, dim, lo, hi), expected, rtol=1e-12)


def test_sinusoidal_concat_shapes():
    assert sinusoidal_concat(np.arange(6).reshape(2, 3), 7).shape == (2, 3, 7)
    assert sinusoidal_concat(5, 1).tolist() == [0.0]  # no timescale at all, only t2t's zero pad


def test_hf_conversion_permute_is_P_on_each_heads_rows():
    rng = np.random.default_rng(7)
    n_heads, head_dim, d_model = 3, 8, 5
    w = rng.standard_normal((n_heads * head_dim, d_model))
    converted = hf_conversion_permute(w, n_heads)
    for h in range(n_heads):
        rows = w[h * head_dim : (h + 1) * head_dim]
        np.testing.assert_array_equal(converted[h * head_dim : (h + 1) * head_dim], interleaved_to_half_split(rows.T).T)
    # And the converted weights under rotate_half give the same scores as Meta's under interleaved RoPE.
    x_m, x_n = rng.standard_normal(d_model), rng.standard_normal(d_model)
    for h in range(n_heads):
        block = slice(h * head_dim, (h + 1) * head_dim)
        meta = rope(w[block] @ x_m, 11) @ rope(w[block] @ x_n, 4)
        hf = rope_half_split(converted[block] @ x_m, 11) @ rope_half_split(converted[block] @ x_n, 4)
        assert hf == pytest.approx(meta, rel=1e-12, abs=1e-12)


def test_permutation_matches_literal_loop():
    x = np.random.default_rng(1).standard_normal((2, 12))
    for r in range(2):
        assert interleaved_to_half_split(x[r]).tolist() == literal_perm(x[r].tolist())


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

finite = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False)
dims = st.integers(min_value=1, max_value=48)
even_dims = st.integers(min_value=1, max_value=24).map(lambda h: 2 * h)
bases = st.floats(min_value=1.5, max_value=1e6)


@st.composite
def vectors(draw, dim):
    return np.array(draw(st.lists(st.floats(-100, 100), min_size=dim, max_size=dim)))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dim=even_dims)
def test_permutation_round_trip(data, dim):
    x = data.draw(vectors(dim))
    assert half_split_to_interleaved(interleaved_to_half_split(x)).tolist() == x.tolist()
    assert interleaved_to_half_split(half_split_to_interleaved(x)).tolist() == x.tolist()


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dim=even_dims, pos=finite, base=bases)
def test_half_split_rope_of_P_x_is_P_of_rope(data, dim, pos, base):
    x = data.draw(vectors(dim))
    np.testing.assert_allclose(
        rope_half_split(interleaved_to_half_split(x), pos, base),
        interleaved_to_half_split(rope(x, pos, base)),
        rtol=1e-12,
        atol=1e-12,
    )


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dim=even_dims, m=finite, n=finite)
def test_scores_unchanged_when_q_and_k_are_both_permuted(data, dim, m, n):
    q, k = data.draw(vectors(dim)), data.draw(vectors(dim))
    pq, pk = interleaved_to_half_split(q), interleaved_to_half_split(k)
    scale = 1 + np.linalg.norm(q) * np.linalg.norm(k)
    assert pq @ pk == pytest.approx(q @ k, abs=1e-12 * scale)
    half_split_score = rope_half_split(pq, m) @ rope_half_split(pk, n)
    assert half_split_score == pytest.approx(rope_score(q, k, m, n), abs=1e-9 * scale)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dim=dims, pos=finite, base=bases)
def test_rope_complex_equals_rope(data, dim, pos, base):
    x = data.draw(vectors(dim))
    np.testing.assert_allclose(rope_complex(x, pos, base), rope(x, pos, base), rtol=1e-12, atol=1e-10)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dim=even_dims, pos=finite, base=bases)
def test_half_split_and_complex_rope_preserve_norm(data, dim, pos, base):
    x = data.draw(vectors(dim))
    norm = np.linalg.norm(x)
    assert np.linalg.norm(rope_half_split(x, pos, base)) == pytest.approx(norm, rel=1e-9, abs=1e-9)
    assert np.linalg.norm(rope_complex(x, pos, base)) == pytest.approx(norm, rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(dim=st.integers(min_value=2, max_value=32).map(lambda h: 2 * h), pos=finite)
def test_t2t_is_P_of_the_paper_at_a_matching_base(dim, pos):
    # t2t: ω_k = 10^4^(−k/(n−1)); paper: ω_k = base^(−2k/D); equal when base = 10^4^(D/(D−2)).
    base = 1e4 ** (dim / (dim - 2))
    np.testing.assert_allclose(
        sinusoidal_concat(pos, dim), interleaved_to_half_split(sinusoidal(pos, dim, base)), atol=1e-9
    )


@settings(max_examples=40, deadline=None)
@given(dim=dims, pos=finite)
def test_t2t_sin_cos_halves_share_angles(dim, pos):
    pe = sinusoidal_concat(pos, dim)
    n = dim // 2
    np.testing.assert_allclose(pe[:n] ** 2 + pe[n : 2 * n] ** 2, 1.0)


# ---------------------------------------------------------------------------------------------
# Bad input: the exception type, and a message that names the argument and the value
# ---------------------------------------------------------------------------------------------

HALF_SPLIT_FNS = [interleaved_to_half_split, half_split_to_interleaved, lambda x: rope_half_split(x, 1.0)]


@pytest.mark.parametrize("fn", HALF_SPLIT_FNS)
@pytest.mark.parametrize("x", [[1.0, 2.0, 3.0], np.zeros((2, 5)), [1.0]])
def test_odd_dim_half_split_says_why(fn, x):
    d = np.shape(x)[-1]
    with pytest.raises(ValueError, match=rf"^x must have an even last axis for the half-split layout, got D = {d} .*no partner"):
        fn(x)


@pytest.mark.parametrize("fn", HALF_SPLIT_FNS + [lambda x: rope_complex(x, 1.0)])
def test_empty_and_scalar_x(fn):
    with pytest.raises(ValueError, match=r"^x must have a non-empty last axis, got shape \(0,\)"):
        fn([])
    with pytest.raises(ValueError, match=r"^x must have a last axis holding the vector, got the scalar 3.0"):
        fn(3.0)


@pytest.mark.parametrize("fn", HALF_SPLIT_FNS + [lambda x: rope_complex(x, 1.0)])
def test_non_numeric_or_non_finite_x(fn):
    with pytest.raises(TypeError, match=r"^x must be a number or an array of"):
        fn(["a", "b"])
    with pytest.raises(ValueError, match=r"^x must be finite, got .*nan"):
        fn([1.0, float("nan")])


@pytest.mark.parametrize("fn", [rope_half_split, rope_complex])
def test_rope_variants_bad_pos_and_base(fn):
    with pytest.raises(ValueError, match=r"^pos must be finite, got inf"):
        fn([1.0, 0.0], float("inf"))
    with pytest.raises(TypeError, match=r"^pos must be a number or an array of numbers, got '2'"):
        fn([1.0, 0.0], "2")
    with pytest.raises(ValueError, match=r"^base must be a finite number greater than 1, got 1.0"):
        fn([1.0, 0.0], 1.0, 1.0)
    with pytest.raises(ValueError, match=r"^pos of shape \(3,\) does not broadcast against x.shape\[:-1\] = \(4,\)"):
        fn(np.ones((4, 2)), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("dim, exc", [(0, ValueError), (-2, ValueError), (4.0, TypeError), (True, TypeError)])
def test_sinusoidal_concat_bad_dim(dim, exc):
    with pytest.raises(exc, match=r"^dim must be a positive integer, got " + repr(dim).replace(".", r"\.")):
        sinusoidal_concat(1, dim)


def test_sinusoidal_concat_bad_timescales_and_pos():
    with pytest.raises(ValueError, match=r"^min_timescale must be positive, got 0.0"):
        sinusoidal_concat(1, 4, min_timescale=0.0)
    with pytest.raises(ValueError, match=r"^max_timescale must be at least min_timescale = 10.0, got 5.0"):
        sinusoidal_concat(1, 4, min_timescale=10.0, max_timescale=5.0)
    with pytest.raises(ValueError, match=r"^max_timescale must be finite, got inf"):
        sinusoidal_concat(1, 4, max_timescale=float("inf"))
    with pytest.raises(TypeError, match=r"^min_timescale must be a real number, got '1'"):
        sinusoidal_concat(1, 4, min_timescale="1")
    with pytest.raises(ValueError, match=r"^pos must be finite, got nan"):
        sinusoidal_concat(float("nan"), 4)
