"""Servers that die with the test run: a run stopped with SIGTERM or SIGKILL leaves no server behind.

Used by ``posenc_browser`` (which starts the servers) and by
``test_browser_stopped_run.py`` (which stops a run and reads the process table).
Three layers, each covering one way a run can end:

* the fixtures stop each server as soon as its tests end (module-scoped, with
  try/finally), failures included;
* while a server runs, SIGTERM to this process (CI's time limit) becomes an
  orderly stop: :func:`track` installs a handler that sends SIGTERM to every
  server's process group and raises :class:`RunStopped`, a KeyboardInterrupt,
  so pytest runs the fixtures' teardown and exits as interrupted (code 2). An
  ``atexit`` hook kills any group still tracked;
* on Linux each server gets a parent-death signal
  (``prctl(PR_SET_PDEATHSIG, SIGTERM)``, :func:`parent_death_preexec`): if
  this process is killed outright (SIGKILL), the kernel sends the server
  SIGTERM. Linux sends it when the *thread* that forked the server exits, so
  only a server started from the main thread gets it.

The rest reads Linux's /proc: a process tree with start times (a reused PID
is not mistaken for a survivor), and the addresses a port listens on.
Elsewhere these return nothing, and the stopped-run test skips.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

#: From <linux/prctl.h>.
PR_SET_PDEATHSIG = 1

_TRACKED: set[int] = set()  # process-group ids (= pids) of the running servers
_TERMINATED: set[int] = set()  # the groups already sent SIGTERM
_STATE: dict = {"previous": None, "installed": False, "stopping": False, "atexit": False}


class RunStopped(KeyboardInterrupt):
    """Raised in the main thread on SIGTERM while a server runs, so that pytest tears its fixtures down."""


# --------------------------------------------------------------------------- the parent-death signal


def _prctl():
    """libc's prctl, resolved before any fork (the child then only calls it), or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


def parent_death_preexec(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child sent ``sig`` when this thread exits; None where that cannot work.

    None off Linux, without ctypes, or outside the main thread (a worker thread
    that ends would take the server with it). The child checks its parent
    after the call: had the parent died in between, the signal would never
    come, so it kills itself.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


# --------------------------------------------------------------------------- SIGTERM while a server runs


def terminate(group: int) -> None:
    """Send SIGTERM to a server's process group, once: a second one restarts Jupyter's shutdown midway."""
    if group in _TERMINATED:
        return
    _TERMINATED.add(group)
    try:
        os.killpg(group, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


def _on_sigterm(signum, frame) -> None:
    """Start every server's shutdown now; the first time, also unwind the run so teardown runs."""
    for group in list(_TRACKED):
        terminate(group)
    if not _STATE["stopping"]:
        _STATE["stopping"] = True
        raise RunStopped("stopped by SIGTERM: the servers are being shut down")


def _kill_left_groups() -> None:
    for group in list(_TRACKED):
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def track(pid: int) -> None:
    """Remember a server started in its own process group; the first one installs the SIGTERM handler."""
    _TRACKED.add(pid)
    if not _STATE["atexit"]:
        atexit.register(_kill_left_groups)
        _STATE["atexit"] = True
    if not _STATE["installed"]:
        try:
            _STATE["previous"] = signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:  # not the main thread: teardown and the parent-death signal still hold
            return
        _STATE["installed"] = True


def forget(pid: int) -> None:
    """The server is stopped; after the last one, SIGTERM does what it did before."""
    _TRACKED.discard(pid)
    _TERMINATED.discard(pid)
    if _TRACKED or not _STATE["installed"]:
        return
    try:
        signal.signal(signal.SIGTERM, _STATE["previous"] or signal.SIG_DFL)
    except ValueError:
        return
    _STATE["installed"] = False


# --------------------------------------------------------------------------- the process table (Linux /proc)


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, start time in clock ticks) of a process, or None if there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
    return fields[0], int(fields[1]), int(fields[19])


def process_tree(pid: int) -> dict[int, int]:
    """``pid`` and all its descendants, each with its start time (empty off Linux or if it is gone)."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        stat = _stat(int(entry.name))
        if stat is not None:
            children.setdefault(stat[1], []).append(int(entry.name))
            starts[int(entry.name)] = stat[2]
    tree, todo = {}, [pid]
    while todo:
        current = todo.pop()
        if current in starts and current not in tree:
            tree[current] = starts[current]
            todo.extend(children.get(current, []))
    return tree


def alive(pid: int, start: int) -> bool:
    """Whether that very process (same start time) still runs; a zombie is dead, only not yet reaped."""
    stat = _stat(pid)
    return stat is not None and stat[2] == start and stat[0] != "Z"


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def kill_survivors(tree: dict[int, int], sig: int = getattr(signal, "SIGKILL", signal.SIGTERM)) -> list[int]:
    """Send ``sig`` to every process of ``tree`` still alive; return their pids."""
    survivors = [pid for pid, start in tree.items() if alive(pid, start)]
    for pid in survivors:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    return survivors


def listening_addresses(port: int) -> set[str]:
    """The local addresses (``127.0.0.1``, ``0.0.0.0``, ``::``...) with a TCP socket listening on ``port``."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port and len(address) == width:
                found.add(_address(address))
    return found


def _address(hex_address: str) -> str:
    """/proc/net/tcp's address (each 32-bit word in host order, little-endian here) as text.

    >>> _address("0100007F"), _address("00000000"), _address("0" * 32)  # 7F.00.00.01 read backwards
    ('127.0.0.1', '0.0.0.0', '::')
    """
    import ipaddress

    raw = b"".join(bytes.fromhex(hex_address[i:i + 8])[::-1] for i in range(0, len(hex_address), 8))
    return str(ipaddress.ip_address(raw))
