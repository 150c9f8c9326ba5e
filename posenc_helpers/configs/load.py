"""Taking a config in: a dict, the JSON text of a ``config.json``, or the path of one.

:func:`load_config` is what every reader function (``rope_settings``,
``layer_positions``, ``describe_config``, ``config_summary``, the KV-cache
count, ...) calls first, so a learner can paste a file's text as it is
(``true``, ``false``, ``null`` and all) instead of retyping it as a Python
dict. Taught in notebooks/11-rope-as-shipped.ipynb and
notebooks/14-position-per-layer.ipynb.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import _validate as v


def load_config(config, *, name: str = "config") -> dict:
    """A config as a dict: a dict is returned as it is; JSON text or a path (str or Path) is read and parsed.

    A str whose first non-blank character is ``{`` is read as the JSON text of a ``config.json``; any other str,
    and a :class:`~pathlib.Path`, names a file holding one. What is neither is refused with a one-line error
    naming the argument. Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> load_config('{"head_dim": 64, "rope_scaling": null, "tie_word_embeddings": false}')
    {'head_dim': 64, 'rope_scaling': None, 'tie_word_embeddings': False}
    >>> load_config("{'head_dim': 64}")       # a Python dict's text is not JSON  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: config is not valid JSON (Expecting property name ... at line 1, column 2); a config.json writes ...
    """
    if isinstance(config, dict):
        return config
    if isinstance(config, Path):
        return _parse(_read(config, name), name, f"the file {str(config)!r}")
    if not isinstance(config, str):
        raise TypeError(f"{name} must be a dict shaped like a config.json, its JSON text, or the path of one, "
                        f"got {v._show(config)}")
    if config.lstrip().startswith("{"):
        return _parse(config, name, None)
    if not config.strip():
        raise ValueError(f"{name} is an empty string: give a config.json's JSON text (starting with '{{') or its path")
    return _parse(_read(Path(config), name), name, f"the file {config!r}")


def _read(path: Path, name: str) -> str:
    if not path.is_file():
        raise ValueError(f"{name} {v._show(str(path))} is neither a config.json's JSON text (which starts with '{{') "
                         "nor the path of a file")
    return path.read_text(encoding="utf-8")


def _parse(text: str, name: str, where: str | None) -> dict:
    """json.loads, with an error that names the argument (and the file) and says where the text broke."""
    what = name if where is None else f"{name} ({where})"
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as err:
        # text pasted between triple quotes starts with the line break after the opening quotes: also count the
        # lines from the one the '{' is on, as the pasted file numbers them
        lead = text[:text.find("{")].count("\n") if where is None and "{" in text else 0
        pasted = f", line {err.lineno - lead} from the line of the first '{{'" if lead and err.lineno > lead else ""
        raise ValueError(f"{what} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}{pasted}); "
                         'a config.json writes "double quotes", true, false and null') from None
    if not isinstance(parsed, dict):
        raise ValueError(f"{what} holds a JSON {type(parsed).__name__}, not an object: a config.json is one {{...}}")
    return parsed


#: The keys a config states its declared context under, in the order the reader looks for them.
CONTEXT_KEYS = ("max_position_embeddings", "n_positions")


def context_field(source: dict, keys: tuple[str, ...] = CONTEXT_KEYS) -> tuple[str, object] | None:
    """Where one dict of a config (its top level or its ``text_config``) states the declared context: (key, value).

    The first of ``keys`` whose value is not None; else, for Kimi Linear, ``model_max_length``, which
    ``KimiLinearConfig`` reads as ``max_position_embeddings`` (configuration_kimi_linear.py, transformers 5.25.0:
    ``attribute_map = {"max_position_embeddings": "model_max_length"}``); else None. The value is returned as the
    file states it, and each caller checks it its own way (``posenc explain`` skips a value that is not a positive
    integer and looks at the next key; the base bound refuses it by name). The one place the keys and their order
    are written, for the reader's description, the KV-cache table, the base bound and ``posenc explain``.

    >>> context_field({"max_position_embeddings": 4096, "model_max_length": 8192})
    ('max_position_embeddings', 4096)
    >>> context_field({"model_type": "kimi_linear", "model_max_length": 1048576})
    ('model_max_length', 1048576)
    >>> context_field({"model_type": "llama", "model_max_length": 8192}) is None   # only Kimi Linear reads it so
    True
    """
    for key in keys:
        if source.get(key) is not None:
            return key, source[key]
    if source.get("model_type") == "kimi_linear" and source.get("model_max_length") is not None:
        return "model_max_length", source["model_max_length"]
    return None
