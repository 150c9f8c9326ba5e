"""Every slider demo a notebook builds starts, and is scripted, only at values its sliders can show.

Without a browser: each notebook's demo cells (``name = some_demo(...)``) are
read with ``ast`` and built by the registered factory of that name, with the
notebook's own (literal) arguments. Then, in the order the notebook runs them,
every literal value a later cell gives a control (``name.controls["x"].value
= ...``, ``name.set_values(x=...)``) must be one of that control's values, and
every state the notebook asserts (``assert name.values == {...}``) must be the
state the demo is in at that point. A value the browser would snap (500,000 on
a 0.05-exponent log slider) fails here, by name, before any browser runs.

The browser test (tests/browser/test_browser_lab.py) checks the same in
JupyterLab after Run All, values computed at run time included.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from posenc_helpers.demo import slider_values
from posenc_helpers.registry import demos as registry

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _code_cells(path: Path) -> list[tuple[int, str]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            # IPython magics and shell lines are not Python
            lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
            out.append((index, "\n".join(lines)))
    return out


def _factories() -> dict:
    return {factory.__name__: factory for factory in registry().values()}


def _literal(node):
    try:
        return True, ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return False, None


class _Events(ast.NodeVisitor):
    """The demo events of one cell, in source order: ("build", name, call), ("set", name, control, node),
    ("state", name, node)."""

    def __init__(self):
        self.events = []

    def visit_Assign(self, node):
        self.generic_visit(node)
        value, targets = node.value, node.targets
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id.endswith("_demo"):
            for target in targets:
                if isinstance(target, ast.Name):
                    self.events.append(("build", target.id, value))
        for target in targets:
            # name.controls["x"].value = ...
            if (isinstance(target, ast.Attribute) and target.attr == "value"
                    and isinstance(target.value, ast.Subscript)
                    and isinstance(target.value.value, ast.Attribute) and target.value.value.attr == "controls"
                    and isinstance(target.value.value.value, ast.Name)):
                ok, key = _literal(target.value.slice)
                if ok:
                    self.events.append(("set", target.value.value.value.id, key, value))

    def visit_Call(self, node):
        self.generic_visit(node)
        # name.set_values(x=..., y=...)
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "set_values"
                and isinstance(node.func.value, ast.Name)):
            for keyword in node.keywords:
                self.events.append(("set", node.func.value.id, keyword.arg, keyword.value))

    def visit_Assert(self, node):
        self.generic_visit(node)
        test = node.test
        # assert name.values == {...}
        if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                and isinstance(test.left, ast.Attribute) and test.left.attr == "values"
                and isinstance(test.left.value, ast.Name)):
            self.events.append(("state", test.left.value.id, test.comparators[0]))


def demo_problems(path: Path) -> tuple[list[str], int]:
    """What is wrong with the slider values of ``path``'s demos, and how many demos it builds from a factory."""
    factories, problems, demos, state = _factories(), [], {}, {}
    where = path.name
    for index, source in _code_cells(path):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        visitor = _Events()
        visitor.visit(tree)
        for event in visitor.events:
            kind, name = event[0], event[1]
            at = f"{where} cell {index}"
            if kind == "build":
                call = event[2]
                factory = factories.get(call.func.id)
                if factory is None:
                    continue  # not a slider demo factory (e.g. a helper named *_demo elsewhere)
                args = [_literal(a) for a in call.args]
                kwargs = {k.arg: _literal(k.value) for k in call.keywords}
                if not all(ok for ok, _ in args) or not all(ok for ok, _ in kwargs.values()):
                    problems.append(f"{at}: {call.func.id}(...) has arguments that are not literals")
                    continue
                try:
                    demo = factory(*[v for _, v in args], **{k: v for k, (_, v) in kwargs.items()})
                except ValueError as exc:
                    problems.append(f"{at}: {call.func.id}(...) cannot be built: {exc}")
                    continue
                demos[name], state[name] = demo, dict(demo.values)
                for control_name, control in demo.controls.items():
                    if control.value not in slider_values(control):
                        problems.append(f"{at}: {name}'s {control_name} = {control.value!r} is off its slider")
            elif name in demos and kind == "set":
                control_name, node = event[2], event[3]
                ok, value = _literal(node)
                if control_name not in demos[name].controls:
                    problems.append(f"{at}: {name} has no control {control_name!r}")
                elif not ok:
                    state[name][control_name] = None  # computed at run time: the browser test checks it
                elif value not in slider_values(demos[name].controls[control_name]):
                    problems.append(f"{at}: sets {name}'s {control_name} to {value!r}, which its slider cannot "
                                    "show (the browser would snap it): use a value on the slider, or "
                                    f"{name}.preview(...)")
                else:
                    state[name][control_name] = value
            elif name in demos and kind == "state":
                ok, stated = _literal(event[2])
                if not ok:
                    continue
                known = {k: v for k, v in state[name].items() if v is not None}
                if set(stated) != set(state[name]) or any(stated[k] != known[k] for k in known):
                    problems.append(f"{at}: asserts {name}.values == {stated}, but the demo is at {state[name]}")
                for control_name, value in stated.items():
                    control = demos[name].controls.get(control_name)
                    if control is not None and value not in slider_values(control):
                        problems.append(f"{at}: states {name}'s {control_name} = {value!r}, off its slider")
    return problems, len(demos)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.relative_to(ROOT / "notebooks").as_posix() for p in NOTEBOOKS])
def test_every_demo_starts_and_is_scripted_on_its_sliders_values(path):
    problems, _ = demo_problems(path)
    assert problems == [], "\n".join(problems)


def test_the_notebooks_with_demos_are_all_read():
    built = {p.name: demo_problems(p)[1] for p in NOTEBOOKS}
    with_demos = {name for name, count in built.items() if count}
    # every notebook the browser tests find (a *_demo(...) call) builds its demos from a registered factory here
    assert {"01-clock-hands.ipynb", "09-long-context.ipynb", "11-rope-as-shipped.ipynb",
            "14-position-per-layer.ipynb", "16-position-at-inference.ipynb"} <= with_demos
    assert built["08-other-schemes.ipynb"] == 2


def _notebook(tmp_path, *sources) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    return path


def test_an_off_grid_default_is_found(tmp_path):
    path = _notebook(tmp_path, "demo = clock_demo(base=25_330.3)\ndemo")
    (problem,), _ = demo_problems(path)
    assert "clock_demo(...) cannot be built: slider 'base' cannot show 25330.3" in problem


def test_a_scripted_value_off_the_slider_and_a_wrong_stated_state_are_found(tmp_path):
    path = _notebook(
        tmp_path,
        "demo = base_demo()",
        'assert demo.values == {"base": 500000.0, "length": 8192.0}\ndemo.controls["base"].value = 501187.2',
        'demo.set_values(length=4096.0)\nassert demo.values == {"base": 500000.0, "length": 8192.0}',
    )
    problems, count = demo_problems(path)
    assert count == 1 and len(problems) == 2, problems
    assert "x.ipynb cell 1: sets demo's base to 501187.2, which its slider cannot show" in problems[0]
    assert "x.ipynb cell 2: asserts demo.values == {'base': 500000.0, 'length': 8192.0}, but the demo is at" in problems[1]
