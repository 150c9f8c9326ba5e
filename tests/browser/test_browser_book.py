"""The built book in a real browser, served from 127.0.0.1: math typeset, images load, full sidebar.

Every request the pages make is recorded; one that leaves 127.0.0.1 (a CDN) fails the test.
At 1280 px (the page fixture's viewport) no display equation is wider than its column, at
most a few code cells scroll sideways, no nbval marker shows, no stored progress bar became
a "Live demo" note, and the page has one search box.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from pathlib import Path

import pytest

from tools import book, nav

ROOT = Path(__file__).resolve().parents[2]

#: Math-heavy prose with a slider demo, RoPE (the most display equations), precision, and the
#: extrapolation lab (its training cells once showed ten progress bars in a row).
PAGES = ["01-clock-hands", "04-rope", "10-precision", "12-extrapolation-lab"]

#: Code cells a page may have that scroll sideways (a wide table printed by a cell, say).
MAX_SCROLLING_CODE_CELLS = 2

#: Display equations whose typeset width exceeds their column (a sideways scroll or a cut).
_WIDE_EQUATIONS = """() => [...document.querySelectorAll('mjx-container[display="true"]')]
  .filter(c => { const m = c.querySelector('mjx-math'); return m && m.getBoundingClientRect().width > c.clientWidth + 1; })
  .map(c => (c.getAttribute('aria-label') || c.textContent).slice(0, 80))"""

#: Code cells (their source) that scroll sideways.
_SCROLLING_CODE = """() => [...document.querySelectorAll('.cell_input pre')]
  .filter(p => p.scrollWidth > p.clientWidth + 1)
  .map(p => p.textContent.split('\\n').find(l => l.length > 0).slice(0, 60))"""

#: Search boxes and search buttons a reader can see.
_SEARCH_BOXES = """() => [...document.querySelectorAll(
    '.search-button-field, button.search-button, .bd-search input, input[type="search"]')]
  .filter(e => { const r = e.getBoundingClientRect(); return e.offsetParent !== null && r.width > 0 && r.height > 0; })
  .length"""

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """The book, built once per session (shared with tests/test_book.py) with every Sphinx warning an error."""
    return book.build_shared(tmp_path_factory, strict=True)

_PROSE_TEXT = """() => {
  const article = document.querySelector('article') || document.body;
  const copy = article.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, mjx-container, .cell_input, .highlight').forEach(e => e.remove());
  return copy.innerText;
}"""


@pytest.fixture(scope="module")
def book_server(built_book):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(built_book))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("name", PAGES)
def test_book_page(page, book_server, artifacts, name):
    outside = []

    def guard(route):
        if route.request.url.startswith(book_server):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    page.goto(f"{book_server}/notebooks/{name}.html", wait_until="load")
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise")
    page.wait_for_function("() => [...document.images].every(i => i.complete)")

    # math typeset: MathJax rendered formulas, and no raw $ is left in the prose
    assert page.locator("mjx-container").count() > 0, "no typeset math"
    prose = page.evaluate(_PROSE_TEXT)
    assert "$" not in prose, [line for line in prose.splitlines() if "$" in line][:5]

    # no broken image, and the page has images at all
    broken = page.evaluate(
        "() => [...document.images].filter(i => i.naturalWidth === 0).map(i => i.getAttribute('src'))"
    )
    assert broken == []
    assert page.locator("article img").count() > 0

    # the sidebar lists every notebook, by its title (Sphinx's smart quotes turn ' into ’)
    sidebar = page.locator("nav.bd-links").inner_text().replace("\u2019", "'")
    for entry in nav.entries(ROOT):
        assert entry.title in sidebar, f"{entry.title!r} missing from the sidebar"

    # the page fits its column at 1280 px: no display equation is wider, few code cells scroll
    assert page.viewport_size["width"] == 1280
    wide = page.evaluate(_WIDE_EQUATIONS)
    assert wide == [], f"display equations wider than the column: {wide}"
    scrolling = page.evaluate(_SCROLLING_CODE)
    assert len(scrolling) <= MAX_SCROLLING_CODE_CELLS, f"{len(scrolling)} code cells scroll sideways: {scrolling}"

    # no test marker and no progress bar on the page; a live-demo note only where a demo was
    text = page.inner_text("article")
    assert "NBVAL" not in text
    assert "0/1000 [" not in text and "step/s]" not in text
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    demos = sum(
        book.WIDGET_MIME in out.get("data", {}) and not book.is_progress_bar(out)
        for cell in nb["cells"]
        for out in cell.get("outputs", [])
    )
    assert text.count("Live demo.") == demos

    # one search box
    assert page.evaluate(_SEARCH_BOXES) == 1

    assert outside == [], f"requests left 127.0.0.1: {outside}"
    shot = artifacts / f"book-{name}.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 0
