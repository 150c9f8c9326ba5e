"""Read a real model's config: which RoPE it ships, and what that does to each pair.

:func:`frequencies_from_config` takes a dict shaped like a Hugging Face
``config.json`` (old files with ``rope_scaling``, newer ones with
``rope_parameters``) and returns the frequencies and attention factor the
model uses, following Hugging Face ``transformers``' ``modeling_rope_utils``.
:func:`describe_config` says the same in plain language. A few real configs
ship with the package (:func:`bundled_configs`), each with the repository and
file it was copied from (:func:`bundled_sources`).

Models of 2025–26 set position per layer: :func:`layer_positions` gives one
:class:`LayerPositions` record per decoder layer (window, RoPE or none, the
``inv_freq`` buffer, softmax scale, query temperature, ...), as the model's own
code in transformers 5 computes it (``layer_types``, ``rope_parameters`` nested
by layer type, ``no_rope_layers`` where 1 means RoPE and 0 none, the
``"proportional"`` rope type, DeepSeek's MLA fields, Llama 4's temperature),
for the families it transcribes (:data:`FAMILIES`). Every reader function
refuses a ``model_type`` outside them by name, listing the ones it reads;
``assume="llama"`` reads such a config as Llama's code would, and the output
then says what was assumed. A config without ``model_type`` is read
Llama-style, as far as no family's code could read it differently (one
scheme, none of :data:`FAMILY_KEYS`), and every output says so
(:data:`UNTYPED_NOTE`). Families without RoPE (:data:`NOT_ROPE`:
ALiBi, learned tables) are named and refused. What the reader does not
understand raises a ValueError naming the key (and the ``model_type``); every
default it falls back to is stated by :func:`describe_config`. Each function
takes a dict, a ``config.json``'s JSON text or its path (:func:`load_config`).

The package has one module per job: :mod:`.load` takes the config in, :mod:`.single` reads one scheme,
:mod:`.records` holds the per-layer record, :mod:`.families` each family's
rules, :mod:`.layers` builds the records, :mod:`.describe` writes the
reports and :mod:`.bundled` holds the shipped configs. Every public name is
importable from ``posenc_helpers.configs``.

Taught in notebooks/11-rope-as-shipped.ipynb.
"""

from __future__ import annotations

from .bundled import bundled_configs, bundled_kv_fields, bundled_left_out, bundled_sources
from .describe import config_summary, describe_config
from .families import (
    ASSUMABLE,
    FAMILIES,
    FAMILY_KEYS,
    LAYER_TYPES,
    NOT_ROPE,
    PARTIAL_DEFAULTS,
    UNTYPED_NOTE,
    check_family,
)
from .layers import frequencies_from_config, layer_positions, per_layer, rope_settings
from .load import CONTEXT_KEYS, context_field, load_config
from .records import QK_NORM_UNKNOWN, LayerPositions, QKNorm, llama4_query_temperature, llama_4_scaling_temperature
from .single import DEFAULT_BASE, ROPE_TYPES, RopeSettings

__all__ = [
    "load_config",
    "context_field",
    "CONTEXT_KEYS",
    "check_family",
    "ASSUMABLE",
    "NOT_ROPE",
    "PARTIAL_DEFAULTS",
    "ROPE_TYPES",
    "DEFAULT_BASE",
    "RopeSettings",
    "rope_settings",
    "frequencies_from_config",
    "config_summary",
    "describe_config",
    "bundled_configs",
    "bundled_sources",
    "bundled_kv_fields",
    "bundled_left_out",
    "FAMILIES",
    "FAMILY_KEYS",
    "UNTYPED_NOTE",
    "LAYER_TYPES",
    "LayerPositions",
    "QKNorm",
    "QK_NORM_UNKNOWN",
    "layer_positions",
    "per_layer",
    "llama4_query_temperature",
    "llama_4_scaling_temperature",
]
