"""The lab's model cache: a trained model is stored once on disk and read back, never trained twice.

Training is deterministic on one machine (the same seed gives the same
parameters, bit for bit), so a model trained once can be read back instead of
trained again: notebook 13 reads notebook 12's eight models, and a "your turn"
cell run twice trains once. :func:`.train.fit` asks this module before it
trains and stores what it trained afterwards.

The key is a SHA-256 of everything that decides the parameters: the model's
:class:`.model.Config`, the task, the seed, the number of steps, the batch size,
the optimiser's settings (learning rate, warm-up, weight decay, schedule), the
checkpoints, the parameters training starts from (a fresh model's, drawn from
the seed, or those a fine-tune continues), RoPE's rescaled
frequencies and logit scale, the training text, the source of the lab's code
(the lab modules of :data:`IN_KEY`, the helper modules of :data:`HELPERS_IN_KEY` and the
helper functions of :data:`FUNCTIONS_IN_KEY`), the
platform, the processor (:func:`cpu`), the number of cores, ``XLA_FLAGS``, and the versions of jax, jaxlib,
optax and numpy. A change to any of them is another key, so a stale model is
never read.

The cache lives outside the repository: ``$POSENC_MODEL_CACHE`` if set
(``"off"`` or empty: no cache), else ``$XDG_CACHE_HOME/posenc_helpers/models``,
else ``~/.cache/posenc_helpers/models``; ``make clean`` empties it. Each entry
is one ``.npz`` file written atomically, holding its own key and a SHA-256 of
its arrays; an entry that cannot be read, or whose key or checksum disagrees,
is trained again and overwritten, never trusted.

>>> from posenc_helpers.lab import cache
>>> cache.key_of({"a": 1}) == cache.key_of({"a": 1}) != cache.key_of({"a": 2})
True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import platform
import tempfile
import warnings
from pathlib import Path

import numpy as np

__all__ = [
    "ENV", "IN_KEY", "HELPERS_IN_KEY", "FUNCTIONS_IN_KEY", "cpu", "directory", "key_of", "code_files", "code_version",
    "code_text",
    "environment", "load", "store", "clear", "flatten", "unflatten", "locked",
]

#: The environment variable that moves (or, set to "off", disables) the model cache.
ENV = "POSENC_MODEL_CACHE"

_PACKAGE = Path(__file__).resolve().parents[1]


def directory() -> Path | None:
    """The cache's folder, or None when it is off (read at every call, so a test can move it).

    >>> import os
    >>> old = os.environ.get(ENV)
    >>> os.environ[ENV] = "off"; directory() is None
    True
    >>> os.environ[ENV] = "/tmp/somewhere"; str(directory())
    '/tmp/somewhere'
    >>> _ = os.environ.pop(ENV) if old is None else os.environ.__setitem__(ENV, old)
    """
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "posenc_helpers" / "models"


#: The lab's modules that decide a model's parameters: the model, its training loop, the tasks' data, and this
#: module (the key itself). Every other lab module reads results, evaluates, or calls :func:`.train.fit` with
#: arguments the key holds, so editing it keeps every cached model; ``tests/test_lab_model_cache.py`` checks that
#: these modules import no other lab module, so nothing that decides a parameter is left out.
IN_KEY = ("model.py", "train.py", "tasks.py", "cache.py")

#: The course's helper modules the model computes with, hashed whole (the validators of ``_validate.py`` decide no
#: number, only whether an argument is refused, so they are not hashed).
HELPERS_IN_KEY = ("core.py", "scaling.py")

#: Helpers the model calls from modules that are not hashed whole (their modules hold much else): the source of
#: each function is hashed, ``(module, name)``.
FUNCTIONS_IN_KEY = (("posenc_helpers.relative", "t5_bucket"), ("posenc_helpers.configs", "llama4_query_temperature"))


def code_files() -> list:
    """The files :func:`code_version` hashes whole: :data:`IN_KEY` and :data:`HELPERS_IN_KEY`.

    >>> names = [p.name for p in code_files()]
    >>> "model.py" in names and "train.py" in names and "core.py" in names, "claims.py" in names, "evaluate.py" in names
    (True, False, False)
    """
    return [_PACKAGE / "lab" / name for name in IN_KEY] + [_PACKAGE / name for name in HELPERS_IN_KEY]


def code_text(source: str) -> str:
    r"""The part of Python source that runs: its syntax tree without docstrings (comments are not in the tree).

    Editing a docstring or a comment changes no parameter, so it keeps every cached model; any change to the code
    itself is another text.

    >>> code_text('def f(x):\n    "Doubles."\n    return 2 * x  # twice\n') == code_text("def f(x):\n    return 2 * x\n")
    True
    >>> code_text("def f(x):\n    return 2 * x\n") == code_text("def f(x):\n    return 3 * x\n")
    False
    """
    import ast
    import textwrap

    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """SHA-256 of the code that decides a lab model's parameters: :func:`code_files` (names and code), then each
    function of :data:`FUNCTIONS_IN_KEY`, all read as :func:`code_text` (docstrings and comments left out)."""
    import importlib
    import inspect

    digest = hashlib.sha256()
    for path in code_files():
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(code_text(path.read_text()).encode())
    for module, name in FUNCTIONS_IN_KEY:
        digest.update(f"{module}.{name}".encode())
        digest.update(code_text(inspect.getsource(getattr(importlib.import_module(module), name))).encode())
    return digest.hexdigest()


def cpu() -> dict:
    """The processor: its model name and a SHA-256 of its feature flags (Linux's /proc/cpuinfo; elsewhere what
    :mod:`platform` says). Two processors with other flags may run other kernels, so training on them can take
    another path: the model cache keys on it, and the stored results files record it (their fingerprint)."""
    model, flags = platform.processor() or platform.machine(), ""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "model name" and model in ("", platform.processor(), platform.machine()):
            model = value.strip()
        if name.strip() in ("flags", "Features") and not flags:
            flags = " ".join(sorted(value.split()))
    return {"model": model, "flags_sha256": hashlib.sha256(flags.encode()).hexdigest()[:16]}


def environment() -> dict:
    """What the machine adds to the key: platform, cores, XLA's flags and the numeric libraries' versions."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for name in ("jax", "jaxlib", "optax", "numpy"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:  # pragma: no cover - the lab needs all four
            versions[name] = None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "cpu": cpu(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "versions": versions,
    }


def _digest_arrays(arrays: dict) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        digest.update(name.encode())
        digest.update(str(a.dtype).encode())
        digest.update(str(a.shape).encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.generic,)):
        return x.item()
    if hasattr(x, "shape") and hasattr(x, "dtype"):  # an array: its bytes, not its repr
        return {"sha256": _digest_arrays({"": np.asarray(x)})}
    if isinstance(x, float):
        return repr(x)  # every digit: 1e-3 and 0.001 are one key, 0.1 + 0.2 another
    return x


def key_of(material: dict) -> str:
    """The cache key of ``material`` (what decides the parameters), with the code and the machine added."""
    full = {"what": _jsonable(material), "code": code_version(), "machine": environment()}
    return hashlib.sha256(json.dumps(full, sort_keys=True).encode()).hexdigest()


def flatten(tree, prefix="") -> dict:
    """A nested dict/list of arrays as ``{"a/0/b": array}``; :func:`unflatten` inverts it.

    >>> flat = flatten({"w": np.zeros(2), "blocks": [{"g": np.ones(1)}]})
    >>> sorted(flat)
    ['blocks/[0]/g', 'w']
    >>> unflatten(flat)["blocks"][0]["g"]
    array([1.])
    """
    if isinstance(tree, dict):
        out = {}
        for k, v in tree.items():
            if "/" in str(k) or str(k).startswith("["):
                raise ValueError(f"a parameter name may not contain '/' or start with '[', got {k!r}")
            out.update(flatten(v, f"{prefix}{k}/"))
        return out
    if isinstance(tree, (list, tuple)):
        out = {}
        for i, v in enumerate(tree):
            out.update(flatten(v, f"{prefix}[{i}]/"))
        return out
    return {prefix.rstrip("/"): np.asarray(tree)}


def unflatten(flat: dict):
    """The nested dict/list that :func:`flatten` made ``flat`` from."""
    root: dict = {}
    for name, value in flat.items():
        parts = name.split("/")
        node = root
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value

    def lists(node):
        if not isinstance(node, dict):
            return node
        if node and all(k.startswith("[") for k in node):
            return [lists(node[f"[{i}]"]) for i in range(len(node))]
        return {k: lists(v) for k, v in node.items()}

    return lists(root)


def _path(key: str) -> Path | None:
    folder = directory()
    return None if folder is None else folder / f"{key}.npz"


def load(key: str) -> dict | None:
    """The entry stored under ``key``: ``{name: nested arrays}`` as :func:`store` got it, or None.

    None when the cache is off, the entry is missing, or it cannot be trusted
    (unreadable, truncated, another key, or arrays whose checksum disagrees);
    an untrusted entry is removed, with a warning, so the caller trains again.
    """
    path = _path(key)
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files if name != "__meta__"}
            meta = json.loads(bytes(data["__meta__"]).decode())
        if meta.get("key") != key or meta.get("sha256") != _digest_arrays(arrays):
            raise ValueError("its key or checksum disagrees")
    except Exception as error:  # noqa: BLE001 - any failure to read means: do not trust it
        warnings.warn(f"model cache: {path.name} cannot be trusted ({error}); training again", stacklevel=3)
        path.unlink(missing_ok=True)
        return None
    groups: dict = {}
    for name, a in arrays.items():
        group, _, rest = name.partition(":")
        groups.setdefault(group, {})[rest] = a
    return {group: (unflatten(flat) if "" not in flat else flat[""]) for group, flat in groups.items()}


def store(key: str, entry: dict) -> Path | None:
    """Store ``entry`` (``{name: nested arrays or one array}``) under ``key``, atomically; its path, or None when off."""
    path = _path(key)
    if path is None:
        return None
    arrays = {}
    for group, tree in entry.items():
        if ":" in group:
            raise ValueError(f"an entry's name may not contain ':', got {group!r}")
        for name, a in flatten(tree).items():
            arrays[f"{group}:{name}"] = a
    meta = json.dumps({"key": key, "sha256": _digest_arrays(arrays)}).encode()
    buffer = io.BytesIO()
    np.savez(buffer, __meta__=np.frombuffer(meta, dtype=np.uint8), **arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    # write beside the target, then rename: a reader sees the old entry or the whole new one, never a part
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buffer.getvalue())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextlib.contextmanager
def locked(key: str):
    """Hold ``key``'s lock while a model is looked up, trained and stored: another process asking for the same
    model meanwhile waits, then reads it back instead of training it a second time.

    An advisory lock on ``<key>.lock`` beside the entry (``fcntl.flock``, released when the process ends,
    however it ends); no lock where the cache is off or the platform has no ``fcntl`` (Windows).
    """
    path = _path(key)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock, at worst a model is trained twice
        fcntl = None
    if path is None or fcntl is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def clear() -> int:
    """Remove every entry of the cache; returns how many were removed (0 when it is off or empty)."""
    folder = directory()
    if folder is None or not folder.is_dir():
        return 0
    removed = 0
    for path in folder.glob("*.npz"):
        path.unlink(missing_ok=True)
        removed += 1
    for pattern in (".tmp-*", "*.lock"):
        for path in folder.glob(pattern):
            path.unlink(missing_ok=True)
    return removed


if __name__ == "__main__":  # python -m posenc_helpers.lab.cache --clear
    import sys

    if sys.argv[1:] == ["--clear"]:
        print(f"model cache {directory()}: removed {clear()} entries")
    elif sys.argv[1:] == []:
        print(directory() or "off")
    else:
        raise SystemExit("usage: python -m posenc_helpers.lab.cache [--clear]")
