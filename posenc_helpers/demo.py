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

**A slider holds only values it can show.** When its view renders, an
ipywidgets slider sends the value it displays back to the kernel. A
FloatLogSlider displays 10^(min + j·step), computed in the browser: a
default of 500,000 or 8,192 on a 0.05-exponent grid comes back as 501,187 or
7,943, and a FloatSlider's 8.0 can come back as 7.999999999999999. A demo
then quietly disagrees with the text after Run All, and the cell that
asserts its values fails. So every control here is one of two kinds:

* :func:`int_slider`: integers; the browser's arithmetic on them is exact,
  and a value off ``min + j·step`` (or outside the range) is refused;
* :func:`float_slider` and :func:`log_slider`: a slider over an explicit
  list of values (``SelectionSlider``). The browser moves an integer index
  and the kernel maps it back to the listed value, so no float ever crosses
  the wire. The lists are chosen so that the values the text uses are on
  them: :func:`round_values` (10,000, 500,000, 1,000,000) and
  :func:`token_values` (1,024, 8,192, 131,072).

A default or a later value a slider cannot show raises a ValueError naming
the slider and the value, at construction or at the assignment, so a
scripted check cannot leave the live widget where the browser would move
it. To draw the figure at any other value (a base of 25,330.3), use
:meth:`SliderDemo.preview`: a fresh copy, the live demo untouched.

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

import dataclasses
import io
import math
import struct
import zlib
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import ipywidgets as widgets
import numpy as np
from traitlets import validate

from .style import style

#: Layout shared by every control: a label wide enough for "shift (added to m and n)", and a 26em track after it.
_CONTROL_STYLE = {"description_width": "16em"}
_CONTROL_LAYOUT = {"width": "42em"}
#: A label's width per character, in em of the widget label's font: generous, so no label is cut (the browser test
#: measures every label against its box).
_EM_PER_CHARACTER = 0.5

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


def _number(value) -> str:
    """A value as an error message shows it: whole numbers with separators, others as typed."""
    if isinstance(value, (int, float, np.integer, np.floating)) and float(value).is_integer() and abs(value) >= 1000:
        return f"{value:,.0f}"
    return repr(value)


class StepIntSlider(widgets.IntSlider):
    """An IntSlider that refuses a value it cannot show: outside [min, max], or off min + j·step.

    The browser snaps such a value to the nearest step and sends the snapped one
    back to the kernel; refusing it here keeps kernel and browser in agreement.
    """

    @validate("value")
    def _validate_value(self, proposal):
        value = proposal.value
        if not self.min <= value <= self.max or (value - self.min) % self.step:
            raise ValueError(
                f"slider {getattr(self, 'demo_name', self.description)!r} cannot show {_number(value)}: "
                f"it shows {_number(self.min)}, {_number(self.min + self.step)}, … {_number(self.max)} "
                f"(steps of {self.step} from {_number(self.min)})"
            )
        return value


class ChoiceSlider(widgets.SelectionSlider):
    """A slider over an explicit list of values; a value not in the list is refused by name.

    The browser sends only the index of the chosen stop, and the kernel maps it
    back to the exact value listed here, so what the kernel holds is always a
    value of the list, bit for bit.
    """

    @validate("value")
    def _validate_value(self, proposal):
        value = proposal.value
        if value not in self._options_values:
            values = self._options_values
            raise ValueError(
                f"slider {getattr(self, 'demo_name', self.description)!r} cannot show {_number(value)}: "
                f"its {len(values)} values run from {_number(values[0])} to {_number(values[-1])} "
                f"({', '.join(self._options_labels[:4])}, …); draw other values with demo.preview(...)"
            )
        return value


def int_slider(name: str, label: str, min: int, max: int, value: int, step: int = 1):
    """An integer slider; ``label`` gives the symbol and its meaning, e.g. ``"pos (position)"``.

    It shows ``min``, ``min + step``, … up to ``max``; any other value (the default or one set
    later) is refused with a ValueError naming the slider and the value.

    >>> int_slider("distance", "Δ (distance)", 0, 2048, 100, step=8)
    Traceback (most recent call last):
    ...
    ValueError: slider 'distance' cannot show 100: it shows 0, 8, … 2,048 (steps of 8 from 0)
    """
    for what, number in (("min", min), ("max", max), ("step", step)):
        if not isinstance(number, (int, np.integer)) or isinstance(number, bool):
            raise ValueError(f"int_slider {name!r}: {what} must be an integer, got {number!r}")
    if step < 1 or (max - min) % step:
        raise ValueError(f"int_slider {name!r}: max − min = {max - min} is not a whole number of steps of {step}")
    if not min <= value <= max or (value - min) % step:
        raise ValueError(
            f"slider {name!r} cannot show {_number(value)}: it shows {_number(min)}, {_number(min + step)}, … "
            f"{_number(max)} (steps of {step} from {_number(min)})"
        )
    return _control(StepIntSlider, name, label, min=min, max=max, value=value, step=step)


def _choice(name: str, label: str, values, value, readout_format: str):
    labels = [format(v, readout_format) for v in values]
    if len(set(labels)) != len(labels):
        raise ValueError(f"slider {name!r}: two of its values read the same in the format {readout_format!r}")
    if value not in values:
        raise ValueError(
            f"slider {name!r} cannot show {_number(value)}: its {len(values)} values run from "
            f"{_number(values[0])} to {_number(values[-1])} ({', '.join(labels[:4])}, …)"
        )
    control = _control(ChoiceSlider, name, label, options=list(zip(labels, values, strict=True)), value=value)
    return control


def float_slider(name: str, label: str, min: float, max: float, value: float, step: float = 0.1,
                 readout_format=".2f"):
    """A slider over ``min``, ``min + step``, … ``max``; ``label`` gives the symbol and its meaning.

    The values are computed in decimal arithmetic, so each is the float its
    literal gives: 0.1 is 0.1, never 0.30000000000000004 / 3, and 8.0 is 8.0,
    never 7.999999999999999. A default (or a value set later) not among them
    is refused with a ValueError naming the slider and the value.

    >>> float_slider("factor", "s (context scale)", 1.0, 32.0, 8.0, step=0.5).options[14]
    ('8.00', 8.0)
    >>> float_slider("factor", "s (context scale)", 1.0, 32.0, 8.2, step=0.5)
    Traceback (most recent call last):
    ...
    ValueError: slider 'factor' cannot show 8.2: its 63 values run from 1.0 to 32.0 (1.00, 1.50, 2.00, 2.50, …)
    """
    lo, hi, dx = (Decimal(str(x)) for x in (min, max, step))
    count = (hi - lo) / dx
    if dx <= 0 or count != count.to_integral_value():
        raise ValueError(f"float_slider {name!r}: max − min = {hi - lo} is not a whole number of steps of {dx}")
    values = [float(lo + j * dx) for j in range(int(count) + 1)]
    return _choice(name, label, values, value, readout_format)


def log_slider(name: str, label: str, values, value: float, readout_format: str = ",.0f"):
    """A slider over an explicit, increasing list of positive values, spaced evenly on a log scale.

    Build the list with :func:`round_values` (twenty round numbers per decade)
    or :func:`token_values` (powers of two and their halfway points); its
    readout is a Python (and d3) format, by default whole numbers with a
    thousands separator: 500,000, never 5e+5.

    >>> slider = log_slider("base", "base (frequency base)", round_values(10, 100_000), 10_000.0)
    >>> slider.value, slider.label, len(slider.options)
    (10000.0, '10,000', 81)
    >>> log_slider("base", "base (frequency base)", round_values(10, 100_000), 25_330.3)
    Traceback (most recent call last):
    ...
    ValueError: slider 'base' cannot show 25330.3: its 81 values run from 10.0 to 100,000 (10, 11, 13, 14, …)
    """
    if isinstance(values, (int, float, np.number)):
        raise ValueError(
            f"log_slider {name!r}: values must be the list of values it shows, e.g. round_values(10, 100_000) "
            f"or token_values(1_024, 786_432), got the number {values!r}"
        )
    values = [float(x) for x in values]
    if not values or values[0] <= 0 or any(b <= a for a, b in zip(values[:-1], values[1:], strict=True)):
        raise ValueError(f"log_slider {name!r}: values must be positive and increasing, got {values[:5]}…")
    return _choice(name, label, values, value, readout_format)


def round_values(lo: float, hi: float, per_decade: int = 20) -> list[float]:
    """``per_decade`` round numbers per power of ten, from ``lo`` to ``hi``: 10^(j/per_decade), two digits.

    Each is 10^(j/20) rounded to two significant digits, so a decade reads
    1.0, 1.1, 1.3, 1.4, 1.6, 1.8, 2.0, 2.2, 2.5, 2.8, 3.2, 3.5, 4.0, 4.5,
    5.0, 5.6, 6.3, 7.1, 7.9, 8.9 (times its power of ten). The steps are as
    even on a log scale as a 0.05-exponent grid's, and every value is one a
    text can write: 10,000, 500,000 and 1,000,000 are on it; 10^5.7 ≈ 501,187
    is not. ``lo`` and ``hi`` must be values of the series.

    >>> round_values(1, 10)
    [1.0, 1.1, 1.3, 1.4, 1.6, 1.8, 2.0, 2.2, 2.5, 2.8, 3.2, 3.5, 4.0, 4.5, 5.0, 5.6, 6.3, 7.1, 7.9, 8.9, 10.0]
    """
    if per_decade < 1:
        raise ValueError(f"per_decade must be at least 1, got {per_decade}")
    first = math.floor(math.log10(lo) * per_decade) - 1
    last = math.ceil(math.log10(hi) * per_decade) + 1
    series = []
    for j in range(first, last + 1):
        exact = 10.0 ** (j / per_decade)
        # two significant digits: 10^(0.9) = 7.943… → 7.9
        digits = 1 - math.floor(math.log10(exact))
        series.append(float(round(Decimal(repr(exact)), digits)))
    for what, end in (("lo", lo), ("hi", hi)):
        if float(end) not in series:
            near = min(series, key=lambda x: abs(math.log(x / end)))
            raise ValueError(f"round_values: {what} = {_number(end)} is not a value of the series (nearest: {_number(near)})")
    return [x for x in series if lo <= x <= hi]


def token_values(lo: int, hi: int) -> list[float]:
    """Token counts from ``lo`` to ``hi``: the powers of two and the halfway points 3·2^j between them.

    Context lengths, windows and training lengths are powers of two in the
    configs (1,024, 8,192, 131,072), so the slider lands on them exactly;
    the halfway points (1,536, 3,072, …) make its steps 1.5× and 1.33×
    apart. ``lo`` and ``hi`` must be values of the series.

    >>> token_values(1024, 8192)
    [1024.0, 1536.0, 2048.0, 3072.0, 4096.0, 6144.0, 8192.0]
    """
    series = sorted({2**j for j in range(0, 41)} | {3 * 2**j for j in range(0, 40)})
    for what, end in (("lo", lo), ("hi", hi)):
        if end not in series:
            near = min(series, key=lambda x: abs(math.log(x / end)))
            raise ValueError(f"token_values: {what} = {_number(end)} is not a power of two or 3·2^j (nearest: {_number(near)})")
    return [float(x) for x in series if lo <= x <= hi]


def slider_values(control) -> list:
    """Every value a control can show, in order: the steps of an int slider, the options of a choice.

    >>> slider_values(int_slider("pos", "pos (position)", 0, 10, 5, step=5))
    [0, 5, 10]
    """
    if hasattr(control, "options"):
        return [o[1] if isinstance(o, tuple) else o for o in control.options]
    if isinstance(control, StepIntSlider):
        return list(range(control.min, control.max + 1, control.step))
    raise ValueError(
        f"control {getattr(control, 'demo_name', control.description)!r} is a {type(control).__name__}, whose "
        "values the browser may snap: build it with int_slider, float_slider or log_slider"
    )


def neighbour_value(control, direction: int = 1, value=None):
    """The value one step away from ``value`` (default ``control.value``; +1 right, −1 left), as a hand moves it.

    A step moves to the next value the control shows (:func:`slider_values`);
    at either end of the list the step goes the other way.

    >>> neighbour_value(int_slider("pos", "pos (position)", 0, 10, 10))
    9
    >>> neighbour_value(log_slider("base", "base (frequency base)", round_values(100, 1e6), 10000.0))
    11000.0
    """
    value = control.value if value is None else value
    values = slider_values(control)
    index = values.index(value)
    nxt = index + direction
    if not 0 <= nxt < len(values):
        nxt = index - direction
    return values[nxt]


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


def _widen_labels(controls) -> None:
    """Give every control of a demo the label width its longest label needs (at least 16em), tracks aligned.

    "local:global (sliding layers per global layer)" does not fit in 16em; the
    other labels of its demo get the same width, so that their tracks still
    start at one x.
    """
    longest = max(len(control.description) for control in controls)
    width = max(16.0, math.ceil(_EM_PER_CHARACTER * longest))
    if width == 16.0:
        return
    for control in controls:
        control.style.description_width = f"{width:g}em"
        control.layout.width = f"{width + 26:g}em"


@dataclasses.dataclass
class Preview:
    """A demo's figure drawn at chosen values by :meth:`SliderDemo.preview`: ``fig``, ``handles``, ``readout``."""

    fig: Any
    handles: Any
    readout: str


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
        :func:`log_slider`, or a choice widget with ``options`` (such as
        ToggleButtons) and a ``demo_name``. A FloatSlider or FloatLogSlider is
        refused: the browser may send back another value than the kernel's.
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
        for control in controls:
            slider_values(control)  # refuses a control whose values the browser may snap
        _widen_labels(controls)
        #: The values the demo was built with.
        self.defaults = {name: control.value for name, control in self.controls.items()}
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

    def preview(self, **values) -> Preview:
        """The figure at ``values`` (the controls' values for the rest), drawn on a fresh copy.

        The live demo, its sliders and its figure are untouched, so a scripted
        check may use values no slider shows. Names must be the demo's controls.

        >>> from posenc_helpers.viz.clock import clock_demo
        >>> demo = clock_demo()
        >>> shown = demo.preview(dim=4, base=25_330.3, pos=500)      # 25,330.3 is not on the base slider
        >>> shown.handles["faces"][1]["tip"].get_xydata().round(2)   # λ_1 = 2π·√25,330.3 ≈ 1,000: half a turn
        array([[-1.,  0.]])
        >>> demo.values == demo.defaults
        True
        """
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise KeyError(f"no control named {unknown[0]!r}; this demo has {sorted(self.controls)}")
        with style():
            fig, handles = self.make_figure()
            result = self.update_fn(handles, **{**self.values, **values})
        readout = result[0] if isinstance(result, tuple) else result
        return Preview(fig, handles, readout)

    def naive_render(self, **values) -> bytes:
        """What a plain ``interact`` redraw costs: build a new figure from scratch, update, render."""
        with style():
            fig, handles = self.make_figure()
            self.update_fn(handles, **{**self.values, **values})
        return render_png(fig)

