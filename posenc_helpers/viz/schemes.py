"""Learned tables, ALiBi, and score against distance for four position schemes.

Taught in notebooks/08-other-schemes.ipynb.

The score-against-distance panels put a query at position Δ and a key at
position 0 and plot what each scheme contributes to their attention score:

* learned table: E[Δ]·E[0] for an *untrained* table (a seeded random
  initialisation, not trained weights; the trained counterpart is in
  notebooks/13-trained-heads.ipynb); it has rows 0 … L − 1 only, so the curve
  stops at the training length;
* added sinusoids: PE(Δ)·PE(0) = Σ_k cos(ω_k Δ), which depends on Δ alone;
* RoPE: rope(q, Δ)·rope(k, 0), for one fixed, seeded q and k;
* ALiBi: the bias −m·Δ, a straight line for each head slope m.

The functions draw onto Axes they are given and return the artists they made;
:func:`distance_demo` only moves those artists, and the tests read their data.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.patches import Rectangle

from .. import _validate as v
from ..core import alibi_bias, alibi_slopes, frequencies, rope, sinusoidal
from . import DIVERGING_CMAP, OKABE_ITO, new_figure, styled

__all__ = [
    "learned_table",
    "naive_alibi_slopes",
    "sinusoid_scores",
    "rope_scores",
    "learned_scores",
    "alibi_mass_beyond",
    "plot_learned_table",
    "plot_alibi_slopes",
    "plot_alibi_bias",
    "plot_alibi_mass_beyond",
    "plot_score_vs_distance",
    "update_score_vs_distance",
    "make_alibi_bias",
    "make_alibi_mass_beyond",
    "make_score_vs_distance",
    "make_distance_figure",
    "update_distance",
    "distance_demo",
    "FIGURES",
    "DEMOS",
]

#: The vector length of every scheme in the distance panels.
DIM = 64
#: The longest distance the panels show, in tokens.
MAX_DISTANCE = 2048
#: ALiBi heads shown: slopes 1/2, 1/16 and 1/256 of an 8-head model.
ALIBI_HEADS = (0, 3, 7)
ALIBI_N_HEADS = 8
#: Colours: learned, sinusoid, RoPE, ALiBi heads; the region beyond the training length.
BEYOND_COLOR = "0.45"
BEYOND_ALPHA = 0.25


def learned_table(n_positions, dim, seed: int = 0) -> np.ndarray:
    """An untrained position table (random initialisation, seeded): shape (n_positions, dim), rows of norm ≈ 1.

    This is what a learned table looks like *before* training, not a trained
    one (the trained counterpart is in notebooks/13-trained-heads.ipynb).
    Entries are normal with standard deviation 1/√dim, so E[p]·E[p] ≈ 1 and
    E[p]·E[q] ≈ 0 for p ≠ q. Row p is the vector added at position p; there is
    no row n_positions. Taught in notebooks/08-other-schemes.ipynb.

    >>> table = learned_table(16, 8)
    >>> table.shape
    (16, 8)
    >>> table[16]
    Traceback (most recent call last):
    ...
    IndexError: index 16 is out of bounds for axis 0 with size 16
    """
    n_positions = v.positive_int("n_positions", n_positions)
    dim = v.positive_int("dim", dim)
    rng = np.random.default_rng(seed)
    # E[p, i] ~ Normal(0, 1/dim)
    return rng.standard_normal((n_positions, dim)) / np.sqrt(dim)


def naive_alibi_slopes(n_heads) -> np.ndarray:
    """The common mistake: the power-of-two formula used for any n, slope_h = 2^(−8(h+1)/n).

    It agrees with :func:`posenc_helpers.alibi_slopes` only when n is a power
    of two. Taught in notebooks/08-other-schemes.ipynb.

    >>> naive_alibi_slopes(4) * 256     # 2^-2 … 2^-8: the paper's slopes for 4 heads
    array([64., 16.,  4.,  1.])
    >>> naive_alibi_slopes(12)[:2].round(4)   # 2^(−8/12), 2^(−16/12): not the paper's 1/2, 1/4
    array([0.63  , 0.3969])
    """
    n = v.positive_int("n_heads", n_heads)
    # slope_h = 2^(−8(h+1)/n)
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def sinusoid_scores(distances, dim: int = DIM, base=10000.0) -> np.ndarray:
    """PE(Δ)·PE(0) for each distance Δ: for even dim, Σ_k cos(ω_k Δ).

    Taught in notebooks/08-other-schemes.ipynb.

    >>> sinusoid_scores([0, 1], 4).round(4)    # Δ = 0: 2 pairs · cos 0 = 2;  Δ = 1: cos 1 + cos 0.01
    array([2.    , 1.5403])
    """
    distances = v.real_array("distances", distances)
    # PE(Δ)·PE(0) = Σ_i PE(Δ, i)·PE(0, i)
    return sinusoidal(distances, dim, base) @ sinusoidal(0, dim, base)


def rope_scores(q, k, distances, base=10000.0) -> np.ndarray:
    """rope(q, Δ)·rope(k, 0) for each distance Δ (query at position Δ, key at 0).

    Taught in notebooks/08-other-schemes.ipynb.

    >>> rope_scores([1.0, 0.0], [1.0, 0.0], [0, 2]).round(4)   # cos 0, cos 2
    array([ 1.    , -0.4161])
    """
    q = v.vector_array("q", q)
    k = v.vector_array("k", k)
    distances = v.real_array("distances", distances)
    if q.ndim != 1 or k.shape != q.shape:
        raise ValueError(f"q and k must be vectors of the same length, got q.shape={q.shape}, k.shape={k.shape}")
    # rope(q, Δ)·rope(k, 0)
    return rope(np.broadcast_to(q, distances.shape + q.shape), distances, base) @ rope(k, 0.0, base)


def learned_scores(table, distances) -> np.ndarray:
    """E[Δ]·E[0] for each distance Δ that has a row; NaN where Δ ≥ L (the table has no row there).

    Taught in notebooks/08-other-schemes.ipynb.

    >>> table = np.eye(3)            # L = 3 rows
    >>> learned_scores(table, [0, 1, 5])
    array([ 1.,  0., nan])
    """
    table = v.real_array("table", table)
    if table.ndim != 2:
        raise ValueError(f"table must have shape (L, dim), got shape {table.shape}")
    distances = v.real_array("distances", distances).astype(int)
    out = np.full(distances.shape, np.nan)
    inside = (distances >= 0) & (distances < len(table))
    # E[Δ]·E[0] where row Δ exists
    out[inside] = table[distances[inside]] @ table[0]
    return out


def alibi_mass_beyond(train_len, row_len, n_heads: int = ALIBI_N_HEADS, content=None) -> np.ndarray:
    """Per head, the softmax weight ALiBi puts on keys at distances Δ ≥ ``train_len`` (never seen in training).

    The query is the last of ``row_len`` tokens, so its causal row holds the
    keys at distances Δ = 0 … row_len − 1. Its weights are
    softmax(content_Δ − m_h·Δ); ``content`` (length row_len, indexed by Δ)
    defaults to zeros, the "no content preference" case. Returns shape
    (n_heads,). Taught in notebooks/08-other-schemes.ipynb.

    >>> alibi_mass_beyond(2, 4, n_heads=1).round(4)   # m = 1/256: (e^{−2m} + e^{−3m}) / Σ_{Δ<4} e^{−mΔ}
    array([0.498])
    """
    train_len = v.positive_int("train_len", train_len)
    row_len = v.positive_int("row_len", row_len)
    n = v.positive_int("n_heads", n_heads)
    distance = np.arange(row_len, dtype=np.float64)
    if content is None:
        content = np.zeros(row_len)
    content = v.real_array("content", content)
    if content.shape != (row_len,):
        raise ValueError(f"content must have shape ({row_len},) to match row_len, got shape {content.shape}")
    slopes = alibi_slopes(n)[:, None]
    # weight_h(Δ) = e^{c_Δ − m_h·Δ} / Σ_Δ' e^{c_Δ' − m_h·Δ'}, computed from the row maximum
    logits = content[None, :] - slopes * distance[None, :]
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights[:, train_len:].sum(axis=1)


# --- static pictures -----------------------------------------------------------------------------


@styled
def plot_learned_table(ax, table, show_until=None) -> dict:
    """Heatmap of a position table (rows = positions), with the missing rows from L on hatched.

    The entries are signed, so the colours are DIVERGING_CMAP with limits ±max|E|
    (0 in the middle) and a labelled colorbar; the missing rows are grey.
    ``show_until`` (default 1.5·L) sets how far the position axis runs.
    Returns ``{"image", "edge", "missing", "colorbar"}``.
    Taught in notebooks/08-other-schemes.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_learned_table(ax, learned_table(16, 8))
    >>> h["edge"].get_xdata().tolist()     # the hard edge sits at L = 16, the first missing row
    [15.5, 15.5]
    >>> h["image"].get_cmap().name, h["image"].get_clim()[0] == -h["image"].get_clim()[1]
    ('RdBu_r', True)
    """
    table = v.real_array("table", table)
    n_positions, dim = table.shape
    show_until = int(1.5 * n_positions) if show_until is None else v.positive_int("show_until", show_until)
    # signed values: a diverging map, symmetric about 0
    limit = float(np.max(np.abs(table)))
    image = ax.imshow(table.T, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest",
                      extent=(-0.5, n_positions - 0.5, dim - 0.5, -0.5))
    missing = ax.add_patch(Rectangle((n_positions - 0.5, -0.5), show_until - n_positions, dim, facecolor="0.85",
                                     edgecolor="0.4", hatch="//", linewidth=0))
    ax.text((n_positions + show_until) / 2 - 0.5, (dim - 1) / 2, f"no rows:\npos ≥ L = {n_positions}", ha="center",
            va="center", fontsize=12, bbox={"facecolor": "white", "edgecolor": "0.4"})
    (edge,) = ax.plot([n_positions - 0.5] * 2, [-0.5, dim - 0.5], color=OKABE_ITO[1], linewidth=3)
    ax.set_xlim(-0.5, show_until - 0.5)
    ax.set_ylim(dim - 0.5, -0.5)
    colorbar = ax.figure.colorbar(image, ax=ax, label="E[pos, i]")
    ax.set_xlabel("position pos (tokens)")
    ax.set_ylabel("dimension index i")
    ax.set_title(f"Position table, untrained (random initialisation): L = {n_positions}, D = {dim}")
    return {"image": image, "edge": edge, "missing": missing, "colorbar": colorbar}


@styled
def plot_alibi_slopes(ax, n_heads: int = 12) -> dict:
    """The paper's ALiBi slopes next to the naive formula's, one marker per head, on a log axis.

    Returns ``{"paper", "naive"}`` (the two marker lines).
    Taught in notebooks/08-other-schemes.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_alibi_slopes(ax, 12)
    >>> (h["paper"].get_ydata()[8:] ** -2).round(4)    # 2^-0.5, 2^-1.5, …: squared and inverted: 2, 8, 32, 128
    array([  2.,   8.,  32., 128.])
    """
    n = v.positive_int("n_heads", n_heads)
    heads = np.arange(n)
    (paper,) = ax.plot(heads, alibi_slopes(n), "o", color=OKABE_ITO[0], markersize=10,
                       label="paper (Press et al.)")
    (naive,) = ax.plot(heads, naive_alibi_slopes(n), "s", color=OKABE_ITO[1], markersize=7, markerfacecolor="none",
                       markeredgewidth=2, label="naive: 2^(−8(h+1)/n)")
    ax.set_yscale("log", base=2)
    ax.set_xticks(heads)
    ax.set_xlabel("head h")
    ax.set_ylabel("slope m (per token)")
    ax.set_title(f"ALiBi slopes for n = {n} heads")
    ax.legend(loc="lower left")
    return {"paper": paper, "naive": naive}


@styled
def plot_alibi_bias(axes, seq_len: int = 12, n_heads: int = 12, heads=(0, 7, 8, 11), causal: bool = True) -> dict:
    """Heatmaps of the ALiBi bias −m_h·|i − j| for some heads, future keys (j > i) greyed out if ``causal``.

    Each panel has its own colour scale (cividis), from its own lowest value
    to 0, and its own labelled colorbar: the slopes of 12 heads span a factor
    2^7.5 ≈ 181, so one shared scale would paint the gentle heads a single
    flat colour. The titles give m and the bias at the far corner, so the
    steepness is still read off in numbers. Returns ``{"images", "values",
    "colorbars"}``. Taught in notebooks/08-other-schemes.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, axes = new_figure(1, 2)
    >>> h = plot_alibi_bias(axes, 3, 1, heads=[0], causal=False)
    >>> (h["values"][0] * 256).tolist()      # slope 1/256: −|i − j|/256
    [[-0.0, -1.0, -2.0], [-1.0, -0.0, -1.0], [-2.0, -1.0, -0.0]]
    """
    bias = alibi_bias(seq_len, n_heads)
    slopes = alibi_slopes(n_heads)
    axes = list(np.ravel(axes))
    heads = [int(h) for h in heads]
    for h in heads:
        if not 0 <= h < len(slopes):
            raise ValueError(f"heads must be in 0 … {len(slopes) - 1} for n_heads={n_heads}, got {h}")
    future = np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
    cmap = matplotlib.colormaps["cividis"].with_extremes(bad="0.85")
    images, values, colorbars = [], [], []
    for ax, h in zip(axes, heads, strict=False):  # more panels than heads: the extra ones are hidden below
        data = np.ma.masked_array(bias[h], mask=future if causal else np.zeros_like(future))
        # this head's own range: −m·(seq_len − 1) … 0
        lowest = float(bias[h].min())
        image = ax.imshow(data, cmap=cmap, vmin=lowest, vmax=0.0, interpolation="nearest")
        ax.set_title(f"head {h}: m = 2^{np.log2(slopes[h]):g}\ncorner {lowest:.3g}")
        ax.set_xlabel("key position j (tokens)")
        # every panel has its own colour scale, so each stands alone with both axes labelled
        ax.set_ylabel("query position i (tokens)")
        ticks = range(0, seq_len, max(1, seq_len // 6))
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        images.append(image)
        values.append(bias[h])
        colorbars.append(ax.figure.colorbar(image, ax=ax, label="bias −m·|i − j|", shrink=0.8, pad=0.03))
    for ax in axes[len(heads):]:
        ax.set_visible(False)
    return {"images": images, "values": values, "colorbars": colorbars}


@styled
def plot_alibi_mass_beyond(ax, train_len: int = 512, max_len: int = 4 * 512, heads=(5, 6, 7),
                           n_heads: int = ALIBI_N_HEADS) -> dict:
    """Softmax mass on distances Δ ≥ L against row length, for some ALiBi heads and for no position bias.

    Zero content logits; a row of T keys (query at position T − 1), for
    T = L + 1 … ``max_len`` (at T = L no key is beyond L and every mass is 0).
    Without a bias the mass beyond L is (T − L)/T; ALiBi's gentlest heads
    level off near e^{−m·L}. The mass axis is logarithmic, so a head that
    leaves 3·10⁻⁴ there (head 5 of 8 at L = 512) is as visible as one that
    leaves 0.1. Returns ``{"rows", "alibi", "uniform"}``.
    Taught in notebooks/08-other-schemes.ipynb.

    >>> from posenc_helpers.viz import new_figure
    >>> fig, ax = new_figure()
    >>> h = plot_alibi_mass_beyond(ax, 4, 8, heads=[0], n_heads=1)
    >>> h["uniform"].get_ydata()[-1]          # 8 keys, 4 of them beyond L = 4
    np.float64(0.5)
    >>> ax.get_yscale()
    'log'
    """
    train_len = v.positive_int("train_len", train_len)
    max_len = v.positive_int("max_len", max_len)
    if max_len <= train_len:
        raise ValueError(f"max_len must exceed train_len={train_len}, got {max_len}")
    # T = L + 1 … max_len: from the first row with a key beyond L
    rows = np.unique(np.linspace(train_len + 1, max_len, 64).astype(int))
    slopes = alibi_slopes(n_heads)
    mass = np.array([alibi_mass_beyond(train_len, t, n_heads) for t in rows])
    (uniform,) = ax.plot(rows, (rows - train_len) / rows, color="black", linestyle="--", linewidth=2,
                         label="no position bias: (T − L)/T")
    lines = []
    for j, h in enumerate(heads):
        (line,) = ax.plot(rows, mass[:, h], color=OKABE_ITO[(3 + j) % len(OKABE_ITO)], linewidth=2.5,
                          label=f"ALiBi head {h}: m = 1/{1 / slopes[h]:g}")
        lines.append(line)
    ax.set_yscale("log")
    shown = mass[:, list(heads)]
    floor = shown[shown > 0].min() if np.any(shown > 0) else 1.0 / rows[-1]
    ax.set_xlim(train_len, max_len)
    # from the decade below the smallest mass drawn up to just above 1 (a share never exceeds 1)
    ax.set_ylim(10.0 ** np.floor(np.log10(min(floor, 1.0 / rows[0]))), 1.5)
    ax.set_xlabel("keys in the row T (tokens)")
    ax.set_ylabel("softmax mass on Δ ≥ L (share, log)")
    ax.set_title(f"Attention left on distances beyond L = {train_len}, zero content logits")
    ax.legend(loc="lower right", fontsize=11)
    return {"rows": rows, "alibi": lines, "uniform": uniform}


@styled
def make_alibi_mass_beyond():
    """The figure ``figures/08-alibi-mass-beyond.png``: mass beyond L = 512 for heads 5–7 of 8.

    Taught in notebooks/08-other-schemes.ipynb.
    """
    fig, ax = new_figure(figsize=(9.0, 4.6))
    plot_alibi_mass_beyond(ax)
    return fig


# --- score against distance (static figure and slider demo share this) ------------------------------


def _fixed_qk(dim: int = DIM, seed: int = 1):
    rng = np.random.default_rng(seed)
    # one fixed query/key content: q = k, a unit vector, so the RoPE score at Δ = 0 is q·k = 1
    q = rng.standard_normal(dim)
    q /= np.linalg.norm(q)
    return q, q.copy()


@styled
def plot_score_vs_distance(axes, train_len: int = 512, distance: int = 768, max_distance: int = MAX_DISTANCE,
                           animated: bool = False) -> dict:
    """Four panels of score against distance Δ: learned table, added sinusoids, RoPE, ALiBi.

    Each panel greys the distances beyond ``train_len`` and marks ``distance``
    with a vertical line and a dot on each curve. The learned table has
    ``MAX_DISTANCE`` seeded rows, of which a model trained at length
    ``train_len`` has the first ``train_len``. Returns a dict of handles for
    :func:`update_score_vs_distance`. Taught in notebooks/08-other-schemes.ipynb.
    """
    max_distance = v.positive_int("max_distance", max_distance)
    axes = list(np.ravel(axes))
    d = np.arange(max_distance + 1, dtype=np.float64)
    table = learned_table(max_distance + 1, DIM)
    q, k = _fixed_qk()
    slopes = alibi_slopes(ALIBI_N_HEADS)[list(ALIBI_HEADS)]
    full_learned = learned_scores(table, d)
    curves = {
        "learned": full_learned,
        "sinusoid": sinusoid_scores(d, DIM),
        "rope": rope_scores(q, k, d),
    }
    handles = {"axes": axes, "d": d, "curves": curves, "full_learned": full_learned, "q": q, "k": k,
               "slopes": slopes, "spans": [], "markers": [], "dots": {}}
    titles = {
        "learned": "Learned table, untrained (random init.): E[Δ]·E[0]",
        "sinusoid": f"Added sinusoids: PE(Δ)·PE(0), D = {DIM}",
        "rope": f"RoPE: rope(q, Δ)·rope(k, 0), D = {DIM}",
        "alibi": "ALiBi: bias −m·Δ",
    }
    ylabels = {"learned": "score", "sinusoid": "score", "rope": "score", "alibi": "bias −m·Δ"}
    for n, (ax, name) in enumerate(zip(axes, ["learned", "sinusoid", "rope", "alibi"], strict=True)):
        span = ax.add_patch(Rectangle((train_len, 0.0), max_distance - train_len, 1.0,
                                      transform=ax.get_xaxis_transform(), facecolor=BEYOND_COLOR, alpha=BEYOND_ALPHA,
                                      edgecolor="none", zorder=0, animated=animated))
        marker = ax.axvline(distance, color="black", linestyle="--", linewidth=1.2, animated=animated)
        if name == "alibi":
            lines = []
            for j, (h, m) in enumerate(zip(ALIBI_HEADS, slopes, strict=True)):
                # bias = −m·Δ
                (line,) = ax.plot(d, -m * d, color=OKABE_ITO[3 + j], label=f"head {h}: m = 1/{1 / m:g}")
                lines.append(line)
                (dot,) = ax.plot([distance], [-m * distance], "o", color=OKABE_ITO[3 + j], markersize=8,
                                 markeredgecolor="black", animated=animated)
                handles["dots"][f"alibi{j}"] = dot
            ax.set_ylim(-40.0, 3.0)
            ax.legend(loc="lower right", fontsize=11)  # the steep heads have left the panel there
        else:
            color = OKABE_ITO[n]
            (line,) = ax.plot(d, curves[name], color=color, linewidth=1.0, animated=animated and name == "learned")
            if name == "learned":
                handles["learned_line"] = line
            (dot,) = ax.plot([distance], [0.0], "o", color=color, markersize=8, markeredgecolor="black",
                             animated=animated)
            handles["dots"][name] = dot
            values = curves[name][np.isfinite(curves[name])]
            pad = 0.08 * (values.max() - values.min())
            ax.set_ylim(values.min() - pad, values.max() + pad)
        ax.set_xlim(0, max_distance)
        ax.set_title(titles[name])
        ax.set_ylabel(ylabels[name])
        ax.set_xlabel("distance Δ (tokens)")
        handles["spans"].append(span)
        handles["markers"].append(marker)
    update_score_vs_distance(handles, train_len, distance)
    return handles


def update_score_vs_distance(handles, train_len, distance) -> dict:
    """Move the grey region to Δ > ``train_len`` and the markers to ``distance``; return the scores there.

    The learned curve is cut at the table's last row, ``train_len − 1``; its dot
    is hidden when ``distance`` has no row. Returns ``{"learned", "sinusoid",
    "rope", "alibi"}`` at ``distance`` (learned is None beyond the table; alibi
    is a list, one per head shown). Taught in notebooks/08-other-schemes.ipynb.
    """
    train_len = v.positive_int("train_len", train_len)
    distance = v.real_scalar("distance", distance)
    d = handles["d"]
    max_distance = d[-1]
    for span in handles["spans"]:
        span.set_x(train_len)
        span.set_width(max(max_distance - train_len, 0.0))
    for marker in handles["markers"]:
        marker.set_xdata([distance, distance])
    # the table has rows 0 … train_len − 1 only
    learned = np.where(d < train_len, handles["full_learned"], np.nan)
    handles["learned_line"].set_data(d[:train_len], learned[:train_len])
    idx = int(round(distance))
    values = {
        "learned": float(learned[idx]) if idx < train_len else None,
        "sinusoid": float(handles["curves"]["sinusoid"][idx]),
        "rope": float(handles["curves"]["rope"][idx]),
        "alibi": [float(-m * distance) for m in handles["slopes"]],
    }
    dots = handles["dots"]
    dots["learned"].set_visible(values["learned"] is not None)
    dots["learned"].set_data([distance], [values["learned"] if values["learned"] is not None else 0.0])
    dots["sinusoid"].set_data([distance], [values["sinusoid"]])
    dots["rope"].set_data([distance], [values["rope"]])
    for j, value in enumerate(values["alibi"]):
        dots[f"alibi{j}"].set_data([distance], [value])
    return values


@styled
def make_alibi_bias():
    """The figure ``figures/08-alibi-bias.png``: causal ALiBi bias for heads 0, 7, 8 and 11 of 12, 2 × 2.

    Taught in notebooks/08-other-schemes.ipynb.
    """
    # One shared query axis, labelled once on the left.
    fig, axes = new_figure(2, 2, figsize=(10.0, 8.4))
    plot_alibi_bias(axes, 12, 12, heads=(0, 7, 8, 11))
    fig.suptitle("ALiBi bias, 12-head model, one colour scale per head (grey: future keys, masked)")
    return fig


@styled
def make_score_vs_distance():
    """The figure ``figures/08-score-vs-distance.png``: the four panels, training length 512, Δ = 768.

    Taught in notebooks/08-other-schemes.ipynb.
    """
    fig, _handles = make_distance_figure()
    return fig


# --- the slider demo -------------------------------------------------------------------------------


@styled
def make_distance_figure(train_len: int = 512, distance: int = 768):
    """The demo figure: a 2 × 2 grid of score-against-distance panels, markers animated for blitting.

    Returns ``(fig, handles)``. Taught in notebooks/08-other-schemes.ipynb.
    """
    # 11 × 5.4 in at 80 dpi: sliders, figure and readout fit one 1280 × 720 projector screen
    fig, axes = new_figure(2, 2, figsize=(11.0, 5.4), sharex=True)
    handles = plot_score_vs_distance(axes, train_len, distance, animated=True)
    for ax in np.ravel(axes)[:2]:
        ax.set_xlabel("")
    fig.suptitle("Score of a query at Δ and a key at 0 (shaded: Δ beyond the training length L)")
    return fig, handles


def update_distance(handles, distance, train_len) -> str:
    """Move the demo to ``distance`` and ``train_len``; return the HTML readout of the four scores.

    Besides the scores, the readout gives the slowest sinusoid/RoPE pair's angle
    ω_{D/2−1}·Δ next to the largest one training showed, ω_{D/2−1}·(L − 1).
    Taught in notebooks/08-other-schemes.ipynb.
    """
    values = update_score_vs_distance(handles, train_len, distance)
    slowest = frequencies(DIM)[-1]
    beyond = distance >= train_len
    learned = "no row (IndexError)" if values["learned"] is None else f"{values['learned']:+.4f}"
    alibi = ", ".join(f"{b:+.3f}" for b in values["alibi"])
    rows = [
        ("learned E[Δ]·E[0]", learned),
        ("sinusoid PE(Δ)·PE(0)", f"{values['sinusoid']:+.4f}"),
        ("RoPE rope(q, Δ)·rope(k, 0)", f"{values['rope']:+.4f}"),
        (f"ALiBi −m·Δ, heads {', '.join(map(str, ALIBI_HEADS))}", alibi),
        ("slowest pair angle ω·Δ (rad)", f"{slowest * distance:.4f} (training reached {slowest * (train_len - 1):.4f})"),
    ]
    body = "".join(f"<tr><td>{name}</td><td>{value}</td></tr>" for name, value in rows)
    where = "<b>beyond</b> the training length" if beyond else "inside the training length"
    return (
        f"<b>Δ = {distance:g} tokens, training length L = {train_len}</b>: {where}"
        f"<table style='font-family:monospace'>{body}</table>"
    )


def distance_demo(distance: int = 768, train_len: int = 512):
    """Slider demo: move the distance Δ and the training length L across all four schemes at once.

    Taught in notebooks/08-other-schemes.ipynb.

    >>> demo = distance_demo()
    >>> demo.set_values(distance=104, train_len=64)     # Δ = 104 is past the last row, 63
    >>> demo.handles["dots"]["learned"].get_visible()
    False
    >>> float(demo.handles["dots"]["alibi2"].get_ydata()[0])   # −104/256
    -0.40625
    """
    from ..demo import SliderDemo, int_slider

    controls = [
        int_slider("distance", "Δ (distance)", 0, MAX_DISTANCE, distance, step=8),
        int_slider("train_len", "L (training length)", 64, MAX_DISTANCE, train_len, step=64),
    ]
    return SliderDemo(make_distance_figure, update_distance, controls, title="Score against distance")


FIGURES = {"08-alibi-bias": make_alibi_bias, "08-alibi-mass-beyond": make_alibi_mass_beyond,
           "08-score-vs-distance": make_score_vs_distance}
DEMOS = {"distance": distance_demo}
