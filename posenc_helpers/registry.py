"""Every figure and slider demo the plotting modules register, found by name.

Each module in :mod:`posenc_helpers.viz` may define ``FIGURES = {"NN-slug": make}``
and ``DEMOS = {"name": factory}``. The figure generator (``make figures``), the
slider benchmark, the accessibility tests and the browser tests all read them
from here, so a new figure or demo is picked up by registering it in its module.

The imports only go one way: ``style`` <- ``demo`` <- ``viz`` <- ``registry``.

>>> "01-unit-circle-walk" in figures(), "clock.clock" in demos()
(True, True)
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from types import ModuleType

from . import viz


def _viz_modules() -> list[ModuleType]:
    infos = sorted(pkgutil.iter_modules(viz.__path__), key=lambda m: m.name)
    return [importlib.import_module(f"{viz.__name__}.{info.name}") for info in infos]


def figures() -> dict[str, Callable]:
    """Every figure maker, ``{"NN-slug": make}``, sorted by name; a name defined twice is an error."""
    makers: dict[str, Callable] = {}
    for module in _viz_modules():
        for name, make in getattr(module, "FIGURES", {}).items():
            if name in makers:
                raise ValueError(f"figure name {name!r} is defined twice (again in {module.__name__})")
            makers[name] = make
    return dict(sorted(makers.items()))


def demos() -> dict[str, Callable]:
    """Every slider demo factory, as ``{"module.name": factory}`` (``factory()`` returns a SliderDemo)."""
    found: dict[str, Callable] = {}
    for module in _viz_modules():
        short = module.__name__.rsplit(".", 1)[-1]
        for name, factory in getattr(module, "DEMOS", {}).items():
            found[f"{short}.{name}"] = factory
    return found
