"""The static book (make book): it builds with warnings as errors, from stored outputs, offline."""

from __future__ import annotations

import html.parser
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
    # the textmacros extension (\text{head\_dim} shows head_dim), loaded from the site's own copy
    config = json.loads(re.search(r"<script>window\.MathJax = (\{.*\})</script>", html).group(1))
    assert "[tex]/textmacros" in config["loader"]["load"] and "textmacros" in config["tex"]["packages"]["[+]"]
    assert (built_book / "_static" / "mathjax" / "input" / "tex" / "extensions" / "textmacros.js").is_file()


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


class _Landing(html.parser.HTMLParser):
    """A built page's ``<title>``, the header's site title, the article's first ``<h1>`` and its links."""

    def __init__(self):
        super().__init__()
        self.title, self.site_title, self.h1, self.links = "", "", None, []
        self._into, self._in_article, self._href = None, False, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "article":
            self._in_article = True
        if tag == "title":
            self._into = "title"
        elif tag == "p" and "logo__title" in (attrs.get("class") or "").split():
            self._into = "site_title"
        elif tag == "h1" and self._in_article and self.h1 is None:
            self.h1, self._into = "", "h1"
        elif tag == "a" and self._into == "h1":
            self._into = None  # the heading's permalink (#)
        if tag == "a" and self._in_article and attrs.get("href"):
            self._href = [attrs["href"], ""]
            self.links.append(self._href)

    def handle_endtag(self, tag):
        if tag in {"title", "p", "h1"}:
            self._into = None
        if tag == "a":
            self._href = None
        if tag == "article":
            self._in_article = False

    def handle_data(self, data):
        if self._into:
            setattr(self, self._into, getattr(self, self._into) + data)
        if self._href is not None:
            self._href[1] += data


def test_the_landing_page_links_the_readme_and_has_the_sites_title(tmp_path):
    """Fast: the staged sources. The landing page's heading is the site's title, its README a link."""
    src = book.stage(tmp_path / "src", ROOT)
    index = (src / "index.md").read_text(encoding="utf-8")
    config = json.loads((src / "_config.yml").read_text(encoding="utf-8"))  # JSON, which is YAML
    assert index.splitlines()[0] == f"# {config['title']}" == f"# {book.TITLE}"
    assert f"(see [its README]({book.README_URL}))" in index
    # the README of the repository that pyproject.toml's [project.urls] names, on the book's branch
    assert book.README_URL == f"{nav.repository()}/blob/{nav.BRANCH}/README.md"
    assert (ROOT / "README.md").is_file()


@pytest.mark.slow  # reads the whole book, which Sphinx builds once per session (10-20 s)
def test_the_built_landing_page_links_the_readme_under_the_sites_one_title(built_book):
    page = _Landing()
    page.feed((built_book / "index.html").read_text(encoding="utf-8"))
    heading = page.h1.strip()
    assert heading == book.TITLE
    assert page.site_title.strip() == heading  # the header's title is the page's heading
    assert page.title.split(" \u2014 ")[0] == heading  # <title>: the page's title, then the site's
    assert page.title.split(" \u2014 ")[-1] == heading
    assert [book.README_URL, "its README"] in page.links, page.links
    # every other page is under the same site title
    other = _Landing()
    other.feed(_html(built_book, nav.entries(ROOT)[0]))
    assert other.site_title.strip() == heading and other.title.endswith(f" \u2014 {heading}")
