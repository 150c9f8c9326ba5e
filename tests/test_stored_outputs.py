"""Stored outputs print only what every machine reproduces (issue 25; STYLE.md, "Stored outputs").

nbval compares every stored output with a fresh run, so a stored digit that
depends on the machine (the BLAS kernel, the thread count, memory alignment,
the clock) fails ``make test`` somewhere else. This test scans the stored
outputs of every notebook and solution (stream text, ``text/plain``,
``text/html``, ``text/markdown`` and ``text/latex``, of every code cell,
including cells tagged ``nbval-ignore-output``) and fails on three kinds of
text:

``residual``
    A number at floating-point rounding level: a number in scientific
    notation (``9.4e-15``, ``3.2E-16``, ``2e-13``, ``9.4 × 10^-15``) whose
    exponent is -10 or below, unless its mantissa is a bare ``1``. float64
    rounding of values of order 1 to 10⁶ lands between about 1e-17 and 1e-10,
    and its digits are noise: they changed from ``9.4e-15`` to ``9.5e-15``
    between two machines with the same lock. A bound written as a power of
    ten (``below 1e-12``) has the bare mantissa 1 and is allowed; print such
    a bound, computed and asserted in the cell, instead of the residual. A
    genuine value that small (not a residual) is flagged too: the scanner
    cannot tell it from one, so state it as a bound as well. A decimal with
    nine or more zeros after the point before its first digit
    (``0.0000000000094``) is the same number written out and is flagged the
    same way.
``address``
    A memory address: ``0x`` and 8 or more hex digits, or ``at 0x`` and any
    hex digits (``<Line2D at 0x7f…>``); it changes on every run.
``timing``
    A measured duration or speed: a number with a time unit (``1.23 s``,
    ``12 ms``, ``3 min``), a rate (``45.6 it/s``, ``3.2 step/s``,
    ``0.02 s/it``), a time of day (``12:34:56``) or a progress bar's clock
    (``[00:12<00:34``). The one clock allowed is that of a bar that has not
    started, ``[00:00<?``: tqdm draws it when the bar is created, before
    any step is timed, so it is the same everywhere (the lab's notebooks 12,
    13 and 15 store such bars, in cells tagged ``nbval-ignore-output``).

A number the residual rule flags that is the same on every machine by
definition is listed in ``ALLOWED`` with its cell and the reason; an entry
that no longer occurs there fails the test, so the list cannot go stale.

The lab notebooks print training results (accuracies, bits per character) and
no durations; the scan covers them as well.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks" / "solutions").glob("*.ipynb"))
#: Numbers the residual rule flags that no machine can change, by (notebook, cell id), each with its reason.
#: (02 printed np.spacing's 3.5e-18 and 2.2e-16 here; it now prints them as the powers of two they are.)
ALLOWED: dict[tuple[str, str], dict[str, str]] = {}
#: The output formats a reader sees as text (images and widget state are not scanned).
TEXT_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex")

#: A number in scientific notation: mantissa, then e/E or "× 10^", then a (possibly Unicode) minus and digits.
SCIENTIFIC = re.compile(
    r"(?<![\w.])[-+−]?(?P<mantissa>\d+(?:\.\d*)?|\.\d+)"
    r"(?:[eE]|\s*[×·]\s*10\^?)(?P<sign>[-+−⁻]?)(?P<exponent>\d+|[⁰¹²³⁴⁵⁶⁷⁸⁹]+)(?![\w.])"
)
#: The largest exponent at rounding level: 1e-10 and below.
ROUNDING_EXPONENT = -10
#: A decimal written out at rounding level: nine or more zeros after the point, then a digit.
SPELLED_OUT = re.compile(r"(?<![\w.])0\.0{9,}[1-9]\d*")
ADDRESS = re.compile(r"0x[0-9a-fA-F]{8,}|\bat 0x[0-9a-fA-F]+")
TIMING = re.compile(
    r"\d+(?:\.\d+)? ?(?:ns|µs|μs|us|ms|s|sec|secs|seconds?|min|mins|minutes?)\b"  # 1.23 s, 12 ms
    r"|\d+(?:\.\d+)? ?(?:it|its|steps?|samples?|tok|tokens?|batch(?:es)?)/s\b"  # 45.6 it/s
    r"|\d+(?:\.\d+)? ?s/(?:it|step)\b"  # 0.02 s/it
    r"|\b\d{1,2}:\d\d:\d\d\b"  # a time of day, or h:mm:ss
    r"|\[\d+:\d\d(?::\d\d)?<"  # a progress bar's elapsed time: [00:12<...
)
#: A progress bar that has not started: drawn before any step is timed, the same on every machine.
UNSTARTED_BAR = "[00:00<?"
SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def _exponent(match: re.Match) -> int:
    value = int(match["exponent"].translate(SUPERSCRIPTS))
    return -value if match["sign"] in ("-", "−", "⁻") else value


def flag_text(text: str) -> list[tuple[str, str]]:
    """Every (rule, matched text) in ``text`` whose digits would differ between machines.

    >>> flag_text("misses by up to 9.4e-15")
    [('residual', '9.4e-15')]
    >>> flag_text("largest error below 1e-12: True; ω = 1.000e-04, off by 2.97e-08")
    []
    >>> flag_text("[<matplotlib.lines.Line2D at 0x7f3a2c1d5e10>]")
    [('address', 'at 0x7f3a2c1d5e10')]
    >>> flag_text("trained in 12.3 s, 81.2 it/s; rope on text:   0%|  | 0/800 [00:00<?, ?step/s]")
    [('timing', '12.3 s'), ('timing', '81.2 it/s')]
    """
    found = []
    for match in SCIENTIFIC.finditer(text):
        if _exponent(match) <= ROUNDING_EXPONENT and match["mantissa"] != "1":
            found.append(("residual", match.group().lstrip("+-−")))
    found += [("residual", m.group()) for m in SPELLED_OUT.finditer(text)]
    found += [("address", m.group()) for m in ADDRESS.finditer(text)]
    for match in TIMING.finditer(text):
        if not (match.group().startswith("[") and text.startswith(UNSTARTED_BAR, match.start())):
            found.append(("timing", match.group()))
    return found


def output_texts(output) -> list[str]:
    """The text a reader sees in one stored output: a stream's text, or each text format of its data."""
    if output.get("output_type") == "stream":
        return ["".join(output.get("text", ""))]
    data = output.get("data", {})
    return ["".join(data[kind]) for kind in TEXT_TYPES if kind in data]


def scan(nb, name: str = "") -> list[str]:
    """Every machine-dependent number in a notebook's stored outputs, as 'cell N (id): rule: text'.

    ``name`` is the notebook's file name, which selects its entries of ``ALLOWED``.
    """
    findings = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        allowed = ALLOWED.get((name, cell.get("id")), {})
        for output in cell.get("outputs", []):
            for text in output_texts(output):
                for rule, shown in flag_text(text):
                    if not (rule == "residual" and shown in allowed):
                        findings.append(f"cell {index} ({cell.get('id', '?')}): {rule}: {shown}")
    return findings


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "notebooks")) for p in NOTEBOOKS])
def test_stored_outputs_print_only_what_every_machine_reproduces(path):
    findings = scan(nbformat.read(path, as_version=4), path.name)
    assert not findings, (
        f"{path.relative_to(ROOT)} stores machine-dependent output (print a bound such as 'below 1e-12', "
        "computed and asserted in the cell, or a rounded value):\n  " + "\n  ".join(findings)
    )


@pytest.mark.parametrize("name, cell_id", sorted(ALLOWED))
def test_every_allowed_number_still_occurs_in_its_cell(name, cell_id):
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    flagged = {shown for output in cell.outputs for text in output_texts(output) for _, shown in flag_text(text)}
    assert set(ALLOWED[name, cell_id]) <= flagged, "an ALLOWED entry is stale: remove it"


def test_every_notebook_and_solution_is_scanned():
    assert len(NOTEBOOKS) >= 20 and any(p.parent.name == "solutions" for p in NOTEBOOKS)


def _planted() -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [
        new_code_cell("print(residual)", outputs=[
            new_output("stream", name="stdout", text="best fixed step, (sin, cos): misses by up to 9.4e-15\n"),
        ]),
        new_code_cell("ax.plot(x)", outputs=[
            new_output("execute_result", data={"text/plain": "[<matplotlib.lines.Line2D at 0x7f3a2c1d5e10>]"},
                       execution_count=2),
        ]),
        new_code_cell("%time train()", outputs=[
            new_output("stream", name="stdout", text="CPU times: user 1.42 s, sys: 12 ms\n"),
            new_output("display_data", data={"text/html": "<pre>rope: 100%|##| 800/800 [00:41&lt;00:00, 19.3step/s]</pre>",
                                             "text/plain": "rope: 100%|##| 800/800 [00:41<00:00, 19.3step/s]"}),
        ]),
        new_code_cell("print(bound)", outputs=[
            new_output("stream", name="stdout", text=(
                "best fixed step, (sin, cos): misses by below 1e-12\n"
                "largest error below the limit: bfloat16 1.95e-03, float32 2.98e-08; ω = 1.000e+00\n"
                "s = 4: slowest pair divided by 4.000 (static NTK, s = 2: 2.000), 3 seeds\n"
            )),
            new_output("display_data", data={"text/plain": "rope on text:   0%|          | 0/800 [00:00<?, ?step/s]"}),
        ]),
    ]
    return nb


def test_the_scan_flags_a_planted_residual_address_and_timing_and_allows_a_bound():
    findings = scan(_planted())
    by_cell = {i: [f.split(": ", 1)[1] for f in findings if f.startswith(f"cell {i} ")] for i in range(4)}
    assert by_cell[0] == ["residual: 9.4e-15"]
    assert by_cell[1] == ["address: at 0x7f3a2c1d5e10"]
    assert "timing: 1.42 s" in by_cell[2] and "timing: 12 ms" in by_cell[2]
    assert "timing: [00:41<" in by_cell[2] and "timing: 19.3step/s" in by_cell[2]
    assert by_cell[3] == [], "a bound, float32-sized values, 's = 4' and an unstarted bar are allowed"


@pytest.mark.parametrize("text, rule", [
    ("3.2e-16", "residual"), ("9e-15", "residual"), ("2.0E-13", "residual"), ("-4.4e-16", "residual"),
    ("9.4 × 10^-15", "residual"), ("1.2×10⁻¹⁶", "residual"), ("6.62e-112", "residual"), ("0.0000000000094", "residual"),
    ("<function f at 0x1a2b>", "address"), ("id 0x7ffd5e8a1c20", "address"),
    ("took 3 min", "timing"), ("trained for 6 s", "timing"), ("0.25 s/it", "timing"), ("at 12:04:33", "timing"),
])
def test_the_scan_flags(text, rule):
    assert [r for r, _ in flag_text(text)] == [rule]


@pytest.mark.parametrize("text", [
    "below 1e-12", "to 1e-10: True", "1e-300", "float16 max = 6.55e+04", "gap 6.1e-05", "off by 2.97e-08",
    "matched base = 1e+08", "0.0000", "0x10", "s = 8", "3 pairs", "2 steps", "0/800 [00:00<?, ?step/s]",
])
def test_the_scan_allows(text):
    assert flag_text(text) == []


def test_cells_tagged_remove_output_store_nothing_and_are_not_compared():
    """tools.run_notebooks stores no output for a cell tagged remove-output; nbval must then ignore its output."""
    import json

    found = 0
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            tags = cell.get("metadata", {}).get("tags", [])
            if "remove-output" in tags:
                found += 1
                assert cell.get("outputs") == [], path
                assert "nbval-ignore-output" in tags, path
    assert found >= 2  # notebook 17's run and its open questions
