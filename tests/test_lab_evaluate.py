"""posenc_helpers.lab's evaluation side: YaRN's thresholds, recall's pairs and chance, log-n scaling, attention past L.

Every value is checked against an independent computation: the course's
``scaled_frequencies`` / ``yarn_ramp`` with thresholds written out, the
recall chance against a Monte-Carlo guess on the real batches and the written
formula, Qwen's ``logn_list`` transcribed, and a float64 numpy model (per-row
logit scale, attention weights) for the logits, losses, entropies and weights.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from literal import literal_alibi_slopes

from posenc_helpers import frequencies, lab, scaled_frequencies, yarn_ramp
from posenc_helpers.lab import model as M
from posenc_helpers.lab.tasks import make_batch, recall_pairs

jax.config.update("jax_enable_x64", False)


def tiny_run(scheme, task="prev", key=7, train_len=8):
    config = M.Config(scheme=scheme, d_model=16, heads=2, layers=1, train_len=train_len)
    return lab.Run(scheme, task, train_len, M.init(jax.random.key(key), config), np.zeros(1), config, 0, 1)


def shape_only_run(train_len=32):
    config = M.Config(scheme="rope", d_model=64, heads=4, train_len=train_len)
    return lab.Run("rope", "prev", train_len, None, np.zeros(1), config, 0, 1)


# --- a numpy model: per-row logit scale, returns logits and attention weights ---------------------------------


def numpy_forward(params, tokens, config, omega=None, row_scale=None):
    """The lab's model in float64 numpy for a batch (B, T): ``(logits, weights)``, weights (layers, B, H, T, T).

    Row i of every head's pre-softmax scores q_i·k_j/√head_dim is multiplied by
    ``row_scale[i]`` (default 1), then ALiBi adds −m_h·(i − j), then the causal
    softmax.
    """
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), params)
    tokens = np.asarray(tokens)
    B, T = tokens.shape
    d, H = config.d_model, config.heads
    Dh = d // H
    c = np.ones(T) if row_scale is None else np.asarray(row_scale, np.float64).reshape(T)
    w_k = np.array([1.0 / config.base ** (2 * k / Dh) for k in range(Dh // 2)]) if omega is None else np.asarray(omega)

    def norm(x, g):
        m = x.mean(-1, keepdims=True)
        return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5) * g["gain"] + g["bias"]

    def turn(x):  # pair k of position t turned by t·ω_k
        th = np.arange(T)[:, None] * w_k[None, :]
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = a * np.cos(th) - b * np.sin(th), a * np.sin(th) + b * np.cos(th)
        return out

    def gelu(x):
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))

    x = p["embed"][tokens]
    if config.scheme == "learned":
        x = x + p["pos"][:T]
    if config.scheme == "sinusoidal":
        from literal import literal_pe

        x = x + np.array([literal_pe(t, d, config.base) for t in range(T)])
    maps = []
    for blk in p["blocks"]:
        h = norm(x, blk["ln1"])
        qkv = h @ blk["qkv"]
        q, k, v = (qkv[..., n * d:(n + 1) * d].reshape(B, T, H, Dh).transpose(0, 2, 1, 3) for n in range(3))
        if config.scheme == "rope":
            q, k = turn(q), turn(k)
        s = np.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(Dh) * c[:, None]
        if config.scheme == "alibi":
            slopes = np.array(literal_alibi_slopes(H))
            i, j = np.arange(T)[:, None], np.arange(T)[None, :]
            s = s - slopes[:, None, None] * (i - j)
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        maps.append(w)
        att = np.einsum("bhij,bhjd->bhid", w, v).transpose(0, 2, 1, 3).reshape(B, T, d)
        x = x + att @ blk["out"]
        x = x + gelu(norm(x, blk["ln2"]) @ blk["mlp_in"] + blk["mlp_in_bias"]) @ blk["mlp_out"] + blk["mlp_out_bias"]
    return norm(x, p["ln_f"]) @ p["unembed"], np.stack(maps)


def mean_nll(logits, target, mask):
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, np.asarray(target)[..., None], -1)[..., 0]
    mask = np.asarray(mask)
    return (nll * mask).sum() / mask.sum(), ((logits.argmax(-1) == np.asarray(target)) & mask).sum() / mask.sum()


def qwen_logn(T, L):
    """Qwen's logn_list (modeling_qwen.py, QWenAttention.__init__), indexed by 0-based position: log_L(p + 1) or 1."""
    logn_list = [math.log(i, L) if i > L else 1 for i in range(1, T + 1)]
    return np.array(logn_list)


# --- 1. YaRN with the lab's thresholds by default --------------------------------------------------------------


def test_yarn_constants_are_the_lab_and_paper_thresholds():
    assert lab.YARN_LAB == {"beta_fast": 4.0, "beta_slow": 1.0}
    assert lab.YARN_LLAMA == {"beta_fast": 32.0, "beta_slow": 1.0}


@pytest.mark.parametrize("factor", [2, 4, 8])
def test_default_yarn_is_the_lab_ramp_and_llama_is_the_old_default(factor):
    run = shape_only_run()
    default, scale = lab.rope_scaling(run, "yarn", factor)
    explicit, _ = lab.rope_scaling(run, "yarn", factor, **lab.YARN_LAB)
    by_hand = scaled_frequencies(16, 10000.0, "yarn", factor, original_max_position=32, beta_fast=4.0, beta_slow=1.0)
    np.testing.assert_array_equal(default, explicit)
    np.testing.assert_array_equal(default, by_hand)
    assert scale == pytest.approx((0.1 * math.log(factor) + 1) ** 2)
    # the LLaMA setting, passed explicitly, is scaled_frequencies' own default (β = 32, α = 1)
    llama, _ = lab.rope_scaling(run, "yarn", factor, **lab.YARN_LLAMA)
    np.testing.assert_array_equal(llama, scaled_frequencies(16, 10000.0, "yarn", factor, original_max_position=32))
    assert not np.allclose(default, llama)
    # one threshold given: the other from the lab's setting
    np.testing.assert_array_equal(lab.rope_scaling(run, "yarn", factor, beta_fast=32.0)[0], llama)


def test_at_L_32_the_lab_ramp_keeps_the_fastest_pair_and_the_paper_ramp_keeps_none():
    # the fastest pair (ω_0 = 1) turns L/2π = 32/2π ≈ 5.09 times within L
    assert 4 < 32 / (2 * math.pi) < 32
    lab_ramp = yarn_ramp(16, 10000.0, original_max_position=32, **lab.YARN_LAB)
    llama_ramp = yarn_ramp(16, 10000.0, original_max_position=32, **lab.YARN_LLAMA)
    assert lab_ramp[0] == 1.0  # kept at its trained frequency
    assert llama_ramp.max() < 0.2  # every pair mostly interpolated: (5.09 − 1)/31 ≈ 0.13
    assert llama_ramp.max() == pytest.approx((32 / (2 * math.pi) - 1) / 31)
    omega, _ = lab.rope_scaling(shape_only_run(), "yarn", 4)
    assert omega[0] == frequencies(16)[0]


def test_evaluate_default_yarn_matches_the_explicit_lab_thresholds():
    run = tiny_run("rope")
    got = lab.evaluate(run, [16], method="yarn")
    want = lab.evaluate(run, [16], method="yarn", **lab.YARN_LAB)
    assert got["loss"][0] == want["loss"][0]
    llama = lab.evaluate(run, [16], method="yarn", **lab.YARN_LLAMA)
    assert abs(got["loss"][0] - llama["loss"][0]) > 1e-5


# --- 2. recall: the same number of pairs at every length, and its chance -----------------------------------------


@pytest.mark.parametrize("length", [32, 64, 128, 256])
def test_recall_has_eight_pairs_at_every_length(length):
    tokens, target, mask = (np.asarray(a) for a in make_batch("recall", jax.random.key(3), batch=4, length=length, vocab=32))
    assert recall_pairs(length, 32) == 8 == lab.RECALL_PAIRS
    # the first scored position is 2·P: the pairs take 16 tokens
    assert (mask.argmax(1) == 16).all() and mask[:, 16:].all() and not mask[:, :16].any()
    for b in range(4):
        pairs = {int(tokens[b, 2 * p]): int(tokens[b, 2 * p + 1]) for p in range(8)}
        assert len(pairs) == 8 and all(k < 16 <= val for k, val in pairs.items())
        assert all(target[b, t] == pairs[int(tokens[b, t])] for t in range(16, length))


def test_recall_pairs_for_short_sequences_and_vocabularies():
    # min(8, length // 4, vocab // 2)
    assert [recall_pairs(n, 32) for n in (4, 12, 20, 31, 32, 1000)] == [1, 3, 5, 7, 8, 8]
    assert recall_pairs(64, 10) == 5


def literal_recall_chance(P, V):
    # right when the guessed pair is the answer's (1/P) or, another pair (P − 1)/P, shares its value (1/(V/2))
    return Fraction(1, P) + Fraction(P - 1, P) * Fraction(1, V // 2)


@pytest.mark.parametrize("vocab", [16, 32, 64])
def test_recall_chance_is_the_written_formula(vocab):
    P = min(8, vocab // 2)
    assert lab.chance("recall", vocab) == pytest.approx(float(literal_recall_chance(P, vocab)), abs=1e-15)
    assert lab.chance("recall", vocab, length=20) == pytest.approx(float(literal_recall_chance(min(5, P), vocab)))
    assert lab.chance("recall", 32) == 23 / 128  # (1 + 7/16)/8 = 23/128


@pytest.mark.parametrize("length, vocab", [(32, 32), (64, 32), (40, 16)])
def test_recall_chance_matches_guessing_a_value_in_context_on_real_batches(length, vocab):
    # one scored query per sequence (the first), so the n trials are independent: a binomial
    n = 20_000
    tokens, target, _ = (np.asarray(a) for a in make_batch("recall", jax.random.key(11), batch=n, length=length, vocab=vocab))
    P = recall_pairs(length, vocab)
    guess_pair = np.random.default_rng(0).integers(0, P, size=n)
    guesses = tokens[np.arange(n), 2 * guess_pair + 1]  # the value of a pair chosen uniformly
    hit = (guesses == target[:, 2 * P]).mean()
    p = lab.chance("recall", vocab, length=length)
    se = math.sqrt(p * (1 - p) / n)
    assert abs(hit - p) < 4 * se, (hit, p, se)
    assert abs(hit - 1 / P) > 4 * se  # and the shared values matter: 1/P alone is off


def test_other_tasks_keep_uniform_chance():
    assert lab.chance("prev", 16) == 1 / 16
    assert lab.chance("first", 16) == 1 / 16
    assert lab.chance_uniform(16) == 1 / 16 and lab.chance_uniform(32) == 1 / 32
    assert lab.chance("recall", 32) > lab.chance_uniform(32)
    with pytest.raises(ValueError, match="vocab"):
        lab.chance("prev", 0)


# --- 3. log-n query scaling ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("T, L", [(8, 8), (40, 8), (300, 32), (5, 2)])
def test_logn_scale_is_qwens_logn_list(T, L):
    got = lab.logn_scale(T, L)
    assert got.shape == (T, 1)
    np.testing.assert_allclose(got[:, 0], qwen_logn(T, L), rtol=1e-14)


@settings(max_examples=40, deadline=None)
@given(L=st.integers(2, 40), T=st.integers(1, 2000))
def test_logn_scale_properties(L, T):
    c = lab.logn_scale(T, L)[:, 0]
    assert (c[: min(T, L)] == 1).all()  # 1 up to the training length
    assert (np.diff(c) >= 0).all()
    if L * L <= T:
        assert c[L * L - 1] == pytest.approx(2.0)  # log_L(L²) = 2


def test_logn_scale_rejects_bad_lengths():
    with pytest.raises(ValueError, match="train_len"):
        lab.logn_scale(10, 1)
    with pytest.raises((ValueError, TypeError), match="length"):
        lab.logn_scale(0, 8)


@pytest.mark.parametrize("scheme", ["none", "rope", "alibi", "sinusoidal"])
def test_forward_with_a_per_row_scale_matches_the_numpy_model(scheme):
    run = tiny_run(scheme)
    tokens = np.asarray(lab.test_batch("prev", 20, batch=2)[0])
    c = lab.logn_scale(20, 8)
    logits, maps = M.forward(run.params, jnp.asarray(tokens), run.config, logit_scale=jnp.asarray(c, jnp.float32),
                             return_attention=True)
    want_logits, want_maps = numpy_forward(run.params, tokens, run.config, row_scale=c[:, 0])
    np.testing.assert_allclose(np.asarray(logits), want_logits, atol=2e-4)
    np.testing.assert_allclose(np.asarray(maps), want_maps, atol=2e-5)
    plain, _ = numpy_forward(run.params, tokens, run.config)
    assert np.abs(plain - want_logits).max() > 1e-3  # the scale did something


@pytest.mark.parametrize("scheme, method", [("none", None), ("alibi", None), ("rope", None), ("rope", "yarn")])
def test_evaluate_with_logn_matches_the_numpy_model(scheme, method):
    run = tiny_run(scheme)
    T = 24
    got = lab.evaluate(run, [T], method=method, logn=True)
    tokens, target, mask = lab.test_batch("prev", T)
    s = T / 8
    omega = None
    c = qwen_logn(T, 8)
    if method == "yarn":
        omega = scaled_frequencies(8, 10000.0, "yarn", s, original_max_position=8, beta_fast=4.0, beta_slow=1.0)
        c = c * (0.1 * math.log(s) + 1) ** 2
    logits, _ = numpy_forward(run.params, tokens, run.config, omega=omega, row_scale=c)
    loss, acc = mean_nll(logits, target, mask)
    np.testing.assert_allclose(got["loss"][0], loss, rtol=2e-5)
    assert got["accuracy"][0] == pytest.approx(acc, abs=1.5 / np.asarray(mask).sum())


@pytest.mark.parametrize("scheme", ["none", "rope", "alibi", "learned"])
def test_logn_false_gives_exactly_the_old_numbers(scheme):
    # the evaluation as it was before log-n existed: a float32 scalar scale, zeros for omega off RoPE
    run = tiny_run(scheme)
    lengths = [8, 16] if scheme != "learned" else [8]
    got = lab.evaluate(run, lengths)
    for n, T in enumerate(lengths):
        tokens, target, mask = lab.test_batch("prev", T)
        omega = frequencies(8) if scheme == "rope" else np.zeros(4)
        logits = M.forward(run.params, tokens, run.config, omega=jnp.asarray(omega, jnp.float32),
                           logit_scale=jnp.float32(1.0))
        correct = (logits.argmax(-1) == target) & mask
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), target[..., None], axis=-1)[..., 0] * mask
        assert got["accuracy"][n] == float(correct.sum()) / float(mask.sum())
        np.testing.assert_allclose(got["loss"][n], float(nll.sum()) / float(mask.sum()), rtol=1e-6)
    if scheme != "learned":
        assert lab.evaluate(run, [16], logn=True)["loss"][0] != got["loss"][1]
        # up to L every factor is 1: logn changes nothing
        np.testing.assert_allclose(lab.evaluate(run, [8], logn=True)["loss"], got["loss"][:1], rtol=1e-6)


# --- 4. attention past L ----------------------------------------------------------------------------------------


def literal_summary(maps, start):
    """Entropy and weight on key 0 per (layer, head), one query at a time, averaged over batch and queries i ≥ start."""
    L_, B, H, T, _ = maps.shape
    ent, first = np.zeros((L_, H)), np.zeros((L_, H))
    for layer in range(L_):
        for h in range(H):
            es, fs = [], []
            for b in range(B):
                for i in range(start, T):
                    row = maps[layer, b, h, i, : i + 1]
                    es.append(-sum(w * math.log(w) for w in row if w > 0))
                    fs.append(row[0])
            ent[layer, h], first[layer, h] = np.mean(es), np.mean(fs)
    uniform = np.mean([math.log(i + 1) for i in range(start, T)])
    return ent, first, uniform


@pytest.mark.parametrize("scheme, kw", [("rope", {}), ("rope", {"method": "pi"}), ("rope", {"logn": True}),
                                        ("alibi", {}), ("none", {"logn": True})])
@pytest.mark.parametrize("positions", ["beyond", "all"])
def test_attention_entropy_and_first_against_literal_loops(scheme, kw, positions):
    run = tiny_run(scheme, task="first")
    T = 20
    tokens = np.asarray(lab.test_batch("first", T, seed=2)[0])
    omega = frequencies(8) / (T / 8) if kw.get("method") == "pi" else None
    c = qwen_logn(T, 8) if kw.get("logn") else None
    _, maps = numpy_forward(run.params, tokens, run.config, omega=omega, row_scale=c)
    ent, first, uniform = literal_summary(maps, 8 if positions == "beyond" else 0)
    got = lab.attention_entropy(run, T, seed=2, positions=positions, **kw)
    np.testing.assert_allclose(got["entropy"], ent, atol=1e-4)
    assert got["uniform"] == pytest.approx(uniform, rel=1e-12)
    np.testing.assert_allclose(lab.attention_to_first(run, T, seed=2, positions=positions, **kw), first, atol=1e-5)
    assert got["entropy"].shape == (1, 2) and (got["entropy"] <= uniform + 1e-6).all()


def test_uniform_attention_has_the_uniform_entropy():
    T, L = 12, 4
    w = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    maps = np.broadcast_to(w, (2, 3, 2, T, T))  # layers, batch, heads
    for positions, start in (("all", 0), ("beyond", L)):
        out = lab.attention_summary(maps, train_len=L, positions=positions)
        np.testing.assert_allclose(out["entropy"], out["uniform"], rtol=1e-12)
        assert out["uniform"] == pytest.approx(np.mean([math.log(i + 1) for i in range(start, T)]))
        np.testing.assert_allclose(out["first"], np.mean([1 / (i + 1) for i in range(start, T)]))


def test_one_hot_attention_has_zero_entropy():
    T = 6
    w = np.zeros((1, 1, 1, T, T))
    w[..., :, 0] = 1.0  # every query reads only the first token
    out = lab.attention_summary(w, train_len=2, positions="all")
    assert out["entropy"][0, 0] == 0.0 and out["first"][0, 0] == 1.0


@settings(max_examples=30, deadline=None)
@given(T=st.integers(2, 12), seed=st.integers(0, 2**16))
def test_attention_summary_bounds(T, seed):
    # any causal attention: 0 ≤ H_i ≤ ln(i + 1), so 0 ≤ entropy ≤ uniform; the weight on key 0 is in [0, 1]
    z = np.random.default_rng(seed).normal(size=(2, 2, 3, T, T)) * 3
    z = np.where(np.tril(np.ones((T, T), bool)), z, -np.inf)
    w = np.exp(z - z.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = lab.attention_summary(w, train_len=1, positions="all")
    assert (out["entropy"] >= -1e-12).all() and (out["entropy"] <= out["uniform"] + 1e-12).all()
    assert ((out["first"] >= 0) & (out["first"] <= 1)).all()


def test_a_finetuned_run_is_read_with_its_own_rescaling():
    run = tiny_run("rope", task="first")
    ft = dataclasses.replace(run, method="pi", factor=3.0, finetune_len=24)
    np.testing.assert_array_equal(
        lab.attention_to_first(ft, 16), lab.attention_to_first(run, 16, method="pi", factor=3.0)
    )
    assert not np.array_equal(lab.attention_to_first(ft, 16), lab.attention_to_first(run, 16))


@pytest.mark.parametrize(
    "scheme, kw, error, match",
    [
        ("rope", {"positions": "past"}, ValueError, "positions must be 'all' or 'beyond', got 'past'"),
        ("rope", {"length": 8}, ValueError, "positions='beyond' needs a length past the training length 8, got 8"),
        ("none", {"method": "pi"}, ValueError, "method='pi' .*needs a RoPE run, got scheme 'none'"),
        ("rope", {"method": "linear"}, ValueError, "method must be one of 'pi', 'ntk', 'yarn' or None, got 'linear'"),
        ("rope", {"logn": "yes"}, TypeError, "logn must be True or False, got 'yes'"),
        ("rope", {"length": 0}, ValueError, "length"),
        ("learned", {"length": 16}, ValueError, "learned table has 8 rows.*length 16"),
    ],
)
def test_bad_input_names_the_argument(scheme, kw, error, match):
    run = tiny_run(scheme)
    kw = {"length": 16, **kw}
    for fn in (lab.attention_entropy, lab.attention_to_first):
        with pytest.raises(error, match=match):
            fn(run, **kw)


def test_evaluate_bad_input_names_the_argument():
    run = tiny_run("alibi")
    with pytest.raises(ValueError, match="method='yarn' .*needs a RoPE run, got scheme 'alibi'"):
        lab.evaluate(run, [16], method="yarn")
    with pytest.raises(TypeError, match="logn must be True or False, got 1"):
        lab.evaluate(run, [16], logn=1)
    with pytest.raises(ValueError, match="positions must be 'all' or 'beyond', got 'x'"):
        lab.evaluate(run, [16], positions="x")
    with pytest.raises(ValueError, match="YaRN's thresholds"):
        lab.evaluate(run, [16], beta_fast=4.0)
    with pytest.raises(ValueError, match="weights must have shape"):
        lab.attention_summary(np.ones((3, 3)), train_len=1)
