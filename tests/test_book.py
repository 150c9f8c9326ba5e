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
    return book.build_shared(tmp_path_factory, strict=True)


def _html(built_book: Path, entry: nav.Entry) -> str:
    rel = entry.path.relative_to(ROOT / "notebooks").with_suffix(".html")
    return (built_book / "notebooks" / rel).read_text(encoding="utf-8")


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_book_builds_a_page_per_notebook(built_book):
    assert (built_book / "index.html").is_file()
    for entry in nav.entries(ROOT) + nav.solutions(ROOT):
        assert entry.title.split(":")[0] in _html(built_book, entry), entry.path.name


def test_toc_comes_from_the_navigation_entries():
    files = [ch["file"] for part in book.toc(ROOT)["parts"] for ch in part["chapters"]]
    expected = [f"notebooks/{e.path.stem}" for e in nav.entries(ROOT)]
    expected += [f"notebooks/solutions/{e.path.stem}" for e in nav.solutions(ROOT)]
    assert files == expected


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_navigation_cells_are_dropped(built_book):
    for entry in nav.entries(ROOT):
        html = _html(built_book, entry)
        assert "[Contents](../README.md#contents)" not in html and "README.md#contents" not in html, entry.path.name


def test_notebooks_are_not_re_executed():
    assert book.config()["execute"]["execute_notebooks"] == "off"


def _outputs(entry: nav.Entry) -> list[dict]:
    nb = json.loads(entry.path.read_text(encoding="utf-8"))
    return [out for cell in nb["cells"] for out in cell.get("outputs", [])]


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_every_live_widget_becomes_a_note_and_progress_bars_are_dropped(built_book):
    for entry in nav.entries(ROOT):
        outputs = _outputs(entry)
        demos = sum(book.WIDGET_MIME in out.get("data", {}) and not book.is_progress_bar(out) for out in outputs)
        html = _html(built_book, entry)
        assert html.count("Live demo.") == demos, entry.path.name
        assert "SliderDemo(" not in html and "step/s]" not in html, entry.path.name


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_page_12_has_no_note_for_its_progress_bars(built_book):
    entry = next(e for e in nav.entries(ROOT) if e.number == "12")
    bars = [out for out in _outputs(entry) if book.is_progress_bar(out)]
    assert len(bars) >= 5  # the stored notebook keeps them (one for the seven live models); the page does not
    assert _html(built_book, entry).count("Live demo.") == 0


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_no_test_marker_and_no_colab_cell_on_a_page(built_book):
    for entry in nav.entries(ROOT) + nav.solutions(ROOT):
        html = _html(built_book, entry)
        assert "NBVAL" not in html, entry.path.name
        assert "google.colab" not in html, entry.path.name


def test_the_book_marks_nbval_comments_as_tags():
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": "# NBVAL_SKIP\nx = 1"}]}
    cell = book.book_notebook(nb, "x")["cells"][0]
    assert cell["source"] == "x = 1" and cell["metadata"]["tags"] == ["nbval-skip"]


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_one_search_box(built_book):
    # the header's search button stays; the theme's sidebar search field (a second box) is configured
    # away (tests/browser/test_browser_book.py counts the visible ones: one)
    html = _html(built_book, nav.entries(ROOT)[0])
    start = html.index("bd-sidebar-primary")
    sidebar = html[start : html.index("<main", start)]
    assert "search-button-field" not in sidebar
    assert "search-button search-button__button" in html


def test_code_fits_88_columns_of_the_books_font():
    # 88 characters of a 12 px monospace font (about 0.6 em a character) in the 684 px code box
    assert "font-size: 12px" in book.CSS
    assert 88 * 12 * 0.61 + 2 * 12 <= 684


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_math_is_served_from_the_site_itself(built_book):
    # a page with math (a page without any gets no MathJax script at all)
    html = _html(built_book, next(e for e in nav.entries(ROOT) if e.path.name == "04-rope.ipynb"))
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', html)
    assert any(s.endswith("_static/mathjax/tex-chtml.js") for s in scripts), scripts
    assert (built_book / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert not [s for s in scripts if s.startswith(("http://", "https://", "//"))], scripts


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_figures_are_in_the_site(built_book):
    for path in (ROOT / "figures").glob("*.png"):
        assert (built_book / "_images" / path.name).is_file(), path.name


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_every_pages_launch_buttons_open_that_notebook(built_book):
    """The book's Binder and Colab buttons: the address nav builds from pyproject, for a file that exists."""
    for entry in nav.entries(ROOT) + nav.solutions(ROOT):
        html = _html(built_book, entry)
        rel = entry.path.relative_to(ROOT).as_posix()
        hrefs = set(re.findall(r'href="(https://(?:colab\.research\.google\.com|mybinder\.org)/[^"]+)"', html))
        assert hrefs == {nav.colab_url(rel), nav.binder_url(rel)}, (rel, hrefs)
        assert (ROOT / rel).is_file()
