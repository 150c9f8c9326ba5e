"""Layout: the package a notebook imports holds no maintainer tooling, and its imports go one way."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "posenc_helpers"


def test_maintainer_tools_live_in_tools_not_in_the_package():
    for name in ["nav", "run_notebooks", "figures", "present", "book", "lockcheck"]:
        assert not (PACKAGE / f"{name}.py").exists(), name
        assert (ROOT / "tools" / f"{name}.py").is_file(), name


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth, resolved to ``posenc_helpers.…`` for relative imports."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in [base, node.module or ""] if p)
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def test_the_package_never_imports_tools():
    for path in PACKAGE.rglob("*.py"):
        assert not any(m == "tools" or m.startswith("tools.") for m in _imports(path)), path


def test_demo_and_style_do_not_import_viz():
    # viz modules build SliderDemos, so demo (and the style both share) must not import viz back.
    for name in ["demo.py", "style.py"]:
        imported = _imports(PACKAGE / name)
        assert not any(m.startswith("posenc_helpers.viz") for m in imported), (name, sorted(imported))
    code = "import sys, posenc_helpers.demo; print('posenc_helpers.viz' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
