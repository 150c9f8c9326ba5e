"""The static book: ``python -m tools.book [--strict] [--out DIR]`` (``make book``).

Builds the course as a static HTML site with Jupyter Book 1 (Sphinx and MyST-NB)
into ``build/book/_build/html`` (open ``index.html``; no server needed). It

* stages a copy of the book's sources in ``build/book/src``: ``index.md``,
  the notebooks, ``figures/``, ``_config.yml`` and ``_toc.yml``;
* takes the table of contents from :mod:`tools.nav` (``nav.entries`` and
  ``nav.solutions``), the same source as the notebooks' navigation cells and
  the README's contents, so the three cannot drift;
* tags each navigation cell ``remove-cell`` in the copy, so the book drops it
  (the sidebar and the previous/next buttons replace it);
* never re-executes a notebook: the stored outputs, already checked by nbval,
  are what the page shows;
* replaces each live widget's output (a slider demo or the flashcard deck,
  which need a kernel) with a note on how to run it live; the lesson's static
  figures stay; a stored progress bar (a tqdm widget, notebooks 12 and 13) is
  dropped, since it showed only that training ran;
* moves nbval's marker comments (``# NBVAL_IGNORE_OUTPUT``) into cell tags
  (:mod:`tools.nbtags`), so no test marker shows on a page, and removes the
  Colab set-up cell (:data:`tools.nav.COLAB_CELL_ID`);
* takes the repository's address from ``pyproject.toml``'s ``[project.urls]``
  (:func:`tools.nav.repository`) for the repository, Binder and Colab buttons;
* renders math offline: MathJax is bundled by ``sphinx-mathjax-offline`` and
  nothing is loaded from a CDN, at build time or when the page is viewed; the
  bundle's ``textmacros`` extension is loaded, as JupyterLab's MathJax does, so
  ``\\text{head\\_dim}`` shows ``head_dim`` (see :data:`MATHJAX`);
* gives the site one title, :data:`TITLE`, the landing page's heading too;
* keeps every page within a phone's width (:data:`CSS`): long inline code wraps,
  and maths wider than the column scrolls inside its own box.

``--strict`` turns every Sphinx warning into an error (the test builds that way).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tools import nav, nbtags

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "build" / "book"

#: A markdown link to an anchor in a notebook, ``[text](06-flashcards.ipynb#cards-01)``, where
#: the anchor may be an HTML one (``<a id="cards-01"></a>``), which MyST cannot check.
ANCHOR_LINK = re.compile(r"\[([^\]]+)\]\(([\w./-]+)\.ipynb#([A-Za-z0-9_-]+)\)")

#: The mime type of a live widget's output.
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

#: What a page shows where a live widget would be.
LIVE_NOTE = (
    "**Live demo.** In this static book the widget cannot run: it needs a Python kernel. "
    "To use it, clone the repository, run `make lab` and open `{path}` "
    "(or use the launch button at the top of this page: Binder or Colab)."
)

#: A stored tqdm progress bar's text: ``"rope on prev:   0%|          | 0/1000 [00:00<?, ?step/s]"``.
PROGRESS_BAR = re.compile(r"\d+%\|.*\| *\d+/\d+ \[")

#: The repository, from pyproject.toml's [project.urls] (the one place it is written).
REPOSITORY = nav.repository()

#: The repository's README, which the landing page links to.
README_URL = f"{REPOSITORY}/blob/{nav.BRANCH}/README.md"

#: The site's one title: the header's (Sphinx's ``html_title``), and the landing page's heading.
TITLE = "posenc: how a transformer knows where a token is"

#: MathJax 3's configuration (``mathjax3_config``): the ``textmacros`` extension, so text mode
#: (``\text{...}``) understands ``\_`` as an underscore, as JupyterLab's MathJax does. The
#: loader takes it from ``[tex]/textmacros``, ``input/tex/extensions/textmacros.js`` beside
#: the bundled ``tex-chtml.js`` in ``_static/mathjax`` (``sphinx-mathjax-offline`` copies the
#: whole MathJax folder), so it is served by the site itself like the rest of MathJax.
MATHJAX = {"loader": {"load": ["[tex]/textmacros"]}, "tex": {"packages": {"[+]": ["textmacros"]}}}

INDEX = """# {title}

Notebooks that teach positional encoding, from the sinusoids of the original
transformer to the rotary embeddings (RoPE) inside today's open models. Every
number a page states was computed by the code cell beside it and is checked by
an `assert`.

This site is the static book: the notebooks with their stored outputs, to read
without installing anything. The slider demos need a running Python kernel; to
move them, clone the repository and run `make lab` (see [its README]({readme})).

Start with the first chapter in the sidebar, or pick one:

{chapters}

The code is under the MIT licence; the text and the figures are under
CC BY 4.0 (see LICENSE and LICENSE-TEXT in the repository).
"""


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def is_progress_bar(output: dict) -> bool:
    """True for a stored tqdm bar: a widget whose plain text is the bar.

    >>> bar = {"data": {WIDGET_MIME: {}, "text/plain": "rope on prev:   0%|          | 0/1000 [00:00<?, ?step/s]"}}
    >>> is_progress_bar(bar), is_progress_bar({"data": {WIDGET_MIME: {}, "text/plain": "SliderDemo(...)"}})
    (True, False)
    """
    data = output.get("data", {})
    text = data.get("text/plain", "")
    text = "".join(text) if isinstance(text, list) else text
    return WIDGET_MIME in data and bool(PROGRESS_BAR.search(text))


def _remove(cell: dict) -> None:
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if "remove-cell" not in tags:
        tags.append("remove-cell")


def book_notebook(nb: dict, relpath: str) -> dict:
    """The notebook as the book shows it: navigation cells tagged ``remove-cell``, widgets noted.

    A link to an HTML anchor, ``[text](06-flashcards.ipynb#name)``, becomes the HTML
    link ``<a href="06-flashcards.html#name">text</a>``: the anchor is kept in the
    page, but MyST only checks heading anchors and would warn about it.

    >>> nb = {"cells": [
    ...     {"cell_type": "markdown", "metadata": {}, "source": nav.MARK + "\\n[Contents](x)"},
    ...     {"cell_type": "code", "metadata": {}, "source": "demo", "outputs": [
    ...         {"output_type": "display_data", "metadata": {},
    ...          "data": {WIDGET_MIME: {"model_id": "1"}, "text/plain": "SliderDemo(...)"}}]}]}
    >>> out = book_notebook(nb, "notebooks/01-x.ipynb")
    >>> out["cells"][0]["metadata"]["tags"]
    ['remove-cell']
    >>> sorted(out["cells"][1]["outputs"][0]["data"])
    ['text/markdown']
    >>> book_notebook({"cells": [{"cell_type": "markdown", "metadata": {},
    ...     "source": "see [its cards](06-flashcards.ipynb#cards-01)"}]}, "x")["cells"][0]["source"]
    'see <a href="06-flashcards.html#cards-01">its cards</a>'
    """
    nb = json.loads(json.dumps(nb))
    nbtags.convert(nb)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = ANCHOR_LINK.sub(r'<a href="\2.html#\3">\1</a>', _source(cell))
        if cell["cell_type"] == "markdown" and _source(cell).startswith(nav.MARK):
            _remove(cell)
        if cell.get("id") == nav.COLAB_CELL_ID:
            _remove(cell)
        if "outputs" in cell:
            cell["outputs"] = [out for out in cell["outputs"] if not is_progress_bar(out)]
        for output in cell.get("outputs", []):
            if WIDGET_MIME in output.get("data", {}):
                output["data"] = {"text/markdown": LIVE_NOTE.format(path=relpath)}
    nb.get("metadata", {}).pop("widgets", None)
    return nb


def toc(root: Path = ROOT) -> dict:
    """``_toc.yml`` (as a dict): the index, then every numbered notebook, then the solutions, in nav's order."""
    chapters = [{"file": f"notebooks/{e.path.stem}"} for e in nav.entries(root)]
    solutions = [{"file": f"notebooks/solutions/{e.path.stem}"} for e in nav.solutions(root)]
    parts = [{"caption": "Lessons", "chapters": chapters}]
    if solutions:
        parts.append({"caption": "Worked solutions", "chapters": solutions})
    return {"format": "jb-book", "root": "index", "parts": parts}


def config() -> dict:
    """``_config.yml`` (as a dict)."""
    return {
        "title": TITLE,
        "author": "posenc contributors",
        "copyright": "2026",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "repository": {"url": REPOSITORY, "branch": nav.BRANCH, "path_to_book": ""},
        "launch_buttons": {
            "binderhub_url": "https://mybinder.org",
            "colab_url": "https://colab.research.google.com",
            "notebook_interface": "jupyterlab",
        },
        "html": {"use_repository_button": True, "use_issues_button": False, "use_edit_page_button": False},
        "parse": {"myst_enable_extensions": ["dollarmath", "amsmath", "colon_fence", "html_image"]},
        "sphinx": {
            "extra_extensions": ["sphinx-mathjax-offline"],
            "config": {
                # MathJax from the bundled copy in _static/mathjax, never a CDN.
                "mathjax_path": "mathjax/tex-chtml.js",
                "mathjax3_config": MATHJAX,
                # No require.js / widget manager from a CDN: the book's widgets are static notes.
                "nb_ipywidgets_js": {},
                "html_show_copyright": True,
                # One search box: the header's search button (it stays on a phone, where the
                # sidebar folds away); the theme's sidebar search field would be a second one.
                "html_sidebars": {"**": ["navbar-logo.html", "icon-links.html", "sbt-sidebar-nav.html"]},
            },
        },
    }


#: The book's own style sheet (``_static/posenc.css``). An 88-column code line fits the text
#: column at 1280 px (752 px wide, the code box 684 px): 88 characters of a 12 px monospace
#: font take about 640 px. On a phone (390 px) nothing widens the page: inline code (a file
#: path such as ``src/transformers/models/deepseek_v3/modeling_deepseek_v3.py``) wraps, where
#: Sphinx's ``span.pre`` would keep each word on one line; code blocks keep scrolling inside
#: their own box; maths wider than the column scrolls inside its own box, where the theme clips
#: inline maths (``span.math`` is ``overflow: hidden``). MathJax's hidden copy for screen
#: readers (``mjx-assistive-mml``) is a few pixels wider than the typeset formula; it is held to
#: the formula's box, or every inline formula would scroll by those few pixels.
CSS = """/* posenc (tools/book.py writes this file) */

/* code cells fit 88 columns in the text column */
div.cell div.highlight pre, div.cell_output pre {
  font-size: 12px;
  padding-left: 0.75rem;
  padding-right: 0.75rem;
}

/* long inline code wraps rather than widen the page (code blocks, pre, scroll in their box) */
code.literal, code.literal span.pre {
  overflow-wrap: anywhere;
  white-space: normal;
}

/* maths wider than the column scrolls inside its own box, neither clipped nor widening the page */
span.math {
  overflow-x: auto;
  overflow-y: hidden;
}
mjx-container[display="true"] {
  max-width: 100%;
  overflow-x: auto;
}
span.math mjx-container mjx-assistive-mml {
  max-width: 100% !important;
}
"""


def _yaml(data) -> str:
    # JSON is valid YAML 1.2, so no YAML writer is needed.
    return json.dumps(data, indent=2) + "\n"


def stage(src: Path, root: Path = ROOT) -> Path:
    """Write the book's sources into ``src`` (emptied first); return it."""
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks" / "solutions").mkdir(parents=True)
    shutil.copytree(root / "figures", src / "figures")
    items = nav.entries(root) + nav.solutions(root)
    for entry in items:
        rel = entry.path.relative_to(root)
        nb = json.loads(entry.path.read_text(encoding="utf-8"))
        (src / rel).write_text(json.dumps(book_notebook(nb, str(rel)), indent=1) + "\n", encoding="utf-8")
    chapters = "\n".join(f"- [{e.number}. {e.title}](notebooks/{e.path.name})" for e in nav.entries(root))
    (src / "index.md").write_text(INDEX.format(title=TITLE, readme=README_URL, chapters=chapters), encoding="utf-8")
    (src / "_toc.yml").write_text(_yaml(toc(root)), encoding="utf-8")
    (src / "_config.yml").write_text(_yaml(config()), encoding="utf-8")
    (src / "_static").mkdir()
    (src / "_static" / "posenc.css").write_text(CSS, encoding="utf-8")
    return src


def build_shared(tmp_path_factory, *, strict: bool = True) -> Path:
    """The test run's one build of the book: :func:`build` with ``reuse``, in the run's temporary folder.

    Under pytest-xdist every worker has a temporary folder of its own; the
    book goes to their common parent instead, and a lock file makes the
    first worker that needs it build it while another waits and reuses it.
    """
    import os

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no fcntl (Windows): no xdist sharing there
        return build(base / "book", strict=strict, reuse=True)
    with open(base / "book.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return build(base / "book", strict=strict, reuse=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(out: Path = DEFAULT_OUT, strict: bool = False, root: Path = ROOT, reuse: bool = False) -> Path:
    """Stage and build the book; return the folder of the HTML site.

    With ``reuse``, a book already built successfully (strict or not, as asked)
    into ``out`` is returned as it is: the tests share one build this way.
    """
    html, done = Path(out) / "_build" / "html", Path(out) / f".built-{'strict' if strict else 'default'}"
    if reuse and done.is_file() and (html / "index.html").is_file():
        return html
    done.unlink(missing_ok=True)
    src = stage(Path(out) / "src", root)
    command = [
        sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(src),
        "--path-output", str(out), "--builder", "html", "--all",
    ]
    if strict:
        command += ["--warningiserror", "--nitpick", "--keep-going"]
    subprocess.run(command, check=True)
    done.touch()
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.book", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="where to build (default: build/book)")
    parser.add_argument("--strict", action="store_true", help="treat every warning as an error")
    options = parser.parse_args(argv)
    html = build(Path(options.out), strict=options.strict)
    print(f"book: {html / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
