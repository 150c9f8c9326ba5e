"""The ``posenc`` command: ``posenc explain ...`` explains a config.json; anything else runs the interpreter.

``posenc explain CONFIG [options]`` is :func:`posenc_helpers.explain_cli.main`. Every other use of ``posenc``
(a command file, standard input, ``--help``) is the PE / ROPE / DOT interpreter of
:func:`posenc_helpers.interpreter.main`, exactly as before.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Dispatch on the first argument: ``explain`` or the interpreter."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["explain"]:
        from .explain_cli import main as explain_main

        return explain_main(argv[1:])
    from pathlib import Path

    from .interpreter import main as interpreter_main

    # the usage line names the command as it was typed: `posenc` (the installed script) or python -m posenc_helpers
    prog = "posenc" if Path(sys.argv[0]).name == "posenc" else "python -m posenc_helpers"
    return interpreter_main(argv, prog=prog)
