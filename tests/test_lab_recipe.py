"""lab.recipe: the randomized schemes trained on their authors' optimiser (Adam, constant rate, clipped gradients)."""

import jax
import numpy as np
import pytest

from posenc_helpers.lab import recipe
from posenc_helpers.lab.model import Config, loss_fn
from posenc_helpers.lab.tasks import make_batch
from posenc_helpers.lab.train import DEFAULTS, _Optimizer, initial_params, train

TINY = dict(train_len=8, d_model=16, heads=2, layers=1)


def _flat(params):
    return np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in jax.tree_util.tree_leaves(params)])


@pytest.mark.parametrize("curriculum", [False, True])
def test_the_loop_is_train_s_loop_with_the_lab_s_optimiser(curriculum):
    # the same loop, given the lab's optimiser, gives train's model bit for bit: only the optimiser differs
    steps, batch = 60, 4  # more than one compiled chunk of 50
    want = train("rand_rope", "prev", seed=3, steps=steps, batch=batch, progress=False, cache=False,
                 curriculum=curriculum, max_position=32, **TINY)
    config = Config(scheme="rand_rope", vocab=16, max_position=32, **TINY)
    optimizer = _Optimizer(DEFAULTS["lr"], DEFAULTS["warmup"], steps, DEFAULTS["weight_decay"])
    params, losses, start, _ = recipe._loop(config, "prev", seed=3, steps=steps, batch=batch,
                                            curriculum=curriculum, optimizer=optimizer)
    assert np.array_equal(losses, want.losses)
    assert np.array_equal(_flat(params), _flat(want.params))
    assert np.array_equal(_flat(start), _flat(want.initial_params))


def _literal(config, seed, steps, batch, lr, max_norm):
    # two-line Adam and clipping by global norm, in float64 numpy, on the batches the loop draws: (params, how many
    # steps were clipped)
    b1, b2, eps = 0.9, 0.999, 1e-8
    _, data_key = jax.random.split(jax.random.key(seed))
    params = jax.tree_util.tree_map(lambda x: np.asarray(x, dtype=np.float64), initial_params(config, seed))
    m = jax.tree_util.tree_map(np.zeros_like, params)
    s = jax.tree_util.tree_map(np.zeros_like, params)
    clipped = 0
    for t in range(1, steps + 1):
        step_key = jax.random.fold_in(data_key, t - 1)
        tokens, target, mask = make_batch("prev", step_key, batch=batch, length=config.train_len, vocab=config.vocab)
        as32 = jax.tree_util.tree_map(lambda x: np.asarray(x, dtype=np.float32), params)
        grads = jax.grad(loss_fn)(as32, tokens, target, mask, config, key=jax.random.fold_in(step_key, 1))
        g = jax.tree_util.tree_map(lambda x: np.asarray(x, dtype=np.float64), grads)
        norm = np.sqrt(sum(float((x * x).sum()) for x in jax.tree_util.tree_leaves(g)))
        scale = 1.0 if norm < max_norm else max_norm / norm
        clipped += norm > max_norm
        g = jax.tree_util.tree_map(lambda x, scale=scale: x * scale, g)
        m = jax.tree_util.tree_map(lambda a, x: b1 * a + (1 - b1) * x, m, g)
        s = jax.tree_util.tree_map(lambda a, x: b2 * a + (1 - b2) * x * x, s, g)
        params = jax.tree_util.tree_map(
            lambda p, a, c, t=t: p - lr * (a / (1 - b1**t)) / (np.sqrt(c / (1 - b2**t)) + eps), params, m, s)
    return params, clipped


@pytest.mark.parametrize("max_norm", [1.0, 1e-3])  # 1e-3: every step is clipped
def test_the_authors_optimiser_is_clipped_adam_at_a_constant_rate(max_norm):
    config = Config(scheme="rand_rope", vocab=16, max_position=32, **TINY)
    opt = recipe._Authors(lr=1e-3, max_grad_norm=max_norm)
    params, _, _, state = recipe._loop(config, "prev", seed=1, steps=3, batch=4, curriculum=False, optimizer=opt)
    want, clipped = _literal(config, 1, 3, 4, 1e-3, max_norm)
    start = _flat(initial_params(config, 1))
    moved, literal_moved = _flat(params) - start, _flat(want) - start
    assert np.abs(literal_moved).max() > 1e-4  # the parameters moved
    np.testing.assert_allclose(moved, literal_moved, rtol=0, atol=2e-6)
    assert int(state[0]) == clipped and (clipped == 3 if max_norm < 0.01 else True)


def test_train_authors_itself_trains_with_the_authors_optimiser():
    # train_authors, not a hand-built optimiser: its model is the literal clipped Adam at the authors' settings
    config = Config(scheme="rand_rope", vocab=16, max_position=32, **TINY)
    run, clipped = recipe.train_authors("rand_rope", "prev", seed=1, steps=3, batch=4, max_position=32,
                                        return_clipped=True, **TINY)
    want, want_clipped = _literal(config, 1, 3, 4, recipe.AUTHORS["lr"], recipe.AUTHORS["max_grad_norm"])
    start = _flat(initial_params(config, 1))
    np.testing.assert_allclose(_flat(run.params) - start, _flat(want) - start, rtol=0, atol=2e-6)
    assert clipped == want_clipped
    # the lab's optimiser (AdamW 3e-3, warm-up, weight decay) would be far from it
    lab = train("rand_rope", "prev", seed=1, steps=3, batch=4, progress=False, cache=False, max_position=32, **TINY)
    assert np.abs(_flat(lab.params) - _flat(want)).max() > 1e-4


def test_the_authors_settings_are_their_code_s():
    # experiments/example.py: learning_rate=1e-3, l2_weight=0.0; training.py: max_grad_norm: float = 1.0
    assert recipe.AUTHORS == {"lr": 1e-3, "max_grad_norm": 1.0}


def test_train_authors_gives_a_run_of_the_config_it_was_asked_for():
    run = recipe.train_authors("rand_alibi", "first", seed=2, steps=4, batch=4, curriculum=True, max_position=64,
                               **TINY)
    assert run.scheme == "rand_alibi" and run.task == "first" and run.train_len == 8
    assert run.config.max_position == 64 and run.losses.shape == (4,) and np.isfinite(run.losses).all()


@pytest.mark.parametrize(("kwargs", "error", "named"), [
    (dict(steps=0), ValueError, "steps"),
    (dict(batch=-1), ValueError, "batch"),
    (dict(seed=-2), ValueError, "seed"),
    (dict(curriculum="yes"), TypeError, "curriculum"),
    (dict(max_positon=64), TypeError, "max_positon"),
    (dict(scheme="rand_lerned"), ValueError, "rand_lerned"),
])
def test_train_authors_refuses_bad_input_by_name(kwargs, error, named):
    args = dict(scheme="rand_rope", task="prev", seed=0, steps=2, batch=2, **TINY) | kwargs
    with pytest.raises(error, match=named):
        recipe.train_authors(**args)


def test_train_authors_refuses_a_curriculum_for_the_learned_table():
    with pytest.raises(ValueError, match="learned table"):
        recipe.train_authors("learned", "prev", seed=0, steps=2, batch=2, curriculum=True, **TINY)
