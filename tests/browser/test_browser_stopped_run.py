"""A stopped run leaves nothing behind: SIGTERM or SIGKILL a browser-test run while it holds its servers.

CI's time limit stops `make test` with SIGTERM. Here a child
``python -m pytest tests/browser/hold_servers.py`` starts JupyterLab (with a
kernel) and Voila (with the presentation page open in Chromium) through the
browser tests' own fixtures, and waits. Once both servers answer, the test
checks that they listen on 127.0.0.1 only, takes the child's whole process
tree from /proc (servers, kernels, playwright's driver, Chromium), sends the
signal, and checks that every process of that tree is gone and no server port
accepts a connection within GONE_WITHIN_S of the child's exit.

* SIGTERM: the child must stop in order (its handler raises, pytest tears the
  fixtures down and exits as interrupted, code 2), the servers stopped before
  it exits;
* SIGKILL: no teardown can run; the servers' parent-death signal stops them.

Whatever happens, the test then kills what is left of the tree, so a failure
here leaves nothing behind either. Linux only (it reads /proc); skipped in
benchmark mode (``make bench-browser``), which measures latency only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import posenc_browser as pb
import posenc_lifetime as lifetime
import pytest

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from Linux's /proc"),
    pytest.mark.skipif(pb.bench_mode(), reason="a benchmark run (POSENC_BENCH=1) measures latency; make test stops a run"),
]

HOLD = Path(__file__).with_name("hold_servers.py")

#: How long the child may take to start both servers, Chromium and the Voila page (a busy 2-core machine).
READY_WITHIN_S = 300

#: How long after SIGTERM the child may take to tear down and exit.
EXIT_WITHIN_S = 60

#: How long after the child's exit any process of its tree may still run, or any server port accept.
GONE_WITHIN_S = 10


def accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def read_record(path: Path) -> tuple[list[dict], int | None]:
    """The servers the child announced, and the pid of its test once it holds them (else None)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    holding = [line["holding"] for line in lines if "holding" in line]
    return [line for line in lines if "server" in line], (holding[0] if holding else None)


def start_child(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    record, log = tmp_path / "servers.jsonl", tmp_path / "child.log"
    env = dict(os.environ, POSENC_SERVER_RECORD=str(record))
    command = [sys.executable, "-m", "pytest", str(HOLD), "-q", "-p", "no:randomly", f"--basetemp={tmp_path / 'base'}"]
    with open(log, "wb") as handle:
        child = subprocess.Popen(
            command, cwd=pb.ROOT, env=env, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=lifetime.parent_death_preexec(),
        )
    return child, record, log


def wait_until_holding(child: subprocess.Popen, record: Path, log: Path) -> list[dict]:
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        servers, holding = read_record(record)
        if holding is not None:
            return servers
        if child.poll() is not None:
            pytest.fail(f"the child run ended ({child.returncode}) before it held its servers:\n"
                        + log.read_text(errors="replace")[-4000:])
        time.sleep(0.5)
    pytest.fail(f"the child run did not hold its servers within {READY_WITHIN_S} s:\n" + log.read_text(errors="replace")[-4000:])


def left_behind(tree: dict[int, int], ports: list[int]) -> list[str]:
    """What still runs of ``tree`` (pid and command line), and which ports still accept."""
    running = [f"pid {pid}: {lifetime.command_line(pid)[:120]}" for pid, start in tree.items() if lifetime.alive(pid, start)]
    return running + [f"port {port} accepts connections" for port in ports if accepts(port)]


# SIGTERM, what CI's time limit sends, in every `make test`; SIGKILL (a minute more) in `make test-all` (`full`)
@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(getattr(signal, "SIGKILL", None), marks=pytest.mark.full)],
                         ids=["SIGTERM", "SIGKILL"])
def test_a_stopped_run_leaves_no_server_behind(sig, tmp_path, browser_required):
    child, record, log = start_child(tmp_path)
    tree: dict[int, int] = {}
    try:
        servers = wait_until_holding(child, record, log)
        assert sorted(s["server"] for s in servers) == ["JupyterLab", "Voila"], servers
        ports = [s["port"] for s in servers]
        for server in servers:
            assert lifetime.listening_addresses(server["port"]) == {"127.0.0.1"}, server
        tree = lifetime.process_tree(child.pid)
        commands = [lifetime.command_line(pid) for pid in tree]
        assert {s["pid"] for s in servers} <= set(tree), (servers, commands)
        assert sum("ipykernel" in c for c in commands) >= 2, commands  # Lab's kernel and Voila's
        assert any("chrom" in c for c in commands), commands

        signalled = time.monotonic()
        os.kill(child.pid, sig)
        child.wait(EXIT_WITHIN_S)
        exited = time.monotonic()
        output = log.read_text(errors="replace")
        at_exit = [line for line in left_behind(tree, ports) if any(f"pid {s['pid']}:" in line for s in servers)]

        remaining = left_behind(tree, ports)
        while remaining and time.monotonic() < exited + GONE_WITHIN_S:
            time.sleep(0.1)
            remaining = left_behind(tree, ports)
        gone = time.monotonic()
        print(f"\n{sig.name}: {len(tree)} processes; the child exited {exited - signalled:.1f} s after the signal "
              f"(code {child.returncode}); all gone {gone - exited:.1f} s after that")

        assert remaining == [], f"{sig.name} left behind, {GONE_WITHIN_S} s after the run ended:\n" + "\n".join(remaining)
        if sig == signal.SIGTERM:
            assert child.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
            assert "stopped by SIGTERM" in output, output[-3000:]
            assert at_exit == [], f"servers still running when the run had exited: {at_exit}"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        lifetime.kill_survivors(tree)
