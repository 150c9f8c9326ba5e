"""Reference logits from transformers itself for the numpy decoder block: ``python -m tools.hf_reference``.

``make hf-reference`` runs this in a throwaway environment of its own
(``build/hfref-venv``: torch and transformers at the pins below, numpy at the
lock's version), never in ``.venv``: torch and transformers are not in the
project's lock. It builds a tiny random-weight ``Qwen3ForCausalLM`` and a tiny
``Gemma3ForCausalLM`` (text only, ``Gemma3TextConfig``) in float32 on CPU with
``attn_implementation="eager"``, each with a sliding layer whose window (4) is
shorter than the sequence (14) and full layers (Gemma 3's sliding and full
layers with their two RoPE bases), and writes, per family,

* ``tests/data/hf_reference_<family>.npz``: the input ids, the attention mask
  (the second row left-padded), the position ids (generate's rule), the
  prefill length, every weight (float32, under ``weight.<state-dict name>``),
  the full pass's logits and the logits of cached decoding in transformers (a
  prefill, then one token at a time through a ``DynamicCache``);
* ``tests/data/hf_reference_<family>.json``: the config (``to_dict()``), the
  transformers, torch, numpy and Python versions, the command, the seed.

``tests/test_decoder_hf.py`` holds :mod:`posenc_helpers.decoder` to these
files with numpy alone. The weights are drawn by
:func:`posenc_helpers.decoder.random_weights` (norm weights off their identity,
so Gemma's ``1 + w`` is exercised) and loaded into the torch model by their
state-dict names, which :func:`~posenc_helpers.decoder.weight_shapes` must
name exactly: a name missing on either side stops the script.

``python -m tools.hf_reference --configs`` writes
``tests/data/hf_config_reference.json`` instead: each hand-built config of
``tests/family_shapes.py`` built by transformers' own config class (torch is
not needed for that), with what the class makes of it (``head_dim``,
``num_key_value_heads``, ``sliding_window``, ``layer_types``, the standardized
``rope_parameters``, or the error it raises). ``tests/test_families.py``
holds the transcription in ``tests/hf5_reference.py`` to that file.

torch and transformers are imported inside :func:`reference` and
:func:`config_reference` only, so this module imports (and its doctests run)
without them.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import numpy as np

from posenc_helpers import decoder

ROOT = Path(__file__).resolve().parent.parent
#: Where the reference files go (``tests/data/``).
OUT = ROOT / "tests" / "data"
#: The exact versions the files are made with (the Makefile's hf-reference target installs these).
TRANSFORMERS_VERSION = "5.24.0"
TORCH_VERSION = "2.13.0"
#: The command that writes the files, recorded in each of them.
COMMAND = "make hf-reference  (build/hfref-venv/bin/python -m tools.hf_reference)"

SEED = 29  # issue 29
LENGTH = 14  # tokens per row, pads included
PADS = 3  # left pads of the second row
PREFILL = 4  # tokens fed at once before cached decoding goes one token at a time
WINDOW = 4  # the sliding layers' window: shorter than LENGTH, so the window and the rolling cache matter

_COMMON = dict(vocab_size=64, hidden_size=32, intermediate_size=32, num_hidden_layers=3, num_attention_heads=4,
               num_key_value_heads=2, rms_norm_eps=1e-6, max_position_embeddings=256, sliding_window=WINDOW)

#: Each family's config class and arguments. Qwen3: layer 1 sliding (``use_sliding_window`` and ``layer_types``),
#: head_dim·heads = hidden. Gemma 3: two sliding layers (local base 10⁴) and one full (global base 10⁶),
#: head_dim·heads ≠ hidden, ``query_pre_attn_scalar`` ≠ head_dim (so its scale is not 1/√head_dim), a final soft cap
#: the logits reach.
CONFIGS = {
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(
        _COMMON, head_dim=8, use_sliding_window=True, tie_word_embeddings=False,
        layer_types=["full_attention", "sliding_attention", "full_attention"],
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    "gemma3_text": ("Gemma3TextConfig", "Gemma3ForCausalLM", dict(
        _COMMON, head_dim=16, query_pre_attn_scalar=32, final_logit_softcapping=3.0, tie_word_embeddings=True,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}})),
}


def inputs(family: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Input ids (2, LENGTH), the attention mask (row 1 with PADS left pads) and the position ids.

    Position ids follow transformers 5.24's generate (``generation/utils.py``,
    ``_prepare_position_ids_for_generation``): ``mask.cumsum(-1) - 1``, pads
    filled with 0.

    >>> ids, mask, pos = inputs("qwen3")
    >>> ids.shape, mask[1, :PADS + 1].tolist(), pos[1, :PADS + 2].tolist()
    ((2, 14), [0, 0, 0, 1], [0, 0, 0, 0, 1])
    """
    rng = np.random.default_rng([SEED, sorted(CONFIGS).index(family)])
    ids = rng.integers(1, _COMMON["vocab_size"], (2, LENGTH))
    mask = np.ones_like(ids)
    mask[1, :PADS] = 0
    ids[1, :PADS] = 0  # the pad token
    pos = np.where(mask == 0, 0, np.cumsum(mask, axis=-1) - 1)
    return ids, mask, pos


def reference(family: str) -> tuple[dict, dict]:
    """Build ``family``'s tiny model in transformers, run it; return (arrays for the .npz, the JSON record)."""
    import torch
    import transformers

    if transformers.__version__ != TRANSFORMERS_VERSION or torch.__version__.split("+")[0] != TORCH_VERSION:
        raise SystemExit(f"needs transformers {TRANSFORMERS_VERSION} and torch {TORCH_VERSION}, found "
                         f"{transformers.__version__} and {torch.__version__}: run `make hf-reference`")
    torch.manual_seed(SEED)
    config_name, model_name, kwargs = CONFIGS[family]
    config = getattr(transformers, config_name)(**kwargs)
    config._attn_implementation = "eager"
    config_dict = config.to_dict()
    spec = decoder.spec_from_config(config_dict)
    weights = {k: v.astype(np.float32) for k, v in decoder.random_weights(spec, seed=SEED).items()}

    model = getattr(transformers, model_name)(config).to(torch.float32).eval()
    assert model.config._attn_implementation == "eager", model.config._attn_implementation
    state = model.state_dict()
    tied = {"lm_head.weight"} if spec.tied else set()
    if set(state) - tied != set(weights):
        only_torch, only_numpy = sorted(set(state) - tied - set(weights)), sorted(set(weights) - set(state))
        raise SystemExit(f"state dict and decoder.weight_shapes disagree: only in torch {only_torch}, only in numpy {only_numpy}")
    for name, value in weights.items():
        if tuple(state[name].shape) != value.shape:
            raise SystemExit(f"{name}: torch shape {tuple(state[name].shape)}, numpy {value.shape}")
    missing, unexpected = model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
    assert set(missing) == tied and not unexpected, (missing, unexpected)
    if spec.tied:
        assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), "lm_head is not tied"

    ids, mask, pos = inputs(family)
    t_ids, t_mask, t_pos = (torch.from_numpy(a).long() for a in (ids, mask, pos))
    with torch.no_grad():
        full = model(input_ids=t_ids, attention_mask=t_mask, position_ids=t_pos).logits.numpy()
        cache = transformers.DynamicCache(config=model.config)
        steps = [model(input_ids=t_ids[:, :PREFILL], attention_mask=t_mask[:, :PREFILL], position_ids=t_pos[:, :PREFILL],
                       cache=cache, use_cache=True).logits]
        for t in range(PREFILL, LENGTH):  # the mask grows with the sequence; the new token's position is given
            steps.append(model(input_ids=t_ids[:, t:t + 1], attention_mask=t_mask[:, :t + 1],
                               position_ids=t_pos[:, t:t + 1], cache=cache, use_cache=True).logits)
        cached = torch.cat(steps, dim=1).numpy()
    layers = [type(layer).__name__ for layer in cache.layers]

    arrays = dict(input_ids=ids, attention_mask=mask, position_ids=pos, prefill=np.array(PREFILL),
                  logits_full=full.astype(np.float32), logits_decode=cached.astype(np.float32))
    arrays.update({f"weight.{k}": v for k, v in weights.items()})
    record = dict(
        family=family, model_class=model_name, config_class=config_name,
        transformers_version=transformers.__version__, torch_version=torch.__version__, numpy_version=np.__version__,
        python_version=platform.python_version(), command=COMMAND, seed=SEED, attn_implementation="eager",
        dtype="float32", cache_layers=layers, config=config_dict,
        note="logits at pad positions (attention_mask 0) mean nothing; compare valid positions only",
    )
    return arrays, record


def _valid_max(a, b, mask):
    return float(np.abs(a - b)[mask == 1].max())


def write(family: str, out: Path = OUT) -> dict:
    """Write ``family``'s .npz and .json into ``out``; return what was measured (the numpy block against them)."""
    arrays, record = reference(family)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / f"hf_reference_{family}.npz", **arrays)
    (out / f"hf_reference_{family}.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    spec = decoder.spec_from_config(record["config"])
    weights = {k[len("weight."):]: v.astype(np.float64) for k, v in arrays.items() if k.startswith("weight.")}
    ids, mask, pos = arrays["input_ids"], arrays["attention_mask"], arrays["position_ids"]
    mine = decoder.forward(spec, weights, ids, attention_mask=mask, position_ids=pos)
    mine_step = decoder.decode(spec, weights, ids, attention_mask=mask, prefill=PREFILL)
    return dict(
        scale=float(np.abs(arrays["logits_full"])[mask == 1].max()),
        hf_cached_vs_hf_full=_valid_max(arrays["logits_decode"], arrays["logits_full"], mask),
        numpy_full_vs_hf_full=_valid_max(mine, arrays["logits_full"], mask),
        numpy_decode_vs_hf_decode=_valid_max(mine_step, arrays["logits_decode"], mask),
    )


#: The fields :func:`config_reference` records from each built config (None when the class has no such attribute).
CONFIG_FIELDS = ("head_dim", "num_key_value_heads", "sliding_window", "layer_types", "rope_parameters")


def _shapes() -> dict[str, dict]:
    """The hand-built configs of tests/family_shapes.py (plain dicts), by name."""
    namespace: dict = {}
    exec((ROOT / "tests" / "family_shapes.py").read_text(encoding="utf-8"), namespace)  # noqa: S102 (our own file)
    return {**namespace["NEW"], **namespace["EDGE"]}


def config_reference() -> dict:
    """Build every shape of tests/family_shapes.py with transformers' config class; record what it holds."""
    import transformers

    if transformers.__version__ != TRANSFORMERS_VERSION:
        raise SystemExit(f"needs transformers {TRANSFORMERS_VERSION}, found {transformers.__version__}")
    built = {}
    for name, shape in _shapes().items():
        kwargs = {k: x for k, x in json.loads(json.dumps(shape)).items() if k not in ("model_type", "dtype")}
        config = transformers.CONFIG_MAPPING[shape["model_type"]](**kwargs)
        text = getattr(config, "text_config", None) or config  # a multimodal config's language model
        built[name] = {"config": shape, "config_class": type(text).__name__,
                       **{key: getattr(text, key, None) for key in CONFIG_FIELDS}}
    return {"transformers_version": transformers.__version__, "command": "python -m tools.hf_reference --configs",
            "note": "what each config class of transformers makes of the hand-built configs of tests/family_shapes.py",
            "shapes": built}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.hf_reference", description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", default=list(CONFIGS), help=f"any of {list(CONFIGS)} (default: all)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write into (default: tests/data)")
    parser.add_argument("--configs", action="store_true", help="write hf_config_reference.json (no torch needed)")
    options = parser.parse_args(argv)
    if options.configs:
        table = config_reference()
        target = options.out / "hf_config_reference.json"
        target.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {target}: {len(table['shapes'])} configs built by transformers {table['transformers_version']}")
        return 0
    for family in options.families:
        if family not in CONFIGS:
            parser.error(f"family must be one of {list(CONFIGS)}, got {family!r}")
        measured = write(family, options.out)
        print(f"{family}: wrote {options.out}/hf_reference_{family}.npz and .json; largest |logit| "
              f"{measured['scale']:.3g}; max |difference| on valid positions: transformers cached vs full "
              f"{measured['hf_cached_vs_hf_full']:.2e}, numpy full vs transformers full {measured['numpy_full_vs_hf_full']:.2e}, "
              f"numpy decode vs transformers decode {measured['numpy_decode_vs_hf_decode']:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
