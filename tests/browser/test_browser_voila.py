"""Presentation mode: a slider demo notebook served by Voilà (as `make present` does), in a real Chromium.

The page must show prose, figures and sliders but no code, and a slider must
move its figure exactly as in JupyterLab. The server is conftest's
``voila_server``, which the stopped-run test holds too.
"""

from __future__ import annotations

import re

import posenc_browser as pb
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_presentation_mode_hides_code_and_moves_a_slider(voila_server, page, artifacts, latency_records):
    server, copy = voila_server
    page.goto(f"{server.url}/?token={server.token}", wait_until="domcontentloaded", timeout=120000)
    count = pb.wait_for_demos(page, timeout_ms=180000)
    assert count >= 1, f"Voila shows no .posenc-demo for {copy.name}"

    # Prose shown, code hidden: no code input, editor or prompt is visible, and no line of code is in the page.
    assert page.locator(".jp-MarkdownCell:visible, .jp-RenderedMarkdown:visible").count() >= 1, "no prose shown"
    code_inputs = ".jp-CodeCell .jp-InputArea:visible, .jp-CodeMirrorEditor:visible, .cm-editor:visible, .jp-InputPrompt:visible"
    assert page.locator(code_inputs).count() == 0, "Voila shows code cell inputs"
    text = page.inner_text("body")
    code_line = pb.first_code_line(copy)
    assert code_line and code_line not in text, f"Voila shows code: {code_line!r}"
    # No cell failed (Voila runs with --show_tracebacks=True, so an error would be printed).
    assert "Traceback" not in text and not re.search(r"There was an error when executing cell", text), text[-2000:]

    # Figures shown: every markdown image (../figures/NN-slug.png) was inlined and loads.
    page.wait_for_load_state("load")
    assert pb.broken_images(page) == [], f"broken images in Voila: {pb.broken_images(page)}"
    if "../figures/" in copy.read_text(encoding="utf-8"):
        assert pb.markdown_images(page) >= 1, "the notebook shows figures/ images but Voila shows none"

    records, problems = pb.exercise_demos(page, copy.name, "voila", artifacts, steps=pb.steps_per_slider())
    latency_records.extend(records)
    assert problems == [], "\n".join(problems)
    budget = pb.latency_budget_ms()
    if budget is not None:
        slow = [r for r in records if r["latencies_ms"] and pb.median(r["latencies_ms"]) > budget]
        assert not slow, f"median latency over {budget:.0f} ms in Voila: {[r['demo'] for r in slow]}"
