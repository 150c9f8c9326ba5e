"""Checks for the exercise: name the learner's mistake, not just that there is one.

Taught in notebooks/05-exercise.ipynb. The learner writes ``sinusoid(pos, D)``
and ``rotate(vec, pos)``; :func:`check_sinusoid` and :func:`check_rope` run
them on a fixed set of probe inputs and compare each answer with the reference
(:func:`posenc_helpers.sinusoidal`, :func:`posenc_helpers.rope`). When an
answer is wrong, the checker also runs the common buggy versions of the
formula (written out below, independently of the reference) and reports the
one that reproduces every answer: that is the learner's mistake. The result
carries ``passed``, ``mistake`` (None or one code of :data:`MISTAKES`) and
``message``, and prints as that message: one sentence naming the mistake, a
hint, and one failing input with the expected and the received values.

>>> def sinusoid(pos, D):           # cos at even indices, sin at odd ones
...     return [math.cos(pos / 10000 ** (2 * (i // 2) / D)) if i % 2 == 0
...             else math.sin(pos / 10000 ** (2 * (i // 2) / D)) for i in range(D)]
>>> result = check_sinusoid(sinusoid)
>>> result.passed, result.mistake
(False, 'sin-cos-swapped')
>>> print(str(result).splitlines()[0])
✗ sinusoid [sin-cos-swapped]: You put cos at the even indices and sin at the odd ones; it is the other way round.

:func:`compare_script` runs PE / ROPE / DOT command lines through the
interpreter (:mod:`posenc_helpers.interpreter`) twice, once with the learner's
functions and once with the reference, and shows both outputs per line. DOT
is built on the ROPE it is given, so a wrong rotation changes DOT lines too.
Nothing the learner's code does (raise, return None, a generator, NaN, a
huge list, print) ends in a traceback: every problem becomes a line of text.
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from .core import rope as _reference_rope
from .core import sinusoidal as _reference_sinusoidal
from .interpreter import evaluate

__all__ = ["MISTAKES", "CheckResult", "check_sinusoid", "check_rope", "ScriptComparison", "compare_script"]

#: Every mistake code a check can report, from the most specific to the least.
MISTAKES = (
    "not-implemented",
    "element-index",
    "sin-cos-swapped",
    "exponent-k-over-d",
    "rotation-sign",
    "model-dim",
    "base",
    "odd-dim",
    "wrong-shape",
    "not-finite",
    "raised",
    "wrong",
)

BASE = 10000.0
#: An answer counts as right when every element is within ATOL of the reference (float32 answers pass too).
ATOL = 1e-5
#: A returned sequence longer than this is reported by its length and never converted.
MAX_ITEMS = 10_000

#: (pos, D) inputs for sinusoid: the worked trace first, then more lengths, then odd D.
SINUSOID_PROBES = (
    (2, 4), (1, 4), (0, 4), (1, 2), (3, 6), (5, 8), (30, 10),
    (7, 3), (2, 5), (4, 7),
)
#: (vec, pos) inputs for rotate: (1, 0) turned by 1 rad first, then longer vectors, then odd lengths.
ROPE_PROBES = (
    ((1.0, 0.0), 1),
    ((1.0, 0.0, 1.0, 0.0), 2),
    ((0.5, -1.0, 2.0, 0.25), 3),
    ((1.0, 2.0, 3.0, 4.0, 5.0, 6.0), 5),
    ((0.3, -0.2, 0.1, 0.7, -0.5, 0.4, 0.9, -0.6), 10),
    ((3.0, 4.0, 7.0), 1),
    ((1.0, 0.0, 1.0, 0.0, 2.0), 4),
    ((0.2, 0.4, -0.6, 0.8, 1.0, -1.2, 1.4), 6),
)
#: model-dim: the fixed D a learner may have taken from outside, searched over this range.
_MODEL_DIMS = np.arange(1, 4097)


# ---------------------------------------------------------------------------
# The result object


@dataclass
class CheckResult:
    """What a check found: ``passed``, ``mistake`` (a code of MISTAKES or None) and ``message``.

    Its str and repr are the message, so a notebook cell that ends with a
    check shows the friendly text.
    """

    passed: bool
    mistake: str | None
    message: str
    #: The probe input shown in the message, e.g. ``(2, 4)``; None when the check passed.
    example: tuple | None = None

    def __str__(self) -> str:
        return self.message

    __repr__ = __str__


# ---------------------------------------------------------------------------
# Running the learner's function safely


@dataclass
class _Outcome:
    """One call of the learner's function: a vector, or the reason there is none."""

    kind: str  # "vector", "not-implemented", "raised", "wrong-shape", "not-finite"
    vector: np.ndarray | None = None
    detail: str = ""  # exception text, or a description of what came back
    what: str = ""  # wrong-shape: a short name of what came back, for the first sentence
    hint: str = ""  # wrong-shape: a hint that fits what came back


def _short(value, limit: int = 70) -> str:
    try:
        text = repr(value)
    except Exception:  # a learner's object with a broken __repr__
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exception_text(exc: BaseException) -> str:
    try:
        detail = str(exc)
    except Exception:
        detail = ""
    detail = detail if len(detail) <= 200 else detail[:197] + "..."
    if isinstance(exc, SystemExit) and detail in ("", "None"):
        detail = "the function called exit()"
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _shape_problem(what: str, detail: str, hint: str = "") -> _Outcome:
    return _Outcome("wrong-shape", detail=detail, what=what, hint=hint)


def _as_vector(result, length: int) -> _Outcome:
    """Turn whatever came back into a float vector of ``length``, or describe why it is not one."""
    if result is None:
        return _shape_problem("None", "None", "Is the return statement missing?")
    if isinstance(result, (str, bytes)):
        return _shape_problem("text", f"the text {_short(result)}", "Return the numbers themselves, not their text.")
    if isinstance(result, Iterator):
        return _shape_problem(f"a {type(result).__name__}", f"a {type(result).__name__}",
                              "Return a list: wrap the generator in list(...).")
    if isinstance(result, (dict, set, frozenset)):
        return _shape_problem(f"a {type(result).__name__}", _short(result),
                              "Return a list, tuple or 1-D numpy array, in index order.")
    try:
        count = len(result)
    except Exception:
        count = None
    if count is not None and count > MAX_ITEMS:
        return _shape_problem(f"{count} items", f"a sequence of {count} items")
    try:
        raw = np.asarray(result)
        if raw.size > MAX_ITEMS:
            return _shape_problem(f"an array of shape {raw.shape}", f"an array of shape {raw.shape}")
        if np.iscomplexobj(raw):
            return _shape_problem("complex numbers", _short(result), "The elements must be real numbers (floats).")
        if raw.dtype == object and any(item is None for item in raw.ravel()):
            return _shape_problem("a list containing None", _short(result),
                                  "Every element must be a number; is a return missing in a helper?")
        arr = raw.astype(np.float64)
    except Exception:
        return _shape_problem(f"a {type(result).__name__} that is not a sequence of numbers", _short(result))
    if arr.shape != (length,):
        if arr.ndim == 1:
            n = arr.shape[0]
            shown = _format(arr) if n <= 12 else _format(arr[:12])[:-1] + ", …]"
            return _shape_problem(f"{n} number{'s' if n != 1 else ''}", f"{n} number{'s' if n != 1 else ''} {shown}")
        if arr.ndim == 0:
            return _shape_problem("a single number", f"the single number {_short(result)}")
        return _shape_problem(f"an array of shape {arr.shape}", f"an array of shape {arr.shape} {_short(result)}",
                              "Return one flat sequence [e0, e1, e2, …], not a list of pairs or rows.")
    if not np.isfinite(arr).all():
        return _Outcome("not-finite", vector=arr, detail=_format(arr))
    return _Outcome("vector", vector=arr)


def _call(fn, args, length: int) -> _Outcome:
    """Call the learner's function; its prints and warnings are swallowed, its exceptions recorded."""
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings(), \
                np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = fn(*args)
            return _as_vector(result, length)
    except NotImplementedError as exc:
        return _Outcome("not-implemented", detail=_exception_text(exc))
    except (Exception, SystemExit) as exc:  # whatever the learner's code raises becomes a message
        return _Outcome("raised", detail=_exception_text(exc))


# ---------------------------------------------------------------------------
# The buggy versions, written out per element (independently of core.py)


def _divisor(k: int, D: int, power: float = 2.0) -> float:
    # 10000^(power·k/D): power 2 is right; 1 is the k/D mistake
    return BASE ** (power * k / D)


def _sinusoid_variant(pos: int, D: int, angle_of, swapped: bool = False) -> np.ndarray:
    """PE(pos) where element i uses ``angle_of(i)``; even i → sin, odd i → cos (the other way if swapped)."""
    out = []
    for i in range(D):
        angle = angle_of(i)
        even = i % 2 == 0
        out.append(math.sin(angle) if even != swapped else math.cos(angle))
    return np.array(out)


def _sinusoid_angles(mode: str, pos: int, D: int):
    if mode == "pair":  # pos / 10000^(2k/D), k = i // 2
        return lambda i: pos / _divisor(i // 2, D)
    if mode == "element-2i":  # pos / 10000^(2i/D)
        return lambda i: pos / BASE ** (2 * i / D)
    if mode == "element-i":  # pos / 10000^(i/D)
        return lambda i: pos / BASE ** (i / D)
    if mode == "k-over-d":  # pos / 10000^(k/D)
        return lambda i: pos / _divisor(i // 2, D, power=1.0)
    if mode == "multiply":  # pos · 10000^(2k/D)
        return lambda i: pos * _divisor(i // 2, D)
    raise ValueError(mode)


def _sinusoid_blocks(pos: int, D: int) -> np.ndarray:
    """All sines first, then all cosines (the tensor2tensor layout)."""
    half = (D + 1) // 2
    sines = [math.sin(pos / _divisor(k, D)) for k in range(half)]
    cosines = [math.cos(pos / _divisor(k, D)) for k in range(D // 2)]
    return np.array(sines + cosines)


def _rotate_pair(a: float, b: float, theta: float, form: str) -> tuple[float, float]:
    c, s = math.cos(theta), math.sin(theta)
    if form == "right":  # (a cos θ − b sin θ, a sin θ + b cos θ)
        return a * c - b * s, a * s + b * c
    if form == "sign":  # (a cos θ + b sin θ, −a sin θ + b cos θ): turns clockwise
        return a * c + b * s, -a * s + b * c
    if form == "swapped":  # (a sin θ − b cos θ, a cos θ + b sin θ): cos and sin trade places
        return a * s - b * c, a * c + b * s
    if form == "in-place":  # a overwritten first, then b computed from the new a
        new_a = a * c - b * s
        return new_a, new_a * s + b * c
    raise ValueError(form)


def _rope_variant(vec, pos: int, power: float = 2.0, pair_scale: int = 1, form: str = "right") -> np.ndarray:
    """rotate(vec, pos) with θ_k = pos / 10000^(power·pair_scale·k/D), D = len(vec), each pair turned by ``form``."""
    D = len(vec)
    out = list(map(float, vec))
    for k in range(D // 2):
        # θ_k = pos / 10000^(power·pair_scale·k/D): power 2, scale 1 is right; scale 2 is i = 2k; power 1 is k/D
        theta = pos / BASE ** (power * pair_scale * k / D)
        out[2 * k], out[2 * k + 1] = _rotate_pair(vec[2 * k], vec[2 * k + 1], theta, form)
    return np.array(out)


def _rope_half_split(vec, pos: int) -> np.ndarray:
    """Pairs (vec[k], vec[k + D/2]) instead of neighbours (the GPT-NeoX layout)."""
    D = len(vec)
    half = D // 2
    out = list(map(float, vec))
    for k in range(half):
        theta = pos / _divisor(k, D)
        out[k], out[k + half] = _rotate_pair(vec[k], vec[k + half], theta, "right")
    return np.array(out)


@dataclass(frozen=True)
class _Variant:
    """A buggy version of the formula and the mistake(s) it stands for."""

    codes: tuple[str, ...]  # the first is reported; the rest are mentioned
    sentence: str  # names the mistake, for "You …"
    hint: str
    compute: Callable = field(compare=False)
    #: The version with only the first mistake: the example shown is one where that mistake shows.
    primary: Callable | None = field(default=None, compare=False)


# ---------------------------------------------------------------------------
# The texts


_SIN_FORMULA = "element 2k is sin(pos / 10000^(2k/D)) and element 2k+1 is cos of the same angle"
_ROT_FORMULA = ("each pair (a, b) = (vec[2k], vec[2k+1]) becomes (a·cos θ − b·sin θ, a·sin θ + b·cos θ) "
                "with θ = pos / 10000^(2k/D) and D = len(vec)")

_SENTENCES = {
    "element-index": "You use the element index i in the exponent where the pair index k = i // 2 belongs, "
                     "so the sin and cos of a pair no longer share one angle.",
    "element-index-i": "You use i/D with the element index i in the exponent where 2k/D with the pair index "
                       "k = i // 2 belongs, so the sin and cos of a pair no longer share one angle.",
    "sin-cos-swapped": "You put cos at the even indices and sin at the odd ones; it is the other way round.",
    "exponent-k-over-d": "Your exponent is k/D, but it must be 2k/D, so every pair after the first turns too fast.",
}
_HINTS = {
    "element-index": "Compute one angle per pair, angle = pos / 10000 ** (2 * k / D) with k = i // 2, "
                     "and use it for both elements 2k and 2k + 1.",
    "sin-cos-swapped": "Even index → sin, odd index → cos: PE(0) must start 0, 1, 0, 1.",
    "exponent-k-over-d": "Write the divisor as 10000 ** (2 * k / D), with the factor 2.",
}
_ALSO = {
    "sin-cos-swapped": "Sin and cos are also swapped.",
    "rotation-sign": "The signs of the sin terms are also swapped: the new second coordinate is a·sin θ + b·cos θ.",
}


def _sinusoid_variants() -> list[_Variant]:
    angle_modes = [
        ("element-2i", "element-index", _SENTENCES["element-index"], _HINTS["element-index"]),
        ("element-i", "element-index", _SENTENCES["element-index-i"], _HINTS["element-index"]),
        ("k-over-d", "exponent-k-over-d", _SENTENCES["exponent-k-over-d"], _HINTS["exponent-k-over-d"]),
    ]
    variants = [
        _Variant(("sin-cos-swapped",), _SENTENCES["sin-cos-swapped"], _HINTS["sin-cos-swapped"],
                 lambda pos, D: _sinusoid_variant(pos, D, _sinusoid_angles("pair", pos, D), swapped=True)),
    ]
    for mode, code, sentence, hint in angle_modes:
        for swapped in (False, True):
            variants.append(_Variant(
                (code, "sin-cos-swapped") if swapped else (code,), sentence, hint,
                lambda pos, D, mode=mode, swapped=swapped: _sinusoid_variant(
                    pos, D, _sinusoid_angles(mode, pos, D), swapped=swapped),
                primary=lambda pos, D, mode=mode: _sinusoid_variant(pos, D, _sinusoid_angles(mode, pos, D)),
            ))
    variants += [
        _Variant(("wrong",), "You multiply pos by 10000^(2k/D) where you must divide by it.",
                 "The angle is pos / 10000 ** (2 * k / D): slower pairs have bigger divisors.",
                 lambda pos, D: _sinusoid_variant(pos, D, _sinusoid_angles("multiply", pos, D))),
        _Variant(("wrong",), "You put all the sines first and all the cosines after them; this lesson "
                 "interleaves them.",
                 "Element 2k is the sine and element 2k + 1 the cosine of pair k: [sin, cos, sin, cos, …].",
                 _sinusoid_blocks),
    ]
    return variants


def _rope_variants() -> list[_Variant]:
    forms = {
        "sign": ("rotation-sign", "Your rotation turns the wrong way: the signs of the sin terms are swapped.",
                 "(a, b) → (a·cos θ − b·sin θ, a·sin θ + b·cos θ): rotating (1, 0) by a small positive angle "
                 "must raise the second coordinate."),
        "swapped": ("sin-cos-swapped", "You swapped cos and sin in the rotation.",
                    "The new a is a·cos θ − b·sin θ, so at pos = 0 the vector stays unchanged."),
    }
    angles = {
        "element-index": ("element-index",
                          "You use the element index i = 2k in the exponent where the pair index k belongs, "
                          "so every pair after the first turns too slowly.",
                          "Number the pairs k = 0, 1, 2, …: θ = pos / 10000 ** (2 * k / D) "
                          "(if i runs over 0, 2, 4, …, the exponent is i / D)."),
        "k-over-d": ("exponent-k-over-d", _SENTENCES["exponent-k-over-d"], _HINTS["exponent-k-over-d"]),
    }
    variants = []
    for form, (code, sentence, hint) in forms.items():
        variants.append(_Variant((code,), sentence, hint, lambda vec, pos, form=form: _rope_variant(vec, pos, form=form)))
    for angle, (code, sentence, hint) in angles.items():
        power, scale = (2.0, 2) if angle == "element-index" else (1.0, 1)
        for form in ("right", "sign", "swapped"):
            codes = (code,) if form == "right" else (code, forms[form][0])
            variants.append(_Variant(
                codes, sentence, hint,
                lambda vec, pos, p=power, s=scale, f=form: _rope_variant(vec, pos, power=p, pair_scale=s, form=f),
                primary=lambda vec, pos, p=power, s=scale: _rope_variant(vec, pos, power=p, pair_scale=s),
            ))
    variants += [
        _Variant(("wrong",), "You overwrite a before computing the new b, so b is rotated with the new a "
                 "instead of the old one.",
                 "Read both old values first: a, b = vec[2k], vec[2k+1], then compute both new values from them.",
                 lambda vec, pos: _rope_variant(vec, pos, form="in-place")),
        _Variant(("wrong",), "You pair vec[k] with vec[k + D/2] (the half-split layout of GPT-NeoX); this "
                 "lesson pairs neighbours, vec[2k] with vec[2k+1].",
                 "Take a = vec[2k] and b = vec[2k + 1] for pair k.",
                 _rope_half_split),
    ]
    return variants


# ---------------------------------------------------------------------------
# Formatting


def _format(values, decimals: int = 4) -> str:
    parts = []
    for value in np.asarray(values, dtype=np.float64).ravel():
        text = f"{value:.{decimals}f}"
        parts.append(text[1:] if text.startswith("-") and float(text) == 0 else text)
    return "[" + ", ".join(parts) + "]"


def _format_pair(expected: np.ndarray, received: np.ndarray) -> tuple[str, str]:
    """Both vectors with enough decimals (4 to 8) that the elements which differ look different."""
    for decimals in range(4, 9):
        a, b = _format(expected, decimals), _format(received, decimals)
        if a != b:
            return a, b
    return _format(expected, 8), _format(received, 8)


def _differing(expected: np.ndarray, received: np.ndarray) -> str:
    idx = [int(i) for i in np.flatnonzero(~np.isclose(received, expected, rtol=0, atol=ATOL))]
    if not idx:
        return ""
    if len(idx) == 1:
        return f"element {idx[0]} differs"
    listed = ", ".join(map(str, idx[:-1])) + f" and {idx[-1]}"
    return f"elements {listed} differ"


def _call_text(name: str, probe) -> str:
    """How the learner would write the call, e.g. ``rotate([1, 0], 1)``."""
    first, second = probe
    if isinstance(first, tuple):
        vec = ", ".join(f"{x:g}" for x in first)
        return f"{name}([{vec}], {second})"
    return f"{name}({first}, {second})"


def _message(mark: str, name: str, code: str | None, sentence: str, hint: str = "", call: str | None = None,
             expected=None, outcome: _Outcome | None = None, notes: Iterable[str] = ()) -> str:
    head = f"{mark} {name} [{code}]: {sentence}" if code else f"{mark} {name}: {sentence}"
    lines = [head]
    lines += [f"  {note}" for note in notes]
    if hint:
        lines.append(f"  Hint: {hint}")
    if call is not None:
        lines.append(f"  For example, {call}")
        if outcome is not None and outcome.kind in ("vector", "not-finite"):
            exp_text, got_text = _format_pair(expected, outcome.vector)
            lines.append(f"    expected: {exp_text}")
            diff = _differing(expected, outcome.vector)
            lines.append(f"    received: {got_text}" + (f"   ({diff})" if diff else ""))
        else:
            lines.append(f"    expected: {_format(expected)}")
            if outcome is not None:
                received = outcome.detail if outcome.kind == "wrong-shape" else f"it raised {outcome.detail}"
                lines.append(f"    received: {received}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# The diagnosis



#: The kinds of failure a checker names when none of the common mistakes explains the answers, most specific first.
_FAILURE_KINDS = ("not-implemented", "raised", "wrong-shape", "not-finite")


def _first_failure(kinds, right) -> tuple[str, int]:
    """The most specific failure among the calls and the first call that shows it.

    ``kinds`` holds one kind per probe call ("not-implemented", "raised",
    "wrong-shape", "not-finite", or anything else for an answer that came
    back); ``right`` says which answers are right. With none of the failure
    kinds, the answer is ("wrong", the first wrong call).

    >>> _first_failure(["vector", "raised", "not-implemented"], [True, False, False])
    ('not-implemented', 2)
    >>> _first_failure(["vector", "vector"], [True, False])
    ('wrong', 1)
    """
    for kind in _FAILURE_KINDS:
        if kind in kinds:
            return kind, list(kinds).index(kind)
    return "wrong", list(right).index(False)


def _diagnose(name: str, fn, probes, length, reference, variants, model_dim_family, base_family,
              texts: dict) -> CheckResult:
    """Run ``fn`` on every probe and name the most specific mistake that explains its answers."""
    if not callable(fn):
        return CheckResult(False, "raised",
                           f"✗ {name} [raised]: The check needs the function itself, not {_short(fn)}.\n"
                           f"  Hint: Write {texts['check']}({name}), without parentheses after {name}.")
    outcomes = [_call(fn, _args(p), length(p)) for p in probes]
    expected = [reference(p) for p in probes]
    right = [_matches(o, e) for o, e in zip(outcomes, expected, strict=True)]
    if all(right):
        return CheckResult(True, None, f"✓ {name} passed all {len(probes)} checks, odd D included. "
                                       f"For example, {_call_text(name, probes[0])} = {_format(expected[0])}.")
    even = [i for i, p in enumerate(probes) if length(p) % 2 == 0]
    odd = [i for i, p in enumerate(probes) if length(p) % 2 == 1]

    def result(code, sentence, hint, index, notes=()):
        probe = probes[index]
        return CheckResult(False, code, _message("✗", name, code, sentence, hint, _call_text(name, probe),
                                                 expected[index], outcomes[index], notes), probe)

    # Right for every even D: the odd ones are the only problem.
    if all(right[i] for i in even):
        index = next(i for i in odd if not right[i])
        return result("odd-dim", texts["odd-dim"], texts["odd-hint"], index)

    # A buggy version that reproduces every even-D answer names the mistake.
    def reproduces(compute, indices) -> bool:
        return all(_matches(outcomes[i], compute(*_args(probes[i]))) for i in indices)

    found = next((v for v in variants if reproduces(v.compute, even)), None)
    if found is None:
        found = _find_model_dim(outcomes, probes, even, model_dim_family, texts["model-dim"])
    if found is None:
        found = _find_base(outcomes, probes, even, base_family, texts["base-probe"])
    if found is None:
        # Right for exactly one length with a second pair (D ≥ 4), wrong for the others: D came from elsewhere.
        lengths = sorted({length(p) for p in probes if length(p) >= 4})
        right_for = [n for n in lengths if all(right[i] for i, p in enumerate(probes) if length(p) == n)]
        if len(right_for) == 1:
            sentence, hint = texts["model-dim"](right_for[0])
            index = next(i for i in even if not right[i] and length(probes[i]) >= 4)
            return result("model-dim", sentence, hint, index)
    if found is not None:
        notes = [_ALSO[c] for c in found.codes[1:]]
        if not reproduces(found.compute, odd):
            notes.append("Odd D goes wrong in yet another way. " + texts["odd-hint"])
        # The example: the first even probe where the main mistake shows.
        primary = found.primary or found.compute
        wrong_even = [i for i in even if not right[i]]
        index = next((i for i in wrong_even if not np.allclose(primary(*_args(probes[i])), expected[i],
                                                                 rtol=0, atol=ATOL)), wrong_even[0])
        return result(found.codes[0], found.sentence, found.hint, index, notes)

    # Otherwise the most specific kind of failure, shown on its first probe.
    kind, index = _first_failure([o.kind for o in outcomes], right)
    outcome = outcomes[index]
    if kind == "not-implemented":
        return result(kind, "Not implemented yet: it still raises NotImplementedError.",
                      f"Replace the raise line with your code: {texts['formula']}.", index)
    if kind == "raised":
        return result(kind, f"It raised {outcome.detail}.",
                      f"Run {_call_text(name, probes[index])} in a cell of its own to see the traceback.", index)
    if kind == "wrong-shape":
        return result(kind, f"It returned {outcome.what} where {texts['length']} = {length(probes[index])} "
                            "numbers belong.",
                      outcome.hint or "Return a list, tuple or 1-D numpy array of floats.", index)
    if kind == "not-finite":
        return result(kind, "It returned NaN or infinity.",
                      "sin and cos stay between −1 and 1; look for a division by zero or an overflow.", index)
    return result("wrong", "Its values are wrong in a way none of the common mistakes explains.",
                  f"Check each element against the formula: {texts['formula']}.", index)


def _find_model_dim(outcomes, probes, even, family, text) -> _Variant | None:
    """model-dim: the one fixed D (1 … 4096) that reproduces every even-D answer, if there is one.

    ``family`` lists (extra codes, batch function); the batch function computes
    the answer for many fixed Ds at once, one row each.
    """
    if any(outcomes[i].kind != "vector" for i in even):
        return None
    for extra, batch in family:
        candidates = _MODEL_DIMS
        for i in even:
            rows = batch(*_args(probes[i]), candidates)
            candidates = candidates[np.all(np.abs(rows - outcomes[i].vector) <= ATOL, axis=1)]
            if candidates.size == 0:
                break
        if candidates.size:
            m = int(candidates[0])
            sentence, hint = text(m)
            plain = family[0][1]
            return _Variant(("model-dim",) + extra, sentence, hint,
                            compute=lambda *args, batch=batch, m=m: batch(*args, [m])[0],
                            primary=lambda *args, plain=plain, m=m: plain(*args, [m])[0])
    return None


def _base_text(base: float) -> str:
    """A base as a learner typed it: 1,000 for 1000.0000000002, else six significant digits.

    >>> _base_text(1000.0000000002), _base_text(12345.6789)
    ('1,000', '12,345.7')
    """
    whole = round(base)
    if whole and abs(base - whole) <= 1e-6 * base:
        return f"{whole:,}"
    return f"{base:,.6g}"


def _find_base(outcomes, probes, even, family, anchor) -> _Variant | None:
    """base: the one other base that reproduces every even-D answer, if there is one.

    Pair 1 of the ``anchor`` probe (pos = 2, D = 4) turns by θ_1 = 2/√base, so
    its angle in the learner's answer gives the base the learner used:
    base = (2/θ_1)². ``family`` lists (extra codes, batch function over bases,
    the answer's pair 1 read as (cos θ_1, sin θ_1)); the base is reported
    only if the batch function with it reproduces every even-D answer.
    """
    if any(outcomes[i].kind != "vector" for i in even):
        return None
    answer = outcomes[anchor].vector
    for extra, batch, cos_sin in family:
        cos_t, sin_t = cos_sin(answer)
        theta = math.atan2(sin_t, cos_t)
        if theta <= 0:
            continue
        base = (2.0 / theta) ** 2  # θ_1 = pos / base^(2·1/4) with pos = 2
        if math.isclose(base, BASE, rel_tol=1e-6):
            continue  # the right base: some other mistake
        if all(np.all(np.abs(batch(*_args(probes[i]), [base])[0] - outcomes[i].vector) <= ATOL) for i in even):
            text = _base_text(base)
            plain = family[0][1]
            return _Variant(
                ("base",) + extra,
                f"Your base is {text}, not 10000, so every pair after the first turns at the wrong speed.",
                "Check the base: the divisor is 10000 ** (2 * k / D), ten thousand (10000, 1e4 or 10_000). "
                "Pair 0 never shows it: its divisor is 1 whatever the base.",
                compute=lambda *args, batch=batch, base=base: batch(*args, [base])[0],
                primary=lambda *args, plain=plain, base=base: plain(*args, [base])[0])
    return None


def _matches(outcome: _Outcome, expected: np.ndarray) -> bool:
    return outcome.kind == "vector" and bool(np.allclose(outcome.vector, expected, rtol=0, atol=ATOL))


def _args(probe) -> tuple:
    first, second = probe
    if isinstance(first, tuple):  # rotate(vec, pos): a fresh array each call, as the interpreter passes
        return (np.array(first, dtype=np.float64), second)
    return (first, second)


# The model-dim versions, vectorised over candidate Ds (one row each), for the search.


def _sinusoid_model_dim(pos, D, model_dims, swapped=False, bases=BASE):
    model_dims = np.asarray(model_dims, dtype=np.float64)[:, None]
    bases = np.asarray(bases, dtype=np.float64).reshape(-1, 1)
    i = np.arange(D)
    # angle_i = pos / base^(2k/D_model), k = i // 2
    angle = pos / bases ** (2.0 * (i // 2) / model_dims)
    return np.where((i % 2 == 0) != swapped, np.sin(angle), np.cos(angle))


def _rope_model_dim(vec, pos, model_dims, form="right", bases=BASE):
    vec = np.asarray(vec, dtype=np.float64)
    model_dims = np.asarray(model_dims, dtype=np.float64)[:, None]
    bases = np.asarray(bases, dtype=np.float64).reshape(-1, 1)
    D = len(vec)
    k = np.arange(D // 2)
    # θ_k = pos / base^(2k/D_model)
    theta = pos / bases ** (2.0 * k / model_dims)
    c, s = np.cos(theta), np.sin(theta)
    a, b = vec[0 : 2 * (D // 2) : 2], vec[1 : 2 * (D // 2) : 2]
    new_a, new_b = {"right": (a * c - b * s, a * s + b * c),
                    "sign": (a * c + b * s, -a * s + b * c),
                    "swapped": (a * s - b * c, a * c + b * s)}[form]
    out = np.tile(vec, (theta.shape[0], 1))
    out[:, 0 : 2 * (D // 2) : 2] = new_a
    out[:, 1 : 2 * (D // 2) : 2] = new_b
    return out


def check_sinusoid(fn) -> CheckResult:
    """Check a learner's ``sinusoid(pos, D)`` and name the mistake, if any.

    PE(pos, 2k) = sin(pos / 10000^(2k/D)) and PE(pos, 2k+1) = cos(pos / 10000^(2k/D)).
    Taught in notebooks/05-exercise.ipynb.

    >>> def sinusoid(pos, D):     # right: one angle per pair k = i // 2
    ...     return [(math.sin if i % 2 == 0 else math.cos)(pos / 10000 ** (2 * (i // 2) / D)) for i in range(D)]
    >>> check_sinusoid(sinusoid).passed
    True
    >>> def sinusoid(pos, D):     # i instead of k = i // 2 in the exponent
    ...     return [(math.sin if i % 2 == 0 else math.cos)(pos / 10000 ** (2 * i / D)) for i in range(D)]
    >>> check_sinusoid(sinusoid).mistake
    'element-index'
    """
    return _diagnose(
        "sinusoid", fn, SINUSOID_PROBES, length=lambda p: p[1],
        reference=lambda p: _reference_sinusoidal(p[0], p[1]),
        variants=_sinusoid_variants(),
        model_dim_family=[((), _sinusoid_model_dim),
                          (("sin-cos-swapped",), lambda pos, D, dims: _sinusoid_model_dim(pos, D, dims, True))],
        # another base, for D = len(vec) itself; pair 1 of PE(2) with D = 4 read as (cos θ_1, sin θ_1)
        base_family=[((), lambda pos, D, bases: _sinusoid_model_dim(pos, D, [D], bases=bases), lambda v: (v[3], v[2])),
                     (("sin-cos-swapped",), lambda pos, D, bases: _sinusoid_model_dim(pos, D, [D], True, bases),
                      lambda v: (v[2], v[3]))],
        texts={
            "check": "check_sinusoid",
            "base-probe": SINUSOID_PROBES.index((2, 4)),
            "length": "D",
            "formula": _SIN_FORMULA,
            "odd-dim": "Right for every even D but wrong for odd D.",
            "odd-hint": "With an odd D the last element is the sine of a pair that has lost its cosine, "
                        "so return D numbers that end with a sine.",
            "model-dim": lambda m: (
                f"You use a fixed D = {m} instead of the D argument, so the answer is right only for D = {m}.",
                "Use the D your function receives: angle = pos / 10000 ** (2 * k / D)."),
        },
    )


def check_rope(fn) -> CheckResult:
    """Check a learner's ``rotate(vec, pos)`` and name the mistake, if any.

    (a, b) → (a·cos θ − b·sin θ, a·sin θ + b·cos θ) for each pair (vec[2k], vec[2k+1]),
    θ = pos / 10000^(2k/D) with D = len(vec); an odd D's last element passes through.
    Taught in notebooks/05-exercise.ipynb.

    >>> def rotate(vec, pos):    # right
    ...     out = list(vec)
    ...     for k in range(len(vec) // 2):
    ...         t = pos / 10000 ** (2 * k / len(vec))
    ...         a, b = vec[2 * k], vec[2 * k + 1]
    ...         out[2 * k], out[2 * k + 1] = a * math.cos(t) - b * math.sin(t), a * math.sin(t) + b * math.cos(t)
    ...     return out
    >>> check_rope(rotate).passed
    True
    >>> check_rope(lambda vec, pos: [v for v in vec]).mistake   # no rotation at all
    'wrong'
    """
    return _diagnose(
        "rotate", fn, ROPE_PROBES, length=lambda p: len(p[0]),
        reference=lambda p: _reference_rope(np.array(p[0]), p[1]),
        variants=_rope_variants(),
        model_dim_family=[((), _rope_model_dim)] + [
            ((code,), lambda vec, pos, dims, form=form: _rope_model_dim(vec, pos, dims, form))
            for form, code in (("sign", "rotation-sign"), ("swapped", "sin-cos-swapped"))],
        # another base; pair 1 of rotate([1, 0, 1, 0], 2) read as (cos θ_1, sin θ_1) in each form
        base_family=[
            ((code,) if code else (), lambda vec, pos, bases, form=form: _rope_model_dim(vec, pos, [len(vec)], form, bases),
             cos_sin)
            for form, code, cos_sin in (("right", "", lambda v: (v[2], v[3])),
                                        ("sign", "rotation-sign", lambda v: (v[2], -v[3])),
                                        ("swapped", "sin-cos-swapped", lambda v: (v[3], v[2])))],
        texts={
            "check": "check_rope",
            "base-probe": ROPE_PROBES.index(((1.0, 0.0, 1.0, 0.0), 2)),
            "length": "len(vec)",
            "formula": _ROT_FORMULA,
            "odd-dim": "Right for every vector of even length D but wrong for odd D.",
            "odd-hint": "With an odd D the last element has no partner: return it unchanged.",
            "model-dim": lambda m: (
                f"Your rotation takes D = {m} from somewhere other than the vector, so it is right only for "
                f"vectors of length {m}.",
                "Use the length of the vector you rotate: D = len(vec), since every pair of vec is rotated here."),
        },
    )


# ---------------------------------------------------------------------------
# Running a command script with the learner's functions


@dataclass
class ScriptRow:
    """One command line with the learner's output and the expected one."""

    line: str
    yours: str
    expected: str

    @property
    def same(self) -> bool:
        return self.yours == self.expected


@dataclass
class ScriptComparison:
    """Per command: the learner's output next to the expected one. Prints as that table."""

    rows: list[ScriptRow]

    @property
    def differing(self) -> int:
        return sum(not row.same for row in self.rows)

    def __str__(self) -> str:
        lines = []
        for row in self.rows:
            lines.append(f"{'✓' if row.same else '✗'} {row.line}")
            lines.append(f"    yours     {row.yours}")
            lines.append(f"    expected  {row.expected}")
        total = len(self.rows)
        if self.differing:
            lines.append(f"{self.differing} of {total} lines differ (marked ✗).")
        else:
            lines.append(f"All {total} lines match.")
        return "\n".join(lines)

    __repr__ = __str__


def _run_line(line: str, pe, rope) -> str:
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings(), \
                np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return evaluate(line, pe, rope)
    except (Exception, SystemExit) as exc:  # CommandError, or anything odd a learner's object does
        text = str(exc) if type(exc).__name__ == "CommandError" else _exception_text(exc)
        return f"error: {text}"


def compare_script(script: str | Iterable[str], sinusoid, rotate) -> ScriptComparison:
    """Run PE / ROPE / DOT lines with the learner's functions and with the reference, side by side.

    Blank lines and ``#`` comments are skipped. DOT uses ``rotate``, so a wrong
    rotation shows up in the DOT lines as well. Taught in notebooks/05-exercise.ipynb.

    >>> def broken(vec, pos):            # turns the wrong way: (cos θ, −sin θ)
    ...     return [vec[0] * math.cos(pos) + vec[1] * math.sin(pos), -vec[0] * math.sin(pos) + vec[1] * math.cos(pos)]
    >>> print(compare_script("ROPE 1 1 0\\nDOT 5 3 1 0 1 0\\nDOT 5 3 1 0 0 1", None, broken))
    ✗ ROPE 1 1 0
        yours     0.5403 -0.8415
        expected  0.5403 0.8415
    ✓ DOT 5 3 1 0 1 0
        yours     -0.4161
        expected  -0.4161
    ✗ DOT 5 3 1 0 0 1
        yours     -0.9093
        expected  0.9093
    2 of 3 lines differ (marked ✗).
    """
    lines = script.splitlines() if isinstance(script, str) else list(script)
    rows = []
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        rows.append(ScriptRow(line, _run_line(line, sinusoid, rotate),
                              _run_line(line, _reference_sinusoidal, _reference_rope)))
    return ScriptComparison(rows)


# ===========================================================================
# Notebooks 07 and 08: the exercises on layouts (hf_to_meta) and on ALiBi slopes (alibi_slopes_for).
# Taught in notebooks/07-conventions.ipynb and notebooks/08-other-schemes.ipynb; everything below
# this line belongs to those two exercises.
# ===========================================================================

__all__ += ["MISTAKES_07", "MISTAKES_08", "check_hf_to_meta", "check_alibi_slopes"]

#: Mistake codes of check_hf_to_meta (notebook 07), most specific first.
MISTAKES_07 = (
    "not-implemented",
    "forward-permutation",
    "one-head",
    "columns",
    "unchanged",
    "wrong-shape",
    "raised",
    "wrong",
)
#: Mistake codes of check_alibi_slopes (notebook 08), most specific first.
MISTAKES_08 = (
    "not-implemented",
    "power-of-two-formula",
    "off-by-one",
    "first-of-2c",
    "odd-of-2c",
    "sorted",
    "wrong-shape",
    "not-finite",
    "raised",
    "wrong",
)

#: (n_heads, head_dim, d_model) for hf_to_meta: one head first, then several, then odd head counts and sizes.
#: d_model is even, so a permutation of the columns (a named mistake) can be told from no permutation at all.
HF_PROBES = ((1, 8, 4), (2, 8, 4), (1, 4, 2), (3, 4, 2), (2, 6, 6), (4, 8, 2), (1, 16, 2))
#: n for alibi_slopes_for: the powers of two first, then the others (12 is the one to get right).
ALIBI_PROBES = (1, 2, 4, 8, 16, 12, 6, 3, 5, 24, 20)


def _probe_weights(n_heads: int, head_dim: int, d_model: int) -> np.ndarray:
    """A weight matrix whose entries are all different, so every row and column can be told apart."""
    return np.arange(n_heads * head_dim * d_model, dtype=np.float64).reshape(n_heads * head_dim, d_model) + 1.0


def _meta_rows(n_heads: int, head_dim: int) -> list[int]:
    """Row order of P⁻¹ per head: Meta's row 2k + t is Hugging Face's row t·D/2 + k, head by head."""
    order = []
    for h in range(n_heads):
        for k in range(head_dim // 2):
            for t in (0, 1):
                order.append(h * head_dim + t * (head_dim // 2) + k)
    return order


def _hf_rows(n_heads: int, head_dim: int) -> list[int]:
    """Row order of P per head (the conversion script's permute): HF's row t·D/2 + k is Meta's row 2k + t."""
    order = []
    for h in range(n_heads):
        for t in (0, 1):
            for k in range(head_dim // 2):
                order.append(h * head_dim + 2 * k + t)
    return order


def _hf_reference(probe) -> np.ndarray:
    n_heads, head_dim, d_model = probe
    return _probe_weights(*probe)[_meta_rows(n_heads, head_dim)]


def _hf_variants() -> list[_Variant]:
    def forward(probe):  # the conversion script's own permute applied again: P instead of P⁻¹
        n_heads, head_dim, _ = probe
        return _probe_weights(*probe)[_hf_rows(n_heads, head_dim)]

    def one_head(probe):  # all rows treated as one head of size n_heads·head_dim
        n_heads, head_dim, _ = probe
        return _probe_weights(*probe)[_meta_rows(1, n_heads * head_dim)]

    def one_head_forward(probe):
        n_heads, head_dim, _ = probe
        return _probe_weights(*probe)[_hf_rows(1, n_heads * head_dim)]

    def columns(probe):  # the permutation applied to the columns (the input side) instead of the rows
        w = _probe_weights(*probe)
        return w[:, _meta_rows(1, w.shape[1])]

    def unchanged(probe):
        return _probe_weights(*probe)

    return [
        _Variant(("unchanged",), "You returned the weights unchanged.",
                 "Within each head, Hugging Face's row t·D/2 + k must go back to Meta's row 2k + t.", unchanged),
        _Variant(("forward-permutation",), "You applied the conversion script's permute (P) again; going back "
                 "needs its inverse P⁻¹, which differs from P once a head has more than two pairs.",
                 "P sends row 2k + t to row t·D/2 + k; P⁻¹ sends row t·D/2 + k back to row 2k + t: "
                 "reshape each head as (2, D/2) and transpose to (D/2, 2).", forward),
        _Variant(("one-head",), "You permuted all the rows as one block; the permutation works head by head.",
                 "Reshape to (n_heads, 2, head_dim // 2, d_model) first, so each head is permuted on its own.",
                 one_head),
        _Variant(("one-head", "forward-permutation"), "You permuted all the rows as one block; the permutation "
                 "works head by head.",
                 "Reshape to (n_heads, 2, head_dim // 2, d_model) first, so each head is permuted on its own.",
                 one_head_forward, primary=one_head),
        _Variant(("columns",), "You permuted the columns (the model dimension); the layout lives in the rows, "
                 "one per output element of q or k.", "Leave the columns alone and reorder the rows.", columns),
    ]


def _matrix_outcome(fn, probe) -> _Outcome:
    """Call fn(w, n_heads) on a fresh copy; describe what came back."""
    n_heads, head_dim, d_model = probe
    w = _probe_weights(*probe)
    shape = w.shape
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings(), \
                np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = fn(w.copy(), n_heads)
    except NotImplementedError as exc:
        return _Outcome("not-implemented", detail=_exception_text(exc))
    except (Exception, SystemExit) as exc:
        return _Outcome("raised", detail=_exception_text(exc))
    if result is None:
        return _shape_problem("None", "None", "Is the return statement missing?")
    try:
        arr = np.asarray(result, dtype=np.float64)
    except Exception:
        return _shape_problem(f"a {type(result).__name__}", _short(result),
                              f"Return a numpy array of shape {shape}.")
    if arr.shape != shape:
        return _shape_problem(f"an array of shape {arr.shape}", f"an array of shape {arr.shape}",
                              f"Return an array of the same shape as w, {shape}: only the row order changes.")
    if not np.isfinite(arr).all():
        return _Outcome("not-finite", vector=arr, detail="NaN or infinity")
    return _Outcome("vector", vector=arr)


def _rows_text(matrix: np.ndarray, limit: int = 8) -> str:
    """The first column, which names each row (probe weights are numbered row by row)."""
    column = np.asarray(matrix)[:, 0]
    shown = ", ".join(f"{value:g}" for value in column[:limit])
    return "[" + shown + (", …]" if len(column) > limit else "]")


def _diagnose_matrix(fn) -> CheckResult:
    name = "hf_to_meta"
    if not callable(fn):
        return CheckResult(False, "raised", f"✗ {name} [raised]: The check needs the function itself, not {_short(fn)}.\n"
                                            f"  Hint: Write check_hf_to_meta({name}), without parentheses after {name}.")
    outcomes = [_matrix_outcome(fn, p) for p in HF_PROBES]
    expected = [_hf_reference(p) for p in HF_PROBES]
    right = [o.kind == "vector" and np.array_equal(o.vector, e) for o, e in zip(outcomes, expected, strict=True)]
    if all(right):
        return CheckResult(True, None, f"✓ {name} passed all {len(HF_PROBES)} checks, several heads included. "
                                       "It undoes the conversion script's permute head by head.")

    def message(code, sentence, hint, index):
        n_heads, head_dim, d_model = HF_PROBES[index]
        lines = [f"✗ {name} [{code}]: {sentence}", f"  Hint: {hint}",
                 f"  For example, n_heads = {n_heads}, head_dim = {head_dim}, w of shape "
                 f"({n_heads * head_dim}, {d_model}) with row r starting at {d_model}·r + 1; the first column:",
                 f"    given:    {_rows_text(_probe_weights(*HF_PROBES[index]))}",
                 f"    expected: {_rows_text(expected[index])}"]
        outcome = outcomes[index]
        if outcome.kind == "vector":
            lines.append(f"    received: {_rows_text(outcome.vector)}")
        elif outcome.kind == "raised":
            lines.append(f"    received: it raised {outcome.detail}")
        elif outcome.kind != "not-implemented":
            lines.append(f"    received: {outcome.detail}")
        return CheckResult(False, code, "\n".join(lines), HF_PROBES[index])

    for variant in _hf_variants():
        answers = [variant.compute(p) for p in HF_PROBES]
        if all(o.kind == "vector" and np.array_equal(o.vector, a)
               for o, a in zip(outcomes, answers, strict=True)):
            primary = variant.primary or variant.compute
            index = next((i for i, p in enumerate(HF_PROBES) if not right[i]
                          and not np.array_equal(primary(p), expected[i])), right.index(False))
            return message(variant.codes[0], variant.sentence, variant.hint, index)
    kind, index = _first_failure([o.kind for o in outcomes], right)
    outcome = outcomes[index]
    if kind == "not-implemented":
        return message(kind, "Not implemented yet: it still raises NotImplementedError.",
                       "Replace the raise line with your code: within each head, Hugging Face's row "
                       "t·D/2 + k goes back to Meta's row 2k + t.", index)
    if kind == "raised":
        return message(kind, f"It raised {outcome.detail}.",
                       "Run it on a small w in a cell of its own to see the traceback.", index)
    if kind == "wrong-shape":
        return message(kind, f"It returned {outcome.what} where an array of the shape of w belongs.",
                       outcome.hint or "Return an array of the same shape as w.", index)
    if kind == "not-finite":
        return message("wrong", "It returned NaN or infinity.", "Only reorder the rows; no arithmetic is needed.",
                       index)
    return message("wrong", "Its rows are in an order none of the common mistakes explains.",
                   "Within each head, Hugging Face's row t·D/2 + k must go back to Meta's row 2k + t.", index)


def check_hf_to_meta(fn) -> CheckResult:
    """Check a learner's ``hf_to_meta(w, n_heads)``: the inverse of the Llama conversion script's permute.

    Within each head of size D, Meta's row 2k + t is Hugging Face's row t·D/2 + k
    (k = pair, t = 0 or 1). The function gets a (n_heads·D, d_model) query or key
    weight in Hugging Face's layout and must return Meta's. Taught in
    notebooks/07-conventions.ipynb.

    >>> def hf_to_meta(w, n_heads):    # right: per head, (2, D/2) -> (D/2, 2)
    ...     rows, cols = w.shape
    ...     return w.reshape(n_heads, 2, rows // n_heads // 2, cols).transpose(0, 2, 1, 3).reshape(rows, cols)
    >>> check_hf_to_meta(hf_to_meta).passed
    True
    >>> check_hf_to_meta(lambda w, n_heads: w).mistake
    'unchanged'
    """
    return _diagnose_matrix(fn)


def _alibi_reference(n: int) -> np.ndarray:
    """The paper's slopes, written out per head (independently of core.alibi_slopes)."""
    def power_of_two(count: int) -> list[float]:
        # m_h = 2^(−8(h+1)/count)
        return [2.0 ** (-8.0 * (h + 1) / count) for h in range(count)]

    c = 1
    while 2 * c <= n:
        c *= 2
    if c == n:
        return np.array(power_of_two(n))
    return np.array(power_of_two(c) + power_of_two(2 * c)[0::2][: n - c])


def _alibi_variants() -> list[_Variant]:
    def largest_power(n):
        c = 1
        while 2 * c <= n:
            c *= 2
        return c

    def naive(n):  # 2^(−8(h+1)/n) for every n
        return np.array([2.0 ** (-8.0 * (h + 1) / n) for h in range(n)])

    def off_by_one(n):  # 2^(−8h/n): starts at 1
        return np.array([2.0 ** (-8.0 * h / n) for h in range(n)])

    def off_by_one_rule(n):  # the c + every-other-of-2c rule, but with 2^(−8h/count) throughout
        c = largest_power(n)
        first = [2.0 ** (-8.0 * h / c) for h in range(c)]
        if c == n:
            return np.array(first)
        return np.array(first + [2.0 ** (-8.0 * h / (2 * c)) for h in range(2 * c)][0::2][: n - c])

    def extras(n, pick):
        c = largest_power(n)
        if c == n:
            return _alibi_reference(n)
        twice = [2.0 ** (-8.0 * (h + 1) / (2 * c)) for h in range(2 * c)]
        return np.array([2.0 ** (-8.0 * (h + 1) / c) for h in range(c)] + pick(twice)[: n - c])

    return [
        _Variant(("power-of-two-formula",), "You used the power-of-two formula 2^(−8(h+1)/n) for every n; it "
                 "only holds when n is a power of two.",
                 "For other n, take the c slopes of c, the largest power of two below n, then every other slope "
                 "of the 2c sequence: 2^(−0.5), 2^(−1.5), … for n = 12.", naive),
        _Variant(("off-by-one",), "Your exponents start at h = 0, so head 0 gets the slope 1; the first slope is "
                 "2^(−8/n).", "Use h + 1 in the exponent: m_h = 2^(−8(h+1)/n).", off_by_one_rule),
        _Variant(("off-by-one", "power-of-two-formula"), "Your exponents start at h = 0, so head 0 gets the slope 1; "
                 "the first slope is 2^(−8/n).", "Use h + 1 in the exponent: m_h = 2^(−8(h+1)/n).", off_by_one),
        _Variant(("first-of-2c",), "You took the first n − c slopes of the 2c sequence; the rule takes every "
                 "other one, starting with the first.",
                 "Slice the 2c sequence as [0::2][: n - c], so the extra slopes fall between the others.",
                 lambda n: extras(n, lambda s: s)),
        _Variant(("odd-of-2c",), "You took every other slope of the 2c sequence starting with the second, "
                 "which repeats slopes the first c heads already have.",
                 "Start at the first: [0::2], which gives 2^(−0.5), 2^(−1.5), … for n = 12.",
                 lambda n: extras(n, lambda s: s[1::2])),
        _Variant(("sorted",), "Your slopes are right but sorted; the heads keep the rule's order, so head c "
                 "(head 8 for n = 12) is the steepest.", "Return them in head order, without sorting.",
                 lambda n: np.sort(_alibi_reference(n))[::-1]),
    ]


def check_alibi_slopes(fn) -> CheckResult:
    """Check a learner's ``alibi_slopes_for(n)``: ALiBi's n head slopes in head order, as Press et al. define them.

    For a power of two n, m_h = 2^(−8(h+1)/n). For any other n: the c slopes of
    c, the largest power of two below n, then every other slope of the 2c
    sequence, the first n − c of them. Taught in notebooks/08-other-schemes.ipynb.

    >>> check_alibi_slopes(lambda n: [2 ** (-8 * (h + 1) / n) for h in range(n)]).mistake
    'power-of-two-formula'
    """
    name = "alibi_slopes_for"
    if not callable(fn):
        return CheckResult(False, "raised", f"✗ {name} [raised]: The check needs the function itself, not {_short(fn)}.\n"
                                            f"  Hint: Write check_alibi_slopes({name}), without parentheses after {name}.")
    outcomes = [_call(fn, (n,), n) for n in ALIBI_PROBES]
    expected = [_alibi_reference(n) for n in ALIBI_PROBES]
    right = [_matches(o, e) for o, e in zip(outcomes, expected, strict=True)]
    if all(right):
        return CheckResult(True, None, f"✓ {name} passed all {len(ALIBI_PROBES)} checks, n = 12 included. "
                                       f"For example, {name}(12)[8:] = {_format(expected[5][8:])}.")

    def result(code, sentence, hint, index, notes=()):
        n = ALIBI_PROBES[index]
        return CheckResult(False, code, _message("✗", name, code, sentence, hint, f"{name}({n})", expected[index],
                                                 outcomes[index], notes), (n,))

    for variant in _alibi_variants():
        if all(_matches(o, variant.compute(n)) for o, n in zip(outcomes, ALIBI_PROBES, strict=True)):
            index = next(i for i, n in enumerate(ALIBI_PROBES) if not right[i])
            notes = ["The power-of-two formula is also used for every n."] if len(variant.codes) > 1 else []
            return result(variant.codes[0], variant.sentence, variant.hint, index, notes)
    kind, index = _first_failure([o.kind for o in outcomes], right)
    outcome = outcomes[index]
    if kind == "not-implemented":
        index = ALIBI_PROBES.index(12) if outcomes[ALIBI_PROBES.index(12)].kind == kind else index
        return result(kind, "Not implemented yet: it still raises NotImplementedError.",
                      "Replace the raise line with your code: 2^(−8(h+1)/n) for a power of two n, and the "
                      "c + every-other-of-2c rule otherwise.", index)
    if kind == "raised":
        return result(kind, f"It raised {outcome.detail}.",
                      f"Run {name}({ALIBI_PROBES[index]}) in a cell of its own to see the traceback.", index)
    if kind == "wrong-shape":
        return result(kind, f"It returned {outcome.what} where n = {ALIBI_PROBES[index]} numbers belong.",
                      outcome.hint or "Return a list or 1-D numpy array of n floats, one per head.", index)
    if kind == "not-finite":
        return result(kind, "It returned NaN or infinity.", "Every slope lies between 0 and 1.", index)
    return result("wrong", "Its slopes are wrong in a way none of the common mistakes explains.",
                  "For a power of two n, m_h = 2^(−8(h+1)/n); otherwise the first c slopes for c, then every "
                  "other slope of the 2c sequence.", index)


# ===========================================================================
# Notebooks 09 and 10: the exercises at the end of each lesson
# (check_new_base for 09-long-context, check_collisions for 10-precision)
# ===========================================================================
#
# Same idea as above: run the learner's function on fixed probes, compare with
# the reference, and when an answer is wrong, find the buggy version (written
# out here by hand, independently of the reference) that reproduces every
# answer. The result is a CheckResult whose first line names the mistake.

__all__ += ["NEW_BASE_MISTAKES", "check_new_base", "COLLISION_MISTAKES", "check_collisions"]

#: Mistake codes of check_new_base (09), most specific first.
NEW_BASE_MISTAKES = (
    "not-implemented",
    "no-exponent",
    "exponent-d-over-2",
    "exponent-inverted",
    "base-divided",
    "returned-frequencies",
    "wrong-shape",
    "not-finite",
    "raised",
    "wrong",
)
#: (base, s, D) inputs for new_base: LLaMA 2's sizes first, then others.
NEW_BASE_PROBES = ((10000.0, 8.0, 128), (10000.0, 2.0, 4), (500000.0, 4.0, 128), (10000.0, 16.0, 64), (10000.0, 3.0, 6))
#: Relative tolerance of check_new_base (float32 arithmetic passes too).
NEW_BASE_RTOL = 1e-6


def _raw_call(fn, args):
    """("value", result) or ("not-implemented" | "raised", text): the learner's prints and warnings swallowed."""
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings(), \
                np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return "value", fn(*args)
    except NotImplementedError as exc:
        return "not-implemented", _exception_text(exc)
    except (Exception, SystemExit) as exc:  # whatever the learner's code raises becomes a message
        return "raised", _exception_text(exc)


def _not_callable(name: str, check: str, fn) -> CheckResult:
    return CheckResult(False, "raised", f"✗ {name} [raised]: The check needs the function itself, not {_short(fn)}.\n"
                                        f"  Hint: Write {check}({name}), without parentheses after {name}.")


def _new_base_variants():
    # (code, sentence, hint, compute(base, s, D)); each a slip a learner makes writing base·s^(D/(D−2))
    return [
        ("no-exponent", "You multiply the base by s without the exponent D/(D−2), so the slowest pair is divided "
                        "by s^((D−2)/D), a little less than s.",
         "base' = base · s ** (D / (D - 2)): the exponent makes the slowest pair slow down by exactly s.",
         lambda base, s, D: base * s),
        ("exponent-d-over-2", "Your exponent is D/2, but it must be D/(D−2), so the base grows far too much.",
         "The slowest pair has ω = base^(−(D−2)/D); solve base'^(−(D−2)/D) = base^(−(D−2)/D)/s for base'.",
         lambda base, s, D: base * s ** (D / 2)),
        ("exponent-inverted", "Your exponent is (D−2)/D, the reciprocal of the right one, D/(D−2).",
         "Raise s to D / (D - 2), a number a little above 1.",
         lambda base, s, D: base * s ** ((D - 2) / D)),
        ("base-divided", "You divide the base by s^(D/(D−2)) where you must multiply: a smaller base makes every "
                         "pair turn faster, not slower.",
         "A bigger base means slower pairs: base' = base * s ** (D / (D - 2)).",
         lambda base, s, D: base / s ** (D / (D - 2))),
    ]


def _frequency_variants(base, s, D):
    """Arrays a learner returns when s goes to the frequencies instead of the base."""
    k = np.arange(D // 2)
    omega = base ** (-2.0 * k / D)
    return [omega / s, (base * s ** (D / (D - 2))) ** (-2.0 * k / D)]


def check_new_base(fn) -> CheckResult:
    """Check a learner's ``new_base(base, s, D)``: NTK-aware scaling's base' = base·s^(D/(D−2)).

    Taught in notebooks/09-long-context.ipynb. The probes are fixed; a wrong
    answer is matched against the common slips (codes in NEW_BASE_MISTAKES).

    >>> check_new_base(lambda base, s, D: base * s ** (D / (D - 2))).passed
    True
    >>> check_new_base(lambda base, s, D: base * s).mistake     # the exponent forgotten
    'no-exponent'
    >>> check_new_base(lambda base, s, D: base * s ** (D / 2)).mistake
    'exponent-d-over-2'
    """
    name = "new_base"
    if not callable(fn):
        return _not_callable(name, "check_new_base", fn)
    expected = [b * s ** (D / (D - 2)) for b, s, D in NEW_BASE_PROBES]
    calls = [_raw_call(fn, probe) for probe in NEW_BASE_PROBES]

    def call_text(probe):
        b, s, D = probe
        return f"{name}({b:g}, {s:g}, {D})"

    def scalar(result):
        """The answer as a float, or None with what came back instead."""
        if result is None:
            return None, "None (is the return statement missing?)"
        if isinstance(result, (str, bytes)):
            return None, f"the text {_short(result)}"
        try:
            arr = np.asarray(result, dtype=np.float64)
        except Exception:
            return None, _short(result)
        if arr.size != 1:
            return None, f"an array of shape {arr.shape}"
        return float(arr.reshape(())), ""

    def fail(code, sentence, hint, i, received):
        probe = NEW_BASE_PROBES[i]
        lines = [f"✗ {name} [{code}]: {sentence}", f"  Hint: {hint}", f"  For example, {call_text(probe)}",
                 f"    expected: {expected[i]:,.6g}", f"    received: {received}"]
        return CheckResult(False, code, "\n".join(lines), probe)

    values, shown = [], []
    for kind, result in calls:
        if kind == "value":
            value, text = scalar(result)
            values.append(value)
            shown.append(text if value is None else f"{value:,.6g}")
        else:
            values.append(None)
            shown.append(f"it raised {result}" if kind == "raised" else result)
    right = [v is not None and math.isclose(v, e, rel_tol=NEW_BASE_RTOL) for v, e in zip(values, expected, strict=True)]
    if all(right):
        b, s, D = NEW_BASE_PROBES[0]
        return CheckResult(True, None, f"✓ {name} passed all {len(right)} checks. For example, "
                                       f"{call_text(NEW_BASE_PROBES[0])} = {expected[0]:,.1f}.")
    first_wrong = right.index(False)
    # a buggy formula that reproduces every answer
    if all(v is not None for v in values):
        for code, sentence, hint, compute in _new_base_variants():
            if all(math.isclose(v, compute(*p), rel_tol=NEW_BASE_RTOL) for v, p in zip(values, NEW_BASE_PROBES, strict=True)):
                return fail(code, sentence, hint, first_wrong, shown[first_wrong])
    # an array of frequencies instead of one base
    kind, result = calls[first_wrong]
    if kind == "value" and values[first_wrong] is None:
        try:
            arr = np.asarray(result, dtype=np.float64).ravel()
        except Exception:
            arr = None
        if arr is not None and any(arr.shape == f.shape and np.allclose(arr, f, rtol=NEW_BASE_RTOL)
                                   for f in _frequency_variants(*NEW_BASE_PROBES[first_wrong])):
            return fail("returned-frequencies", "You return the scaled frequencies ω'_k, but the exercise asks for "
                        "the new base, one number.",
                        "NTK-aware scaling leaves the formula ω_k = base^(−2k/D) alone and changes only the base: "
                        "return base * s ** (D / (D - 2)).", first_wrong, f"an array of {arr.size} frequencies")
    kinds = [k if k != "value" else "wrong-shape" if v is None else "value" if math.isfinite(v) else "not-finite"
             for (k, _), v in zip(calls, values, strict=True)]
    kind, index = _first_failure(kinds, right)
    if kind == "not-implemented":
        return fail(kind, "Not implemented yet: it still raises NotImplementedError.",
                    "Replace the raise line with your code: the base that divides the slowest pair by s.",
                    index, "NotImplementedError")
    if kind == "raised":
        return fail(kind, f"It raised {calls[index][1]}.",
                    f"Run {call_text(NEW_BASE_PROBES[index])} in a cell of its own to see the traceback.",
                    index, shown[index])
    if kind == "wrong-shape":
        return fail(kind, f"It returned {shown[index]} where one number belongs.",
                    "Return the new base as a single float.", index, shown[index])
    if kind == "not-finite":
        return fail(kind, "It returned NaN or infinity.",
                    "Look for a division by zero (D − 2 is 0 only for D = 2) or an overflow.", index, shown[index])
    return fail("wrong", "Its values are wrong in a way none of the common mistakes explains.",
                "base' = base · s^(D/(D−2)); for base 10000, s = 8, D = 128 that is about 82,685.",
                index, shown[index])


#: Mistake codes of check_collisions (10), most specific first.
COLLISION_MISTAKES = (
    "not-implemented",
    "round-toward-zero",
    "ties-away",
    "float16",
    "range-includes-hi",
    "range-skips-lo",
    "missing-pos",
    "wrong-shape",
    "raised",
    "wrong",
)
#: (pos, lo, hi) inputs for collisions: the positions n with lo ≤ n < hi stored like pos in bfloat16.
COLLISION_PROBES = (
    (257, 250, 262),      # the tie 257 → 256
    (1030, 1020, 1045),   # gap 8: 1029 … 1035 → 1032
    (6010, 6000, 6032),   # gap 32, the whole range collides: the ends of the range matter
    (4096, 4080, 4120),   # across a power of two: gap 16 below, 32 above
    (100, 90, 110),       # exact below 256: only 100 itself
    (300000, 299000, 301500),  # beyond float16's largest number
)


def _round_integer(n: int, bits: int, mode: str) -> int:
    """The integer n ≥ 0 rounded to ``bits`` significant bits: "even" (nearest, ties to even), "zero", "away"."""
    if n < 2 ** bits:
        return n
    gap = 2 ** (n.bit_length() - bits)
    q, r = divmod(n, gap)
    if mode == "zero":
        return q * gap
    if 2 * r > gap or (2 * r == gap and (mode == "away" or q % 2 == 1)):
        q += 1
    return q * gap


def _collision_variants():
    def by_rounding(store, lo_shift=0, hi_shift=0, keep_pos=True):
        def compute(pos, lo, hi):
            target = store(pos)
            found = {n for n in range(lo + lo_shift, hi + hi_shift) if store(n) == target}
            return found if keep_pos else found - {pos}
        return compute

    def even(n):
        return _round_integer(n, 8, "even")

    def float16(n):
        with np.errstate(over="ignore"):
            return float(np.float16(n))

    # (code, sentence, hint, compute)
    return [
        ("round-toward-zero", "You cut the extra bits off (round toward zero); bfloat16 rounds to the nearest "
                              "value, ties to even.",
         "Cast with ml_dtypes.bfloat16, or round to the nearest multiple of the gap: 1030 → 1032, not 1024.",
         by_rounding(lambda n: _round_integer(n, 8, "zero"))),
        ("ties-away", "You break ties away from zero (257 → 258); bfloat16 breaks them to the even neighbour "
                      "(257 → 256).",
         "A tie goes to the neighbour whose last significant bit is 0.",
         by_rounding(lambda n: _round_integer(n, 8, "away"))),
        ("float16", "You round to float16 (11 significant bits), not bfloat16 (8 significant bits).",
         "Use ml_dtypes.bfloat16; numpy's float16 is a different format.",
         by_rounding(float16)),
        ("range-includes-hi", "Your range includes hi; it runs from lo up to hi − 1, like range(lo, hi).",
         "Loop over range(lo, hi).", by_rounding(even, hi_shift=1)),
        ("range-skips-lo", "Your range leaves out lo; it runs from lo up to hi − 1, like range(lo, hi).",
         "Loop over range(lo, hi).", by_rounding(even, lo_shift=1)),
        ("missing-pos", "You leave pos itself out; pos is stored as the same number as itself, so "
                        "when it lies in the range it belongs to the set.",
         "Keep every n in range(lo, hi) whose stored value equals pos's stored value, pos included.",
         by_rounding(even, keep_pos=False)),
    ]


def _collisions_reference(pos: int, lo: int, hi: int) -> set[int]:
    """check_collisions' answer: the n in range(lo, hi) that bfloat16 stores as the same number as pos.

    >>> sorted(_collisions_reference(257, 250, 262))      # 257 is a tie and goes to the even 256
    [256, 257]
    """
    from .precision import round_to

    # n collides with pos when bf16(n) = bf16(pos)
    stored = round_to(np.arange(lo, hi), "bfloat16")
    return {int(n) for n in np.arange(lo, hi)[stored == float(round_to(pos, "bfloat16"))]}


def check_collisions(fn) -> CheckResult:
    """Check a learner's ``collisions(pos, lo, hi)``: the positions n, lo ≤ n < hi, stored like ``pos`` in bfloat16.

    The reference casts with ml_dtypes' bfloat16 (round to nearest, ties to
    even). A wrong answer is matched against hand-written slips (codes in
    COLLISION_MISTAKES). Taught in notebooks/10-precision.ipynb.

    >>> import ml_dtypes
    >>> def collisions(pos, lo, hi):
    ...     bf16 = ml_dtypes.bfloat16
    ...     return {n for n in range(lo, hi) if bf16(n) == bf16(pos)}
    >>> check_collisions(collisions).passed
    True
    >>> check_collisions(lambda pos, lo, hi: {n for n in range(lo, hi + 1)
    ...                                       if ml_dtypes.bfloat16(n) == ml_dtypes.bfloat16(pos)}).mistake
    'range-includes-hi'
    """
    name = "collisions"
    if not callable(fn):
        return _not_callable(name, "check_collisions", fn)

    def as_set(result):
        if result is None:
            return None, "None (is the return statement missing?)"
        if isinstance(result, (str, bytes, dict)):
            return None, _short(result)
        try:
            items = list(result)
        except Exception:
            return None, f"a {type(result).__name__}, not a collection of positions"
        if len(items) > MAX_ITEMS:
            return None, f"{len(items)} items"
        out = set()
        for item in items:
            try:
                value = float(item)
            except Exception:
                return None, f"a collection holding {_short(item, 30)}"
            if not math.isfinite(value) or value != int(value):
                return None, f"a collection holding the non-integer {_short(item, 30)}"
            out.add(int(value))
        return out, ""

    def show(found):
        ordered = sorted(found)
        if len(ordered) > 6 and ordered == list(range(ordered[0], ordered[-1] + 1)):
            return f"{ordered[0]} … {ordered[-1]} ({len(ordered)} positions)"
        return "{" + ", ".join(map(str, ordered[:12])) + (", …}" if len(ordered) > 12 else "}")

    def call_text(probe):
        return f"{name}{probe}"

    expected = [_collisions_reference(*p) for p in COLLISION_PROBES]
    calls = [_raw_call(fn, p) for p in COLLISION_PROBES]
    answers, shown = [], []
    for kind, result in calls:
        if kind == "value":
            found, text = as_set(result)
            answers.append(found)
            shown.append(text if found is None else show(found))
        else:
            answers.append(None)
            shown.append(f"it raised {result}" if kind == "raised" else result)
    right = [a == e for a, e in zip(answers, expected, strict=True)]

    def fail(code, sentence, hint, i):
        lines = [f"✗ {name} [{code}]: {sentence}", f"  Hint: {hint}", f"  For example, {call_text(COLLISION_PROBES[i])}",
                 f"    expected: {show(expected[i])}", f"    received: {shown[i]}"]
        return CheckResult(False, code, "\n".join(lines), COLLISION_PROBES[i])

    if all(right):
        return CheckResult(True, None, f"✓ {name} passed all {len(right)} checks. For example, "
                                       f"{call_text(COLLISION_PROBES[0])} = {show(expected[0])}.")
    if all(a is not None for a in answers):
        for code, sentence, hint, compute in _collision_variants():
            if all(a == compute(*p) for a, p in zip(answers, COLLISION_PROBES, strict=True)):
                index = next(i for i, (a, e) in enumerate(zip(answers, expected, strict=True)) if a != e)
                return fail(code, sentence, hint, index)
    kinds = [k if k != "value" else "wrong-shape" if a is None else "value"
             for (k, _), a in zip(calls, answers, strict=True)]
    kind, index = _first_failure(kinds, right)
    if kind == "not-implemented":
        return fail(kind, "Not implemented yet: it still raises NotImplementedError.",
                    "Replace the raise line with your code: keep each n in range(lo, hi) that bfloat16 stores "
                    "as the same number as pos.", index)
    if kind == "raised":
        return fail(kind, f"It raised {calls[index][1]}.",
                    f"Run {call_text(COLLISION_PROBES[index])} in a cell of its own to see the traceback.", index)
    if kind == "wrong-shape":
        return fail(kind, f"It returned {shown[index]} where a set of integer positions belongs.",
                    "Return a set (or list) of ints, such as {256, 257}.", index)
    return fail("wrong", "Its sets are wrong in a way none of the common mistakes explains.",
                "Keep n when bfloat16 stores n and pos as the same number.", index)
