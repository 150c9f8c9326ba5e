"""Stretching RoPE past its training length: a new base, PI, NTK-aware scaling and YaRN.

A RoPE model trained on sequences of length L has seen each pair k turn
through the angles 0 … L·ω_k. To run it on s·L tokens, every method here
changes the frequencies ω_k = base^(−2k/D) into new ones ω'_k:

* Position Interpolation (PI):  ω'_k = ω_k / s, i.e. positions ÷ s;
* NTK-aware scaling:            base' = base·s^(D/(D−2)), so ω'_k = ω_k·s^(−2k/(D−2));
* YaRN ("NTK-by-parts"):         ω'_k = (1 − γ_k)·ω_k/s + γ_k·ω_k, where the blend γ_k
  depends on how many turns r_k = L/λ_k the pair makes within L.

and, under the names real configs use (Hugging Face's ``rope_type``):

* ``"linear"``: another name for PI;
* ``"dynamic"`` (dynamic NTK): NTK-aware scaling whose base grows with the
  current sequence length, designed for inference without fine-tuning;
* ``"llama3"``: Llama 3.1's per-pair rule, which is YaRN's paper ramp with
  α = low_freq_factor and β = high_freq_factor and no temperature;
* ``"longrope"`` (legacy ``"su"``): per-pair rescale factors searched for
  one model (Phi-3), short ones up to L and long ones past it.

:func:`scaling_attention_factor` gives the number cos and sin are multiplied
by. All frequencies are float64. Taught in notebooks/09-long-context.ipynb
and 11-rope-as-shipped.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate as v
from .core import frequencies

__all__ = [
    "METHODS",
    "ALIASES",
    "scaling_attention_factor",
    "base_for_wavelength",
    "ntk_base",
    "scaled_frequencies",
    "yarn_attention_factor",
    "yarn_ramp",
]

#: The scaling methods :func:`scaled_frequencies` knows.
METHODS = ("pi", "ntk", "yarn", "dynamic", "llama3", "longrope")

#: Other names real configs use: Hugging Face's ``"linear"`` is PI, ``"su"`` the first name of LongRoPE.
ALIASES = {"linear": "pi", "su": "longrope"}


def canonical_method(method) -> str:
    """The method's canonical name (``"linear"`` → ``"pi"``, ``"su"`` → ``"longrope"``), or a ValueError listing all.

    >>> canonical_method("linear"), canonical_method("yarn")
    ('pi', 'yarn')
    """
    if isinstance(method, str):
        method = ALIASES.get(method, method)
        if method in METHODS:
            return method
    known = ", ".join(repr(m) for m in METHODS)
    aliases = ", ".join(f"{a!r} = {b!r}" for a, b in ALIASES.items())
    raise ValueError(f"method must be one of {known} (or the aliases {aliases}), got {method!r}")

#: The two ways to build the YaRN blend γ_k (see :func:`yarn_ramp`).
RAMPS = ("paper", "index")


def _even_dim(dim, minimum: int = 2) -> int:
    dim = v.positive_int("dim", dim)
    if dim % 2:
        raise ValueError(f"dim must be even (RoPE turns pairs of elements), got {dim}")
    if dim < minimum:
        raise ValueError(f"dim must be at least {minimum} here, got {dim}")
    return dim


def _factor(factor) -> float:
    factor = v.real_scalar("factor", factor)
    if factor < 1.0:
        raise ValueError(f"factor (the context scale s) must be >= 1, got {factor!r}")
    return factor


def base_for_wavelength(dim, wavelength) -> float:
    """The base whose slowest pair has the given wavelength: B = (λ/2π)^(D/(D−2)).

    The slowest pair k = D/2 − 1 has ω = B^(−(D−2)/D), so its wavelength is
    λ = 2π·B^((D−2)/D); solving for B gives the formula. With D = 4 and a
    target of 1000 positions this is the lesson's exercise: B = (1000/2π)² ≈ 25330.
    Needs an even dim ≥ 4 (with D = 2 the only pair has ω = 1 whatever the base)
    and a wavelength above 2π (the fastest possible pair already has 2π).
    Taught in notebooks/09-long-context.ipynb.

    >>> round(base_for_wavelength(4, 1000), 1)    # (1000/2π)² = 159.155² ≈ 25330
    25330.3
    >>> round(base_for_wavelength(128, 2 * np.pi * 10000 ** (126 / 128)))   # recovers the usual base
    10000
    """
    dim = _even_dim(dim, minimum=4)
    wavelength = v.real_scalar("wavelength", wavelength)
    if wavelength <= 2.0 * math.pi:
        raise ValueError(f"wavelength must be greater than 2π ≈ 6.283 positions, got {wavelength!r}")
    # B = (λ / 2π)^(D / (D − 2))
    return (wavelength / (2.0 * math.pi)) ** (dim / (dim - 2))


def ntk_base(dim, base=10000.0, factor=1.0) -> float:
    """The NTK-aware base: base' = base·s^(D/(D−2)).

    Then ω'_k = base'^(−2k/D) = ω_k·s^(−2k/(D−2)): the fastest pair (k = 0)
    keeps its frequency and the slowest (k = D/2 − 1) is divided by exactly s.
    Taught in notebooks/09-long-context.ipynb.

    >>> ntk_base(4, 10000, 4)      # 10000·4^(4/2) = 10000·16
    160000.0
    """
    dim = _even_dim(dim, minimum=4)
    base = v.base_value(base)
    factor = _factor(factor)
    # base' = base · s^(D/(D−2))
    return base * factor ** (dim / (dim - 2))


def yarn_ramp(
    dim, base=10000.0, *, original_max_position, beta_fast=32.0, beta_slow=1.0, ramp="paper", truncate=True
) -> np.ndarray:
    """YaRN's blend γ_k per pair: 1 keeps ω_k (extrapolate), 0 uses ω_k/s (interpolate).

    ``ramp="paper"`` (default) is the paper's formula (Peng et al. 2023, eq. for
    "NTK-by-parts"), with L = original_max_position, α = beta_slow, β = beta_fast:

        r_k = L / λ_k              (turns of pair k within the training length)
        γ_k = clamp((r_k − α) / (β − α), 0, 1)

    Pairs that turn more than β times in training keep their frequency; pairs
    that turn fewer than α times are fully interpolated.

    ``ramp="index"`` is what the reference code (jquesnelle/yarn, and
    ``_compute_yarn_parameters`` in huggingface/transformers) computes: the
    same two cut-offs turned into pair indices, d(r) = D·ln(L/(2π·r))/(2·ln base),
    rounded outwards (low = ⌊d(β)⌋, high = ⌈d(α)⌉, clipped to [0, D − 1]), and
    a ramp that is linear in k between them: γ_k = 1 − clamp((k − low)/(high − low), 0, 1).
    It agrees with the paper outside the cut-offs and differs a little between them.
    ``truncate=False`` (a key some configs carry, e.g. gpt-oss) skips the
    rounding, as Hugging Face does: low = d(β), high = d(α), still clipped.
    Taught in notebooks/09-long-context.ipynb.

    >>> yarn_ramp(4, 10000, original_max_position=100).round(5)   # r = 100/2π ≈ 15.915 and 100/(200π) ≈ 0.159
    array([0.48114, 0.     ])
    >>> # (15.915 − 1)/(32 − 1) = 0.48114: pair 0 is partway up the ramp; pair 1 makes under one turn (γ = 0)
    """
    dim = _even_dim(dim)
    base = v.base_value(base)
    length = v.positive_int("original_max_position", original_max_position)
    beta_fast = v.real_scalar("beta_fast", beta_fast)
    beta_slow = v.real_scalar("beta_slow", beta_slow)
    if ramp not in RAMPS:
        raise ValueError(f"ramp must be one of {RAMPS}, got {ramp!r}")
    # the index ramp takes beta_slow == beta_fast (a shipped DeepSeek config has both 1): Hugging Face's
    # find_correction_range then gives a ramp of (almost) zero width, widened by its 0.001 guard below;
    # the paper's formula divides by beta_fast − beta_slow, so it needs them apart
    equal_ok = ramp == "index" and beta_slow == beta_fast
    if not (0.0 < beta_slow < beta_fast or (equal_ok and beta_slow > 0.0)):
        need = "0 < beta_slow <= beta_fast" if ramp == "index" else "0 < beta_slow < beta_fast"
        raise ValueError(
            f"need {need} (turns within the training length) for ramp {ramp!r}, "
            f"got beta_slow={beta_slow!r} and beta_fast={beta_fast!r}"
        )
    omega = frequencies(dim, base)
    if ramp == "paper":
        # r_k = L / λ_k = L·ω_k / 2π
        r = length * omega / (2.0 * np.pi)
        # γ_k = clamp((r_k − α) / (β − α), 0, 1)
        return np.clip((r - beta_slow) / (beta_fast - beta_slow), 0.0, 1.0)

    def index_of(turns: float) -> float:
        # d(r) = D·ln(L / (2π·r)) / (2·ln base): the (fractional) pair index that turns r times in L
        return dim * math.log(length / (2.0 * math.pi * turns)) / (2.0 * math.log(base))

    low, high = index_of(beta_fast), index_of(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:  # the reference code's guard against a zero-width ramp
        high += 0.001
    k = np.arange(dim // 2, dtype=np.float64)
    # γ_k = 1 − clamp((k − low) / (high − low), 0, 1)
    return 1.0 - np.clip((k - low) / (high - low), 0.0, 1.0)


def scaled_frequencies(
    dim,
    base=10000.0,
    method="pi",
    factor=1.0,
    *,
    original_max_position=None,
    beta_fast=32.0,
    beta_slow=1.0,
    ramp="paper",
    truncate=True,
    low_freq_factor=1.0,
    high_freq_factor=4.0,
    seq_len=None,
    short_factor=None,
    long_factor=None,
) -> np.ndarray:
    """The frequencies ω'_k a RoPE model uses at s = ``factor`` times its training length.

    One value per pair, k = 0 … D/2 − 1, from ω_k = base^(−2k/D); L means
    ``original_max_position``:

    * ``"pi"`` (Position Interpolation, Chen et al. 2023; Hugging Face's
      ``"linear"`` is accepted too): ω'_k = ω_k / s. Dividing every frequency
      by s is the same as dividing every position by s.
    * ``"ntk"`` (NTK-aware scaling): ω'_k = (base·s^(D/(D−2)))^(−2k/D) = ω_k·s^(−2k/(D−2)).
      The fastest pair is unchanged and the slowest is divided by exactly s.
    * ``"yarn"`` (Peng et al. 2023): ω'_k = (1 − γ_k)·ω_k/s + γ_k·ω_k with
      γ_k from :func:`yarn_ramp` (``ramp`` and ``truncate`` are passed on);
      needs L. ``beta_fast`` = β = 32 and ``beta_slow`` = α = 1 are the
      paper's defaults for LLaMA. YaRN also scales attention logits: see
      :func:`scaling_attention_factor`.
    * ``"dynamic"`` (dynamic NTK): designed for inference without
      fine-tuning. At ``seq_len`` ≤ L (or ``seq_len`` None) it returns
      ω_k unchanged; past L it uses NTK with a base that grows with the
      sequence: base' = base·((s·seq_len/L) − (s − 1))^(D/(D−2)). (Hugging
      Face takes L from ``max_position_embeddings`` here.) This is a pure
      function of ``seq_len``. Hugging Face's rotary module also keeps state
      between calls, and what it keeps depends on the release: in
      transformers 5.23.0 (``dynamic_rope_update`` in modeling_rope_utils.py)
      it keeps the frequencies of the longest sequence seen until one
      shorter than L resets them; 5.0.0 wrote the cached length under
      another name (``None_max_seq_len_cached``), so every sequence past L
      got its own frequencies and a shorter one kept the last long one's.
    * ``"llama3"`` (Llama 3.1), per pair with λ_k = 2π/ω_k: λ_k < L/high_freq_factor
      keeps ω_k; λ_k > L/low_freq_factor gives ω_k/s; in between
      (1 − γ)·ω_k/s + γ·ω_k with γ = (L/λ_k − low_freq_factor)/(high_freq_factor − low_freq_factor).
      That is YaRN's paper ramp with α = low_freq_factor, β = high_freq_factor.
    * ``"longrope"`` (legacy name ``"su"``): ω'_k = ω_k / f_k, with f =
      ``long_factor`` when ``seq_len`` > L and ``short_factor`` otherwise
      (``seq_len`` None means short). ``factor`` plays no part in the
      frequencies, only in :func:`scaling_attention_factor`.

    ``factor`` must be a finite number ≥ 1; with s = 1 every method but
    LongRoPE returns ω_k. Taught in notebooks/09-long-context.ipynb and
    11-rope-as-shipped.ipynb.

    >>> scaled_frequencies(4, 10000, "pi", 4)      # [1, 0.01] / 4
    array([0.25  , 0.0025])
    >>> scaled_frequencies(4, 10000, "ntk", 4)     # ω_0 = 1 kept, ω_1 = 0.01/4 = 0.0025
    array([1.    , 0.0025])
    >>> scaled_frequencies(4, 10000, "yarn", 4, original_max_position=100).round(5)
    array([0.61086, 0.0025 ])
    >>> # pair 0: γ = 0.48114, so (1 − 0.48114)·1/4 + 0.48114·1 = 0.61086; pair 1: γ = 0, so 0.01/4
    >>> scaled_frequencies(4, 10000, "dynamic", 4, original_max_position=100, seq_len=200)
    array([1.   , 0.002])
    >>> # base' = 10000·(4·200/100 − 3)^(4/2) = 10000·25, so ω_1 = 250000^(−1/2) = 0.002
    >>> scaled_frequencies(4, 10000, "rope", 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: method must be one of 'pi', 'ntk', 'yarn', 'dynamic', 'llama3', 'longrope' (or the aliases ...), got 'rope'
    """
    method = canonical_method(method)
    dim = _even_dim(dim, minimum=4 if method in ("ntk", "dynamic") else 2)
    base = v.base_value(base)
    factor = _factor(factor)
    if original_max_position is not None:
        original_max_position = v.positive_int("original_max_position", original_max_position)
    if seq_len is not None:
        seq_len = v.positive_int("seq_len", seq_len)
    omega = frequencies(dim, base)
    if method == "pi":
        # ω'_k = ω_k / s
        return omega / factor
    if method == "ntk":
        # ω'_k = base'^(−2k/D), base' = base · s^(D/(D−2))
        return frequencies(dim, ntk_base(dim, base, factor))
    if original_max_position is None:
        raise ValueError(
            f"method={method!r} needs original_max_position, the training context length L "
            "(the method compares positions or wavelengths with L), got None"
        )
    length = original_max_position
    if method == "dynamic":
        if seq_len is None or seq_len <= length:
            return omega
        # base' = base · ((s·seq_len/L) − (s − 1))^(D/(D−2))
        grown = base * ((factor * seq_len / length) - (factor - 1.0)) ** (dim / (dim - 2))
        return frequencies(dim, grown)
    if method == "longrope":
        use_long = seq_len is not None and seq_len > length
        name, table = ("long_factor", long_factor) if use_long else ("short_factor", short_factor)
        table = _rescale_table(name, table, dim)
        # ω'_k = ω_k / f_k
        return omega / table
    if method == "llama3":
        low_freq_factor = v.real_scalar("low_freq_factor", low_freq_factor)
        high_freq_factor = v.real_scalar("high_freq_factor", high_freq_factor)
        if not 0.0 < low_freq_factor < high_freq_factor:
            raise ValueError(
                "need 0 < low_freq_factor < high_freq_factor, "
                f"got low_freq_factor={low_freq_factor!r} and high_freq_factor={high_freq_factor!r}"
            )
        wavelength = 2.0 * np.pi / omega
        # γ = (L/λ_k − low_freq_factor) / (high_freq_factor − low_freq_factor)
        gamma = (length / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
        # λ_k < L/high_freq_factor: keep; λ_k > L/low_freq_factor: ω_k/s; in between: blend
        out = np.where(wavelength > length / low_freq_factor, omega / factor, omega)
        medium = ~(wavelength < length / high_freq_factor) & ~(wavelength > length / low_freq_factor)
        return np.where(medium, (1.0 - gamma) * omega / factor + gamma * omega, out)
    gamma = yarn_ramp(
        dim, base, original_max_position=length, beta_fast=beta_fast, beta_slow=beta_slow, ramp=ramp,
        truncate=truncate,
    )
    # ω'_k = (1 − γ_k)·ω_k/s + γ_k·ω_k
    return (1.0 - gamma) * omega / factor + gamma * omega


def _rescale_table(name: str, table, dim: int) -> np.ndarray:
    """LongRoPE's per-pair factors: D/2 finite positive numbers, or a ValueError naming ``name``."""
    if table is None:
        raise ValueError(f"method='longrope' needs {name}, one rescale factor per pair (D/2 = {dim // 2}), got None")
    table = v.real_array(name, table)
    if table.shape != (dim // 2,):
        raise ValueError(f"{name} must hold one factor per pair, D/2 = {dim // 2} numbers, got shape {table.shape}")
    if np.any(table <= 0):
        raise ValueError(f"{name} must hold positive numbers, got {table[table <= 0][0]!r}")
    return table


def scaling_attention_factor(
    method, factor=1.0, *, original_max_position=None, attention_factor=None, mscale=None, mscale_all_dim=None
) -> float:
    """The number cos and sin are multiplied by; attention logits then grow by its square.

    Both q and k are rotated with the scaled cos and sin tables, so each
    score q·k is multiplied by this factor squared. As in Hugging Face, only
    YaRN and LongRoPE have one; every other method returns 1.

    * ``"yarn"``: an explicit ``attention_factor`` wins. Otherwise, with
      g(s, m) = 0.1·m·ln s + 1 (and g = 1 for s ≤ 1): g(s, mscale)/g(s, mscale_all_dim)
      when both ``mscale`` and ``mscale_all_dim`` are given and non-zero
      (DeepSeek's configs), else g(s, 1) = 0.1·ln s + 1.
    * ``"longrope"``: an explicit ``attention_factor`` wins; else
      √(1 + ln s / ln L) for s > 1 (L = ``original_max_position``) and 1 for
      s ≤ 1. It depends on s and L only, never on the current sequence length.

    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> round(scaling_attention_factor("yarn", 8), 4)                  # 0.1·ln 8 + 1
    1.2079
    >>> round(scaling_attention_factor("yarn", 40, mscale=1.0, mscale_all_dim=0.707), 4)
    1.0857
    >>> # (0.1·ln 40 + 1)/(0.0707·ln 40 + 1) = 1.3689/1.2608; equal mscale and mscale_all_dim would give 1
    >>> round(scaling_attention_factor("longrope", 32, original_max_position=4096), 4)   # √(1 + ln 32/ln 4096)
    1.1902
    >>> scaling_attention_factor("linear", 4)
    1.0
    """
    method = canonical_method(method)
    factor = _factor(factor)
    if method not in ("yarn", "longrope"):
        return 1.0
    if attention_factor is not None:
        attention_factor = v.real_scalar("attention_factor", attention_factor)
        if attention_factor <= 0:
            raise ValueError(f"attention_factor must be positive, got {attention_factor!r}")
        return attention_factor
    if method == "longrope":
        if factor <= 1.0:
            return 1.0
        if original_max_position is None:
            raise ValueError("LongRoPE's attention factor needs original_max_position (L), got None")
        length = v.positive_int("original_max_position", original_max_position)
        if length < 2:
            raise ValueError(f"original_max_position must be at least 2 (ln L divides), got {length}")
        # √(1 + ln s / ln L)
        return math.sqrt(1.0 + math.log(factor) / math.log(length))

    def g(scale: float, m: float) -> float:
        # g(s, m) = 0.1·m·ln s + 1, and 1 for s ≤ 1
        return 1.0 if scale <= 1.0 else 0.1 * m * math.log(scale) + 1.0

    if mscale and mscale_all_dim:
        mscale = v.real_scalar("mscale", mscale)
        mscale_all_dim = v.real_scalar("mscale_all_dim", mscale_all_dim)
        return g(factor, mscale) / g(factor, mscale_all_dim)
    return g(factor, 1.0)


def yarn_attention_factor(factor) -> float:
    """YaRN's attention temperature: √(1/t) = 0.1·ln s + 1.

    The paper divides the attention logits by t; it does so by multiplying
    both q and k (in practice, the cos and sin tables) by √(1/t), so the logits
    grow by (0.1·ln s + 1)². s = 1 gives 1: no change. Taught in
    notebooks/09-long-context.ipynb.

    >>> round(yarn_attention_factor(8), 4)     # 0.1·ln 8 + 1 = 0.1·2.0794 + 1
    1.2079
    >>> yarn_attention_factor(1)
    1.0
    """
    factor = _factor(factor)
    # √(1/t) = 0.1·ln s + 1
    return 0.1 * math.log(factor) + 1.0
