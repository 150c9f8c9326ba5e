"""Evaluation: accuracy and loss at any test length, test-time rescaling, attention weights and what they do past L.

Test batches come from their own seed (different from training's), so a model
is scored on sequences it never saw. Every new length compiles the forward pass
anew, so the notebooks evaluate a fixed list of lengths once and reuse it.

Test-time rescaling, no training: RoPE's frequencies by PI, NTK-aware scaling
or YaRN (:func:`rope_scaling`; YaRN's ramp thresholds default to
:data:`YARN_LAB`, scaled to this model's L), and for every scheme log-n query
scaling (:func:`logn_scale`, as Qwen ships it). :func:`attention_entropy` and
:func:`attention_to_first` measure what the attention of a trained model does
past L. Taught in notebooks/12-extrapolation-lab.ipynb and 13-trained-heads.ipynb.
"""

from __future__ import annotations

import functools
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..core import frequencies
from ..scaling import scaled_frequencies, yarn_attention_factor
from .model import RANDOMIZED, forward
from .tasks import make_batch

__all__ = [
    "EVAL_SEQUENCES", "EVAL_CHUNK", "sequence_scores", "evaluate_cells", "test_key", "position_key",
    "LENGTHS", "SCALINGS", "EVAL_BATCH", "YARN_LAB", "YARN_LLAMA", "accuracy", "evaluate", "attention", "test_batch",
    "rope_scaling", "logn_scale", "attention_entropy", "attention_to_first", "attention_summary",
    "attention_by_distance", "learned_similarity", "rope_pair_usage",
]

#: Test lengths of the headline figure: the training length 32 up to 8× it.
LENGTHS = (32, 64, 128, 256)

#: Test-time RoPE scaling methods (from posenc_helpers.scaling), applied with no fine-tuning.
SCALINGS = ("pi", "ntk", "yarn")

#: YaRN's ramp thresholds for this lab's model, in turns within the training length L: a pair that turns
#: more than β = beta_fast = 4 times within L keeps its frequency, one that turns fewer than α = beta_slow = 1
#: time is fully interpolated (the thresholds of Llama 3.1's rule, high_freq_factor 4 and low_freq_factor 1;
#: see posenc_helpers.scaling). With L = 32 the fastest pair turns 32/2π ≈ 5.1 times within L, so it is kept.
#: The default of :func:`rope_scaling` for ``"yarn"``.
YARN_LAB = {"beta_fast": 4.0, "beta_slow": 1.0}

#: The YaRN paper's thresholds, set for LLaMA's L = 4,096 (also Hugging Face's defaults when a config gives
#: none: ``beta_fast ... or 32``, ``beta_slow ... or 1`` in _compute_yarn_parameters, huggingface/transformers
#: src/transformers/modeling_rope_utils.py). At L = 32 no pair of this model turns 32 times, so they keep no
#: pair at its trained frequency (the fastest gets γ = (5.09 − 1)/31 ≈ 0.13): YaRN is then close to PI plus
#: a temperature. Pass them explicitly: ``rope_scaling(run, "yarn", s, **YARN_LLAMA)``.
YARN_LLAMA = {"beta_fast": 32.0, "beta_slow": 1.0}

#: Sequences per test batch of :func:`evaluate` and :func:`accuracy` (the stored sweeps' 32, until issue 43's
#: sweeps re-score them; see :data:`EVAL_SEQUENCES`).
EVAL_BATCH = 32

#: Test sequences behind each accuracy of :func:`sequence_scores` and :func:`evaluate_cells`, whose standard error
#: is computed over sequences, the unit of noise (:mod:`.stats`): 256 put the SE of an accuracy of 0.5 at
#: 1/(2·√256) = 0.031 at most.
EVAL_SEQUENCES = 256

#: Sequences per compiled call of :func:`sequence_scores`: the 256 run in chunks of 64, one program per length.
EVAL_CHUNK = 64

#: Offset that keeps test seeds apart from training seeds.
_TEST_SEED = 1_000_003


def _lengths(lengths):
    if isinstance(lengths, (numbers.Integral, np.integer)) and not isinstance(lengths, bool):
        lengths = [lengths]
    try:
        items = list(lengths)
    except TypeError:
        raise TypeError(f"lengths must be an integer or a list of integers, got {lengths!r}") from None
    if not items:
        raise ValueError("lengths must hold at least one length, got an empty list")
    return [v.positive_int("length", n) for n in items]


def test_key(length, *, seed=0, test_set=0):
    """The key of the test sequences of ``length`` tokens for ``seed``: ``fold_in(key(1_000_003 + seed), length)``,
    folded once more with 1,000 + ``test_set`` for an independent test set (``test_set`` ≥ 1); never a training key."""
    key = jax.random.fold_in(jax.random.key(_TEST_SEED + seed), v.positive_int("length", length))
    if isinstance(test_set, bool) or not isinstance(test_set, (int, np.integer)) or test_set < 0:
        raise ValueError(f"test_set must be 0 (the test set) or a positive integer (an independent one), got {test_set!r}")
    return key if test_set == 0 else jax.random.fold_in(key, 1000 + int(test_set))


test_key.__test__ = False  # a helper, not a test: keeps pytest from collecting it


def test_batch(task, length, *, seed=0, batch=EVAL_BATCH, vocab=16, test_set=0):
    """The test batch ``(tokens, target, mask)`` of ``length`` tokens for ``seed``: never a training batch.
    """
    length = v.positive_int("length", length)
    batch = v.positive_int("batch", batch)
    return make_batch(task, test_key(length, seed=seed, test_set=test_set), batch=batch, length=length, vocab=vocab)


test_batch.__test__ = False  # a helper, not a test: keeps pytest from collecting it


def rope_scaling(run, method, factor, *, beta_fast=None, beta_slow=None):
    """``(omega, logit_scale)`` for evaluating a RoPE run at ``factor`` × its training length, no fine-tuning.

    ``omega`` is ``scaled_frequencies(head_dim, base, method, factor,
    original_max_position=train_len)``; ``logit_scale`` is 1, except YaRN's
    (0.1·ln s + 1)², its temperature applied to q and k alike. ``method=None``
    gives the trained frequencies. ``beta_fast`` and ``beta_slow`` (YaRN only)
    are the ramp's thresholds β and α in turns within the training length L;
    None takes the value in :data:`YARN_LAB` (β = 4, α = 1, the thresholds of
    Llama 3.1's rule, see :mod:`posenc_helpers.scaling`): they keep the
    fastest pair, which turns about 5 times within L = 32. The ramp counts
    turns within L, so thresholds do not transfer across training lengths:
    the paper's β = 32, α = 1 (:data:`YARN_LLAMA`), set for LLaMA's L = 4,096,
    keep no pair of this model at its trained frequency; pass them
    explicitly, ``rope_scaling(run, "yarn", s, **YARN_LLAMA)``, to see that.

    >>> from posenc_helpers.lab.model import Config
    >>> class R: config = Config(scheme="rope", d_model=16, heads=4); train_len = 32
    >>> omega, scale = rope_scaling(R, "pi", 4)
    >>> omega.round(4), scale                         # [1, 0.01] / 4, head_dim 4
    (array([0.25  , 0.0025]), 1.0)
    >>> rope_scaling(R, "yarn", 4)[0].round(4)        # pair 0 turns 32/2π ≈ 5.09 > β = 4 times: kept
    array([1.    , 0.0025])
    >>> rope_scaling(R, "yarn", 4, **YARN_LLAMA)[0].round(4)   # γ_0 = (5.09 − 1)/31 = 0.132: mostly ω/4
    array([0.349 , 0.0025])
    """
    config = run.config
    if config.scheme != "rope":
        raise ValueError(f"method={method!r} is a test-time RoPE scaling and needs a RoPE run, got scheme {config.scheme!r}")
    if method is None:
        if beta_fast is not None or beta_slow is not None:
            raise ValueError("beta_fast and beta_slow are YaRN's thresholds, got them with method None")
        return frequencies(config.head_dim, config.base), 1.0
    if method not in SCALINGS:
        raise ValueError(f"method must be one of {', '.join(map(repr, SCALINGS))} or None, got {method!r}")
    given = {k: val for k, val in (("beta_fast", beta_fast), ("beta_slow", beta_slow)) if val is not None}
    if given and method != "yarn":
        raise ValueError(f"beta_fast and beta_slow are YaRN's thresholds, got them with method {method!r}")
    thresholds = {**YARN_LAB, **given} if method == "yarn" else {}
    omega = scaled_frequencies(
        config.head_dim, config.base, method, factor, original_max_position=run.train_len, **thresholds
    )
    scale = yarn_attention_factor(factor) ** 2 if method == "yarn" else 1.0
    return omega, scale


def logn_scale(length, train_len) -> np.ndarray:
    """Log-n query scaling: the factor on the logits of each query position i, shape (length, 1).

    c_i = max(1, ln(i + 1) / ln L), L = ``train_len``: 1 up to the training
    length, then log_L(i + 1), the ratio of ln(i + 1) (the entropy of uniform
    attention over the i + 1 keys query i sees) to its value ln L at the
    training length; it sharpens the softmax of queries that see more keys
    than training ever showed. This is Qwen's (first generation)
    ``use_logn_attn``: ``logn_list = [math.log(i, self.seq_length) if i >
    self.seq_length else 1 for i in range(1, 32768)]``, and the query at
    0-based position p, after its rotation, is multiplied by
    ``logn_list[p]``, i.e. by log_L(p + 1) when p + 1 > L, which multiplies
    every logit of that query's row (modeling_qwen.py, QWenAttention; the
    copy read here is alibaba/MNN,
    transformers/llm/export/llm_models/Qwen-1_8B/modeling_qwen.py at commit
    7cad2ee83f12f2ca86eaf36a2010eed322a68b2e). Our i + 1 is the same
    indexing, and max(1, ·) the same switch (log_L(p + 1) ≤ 1 exactly when
    p + 1 ≤ L). Qwen scales only when not training, as here.
    The shape (T, 1) broadcasts over the keys of the (batch, heads, T, T)
    logits, so ``forward(..., logit_scale=logn_scale(T, L))`` scales row i.

    >>> logn_scale(6, 4).ravel().round(4)     # 1, 1, 1, 1, ln 5/ln 4, ln 6/ln 4
    array([1.    , 1.    , 1.    , 1.    , 1.161 , 1.2925])
    """
    length = v.positive_int("length", length)
    train_len = v.positive_int("train_len", train_len)
    if train_len < 2:
        raise ValueError(f"log-n scaling divides by ln L, so train_len must be at least 2, got {train_len}")
    i = np.arange(length, dtype=np.float64)
    # c_i = max(1, ln(i + 1) / ln L): (length, 1)
    return np.maximum(1.0, np.log(i + 1.0) / math.log(train_len))[:, None]


def _rescaling(run, T, method, factor, logn, beta_fast=None, beta_slow=None):
    """``(omega, logit_scale)`` as float32 jax arrays for ``run`` at length T: the rules :func:`evaluate` states."""
    config = run.config
    if config.scheme == "rope":
        s = max(T / run.train_len, 1.0) if factor is None else factor
        omega, scale = rope_scaling(run, method, s, beta_fast=beta_fast, beta_slow=beta_slow)
    elif method is not None:
        raise ValueError(f"method={method!r} is a test-time RoPE scaling and needs a RoPE run, got scheme {config.scheme!r}")
    elif beta_fast is not None or beta_slow is not None:
        raise ValueError(f"beta_fast and beta_slow are YaRN's thresholds, got them for scheme {config.scheme!r}")
    else:
        omega, scale = np.zeros(max(config.head_dim // 2, 1)), 1.0
    if logn:
        # YaRN's temperature (or 1) times max(1, ln(i + 1)/ln L) per query row: (T, 1)
        return jnp.asarray(omega, jnp.float32), jnp.asarray(scale * logn_scale(T, run.train_len), jnp.float32)
    return jnp.asarray(omega, jnp.float32), jnp.float32(scale)


def _check_positions(positions):
    if positions not in ("all", "beyond"):
        raise ValueError(f"positions must be 'all' or 'beyond', got {positions!r}")
    return positions


def _check_logn(logn):
    if not isinstance(logn, (bool, np.bool_)):
        raise TypeError(f"logn must be True or False, got {logn!r}")
    return bool(logn)


def _own_rescaling(run, method, factor):
    if method is None and factor is None and getattr(run, "factor", None) is not None:
        return run.method, run.factor  # a fine-tuned run: its own rescaling
    return method, factor


def position_key(config, length, *, seed=0, test_set=0):
    """The key a randomized scheme draws its test positions from at ``length``, or None for any other scheme.

    The test sequences' key (:func:`test_key`) folded once more with 1, so
    the positions are drawn afresh for every length and seed, and the same on
    every run; each chunk of :data:`EVAL_CHUNK` sequences folds in its index.
    """
    if config.scheme not in RANDOMIZED:
        return None
    return jax.random.fold_in(test_key(length, seed=seed, test_set=test_set), 1)


@functools.partial(jax.jit, static_argnames=("config",))
def _scores(params, tokens, target, mask, omega, logit_scale, key=None, *, config):
    logits = forward(params, tokens, config, omega=omega, logit_scale=logit_scale, key=key)
    # correct[b, t] and −log p(target)[b, t]: (batch, T)
    correct = (logits.argmax(-1) == target) & mask
    nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), target[..., None], axis=-1)[..., 0] * mask
    return correct, nll


def _check_sequences(sequences):
    sequences = v.positive_int("sequences", sequences)
    if sequences % EVAL_CHUNK and sequences > EVAL_CHUNK:
        raise ValueError(f"sequences must be at most {EVAL_CHUNK} or a multiple of it, got {sequences}")
    return sequences


def sequence_scores(run, T, *, seed=0, method=None, factor=None, beta_fast=None, beta_slow=None, logn=False,
                    sequences=EVAL_SEQUENCES, test_set=0) -> dict:
    """Per-sequence scores of ``run`` on ``sequences`` test sequences of ``T`` tokens: the evaluation's one pass.

    ``{"all": (n,), "beyond": (n,) or None, "tuned": (n,) or None, "loss":
    float}``: each sequence's share of its scored answers that are right,
    over every scored position (``"all"``), over those at or past the
    training length (``"beyond"``, None when T ≤ L), and for a fine-tuned run
    over those at or past the fine-tune's own length (``"tuned"``, None when
    T is not past it, or the run is not fine-tuned), and the mean loss over
    every scored answer. Arguments as
    in :func:`evaluate`. The sequences run in chunks of :data:`EVAL_CHUNK`
    (one compiled program per length); a randomized scheme draws its
    positions per chunk from :func:`position_key` folded with the chunk's index.
    """
    from .stats import per_sequence

    config = run.config
    sequences = _check_sequences(sequences)
    method, factor = _own_rescaling(run, method, factor)
    tokens, target, mask = test_batch(run.task, T, seed=seed, batch=sequences, vocab=config.vocab, test_set=test_set)
    omega, scale = _rescaling(run, T, method, factor, _check_logn(logn), beta_fast, beta_slow)
    pkey = position_key(config, T, seed=seed, test_set=test_set)
    chunk = min(EVAL_CHUNK, sequences)
    correct, nll = [], []
    for i in range(0, sequences, chunk):
        key = None if pkey is None else jax.random.fold_in(pkey, i // chunk)
        c, n = _scores(run.params, tokens[i:i + chunk], target[i:i + chunk], mask[i:i + chunk], omega, scale, key,
                       config=config)
        correct.append(np.asarray(c))
        nll.append(np.asarray(n))
    correct, nll, mask = np.concatenate(correct), np.concatenate(nll), np.asarray(mask)
    tuned = getattr(run, "finetune_len", None)
    return {
        "all": per_sequence(correct, mask),
        "beyond": per_sequence(correct, mask & (np.arange(T) >= run.train_len)) if T > run.train_len else None,
        "tuned": per_sequence(correct, mask & (np.arange(T) >= tuned)) if tuned and T > tuned else None,
        "loss": float(nll.sum() / mask.sum()),
    }


def evaluate_cells(run, lengths, *, seed=0, sequences=EVAL_SEQUENCES, test_set=0, **options) -> dict:
    """Accuracy over all positions, past L and past a fine-tune's length, with their SEs over sequences, one pass each.

    ``{"accuracy", "accuracy_se", "beyond", "beyond_se", "tuned",
    "tuned_se"}``, arrays over ``lengths`` (``beyond`` NaN at lengths ≤ L,
    ``tuned`` NaN unless the run is fine-tuned and the length is past its
    fine-tune length; everything NaN where the scheme cannot run). ``options`` as in :func:`evaluate` (``method``,
    ``factor``, ``logn``, YaRN's thresholds). What the sweeps store.
    """
    from .stats import summarize

    lengths = _lengths(lengths)
    names = {"all": "accuracy", "beyond": "beyond", "tuned": "tuned"}
    out = {k: np.full(len(lengths), np.nan) for name in names.values() for k in (name, f"{name}_se")}
    for i, T in enumerate(lengths):
        if run.config.scheme == "learned" and T > run.train_len:
            continue
        cell = sequence_scores(run, T, seed=seed, sequences=sequences, test_set=test_set, **options)
        for part, name in names.items():
            if cell[part] is not None:
                score = summarize(cell[part])
                out[name][i], out[f"{name}_se"][i] = score.value, score.se
    return out


def evaluate(
    run, lengths, *, seed=0, method=None, factor=None, positions="all", beta_fast=None, beta_slow=None, logn=False
):
    """Accuracy and loss per test length: ``{"accuracy": array, "loss": array}``.

    ``positions="all"`` scores every position with an answer; ``"beyond"``
    only those at or past the training length (every length must then exceed
    it), which removes the floor the first L positions set. ``method`` and
    ``factor`` apply test-time RoPE scaling (see :func:`rope_scaling`, which
    also takes YaRN's ``beta_fast`` and ``beta_slow``, default
    :data:`YARN_LAB`); with ``factor=None`` the factor is each length ÷ the
    training length (at least 1). ``logn=True`` multiplies the logits of
    query position i by max(1, ln(i + 1)/ln L) (:func:`logn_scale`, Qwen's
    log-n scaling), for every scheme and on top of YaRN's temperature; the
    factor multiplies q·k/√head_dim, before ALiBi adds its bias, so for ALiBi
    it sharpens the content term and not the bias. ``logn=False`` runs
    exactly the computation it always did. Entries are NaN only where the
    scheme cannot run: the learned table past its length.

    A fine-tuned run (from :func:`.train.finetune`) is evaluated with the
    rescaling it was fine-tuned with: ``method=None, factor=None`` then mean
    its own ``run.method`` at its own ``run.factor`` at every length (pass a
    method to evaluate it otherwise); ``"beyond"`` is past its original L.
    """
    lengths = _lengths(lengths)
    _check_positions(positions)
    logn = _check_logn(logn)
    config = run.config
    method, factor = _own_rescaling(run, method, factor)
    acc = np.full(len(lengths), np.nan)
    loss = np.full(len(lengths), np.nan)
    for i, T in enumerate(lengths):
        if positions == "beyond" and T <= run.train_len:
            raise ValueError(f"positions='beyond' needs lengths past the training length {run.train_len}, got {T}")
        if config.scheme == "learned" and T > run.train_len:
            continue  # cannot run: the table has train_len rows
        tokens, target, mask = test_batch(run.task, T, seed=seed, vocab=config.vocab)
        if positions == "beyond":
            mask = mask & (jnp.arange(T) >= run.train_len)
        omega, scale = _rescaling(run, T, method, factor, logn, beta_fast, beta_slow)
        correct, nll = _scores(
            run.params, tokens, target, mask, omega, scale, position_key(config, T, seed=seed), config=config
        )
        n = float(mask.sum())
        acc[i] = float(correct.sum()) / n
        loss[i] = float(nll.sum()) / n
    return {"accuracy": acc, "loss": loss}


def accuracy(
    run, lengths, *, seed=0, method=None, factor=None, positions="all", beta_fast=None, beta_slow=None, logn=False
) -> np.ndarray:
    """Accuracy of ``run`` at each test length: one value per length, in [0, 1].

    The value is NaN only for a length the scheme cannot run: the learned
    table past its training length ("cannot run"; nothing is clamped). Other
    arguments as in :func:`evaluate`.

    >>> from posenc_helpers.lab.train import train
    >>> tiny = dict(train_len=8, d_model=16, heads=2, layers=1)   # a tiny model: one layer, width 16, L = 8
    >>> run = train("learned", "prev", steps=3, progress=False, **tiny)
    >>> acc = accuracy(run, [8, 16])
    >>> bool(np.isnan(acc[1]))              # 16 > 8 table rows: cannot run
    True
    """
    return evaluate(
        run, lengths, seed=seed, method=method, factor=factor, positions=positions,
        beta_fast=beta_fast, beta_slow=beta_slow, logn=logn,
    )["accuracy"]


# ---- what attention does past L ------------------------------------------------------------------


@functools.partial(jax.jit, static_argnames=("config",))
def _maps(params, tokens, omega, logit_scale, key=None, *, config):
    # weights[l, b, h, i, j]: (layers, batch, heads, T, T)
    _, maps = forward(params, tokens, config, omega=omega, logit_scale=logit_scale, return_attention=True, key=key)
    return maps


def attention_summary(weights, *, train_len, positions="beyond") -> dict:
    """Entropy and weight on key 0 of attention maps, averaged over the batch and the chosen queries.

    ``weights`` has shape (layers, batch, heads, T, T), rows summing to 1
    (query i, key j ≤ i). Per query, H_i = −Σ_j w_ij ln w_ij in nats (0·ln 0
    = 0) and w_i0, the weight on the first token; both are averaged over the
    batch and over the queries i = 0 … T − 1 (``positions="all"``) or i ≥
    ``train_len`` (``"beyond"``, which needs T > train_len). Returns
    ``{"entropy": (layers, heads), "first": (layers, heads), "uniform":
    float}``, "uniform" being the same average of ln(i + 1), the entropy of
    uniform attention over the i + 1 keys query i sees.

    >>> T = 4                                   # uniform causal attention: w_ij = 1/(i + 1)
    >>> w = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    >>> out = attention_summary(w[None, None, None], train_len=2)   # queries 2, 3
    >>> out["entropy"].round(4), round(out["uniform"], 4), out["first"].round(4)   # (ln 3 + ln 4)/2; (1/3 + 1/4)/2
    (array([[1.2425]]), 1.2425, array([[0.2917]]))
    """
    w = np.asarray(weights)
    if w.ndim != 5 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must have shape (layers, batch, heads, T, T), got {w.shape}")
    train_len = v.positive_int("train_len", train_len)
    _check_positions(positions)
    T = w.shape[-1]
    if positions == "beyond" and T <= train_len:
        raise ValueError(f"positions='beyond' needs a length past the training length {train_len}, got {T}")
    start = train_len if positions == "beyond" else 0
    w = w[..., start:, :].astype(np.float64)
    # H_i = −Σ_j w_ij ln w_ij, with 0·ln 0 = 0: (layers, batch, heads, queries)
    entropy = -np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0).sum(-1)
    return {
        "entropy": entropy.mean(axis=(1, 3)),
        "first": w[..., 0].mean(axis=(1, 3)),
        # mean over the chosen queries of ln(i + 1)
        "uniform": float(np.log(np.arange(start, T) + 1.0).mean()),
    }


def _attention_stats(run, length, seed, method, factor, logn, positions) -> dict:
    length = v.positive_int("length", length)
    _check_positions(positions)
    logn = _check_logn(logn)
    config = run.config
    if positions == "beyond" and length <= run.train_len:
        raise ValueError(f"positions='beyond' needs a length past the training length {run.train_len}, got {length}")
    if config.scheme == "learned" and length > run.train_len:
        raise ValueError(f"the learned table has {run.train_len} rows, so it cannot run at length {length}")
    method, factor = _own_rescaling(run, method, factor)
    tokens, _, _ = test_batch(run.task, length, seed=seed, vocab=config.vocab)
    omega, scale = _rescaling(run, length, method, factor, logn)
    maps = _maps(run.params, tokens, omega, scale, position_key(config, length, seed=seed), config=config)
    return attention_summary(np.asarray(maps), train_len=run.train_len, positions=positions)


def attention_entropy(run, length, *, seed=0, method=None, factor=None, logn=False, positions="beyond") -> dict:
    """Entropy of each head's attention at test ``length``: ``{"entropy": (layers, heads), "uniform": float}``.

    On the test batch ``test_batch(run.task, length, seed=seed)`` (the one
    :func:`accuracy` scores), the entropy in nats of each query's attention
    distribution, averaged over the batch and the query positions (all with
    ``positions="all"``; i ≥ L with ``"beyond"``), and "uniform", the same
    average of ln(i + 1), the entropy of attention spread evenly over the
    i + 1 visible keys. ``method``, ``factor`` and ``logn`` rescale as in
    :func:`evaluate` (a fine-tuned run uses its own; YaRN with
    :data:`YARN_LAB` and its temperature). See :func:`attention_summary`.
    """
    out = _attention_stats(run, length, seed, method, factor, logn, positions)
    return {"entropy": out["entropy"], "uniform": out["uniform"]}


def attention_to_first(run, length, *, seed=0, method=None, factor=None, logn=False, positions="beyond") -> np.ndarray:
    """Mean attention weight on key 0 (the first token) per head at test ``length``: (layers, heads).

    Averaged over the test batch and query positions exactly as
    :func:`attention_entropy`, with the same rescaling arguments.
    """
    return _attention_stats(run, length, seed, method, factor, logn, positions)["first"]


def attention(run, tokens) -> np.ndarray:
    """Attention weights of ``run`` on ``tokens`` (one sequence, shape (T,)): shape (layers, heads, T, T).

    ``weights[l, h, i, j]`` is how much query i reads key j in head h of layer l.
    A learned table past its length raises the ValueError of ``add_positions``.
    A randomized scheme reads the positions drawn from :func:`position_key`
    at this length (seed 0).
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be one sequence of integer token ids, shape (T,), got {tokens.dtype} {tokens.shape}")
    if tokens.size == 0 or tokens.min() < 0 or tokens.max() >= run.config.vocab:
        raise ValueError(f"tokens must be ids in [0, {run.config.vocab}), got {tokens.size} tokens")
    key = position_key(run.config, tokens.size)
    _, maps = forward(run.params, jnp.asarray(tokens)[None], run.config, return_attention=True, key=key)
    # maps: (layers, batch = 1, heads, T, T)
    return np.asarray(maps[:, 0])


def attention_by_distance(maps) -> np.ndarray:
    """Mean attention weight at each distance d = i − j, over the queries that can reach it: (..., T).

    ``maps`` has shape (..., T, T) (query i, key j), e.g. the output of :func:`attention`.

    >>> w = np.array([[1.0, 0.0], [0.25, 0.75]])     # d = 0: (1 + 0.75)/2; d = 1: 0.25/1
    >>> attention_by_distance(w)
    array([0.875, 0.25 ])
    """
    maps = np.asarray(maps, dtype=float)
    T = maps.shape[-1]
    # profile[d] = mean over i ≥ d of w[i, i − d]
    return np.stack([np.diagonal(maps, -d, axis1=-2, axis2=-1).mean(-1) for d in range(T)], axis=-1)


def learned_similarity(run) -> np.ndarray:
    """Cosine similarity between every pair of rows of a trained learned table: (train_len, train_len)."""
    if run.config.scheme != "learned":
        raise ValueError(f"only the 'learned' scheme has a table, got scheme {run.config.scheme!r}")
    table = np.asarray(run.params["pos"], dtype=float)
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    # sim[m, n] = P[m]·P[n] / (|P[m]| |P[n]|)
    return unit @ unit.T


def rope_pair_usage(run, tokens) -> np.ndarray:
    """How much each RoPE pair contributes to the attention logits: (layers, heads, head_dim/2), rows sum to 1.

    For pair k the contribution is |q_k|·|k_k|, the largest value its term of
    q·k can take, averaged over every causal (query, key) pair of ``tokens``,
    then divided by the sum over pairs.
    """
    from .model import _layer_norm, _mlp
    from .model import attention as attend

    config = run.config
    if config.scheme != "rope":
        raise ValueError(f"pair usage needs a RoPE model, got scheme {config.scheme!r}")
    params = run.params
    x = params["embed"][jnp.asarray(tokens)[None]]
    B, T, d = x.shape
    H, Dh = config.heads, config.head_dim
    usage = []
    for block in params["blocks"]:
        h = _layer_norm(x, block["ln1"])
        # q, k: (heads, T, head_dim/2, 2) — a pair's norm does not change under rotation
        q, k, _ = (h @ block["qkv"]).reshape(T, 3, H, Dh // 2, 2).transpose(1, 2, 0, 3, 4)
        qn, kn = jnp.linalg.norm(q, axis=-1), jnp.linalg.norm(k, axis=-1)
        causal = np.tril(np.ones((T, T)))
        # u[h, k] = Σ_{j ≤ i} |q_ik|·|k_jk| / (number of causal pairs)
        u = jnp.einsum("hik,hjk,ij->hk", qn, kn, causal) / causal.sum()
        usage.append(np.asarray(u / u.sum(-1, keepdims=True)))
        out, _ = attend(h, block, config)
        x = x + out
        x = x + _mlp(_layer_norm(x, block["ln2"]), block)
    return np.stack(usage)
