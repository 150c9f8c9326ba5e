"""Presentation mode: one notebook served by Voilà, code hidden, sliders live.

``make present NB=notebooks/01-clock-hands.ipynb`` runs
``python -m tools.present notebooks/01-clock-hands.ipynb``, which
starts Voilà on 127.0.0.1 (port 8866, or ``--port``) and prints the address
to open. The page shows the prose, the figures and the slider demos; the code
cells' inputs are hidden. The browser tests (tests/browser/) start Voilà with
:func:`voila_command`, the same command, so what they check is what a teacher
gets.

Why a module and not a bare ``voila`` call: the notebooks show generated
figures as ``![...](../figures/NN-slug.png)``. Voilà 0.5 inlines markdown
images through its contents manager, which is rooted at the notebook's folder,
and a path that climbs out of that root raises an HTTP 404 inside the page
render, so the page never finishes. :class:`NotebookRelativeImages` (plugged
in with ``--VoilaExporter.markdown_renderer_class``) inlines such an image
from disk instead, when it is an image file inside the folder above the
notebook's (the repository, for ``notebooks/``).

Used by ``make present``; the README section "Teaching with these notebooks" explains it.
"""

from __future__ import annotations

import argparse
import base64
import mimetypes
import os
import subprocess
import sys
from pathlib import Path

#: Image types a markdown cell may show.
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}

DEFAULT_PORT = 8866

#: The repository: the folder that holds ``tools/``.
ROOT = Path(__file__).resolve().parent.parent


def resolve_image(src: str, root: str | os.PathLike, allowed: str | os.PathLike | None = None) -> Path | None:
    """The image file that markdown ``src`` means, seen from the notebook folder ``root``; None if not allowed.

    Only a relative path to an existing image file inside ``allowed`` (default:
    the folder above ``root``, i.e. the repository for ``notebooks/``)
    resolves, so the presentation server never reads other files.

    >>> import tempfile
    >>> repo = Path(tempfile.mkdtemp())
    >>> (repo / "notebooks").mkdir(); (repo / "figures").mkdir()
    >>> _ = (repo / "figures" / "01-x.png").write_bytes(b"png")
    >>> resolve_image("../figures/01-x.png", repo / "notebooks").name
    '01-x.png'
    >>> resolve_image("../../etc/passwd", repo / "notebooks") is None   # outside, and not an image
    True
    >>> resolve_image("../figures/01-x.png", repo / "notebooks", allowed=repo / "notebooks") is None
    True
    >>> resolve_image("https://example.org/a.png", repo / "notebooks") is None
    True
    """
    if "://" in src or src.startswith(("data:", "/")):
        return None
    path = (Path(root) / src).resolve()
    if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file():
        return None
    allowed = Path(root).resolve().parent if allowed is None else Path(allowed).resolve()
    if not path.is_relative_to(allowed):
        return None
    return path


def data_uri(path: Path) -> str:
    """The file as a ``data:`` URI, as Voilà inlines images.

    >>> import tempfile
    >>> tmp = Path(tempfile.mkdtemp()) / "a.png"
    >>> _ = tmp.write_bytes(b"abc")                 # base64 of b"abc" is "YWJj"
    >>> data_uri(tmp)
    'data:image/png;base64,YWJj'
    """
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _make_renderer_class():
    from tornado.web import HTTPError
    from voila.exporter import VoilaMarkdownRenderer

    class NotebookRelativeImages(VoilaMarkdownRenderer):
        """Voilà's markdown renderer, plus images such as ``../figures/x.png`` outside the served folder."""

        def image(self, text, url, title=None):
            try:
                return super().image(text, url, title)
            except HTTPError:  # the path leaves the contents root: resolve it from the notebook's folder
                root = getattr(self.contents_manager, "root_dir", os.getcwd())
                path = resolve_image(url, root)
                src = data_uri(path) if path is not None else url
                return super(VoilaMarkdownRenderer, self).image(text, src, title)

    NotebookRelativeImages.__module__ = __name__
    return NotebookRelativeImages


def __getattr__(name):
    # Built on first use, so importing tools.present never imports Voilà.
    if name == "NotebookRelativeImages":
        cls = _make_renderer_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def voila_command(notebook: str | os.PathLike, port: int = DEFAULT_PORT, token: str | None = None,
                  python: str = sys.executable) -> list[str]:
    """The Voilà command line for one notebook on 127.0.0.1 (code hidden is Voilà's default).

    >>> cmd = voila_command("notebooks/01-clock-hands.ipynb", port=9000, python="python")
    >>> cmd[:4], "--port=9000" in cmd, "--Voila.ip=127.0.0.1" in cmd
    (['python', '-m', 'voila', 'notebooks/01-clock-hands.ipynb'], True, True)
    """
    command = [
        python, "-m", "voila", str(notebook),
        "--no-browser",
        "--Voila.ip=127.0.0.1",
        f"--port={port}",
        "--show_tracebacks=True",
        "--VoilaExporter.markdown_renderer_class=tools.present.NotebookRelativeImages",
    ]
    if token:
        command.append(f"--token={token}")
    return command


def voila_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with the repository on PYTHONPATH.

    Voilà imports the renderer class by name, ``tools.present.NotebookRelativeImages``,
    and ``tools`` is not installed: it is found from the repository folder.

    >>> voila_env({"PYTHONPATH": "/x"})["PYTHONPATH"] == os.pathsep.join([str(ROOT), "/x"])
    True
    """
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), env.get("PYTHONPATH", "")] if p)
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.present", description=__doc__.splitlines()[0])
    parser.add_argument("notebook", help="e.g. notebooks/01-clock-hands.ipynb")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    parser.add_argument("--token", default=None, help="require this token in the URL (default: none, localhost only)")
    options = parser.parse_args(argv)
    notebook = Path(options.notebook)
    if not notebook.is_file():
        parser.error(f"notebook not found: {notebook}")
    query = f"?token={options.token}" if options.token else ""
    print(f"Presenting {notebook} at http://127.0.0.1:{options.port}/{query}  (Ctrl-C stops it)", flush=True)
    try:
        return subprocess.call(voila_command(notebook, options.port, options.token), env=voila_env())
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
