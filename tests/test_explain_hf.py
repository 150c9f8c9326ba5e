"""`posenc explain --check` and `--engine transformers`: the course's reader held to transformers itself (issue 45).

Run by ``make test-hf``, which builds the throwaway environment build/hfref-venv (torch and transformers at the
pins of posenc_helpers/explain_hf.py, this package installed there) and sets POSENC_HF_VENV; without it every test
here is skipped. Each test calls that environment's installed ``posenc`` in a subprocess:

* every bundled config, and the hand-built shapes of every family the reader transcribes
  (tests/test_layer_positions.py's HAND, and tests/family_shapes.py's NEW and EDGE: the families and edge cases of
  issue 42 §2), are read alike by both engines, but for the named exceptions below;
* the newest families transformers ships are each read alike or refused by the reader by name, and the
  transformers engine answers for at least 10 families the reader refuses; families without RoPE are refused by
  the reader by name, with or without --assume llama;
* a misreading planted in the reader (its layout rule, its softmax-scale rule, the new families' partial
  rotation, q/k norm and head width) makes the check fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from family_shapes import EDGE, NEW
from test_layer_positions import HAND

from posenc_helpers.configs import bundled_configs
from posenc_helpers.kvcache import bundled_kv_config

ROOT = Path(__file__).resolve().parent.parent
VENV = os.environ.get("POSENC_HF_VENV")
if not VENV:
    pytest.skip("needs transformers: run `make test-hf` (sets POSENC_HF_VENV)", allow_module_level=True)
VENV = (ROOT / VENV).resolve()
POSENC, PYTHON = VENV / "bin" / "posenc", VENV / "bin" / "python"

#: Hand-built shapes where the engines differ, and why (every other shape must agree).
HAND_EXCEPTIONS = {
    # encoders that attend both ways: the reader's window is the whole span (2 × the half-width), transformers
    # stores a half-width bound (ModernBERT: local_attention // 2; Gemma 3: sliding_window // 2 + 1, exclusive)
    "ModernBERT global/local": ("disagree", {"window"}),
    "Gemma 3 bidirectional (EmbeddingGemma)": ("disagree", {"window"}),
    # transformers 5.25.0's Gemma 3n forward does not run on the meta device without its own cache (KeyError
    # 'sliding_attention'): the transformers engine says so by name
    "Gemma 3n defaults": ("error", "cannot trace model_type 'gemma3n_text'"),
    # Gemma3nTextConfig itself refuses 7 layers with the default num_kv_shared_layers = 15
    "Gemma 3n multimodal, old-style keys": ("error", "The set of layer types producing a cache is different"),
}

#: The shapes of issue 42 §2 (tests/family_shapes.py) where the engines differ, and why (every other must agree).
NEW_EXCEPTIONS = {
    # transformers 5.25.0 rewrote FalconAttention.forward: with new_decoder_architecture it caches the num_kv_heads
    # grouped keys and values (grouped[..., -2, :], then layer_past.update), where 5.24.0's _split_heads broadcast
    # them to every query head first (torch.broadcast_to(key, query.shape)); the reader's KV count (kvcache.py's
    # _falcon_kv_heads) transcribes 5.24.0: 2 × 16 heads × 64 against 5.25.0's 2 × 4 × 64
    "Falcon new architecture, dynamic": ("disagree", {"kv_numbers_per_token"}),
}

#: Shapes that agree on every field both engines read, but that transformers cannot run as configured: the
#: transformers engine says why in a note (the reader says the same in its own note).
CANNOT_CACHE = {
    # Qwen2Config.__post_init__ sets sliding_window to None (use_sliding_window false), and 5.25.0's
    # DynamicSlidingWindowLayer(sliding_window=None) raises building the cache (torch.tensor(None)); the reader's
    # note: "the model as configured does not run". The KV fields are then not compared.
    "Qwen2 use_sliding_window false, sliding layer_types": "cannot build this config's DynamicCache(config=...)",
}

#: Families without RoPE (the reader's configs.NOT_ROPE, and Falcon with alibi), as their config classes' defaults:
#: the reader refuses each by name; the transformers engine reads these (and says RoPE is not what it traces) ...
NOT_ROPE_READ = ("bloom", "gpt2", "gpt_bigcode", "opt")
#: ... and cannot read these in 5.25.0, by name
NOT_ROPE_UNREAD = {"mpt": "cannot trace model_type 'mpt'", "gpt_neo": "cannot read model_type 'gpt_neo'",
                   "falcon_alibi": "cannot trace model_type 'falcon'"}

#: Families the reader does not transcribe whose code reads like Llama's in every compared field (transformers
#: 5.25.0, their config classes' defaults), read with --assume llama ...
ASSUMED_ALIKE = ("olmo", "mixtral", "arcee", "persimmon", "seed_oss")
#: ... and two whose code pairs dims 2k and 2k + 1 (models/ernie4_5/modeling_ernie4_5.py and
#: models/helium/modeling_helium.py: rotate_half on x[..., 0::2] and x[..., 1::2]), which Llama's reading misses
ASSUMED_MISREAD = {"ernie4_5": {"layout"}, "helium": {"layout"}}

#: The newest families of transformers 5.25.0 (models added since 5.24.0, and those issue 45 names), as their
#: config classes' defaults: each must be read alike or refused by the course's reader by name.
NEWEST = ("deepseek_v4", "mistral4", "lfm3", "kimi_linear", "olmo_hybrid", "ergo", "minicpm5_moe", "param2moe")

#: Families the transformers engine cannot trace (or transformers cannot even build) in 5.25.0, as their config
#: classes' defaults, with the error it names them by (the message names the model_type of the config it traced:
#: the text config's, e.g. glm5_next_text).
CANNOT_TRACE = {"glm5_next": "cannot trace model_type 'glm5_next", "kolibri1_1": "cannot trace model_type 'kolibri1_1",
                # HunYuanDenseV1Config's default head_dim is None, and its attention computes head_dim ** -0.5
                "hunyuan_v1_dense": ("transformers 5.25.0 cannot build the model of model_type 'hunyuan_v1_dense' "
                                     "(HunYuanDenseV1Config) from this config")}

#: Families the course's reader refuses (not in posenc_helpers.configs.FAMILIES) that the transformers engine reads
#: (deepseek_v4 and kimi_linear left this list when the reader transcribed them, issue 44 §2).
REFUSED = ("mistral4", "lfm3", "olmo_hybrid", "ergo", "mimo_v2_flash", "step3p7", "afmoe", "exaone_moe", "granite_swa")


def posenc(*args, timeout=1800) -> subprocess.CompletedProcess:
    return subprocess.run([str(POSENC), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def check(paths) -> list[dict]:
    result = posenc("explain", "--check", "--json", *paths)
    assert result.returncode in (0, 1, 2), result.stderr[-2000:]
    out = json.loads(result.stdout)
    return out if isinstance(out, list) else [out]


def write(folder: Path, configs: dict) -> dict[str, Path]:
    paths = {}
    for i, (name, config) in enumerate(configs.items()):
        paths[name] = folder / f"{i:02d}.json"
        paths[name].write_text(json.dumps(config), encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def defaults(tmp_path_factory) -> dict[str, Path]:
    """The config.json each family's config class writes with its defaults (transformers' to_dict)."""
    folder = tmp_path_factory.mktemp("defaults")
    families = sorted({*NEWEST, *REFUSED, *CANNOT_TRACE, *NOT_ROPE_READ, *NOT_ROPE_UNREAD, *ASSUMED_ALIKE,
                       *ASSUMED_MISREAD} - {"falcon_alibi"})
    code = ("import json, sys; from transformers.models.auto.configuration_auto import CONFIG_MAPPING as M\n"
            "for mt in sys.argv[2:]: json.dump(M[mt]().to_dict(), open(f'{sys.argv[1]}/{mt}.json', 'w'))\n"
            "json.dump({**M['falcon']().to_dict(), 'alibi': True}, open(f'{sys.argv[1]}/falcon_alibi.json', 'w'))")
    done = subprocess.run([str(PYTHON), "-c", code, str(folder), *families], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return {mt: folder / f"{mt}.json" for mt in [*families, "falcon_alibi"]}


#: Where the transformers engine cannot check a bundled config, and why (each held to transformers 5.25.0's code by
#: tests/hf5_reference.py instead): it finds q/k norms by their module names (q_norm, k_norm, ...), and DeepSeek V4's
#: is kv_norm on its one key = value head; GLM-5's forward pass does not run on the meta device.
ENGINE_GAPS = {"DeepSeek V4 Flash": {"qk_norm"}}
ENGINE_CANNOT_TRACE = {"GLM-5": "cannot trace model_type 'glm_moe_dsa': its forward pass on the meta device failed"}


def test_the_check_agrees_on_every_bundled_config(tmp_path):
    paths = write(tmp_path, {name: bundled_kv_config(name) for name in bundled_configs("all")})
    results = dict(zip(paths, check(paths.values()), strict=True))
    for name, message in ENGINE_CANNOT_TRACE.items():
        traced = results.pop(name)
        assert traced["verdict"] == "error" and message in traced["error"], (name, traced)
    assert all(r["transformers"].startswith("transformers ") for r in results.values())
    gaps = {name: {d["field"] for d in r["disagreements"]} for name, r in results.items() if r["verdict"] == "disagree"}
    assert gaps == ENGINE_GAPS and all(r["verdict"] in ("agree", "disagree") for r in results.values()), [
        (name, r.get("disagreements", r.get("error"))) for name, r in results.items() if r["verdict"] != "agree"]


def test_the_check_agrees_on_every_hand_built_shape(tmp_path):
    paths = write(tmp_path, HAND)
    for name, result in zip(paths, check(paths.values()), strict=True):
        expected = HAND_EXCEPTIONS.get(name, ("agree", None))
        assert result["verdict"] == expected[0], (name, result)
        if expected[0] == "disagree":
            assert {d["field"] for d in result["disagreements"]} == expected[1], (name, result["disagreements"])
        elif expected[0] == "error":
            assert expected[1] in result["error"], (name, result["error"])


def test_the_check_agrees_on_every_shape_of_the_new_families_and_edge_cases(tmp_path):
    shapes = {**NEW, **EDGE}
    paths = write(tmp_path, shapes)
    results = check(paths.values())
    for name, result in zip(paths, results, strict=True):
        expected = NEW_EXCEPTIONS.get(name, ("agree", None))
        assert result["verdict"] == expected[0], (name, result)
        if expected[0] == "disagree":
            assert {d["field"] for d in result["disagreements"]} == expected[1], (name, result["disagreements"])
        if name in CANNOT_CACHE:
            assert result["not_compared"] == ["cache_layer", "kv_holds", "kv_kind", "kv_numbers_per_token"], name
            assert any(CANNOT_CACHE[name] in n for n in result["transformers_notes"]), (name, result)
        else:
            assert result["transformers_notes"] == [], (name, result)
    # every family the reader gained in issue 42 §2 is among them
    assert {c["model_type"] for c in NEW.values()} >= {"olmo2", "glm", "glm4", "glm4_moe", "phi", "stablelm",
                                                       "cohere", "gemma", "falcon", "nemotron"}


def test_families_without_rope_are_refused_by_the_reader_by_name(defaults):
    for assume in ((), ("--assume", "llama")):
        result = posenc("explain", "--check", "--json", *assume, *(defaults[mt] for mt in NOT_ROPE_READ))
        assert result.returncode == 0, result.stderr[-2000:]
        for mt, r in zip(NOT_ROPE_READ, json.loads(result.stdout), strict=True):
            assert r["verdict"] == "refused" and r["layers"] > 0, (mt, r)
            assert r["refused"].startswith(f"model_type {mt!r} uses ") and "not RoPE" in r["refused"], (mt, r)
    for mt, r in zip(NOT_ROPE_UNREAD, check([defaults[mt] for mt in NOT_ROPE_UNREAD]), strict=True):
        assert r["verdict"] == "error" and NOT_ROPE_UNREAD[mt] in r["error"], (mt, r)
    # the transformers engine's own report on one: no RoPE, and a note saying what it does not trace
    text = posenc("explain", "--engine", "transformers", defaults["bloom"])
    assert text.returncode == 0 and "no RoPE (the layer calls no rotary function)" in text.stdout
    assert "no positional encoding" not in text.stdout and "gives position by ALiBi" in " ".join(text.stdout.split())


def test_assume_llama_is_checked_against_the_familys_own_code(defaults):
    """--check --assume llama shows where reading a family as Llama's code misreads it."""
    paths = [defaults[mt] for mt in (*ASSUMED_ALIKE, *ASSUMED_MISREAD)]
    result = posenc("explain", "--check", "--json", "--assume", "llama", *paths)
    assert result.returncode == 1, result.stderr[-2000:]
    for mt, r in zip((*ASSUMED_ALIKE, *ASSUMED_MISREAD), json.loads(result.stdout), strict=True):
        assert r["assumed"] == {"model_type": mt, "read_as": "llama"}, (mt, r)
        if mt in ASSUMED_ALIKE:
            assert r["verdict"] == "agree", (mt, r)
        else:
            assert r["verdict"] == "disagree" and {d["field"] for d in r["disagreements"]} == ASSUMED_MISREAD[mt]
        # what Llama's code cannot say about another family is not compared
        assert {"qk_norm", "sinks"} <= set(r["not_compared"]), (mt, r)
    text = posenc("explain", "--check", "--assume", "llama", defaults["helium"]).stdout
    assert "model_type 'helium' read as Llama's code reads it (--assume llama)" in text
    assert "layout: course 'half-split', transformers 'interleaved'" in text
    # a family whose config sets a per-layer key is refused by that key even when assumed Llama
    refused = json.loads(posenc("explain", "--check", "--json", "--assume", "llama", defaults["mimo_v2_flash"]).stdout)
    assert refused["verdict"] == "refused" and "(--assume llama given)" in refused["refused"]
    assert "layer_types" in refused["refused"] and "assume=" not in refused["refused"]


def test_the_newest_families_are_read_alike_or_refused_by_name(defaults):
    results = check([defaults[mt] for mt in NEWEST])
    for mt, result in zip(NEWEST, results, strict=True):
        if mt == "deepseek_v4":  # the engine does not find its kv_norm (ENGINE_GAPS)
            assert {d["field"] for d in result["disagreements"]} == {"qk_norm"}, (mt, result)
            continue
        assert result["verdict"] in ("agree", "refused"), (mt, result)
        if result["verdict"] == "refused":
            assert f"model_type {mt!r}" in result["refused"], (mt, result["refused"])
    for mt, result in zip(CANNOT_TRACE, check([defaults[mt] for mt in CANNOT_TRACE]), strict=True):
        assert result["verdict"] == "error" and CANNOT_TRACE[mt] in result["error"], (mt, result)


def test_the_transformers_engine_answers_for_families_the_reader_refuses(defaults):
    results = check([defaults[mt] for mt in REFUSED])
    answered = [mt for mt, r in zip(REFUSED, results, strict=True) if r["verdict"] == "refused" and r["layers"] > 0]
    assert answered == list(REFUSED) and len(answered) >= 9, results
    # the whole report for one of them, as text and as data
    text = posenc("explain", "--engine", "transformers", defaults["mimo_v2_flash"])
    assert text.returncode == 0 and "engine: transformers 5.25.0" in text.stdout, text.stderr[-2000:]
    data = json.loads(posenc("explain", "--engine", "transformers", "--json", defaults["mimo_v2_flash"]).stdout)
    assert data["engine"]["name"] == "transformers" and data["num_layers"] == sum(k["count"] for k in data["kinds"])
    # MiMo-V2-Flash's attention has sinks (modeling_mimo_v2_flash.py passes s_aux), and sliding layers
    assert any(k["sinks"] is True for k in data["kinds"]) and any(k["attention"] == "sliding" for k in data["kinds"])


def test_the_transformers_engine_reads_deepseek_v3_on_the_meta_device(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(bundled_kv_config("DeepSeek-V3")), encoding="utf-8")
    data = json.loads(posenc("explain", "--engine", "transformers", "--json", path).stdout)
    # 61 layers, each caching the latent (512) and the rotated shared key (64): 576 numbers per token
    assert data["num_layers"] == 61 and [k["kv_numbers_per_token"] for k in data["kinds"]] == [576]
    assert data["kinds"][0]["layout"] == "interleaved" and data["kinds"][0]["cache_layer"] == "DynamicLayer"
    assert data["kv_cache"]["bytes_per_token"] == 61 * 576 * 2


# The plants replace the reader's private rules, so each first checks that what it replaces is still there, in the
# shape it replaces it with (a renamed or reshaped rule fails here by name, rather than planting nothing).
GUARD = """
import inspect
import posenc_helpers.configs.families as F
import posenc_helpers.configs.layers as L

def plant(module, name, value):
    old = getattr(module, name)  # AttributeError: the reader no longer has the rule the plant replaces
    assert list(inspect.signature(old).parameters) == list(inspect.signature(value).parameters), (name, old)
    setattr(module, name, value)

def plant_item(table, key, was, value):
    assert table[key] == was, (key, table[key])  # KeyError or AssertionError: the rule changed
    table[key] = value
"""

PLANTS = {
    # every family read half-split: DeepSeek-V3's interleaved pairs are misread
    "layout": ("plant(L, '_layout', lambda config, family: 'half-split')",
               bundled_kv_config("DeepSeek-V3"), "layout"),
    # Gemma 3's softmax scale read as 1/√head_dim instead of 1/√query_pre_attn_scalar
    "softmax scale": ("plant(L, '_softmax_scale', lambda config, family, width, p: width ** -0.5)",
                      bundled_kv_config("Gemma 3 27B"), "softmax_scale"),
    # issue 42 §2's families: StableLM's class default fraction read as GLM's 0.5 (it is 0.25) ...
    "partial rotation": ("plant_item(F.PARTIAL_DEFAULTS, 'stablelm', 0.25, 0.5)",
                         NEW["StableLM defaults (partial 0.25)"], "rotary_dim"),
    # ... Phi's q/k LayerNorm (qk_layernorm) forgotten ...
    "q/k norm": ("assert F._OPTIONAL_QK_NORM['phi'][0] == 'qk_layernorm'; del F._OPTIONAL_QK_NORM['phi']",
                 NEW["Phi defaults with qk_layernorm"], "qk_norm"),
    # ... and Falcon's head width read as a class default of 128 (FalconAttention splits hidden_size // heads)
    "head width": ("plant_item(L._HEAD_DIM_RULES, 'falcon', ('always split', False), (128, False))",
                   NEW["Falcon multi-query"], "head_dim"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_misreading_fails_the_check(tmp_path, plant):
    code, config, field = PLANTS[plant]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    run = (f"{GUARD}\n{code}\nfrom posenc_helpers.explain_cli import main\n"
           f"raise SystemExit(main(['--check', {str(path)!r}]))")
    planted = subprocess.run([str(PYTHON), "-c", run], capture_output=True, text=True, timeout=600)
    assert planted.returncode == 1 and "DISAGREE" in planted.stdout and f": {field}: course " in planted.stdout, (
        planted.stdout[-2000:], planted.stderr[-2000:])
    # and without the plant the same config agrees
    assert posenc("explain", "--check", path).returncode == 0


def test_the_docs_pages_check_output_is_current():
    page = (ROOT / "docs" / "EXPLAIN.md").read_text(encoding="utf-8")
    blocks = [(c, shown) for c, shown in re.findall(r"```text\n\$ posenc (explain [^\n]+)\n(.*?)```", page, re.S)
              if "--check" in c]
    assert blocks
    for command, shown in blocks:
        result = subprocess.run([str(POSENC), *command.split()], capture_output=True, text=True, timeout=1800, cwd=ROOT)
        assert result.returncode == 0 and result.stdout == shown, (command, result.stdout)
