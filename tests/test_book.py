"""The static book (make book): it builds with warnings as errors, from stored outputs, offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools import book, nav

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """The book, built once per session (shared with tests/browser/test_browser_book.py) with every Sphinx warning an error."""
    return book.build(tmp_path_factory.getbasetemp() / "book", strict=True, reuse=True)


def _html(built_book: Path, entry: nav.Entry) -> str:
    rel = entry.path.relative_to(ROOT / "notebooks").with_suffix(".html")
    return (built_book / "notebooks" / rel).read_text(encoding="utf-8")


def test_book_builds_a_page_per_notebook(built_book):
    assert (built_book / "index.html").is_file()
    for entry in nav.entries(ROOT) + nav.solutions(ROOT):
        assert entry.title.split(":")[0] in _html(built_book, entry), entry.path.name


def test_toc_comes_from_the_navigation_entries():
    files = [ch["file"] for part in book.toc(ROOT)["parts"] for ch in part["chapters"]]
    expected = [f"notebooks/{e.path.stem}" for e in nav.entries(ROOT)]
    expected += [f"notebooks/solutions/{e.path.stem}" for e in nav.solutions(ROOT)]
    assert files == expected


def test_navigation_cells_are_dropped(built_book):
    for entry in nav.entries(ROOT):
        html = _html(built_book, entry)
        assert "[Contents](../README.md#contents)" not in html and "README.md#contents" not in html, entry.path.name


def test_notebooks_are_not_re_executed():
    assert book.config()["execute"]["execute_notebooks"] == "off"


def test_every_live_widget_becomes_a_note(built_book):
    for entry in nav.entries(ROOT):
        nb = json.loads(entry.path.read_text(encoding="utf-8"))
        widgets = sum(
            book.WIDGET_MIME in out.get("data", {}) for cell in nb["cells"] for out in cell.get("outputs", [])
        )
        html = _html(built_book, entry)
        assert html.count("Live demo.") == widgets, entry.path.name
        assert "SliderDemo(" not in html


def test_math_is_served_from_the_site_itself(built_book):
    # a page with math (a page without any gets no MathJax script at all)
    html = _html(built_book, next(e for e in nav.entries(ROOT) if e.path.name == "04-rope.ipynb"))
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', html)
    assert any(s.endswith("_static/mathjax/tex-chtml.js") for s in scripts), scripts
    assert (built_book / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert not [s for s in scripts if s.startswith(("http://", "https://", "//"))], scripts


def test_figures_are_in_the_site(built_book):
    for path in (ROOT / "figures").glob("*.png"):
        assert (built_book / "_images" / path.name).is_file(), path.name
