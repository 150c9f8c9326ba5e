"""How small RoPE's base may be for a context: the bound of Men et al. 2024, "Base of RoPE Bounds Context Length".

The paper (arXiv 2405.14591, §4.2–4.3) compares a query's expected score for a
*similar* key k* = q + ε with its score for a random key. With i.i.d. components
of standard deviation σ, Theorem 1 gives the difference over 2σ² as

    B_{m,θ} = Σ_{i=0}^{d/2−1} cos(m·θ_i)              (their Eq. 9, θ_i = base^(−2i/d))

which falls as the relative distance m grows, and can go negative: the similar key
then gets *less* attention than a random one. The context a θ "can truly obtain" is

    L_θ = sup{L | B_{m,θ} ≥ 0 for every m ∈ [0, 1, …, L]}          (Eq. 10)

and the lower bound of the base for a context L is

    base_L = inf{base | B_{m,θ} ≥ 0 for every m ∈ [0, 1, …, L]}      (Eq. 11)

which the paper solves numerically (its Table 2). Here:

* :func:`long_term_sum` is B_{m,θ}, for a base and head_dim or for any ``inv_freq``
  (a model's own, scaled ones included);
* :func:`first_negative` is the smallest integer m in [0, context] with B_{m,θ} < 0
  (None if there is none), so L_θ = first_negative − 1; :func:`passes` says whether
  there is none. Both check **every** integer m, exactly: no grid over m;
* :func:`base_lower_bound` is Eq. 11. The bases that pass do **not** form an
  interval (at head_dim 16 and context 256, base 8,620 passes and 10,000 fails), so
  the infimum is taken as it is written: the smallest passing base. It is found by
  scanning bases upward on a grid of ratio 1 + ``step`` from a base below which
  every base provably fails (:func:`floor_base`), then refining the first pass by
  bisection against the failing grid base below it, to a relative width ``rtol``.
  A passing island narrower than the grid step below the result would be missed;
* :func:`certified_base` is a base above which every base provably passes, and
  :func:`scan_bases` says which bases pass between two values, so
  :func:`pass_summary` can say whether every grid base above the smallest one
  passes;
* :func:`config_bounds` applies the check to each kind of layer of a real config;
  ``bounds="stored"`` reads Eq. 11 from ``data/base_bounds.json`` (:func:`stored_bounds`), written by
  ``python -m posenc_helpers.base_bound`` for every bundled model and the paper's Table 2, since a bound at
  128K tokens or more takes tens of seconds to compute.

How B is summed: cos((m₀ + j)θ) = cos m₀θ · cos jθ − sin m₀θ · sin jθ, so a block of
positions is one product of a (blocks × 2K) and a (2K × C) table (einsum: no
BLAS threads, the same order of sums everywhere). Its values match a direct cos
of m·θ to about 1e-10 (the rounding of m·θ itself at m ~ 10⁶).

Taught in notebooks/16-position-at-inference.ipynb.
"""

from __future__ import annotations

import json
import math
import numbers
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from . import _validate as v
from .configs import (
    check_family,
    context_field,
    frequencies_from_config,
    layer_positions,
    load_config,
    per_layer,
    rope_settings,
)

__all__ = [
    "PAPER_TABLE_2",
    "long_term_sum",
    "first_negative",
    "passes",
    "floor_base",
    "certified_base",
    "base_lower_bound",
    "BaseScan",
    "scan_bases",
    "pass_summary",
    "LayerBound",
    "config_bounds",
    "BOUNDS_FILE",
    "stored_bounds",
    "bound_pairs",
    "write_bounds",
]

#: Men et al. 2024 (arXiv 2405.14591), Table 2, "Context length and its corresponding lower bound of RoPE's
#: base", as printed: (column label, lower bound). The paper does not say whether "1k" is 1,000 or 1,024 (its text:
#: "context length ranging from 1,000 to one million") nor which head dimension it used. Read at head_dim 128 with
#: 1k = 1,024, :func:`base_lower_bound` agrees to two digits at 1k, 4k, 8k, 64k and 512k; at 2k the printed 1.6e4
#: is the first passing two-digit base (the smallest is 1.16e4; 1.2e4 to 1.5e4 fail); the printed values at 4k, 16k,
#: 32k, 128k, 256k, 512k and 1M themselves fail (tests/test_base_bound.py checks each).
PAPER_TABLE_2 = (
    ("1k", 4.3e3), ("2k", 1.6e4), ("4k", 2.7e4), ("8k", 8.4e4), ("16k", 3.1e5), ("32k", 6.4e5),
    ("64k", 2.1e6), ("128k", 7.8e6), ("256k", 3.6e7), ("512k", 6.4e7), ("1M", 5.1e8),
)

# positions summed per block at most (the block's table holds about 2·√n·K numbers, the result n)
_BLOCK = 1 << 20


def _head_dim(head_dim) -> int:
    d = v.positive_int("head_dim", head_dim)
    if d % 2:
        raise ValueError(f"head_dim must be even (d/2 pairs turn), got {d}")
    return d


def _theta(inv_freq_or_base, head_dim) -> np.ndarray:
    """θ_i: base^(−2i/d) for a base and head_dim, or the given inv_freq (1-D, finite, ≥ 0)."""
    if head_dim is not None:
        d = _head_dim(head_dim)
        base = v.base_value(inv_freq_or_base)
        # θ_i = base^(−2i/d), i = 0 … d/2 − 1
        return base ** (-2.0 * np.arange(d // 2, dtype=np.float64) / d)
    if isinstance(inv_freq_or_base, (numbers.Real, np.integer, np.floating)) and not isinstance(inv_freq_or_base, bool):
        raise TypeError(f"a base needs head_dim (θ_i = base^(−2i/d)); got the base {v._show(inv_freq_or_base)} "
                        "and head_dim None (or pass the inv_freq array itself)")
    theta = v.vector_array("inv_freq", inv_freq_or_base)
    if theta.ndim != 1:
        raise ValueError(f"inv_freq must be one-dimensional (one frequency per pair), got shape {theta.shape}")
    if (theta < 0).any():
        raise ValueError(f"inv_freq must be non-negative, got {v._show(inv_freq_or_base)}")
    return theta


def _context(context, name: str = "context") -> int:
    if not v._is_int(context):
        raise TypeError(f"{name} must be a non-negative integer (the largest distance m checked), got {v._show(context)}")
    if context < 0:
        raise ValueError(f"{name} must be a non-negative integer (the largest distance m checked), got {context}")
    return int(context)


def long_term_sum(inv_freq_or_base, m, head_dim=None) -> np.ndarray:
    """B_{m,θ} = Σ_i cos(m·θ_i): Men et al.'s measure of how much more a query attends to a similar key.

    ``inv_freq_or_base`` is a base (then give ``head_dim``: θ_i = base^(−2i/d)) or an ``inv_freq`` array (any
    frequencies, a model's scaled ones or zeros for position-free pairs). ``m`` is one distance or an array;
    the result has its shape. Theorem 1: B = (E[qᵀR_m k*] − E[qᵀR_m k]) / 2σ² for a similar key k* = q + ε.

    >>> long_term_sum(10000.0, [0, 1], head_dim=4).round(4)   # θ = (1, 0.01): cos 0 + cos 0; cos 1 + cos 0.01
    array([2.    , 1.5403])
    >>> float(long_term_sum([1.0, 0.0], 3.0).round(4))        # cos 3 + cos 0: a position-free pair adds 1
    0.01
    """
    theta = _theta(inv_freq_or_base, head_dim)
    pos = v.real_array("m", m)
    # B_m = Σ_i cos(m·θ_i)
    return np.cos(pos[..., None] * theta).sum(axis=-1)


def _block_sums(theta: np.ndarray, start: int, stop: int) -> np.ndarray:
    """B_m for every integer m in [start, stop], by the angle-addition identity (see the module docstring)."""
    n = stop - start + 1
    width = math.isqrt(n - 1) + 1                       # j = 0 … width − 1 inside a row
    rows = -(-n // width)                                # m₀ = start + width·r
    j = np.arange(width, dtype=np.float64)[:, None] * theta
    m0 = (start + width * np.arange(rows, dtype=np.float64))[:, None] * theta
    inner = np.concatenate([np.cos(j), np.sin(j)], axis=1)          # (width, 2K)
    outer = np.concatenate([np.cos(m0), -np.sin(m0)], axis=1)       # (rows, 2K)
    # B_{m₀+j} = Σ_i cos m₀θ_i cos jθ_i − sin m₀θ_i sin jθ_i
    return np.einsum("rk,jk->rj", outer, inner).ravel()[:n]


def _witness(theta: np.ndarray, context: int, hints) -> int | None:
    """Some integer m in [0, context] with B_m < 0 (a hint if one fails, else the first), or None if none."""
    tried = np.asarray([m for m in hints if m <= context], dtype=np.float64)
    if tried.size:
        failing = tried[np.cos(tried[:, None] * theta).sum(axis=1) < 0]
        if failing.size:
            return int(failing[0])
    return _scan(theta, context)


def _scan(theta: np.ndarray, context: int) -> int | None:
    start, block = 0, 4096
    while start <= context:
        stop = min(context, start + block - 1)
        negative = np.flatnonzero(_block_sums(theta, start, stop) < 0)
        if negative.size:
            return start + int(negative[0])
        start, block = stop + 1, min(4 * block, _BLOCK)
    return None


def first_negative(inv_freq_or_base, context, head_dim=None) -> int | None:
    """The smallest integer distance m in [0, context] with B_{m,θ} < 0, or None when B ≥ 0 at every one.

    Every integer m is checked. Eq. 10's L_θ, the context the frequencies "truly obtain", is this minus 1.

    >>> first_negative(10000.0, 300, head_dim=16)     # B turns negative first at m = 91, so L_θ = 90
    91
    >>> first_negative(10000.0, 90, head_dim=16) is None
    True
    """
    theta = _theta(inv_freq_or_base, head_dim)
    return _scan(theta, _context(context))


def passes(inv_freq_or_base, context, head_dim=None) -> bool:
    """True when B_{m,θ} ≥ 0 for every integer m in [0, context]: the frequencies meet Men et al.'s condition.

    >>> passes(8620.0, 256, head_dim=16), passes(10000.0, 256, head_dim=16)   # a larger base can fail
    (True, False)
    """
    return first_negative(inv_freq_or_base, context, head_dim) is None


def _bisect(ok, lo: float, hi: float, rtol: float) -> float:
    """The upper end of [lo, hi] after halving (in log) while hi/lo − 1 > rtol, keeping ok(lo) False, ok(hi) True."""
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _monotone_threshold(ok, rtol: float) -> float:
    """inf{b > 1 | ok(b)} for an ok that is False then True as b grows."""
    hi = 2.0
    while not ok(hi):
        hi *= 2.0
    lo = hi / 2.0 if hi > 2.0 else 1.0 + 1e-12
    return hi if ok(lo) else _bisect(ok, lo, hi, rtol)


def _check_pair(context, head_dim, least: int = 2) -> tuple[int, int]:
    context = _context(context)
    d = _head_dim(head_dim)
    if context < least:
        raise ValueError(f"context must be at least {least}, got {context}: B_0 = d/2 and B_1 = Σ cos θ_i > 0 "
                         "(every θ_i ≤ 1), so every base > 1 passes and the bound is 1")
    if d < 4:
        raise ValueError(f"head_dim must be at least 4, got {d}: its one pair turns at θ_0 = 1 whatever the base, "
                         "and B_2 = cos 2 < 0, so no base passes")
    return context, d


def floor_base(context, head_dim, *, rtol=1e-12) -> float:
    """A base below which every base fails: B_2 < 0 or B_3 < 0 there (checked at m = 2, and 3 when context ≥ 3).

    For m ≤ 3 every angle m·θ_i lies in [0, 3] ⊂ [0, π], where cos falls, and θ_i = base^(−2i/d) falls as the
    base grows: so B_2 and B_3 grow with the base, and their zero crossings are found by bisection.

    >>> round(floor_base(1024, 128), 3)
    4.291
    """
    context, d = _check_pair(context, head_dim)
    lowest = 1.0 + 1e-12
    for m in (2, 3)[: min(context, 3) - 1]:
        def ok(b, m=m):
            # B_m(b) = Σ_i cos(m·b^(−2i/d)) ≥ 0
            return float(np.cos(m * _theta(b, d)).sum()) >= 0.0
        lowest = max(lowest, _monotone_threshold(ok, rtol))
    return lowest


def certified_base(context, head_dim, *, rtol=1e-12) -> float:
    """A base from which every larger base passes, proved by a lower bound of B that grows with the base.

    For m ≤ L: cos(m·θ_i) ≥ cos(L·θ_i) when L·θ_i ≤ π (cos falls on [0, π]), and ≥ −1 otherwise; the pair
    θ_0 = 1 (the same for every base) is bounded by min over integers m ≤ L of cos m. The sum of these bounds grows
    with the base (θ_i, i ≥ 1, falls), so once it is ≥ 0 every larger base passes. Far above the smallest
    passing base (a crude bound: it takes about the worst case of every fast pair at −1).

    >>> b = certified_base(256, 16)
    >>> passes(b, 256, head_dim=16), round(b / 1e4, 1)      # about 25 × the smallest passing base, 8,570
    (True, 21.3)
    """
    context, d = _check_pair(context, head_dim)
    k = np.arange(1, d // 2, dtype=np.float64)
    # the θ_0 = 1 pair: its exact minimum over the integers 0 … L
    c0 = min(float(np.cos(np.arange(s, min(s + _BLOCK, context + 1), dtype=np.float64)).min())
             for s in range(0, context + 1, _BLOCK))

    def ok(b):
        x = context * b ** (-2.0 * k / d)                       # L·θ_i
        return c0 + float(np.where(x <= math.pi, np.cos(x), -1.0).sum()) >= 0.0

    return _monotone_threshold(ok, rtol)


def _step(step) -> float:
    step = v.real_scalar("step", step)
    if not 0.0 < step <= 1.0:
        raise ValueError(f"step must be in (0, 1] (the grid's ratio is 1 + step), got {step}")
    return step


def _rtol(rtol) -> float:
    rtol = v.real_scalar("rtol", rtol)
    if not 0.0 < rtol < 1.0:
        raise ValueError(f"rtol must be in (0, 1), got {rtol}")
    return rtol


def base_lower_bound(context, head_dim, *, step=1e-3, rtol=1e-9) -> float:
    """Eq. 11 of Men et al.: the smallest base with B_{m,θ} ≥ 0 for every integer m in [0, context].

    θ_i = base^(−2i/head_dim). Bases are tried upward on the grid floor·(1 + step)^j from :func:`floor_base`
    (below which every base fails); the first grid base that passes is refined by bisection against the failing
    grid base below it, until they differ by a factor 1 + rtol, and the passing end is returned. So the result
    passes, a base a factor 1 + rtol below it fails, and so does every grid base below it. Bases above it may
    fail again (the passing bases are not an interval: see :func:`pass_summary`). Every check covers every m.

    >>> round(base_lower_bound(1024, 128))      # Men et al., Table 2: "1k" → 4.3e3
    4293
    >>> round(base_lower_bound(256, 16))        # yet 10,000 fails at 256 (first at m = 91)
    8570
    """
    context, d = _check_pair(context, head_dim)
    step, rtol = _step(step), _rtol(rtol)
    lowest = floor_base(context, d)
    hints: list[int] = []

    def ok(b):
        m = _witness(_theta(b, d), context, hints)
        if m is not None and m not in hints:
            hints[:] = [m, *hints][:8]                   # the last distances that failed: tried first next time
        return m is None

    j = 0
    while not ok(lowest * (1.0 + step) ** j):
        j += 1
    if j == 0:
        return lowest
    return _bisect(ok, lowest * (1.0 + step) ** (j - 1), lowest * (1.0 + step) ** j, rtol)


@dataclass(frozen=True)
class BaseScan:
    """Which bases on a grid pass, for one context and head_dim: the data behind :func:`pass_summary`.

    ``bases``: the grid lo·(1 + step)^j up to hi; ``first_negative``: for each base, the first integer m with
    B_m < 0, or −1 when it passes (every m in [0, context] checked).
    """

    context: int
    head_dim: int
    step: float
    bases: np.ndarray
    first_negative: np.ndarray

    @property
    def passing(self) -> np.ndarray:
        """True where the base passes."""
        return self.first_negative < 0

    @property
    def alternations(self) -> int:
        """How many times pass and fail swap along the grid (1 for a single threshold inside the range)."""
        return int((self.passing[1:] != self.passing[:-1]).sum())

    @property
    def smallest_passing(self) -> float | None:
        """The smallest grid base that passes, or None."""
        good = np.flatnonzero(self.passing)
        return float(self.bases[good[0]]) if good.size else None

    @property
    def largest_failing(self) -> float | None:
        """The largest grid base that fails, or None."""
        bad = np.flatnonzero(~self.passing)
        return float(self.bases[bad[-1]]) if bad.size else None


def scan_bases(context, head_dim, lo, hi, *, step=1e-3) -> BaseScan:
    """Check every base lo·(1 + step)^j ≤ hi at every integer m in [0, context]; see :class:`BaseScan`.

    >>> s = scan_bases(256, 16, 8000.0, 11000.0, step=0.01)
    >>> s.alternations, round(s.smallest_passing), round(s.largest_failing)   # fail, one pass, fail again
    (2, 8577, 11000)
    """
    context, d = _check_pair(context, head_dim)
    step = _step(step)
    lo, hi = v.base_value(lo, "lo"), v.base_value(hi, "hi")
    if hi < lo:
        raise ValueError(f"hi must be at least lo, got lo={lo} and hi={hi}")
    count = int(math.floor(math.log(hi / lo) / math.log1p(step) + 1e-9)) + 1
    if count > 1_000_000:
        raise ValueError(f"the grid from lo={lo} to hi={hi} at step {step} has {count:,} bases; at most 1,000,000")
    bases = lo * (1.0 + step) ** np.arange(count, dtype=np.float64)
    first = [_scan(_theta(b, d), context) for b in bases]
    return BaseScan(context, d, step, bases, np.array([-1 if m is None else m for m in first], dtype=np.int64))


@dataclass(frozen=True)
class PassSummary:
    """What :func:`pass_summary` found for one context and head_dim.

    * ``smallest``: :func:`base_lower_bound` (Eq. 11);
    * ``stable``: every grid base from it up to ``up_to`` passes (refined by bisection against the last failing
      grid base below it, like ``smallest``); equal to ``smallest`` when no grid base above it fails;
    * ``failing_above``: how many grid bases between ``smallest`` and ``up_to`` fail;
    * ``certified``: every base ≥ it passes (:func:`certified_base`, a proof, not a scan);
    * ``up_to``: where the scan stopped; when it is ≥ ``certified``, every base ≥ ``stable`` passes on the grid
      and every base ≥ ``certified`` passes outright.
    """

    context: int
    head_dim: int
    step: float
    smallest: float
    stable: float
    failing_above: int
    certified: float
    up_to: float


def pass_summary(context, head_dim, *, step=1e-3, up_to=None, rtol=1e-9) -> PassSummary:
    """The smallest passing base, and from where every larger grid base passes (up to ``up_to``).

    ``up_to`` defaults to :func:`certified_base`, which makes the answer cover every base, but the scan then
    checks every grid base up to there at every m: slow for long contexts (pass a smaller ``up_to``).

    >>> s = pass_summary(256, 16, step=0.01)
    >>> round(s.smallest), round(s.stable), s.failing_above > 0
    (8570, 59315, True)
    """
    context, d = _check_pair(context, head_dim)
    step, rtol = _step(step), _rtol(rtol)
    smallest = base_lower_bound(context, d, step=step, rtol=rtol)
    certified = certified_base(context, d)
    top = certified if up_to is None else v.base_value(up_to, "up_to")
    scan = scan_bases(context, d, smallest, max(top, smallest), step=step)
    failing = np.flatnonzero(~scan.passing)
    stable = smallest
    if failing.size:
        last = int(failing[-1])
        above = scan.bases[last + 1] if last + 1 < scan.bases.size else top
        stable = _bisect(lambda b: _scan(_theta(b, d), context) is None, float(scan.bases[last]), float(above), rtol)
    return PassSummary(context, d, step, smallest, stable, int(failing.size), certified, float(top))


@dataclass(frozen=True)
class LayerBound:
    """One kind of layer of a config, checked against Men et al.'s condition.

    * ``layer_type``, ``layers`` (how many layers are of this kind), ``window``, ``rope``, ``rope_type``,
      ``base``, ``factor``, ``rotary_dim``, ``head_dim``: from :func:`~posenc_helpers.configs.layer_positions`
      (or, for a config whose layers all turn alike, ``rope_settings``);
    * ``context``: the largest distance m checked: the declared ``max_position_embeddings`` (Men et al.'s L) for a
      full-attention layer, window − 1 for a sliding or chunked one (or the context, if that is shorter) (transformers 5.24.0,
      ``masking_utils.sliding_window_overlay``: a key is seen when kv_idx > q_idx − window), the context for
      DeepSeek V4's compressed layers (:data:`COMPRESSED_LAYER_TYPES`);
    * ``bound``: :func:`base_lower_bound` (context, rotary_dim): Eq. 11 for the rotated pairs;
    * ``first_negative_base``: with the unscaled θ_i = base^(−2i/rotary_dim);
    * ``first_negative_model``: with the layer's own turning frequencies (its ``inv_freq`` without proportional
      RoPE's ω = 0 pairs, scaled where the config scales it);
    * ``first_negative_head``: those plus the head's position-free pairs (θ = 0, so each adds cos 0 = 1: Theorem 1
      over the whole q·k; for Gemma 4's proportional layers, the 192 pairs with ω = 0);

    each the first m ≤ context with B_m < 0, or None when B_m ≥ 0 at every one. All None without RoPE.
    """

    layer_type: str
    layers: int
    window: int | None
    rope: bool
    rope_type: str | None
    base: float | None
    factor: float | None
    rotary_dim: int
    head_dim: int
    context: int | None
    bound: float | None
    first_negative_base: int | None
    first_negative_model: int | None
    first_negative_head: int | None

    @property
    def above(self) -> bool | None:
        """Whether the base is at least the bound (None without RoPE). Above is not the same as passing."""
        return None if self.bound is None else self.base >= self.bound


def _declared_context(config: dict) -> int:
    inner = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    for source in (inner, config):
        field = context_field(source)
        if field is not None:
            return _context(field[1], field[0])
    raise ValueError("the config declares no context (no max_position_embeddings or n_positions, at the top or in "
                     "text_config): pass context=")


def _refuse_bidirectional(config: dict) -> None:
    inner = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    for source in (config, inner):
        # Gemma 4's "vision" makes only an image's own tokens see each other both ways; text stays causal
        # (modeling_gemma4.py, 5.25.0: create_masks_for_vision_model only for "vision" with image tokens)
        if source.get("model_type") == "modernbert" or source.get("use_bidirectional_attention") not in (
                None, False, "vision"):
            raise ValueError(f"a bidirectional model ({source.get('model_type')!r}) sees distances on both sides of "
                             "a window, not window − 1 back: config_bounds reads causal decoders only")


def _kinds(config: dict, assume=None) -> list[tuple[dict, np.ndarray | None, int]]:
    """(fields, inv_freq, count) for each distinct kind of layer."""
    if not per_layer(config, assume=assume):
        s = rope_settings(config, assume=assume)
        seq = _declared_context(config) if s.rope_type in ("dynamic", "longrope") else None
        inv, _ = frequencies_from_config(config, seq, assume=assume)
        fields = dict(layer_type="full_attention", window=None, rope=True, rope_type=s.rope_type, base=s.base,
                      factor=s.factor, rotary_dim=s.rotary_dim, head_dim=s.head_dim)
        return [(fields, np.asarray(inv, dtype=np.float64), 1)]
    kinds: dict[tuple, list] = {}
    for r in layer_positions(config, assume=assume):
        fields = dict(layer_type=r.layer_type, window=r.window, rope=r.rope, rope_type=r.rope_type, base=r.base,
                      factor=r.factor, rotary_dim=r.rotary_dim, head_dim=r.head_dim)
        key = (*fields.values(), None if r.inv_freq is None else r.inv_freq.tobytes())
        kinds.setdefault(key, [fields, r.inv_freq, 0])[2] += 1
    return [tuple(k) for k in kinds.values()]


#: Where :func:`write_bounds` stores Eq. 11's bounds (package data).
BOUNDS_FILE = "data/base_bounds.json"
#: The grid step and tolerance the stored bounds were computed with (:func:`base_lower_bound`'s defaults).
BOUNDS_STEP, BOUNDS_RTOL = 1e-3, 1e-9


def stored_bounds() -> dict[tuple[int, int], float]:
    """Eq. 11's smallest passing base by (context, head_dim), as :func:`write_bounds` stored them.

    Each was computed by :func:`base_lower_bound` with its default step and tolerance; ``tests/test_base_bound.py``
    checks that each passes and that a base 1e-6 below it fails, and a ``full`` test recomputes them all.

    >>> round(stored_bounds()[(4096, 128)])          # Men et al.'s Table 2 prints 2.7e4 for 4k
    26952
    """
    text = resources.files("posenc_helpers").joinpath(BOUNDS_FILE).read_text(encoding="utf-8")
    return {(row["context"], row["head_dim"]): row["bound"] for row in json.loads(text)["bounds"]}


def bound_pairs() -> list[tuple[int, int]]:
    """Every (context, rotated width) :func:`write_bounds` stores: each bundled model's kinds of layer, Table 2."""
    from .configs import bundled_configs
    from .kvcache import bundled_kv_config

    pairs = {(c * 1024, 128) for c in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)}
    for name in bundled_configs("all"):
        config = bundled_kv_config(name)
        full = _declared_context(config)
        for fields, _inv, _count in _kinds(config):
            if fields["rope"]:
                pairs.add((_checked_length(fields["window"], full, fields["layer_type"]), fields["rotary_dim"]))
    return sorted(pairs)


def write_bounds(path=None, *, log=print) -> dict:
    """Compute :func:`base_lower_bound` for every pair of :func:`bound_pairs` and write ``data/base_bounds.json``."""
    import time

    rows = []
    for context, head_dim in bound_pairs():
        t0 = time.perf_counter()
        bound = base_lower_bound(context, head_dim, step=BOUNDS_STEP, rtol=BOUNDS_RTOL)
        rows.append({"context": context, "head_dim": head_dim, "bound": bound})
        log(f"context {context:>9,}  head_dim {head_dim:>3}: {bound:.6g} ({time.perf_counter() - t0:.1f} s)")
    table = {"about": "Eq. 11 of Men et al. 2024 (smallest base with B_m >= 0 for every integer m in [0, context]), "
                      "computed by posenc_helpers.base_bound.base_lower_bound with step 1e-3 and rtol 1e-9 for "
                      "every (context, rotated width) of the bundled models and of the paper's Table 2; written by "
                      "`python -m posenc_helpers.base_bound`.",
             "step": BOUNDS_STEP, "rtol": BOUNDS_RTOL, "bounds": rows}
    target = Path(path) if path is not None else Path(__file__).parent / BOUNDS_FILE
    target.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return table


#: DeepSeek V4's layer types whose compressed entries every later query sees (transformers 5.25.0,
#: models/deepseek_v4): besides its window, such a layer attends to entries rotated at the first position of their
#: block, so its q·k distances reach the whole context, and it is checked over the context, not its window.
COMPRESSED_LAYER_TYPES = ("compressed_sparse_attention", "heavily_compressed_attention")


def _checked_length(window, full: int, layer_type: str | None = None) -> int:
    """The largest distance a layer compares: the context, or for a window W, W − 1 when that is shorter
    (Phi-3-mini 128k's window of 262,144 is longer than its context of 131,072); a compressed layer
    (:data:`COMPRESSED_LAYER_TYPES`) the context, since its compressed entries reach back that far."""
    if window is None or layer_type in COMPRESSED_LAYER_TYPES:
        return full
    return min(window - 1, full)


def config_bounds(config, *, context=None, step=1e-3, bounds="compute", assume=None) -> list[LayerBound]:
    """Men et al.'s check for each kind of layer of a config (one :class:`LayerBound` per kind, in layer order).

    ``context`` overrides the declared ``max_position_embeddings`` for the full-attention layers; sliding layers
    are always checked over their window, and DeepSeek V4's compressed layers over the context (their compressed
    entries reach back that far, :data:`COMPRESSED_LAYER_TYPES`). A multimodal RoPE (Qwen2-VL) is checked as text, where its three
    position ids are equal. ``bounds="stored"`` reads each bound from :func:`stored_bounds` instead of computing
    it (and refuses, naming the pair, one that is not stored); ``"compute"`` computes it with ``step``.
    ``config`` may be a dict, a config.json's JSON text or its path; its ``model_type`` is checked, and
    ``assume`` read, as :func:`~posenc_helpers.configs.layer_positions` does.

    >>> cfg = {"head_dim": 16, "rope_theta": 10000.0, "max_position_embeddings": 256}
    >>> row, = config_bounds(cfg, step=0.01)
    >>> row.context, round(row.bound), row.above, row.first_negative_model   # above the bound, yet it fails
    (256, 8570, True, 91)
    """
    config = load_config(config)
    check_family(config, assume)
    _refuse_bidirectional(config)
    full = _declared_context(config) if context is None else _context(context)
    step = _step(step)
    if bounds not in ("compute", "stored"):
        raise ValueError(f"bounds must be 'compute' or 'stored', got {v._show(bounds)}")
    table = stored_bounds() if bounds == "stored" else None

    def bound_of(length, rd):
        if table is None:
            return base_lower_bound(length, rd, step=step)
        if (length, rd) not in table:
            raise ValueError(f"no stored bound for context {length} and head_dim {rd}: use bounds='compute'")
        return table[length, rd]

    rows = []
    for fields, inv, count in _kinds(config, assume):
        if not fields["rope"]:
            rows.append(LayerBound(**fields, layers=count, context=None, bound=None, first_negative_base=None,
                                   first_negative_model=None, first_negative_head=None))
            continue
        length = _checked_length(fields["window"], full, fields["layer_type"])
        rd = fields["rotary_dim"]
        # the model's own frequencies are its turning pairs; proportional RoPE's ω = 0 pairs (Gemma 4) count with
        # the head's other position-free pairs, in first_negative_head, as for every other model
        inv = inv[inv > 0]
        free = max(fields["head_dim"] // 2 - inv.size, 0)
        rows.append(LayerBound(
            **fields, layers=count, context=length, bound=bound_of(length, rd),
            first_negative_base=_scan(_theta(fields["base"], rd), length),
            first_negative_model=_scan(inv, length),
            first_negative_head=_scan(np.concatenate([inv, np.zeros(free)]), length)))
    return rows


if __name__ == "__main__":  # pragma: no cover - the maintainer's command
    write_bounds()
    sys.exit(0)
