"""Argument checks shared by every public function.

Each check raises an exception whose message names the argument and repeats
the value it received, so a learner sees ``dim must be a positive integer,
got 4.5`` instead of a numpy traceback from deep inside, or a silent NaN.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _show(value) -> str:
    """A short, readable rendering of a received value for an error message."""
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return f"array({value.tolist()!r})"
        return f"array of shape {value.shape}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(value) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def positive_int(name: str, value) -> int:
    """Return ``value`` as a Python int, or raise if it is not an integer >= 1.

    >>> positive_int("dim", np.int64(4))
    4
    >>> positive_int("dim", 4.5)
    Traceback (most recent call last):
    ...
    TypeError: dim must be a positive integer, got 4.5
    """
    if not _is_int(value):
        raise TypeError(f"{name} must be a positive integer, got {_show(value)}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {_show(value)}")
    return int(value)


def real_scalar(name: str, value) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {_show(value)}")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {_show(value)}")
    return out


def base_value(value, name: str = "base") -> float:
    """A frequency base must be a finite real number greater than 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number greater than 1, got {_show(value)}")
    out = float(value)
    if not math.isfinite(out) or out <= 1.0:
        raise ValueError(f"{name} must be a finite number greater than 1, got {_show(value)}")
    return out


def real_array(name: str, value) -> np.ndarray:
    """Return ``value`` as a float64 array of finite numbers, or raise naming ``name``."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a number or an array of numbers, got {_show(value)}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested lists, odd objects
        raise TypeError(f"{name} must be a number or an array of numbers, got {_show(value)}") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(
            f"{name} must be a number or an array of real numbers, got {_show(value)} (dtype {arr.dtype})"
        )
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():
        bad = arr[~np.isfinite(arr)].flat[0]
        raise ValueError(f"{name} must be finite, got {_show(value)} (contains {bad})")
    return arr


def vector_array(name: str, value) -> np.ndarray:
    """Like :func:`real_array`, but the array needs at least one axis and a non-empty last axis."""
    arr = real_array(name, value)
    if arr.ndim == 0:
        raise ValueError(f"{name} must have a last axis holding the vector, got the scalar {_show(value)}")
    if arr.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty last axis, got shape {arr.shape}")
    return arr


def broadcast_positions(pos_name: str, pos: np.ndarray, x_name: str, x: np.ndarray) -> tuple[int, ...]:
    """The batch shape that ``pos`` and ``x.shape[:-1]`` broadcast to, or a clear ValueError."""
    try:
        return np.broadcast_shapes(pos.shape, x.shape[:-1])
    except ValueError:
        raise ValueError(
            f"{pos_name} of shape {pos.shape} does not broadcast against {x_name}.shape[:-1] = {x.shape[:-1]}"
        ) from None
