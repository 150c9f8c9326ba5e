"""Thin slider wiring: sliders that update one figure in place.

A :class:`SliderDemo` keeps one matplotlib Figure and an ``ipywidgets.Image``
that shows it as PNG. When a control changes, the demo calls the pure
``update`` function, which moves the existing artists and returns the
readout text, then re-renders the same figure into the same Image. The
output area is never cleared, so nothing flickers, and an exception in
``update`` propagates to whoever set the slider's value: a notebook cell that
drives a demo fails under nbval instead of printing a traceback into a
widget and passing.

Speed comes from blitting. Artists that ``update`` changes are marked
``set_animated(True)`` by the plotting function; everything else (axes,
ticks, labels) is drawn once into a cached background. A frame restores that
background, draws only the animated artists, and encodes the PNG. If an
update changes any axes' limits or visibility, the background is redrawn
automatically; ``update`` may also return ``(readout, True)`` to force that.
Animated artists that belong to an Axes are still drawn when the figure is
saved or shown statically (``savefig`` draws them), so the same figure serves
both. Matplotlib never draws an animated artist placed on the Figure itself
(``fig.text``) when saving: put changing text on an Axes instead.

>>> from posenc_helpers.style import new_figure
>>> def make():
...     fig, ax = new_figure()
...     (line,) = ax.plot([0, 1], [0, 0])
...     return fig, line
>>> def update(line, height):
...     line.set_ydata([0, height])
...     return f"height = {height}"
>>> demo = SliderDemo(make, update, [int_slider("height", "h (height)", 0, 10, 3)])
>>> demo.readout.value
'height = 3'
>>> demo.controls["height"].value = 7          # observers fire synchronously
>>> demo.handles.get_ydata()[1], demo.readout.value
(7, 'height = 7')
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np

from .style import style

#: Layout shared by every control: a label wide enough for "shift (added to m and n)".
_CONTROL_STYLE = {"description_width": "16em"}
_CONTROL_LAYOUT = {"width": "42em"}

#: Readout tables, readable from the back of a room: padded columns, aligned digits, and a cell never wraps
#: (a dims cell "10, 11" stays on one line); long headers may.
READOUT_CSS = """<style>
.posenc-readout { font-size: 15px; }
.posenc-readout table { border-collapse: collapse; margin-top: 0.3em; }
.posenc-readout th, .posenc-readout td { padding: 0.15em 0.9em; text-align: right; font-variant-numeric: tabular-nums; }
.posenc-readout td { white-space: nowrap; }
.posenc-readout th { border-bottom: 1px solid #888; }
.posenc-demo .widget-label { font-size: 14px; }
</style>"""


def _control(cls, name: str, label: str, **kw):
    control = cls(description=label, style=_CONTROL_STYLE, layout=_CONTROL_LAYOUT, continuous_update=True, **kw)
    control.demo_name = name  # the keyword the update function receives
    return control


def int_slider(name: str, label: str, min: int, max: int, value: int, step: int = 1):
    """An integer slider; ``label`` gives the symbol and its meaning, e.g. ``"pos (position)"``."""
    return _control(widgets.IntSlider, name, label, min=min, max=max, value=value, step=step)


def float_slider(name: str, label: str, min: float, max: float, value: float, step: float = 0.1, readout_format=".2f"):
    """A float slider; ``label`` gives the symbol and its meaning."""
    return _control(
        widgets.FloatSlider, name, label, min=min, max=max, value=value, step=step, readout_format=readout_format
    )


def log_slider(name: str, label: str, min_exp: float, max_exp: float, value: float, step: float = 0.05,
               readout_format: str = ",.0f"):
    """A slider over powers of ten, e.g. a base from 10^2 to 10^6.

    Its readout is a d3 format; the default ``",.0f"`` shows whole numbers with
    a thousands separator, so 10^4.45 reads "28,184", never "2.818e+4".

    >>> log_slider("base", "base (frequency base)", 1, 5, 10000.0).readout_format
    ',.0f'
    """
    return _control(
        widgets.FloatLogSlider, name, label, base=10, min=min_exp, max=max_exp, value=value, step=step,
        readout_format=readout_format,
    )


def neighbour_value(control, direction: int = 1, value=None):
    """The value one step away from ``value`` (default ``control.value``; +1 right, −1 left), as a hand moves it.

    Integer and float sliders move by ``step``; a log slider moves its exponent
    by ``step``; a choice widget (with ``options``) takes the next option. At
    either end of a slider's range the step goes the other way.

    >>> neighbour_value(int_slider("pos", "pos (position)", 0, 10, 10))
    9
    >>> round(neighbour_value(log_slider("base", "base (frequency base)", 2, 6, 10000.0)))
    11220
    """
    value = control.value if value is None else value
    if hasattr(control, "options"):
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return options[(options.index(value) + direction) % len(options)]
    step = control.step or 1
    if isinstance(control, widgets.FloatLogSlider):
        exponent = np.log(value) / np.log(control.base)
        nxt = exponent + direction * step
        if not control.min <= nxt <= control.max:
            nxt = exponent - direction * step
        return float(control.base**nxt)
    nxt = value + direction * step
    if not control.min <= nxt <= control.max:
        nxt = value - direction * step
    return nxt


def render_png(fig) -> bytes:
    """The whole figure as PNG bytes, without metadata, at the figure's own dpi."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=fig.dpi, metadata={"Software": None})
    return buffer.getvalue()


def encode_png(rgba) -> bytes:
    """An (h, w, 4) uint8 RGBA array as a PNG file: unfiltered scanlines, zlib level 1.

    Pillow's PNG writer tries five row filters per scanline, which costs
    4–5× more than the compression itself on a plot's flat colours; a slider
    frame is sent once and thrown away, so speed wins over the last 10 % of
    size. Any PNG reader decodes the result (the tests use Pillow's).

    >>> png = encode_png(np.zeros((2, 3, 4), dtype=np.uint8))
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", len(png) < 100
    (True, True)
    """
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    if rgba.ndim != 3 or rgba.shape[2] != 4:
        raise ValueError(f"rgba must have shape (height, width, 4), got {rgba.shape}")
    height, width, _ = rgba.shape
    # Each scanline: filter type 0 (none), then the row's bytes.
    rows = np.zeros((height, 1 + 4 * width), dtype=np.uint8)
    rows[:, 1:] = rgba.reshape(height, 4 * width)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
        + chunk(b"IEND", b"")
    )


def _encode_rgba(canvas) -> bytes:
    return encode_png(np.asarray(canvas.buffer_rgba()))


class SliderDemo(widgets.VBox):
    """Controls, a figure updated in place, and a readout, in one widget.

    Parameters
    ----------
    make_figure:
        ``make_figure() -> (fig, handles)``: builds the figure once.
    update:
        ``update(handles, **values) -> str``: moves the artists to the
        controls' values and returns the readout (HTML allowed).
    controls:
        Widgets made by :func:`int_slider`, :func:`float_slider`,
        :func:`log_slider` (or any value widget with a ``demo_name``).
    """

    def __init__(
        self,
        make_figure: Callable[[], tuple[Any, Any]],
        update: Callable[..., str],
        controls: Sequence[widgets.ValueWidget],
        title: str = "",
    ):
        self.make_figure = make_figure
        self.update_fn = update
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        with style():
            self.fig, self.handles = make_figure()
        self._canvas = FigureCanvasAgg(self.fig)
        self._layout = self.fig.get_layout_engine()
        self._background = None
        self._signature = None
        self._census = None
        self._animated = []
        #: How many frames needed a full redraw (limits or visibility changed, or forced).
        self.full_draws = 0
        self.controls = {c.demo_name: c for c in controls}
        self.image = widgets.Image(format="png", layout={"width": f"{self.fig.get_figwidth() * self.fig.dpi:.0f}px"})
        self.readout = widgets.HTML(layout={"margin": "0 0 0 1em"})
        self.readout.add_class("posenc-readout")
        self.image.add_class("posenc-figure")
        children = [widgets.HTML(READOUT_CSS, layout={"height": "0px"})]
        children += [widgets.HTML(f"<b>{title}</b>")] if title else []
        super().__init__(children=children + [widgets.VBox(list(controls)), self.image, self.readout])
        self.add_class("posenc-demo")
        self.refresh()
        for control in controls:
            control.observe(self._on_change, names="value")

    @property
    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def _on_change(self, _change=None) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Apply the controls' values to the figure, then re-render it into the Image."""
        with style():
            result = self.update_fn(self.handles, **self.values)
        readout, force = result if isinstance(result, tuple) else (result, False)
        self.image.value = self._frame(force)
        self.readout.value = readout

    def _static_signature(self):
        return tuple(
            (ax.get_visible(), tuple(ax.get_xlim()), tuple(ax.get_ylim())) for ax in self.fig.axes
        )

    def _frame(self, force: bool = False) -> bytes:
        signature = self._static_signature()
        if force or self._background is None or signature != self._signature:
            # Full draw of the static parts (animated artists are skipped), then cache it.
            if self._layout is not None:
                self.fig.set_layout_engine(self._layout)
            self._canvas.draw()
            self.full_draws += 1
            if self._layout is not None:
                # Freeze the layout found by this draw: later frames only move artists.
                self.fig.set_layout_engine("none")
            self._background = self._canvas.copy_from_bbox(self.fig.bbox)
            self._signature = signature
        else:
            self._canvas.restore_region(self._background)
        # The artists to draw each frame, found again only when artists were added or removed
        # (findobj walks the whole figure, a few ms).
        census = (len(self.fig.get_children()),) + tuple(len(ax.get_children()) for ax in self.fig.axes)
        if census != self._census:
            self._animated = sorted(self.fig.findobj(lambda a: a.get_animated()), key=lambda a: a.get_zorder())
            self._census = census
        for artist in self._animated:
            if artist.get_visible():
                (artist.axes or self.fig).draw_artist(artist)
        return _encode_rgba(self._canvas)

    def set_values(self, **values) -> None:
        """Set several controls, then redraw once (setting ``.value`` redraws after each)."""
        with self.hold_trait_notifications():
            for name in values:
                if name not in self.controls:
                    raise KeyError(f"no control named {name!r}; this demo has {sorted(self.controls)}")
        for name, value in values.items():
            self.controls[name].unobserve(self._on_change, names="value")
            try:
                self.controls[name].value = value
            finally:
                self.controls[name].observe(self._on_change, names="value")
        self.refresh()

    def naive_render(self, **values) -> bytes:
        """What a plain ``interact`` redraw costs: build a new figure from scratch, update, render."""
        with style():
            fig, handles = self.make_figure()
            self.update_fn(handles, **{**self.values, **values})
        return render_png(fig)

