"""The run that test_browser_stopped_run.py stops; a normal run never collects it (its name is not test_*.py).

It holds what the browser tests hold, through the same fixtures: JupyterLab
with a kernel running, and Voila with the presentation page open in Chromium.
It checks that each server listens on 127.0.0.1 and refuses a request without
its token, writes ``{"holding": pid}`` to ``$POSENC_SERVER_RECORD`` (where the
servers wrote their pids and ports) and waits, up to HOLD_S, to be stopped.
"""

from __future__ import annotations

import http.client
import json
import os
import time

import posenc_browser as pb

#: How long the run waits to be stopped before it fails on its own.
HOLD_S = 300


def refused_without_token(server: pb.Server, path: str) -> bool:
    """Whether ``path`` without the token is refused (401, 403) or sent to the login page."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        location = response.getheader("Location") or ""
    finally:
        connection.close()
    return response.status in {401, 403} or (300 <= response.status < 400 and "/login" in location)


def test_hold_the_servers_until_stopped(lab_server, voila_server, page):
    status, body = lab_server.api("/api/kernels", method="POST", body={"name": "python3"})
    assert status == 201, body[:500]
    assert refused_without_token(lab_server, "/api/kernels")

    server, copy = voila_server
    page.goto(f"{server.url}/?token={server.token}", wait_until="domcontentloaded", timeout=120000)
    assert pb.wait_for_demos(page, timeout_ms=180000) >= 1, f"Voila shows no demo for {copy.name}"
    assert refused_without_token(server, "/")

    with open(os.environ["POSENC_SERVER_RECORD"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"holding": os.getpid()}) + "\n")
    time.sleep(HOLD_S)
    raise AssertionError(f"nobody stopped this run within {HOLD_S} s")
