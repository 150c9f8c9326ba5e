"""`posenc explain --engine transformers`: the same report, built from transformers itself.

Imported only when asked for (``--engine transformers`` or ``--check``): nothing else in the package imports
torch or transformers. Install them as :data:`posenc_helpers.explain_cli.INSTALL_HF` says (torch as its CPU
build; docs/EXPLAIN.md). For a config it

1. builds the config class of its ``model_type`` (``CONFIG_MAPPING[model_type].from_dict``: the class's
   defaults and ``__post_init__``), and the model (``AutoModelForCausalLM``, else ``AutoModel``) on the
   ``meta`` device, so nothing the size of the model is allocated;
2. runs the language model's forward pass on ``meta`` over a few tokens, with each decoder layer's MLP or MoE
   (and any other block that is not attention or a norm) passed through unchanged, and watches what the model's
   own code does: the function that applies RoPE (any ``apply*rot*`` function of the modeling module: whether
   a layer calls it, with which cos/sin), the attention call (a registered attention implementation that
   records q, k, v, ``scaling``, ``sliding_window`` and ``s_aux``, the sinks), the order of the q/k norms
   (children named ``q_norm``, ``k_norm``, ``qk_norm``, ``q_layernorm``, ...) against the rotation, and the
   ``DynamicCache(config=...)`` it fills (the cache layer classes, what each stores per token);
3. rebuilds each rotary-embedding module the model used on the CPU, from the same class and config, for its
   ``inv_freq`` and ``attention_scaling``, and finds which dims form a pair by calling the model's own rotary
   function on a one-hot query at position 1;
4. feeds a cache layer of each class more tokens than its window, to see how many it keeps.

What it cannot see is "not traced" (the query temperatures, which act on values; the kind of norm; a
linear-attention layer's state, whose block is passed through) and is left out of ``--check``.
Taught in notebooks/11-rope-as-shipped.ipynb (the command).
"""

from __future__ import annotations

import contextlib
import inspect
import re
import sys
import types

import numpy as np

from .configs import NOT_ROPE
from .explain import NOT_TRACED, attention_kind, build_report, language_config

# torch and transformers, imported by load() on first use (so that importing this module, as the doctest
# collector does, needs neither)
torch = transformers = AutoModel = AutoModelForCausalLM = DynamicCache = CONFIG_MAPPING = None

#: The versions ``make test-hf`` installs and checks the engine with (the engine runs with whatever is
#: installed and names it in the report).
TRANSFORMERS_VERSION = "5.25.0"
TORCH_VERSION = "2.13.0"

# tokens of the traced forward pass: a prime, so no head count or width is mistaken for the sequence axis
TOKENS = 7

_PROBE = "posenc_probe"
_NORM_NAME = re.compile(r"^(q|k|qk|query|key)_?(norm|layernorm|ln)$")
_KIND_OF_CACHE = {"DynamicLayer": "full", "DynamicSlidingWindowLayer": "sliding", "LinearAttentionLayer": "linear",
                  "DummyLayer": "shared", "DeepseekV4CSACache": "compressed", "DeepseekV4HCACache": "compressed"}


class EngineError(ValueError):
    """The engine's own one-line refusal: it names the model_type (or the config) and what failed.

    Anything else that fails while transformers reads the config, builds the model or runs it is turned into one
    by :func:`hf_layers`, with transformers' own message, so ``posenc explain`` prints one line and exits with 2."""


class _Trace:
    """What the traced forward pass saw, per decoder layer."""

    def __init__(self):
        self.layer = None
        self.step = 0
        self.rotary_out: dict[int, tuple] = {}   # id(tensor) → (rotary module, call args, call kwargs, position)
        self.rope: dict[int, list] = {}          # layer → [(step, function, args, kwargs)]
        self.attention: dict[int, dict] = {}     # layer → the probe's record
        self.norms: dict[int, list] = {}         # layer → [(step, name, width)]
        self.memo: dict[tuple, dict] = {}        # the RoPE fields of each (rotary module, layer type, call)
        self.cache_error: Exception | None = None  # why transformers could not build the model's DynamicCache

    def tick(self) -> int:
        self.step += 1
        return self.step


_TRACE: _Trace | None = None


def _probe_attention(module, query, key, value, attention_mask, **kwargs):
    """A registered attention implementation: records what the model passes, returns an empty output."""
    if _TRACE is not None and _TRACE.layer is not None:
        _TRACE.attention.setdefault(_TRACE.layer, {
            "q": tuple(query.shape), "k": tuple(key.shape), "v": tuple(value.shape),
            "scaling": kwargs.get("scaling"), "sliding_window": kwargs.get("sliding_window"),
            "s_aux": kwargs.get("s_aux") is not None, "step": _TRACE.tick()})
    # attn_output: (batch, tokens, heads, v_dim), as eager_attention_forward returns it
    out = torch.empty(query.shape[0], query.shape[2], query.shape[1], value.shape[-1], device=query.device,
                      dtype=query.dtype)
    return out, None


def load() -> None:
    """Import torch and transformers (an ImportError names what is missing) and register the probe."""
    global torch, transformers, AutoModel, AutoModelForCausalLM, DynamicCache, CONFIG_MAPPING
    if torch is not None:
        return
    import torch as _torch
    import transformers as _transformers
    from transformers import AttentionInterface
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING as _mapping

    AttentionInterface.register(_PROBE, _probe_attention)
    AutoModel, AutoModelForCausalLM = _transformers.AutoModel, _transformers.AutoModelForCausalLM
    DynamicCache, CONFIG_MAPPING, transformers, torch = _transformers.DynamicCache, _mapping, _transformers, _torch


def hf_config(config: dict):
    """The transformers config object of ``config``: its model_type's class, with defaults and __post_init__."""
    load()
    model_type = config.get("model_type")
    if model_type is None:
        raise EngineError("the config has no model_type: the transformers engine needs it to pick the config class")
    if model_type not in CONFIG_MAPPING:
        raise EngineError(f"model_type {model_type!r} is not one transformers {transformers.__version__} knows")
    return CONFIG_MAPPING[model_type].from_dict(dict(config))


def build_meta_model(hf_cfg):
    """The model on the meta device (no weights allocated), with the probe as its attention implementation.

    A multimodal config's language model is built from its text config where transformers maps one to a model
    class (no vision tower: faster, and no vision library needed); else the whole model."""
    text_cfg = hf_cfg.get_text_config(decoder=True)
    with torch.device("meta"):
        for cfg in (text_cfg,) if text_cfg is hf_cfg else (text_cfg, hf_cfg):
            for auto in (AutoModelForCausalLM, AutoModel):
                try:
                    return auto.from_config(cfg, attn_implementation=_PROBE)
                except ValueError as exc:
                    if "Unrecognized configuration class" not in str(exc):
                        raise
                except KeyError as exc:  # a model that looks its attention class up by name (GPT-Neo's)
                    if _PROBE not in str(exc):
                        raise
                    raise EngineError(f"the transformers engine cannot read model_type {hf_cfg.model_type!r}: its "
                                     "attention class is chosen from a fixed table, which takes no registered "
                                     f"attention implementation (KeyError: {exc})") from None
    raise EngineError(f"transformers {transformers.__version__} has no model class for model_type {hf_cfg.model_type!r}")


def decoder_stack(model, n_layers: int):
    """(the language model, its ModuleList of decoder layers): the decoder's list of ``n_layers`` layers."""
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    for owner in (decoder, model):
        for _name, module in owner.named_modules():
            if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers:
                return decoder, module
    raise EngineError(f"no list of {n_layers} decoder layers found in {type(model).__name__}")


def _is_attention(name: str, module) -> bool:
    cls = type(module).__name__
    return "Attention" in cls or "Attn" in cls or name in ("self_attn", "attn", "attention")


_FEED_FORWARD = re.compile(r"MLP|MoE|Moe|Expert|FeedForward|FFN|Ffn|Dense", re.I)


def _keeps(name: str, module, narrow: bool) -> bool:
    """Whether a decoder layer's child runs on meta. ``narrow``: only the MLP or MoE (by class or attribute name)
    is passed through; otherwise everything but attention, norms and rotary modules is."""
    cls = type(module).__name__
    if narrow:
        return not (_FEED_FORWARD.search(cls) or name in ("mlp", "feed_forward", "block_sparse_moe", "moe", "ffn"))
    return _is_attention(name, module) or "Norm" in cls or "norm" in name or "Rotary" in cls or "rotary" in name


def _pass_through(as_tuple: bool):
    def forward(self, *args, **kwargs):
        x = args[0] if args else next(v for v in kwargs.values() if torch.is_tensor(v))
        return (x, None) if as_tuple else x
    return forward


def _wrap_rotary_functions(modules: set, trace_on) -> list:
    """Wrap every apply*rot* function of the given modeling modules; returns what to restore."""
    restore = []
    for mod in modules:
        for fname, fn in list(vars(mod).items()):
            if not (callable(fn) and fname.startswith("apply") and "rot" in fname):
                continue

            def wrapped(*args, __fn=fn, **kwargs):
                trace = trace_on()
                if trace is not None and trace.layer is not None:
                    trace.rope.setdefault(trace.layer, []).append((trace.tick(), __fn, args, kwargs))
                return __fn(*args, **kwargs)

            setattr(mod, fname, wrapped)
            restore.append((mod, fname, fn))
    return restore


def _install(decoder, layers, as_tuple: bool, narrow: bool) -> list:
    """Hooks and pass-throughs on the meta model; returns the handles and patches to undo."""
    handles, patches = [], []
    for i, layer in enumerate(layers):
        def enter(_module, _args, i=i):
            _TRACE.layer = i
        handles.append(layer.register_forward_pre_hook(enter))
        for name, child in layer.named_children():
            if not _keeps(name, child, narrow):
                patches.append((child, "forward", child.forward))
                child.forward = types.MethodType(_pass_through(as_tuple), child)
            if _is_attention(name, child):
                for norm_name, norm in child.named_children():
                    if _NORM_NAME.match(norm_name):
                        def seen(_m, args, _out, n=norm_name):
                            if _TRACE.layer is not None and args and torch.is_tensor(args[0]):
                                _TRACE.norms.setdefault(_TRACE.layer, []).append((_TRACE.tick(), n, args[0].shape[-1]))
                        handles.append(norm.register_forward_hook(seen))
    for module in decoder.modules():
        if type(module).__name__.endswith("RotaryEmbedding"):
            static = _static_rope_type(module)
            if static is not None:
                patches.append((module, "rope_type", module.rope_type))
                module.rope_type = static

            def produced(m, args, kwargs, out):
                tensors = out if isinstance(out, tuple | list) else (out,)
                for position, t in enumerate(tensors):
                    if torch.is_tensor(t):
                        _TRACE.rotary_out[id(t)] = (m, args, kwargs, position)
            handles.append(module.register_forward_hook(produced, with_kwargs=True))
    return handles + patches


def _static_rope_type(module):
    """The rope_type a dynamic-NTK rotary module is traced under ("default" for "dynamic"), or None to keep its own.

    transformers' ``dynamic_rope_update`` (modeling_rope_utils.py, 5.25.0) decides in Python whether to grow the
    base (``if seq_len > max_seq_len_cached``), which a meta tensor cannot answer. Over the trace's TOKENS
    positions, within the module's original length, neither that branch nor the reset runs: the forward pass
    uses the module's inv_freq as built, as under "default". The frequencies themselves are read from a CPU
    rebuild of the module (:func:`rotary_values`), which keeps its own rope_type."""
    kind = getattr(module, "rope_type", None)
    if int(getattr(module, "original_max_seq_len", 0) or 0) < TOKENS:
        return None
    if isinstance(kind, str) and "dynamic" in kind:
        return "default"
    if isinstance(kind, dict) and any("dynamic" in str(x) for x in kind.values()):
        return {k: "default" if "dynamic" in str(x) else x for k, x in kind.items()}
    return None


def _undo(installed: list) -> None:
    for item in installed:
        if isinstance(item, tuple):
            obj, attr, value = item
            setattr(obj, attr, value)
        else:
            item.remove()


def trace_forward(model, decoder, layers):
    """Run the language model on meta over TOKENS tokens; return (the trace, the filled DynamicCache)."""
    global _TRACE
    modules = {sys.modules[type(m).__module__] for m in model.modules()}
    restore = _wrap_rotary_functions(modules, lambda: _TRACE)
    try:
        last = cache_error = None
        # the MLP alone passed through first (its output a tensor, else a pair), then every block but attention;
        # last, without a cache (the KV fields are then not traced)
        for narrow, as_tuple, with_cache in ((True, False, True), (True, True, True), (False, False, True),
                                             (False, True, True), (True, False, False), (False, False, False)):
            _TRACE = _Trace()
            installed = _install(decoder, layers, as_tuple, narrow)
            try:
                # the cache the model would build; one transformers cannot build (a sliding layer without
                # sliding_window) falls through to the attempts without a cache, and the trace says why
                cache = None
                if with_cache:
                    try:
                        cache = DynamicCache(config=model.config)
                    except (ValueError, TypeError, RuntimeError, AttributeError, IndexError, KeyError) as exc:
                        cache_error = exc
                        raise
                _TRACE.cache_error = cache_error
                with torch.no_grad():
                    ids = torch.zeros(1, TOKENS, dtype=torch.long, device="meta")
                    cache_name = "cache" if "cache" in inspect.signature(decoder.forward).parameters else "past_key_values"
                    decoder(input_ids=ids, use_cache=with_cache, **{cache_name: cache})
                return _TRACE, cache
            except (ValueError, TypeError, RuntimeError, AttributeError, IndexError, KeyError) as exc:
                last = exc
            finally:
                _undo(installed)
        raise EngineError(f"the transformers engine cannot trace model_type {model.config.model_type!r}: its forward "
                         f"pass on the meta device failed ({type(last).__name__}: {last})")
    finally:
        for mod, fname, fn in restore:
            setattr(mod, fname, fn)
        _TRACE = None


def _cpu_rotary(module, config=None):
    """The same rotary-embedding class rebuilt on the CPU from the module's config (its buffers hold values);
    ``config`` is passed where the class keeps no ``config`` attribute (GPT-J's)."""
    cls = type(module)
    kwargs = {}
    for name, param in list(inspect.signature(cls.__init__).parameters.items())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name == "device":
            kwargs[name] = "cpu"
        elif hasattr(module, name):
            kwargs[name] = getattr(module, name)
        elif name == "config" and config is not None:
            kwargs[name] = config
        elif param.default is param.empty:
            raise EngineError(f"cannot rebuild {cls.__name__}: its argument {name!r} is not an attribute")
    with torch.device("cpu"):
        return cls(**kwargs)


def _on_cpu(value, fill):
    """A meta tensor as a CPU one of the same shape but 1 along the token axis (TOKENS), filled with ``fill``."""
    if not torch.is_tensor(value):
        return value
    shape = tuple(1 if n == TOKENS else n for n in value.shape)
    return torch.full(shape, fill, dtype=value.dtype, device="cpu")


def _from_outputs(cpu, args, kwargs) -> tuple[np.ndarray, float]:
    """(ω per pair, attention factor) of a rotary module without an inv_freq buffer (GPT-J's table of sin and cos),
    from its own outputs: at position 0 cos is the attention factor and sin is 0; at position 1 the angle of
    pair k is ω_k (< π), so ω_k = atan2(sin, cos). The pairs are read from the first half of cos's width when it
    repeats them (half-split) or from every second entry (interleaved)."""
    def cpu_value(a, position):
        if torch.is_tensor(a) and not torch.is_floating_point(a):
            return torch.full_like(_on_cpu(a, 0), position)
        return _on_cpu(a, 0.0)

    def at(position):
        with torch.no_grad():
            out = cpu(*[cpu_value(a, position) for a in args], **{k: cpu_value(a, position) for k, a in kwargs.items()})
        return [t.double().reshape(-1, t.shape[-1])[0] for t in out]
    zero, one = at(0), at(1)
    cos_at = next(i for i, t in enumerate(zero) if bool((t.abs() > 0).all()))
    sin_at = next(i for i, t in enumerate(zero) if bool((t == 0).all()))
    scaling = float(zero[cos_at][0])
    omega = torch.atan2(one[sin_at], one[cos_at]).numpy()
    if omega.size % 2 == 0 and np.array_equal(omega[: omega.size // 2], omega[omega.size // 2:]):
        omega = omega[: omega.size // 2]
    elif omega.size % 2 == 0 and np.array_equal(omega[0::2], omega[1::2]):
        omega = omega[0::2]
    return omega, scaling


def rotary_values(module, layer_type, config=None, call=((), {})):
    """(inv_freq float64, attention_scaling, rope_type) of a rotary module for ``layer_type``, from a CPU rebuild
    (``call``: the args and kwargs the model called it with, for a module without an inv_freq buffer)."""
    cpu = _cpu_rotary(module, config)
    buffers = dict(cpu.named_buffers())
    inv = buffers.get(f"{layer_type}_inv_freq", buffers.get("inv_freq"))
    if inv is None:
        omega, scaling = _from_outputs(cpu, *call)
        return cpu, omega, scaling, getattr(cpu, "rope_type", NOT_TRACED)
    scaling = getattr(cpu, f"{layer_type}_attention_scaling", getattr(cpu, "attention_scaling", NOT_TRACED))
    rope_type = getattr(cpu, "rope_type", NOT_TRACED)
    if isinstance(rope_type, dict):
        rope_type = rope_type.get(layer_type, NOT_TRACED)
    return cpu, inv.double().numpy(), float(scaling) if scaling != NOT_TRACED else scaling, rope_type


def _rotary_call_on_cpu(cpu, args, kwargs):
    """The rotary module's output at position 1, called as the model called it (token axis cut to 1)."""
    cargs = [_on_cpu(a, 1 if not torch.is_floating_point(a) else 0.0) if torch.is_tensor(a) else a for a in args]
    ckw = {k: _on_cpu(v, 1 if not torch.is_floating_point(v) else 0.0) if torch.is_tensor(v) else v
           for k, v in kwargs.items()}
    with torch.no_grad():
        out = cpu(*cargs, **ckw)
    return out if isinstance(out, tuple | list) else (out,)


def layout(trace: _Trace, event, cpu_out_of, pairs: int) -> str:
    """"half-split", "interleaved" or "other": which input dim turns with the first rotated dim, from the model's
    own function.

    The query is one-hot (dim j) at position 1, through the function the layer called. The first rotated dim s is
    the first whose output is not itself alone (0, or past the dims a trailing rotation leaves alone); its partner
    is the j whose output fills the same dims as s's: s + 1 (interleaved) or s + pairs (half-split). The output's order
    may differ from the input's (DeepSeek-V3 de-interleaves before it rotates), which is why inputs are compared.
    """
    _step, fn, args, kwargs = event

    def support(j: int) -> set[int]:
        cargs, query_at = [], None
        for a in args:
            if torch.is_tensor(a) and id(a) in trace.rotary_out:
                module, r_args, r_kwargs, position = trace.rotary_out[id(a)]
                cargs.append(cpu_out_of(module, r_args, r_kwargs)[position])
            elif torch.is_tensor(a):
                t = _on_cpu(a, 0.0)
                if query_at is None:
                    query_at = len(cargs)
                    t[(0,) * (t.dim() - 1) + (j,)] = 1.0
                cargs.append(t)
            else:
                cargs.append(a)
        with torch.no_grad():
            out = fn(*cargs, **kwargs)
        q = (out[0] if isinstance(out, tuple | list) else out)[(0,) * (cargs[query_at].dim() - 1)]
        return {int(x) for x in torch.nonzero(q.abs() > 1e-6).flatten()}

    # the first dim that turns: dim 0, or past leading dims the function passes through unchanged (DeepSeek V4
    # rotates the last 64 of its 512 dims: apply_rotary_pos_emb on x[..., -rope_dim:])
    width = next(a.shape[-1] for a in args if torch.is_tensor(a) and id(a) not in trace.rotary_out)
    start, first = 0, support(0)
    while first == {start} and start + 1 < width:
        start += 1
        first = support(start)
    if len(first) == 2 and support(start + 1) == first:
        return "interleaved"
    if len(first) == 2 and support(start + pairs) == first:
        return "half-split"
    return f"other (dim {start} fills output dims {sorted(first)})"


def _kv_of(cache_layer, numbers: int | None, window) -> dict:
    """The layer's KV fields: the cache class, what kind it is, numbers per token, tokens kept (measured)."""
    if cache_layer is None:  # traced without a cache
        return dict.fromkeys(("kv_kind", "kv_numbers_per_token", "kv_holds", "kv_state_numbers", "cache_layer"),
                             NOT_TRACED) | {"kv_cached": None}
    name = type(cache_layer).__name__
    kind = _KIND_OF_CACHE.get(name, name)
    if kind == "sliding" and window == "chunked":
        kind = "chunked"
    holds = None
    if kind in ("sliding", "chunked", "full") and numbers:
        holds = _tokens_kept(cache_layer)
    elif kind == "compressed":  # its window's tokens kept, and its compressed entries: not measured here
        holds = NOT_TRACED
    per_token = 0 if kind in ("linear", "shared") else (numbers if numbers is not None else NOT_TRACED)
    return {"kv_kind": kind, "kv_numbers_per_token": per_token, "kv_holds": holds,
            "kv_state_numbers": NOT_TRACED if kind == "linear" else {"conv": 0, "recurrent": 0},
            "cache_layer": name, "kv_cached": None}


def _tokens_kept(cache_layer) -> int | None:
    """Feed a fresh layer of the same class more tokens than its window; None when it keeps them all."""
    fresh = type(cache_layer)(**({"sliding_window": cache_layer.sliding_window}
                                 if hasattr(cache_layer, "sliding_window") else {}))
    window = int(getattr(cache_layer, "sliding_window", 0) or 0)
    n = max(window, TOKENS) + 5
    keys = torch.empty(1, 1, n, 1, device="meta")
    fresh.update(keys, keys.clone())
    kept = int(fresh.keys.shape[-2])
    return None if kept == n else kept


def _layer_types(text_cfg, n: int) -> list[str]:
    """config.layer_types after __post_init__, else the cache's own reading (get_layer_types_and_kwargs)."""
    types_ = getattr(text_cfg, "layer_types", None)
    if types_ is not None and len(types_) == n:
        return list(types_)
    from transformers.cache_utils import get_layer_types_and_kwargs

    return list(get_layer_types_and_kwargs(text_cfg)[0])


def _base(text_cfg, layer_type: str):
    params = getattr(text_cfg, "rope_parameters", None)
    if isinstance(params, dict) and isinstance(params.get(layer_type), dict):
        params = params[layer_type]
    theta = params.get("rope_theta") if isinstance(params, dict) else None
    return float(theta) if theta is not None else NOT_TRACED


def _qk_norm(trace: _Trace, i: int, rope_step, widths) -> dict | None:
    """Where the layer's q/k norms ran relative to its rotation, and over what width."""
    seen = trace.norms.get(i)
    if not seen:
        return None
    step, _name, width = seen[0]
    where = "no_rope" if rope_step is None else "before_rope" if step < rope_step else "after_rope"
    head, all_heads = widths
    over = "head" if width == head else "all_heads" if width == all_heads else f"width {width}"
    return {"where": where, "over": over, "kind": NOT_TRACED, "weight": NOT_TRACED}


def _rope_fields(trace, i, text_cfg, layer_type, cpu_out_of) -> dict:
    """RoPE's fields of layer i: from the rotary module whose output the layer's rotary function received."""
    events = trace.rope.get(i)
    fields = {"rope": bool(events), "pairs": 0, "rotary_dim": 0, "layout": None, "rope_type": None, "base": None,
              "factor": None, "attention_factor": 1.0, "inv_freq": None}
    if not events:
        return fields
    used = [trace.rotary_out[id(a)] for a in events[0][2] if torch.is_tensor(a) and id(a) in trace.rotary_out]
    if not used:
        return {**fields, **dict.fromkeys(("pairs", "rotary_dim", "layout", "rope_type", "base", "factor",
                                            "attention_factor", "inv_freq"), NOT_TRACED)}
    module, args, kwargs, _position = used[0]
    kind = kwargs.get("layer_type", next((a for a in args if isinstance(a, str)), layer_type))
    # layers that call the same function with the same module's output, shaped alike, read alike
    key = (id(module), kind, id(events[0][1]), tuple(tuple(a.shape) for a in events[0][2] if torch.is_tensor(a)))
    if key not in trace.memo:
        _cpu, inv, scaling, rope_type = rotary_values(module, kind, text_cfg, (args, kwargs))
        params = getattr(text_cfg, "rope_parameters", None) or {}
        params = params.get(kind, params) if isinstance(params.get(kind), dict) else params
        trace.memo[key] = {
            "pairs": len(inv), "rotary_dim": 2 * int(np.count_nonzero(inv > 0)),
            "layout": layout(trace, events[0], cpu_out_of, len(inv)), "rope_type": rope_type,
            "base": _base(text_cfg, kind), "factor": params.get("factor"), "attention_factor": scaling,
            "inv_freq": [float(x) for x in inv]}
    return {**fields, **trace.memo[key]}


def _config_class(config: dict) -> str:
    """"model_type 'x' (XConfig)", or as much of it as is known, for a message."""
    model_type = config.get("model_type")
    try:
        name = CONFIG_MAPPING[model_type].__name__
    except Exception:  # an unknown model_type, or a config class that does not import: the message says the rest
        return f"model_type {model_type!r}"
    return f"model_type {model_type!r} ({name})"


def hf_layers(config: dict) -> tuple[list[dict], list[str], dict]:
    """One dict per decoder layer (posenc_helpers.explain.LAYER_FIELDS) from transformers, its notes, the engine.

    Whatever fails inside transformers (its config class, its model class, its forward pass) raises an
    :class:`EngineError` naming the model_type and config class, with transformers' own message."""
    load()
    try:
        return _hf_layers(config)
    except EngineError:
        raise
    except Exception as exc:  # transformers' code may raise anything: named, with its own message
        raise EngineError(f"transformers {transformers.__version__} failed on {_config_class(config)}: "
                          f"{type(exc).__name__}: {exc}") from None


def _hf_layers(config: dict) -> tuple[list[dict], list[str], dict]:
    hf_cfg = hf_config(config)
    text_cfg = hf_cfg.get_text_config(decoder=True)
    n = int(text_cfg.num_hidden_layers)
    try:
        model = build_meta_model(hf_cfg)
    except EngineError:
        raise
    except Exception as exc:
        # transformers' own model class fails on this config (e.g. HunYuanDenseV1Config's default head_dim None:
        # self.scaling = self.head_dim**-0.5): named, with what failed
        raise EngineError(f"transformers {transformers.__version__} cannot build the model of "
                          f"{_config_class(config)} from this config ({type(exc).__name__}: {exc})") from None
    decoder, layers = decoder_stack(model, n)
    trace, cache = trace_forward(model, decoder, layers)
    types_ = _layer_types(text_cfg, n)
    rebuilt: dict[int, object] = {}

    def cpu_out_of(module, args, kwargs):
        if id(module) not in rebuilt:
            rebuilt[id(module)] = _cpu_rotary(module, text_cfg)
        return _rotary_call_on_cpu(rebuilt[id(module)], args, kwargs)

    out = []
    for i in range(n):
        att = trace.attention.get(i)
        layer_cache = cache.layers[i] if cache is not None and i < len(cache.layers) else None
        window = getattr(layer_cache, "sliding_window", None) or (att or {}).get("sliding_window")
        window = int(window) if window is not None else None
        rope = _rope_fields(trace, i, text_cfg, types_[i], cpu_out_of)
        head = att["q"][-1] if att else NOT_TRACED
        numbers = None
        if layer_cache is not None and getattr(layer_cache, "keys", None) is not None and layer_cache.keys.numel():
            held = layer_cache.keys.shape[-2]
            # DeepSeek V4's caches keep one tensor as keys and values ("point to the same storage"): count it once
            same = layer_cache.values is layer_cache.keys
            numbers = (layer_cache.keys.numel() + (0 if same else layer_cache.values.numel())) // held
        module = next((c for name, c in layers[i].named_children() if _is_attention(name, c)), None)
        sinks = bool(att and att["s_aux"]) or isinstance(getattr(module, "sinks", None), torch.nn.Parameter)
        scaling = att["scaling"] if att and att["scaling"] is not None else (head ** -0.5 if att else NOT_TRACED)
        rope_step = trace.rope[i][0][0] if trace.rope.get(i) else None
        heads = att["q"][1] if att else None
        out.append({
            "layer_type": types_[i], "attention": attention_kind(types_[i], window), "window": window, **rope,
            "head_dim": head, "softmax_scale": float(scaling) if scaling != NOT_TRACED else scaling,
            "query_temperature": NOT_TRACED,
            "qk_norm": _qk_norm(trace, i, rope_step, (head, heads * head if att else None)) if att else NOT_TRACED,
            "sinks": sinks, **_kv_of(layer_cache, numbers, "chunked" if types_[i] == "chunked_attention" else None),
        })
    notes = []
    if cache is None and trace.cache_error is not None:
        notes.append(f"transformers {transformers.__version__} cannot build this config's DynamicCache(config=...) "
                     f"({type(trace.cache_error).__name__}: {trace.cache_error}): traced without a cache")
    return out, notes, engine_info()


def position_without_rope(config: dict) -> str | None:
    """A note for a family whose position is not RoPE (the course's reader's record, configs.NOT_ROPE, and
    Falcon with alibi), which this engine, tracing the rotary function alone, does not see; None otherwise.

    >>> position_without_rope({"model_type": "bloom"})[:40]
    "model_type 'bloom' gives position by ALi"
    """
    inner = language_config(config)
    model_type = inner.get("model_type")
    what = NOT_ROPE.get(model_type) if isinstance(model_type, str) else None
    if model_type == "falcon" and inner.get("alibi"):
        what = "ALiBi (alibi: true: FalconModel builds build_alibi_tensor and applies no rotary embedding)"
    if what is None:
        return None
    return (f"model_type {model_type!r} gives position by {what} (posenc_helpers.configs.NOT_ROPE), which this "
            "engine does not trace: it reads RoPE alone, and reports these layers as calling no rotary function")


def engine_info() -> dict:
    load()
    return {"name": "transformers", "version": f"transformers {transformers.__version__}",
            "detail": f"torch {torch.__version__.split('+')[0]}, meta device"}


def explain(config: dict, **kwargs) -> dict:
    """The report of ``config`` by the transformers engine (the same keys as posenc_helpers.explain.explain)."""
    if not isinstance(config, dict):
        raise EngineError(f"the config must be a JSON object (a dict), got {type(config).__name__}")
    with contextlib.redirect_stdout(sys.stderr):
        layers, notes, engine = hf_layers(config)
    notes.append("transformers engine: query temperatures, the norms' kind and linear-attention states are not traced")
    elsewhere = position_without_rope(config)
    if elsewhere:
        notes.insert(0, elsewhere)
    return build_report(layers, notes, config, engine=engine, **kwargs)
