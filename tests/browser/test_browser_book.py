"""The built book in a real browser, served from 127.0.0.1: math typeset, images load, full sidebar.

Every request the pages make is recorded; one that leaves 127.0.0.1 (a CDN) fails the test.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

from tools import book, nav

ROOT = Path(__file__).resolve().parents[2]

#: Three pages: math-heavy prose with a slider demo, RoPE, and the precision lesson.
PAGES = ["01-clock-hands", "04-rope", "10-precision"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """The book, built once per session (shared with tests/test_book.py) with every Sphinx warning an error."""
    return book.build(tmp_path_factory.getbasetemp() / "book", strict=True, reuse=True)

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

    # the sidebar lists every notebook, by its title
    sidebar = page.locator("nav.bd-links").inner_text()
    for entry in nav.entries(ROOT):
        assert entry.title in sidebar, f"{entry.title!r} missing from the sidebar"

    assert outside == [], f"requests left 127.0.0.1: {outside}"
    shot = artifacts / f"book-{name}.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 0
