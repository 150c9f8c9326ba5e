"""Position at inference: what each design keeps in its KV cache, beside notebook 14's barcode, and a slider.

Taught in notebooks/16-position-at-inference.ipynb.

:func:`kv_demo` builds a hypothetical model with Gemma 3 27B's layers, KV heads,
head width and dtype, and lets sliders move its sliding window, its local:global
ratio and the context; it draws the cache bytes against the context (beside the
same model with every layer global) and how far back information can travel
through its stacked layers (:func:`posenc_helpers.kvcache.receptive_field`).
"""

from __future__ import annotations

import html

import numpy as np

from ..configs import bundled_configs, bundled_kv_fields, layer_positions
from ..kvcache import bundled_kv_config, format_bytes, hypothetical_config, kv_bytes, kv_cache, receptive_field
from . import new_figure
from .perlayer import plot_barcode
from .shipped import MODEL_MARKERS, TOL_MUTED, _spread

__all__ = [
    "CURVE_CONTEXTS",
    "DEMO_MODEL",
    "barcode_names",
    "bytes_per_token_curves",
    "plot_bytes_per_token",
    "make_kv_cache",
    "demo_shape",
    "plot_kv_slider",
    "update_kv_slider",
    "make_kv_slider_figure",
    "kv_demo",
    "make_kv_slider_default",
    "FIGURES",
    "DEMOS",
]

#: Contexts the bytes-per-token curves are drawn at: 2^10 … 2^20 tokens (1K … 1M), 201 log-spaced points.
CURVE_CONTEXTS = np.unique(np.round(np.logspace(10, 20, 201, base=2.0)).astype(np.int64))

#: The bundled model whose layers, KV heads, head_dim and dtype the slider's hypothetical model takes.
DEMO_MODEL = "Gemma 3 27B"

#: Contexts the slider draws the cache at: 10^3 … 10^6 tokens, log-spaced.
_DEMO_CONTEXTS = np.unique(np.round(np.logspace(3, 6, 151)).astype(np.int64))

_LINE_STYLES = ("-", "--", "-.", ":", (0, (6, 2)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2, 2, 2)))


def barcode_names() -> list[str]:
    """The models of notebook 14's barcode: the bundled 2025–26 group, in the data's order."""
    return list(bundled_configs("2025-26"))


def bytes_per_token_curves(names, contexts=CURVE_CONTEXTS, *, mla: str = "transformers") -> dict:
    """``{name: kv_bytes(config, contexts) / contexts}`` for bundled models, as float arrays (bytes per token).

    Taught in notebooks/16-position-at-inference.ipynb.
    """
    contexts = np.asarray(contexts)
    return {name: kv_bytes(bundled_kv_config(name), contexts, mla=mla) / contexts for name in names}


def _binary(x, _pos=None) -> str:
    """A tick label in bytes with binary units: 64 KiB, 1 MiB, 16 GiB."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if x >= scale:
            return f"{x / scale:g} {unit}"
    return f"{x:g} B"


def _tokens(x, _pos=None) -> str:
    """A tick label in tokens: 1K, 16K, 1M (binary) or 1,000 …"""
    if x >= 2**20 and x % 2**20 == 0:
        return f"{x / 2**20:g}M"
    if x >= 2**10 and x % 2**10 == 0:
        return f"{x / 2**10:g}K"
    return f"{x:,.0f}"


def plot_bytes_per_token(ax, curves, contexts=CURVE_CONTEXTS, *, styles=None) -> dict:
    """One line per model: cache bytes ÷ context against the context, log–log, each labelled at its right end.

    ``curves`` maps a label to its bytes per token at ``contexts`` (from :func:`bytes_per_token_curves`); the lines
    take Paul Tol's muted colours, a line style and a marker each, in order (``styles`` may override a label's
    ``{"color", "linestyle", "marker"}``). Labels whose curves are identical share one label. A flat line is a cache
    that grows with every token; a falling one holds a fixed part (windows, states) that the context dilutes.
    Returns ``{label: line}``. Taught in notebooks/16-position-at-inference.ipynb.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    contexts = np.asarray(contexts)
    styles = styles or {}
    lines, ends, texts, colours = {}, [], [], []
    for i, (label, y) in enumerate(curves.items()):
        style = {"color": TOL_MUTED[i % len(TOL_MUTED)], "linestyle": _LINE_STYLES[i % len(_LINE_STYLES)],
                 "marker": MODEL_MARKERS[i % len(MODEL_MARKERS)], **styles.get(label, {})}
        (lines[label],) = ax.plot(contexts, y, linewidth=2.2, markersize=6, markevery=(i * 3 % 20, 20),
                                  markeredgecolor="black", markeredgewidth=0.5, label=label, **style)
        same = next((j for j, other in enumerate(list(curves)[:i]) if np.array_equal(curves[other], y)), None)
        if same is None:
            ends.append(float(y[-1]))
            texts.append(label)
            colours.append(style["color"])
        else:
            texts[same] += f" = {label}"
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator([2.0**k for k in range(10, 21, 2)]))
    ax.xaxis.set_major_formatter(FuncFormatter(_tokens))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(_binary))
    ax.set_xlim(contexts[0], contexts[-1])
    low = np.log2(min(float(np.min(y)) for y in curves.values())) - 0.5
    high = np.log2(max(float(np.max(y)) for y in curves.values())) + 0.5
    ax.set_ylim(2.0**low, 2.0**high)
    ax.set_xlabel("context n (tokens, log)")
    ax.set_ylabel("KV cache ÷ context (bytes per token, log)")
    ax.set_title("KV cache per token of context, one sequence")
    ax.grid(True, which="major", alpha=0.3)
    # direct labels right of the axes, at least 1/18 of its height apart, each joined to its line's end
    spots = 2.0 ** _spread(np.log2(ends), (high - low) / 18)
    transform = ax.get_yaxis_transform()  # x in axes fraction, y in data
    for end, spot, text, colour in zip(ends, spots, texts, colours, strict=True):
        ax.plot([1.0, 1.04], [end, spot], color=colour, linewidth=1.2, transform=transform, clip_on=False)
        ax.text(1.05, spot, text, va="center", ha="left", transform=transform, color="black")
    return lines


def make_kv_cache():
    """The figure ``figures/16-kv-cache.png``: notebook 14's barcode, and each model's cache bytes per token.

    Left: :func:`~posenc_helpers.viz.perlayer.plot_barcode` of the bundled 2025–26 models (tall cell: full
    attention, short: sliding, grey: linear attention). Right: their bytes per token from 1K to 1M tokens, the
    same models in the same order, labelled by name; DeepSeek-V3's line counts MLA as transformers 5.24.0 caches
    it (latent plus rotary key, 576 numbers), and a dotted twin counts every head's key and value (40,960).
    """
    names = barcode_names()
    fig, (left, right) = new_figure(1, 2, figsize=(19.0, 7.2), width_ratios=[1.25, 1.0])
    plot_barcode(left, {name: layer_positions(bundled_kv_config(name)) for name in names})
    curves = bytes_per_token_curves(names)
    expanded = "DeepSeek-V3, every head's K and V"
    curves[expanded] = bytes_per_token_curves(["DeepSeek-V3"], mla="expanded")["DeepSeek-V3"]
    colour = TOL_MUTED[names.index("DeepSeek-V3")]
    plot_bytes_per_token(right, curves, styles={expanded: {"color": colour, "linestyle": ":", "marker": "None"}})
    return fig


def demo_shape() -> dict:
    """The slider's fixed shape, read from :data:`DEMO_MODEL`'s bundled fields: layers, KV heads, head_dim, dtype."""
    kv = bundled_kv_fields()[DEMO_MODEL]
    fields = kv["fields"]
    dtype = (kv.get("top_level_fields") or {}).get("dtype", fields.get("dtype", fields.get("torch_dtype")))
    return {"layers": fields["num_hidden_layers"], "kv_heads": fields["num_key_value_heads"],
            "head_dim": fields["head_dim"], "dtype": dtype}


def _demo_config(window, ratio, context) -> dict:
    shape = demo_shape()
    return hypothetical_config(shape["layers"], int(ratio), int(round(window)), shape["kv_heads"], shape["head_dim"],
                               shape["dtype"], int(round(context)))


def plot_kv_slider(axes) -> dict:
    """Two panels, animated by :func:`update_kv_slider`: cache bytes against context, and reach against depth.

    Left: the hypothetical model's KV cache (solid) and the same model with every layer global (dashed), log–log,
    with a marker at the chosen context. Right: how far back the last token can draw information after each layer
    (:func:`~posenc_helpers.kvcache.receptive_field`), for the hypothetical model, for every layer global, and for
    every layer sliding with the same window (dotted: the stack adds W − 1 per layer). Taught in
    notebooks/16-position-at-inference.ipynb.
    """
    from matplotlib.ticker import FuncFormatter

    left, right = axes
    shape = demo_shape()
    n = _DEMO_CONTEXTS
    glob = hypothetical_config(shape["layers"], 0, 1, shape["kv_heads"], shape["head_dim"], shape["dtype"], int(n[-1]))
    (all_global,) = left.plot(n, kv_bytes(glob, n), "--", color=TOL_MUTED[1], linewidth=2.2, label="every layer global")
    (mixed,) = left.plot(n, np.ones_like(n, dtype=float), "-", color=TOL_MUTED[0], linewidth=2.6, animated=True,
                         label="sliding and global layers")
    (mark,) = left.plot([n[0]], [1.0], "o", color=TOL_MUTED[0], markersize=10, markeredgecolor="black", animated=True)
    (mark_global,) = left.plot([n[0]], [1.0], "s", color=TOL_MUTED[1], markersize=9, markeredgecolor="black",
                               animated=True)
    left.set_xscale("log")
    left.set_yscale("log", base=2)
    left.yaxis.set_major_formatter(FuncFormatter(_binary))
    left.set_xlim(n[0], n[-1])
    left.set_ylim(2.0**24, 2.0**40)
    left.set_xlabel("context n (tokens, log)")
    left.set_ylabel("KV cache (bytes, log)")
    left.set_title(f"{DEMO_MODEL}'s shape: {shape['layers']} layers, {shape['kv_heads']} KV heads × "
                   f"{shape['head_dim']}, {shape['dtype']}")
    left.legend(loc="upper left")
    depth = np.arange(1, shape["layers"] + 1)
    (reach,) = right.plot(depth, np.ones(depth.size), "-", drawstyle="steps-post", color=TOL_MUTED[0], linewidth=2.6,
                          animated=True, label="sliding and global layers")
    (reach_global,) = right.plot(depth, np.ones(depth.size), "--", color=TOL_MUTED[1], linewidth=2.2, animated=True,
                                 label="every layer global")
    (reach_sliding,) = right.plot(depth, np.ones(depth.size), ":", color=TOL_MUTED[2], linewidth=2.4, animated=True,
                                  label="every layer sliding")
    right.set_yscale("log", base=2)
    right.yaxis.set_major_formatter(FuncFormatter(_tokens))
    right.set_xlim(0.5, shape["layers"] + 0.5)
    right.set_ylim(2.0**6, 2.0**21)
    right.set_xlabel("layers passed (depth)")
    right.set_ylabel("reach: tokens back (log)")
    right.set_title("How far back the last token can draw information")
    right.legend(loc="lower right")
    return {"mixed": mixed, "mark": mark, "mark_global": mark_global, "reach": reach, "reach_global": reach_global,
            "reach_sliding": reach_sliding, "all_global": all_global, "contexts": n}


def update_kv_slider(handles, window=1024.0, ratio=5, context=131072.0) -> str:
    """Move the curves to sliding window ``window``, ``ratio`` sliding layers per global one and ``context`` tokens.

    Returns the HTML readout: the cache of both models at the context, per token, and the reach after the last
    layer. Taught in notebooks/16-position-at-inference.ipynb.
    """
    n = handles["contexts"]
    context = int(round(context))
    config = _demo_config(window, ratio, context)
    handles["mixed"].set_ydata(kv_bytes(config, n))
    mine, total_global = kv_cache(config, context), kv_cache(_demo_config(1, 0, context), context)
    handles["mark"].set_data([context], [mine.total_bytes])
    handles["mark_global"].set_data([context], [total_global.total_bytes])
    reach = receptive_field([x.window for x in layer_positions(config)], context)
    handles["reach"].set_ydata(np.maximum(reach, 1))
    handles["reach_global"].set_ydata(np.full(reach.size, context - 1))
    # every layer sliding: r_ℓ = min(ℓ · (W − 1), n − 1)
    handles["reach_sliding"].set_ydata(np.maximum(receptive_field([int(round(window))] * reach.size, context), 1))
    sliding = sum(t == "sliding_attention" for t in config["layer_types"])
    rows = [("layers", f"{sliding} sliding (window {int(round(window)):,}), {len(reach) - sliding} global",
             f"{len(reach)} global"),
            # one formatter for both columns, as kv_table_text prints them: 10.4 GiB beside 62.0 GiB
            (f"cache at {context:,} tokens", format_bytes(mine.total_bytes), format_bytes(total_global.total_bytes)),
            ("average per token (cache ÷ n), bytes", f"{mine.bytes_per_token:,.0f}", f"{total_global.bytes_per_token:,.0f}"),
            ("reach after the last layer (tokens back)", f"{int(reach[-1]):,}", f"{context - 1:,}")]
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr><th></th><th>this model</th><th>every layer global</th></tr>{body}</table>"


def make_kv_slider_figure():
    """A figure with :func:`plot_kv_slider` drawn on it: ``(fig, handles)`` for the slider demo."""
    fig, axes = new_figure(1, 2, figsize=(13.0, 5.0))
    return fig, plot_kv_slider(axes)


def kv_demo(window: float = 1024.0, ratio: int = 5, context: float = 131072.0):
    """Slider demo: a hypothetical model's sliding window, local:global ratio and context against its KV cache.

    The model has :data:`DEMO_MODEL`'s layers, KV heads, head_dim and dtype; the defaults are that model's own
    window and ratio (Gemma 3: 1,024 tokens, 5 sliding layers per global one) at 128K tokens.
    Taught in notebooks/16-position-at-inference.ipynb.

    >>> demo = kv_demo()
    >>> int(demo.handles["mark"].get_ydata()[0]) == kv_cache(bundled_kv_config("Gemma 3 27B"), 131072).total_bytes
    True
    """
    from ..demo import SliderDemo, int_slider, log_slider, token_values

    controls = [
        log_slider("window", "W (sliding window, tokens)", token_values(128, 24_576), window),
        int_slider("ratio", "local per global (layers)", 0, 15, ratio),
        log_slider("context", "n (context length, tokens)", token_values(1_024, 786_432), context),
    ]
    return SliderDemo(make_kv_slider_figure, update_kv_slider, controls,
                      title=f"A hypothetical model with {DEMO_MODEL}'s layers: what its windows save")


def make_kv_slider_default():
    """:func:`kv_demo` at its default settings, drawn statically (notebook 16 shows ``demo.fig``, the same drawing)."""
    fig, handles = make_kv_slider_figure()
    update_kv_slider(handles)
    return fig


FIGURES = {"16-kv-cache": make_kv_cache}
DEMOS = {"kv": kv_demo}
