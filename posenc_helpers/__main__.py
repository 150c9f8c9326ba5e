"""``python -m posenc_helpers [FILE]``: the PE / ROPE / DOT command interpreter (``explain ...``: posenc explain)."""

from .cli import main

raise SystemExit(main())
