"""Real-browser slider latency: key press to new figure shown, median per demo.

    .venv/bin/python benchmarks/bench_browser.py            # every demo notebook, JupyterLab and Voila
    .venv/bin/python benchmarks/bench_browser.py -k 01-     # extra arguments go to pytest

Runs the browser tests (tests/browser/) in benchmark mode (POSENC_BENCH=1):
each slider is moved 10 times (POSENC_BENCH_STEPS), there and back, and a demo
whose median latency exceeds the 150 ms target fails. The table of medians is
printed at the end; the raw samples go to latencies.json in the artifacts folder.
Needs Chromium at /usr/bin/chromium (or POSENC_CHROMIUM).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = dict(os.environ, POSENC_BENCH="1")
    command = [sys.executable, "-m", "pytest", "tests/browser", "-m", "browser", "-q", *argv]
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
