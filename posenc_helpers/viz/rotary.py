"""RoPE drawn as arrows that turn: the query at position m, the key at position n.

Taught in notebooks/04-rope.ipynb.

Each pair (a, b) = (x[2k], x[2k+1]) of a query or key is drawn as an arrow
from the origin to the point (a, b): a on the horizontal axis, b on the
vertical one. RoPE turns the query's arrow by m·ω_k and the key's by n·ω_k,
counter-clockwise. The score of the pair is the dot product of the two
arrows, which depends only on the angle between them, (m − n)·ω_k plus
whatever angle they started with; moving both positions by the same amount
turns both arrows together and leaves the score alone.
"""

from __future__ import annotations

import numpy as np

from .. import _validate as v
from ..core import rope, rope_score
from . import OKABE_ITO, new_figure
from .shift import CIRCLE_LIM, _circle_axes, arc_points, wrap_angle

__all__ = [
    "pair_score",
    "draw_rope_pair",
    "update_rope_pair",
    "draw_score_curve",
    "update_score_curve",
    "rope_readout",
    "rope_demo",
    "make_rope_pair_rotation",
    "rope_decay_bound",
    "rope_score_bound",
    "plot_rope_decay",
    "make_rope_long_term_decay",
    "FIGURES",
    "DEMOS",
]

#: Colours: the query's arrow, the key's arrow, the angle between them.
Q_COLOUR, K_COLOUR, ANGLE_COLOUR = OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[2]


def _pair_vectors(q, k, pair):
    q = v.vector_array("q", q)
    k = v.vector_array("k", k)
    if q.ndim != 1 or k.ndim != 1 or q.shape != k.shape:
        raise ValueError(f"q and k must be 1-D vectors of the same length, got shapes {q.shape} and {k.shape}")
    dim = q.shape[0]
    if not v._is_int(pair) or not 0 <= pair < dim // 2:
        raise ValueError(f"pair must be a full pair index 0 … {dim // 2 - 1} for D = {dim}, got {v._show(pair)}")
    return q, k, int(pair)


def pair_score(q, k, m, n, pair, base=10000.0) -> float:
    """The contribution of one pair to the RoPE score: rope(q, m)[2k:2k+2] · rope(k, n)[2k:2k+2].

    With Δ = m − n and the pair's frequency ω, it equals
    (q_a·k_a + q_b·k_b)·cos(ωΔ) + (q_a·k_b − q_b·k_a)·sin(ωΔ): a function of
    Δ only. The pairs' contributions add up to :func:`posenc_helpers.rope_score`.
    Taught in notebooks/04-rope.ipynb.

    >>> round(pair_score([1, 0, 1, 0], [1, 0, 1, 0], 5, 3, pair=0), 4)   # cos 2
    -0.4161
    >>> round(pair_score([1, 0, 1, 0], [1, 0, 1, 0], 5, 3, pair=1), 4)   # cos 0.02
    0.9998
    """
    q, k, pair = _pair_vectors(q, k, pair)
    rq = rope(q, m, base)[2 * pair : 2 * pair + 2]
    rk = rope(k, n, base)[2 * pair : 2 * pair + 2]
    # score_k = (a_q, b_q) rotated by mω_k · (a_k, b_k) rotated by nω_k
    return float(rq @ rk)


def draw_rope_pair(ax, q, k, m, n, pair=0, base=10000.0) -> dict:
    """Draw pair ``pair`` of q rotated to position m and of k rotated to position n, as arrows.

    Thin dashed arrows show the pair before rotation (position 0); the arc
    near the origin is the angle from the key's arrow to the query's, wrapped
    into (−π, π]. Returns a dict with the animated artists "q_arrow",
    "k_arrow", "angle" (arrows are lines from the origin whose second point
    is the tip) and the settings "q", "k", "pair", "base", "omega".
    Taught in notebooks/04-rope.ipynb.

    >>> fig, ax = new_figure()
    >>> h = draw_rope_pair(ax, [1, 0], [1, 0], m=5, n=3)
    >>> h["q_arrow"].get_xydata()[1].round(4)     # (1, 0) turned by 5 rad: (cos 5, sin 5)
    array([ 0.2837, -0.9589])
    """
    q, k, pair = _pair_vectors(q, k, pair)
    dim = q.shape[0]
    base = v.base_value(base)
    # ω_k = base^(−2k/D): the demo rotates every pair, so D = len(q)
    omega = base ** (-2.0 * pair / dim)
    reach = max(1.0, float(np.hypot(*q[2 * pair : 2 * pair + 2])), float(np.hypot(*k[2 * pair : 2 * pair + 2])))
    _circle_axes(ax, f"pair {pair}: ω$_{pair}$ = {omega:g} rad per position")
    lim = CIRCLE_LIM * reach
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_xlabel(f"first element a = x[{2 * pair}]")
    ax.set_ylabel(f"second element b = x[{2 * pair + 1}]")
    for vec, colour in ((q, Q_COLOUR), (k, K_COLOUR)):
        a, b = vec[2 * pair : 2 * pair + 2]
        ax.plot([0.0, a], [0.0, b], "--", color=colour, linewidth=1.3, alpha=0.6, zorder=1)
    handles = {"q": q, "k": k, "pair": pair, "base": base, "omega": float(omega)}
    (handles["angle"],) = ax.plot([], [], color=ANGLE_COLOUR, linewidth=3.0, animated=True, zorder=2,
                                  label="angle from k to q")
    # k is drawn wider than q, so that both stay visible when the arrows coincide (m = n)
    (handles["k_arrow"],) = ax.plot([], [], "-o", markevery=[1], color=K_COLOUR, linewidth=6.0, markersize=15,
                                    animated=True, zorder=3, label="k rotated to n")
    (handles["q_arrow"],) = ax.plot([], [], "-o", markevery=[1], color=Q_COLOUR, linewidth=2.5, markersize=9,
                                    animated=True, zorder=4, label="q rotated to m")
    update_rope_pair(handles, m, n)
    return handles


def update_rope_pair(handles, m, n) -> None:
    """Turn the arrows of :func:`draw_rope_pair` to positions m and n.

    >>> fig, ax = new_figure()
    >>> h = draw_rope_pair(ax, [1, 0, 1, 0], [1, 0, 1, 0], m=0, n=0, pair=1)
    >>> update_rope_pair(h, m=100, n=0)
    >>> h["q_arrow"].get_xydata()[1].round(4)     # pair 1 turns by 100 · 0.01 = 1 rad
    array([0.5403, 0.8415])
    """
    pair, base = handles["pair"], handles["base"]
    m = v.real_scalar("m", m)
    n = v.real_scalar("n", n)
    rq = rope(handles["q"], m, base)[2 * pair : 2 * pair + 2]
    rk = rope(handles["k"], n, base)[2 * pair : 2 * pair + 2]
    handles["q_arrow"].set_data([0.0, rq[0]], [0.0, rq[1]])
    handles["k_arrow"].set_data([0.0, rk[0]], [0.0, rk[1]])
    # the angle from k's arrow to q's arrow, wrapped into (−π, π]
    start = float(np.arctan2(rk[1], rk[0]))
    turn = wrap_angle(np.arctan2(rq[1], rq[0]) - start)
    arc = arc_points(start, turn, radius=0.4, num=40)
    handles["angle"].set_data(arc[:, 0], arc[:, 1])


def draw_score_curve(ax, q, k, base=10000.0, max_distance=60) -> dict:
    """The RoPE score of q and k as a function of the distance m − n, with a marker at the current one.

    The curve is rope_score(q, k, Δ, 0) for Δ from −max_distance to
    +max_distance: since the score depends on m − n only, this one curve
    holds every (m, n). Returns {"curve", "marker", "distances"}; the marker
    is animated. Taught in notebooks/04-rope.ipynb.

    >>> fig, ax = new_figure()
    >>> h = draw_score_curve(ax, [1, 0], [1, 0])
    >>> update_score_curve(h, [1, 0], [1, 0], m=9, n=7)
    >>> h["marker"].get_xydata().round(4)         # (m − n, cos 2)
    array([[ 2.    , -0.4161]])
    """
    max_distance = v.positive_int("max_distance", max_distance)
    distances = np.linspace(-max_distance, max_distance, 8 * max_distance + 1)
    # score(Δ) = rope(q, Δ) · rope(k, 0)
    scores = rope_score(q, k, distances, 0.0, base)
    (curve,) = ax.plot(distances, scores, color="0.35", linewidth=1.8, zorder=1)
    (marker,) = ax.plot([], [], "o", color=ANGLE_COLOUR, markersize=11, animated=True, zorder=3)
    ax.axhline(0.0, color="0.85", linewidth=1.0, zorder=0)
    ax.set_xlim(-max_distance, max_distance)
    ax.set_xlabel("distance m − n (tokens)")
    ax.set_ylabel("score rope(q,m)·rope(k,n)")
    ax.set_title("the score is a function of m − n")
    return {"curve": curve, "marker": marker, "distances": distances, "base": float(base)}


def update_score_curve(handles, q, k, m, n) -> None:
    """Move the marker of :func:`draw_score_curve` to (m − n, score at m and n)."""
    score = float(rope_score(q, k, m, n, handles["base"]))
    handles["marker"].set_data([m - n], [score])


def rope_readout(q, k, m, n, base=10000.0, shift=0) -> str:
    """The demo's HTML readout: positions, each pair's angles and score, and the total score.

    ``m`` and ``n`` are the slider positions before the shift; the query sits
    at m + shift and the key at n + shift, and the score depends on m − n only.

    >>> html = rope_readout([1, 0], [1, 0], 5, 3, shift=300)
    >>> "query at m + shift = 305, key at n + shift = 303, m − n = 2" in html
    True
    >>> "score = -0.4161" in html     # cos(305 − 303) = cos 2
    True
    """
    q = v.vector_array("q", q)
    k = v.vector_array("k", k)
    dim = q.shape[-1]
    omega = base ** (-2.0 * np.arange(dim // 2) / dim)
    # the positions the vectors are rotated to
    mq, nk = m + shift, n + shift
    rows = []
    for pair, w in enumerate(omega):
        rows.append(
            f"<tr><td>{pair}</td><td>{w:g}</td><td>{mq * w:.4f}</td><td>{nk * w:.4f}</td>"
            f"<td>{(m - n) * w:.4f}</td><td>{pair_score(q, k, mq, nk, pair, base):.4f}</td></tr>"
        )
    head = (
        "<tr><th>pair k</th><th>ω_k</th><th>q turns (m + shift)·ω_k</th><th>k turns (n + shift)·ω_k</th>"
        "<th>(m − n)·ω_k</th><th>pair score</th></tr>"
    )
    score = float(rope_score(q, k, mq, nk, base))
    return (
        f"<b>query at m + shift = {mq:g}, key at n + shift = {nk:g}, m − n = {m - n:g}: score = {score:.4f}</b>"
        f"<table style='font-size:120%'>{head}{''.join(rows)}</table>"
    )


def rope_demo(m=5, n=3, shift=0, q=(1.0, 0.0, 1.0, 0.0), k=(1.0, 0.0, 1.0, 0.0), base=10000.0):
    """Sliders for m, n and a shift added to both: q and k turn, the score follows m − n only.

    One panel per pair (at most two are drawn) with the rotated arrows, and
    the score against m − n with a marker at the current distance. The query
    sits at m + shift and the key at n + shift. Taught in notebooks/04-rope.ipynb.

    >>> demo = rope_demo()
    >>> demo.controls["shift"].value = 4           # (5, 3) → (9, 7): the same distance
    >>> "score = 0.5837" in demo.readout.value     # cos 2 + cos 0.02 = −0.4161 + 0.9998
    True
    """
    from ..demo import SliderDemo, int_slider

    q = v.vector_array("q", q)
    k = v.vector_array("k", k)
    if q.ndim != 1 or q.shape != k.shape or q.shape[0] < 2:
        raise ValueError(f"q and k must be 1-D vectors of the same length >= 2, got shapes {q.shape} and {k.shape}")
    n_panels = min(2, q.shape[0] // 2)

    def make_figure():
        fig, axes = new_figure(1, n_panels + 1, figsize=(4.0 * (n_panels + 1), 4.4))
        pairs = [draw_rope_pair(axes[p], q, k, m + shift, n + shift, p, base) for p in range(n_panels)]
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
        curve = draw_score_curve(axes[-1], q, k, base, max_distance=60)
        handles = {"pairs": pairs, "curve": curve}
        _update(handles, m=m, n=n, shift=shift)
        return fig, handles

    def _update(handles, m, n, shift):
        for pair in handles["pairs"]:
            update_rope_pair(pair, m + shift, n + shift)
        update_score_curve(handles["curve"], q, k, m + shift, n + shift)
        return rope_readout(q, k, m, n, base, shift)

    controls = [
        int_slider("m", "m (query position, before shift)", 0, 60, m),
        int_slider("n", "n (key position, before shift)", 0, 60, n),
        int_slider("shift", "shift (added to m and n)", 0, 300, shift),
    ]
    return SliderDemo(make_figure, _update, controls, title="RoPE: q turns by m·ω, k by n·ω; the score sees m − n")


def make_rope_pair_rotation():
    """Figure 04-rope-pair-rotation: q = k = (1, 0) at (m, n) = (5, 3) and (9, 7), the same 2 rad apart.

    Both panels show the query rotated to m and the key rotated to n (D = 2);
    the angle between the arrows, and so the score cos 2 = −0.4161, is the same.
    """
    fig, axes = new_figure(1, 2, figsize=(9.0, 4.8))
    for ax, (m, n) in zip(axes, [(5, 3), (9, 7)], strict=True):
        draw_rope_pair(ax, [1.0, 0.0], [1.0, 0.0], m, n)
        ax.set_xlim(-1.9, 1.9)
        ax.set_ylim(-1.5, 1.5)
        score = float(rope_score([1.0, 0.0], [1.0, 0.0], m, n))
        ax.set_title(f"(m, n) = ({m}, {n}): score = cos 2 = {score:.4f}")
        ax.set_xlabel("first element a")
        ax.set_ylabel("second element b")
        rq, rk = rope([1.0, 0.0], m), rope([1.0, 0.0], n)
        for (x, y), text, colour in ((rq, f"q at m = {m}", Q_COLOUR), (rk, f"k at n = {n}", K_COLOUR)):
            # the label sits just outside the arrow's tip, on the far side from the centre
            ax.text(1.12 * x, 1.12 * y, text, color=colour, ha="left" if x > 0 else "right",
                    va="bottom" if y > 0 else "top")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    return fig


# --- RoPE's long-term decay (RoFormer, section 3.4.3) ---------------------------------------------------


def _partial_sums(distances, dim, base):
    """S_j(Δ) = Σ_{i<j} e^{iΔω_i} for j = 1 … D/2, one row per distance Δ."""
    dim = v.positive_int("dim", dim)
    if dim % 2:
        raise ValueError(f"dim must be even: the bound sums over the D/2 pairs of a head, got {dim}")
    base = v.base_value(base)
    distances = v.real_array("distances", distances).ravel()
    omega = base ** (-2.0 * np.arange(dim // 2) / dim)
    # S_j = Σ_{i=0}^{j−1} exp(i·Δ·ω_i)
    return np.cumsum(np.exp(1j * distances[:, None] * omega[None, :]), axis=1)


def rope_decay_bound(distances, dim, base=10000.0) -> np.ndarray:
    """RoFormer's relative upper bound on a RoPE score at each distance Δ = m − n: (1/(D/2))·Σ_{j=1}^{D/2} |S_j|.

    Write pair i of q and k as complex numbers, q̃_i = q_{2i} + i·q_{2i+1} (k̃_i
    likewise), and h_i = q̃_i·conj(k̃_i). Then rope_score(q, k, m, n) =
    Re Σ_i h_i·e^{iΔω_i}, and summation by parts (Abel) with S_j = Σ_{i<j} e^{iΔω_i}
    and h_{D/2} = 0 gives |score| ≤ max_i |h_{i+1} − h_i| · Σ_j |S_j|. This
    function returns the part that depends on the distance, averaged over the
    pairs; RoFormer (Su et al., section 3.4.3, figure 2) plots it to show that
    the bound shrinks, on average, as the distance grows. Taught in
    notebooks/04-rope.ipynb.

    >>> rope_decay_bound([0], 4)     # Δ = 0: |S_1| = 1, |S_2| = 2, mean (1 + 2)/2
    array([1.5])
    >>> rope_decay_bound([0], 128)   # mean of 1 … 64 = 65/2
    array([32.5])
    """
    return np.abs(_partial_sums(distances, dim, base)).mean(axis=1)


def rope_score_bound(q, k, distances, base=10000.0) -> np.ndarray:
    """The full bound for given q and k: max_i |h_{i+1} − h_i| · Σ_j |S_j(Δ)|, with h_{D/2} = 0 (see :func:`rope_decay_bound`).

    Every RoPE score of q at m and k at n = m − Δ lies within ± this bound.
    Taught in notebooks/04-rope.ipynb.

    >>> rope_score_bound([1, 0], [1, 0], [0, 3])   # h = (1), |h_1 − h_0| = 1, S_1 = e^{iΔ}: |S_1| = 1
    array([1., 1.])
    """
    q = v.vector_array("q", q)
    k = v.vector_array("k", k)
    if q.ndim != 1 or q.shape != k.shape or q.shape[0] % 2:
        raise ValueError(f"q and k must be 1-D vectors of the same even length, got shapes {q.shape} and {k.shape}")
    # h_i = q̃_i · conj(k̃_i), then the steps h_{i+1} − h_i with h_{D/2} = 0
    h = (q[0::2] + 1j * q[1::2]) * np.conj(k[0::2] + 1j * k[1::2])
    step = np.abs(np.diff(np.append(h, 0.0))).max()
    return step * np.abs(_partial_sums(distances, q.shape[0], base)).sum(axis=1)


def plot_rope_decay(ax, dim=128, max_distance=1000, base=10000.0) -> dict:
    """RoFormer's relative upper bound against the distance m − n, from 0 to ``max_distance``.

    Returns {"line", "distances", "bound"}. Taught in notebooks/04-rope.ipynb.

    >>> fig, ax = new_figure()
    >>> h = plot_rope_decay(ax, dim=4, max_distance=10)
    >>> float(h["bound"][0])                        # Δ = 0: (1 + 2)/2
    1.5
    """
    max_distance = v.positive_int("max_distance", max_distance)
    distances = np.arange(max_distance + 1, dtype=np.float64)
    bound = rope_decay_bound(distances, dim, base)
    (line,) = ax.plot(distances, bound, color=Q_COLOUR, linewidth=1.5)
    ax.set_xlim(0, max_distance)
    ax.set_ylim(0, None)
    ax.set_xlabel("distance m − n (tokens)")
    ax.set_ylabel(r"relative bound $\sum_j |S_j|\,/\,(D/2)$")
    ax.set_title(f"RoPE's long-term decay, D = {dim}, base {base:,.0f}")
    return {"line": line, "distances": distances, "bound": bound}


def make_rope_long_term_decay():
    """Figure 04-rope-long-term-decay: the relative bound for D = 128, and a seeded random q, k under their own bound.

    Left: (1/(D/2))·Σ|S_j| against the distance, as in RoFormer's figure 2.
    Right: |rope_score(q, k, Δ, 0)| for q, k drawn with seed 0, and the bound
    max|h_{i+1} − h_i|·Σ|S_j| that it never crosses.
    """
    fig, (left, right) = new_figure(1, 2, figsize=(11.0, 4.4))
    plot_rope_decay(left, 128, 1000)
    q, k = np.random.default_rng(0).normal(size=(2, 128))
    distances = np.arange(1001, dtype=np.float64)
    right.plot(distances, np.abs(rope_score(q, k, distances, 0.0)), color="0.45", linewidth=1.0, label="|score|, random q, k")
    right.plot(distances, rope_score_bound(q, k, distances), color=K_COLOUR, linewidth=2.0, label="bound for these q, k")
    right.set_xlim(0, 1000)
    right.set_yscale("log")
    right.set_xlabel("distance m − n (tokens)")
    right.set_ylabel("|score| and its bound (log scale)")
    right.set_title("the bound shrinks; this score need not")
    right.legend(loc="lower left")
    return fig


FIGURES = {"04-rope-pair-rotation": make_rope_pair_rotation, "04-rope-long-term-decay": make_rope_long_term_decay}
DEMOS = {"rope": rope_demo}
