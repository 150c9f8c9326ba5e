"""The command ``posenc explain CONFIG``: read a config.json, print its position design layer by layer.

``CONFIG`` is a path to a config.json, a folder holding one, or ``-`` for standard input. Options:
``--json`` (the report as data), ``--context 8k,128k,1M`` (the KV cache at those contexts; k = 1,024 and
M = 1,048,576 tokens), ``--dtype bfloat16|float16|float32`` (instead of the config's), ``--bound`` (compute
Men et al.'s Eq. 11 bound where it is not stored), ``--engine course|transformers`` (the course's reader, the
default, or transformers itself: :data:`INSTALL_HF`), ``--check`` (both engines, every
field where they disagree) and ``--assume llama`` (the course's reader reads a model_type it does not transcribe
as Llama's code would, and the report says so: its first line, its notes, and ``"assumed"`` in ``--json``).

Bad input (a file that is not JSON, a config the reader refuses, an unknown dtype, a bad context) prints one
line, ``posenc explain: error: ...``, to standard error and exits with status 2: the reader's own message, in
the command's words (``--assume llama`` where the Python function says ``assume='llama'``). A family without
RoPE (BLOOM, MPT: ALiBi; GPT-2, OPT, ...: learned positions) is refused so, with or without ``--assume``.
``--check`` exits with 1 when the engines disagree, 0 when they agree or when the course's reader refuses the
config by name. Nothing here reaches the network.

>>> parse_contexts("8k,128k,1M")
(8192, 131072, 1048576)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from .configs import ASSUMABLE
from .explain import DEFAULT_CONTEXTS, assumption, compare_layers, course_layers, explain, reader_config
from .explain_text import render_json, render_text
from .kvcache import DTYPE_BYTES

#: How to install the transformers engine's two packages (the extra ``hf``), torch as its CPU build: from PyPI, pip
#: installs on Linux the CUDA build (a few GB), which the engine does not need (docs/EXPLAIN.md).
INSTALL_HF = ('pip install "torch>=2.6" --index-url https://download.pytorch.org/whl/cpu, then '
              'pip install "transformers>=5.25,<6" (the extra [hf]; see docs/EXPLAIN.md)')


class ExplainError(Exception):
    """Bad input: its message is the one line the command prints."""


_UNITS = {"": 1, "k": 1024, "m": 1048576}


def parse_contexts(text: str) -> tuple[int, ...]:
    """'8k,128k,1M' → (8192, 131072, 1048576): positive integers, k = 1,024, M = 1,048,576.

    >>> parse_contexts("4096, 32K")
    (4096, 32768)
    >>> parse_contexts("8k,lots")
    Traceback (most recent call last):
    ...
    posenc_helpers.explain_cli.ExplainError: --context 'lots' is not a number of tokens (e.g. 8k,128k,1M or 4096)
    """
    out = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*([0-9]+)\s*([kKmM]?)\s*", part)
        value = int(match.group(1)) * _UNITS[match.group(2).lower()] if match else 0
        if value < 1:
            raise ExplainError(f"--context {part.strip()!r} is not a number of tokens (e.g. 8k,128k,1M or 4096)")
        out.append(value)
    return tuple(out)


def load_config(where: str, stdin=None) -> tuple[dict, str]:
    """(the config, what to call it): ``where`` a config.json, a folder holding one, or '-' for ``stdin``."""
    if where == "-":
        text, name = (stdin or sys.stdin).read(), "standard input"
    else:
        path = Path(where)
        if path.is_dir():
            path = path / "config.json"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise ExplainError(f"cannot read {str(path)!r}: {reason}") from None
        name = str(path)
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExplainError(f"{name} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(config, dict):
        raise ExplainError(f"{name} holds a JSON {type(config).__name__}, not an object: a config.json is an object")
    return config, name


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="posenc explain", description="Explain a model's config.json: its position design, layer by layer.")
    parser.add_argument("config", nargs="+",
                        help="a config.json, a folder holding one, or - for standard input (several with --check)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--context", default=None, help="contexts for the KV cache (default 8k,128k,1M)")
    parser.add_argument("--dtype", default=None, help=f"bytes per number from this dtype ({', '.join(DTYPE_BYTES)})")
    parser.add_argument("--bound", action="store_true", help="compute Eq. 11's bound where it is not stored (slow)")
    parser.add_argument("--engine", default="course", help="course (default) or transformers")
    parser.add_argument("--check", action="store_true", help="run both engines and print where they disagree")
    parser.add_argument("--assume", default=None, metavar="llama",
                        help="read a model_type the course's reader does not transcribe as Llama's code would")
    return parser


def command_words(text: str) -> str:
    """The reader's words for the command's user: ``--assume llama`` where the Python function says
    ``assume='llama'`` (a command-line user cannot pass a keyword argument).

    >>> command_words("pass assume='llama' to read it as Llama's code would")
    "pass --assume llama to read it as Llama's code would"
    """
    for family in ASSUMABLE:
        # the reader's note "read as Llama's code reads it, because assume='llama' (...)"
        text = text.replace(f"because assume={family!r}", f"as --assume {family} asks")
        text = text.replace(f"assume={family!r}", f"--assume {family}")
    return text


def _one_line(exc: BaseException) -> str:
    return command_words(" ".join(str(exc).split())) or type(exc).__name__


def _hf():
    """The transformers engine, or an ExplainError saying how to install it."""
    try:
        from . import explain_hf

        explain_hf.load()
    except ImportError as exc:
        raise ExplainError(f"the transformers engine needs torch and transformers ({_one_line(exc)}): "
                           f"{INSTALL_HF}") from None
    except Exception as exc:  # an installed torch or transformers that fails on import
        raise ExplainError(f"the transformers engine cannot load torch and transformers ({type(exc).__name__}: "
                           f"{_one_line(exc)})") from None
    return explain_hf


def _report(options, config: dict, name: str, contexts) -> dict:
    kwargs = dict(contexts=contexts, dtype=options.dtype, source=name, compute_bound=options.bound)
    if options.engine == "transformers":
        return _hf().explain(config, **kwargs)
    report = explain(config, assume=options.assume, **kwargs)
    return {**report, "notes": [command_words(n) for n in report["notes"]]}


def _check_options(options) -> None:
    """Refuse, by name, an engine, a dtype or an --assume the command does not know, or one it cannot apply."""
    if options.engine not in ("course", "transformers"):
        raise ExplainError(f"unknown engine {options.engine!r} (--engine); known: course, transformers")
    if options.dtype is not None and options.dtype not in DTYPE_BYTES:
        raise ExplainError(f"unknown dtype {options.dtype!r} (--dtype); known: {', '.join(DTYPE_BYTES)}")
    if options.assume is not None and options.assume not in ASSUMABLE:
        raise ExplainError(f"unknown family {options.assume!r} (--assume); the course's reader assumes only: "
                           f"{', '.join(ASSUMABLE)}")
    if options.assume is not None and options.engine == "transformers" and not options.check:
        raise ExplainError("--assume is for the course's reader: --engine transformers reads every family it "
                           "knows by the family's own code")


def main(argv: list[str] | None = None, *, stdin=None, out=None, err=None) -> int:
    """``posenc explain ...``; returns the exit status (0, 1 when --check finds a disagreement, 2 for bad input)."""
    out, err = out or sys.stdout, err or sys.stderr
    parser = _parser()
    try:
        options = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its usage line and error
        return int(exc.code or 0) and 2
    try:
        _check_options(options)
        contexts = DEFAULT_CONTEXTS if options.context is None else parse_contexts(options.context)
        if options.check:
            return _check_all(options, stdin, out)
        if len(options.config) > 1:
            raise ExplainError(f"one CONFIG at a time ({len(options.config)} given); several only with --check")
        config, name = load_config(options.config[0], stdin)
        report = _report(options, config, name, contexts)
    except ExplainError as exc:
        print(f"posenc explain: error: {_one_line(exc)}", file=err)
        return 2
    except (ValueError, TypeError, KeyError) as exc:  # the reader's refusals name the key and model_type
        print(f"posenc explain: error: {_one_line(exc)}", file=err)
        return 2
    try:
        print(render_json(report) if options.json else render_text(report), file=out)
        out.flush()
    except BrokenPipeError:  # the reader stopped early (`posenc explain ... | head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _value_text(field: str, value) -> str:
    if field == "inv_freq" and isinstance(value, list):
        return f"[{', '.join(f'{x:.6g}' for x in value[:4])}{', ...' if len(value) > 4 else ''}] ({len(value)})"
    return repr(value)


def _grouped(diffs: list[dict]) -> list[str]:
    """One line per (field, course value, transformers value), with the layers it holds for."""
    groups: dict[str, list] = {}
    for d in diffs:
        key = f"{d['field']}: course {_value_text(d['field'], d['course'])}, transformers " \
              f"{_value_text(d['field'], d['transformers'])}"
        groups.setdefault(key, []).append(d["layer"])
    lines = []
    for key, layers in groups.items():
        where = "all layers" if layers == [None] else f"layer{'s' if len(layers) > 1 else ''} " + ", ".join(
            str(i) for i in layers[:12]) + (", ..." if len(layers) > 12 else "")
        lines.append(f"  {where}: {key}")
    return lines


def check(config: dict, name: str, assume: str | None = None) -> dict:
    """Both engines on ``config``: ``{"verdict": "agree" | "disagree" | "refused", ...}``.

    "refused": the course's reader refuses the config by name (its message in ``"refused"``, in the command's
    words), while transformers reads it; "disagree": ``"disagreements"`` lists every (layer, field) where the
    two differ. With ``assume="llama"``, a model_type the reader does not transcribe is read as Llama's code
    would (``"assumed"`` names it), and the check shows where that assumption and the family's own code part.
    """
    hf = _hf()
    hf_layers, hf_notes, engine = hf.hf_layers(config)
    result = {"source": name, "transformers": engine["version"], "layers": len(hf_layers), "refused": None,
              "assumed": None, "disagreements": [], "not_compared": [], "transformers_notes": hf_notes}
    try:
        assumed, _unused = assumption(config, assume)
        course, _notes = course_layers(reader_config(config), assume=assume)
    except (ValueError, TypeError) as exc:
        return {**result, "verdict": "refused", "refused": _one_line(exc)}
    result["assumed"] = assumed
    diffs, skipped = compare_layers(course, hf_layers)
    return {**result, "verdict": "disagree" if diffs else "agree", "disagreements": diffs, "not_compared": skipped}


def _check_lines(result: dict) -> list[str]:
    lines = [f"check: {result['source']}: the course's reader against {result.get('transformers', 'transformers')}"]
    if result.get("assumed"):
        a = result["assumed"]
        lines.append(f"model_type {a['model_type']!r} read as {a['read_as'].capitalize()}'s code reads it "
                     f"(--assume {a['read_as']})")
    if result["verdict"] == "error":
        lines.append(f"transformers engine failed: {result['error']}")
    elif result["verdict"] == "refused":
        lines.append(f"refused by the course's reader: {result['refused']}")
        lines.append(f"(transformers reads its {result['layers']} layers: posenc explain --engine transformers ...)")
    elif result["verdict"] == "agree":
        lines.append(f"agree on every compared field of all {result['layers']} layers")
    else:
        lines.append(f"DISAGREE on {len(result['disagreements'])} (layer, field) pairs:")
        lines += _grouped(result["disagreements"])
    if result.get("not_compared"):
        lines.append("not compared (one engine cannot read them): " + ", ".join(result["not_compared"]))
    lines += [f"note from the transformers engine: {n}" for n in result.get("transformers_notes") or ()]
    return lines


def _check_all(options, stdin, out) -> int:
    """--check on every CONFIG; exit 1 if any disagree, else 2 if the transformers engine failed on one, else 0."""
    results = []
    for where in options.config:
        config, name = load_config(where, stdin)
        try:
            results.append(check(config, name, options.assume))
        except ExplainError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError, RuntimeError) as exc:
            results.append({"source": name, "verdict": "error", "error": _one_line(exc)})
    if options.json:
        print(json.dumps(results if len(results) > 1 else results[0], indent=2, ensure_ascii=False), file=out)
    else:
        print("\n".join(line for r in results for line in _check_lines(r)), file=out)
    verdicts = {r["verdict"] for r in results}
    return 1 if "disagree" in verdicts else 2 if "error" in verdicts else 0
