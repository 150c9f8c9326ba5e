"""``python -m posenc_helpers [FILE]``: the PE / ROPE / DOT command interpreter."""

from .interpreter import main

raise SystemExit(main())
