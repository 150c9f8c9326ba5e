"""posenc_helpers.lab.finetune and fit's new arguments, against a hand-made AdamW step.

A one-step fine-tune must equal one AdamW step written out in numpy, from the
run's parameters, on the same batch, with the rescaled frequencies written
from their formulas (PI: ω/s; YaRN through the course's scaled_frequencies and
its temperature (0.1 ln s + 1)²). A fine-tuned run is evaluated with its own
rescaling, and bad input names the argument.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np
import pytest

from posenc_helpers import frequencies, lab, scaled_frequencies
from posenc_helpers.lab import model as M
from posenc_helpers.lab.tasks import make_batch, windows
from posenc_helpers.lab.train import FINETUNE, fit, initial_params

#: A tiny model (one layer, width 16, L = 8), trained for three steps as in the lab's other tests.
SMALL = {"train_len": 8, "d_model": 16, "heads": 2, "layers": 1}


@pytest.fixture(scope="module")
def run():
    return lab.train("rope", "prev", steps=3, seed=1, progress=False, **SMALL)


def adamw_first_step(params, grads, lr, weight_decay):
    """optax.adamw's first update, by hand: m̂ = g, v̂ = g², p ← p − lr·(m̂/(√v̂ + ε) + λ·p)."""
    b1, b2, eps = 0.9, 0.999, 1e-8

    def one(p, g):
        p, g = np.asarray(p, np.float64), np.asarray(g, np.float64)
        m_hat = (1 - b1) * g / (1 - b1)
        v_hat = (1 - b2) * g**2 / (1 - b2)
        return p - lr * (m_hat / (np.sqrt(v_hat) + eps) + weight_decay * p)

    return jax.tree_util.tree_map(one, params, grads)


def first_batch(task, seed, length, vocab=16, text=None):
    # fit's batches: step i from fold_in(data_key, i), data_key the second half of split(key(seed))
    _, data_key = jax.random.split(jax.random.key(seed))
    key = jax.random.fold_in(data_key, 0)
    if text is not None:
        return windows(text, key, batch=FINETUNE["batch"], length=length)
    return make_batch(task, key, batch=FINETUNE["batch"], length=length, vocab=vocab)


def assert_trees_close(a, b, atol):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), atol=atol)


# How far a float32 fine-tune step may be from the float64 hand-made one. The two compute the gradients in different
# float32 XLA programs (fit's compiled scan; the test's eager jax.grad), so they agree to rounding, not bit for bit:
# - the parameters: PARAM_ULPS float32 ulps of the leaf's largest |p| (float32 rounding of p − lr·update; measured:
#   under half an ulp);
# - the gradients: GRAD_ULPS float32 ulps of the leaf's largest |g| (a sum over 32 × length positions, rounded in
#   another order; measured: about half an ulp), carried through AdamW's first step exactly. That step moves p by
#   lr·r(g) with r(g) = g / (|g| + ε), since m̂ = g and √v̂ = |g|; an error δ in g moves it by
#   lr·max(r(g + δ) − r(g), r(g) − r(g − δ)) at most (r increases). For an ordinary gradient r is flat (≈ ±1) and
#   this is nothing; for a gradient at rounding level itself (|g| ≈ ε = 1e-8) its sign is noise and the step may
#   differ by up to lr. One such entry, g = −6.2e-9 in blocks[0].qkv, is why PI's step was 3.9e-6 off against a flat
#   atol of 2e-6 (on two machines, by 3.7e-6 and 3.9e-6), while the ordinary entries agree to 1e-7.
# A wrong step is far outside: test_the_adamw_check_rejects_a_wrong_step plants a 5 % error in the learning rate,
# no weight decay and the other rescaling.
PARAM_ULPS, GRAD_ULPS = 4, 8


def adamw_step_mismatch(got, params, grads, lr, weight_decay, eps=1e-8) -> str | None:
    """Where ``got`` differs from the hand-made first AdamW step by more than float32 rounding; None if nowhere."""
    want = adamw_first_step(params, grads, lr, weight_decay)
    leaves = jax.tree_util.tree_leaves_with_path(got)
    for (path, x), y, g, p in zip(leaves, *map(jax.tree_util.tree_leaves, (want, grads, params)), strict=True):
        g, p = np.asarray(g, np.float64), np.asarray(p, np.float64)
        delta = GRAD_ULPS * np.spacing(np.float32(np.abs(g).max()))

        def r(v):  # the direction of AdamW's first step
            return v / (np.abs(v) + eps)

        tol = PARAM_ULPS * np.spacing(np.float32(np.abs(p).max())) + lr * np.maximum(
            r(g + delta) - r(g), r(g) - r(g - delta)
        )
        off = np.abs(np.asarray(x, np.float64) - y)
        if (off > tol).any():
            i = np.unravel_index(np.argmax(off - tol), off.shape)
            where = f"{jax.tree_util.keystr(path)}{[int(j) for j in i]}"
            return f"{where}: off by {off[i]:.3g}, tolerance {tol[i]:.3g} (g = {g[i]:.3g})"
    return None


@pytest.mark.parametrize("method", [None, "pi", "yarn"])
def test_one_step_finetune_is_one_hand_made_adamw_step(run, method):
    length, seed = 24, 3
    s = length / run.train_len
    omega = {
        None: frequencies(8),
        "pi": frequencies(8) / s,
        "yarn": scaled_frequencies(8, 10000.0, "yarn", s, original_max_position=8, beta_fast=4.0, beta_slow=1.0),
    }[method]
    scale = (0.1 * math.log(s) + 1) ** 2 if method == "yarn" else 1.0
    tokens, target, mask = first_batch("prev", seed, length)
    config = dataclasses.replace(run.config, train_len=length)
    grads = jax.grad(M.loss_fn)(run.params, tokens, target, mask, config, omega=omega, logit_scale=scale)
    lr0 = FINETUNE["lr"] / FINETUNE["warmup"]  # the warm-up's first step
    ft = lab.finetune(run, length=length, method=method, steps=1, seed=seed, progress=False)
    assert adamw_step_mismatch(ft.params, run.params, grads, lr0, FINETUNE["weight_decay"]) is None
    moved = max(float(np.abs(np.asarray(a) - np.asarray(b)).max())
                for a, b in zip(jax.tree_util.tree_leaves(ft.params), jax.tree_util.tree_leaves(run.params), strict=True))
    assert moved > 1e-5  # the step did something
    assert (ft.train_len, ft.finetune_len, ft.method, ft.factor, ft.steps) == (8, 24, method, 3.0, 1)
    assert ft.initial_params is run.params


def test_a_factor_for_the_target_rescales_for_it_while_tuning_at_the_shorter_length(run):
    # YaRN's recipe: s for the target (here 8 × L), the sequences of the fine-tune shorter (3 × L)
    length, seed, s = 24, 3, 8.0
    omega = scaled_frequencies(8, 10000.0, "yarn", s, original_max_position=8, beta_fast=4.0, beta_slow=1.0)
    tokens, target, mask = first_batch("prev", seed, length)
    config = dataclasses.replace(run.config, train_len=length)
    grads = jax.grad(M.loss_fn)(run.params, tokens, target, mask, config, omega=omega,
                                logit_scale=(0.1 * math.log(s) + 1) ** 2)
    lr0 = FINETUNE["lr"] / FINETUNE["warmup"]
    ft = lab.finetune(run, length=length, method="yarn", steps=1, seed=seed, progress=False, factor=s)
    assert adamw_step_mismatch(ft.params, run.params, grads, lr0, FINETUNE["weight_decay"]) is None
    assert (ft.finetune_len, ft.factor) == (24, 8.0)
    own = lab.finetune(run, length=length, method="yarn", steps=1, seed=seed, progress=False)  # s = 3
    assert adamw_step_mismatch(own.params, run.params, grads, lr0, FINETUNE["weight_decay"]) is not None
    np.testing.assert_array_equal(lab.evaluate(ft, [16])["loss"], lab.evaluate(ft, [16], method="yarn", factor=8.0)["loss"])
    with pytest.raises(ValueError, match="factor must be at least length / train_len = 3, got factor=2"):
        lab.finetune(run, length=length, method="pi", factor=2, progress=False)
    with pytest.raises(ValueError, match="factor is the rescaling's s, so it needs a method"):
        lab.finetune(run, length=length, factor=8, progress=False)
    with pytest.raises(TypeError, match="factor"):
        lab.finetune(run, length=length, method="pi", factor="8", progress=False)


def test_the_adamw_check_rejects_a_wrong_step(run):
    # PI's fine-tune against hand-made steps that are wrong in one way each
    length, seed, s = 24, 3, 3.0
    tokens, target, mask = first_batch("prev", seed, length)
    config = dataclasses.replace(run.config, train_len=length)

    def grads_with(omega):
        return jax.grad(M.loss_fn)(run.params, tokens, target, mask, config, omega=omega, logit_scale=1.0)

    lr0, decay = FINETUNE["lr"] / FINETUNE["warmup"], FINETUNE["weight_decay"]
    ft = lab.finetune(run, length=length, method="pi", steps=1, seed=seed, progress=False)
    pi_grads = grads_with(frequencies(8) / s)
    assert adamw_step_mismatch(ft.params, run.params, pi_grads, lr0, decay) is None
    assert adamw_step_mismatch(ft.params, run.params, pi_grads, 1.05 * lr0, decay) is not None, "lr 5 % off"
    assert adamw_step_mismatch(ft.params, run.params, pi_grads, lr0, 0.0) is not None, "no weight decay"
    assert adamw_step_mismatch(ft.params, run.params, grads_with(frequencies(8)), lr0, decay) is not None, "no PI"


def test_finetune_budgets_are_prefixes_of_each_other(run):
    # a constant rate after warm-up: the first 2 steps of a 4-step fine-tune are a 2-step fine-tune
    short = lab.finetune(run, length=16, method="ntk", steps=2, progress=False)
    long = lab.finetune(run, length=16, method="ntk", steps=4, progress=False)
    np.testing.assert_array_equal(short.losses, long.losses[:2])


def test_finetuned_run_is_evaluated_with_its_own_rescaling(run):
    ft = lab.finetune(run, length=16, method="pi", steps=2, progress=False)
    lengths = [8, 16, 32]
    own = lab.evaluate(ft, lengths)
    explicit = lab.evaluate(ft, lengths, method="pi", factor=2.0)
    np.testing.assert_array_equal(own["loss"], explicit["loss"])
    other = lab.evaluate(ft, lengths, method="ntk", factor=2.0)
    assert np.abs(own["loss"] - other["loss"]).max() > 1e-4
    # by hand: PI at s = 2 is omega = ω/2 at every length, whatever the length
    tokens, target, mask = lab.test_batch("prev", 32)
    logits = M.forward(ft.params, tokens, ft.config, omega=frequencies(8) / 2)
    nll = -np.take_along_axis(np.asarray(jax.nn.log_softmax(logits)), np.asarray(target)[..., None], -1)[..., 0]
    np.testing.assert_allclose(own["loss"][2], (nll * np.asarray(mask)).sum() / np.asarray(mask).sum(), rtol=1e-5)
    # "beyond" still means past the original L = 8
    beyond = lab.accuracy(ft, [16], positions="beyond")
    assert beyond.shape == (1,)
    with pytest.raises(ValueError, match="past the training length 8"):
        lab.accuracy(ft, [8], positions="beyond")


def test_train_keeps_its_initial_params_and_fit_can_start_from_them():
    run = lab.train("learned", "prev", steps=3, seed=4, progress=False, **SMALL)
    start = initial_params(run.config, 4)
    assert_trees_close(run.initial_params, start, atol=0)
    params, losses = fit(run.config, "prev", seed=4, steps=3, batch=32, lr=3e-3, progress=False, params=start)
    np.testing.assert_array_equal(losses, run.losses)
    assert_trees_close(params, run.params, atol=0)
    # the eight positional fields of Run still construct it
    old = lab.Run("rope", "prev", 8, None, np.zeros(1), run.config, 0, 1)
    assert old.initial_params is None and old.factor is None


def test_text_path_trains_with_params_omega_and_logit_scale(run):
    text = np.random.default_rng(0).integers(0, 16, size=400)
    config = dataclasses.replace(run.config, train_len=24)
    omega, scale = frequencies(8) / 3, 1.3
    params, losses = fit(
        config, "text", seed=2, steps=1, batch=FINETUNE["batch"], lr=1e-3, progress=False, text=text,
        params=run.params, omega=omega, logit_scale=scale, warmup=FINETUNE["warmup"], constant_lr=True,
    )
    tokens, target, mask = first_batch("text", 2, 24, text=np.asarray(text, np.int32))
    grads = jax.grad(M.loss_fn)(run.params, tokens, target, mask, config, omega=omega, logit_scale=scale)
    assert adamw_step_mismatch(params, run.params, grads, 1e-3 / FINETUNE["warmup"], FINETUNE["weight_decay"]) is None
    assert losses.shape == (1,) and np.isfinite(losses).all()


def test_bad_finetune_input_names_the_argument(run):
    with pytest.raises(ValueError, match="length must exceed the run's training length 8, got 8"):
        lab.finetune(run, length=8)
    with pytest.raises(ValueError, match="steps must be a positive integer, got 0"):
        lab.finetune(run, length=16, steps=0)
    with pytest.raises(ValueError, match="method must be one of 'pi', 'ntk', 'yarn' or None, got 'linear'"):
        lab.finetune(run, length=16, method="linear")
    alibi = lab.train("alibi", "prev", steps=3, progress=False, **SMALL)
    with pytest.raises(ValueError, match="run must be a RoPE run .* got scheme 'alibi'"):
        lab.finetune(alibi, length=16)
    with pytest.raises(ValueError, match="run is a text model"):
        lab.finetune(dataclasses.replace(run, task="text"), length=16)
    ft = lab.finetune(run, length=16, steps=2, progress=False)
    with pytest.raises(ValueError, match="run is already fine-tuned"):
        lab.finetune(ft, length=32)
    with pytest.raises(TypeError, match="run must be a lab.Run"):
        lab.finetune("rope", length=16)
    with pytest.raises(ValueError, match="length must be a positive integer"):
        lab.finetune(run, length=0)


def test_train_passes_scheme_options_to_config_and_names_an_unknown_one():
    run = lab.train("rope_nope", "prev", steps=1, progress=False, query_temperature=True, **{**SMALL, "layers": 2})
    assert run.config.query_temperature is True and run.config.nope_layers == (1,)
    with pytest.raises(TypeError, match="unknown keyword arguments \\['temperature'\\]"):
        lab.train("rope_nope", "prev", steps=1, progress=False, temperature=True)
    with pytest.raises(ValueError, match="query_temperature"):
        lab.train("rope", "prev", steps=1, progress=False, query_temperature=True)


def test_a_checkpoint_of_a_longer_finetune_is_the_shorter_finetune(run):
    path = lab.finetune(run, length=16, method="ntk", steps=6, checkpoints=(2, 4), progress=False)
    assert sorted(path) == [2, 4, 6] and path[4].steps == 4 and path[4].losses.shape == (4,)
    alone = lab.finetune(run, length=16, method="ntk", steps=2, progress=False, cache=False)
    np.testing.assert_array_equal(path[2].losses, alone.losses)
    for a, b in zip(jax.tree_util.tree_leaves(path[2].params), jax.tree_util.tree_leaves(alone.params), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)
    assert not np.array_equal(np.asarray(path[6].params["unembed"]), np.asarray(alone.params["unembed"]))
