"""Precision: cos/sin error against position, RoPE score drift, and a position/format slider.

Taught in notebooks/10-precision.ipynb.

The numbers come from :mod:`posenc_helpers.precision`, which rounds where a
low-precision kernel would and keeps everything else exact.
"""

from __future__ import annotations

import html

import numpy as np

from .. import _validate as v
from ..core import frequencies, rope_score
from ..precision import dtype_of, rope_angles, rope_score_lowp, round_to
from . import OKABE_ITO, new_figure

__all__ = [
    "DTYPE_STYLE",
    "cos_error_curve",
    "COS_ERROR_PAIRS",
    "plot_cos_error",
    "make_cos_error_figure",
    "make_cos_error",
    "score_drift",
    "plot_score_drift",
    "make_score_drift",
    "make_precision_figure",
    "update_precision",
    "precision_demo",
    "FIGURES",
    "DEMOS",
]

#: Colour and marker per format (colorblind-safe Okabe–Ito colours).
DTYPE_STYLE = {
    "float32": (OKABE_ITO[0], "o"),
    "float16": (OKABE_ITO[4], "s"),
    "bfloat16": (OKABE_ITO[1], "^"),
}

#: Floor of the log error axes: an error of exactly 0 is drawn here.
ERROR_FLOOR = 1e-9


def cos_error_curve(dtype, omega=1.0, max_pos=1e8, n_bins=64, per_bin=256, seed=0):
    """Largest |cos θ̃ − cos θ| per band of positions, θ = pos·ω computed in ``dtype``.

    θ̃ is the angle of :func:`posenc_helpers.precision.rope_angles` for a pair of
    frequency ``omega``, and its cosine is stored in ``dtype`` too. Positions
    are integers in ``n_bins`` log-spaced bands from 1 to ``max_pos``; each
    band contributes all its integers, or ``per_bin`` of them drawn with a
    seeded generator. Bands holding a position beyond the format's range
    (float16 stops at 65504) are dropped. Returns ``(centres, errors)``.
    Taught in notebooks/10-precision.ipynb.

    >>> centres, errors = cos_error_curve("bfloat16", max_pos=1024, n_bins=4)
    >>> centres.round(1)                       # geometric centres of [1, 5.7), [5.7, 32), [32, 181), [181, 1024]
    array([  2.4,  13.5,  76.1, 430.5])
    >>> bool(errors[0] < 2 ** -8)              # below 256 the angle is exact: only cos is rounded
    True
    """
    dt = dtype_of(dtype)
    omega = v.real_scalar("omega", omega)
    max_pos = v.real_scalar("max_pos", max_pos)
    rng = np.random.default_rng(seed)
    edges = np.geomspace(1.0, max_pos, n_bins + 1)
    centres, errors = [], []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        ints = np.arange(np.ceil(lo), np.floor(hi) + 1)
        if ints.size == 0:
            continue
        if ints.size > per_bin:
            ints = np.unique(rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, size=per_bin)).astype(float)
        with np.errstate(over="ignore", invalid="ignore"):
            # θ̃ = pos·ω in dtype; its cosine, stored in dtype
            angle = (ints.astype(dt) * np.asarray(omega).astype(dt)).astype(dt).astype(np.float64)
            approx = round_to(np.cos(np.where(np.isfinite(angle), angle, 0.0)), dt.name)
        if not np.isfinite(angle).all():
            continue
        exact = np.cos(ints * omega)
        centres.append(np.sqrt(lo * hi))
        errors.append(np.abs(approx - exact).max())
    return np.array(centres), np.array(errors)


#: The pairs of the cos-error figure (D = 128): pair 0 (ω = 1, exact in every format), pair 1
#: (ω₁ = 10000^(−1/64) ≈ 0.866, rounded in every format) and the slowest pair, 63.
COS_ERROR_PAIRS = (0, 1, 63)
COS_ERROR_DIM = 128


def plot_cos_error(ax, dtypes=("float32", "float16", "bfloat16"), max_pos=1e8, pair=0, dim=COS_ERROR_DIM) -> dict:
    """Error of cos θ against position for pair ``pair`` (θ = pos·ω_k, ω_k = 10000^(−2k/D)), one line per format.

    Log–log axes; errors of exactly 0 sit on the floor 10⁻⁹. A dotted line
    marks an error of 1: beyond it the cosine could be anything.
    Returns ``{"lines": {dtype: Line2D}, "omega": ω_k}``. Taught in notebooks/10-precision.ipynb.
    """
    omega_all = frequencies(dim)
    if not v._is_int(pair) or not 0 <= int(pair) < omega_all.size:
        raise ValueError(f"pair must be an integer from 0 to {omega_all.size - 1} (D = {dim}), got {pair!r}")
    pair = int(pair)
    omega = float(omega_all[pair])
    lines = {}
    for name in dtypes:
        color, marker = DTYPE_STYLE[name]
        centres, errors = cos_error_curve(name, omega, max_pos)
        (lines[name],) = ax.plot(
            centres, np.maximum(errors, ERROR_FLOOR), marker=marker, markersize=4, color=color, label=name
        )
    ax.axhline(1.0, color="0.4", linestyle=":", linewidth=1.5, label="error 1: cos could be anything")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(ERROR_FLOOR / 2, 20)
    ax.set_xlabel("position pos (tokens)")
    ax.set_ylabel("largest |error of cos θ|")
    exact = "exact" if pair == 0 else "rounded"
    ax.set_title(f"pair {pair}: ω = {omega:.3g} ({exact})")
    return {"lines": lines, "omega": omega}


def make_cos_error_figure(pairs=COS_ERROR_PAIRS, max_pos=1e8):
    """One panel per pair, sharing the error axis: ``(fig, {pair: handles})``."""
    fig, axes = new_figure(1, len(pairs), figsize=(4.2 * len(pairs), 5.0), sharey=True)
    axes = np.atleast_1d(axes)
    handles = {}
    for ax, pair in zip(axes, pairs, strict=True):
        handles[pair] = plot_cos_error(ax, max_pos=max_pos, pair=pair)
        if ax is not axes[0]:
            ax.set_ylabel("")
    # one legend under the panels, where it covers no curve
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=4)
    fig.suptitle(f"cos(pos·ω_k), angle and cosine computed in each format (D = {COS_ERROR_DIM})")
    return fig, handles


def make_cos_error():
    """The figure ``figures/10-cos-error.png``: pairs 0, 1 and 63 of D = 128."""
    fig, _ = make_cos_error_figure()
    return fig


def score_drift(q, k, offset, positions, base=10000.0):
    """RoPE scores of a query at m and a key at m − ``offset``, for each m in ``positions``.

    Returns ``{"exact": float, "bfloat16 angles": array, "float32 angles, bfloat16 tables": array}``:
    the exact score (float64, the same for every m), then the scores with
    tables built from bfloat16 angles and from float32 angles cast to bfloat16.
    Taught in notebooks/10-precision.ipynb.
    """
    m = v.real_array("positions", positions)
    offset = v.real_scalar("offset", offset)
    exact = float(rope_score(q, k, offset, 0.0, base))
    return {
        "exact": exact,
        "bfloat16 angles": rope_score_lowp(q, k, m, m - offset, base, angle_dtype="bfloat16"),
        "float32 angles, bfloat16 tables": rope_score_lowp(q, k, m, m - offset, base, angle_dtype="float32"),
    }


def plot_score_drift(ax, dim=128, offset=4, max_pos=32768, step=7, seed=0) -> dict:
    """Score of a query and a key ``offset`` tokens apart, against the query's position.

    q and k are standard normal vectors of length ``dim`` (seeded). The exact
    score is the same at every position; the low-precision ones wander.
    Returns the lines, the data of :func:`score_drift` and the positions.
    Taught in notebooks/10-precision.ipynb.
    """
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal(dim), rng.standard_normal(dim)
    m = np.arange(offset, max_pos, step, dtype=np.float64)
    data = score_drift(q, k, offset, m)
    lines = {
        "bfloat16 angles": ax.plot(m, data["bfloat16 angles"], ".", color=OKABE_ITO[1], markersize=2.5,
                                   label="bfloat16 angles (before PR #29285)")[0],
        "float32 angles, bfloat16 tables": ax.plot(m, data["float32 angles, bfloat16 tables"], "-",
                                                   color=OKABE_ITO[0], linewidth=1.5,
                                                   label="float32 angles, then cast to bfloat16")[0],
    }
    lines["exact"] = ax.axhline(data["exact"], color="black", linestyle="--", linewidth=1.5, label="exact (float64)")
    ax.set_xlabel("query position m (tokens)")
    ax.set_ylabel(f"RoPE score rope(q, m)·rope(k, m − {offset})")
    ax.set_title(f"RoPE score of a query and a key {offset} tokens apart (D = {dim})")
    ax.legend(loc="lower left", markerscale=4, framealpha=0.95)
    return {"lines": lines, "data": data, "positions": m, "q": q, "k": k}


def make_score_drift():
    """The figure ``figures/10-score-drift.png``."""
    fig, ax = new_figure(figsize=(9.0, 4.5))
    plot_score_drift(ax)
    return fig


# --------------------------------------------------------------------------------------------
# Slider demo: a position, a format, and what happens to each pair's angle.
# --------------------------------------------------------------------------------------------

DEMO_DIM = 128


def make_precision_figure(dim: int = DEMO_DIM):
    """Left: pair 0 (θ = pos) as a clock hand, exact vs stored. Right: angle error of every pair.

    Returns ``(fig, handles)`` for the slider demo. Taught in notebooks/10-precision.ipynb.
    """
    fig, (clock, err) = new_figure(1, 2, figsize=(10.0, 4.4), width_ratios=[1, 2.2])
    t = np.linspace(0.0, 2.0 * np.pi, 181)
    clock.plot(np.cos(t), np.sin(t), color="0.6", linewidth=1.5)
    clock.axhline(0.0, color="0.85", linewidth=1.0, zorder=0)
    clock.axvline(0.0, color="0.85", linewidth=1.0, zorder=0)
    (exact_hand,) = clock.plot([0, 1], [0, 0], color="black", linewidth=3.0, animated=True, label="exact")
    (stored_hand,) = clock.plot([0, 1], [0, 0], "--", color=OKABE_ITO[1], linewidth=3.0, animated=True,
                                label="stored")
    clock.set_xlim(-1.25, 1.25)
    clock.set_ylim(-1.25, 1.25)
    clock.set_aspect("equal")
    clock.set_xticks([-1, 0, 1])
    clock.set_yticks([-1, 0, 1])
    clock.set_xlabel("cos θ₀")
    clock.set_ylabel("sin θ₀")
    clock.set_title("pair 0: θ₀ = pos (rad)")
    clock.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)

    k = np.arange(dim // 2)
    (err_line,) = err.plot(k, np.full(k.size, ERROR_FLOOR), "o-", color=OKABE_ITO[1], markersize=3,
                           animated=True)
    err.axhline(np.pi, color="0.4", linestyle=":", linewidth=1.5)
    err.text(k[-1], np.pi * 1.4, "π: the hand may point anywhere", ha="right", va="bottom")
    err.set_yscale("log")
    err.set_ylim(ERROR_FLOOR / 2, 1e3)
    err.set_xlim(-1, k[-1] + 1)
    err.set_xlabel("pair index k (fast → slow)")
    err.set_ylabel("|angle error| (rad)")
    err.set_title(f"angle error of every pair, D = {dim}")
    return fig, {"exact": exact_hand, "stored": stored_hand, "error": err_line, "dim": dim}


def update_precision(handles, pos, dtype) -> str:
    """Show position ``pos`` with angles computed in format ``dtype``; return the HTML readout.

    The stored hand of pair 0 points at the stored angle, the exact hand at
    θ₀ = pos; the right panel shows |θ̃_k − pos·ω_k| for every pair (floored
    at 10⁻⁹). The readout lists the stored position, pair 0's angle and cos
    error, and how many pairs are off by more than 0.1 rad.
    Taught in notebooks/10-precision.ipynb.
    """
    dim = handles["dim"]
    pos = v.real_scalar("pos", pos)
    stored_pos = float(round_to(pos, dtype))
    angles = rope_angles(pos, dim, dtype=dtype)
    exact = pos * frequencies(dim)
    error = np.abs(angles - exact)
    handles["exact"].set_data([0.0, np.cos(pos)], [0.0, np.sin(pos)])
    handles["stored"].set_data([0.0, np.cos(angles[0])], [0.0, np.sin(angles[0])])
    handles["error"].set_ydata(np.maximum(error, ERROR_FLOOR))
    cos_error = abs(float(round_to(np.cos(angles[0]), dtype)) - np.cos(pos))
    off = int(np.count_nonzero(error > 0.1))
    rows = [
        ("format", html.escape(dtype)),
        ("position stored as", f"{stored_pos:g}"),
        ("pair 0 angle: exact → stored (rad)", f"{pos:g} → {angles[0]:g}"),
        ("pair 0: |error of cos θ|", f"{cos_error:.2e}"),
        ("pairs off by more than 0.1 rad", f"{off} of {dim // 2}"),
    ]
    body = "".join(f"<tr><td>{name}</td><td>{value}</td></tr>" for name, value in rows)
    # nowrap (inherited by every cell): no cell breaks over two lines at projector width
    return f"<table style='font-family:monospace; white-space:nowrap'>{body}</table>"


def precision_demo(pos: int = 257, dtype: str = "bfloat16"):
    """Slider demo: a position and a number format; see the stored position and every pair's angle error.

    Taught in notebooks/10-precision.ipynb.

    >>> demo = precision_demo()
    >>> demo.handles["stored"].get_xydata()[1].round(4)    # bfloat16 stores 257 as 256: (cos 256, sin 256)
    array([-0.0398, -0.9992])
    """
    import ipywidgets as widgets

    from ..demo import _CONTROL_LAYOUT, _CONTROL_STYLE, SliderDemo, int_slider

    fmt = widgets.ToggleButtons(
        options=["float32", "float16", "bfloat16"], value=dtype, description="format (number type)",
        style={**_CONTROL_STYLE, "button_width": "7em"}, layout=_CONTROL_LAYOUT,
    )
    fmt.demo_name = "dtype"
    controls = [int_slider("pos", "pos (position)", 0, 65504, pos), fmt]
    return SliderDemo(make_precision_figure, update_precision, controls, title="Positions and angles in low precision")


FIGURES = {"10-cos-error": make_cos_error, "10-score-drift": make_score_drift}
DEMOS = {"precision": precision_demo}
