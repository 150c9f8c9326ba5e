"""Which machine computed a stored results file, and whether this machine is the same kind.

Training is bit-for-bit reproducible on one machine, but a thousand steps on
another processor, other numeric libraries or other XLA flags take another
path: the retrained model is then another draw, like another seed. So every
stored file the tests retrain records the fingerprint of the machine that
computed it (:func:`fingerprint`): the processor (model name and a hash of its
feature flags, :func:`.cache.cpu`), the versions of jax, jaxlib, optax and
numpy, and the XLA flags its models trained with. A retrain check compares bit
for bit only where the fingerprints match (:func:`same`), and says so when
they do not; everywhere it checks what must survive a change of machine: the
retrained row lies within the sweep's spread over seeds, and every claim holds
on it.

>>> here = fingerprint()
>>> same(here, here)
(True, 'the same processor, libraries and XLA flags')
>>> same({**here, "xla_flags": "--xla_cpu_max_isa=AVX2"}, here)[0]
False
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["fingerprint", "same", "stored", "stamp"]

#: The XLA flag the lab's workers train with (:data:`.pool.XLA_ONE_THREAD`), written out here so that this module
#: imports no JAX.
_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false"


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("jax", "jaxlib", "optax", "numpy"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def fingerprint(*, worker=True) -> dict:
    """This machine's fingerprint: processor, library versions, and the XLA flags a model trains with here.

    ``worker=True`` (the sweeps and the retrain checks): the flags of a worker
    of the lab's pool, ``$XLA_FLAGS`` with one XLA thread added; ``False``: this
    process's ``$XLA_FLAGS``.
    """
    from .cache import cpu

    flags = os.environ.get("XLA_FLAGS", "").split()
    if worker and _ONE_THREAD not in flags:
        flags.append(_ONE_THREAD)
    return {"cpu": cpu(), "versions": _versions(), "xla_flags": " ".join(sorted(flags))}


def same(theirs, here=None) -> tuple[bool, str]:
    """Whether a stored fingerprint is this machine's, and in what it differs (or what is missing).

    >>> same(None, fingerprint())
    (False, 'the file records no fingerprint')
    """
    here = fingerprint() if here is None else here
    if not theirs:
        return False, "the file records no fingerprint"
    differ = []
    if theirs.get("cpu") != here["cpu"]:
        differ.append(f"processor {theirs.get('cpu')} here {here['cpu']}")
    if theirs.get("versions") != here["versions"]:
        differ.append(f"libraries {theirs.get('versions')} here {here['versions']}")
    if " ".join(sorted(str(theirs.get("xla_flags", "")).split())) != here["xla_flags"]:
        differ.append(f"XLA flags {theirs.get('xla_flags')!r} here {here['xla_flags']!r}")
    if differ:
        return False, "another machine: " + "; ".join(differ)
    return True, "the same processor, libraries and XLA flags"


def stored(path) -> dict | None:
    """The fingerprint a JSON results file records (its ``"fingerprint"``), or None."""
    doc = json.loads(Path(path).read_text())
    return doc.get("fingerprint")


def stamp(path, print_=None, *, how) -> None:
    """Record ``print_`` (default: this machine's) in the JSON file at ``path`` as its ``"fingerprint"``, with ``how``
    it was established. For a maintainer who has shown, by retraining its rows bit for bit, that this machine is the
    kind that computed the file."""
    path = Path(path)
    doc = json.loads(path.read_text())
    doc["fingerprint"] = {**(fingerprint() if print_ is None else print_), "how": how}
    path.write_text(json.dumps(doc, indent=1) + "\n")
