"""The PE / ROPE / DOT command interpreter: the exercise's starter.

Run it as ``python -m posenc_helpers [FILE]``; it reads commands from FILE or
standard input, one per line::

    PE <pos> <D>                          sinusoidal(pos, D)
    ROPE <pos> <x1> … <xD>                rope(x, pos)
    DOT <m> <n> <q1> … <qD> <k1> … <kD>   rope(q, m) · rope(k, n)

Each command prints one line of numbers with 4 decimals. A bad line prints
``error: line N: …`` to standard error and the next lines still run. The
exit status is 1 if any line failed, else 0.

The parser takes the PE and ROPE implementations as arguments, and DOT is
built on the ROPE it is given, so notebooks/05-exercise.ipynb can run a
learner's functions through it: a wrong rotation shows up in DOT too.

>>> import io
>>> out, err = io.StringIO(), io.StringIO()
>>> run_commands(["PE 2 4", "dot 5 3 1 0 1 0", "FOO 1"], out=out, err=err)
1
>>> print(out.getvalue(), end="")
0.9093 -0.4161 0.0200 0.9998
-0.4161
>>> print(err.getvalue(), end="")
error: line 3: unknown command 'FOO' (expected PE, ROPE or DOT)
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable
from typing import TextIO

import numpy as np

from .core import rope as _rope
from .core import sinusoidal as _sinusoidal

PEFunction = Callable[[float, int], object]
RopeFunction = Callable[[np.ndarray, float], object]

USAGE = {
    "PE": "PE <pos> <D>",
    "ROPE": "ROPE <pos> <x1> ... <xD>",
    "DOT": "DOT <m> <n> <q1> ... <qD> <k1> ... <kD>",
}


class CommandError(ValueError):
    """A command line that cannot be run; its message is what the learner reads."""


def format_numbers(values) -> str:
    """Numbers with 4 decimals, separated by spaces; −0.0000 prints as 0.0000.

    >>> format_numbers([0.90929, -0.41614, -0.00001, 1])
    '0.9093 -0.4161 0.0000 1.0000'
    """
    parts = []
    for value in np.atleast_1d(np.asarray(values, dtype=np.float64)).ravel():
        text = f"{value:.4f}"
        parts.append("0.0000" if text == "-0.0000" else text)
    return " ".join(parts)


def _number(token: str, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise CommandError(f"{what} must be a number, got {token!r}") from None
    if not math.isfinite(value):
        raise CommandError(f"{what} must be a finite number, got {token!r}")
    return value


def _vector_from(fn_name: str, result, length: int) -> np.ndarray:
    """Turn what an implementation returned into a float vector of the expected length."""
    shown = repr(result) if len(repr(result)) <= 60 else repr(result)[:57] + "..."
    try:
        arr = np.asarray(result)
    except (TypeError, ValueError):
        arr = np.asarray(None, dtype=object)
    if arr.dtype.kind not in "biuf":
        raise CommandError(f"{fn_name} returned {shown}, which is not a sequence of real numbers")
    if arr.shape != (length,):
        raise CommandError(f"{fn_name} returned shape {arr.shape}, expected ({length},)")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise CommandError(f"{fn_name} returned {shown}, which holds a value that is not finite")
    return arr


def _call(fn_name: str, fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # the learner's code may raise anything; report it, never a traceback
        detail = f": {exc}" if str(exc) else ""
        raise CommandError(f"{fn_name} raised {type(exc).__name__}{detail}") from None


def evaluate(line: str, pe: PEFunction = _sinusoidal, rope: RopeFunction = _rope) -> str:
    """Run one command line and return its output line; raise CommandError if it is bad.

    >>> evaluate("ROPE 1 1 0")          # (cos 1, sin 1)
    '0.5403 0.8415'
    >>> evaluate("PE 2 0")
    Traceback (most recent call last):
    ...
    posenc_helpers.interpreter.CommandError: D must be a positive integer, got '0'
    """
    words = line.split()
    command, args = words[0].upper(), words[1:]
    if command not in USAGE:
        raise CommandError(f"unknown command {words[0]!r} (expected PE, ROPE or DOT)")
    if command == "PE":
        if len(args) != 2:
            raise CommandError(f"PE takes 2 numbers, got {len(args)} (usage: {USAGE['PE']})")
        pos = _number(args[0], "pos")
        try:
            dim = int(args[1])
        except ValueError:
            dim = 0
        if dim < 1:
            raise CommandError(f"D must be a positive integer, got {args[1]!r}")
        return format_numbers(_vector_from("PE", _call("PE", pe, pos, dim), dim))
    if command == "ROPE":
        if len(args) < 2:
            raise CommandError(f"ROPE takes a position and at least 1 vector element, got {len(args)} numbers "
                               f"(usage: {USAGE['ROPE']})")
        pos = _number(args[0], "pos")
        x = np.array([_number(t, f"x{i}") for i, t in enumerate(args[1:], start=1)])
        return format_numbers(_vector_from("ROPE", _call("ROPE", rope, x, pos), len(x)))
    # DOT
    if len(args) < 4 or (len(args) - 2) % 2:
        raise CommandError(f"DOT takes m, n and an even count of vector elements (D for q, D for k), "
                           f"got {max(len(args) - 2, 0)} elements (usage: {USAGE['DOT']})")
    m = _number(args[0], "m")
    n = _number(args[1], "n")
    values = [_number(t, f"element {i}") for i, t in enumerate(args[2:], start=1)]
    dim = len(values) // 2
    q, k = np.array(values[:dim]), np.array(values[dim:])
    rq = _vector_from("ROPE", _call("ROPE", rope, q, m), dim)
    rk = _vector_from("ROPE", _call("ROPE", rope, k, n), dim)
    # score = rope(q, m) · rope(k, n)
    return format_numbers(float(np.dot(rq, rk)))


def run_commands(
    lines: Iterable[str],
    pe: PEFunction = _sinusoidal,
    rope: RopeFunction = _rope,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run every command; print results to ``out`` and errors to ``err``; return the failure count.

    Blank lines and lines starting with ``#`` are skipped; line numbers count
    every line of the input, so they match the file a learner edits.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    failures = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            print(evaluate(line, pe, rope), file=out)
        except CommandError as exc:
            failures += 1
            print(f"error: line {number}: {exc}", file=err)
    return failures


def main(argv: list[str] | None = None, *, prog: str = "python -m posenc_helpers") -> int:
    """Entry point of ``python -m posenc_helpers [FILE]`` (``prog`` names it in the usage line); the exit status."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run PE / ROPE / DOT commands, one per line, and print one result line each.",
        # the other command `posenc` (and python -m posenc_helpers) dispatches to (posenc_helpers/cli.py)
        epilog="subcommand:\n  explain CONFIG  explain a model's config.json: its position design, layer by layer "
               "(posenc explain --help)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", nargs="?", help="command file (default: standard input)")
    options = parser.parse_args(argv)
    try:
        if options.file is None:
            failures = run_commands(sys.stdin)
        else:
            with open(options.file, encoding="utf-8") as handle:
                failures = run_commands(handle)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {options.file!r}: {exc}", file=sys.stderr)
        return 1
    return 1 if failures else 0
