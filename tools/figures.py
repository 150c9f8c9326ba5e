"""The one figure generator: ``python -m tools.figures [OUTDIR]``.

Every module in :mod:`posenc_helpers.viz` may define ``FIGURES``, a dict
from a name such as ``"01-unit-circle-walk"`` (the notebook number first) to a
function that returns a Figure. This script writes each one to
``figures/<name>.png`` (or OUTDIR). Regenerating gives byte-identical files:
PNG metadata is stripped and nothing depends on the clock or on randomness
that is not seeded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from posenc_helpers import registry as _registry
from posenc_helpers.style import style

#: Where the committed figures live: <repo>/figures.
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "figures"


#: Every registered figure maker, by name (see posenc_helpers.registry).
registry = _registry.figures


def write_all(outdir: Path) -> list[Path]:
    """Write every registered figure as ``outdir/<name>.png``; return the paths written."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in registry().items():
        with style():
            fig = make()
            path = outdir / f"{name}.png"
            fig.savefig(path, format="png", dpi=fig.dpi, metadata={"Software": None})
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.figures", description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", default=str(DEFAULT_DIR), help="where to write (default: figures/)")
    options = parser.parse_args(argv)
    for path in write_all(Path(options.outdir)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
