"""The numpy decoder block against transformers itself: logits stored by ``make hf-reference`` (tools/hf_reference.py).

Each ``tests/data/hf_reference_<family>.npz`` holds a tiny random-weight
Qwen3 or Gemma 3 model's weights (float32), a batch of two rows (the second
left-padded), and the logits transformers computed for it in float32, eagerly:
the full pass and cached decoding (a prefill, then one token at a time through
a DynamicCache, sliding layers rolling). The ``.json`` beside it holds the
config and the versions and command that made it. Nothing here imports torch
or transformers: the numpy block reads the same weights and must give the same
logits on every real (non-pad) position, to float32 rounding.

Tolerance: ``1e-4 × max(1, largest |logit|)``, absolute. transformers computes
in float32 and the block in float64 from the same float32 weights, so they
differ by float32 rounding (about 1e-6 on these logits of size 2); a change of
0.05 in one norm weight, a window off by one or a wrong RoPE base moves logits
by 1e-3 or more.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from posenc_helpers import decoder
from tools import hf_reference

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@functools.cache
def _load(family):
    with np.load(DATA / f"hf_reference_{family}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    record = json.loads((DATA / f"hf_reference_{family}.json").read_text(encoding="utf-8"))
    weights = {k[len("weight."):]: v for k, v in arrays.items() if k.startswith("weight.")}
    return arrays, record, weights


def _case(family):
    arrays, record, weights = _load(family)
    spec = decoder.spec_from_config(record["config"])
    return spec, {k: v.astype(np.float64) for k, v in weights.items()}, arrays


def _tolerance(want, mask):
    return 1e-4 * max(1.0, float(np.abs(want[mask == 1]).max()))


def _max_diff(got, want, mask):
    valid = mask == 1
    assert np.isfinite(got[valid]).all() and np.isfinite(want[valid]).all()
    return float(np.abs(got[valid] - want[valid]).max())


def _full(spec, weights, arrays):
    return decoder.forward(spec, weights, arrays["input_ids"], attention_mask=arrays["attention_mask"],
                           position_ids=arrays["position_ids"])


def _decode(spec, weights, arrays):
    return decoder.decode(spec, weights, arrays["input_ids"], attention_mask=arrays["attention_mask"],
                          prefill=int(arrays["prefill"]))


@pytest.mark.parametrize("family", decoder.FAMILIES)
def test_the_full_pass_gives_transformers_logits(family):
    spec, weights, arrays = _case(family)
    want, mask = arrays["logits_full"], arrays["attention_mask"]
    assert _max_diff(_full(spec, weights, arrays), want, mask) < _tolerance(want, mask)


@pytest.mark.parametrize("family", decoder.FAMILIES)
def test_cached_decoding_gives_transformers_cached_logits(family):
    spec, weights, arrays = _case(family)
    want, mask = arrays["logits_decode"], arrays["attention_mask"]
    assert _max_diff(_decode(spec, weights, arrays), want, mask) < _tolerance(want, mask)


@pytest.mark.parametrize("family", decoder.FAMILIES)
def test_the_files_record_the_versions_the_command_and_what_they_exercise(family):
    arrays, record, weights = _load(family)
    assert record["transformers_version"] == hf_reference.TRANSFORMERS_VERSION
    assert record["torch_version"].split("+")[0] == hf_reference.TORCH_VERSION
    assert "make hf-reference" in record["command"] and "tools.hf_reference" in record["command"]
    assert record["config"]["model_type"] == family and record["attn_implementation"] == "eager"
    assert re.search(r"^hf-reference:", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert all(v.dtype == np.float32 for v in weights.values())
    assert (DATA / f"hf_reference_{family}.npz").stat().st_size < 200_000
    spec = decoder.spec_from_config(record["config"])
    assert set(weights) == set(decoder.weight_shapes(spec))
    # a left-padded row, a sliding window shorter than the row (its cache rolls), and full layers
    ids, mask = arrays["input_ids"], arrays["attention_mask"]
    assert (mask[0] == 1).all() and mask[1, 0] == 0 and mask[1, -1] == 1
    windows = [w for w in spec.windows if w is not None]
    assert windows and max(windows) < ids.shape[1] - int(arrays["prefill"]) and None in spec.windows
    assert "DynamicSlidingWindowLayer" in record["cache_layers"]
    if family == "gemma3_text":  # both RoPE bases, a scale that is not 1/√head_dim, the final soft cap
        assert len({float(f[1]) for f in spec.inv_freq}) == 2
        assert spec.softmax_scale[0] != spec.head_dim**-0.5 and spec.final_softcap is not None
    # transformers' own cached decoding agrees with its full pass
    assert _max_diff(arrays["logits_decode"], arrays["logits_full"], mask) < _tolerance(arrays["logits_full"], mask)


@pytest.mark.parametrize("family", decoder.FAMILIES)
def test_the_comparison_fails_on_one_changed_weight_or_window(family):
    spec, weights, arrays = _case(family)
    mask = arrays["attention_mask"]
    changed = dict(weights)
    name = "model.layers.1.self_attn.k_norm.weight"
    changed[name] = weights[name].copy()
    changed[name][0] += 0.05
    for run, key in ((_full, "logits_full"), (_decode, "logits_decode")):
        want = arrays[key]
        assert _max_diff(run(spec, changed, arrays), want, mask) > 3 * _tolerance(want, mask), key
    for windows in ((None,) * spec.layers, tuple(None if w is None else w + 1 for w in spec.windows)):
        wrong = dataclasses.replace(spec, windows=windows)
        assert _max_diff(_full(wrong, weights, arrays), arrays["logits_full"], mask) > 3 * _tolerance(arrays["logits_full"], mask)
