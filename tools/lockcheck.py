"""The lock, ``requirements.txt``, against ``pyproject.toml``: ``python -m tools.lockcheck [--write]``.

``requirements.txt`` pins every package the project installs, transitive ones
included, for every platform (``uv pip compile --universal``), from
``requirements.in`` (the package with all its extras). ``--write`` regenerates
it (``make lock``); uv keeps every existing pin that still satisfies
pyproject, and ``--upgrade`` takes the newest versions instead.

Without ``--write`` (``make lock-check``, run by ``make test``) the same
compile runs on a copy of the lock and the two are compared. Because existing
pins are kept, a newer release upstream changes nothing; the check fails when
pyproject and the lock disagree: a dependency added to pyproject but missing
from the lock, one removed from pyproject but still locked, or a pin that no
longer satisfies pyproject's range.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.txt"
INPUT = ROOT / "requirements.in"


def compile_command(output: Path, upgrade: bool = False) -> list[str]:
    """The one ``uv pip compile`` command line behind ``make lock`` and the check.

    >>> cmd = compile_command(Path("requirements.txt"))
    >>> cmd[3:5], "--universal" in cmd, "--upgrade" in cmd
    (['pip', 'compile'], True, False)
    """
    command = [
        sys.executable, "-m", "uv", "pip", "compile", str(INPUT.relative_to(ROOT)),
        "--universal", "--python-version", "3.11",
        "--custom-compile-command", "make lock",
        "--output-file", str(output), "--quiet",
    ]
    return command + (["--upgrade"] if upgrade else [])


def check() -> int:
    with tempfile.TemporaryDirectory(prefix="posenc-lock-") as tmp:
        candidate = Path(tmp) / "requirements.txt"
        shutil.copyfile(LOCK, candidate)  # the existing pins are the preferences
        subprocess.run(compile_command(candidate), cwd=ROOT, check=True)
        old = LOCK.read_text(encoding="utf-8").splitlines(keepends=True)
        new = candidate.read_text(encoding="utf-8").splitlines(keepends=True)
    diff = list(difflib.unified_diff(old, new, "requirements.txt (committed)", "requirements.txt (from pyproject.toml)"))
    if diff:
        sys.stdout.writelines(diff)
        print("\nlock check FAILED: pyproject.toml and requirements.txt disagree; run `make lock` and commit both.")
        return 1
    print("lock check: requirements.txt matches pyproject.toml")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.lockcheck", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate requirements.txt (make lock)")
    parser.add_argument("--upgrade", action="store_true", help="with --write: take the newest allowed versions")
    options = parser.parse_args(argv)
    if options.write:
        subprocess.run(compile_command(LOCK, upgrade=options.upgrade), cwd=ROOT, check=True)
        print(f"wrote {LOCK.relative_to(ROOT)}")
        return 0
    return check()


if __name__ == "__main__":
    sys.exit(main())
