"""The built book in a real browser, served from 127.0.0.1: math typeset, images load, full sidebar.

Every request the pages make is recorded; one that leaves 127.0.0.1 (a CDN) fails the test.
At 1280 px (the page fixture's viewport) no display equation is wider than its column, at
most a few code cells scroll sideways, no nbval marker shows, no stored progress bar became
a "Live demo" note, and the page has one search box.

Every page of the book, once typeset, shows no TeX escape ``\\_`` (MathJax's ``textmacros``,
loaded from the site, turns ``\\text{head\\_dim}`` into head_dim), and at a phone's width
(390 px) no page scrolls sideways: long inline code wraps, and maths wider than the column
scrolls inside its own box.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from pathlib import Path

import posenc_browser as pb
import pytest

from tools import book, nav

ROOT = Path(__file__).resolve().parents[2]

#: Math-heavy prose with a slider demo, RoPE (the most display equations), precision, and the
#: extrapolation lab (its training cells once showed ten progress bars in a row).
PAGES = ["01-clock-hands", "04-rope", "10-precision", "12-extrapolation-lab"]

#: Every page of the book: the landing page, each lesson, each worked solution.
ALL_PAGES = (
    ["index"]
    + [f"notebooks/{e.path.stem}" for e in nav.entries(ROOT)]
    + [f"notebooks/solutions/{e.path.stem}" for e in nav.solutions(ROOT)]
)

#: Code cells a page may have that scroll sideways (a wide table printed by a cell, say).
MAX_SCROLLING_CODE_CELLS = 2

#: A phone's viewport (an iPhone 12 to 15: 390 x 844 CSS pixels).
PHONE = {"width": 390, "height": 844}

#: Display equations whose typeset width exceeds their column (a sideways scroll or a cut).
_WIDE_EQUATIONS = """() => [...document.querySelectorAll('mjx-container[display="true"]')]
  .filter(c => { const m = c.querySelector('mjx-math'); return m && m.getBoundingClientRect().width > c.clientWidth + 1; })
  .map(c => (c.getAttribute('aria-label') || c.textContent).slice(0, 80))"""

#: Code cells (their source) that scroll sideways.
_SCROLLING_CODE = """() => [...document.querySelectorAll('.cell_input pre')]
  .filter(p => p.scrollWidth > p.clientWidth + 1)
  .map(p => p.textContent.split('\\n').find(l => l.length > 0).slice(0, 60))"""

#: The page's own width and the viewport's: wider means the page itself scrolls sideways.
_PAGE_WIDTH = "() => ({page: document.documentElement.scrollWidth, viewport: window.innerWidth})"

#: What sticks out past the viewport's right edge: each outermost element that does, outside any
#: box that scrolls or clips (a code block's spans) and not fixed (the theme's folded sidebars).
_STICKING_OUT = """() => {
  const edge = window.innerWidth + 1;
  const inBox = e => { if (getComputedStyle(e).position === 'fixed') return true;
    for (let a = e.parentElement; a; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX !== 'visible' || style.position === 'fixed') return true;
    }
    return false; };
  return [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > edge
      && !(e.parentElement && e.parentElement.getBoundingClientRect().right > edge) && !inBox(e))
    .slice(0, 5)
    .map(e => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} to ${Math.round(e.getBoundingClientRect().right)} px: `
      + (e.textContent || '').trim().slice(0, 60));
}"""

#: Typeset maths wider than its box (inline maths' span.math, a display equation's container)
#: that the box cuts off instead of scrolling.
_CLIPPED_MATH = """() => [...document.querySelectorAll('span.math, mjx-container[display="true"]')]
  .map(box => [box, box.querySelector('mjx-math')])
  .filter(([box, m]) => m && m.getBoundingClientRect().width > box.clientWidth + 1
    && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX))
  .map(([box, m]) => `${Math.round(m.getBoundingClientRect().width)} px in ${box.clientWidth} px: `
    + (box.getAttribute('aria-label') || box.textContent || '').slice(0, 60))"""

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


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no line per request on stderr
        pass


@pytest.fixture(scope="module")
def book_server(built_book):
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def phone_page(chromium):
    """A page at a phone's width (:data:`PHONE`), as the ``page`` fixture is at 1280 px."""
    yield from pb.new_page(chromium, PHONE)


def _open(page, book_server: str, path: str) -> dict[str, list[str]]:
    """Open ``path`` (``index``, ``notebooks/04-rope``) once typeset, its images loaded.

    Returns the requests made, ``{"site": [...], "outside": [...]}``; each one outside
    ``book_server`` was refused.
    """
    requests = {"site": [], "outside": []}

    def guard(route):
        if route.request.url.startswith(book_server):
            requests["site"].append(route.request.url)
            route.continue_()
        else:
            requests["outside"].append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    page.goto(f"{book_server}/{path}.html", wait_until="load")
    # a page without math has no MathJax script at all
    if page.evaluate("() => !!document.querySelector('script[src*=\"mathjax/\"]')"):
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
        page.evaluate("() => MathJax.startup.promise")
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    return requests


@pytest.mark.parametrize("name", PAGES)
def test_book_page(page, book_server, artifacts, name):
    outside = _open(page, book_server, f"notebooks/{name}")["outside"]

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


@pytest.mark.parametrize("path", ALL_PAGES)
def test_every_page_typesets_and_fits_a_phone(phone_page, book_server, path):
    """Typeset, no page shows ``\\_`` (``\\text{attn\\_scale}`` reads attn_scale, as in JupyterLab), and at 390 px
    the page itself is no wider than the screen: wide maths scrolls in its own box. One load per page."""
    requests = _open(phone_page, book_server, path)
    text = phone_page.evaluate("() => document.body.innerText")
    assert "\\_" not in text, [line for line in text.splitlines() if "\\_" in line][:5]
    assert phone_page.locator("mjx-merror").count() == 0, "MathJax could not typeset a formula"
    if phone_page.locator("mjx-container").count():
        # the extension came from the site's own MathJax copy
        textmacros = "/_static/mathjax/input/tex/extensions/textmacros.js"
        assert [u for u in requests["site"] if u.endswith(textmacros)], f"{textmacros} was not loaded"
    width = phone_page.evaluate(_PAGE_WIDTH)
    assert width["viewport"] == PHONE["width"]
    assert width["page"] <= width["viewport"] + 1, (
        f"the page is {width['page']} px wide on a {width['viewport']} px screen: {phone_page.evaluate(_STICKING_OUT)}"
    )
    clipped = phone_page.evaluate(_CLIPPED_MATH)
    assert clipped == [], f"maths cut off by its box instead of scrolling: {clipped[:5]}"
    assert requests["outside"] == [], f"requests left 127.0.0.1: {requests['outside']}"
