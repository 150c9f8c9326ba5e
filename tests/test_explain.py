"""`posenc explain` with the course's engine, called as the installed command in a subprocess (issue 45).

Each bundled config (posenc_helpers/data/rope_configs.json, with its KV fields merged in) and three real configs
(tests/data/explain, sources in SOURCES.md there) is written to a file and explained. The report's numbers are
held to independent code: the KV cache to tests/literal_kvcache.py's literal count, the base-context check to
posenc_helpers.base_bound.config_bounds (which finds the kinds of layer its own way), the per-layer design
rebuilt from the runs to layer_positions, and a few totals to arithmetic written out here. The transformers
engine and --check are tested by tests/test_explain_hf.py (make test-hf).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import literal_kvcache as lit
import numpy as np
import pytest

from posenc_helpers.base_bound import config_bounds
from posenc_helpers.configs import NOT_ROPE, bundled_configs, layer_positions, per_layer, rope_settings
from posenc_helpers.configs import layers as configs_layers
from posenc_helpers.explain import explain, reader_config, reader_notes
from posenc_helpers.kvcache import bundled_kv_config, kv_cache, kv_layers

ROOT = Path(__file__).resolve().parent.parent
POSENC = Path(sys.executable).parent / "posenc"
REAL = sorted((ROOT / "tests" / "data" / "explain").glob("*.json"))
CONTEXTS = (8192, 131072, 1048576)


def run(*args, stdin: str | None = None, cwd=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(POSENC), *map(str, args)], input=stdin, capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=env)


def report(path, *options) -> dict:
    result = run("explain", path, "--json", *options)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bundled")
    paths = {}
    for i, name in enumerate(bundled_configs("all")):
        paths[name] = folder / f"{i:02d}.json"
        paths[name].write_text(json.dumps(bundled_kv_config(name)), encoding="utf-8")
    return paths


def per_layer_report(rep: dict) -> list[dict]:
    """The report's layers, one dict each, rebuilt from its runs and kinds."""
    kinds = {k["id"]: k for k in rep["kinds"]}
    out = []
    for r in rep["runs"]:
        out += [kinds[r["kind"]]] * (r["last"] - r["first"] + 1)
    return out


def test_the_installed_command_explains_every_bundled_config(bundled):
    for name, path in bundled.items():
        result = run("explain", path)
        assert result.returncode == 0, (name, result.stderr)
        assert result.stderr == "" and "layers:" in result.stdout and "KV cache" in result.stdout, name


@pytest.mark.parametrize("name", sorted(bundled_configs("all")))
def test_the_layers_are_the_readers_layers_in_runs(bundled, name):
    rep, config = report(bundled[name]), bundled_kv_config(name)
    layers = per_layer_report(rep)
    records = layer_positions({**config, "num_hidden_layers": config.get("num_hidden_layers", config.get("n_layer"))}
                              if "text_config" not in config else config)
    assert rep["num_layers"] == len(layers) == len(records)
    for got, want in zip(layers, records, strict=True):
        assert (got["layer_type"], got["window"], got["rope"]) == (want.layer_type, want.window, want.rope)
        assert got["inv_freq"] == (None if want.inv_freq is None else [float(x) for x in want.inv_freq])
    # runs are maximal: two neighbouring runs are of different kinds, and they cover every layer once
    kinds = [r["kind"] for r in rep["runs"]]
    assert all(a != b for a, b in zip(kinds, kinds[1:], strict=False))
    assert rep["runs"][0]["first"] == 0 and rep["runs"][-1]["last"] == len(layers) - 1
    assert sum(k["count"] for k in rep["kinds"]) == len(layers)


@pytest.mark.parametrize("name", sorted(bundled_configs("all")))
def test_the_kv_cache_is_the_literal_count(bundled, name):
    rep = report(bundled[name])
    entry = lit.raw_models()[name]
    for row, n in zip(rep["kv_cache"]["contexts"], CONTEXTS, strict=True):
        numbers, total = lit.literal_cache(entry, n)
        assert row["context"] == n and row["numbers"] == numbers and row["bytes"] == total, (name, n)


@pytest.mark.parametrize("name", sorted(bundled_configs("all")))
def test_the_base_check_is_config_bounds(bundled, name):
    rep = report(bundled[name])
    want = [x for x in config_bounds(bundled_kv_config(name), bounds="stored") if x.rope]
    got = rep["base_check"]
    assert [(g["context"], g["first_negative_model"], g["first_negative_head"], g["bound"]) for g in got] == [
        (w.context, w.first_negative_model, w.first_negative_head, w.bound) for w in want]
    assert all(g["bound_from"] == "stored" and g["above"] == (g["base"] >= g["bound"]) for g in got)


def test_llama_3_1_8b_by_hand(bundled):
    rep = report(bundled["Llama 3.1 8B"])
    kv = rep["kv_cache"]
    # 32 layers × 2 (keys and values) × 8 kv heads × 128 dims = 65,536 numbers, × 2 bytes (bfloat16)
    assert kv["numbers_per_token"] == 32 * 2 * 8 * 128 and kv["bytes_per_token"] == 131072
    assert [r["bytes"] for r in kv["contexts"]] == [131072 * n for n in CONTEXTS]
    text = run("explain", bundled["Llama 3.1 8B"]).stdout
    assert "per token, while every layer still holds it: 65,536 numbers = 128 KiB" in text
    assert "1M          128 GiB      128 KiB  beyond the declared context" in text


def test_gemma_3_runs_and_windows(bundled):
    rep = report(bundled["Gemma 3 27B"])
    # 62 layers, five sliding (window 1,024) then one full, ten times, then two sliding
    assert [(r["first"], r["last"], r["kind"]) for r in rep["runs"][:3]] == [(0, 4, "A"), (5, 5, "B"), (6, 10, "A")]
    assert len(rep["runs"]) == 21 and rep["runs"][-1] == {"first": 60, "last": 61, "kind": "A"}
    a, b = rep["kinds"]
    assert (a["count"], a["window"], a["kv_holds"], b["count"], b["window"]) == (52, 1024, 1023, 10, None)
    assert rep["text_config"] is True and rep["model_type"] == "gemma3_text"


def test_context_and_dtype_options(bundled):
    base = report(bundled["Mistral 7B"], "--context", "4096,32k")
    assert [r["context"] for r in base["kv_cache"]["contexts"]] == [4096, 32768]
    wide = report(bundled["Mistral 7B"], "--context", "4096,32k", "--dtype", "float32")
    assert wide["kv_cache"]["dtype_from"] == "--dtype" and wide["kv_cache"]["bytes_per_number"] == 4
    assert [2 * r["bytes"] for r in base["kv_cache"]["contexts"]] == [r["bytes"] for r in wide["kv_cache"]["contexts"]]
    # Mistral 7B windows every layer at 4,096: each keeps 4,095 tokens, so 32K costs what 4,095 tokens cost
    assert base["kv_cache"]["contexts"][1]["numbers"] == 32 * 2 * 8 * 128 * 4095
    # a config without a dtype: numbers, and a note; --dtype gives bytes
    nodtype = report(bundled["gpt-oss-20b"])
    assert nodtype["kv_cache"]["bytes_per_number"] is None and any("--dtype" in n for n in nodtype["notes"])
    assert report(bundled["gpt-oss-20b"], "--dtype", "bfloat16")["kv_cache"]["contexts"][0]["bytes"] == (
        2 * nodtype["kv_cache"]["contexts"][0]["numbers"])


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_real_configs_are_explained(path):
    rep = report(path)
    config = json.loads(path.read_text(encoding="utf-8"))
    assert rep["num_layers"] == config["num_hidden_layers"] and rep["source"] == str(path)
    heads, head = config["num_key_value_heads"], config.get("head_dim", config["hidden_size"] // config["num_attention_heads"])
    # every layer full: layers × 2 × kv heads × head_dim numbers per token, 2 bytes each (bfloat16)
    assert rep["kv_cache"]["bytes_per_token"] == config["num_hidden_layers"] * 2 * heads * head * 2
    assert [k["attention"] for k in rep["kinds"]] == ["full"]


def test_real_config_values_by_hand():
    llama = report(ROOT / "tests/data/explain/llama-3.2-3b.json")
    # 28 layers × 2 × 8 heads × 128 × 2 bytes = 114,688 bytes = 112 KiB per token
    assert llama["kv_cache"]["bytes_per_token"] == 114688
    assert llama["kinds"][0]["rope_type"] == "llama3" and llama["kinds"][0]["factor"] == 32.0
    qwen3 = report(ROOT / "tests/data/explain/qwen3-30b-a3b.json")
    assert qwen3["kinds"][0]["qk_norm"] == {"where": "before_rope", "over": "head", "kind": "rms", "weight": "learned"}
    assert qwen3["kv_cache"]["bytes_per_token"] == 48 * 2 * 4 * 128 * 2  # 98,304 bytes = 96 KiB


def test_a_folder_and_standard_input(tmp_path):
    config = (ROOT / "tests/data/explain/qwen2.5-14b.json").read_text(encoding="utf-8")
    (tmp_path / "config.json").write_text(config, encoding="utf-8")
    from_folder, from_stdin = run("explain", tmp_path), run("explain", "-", stdin=config)
    assert from_folder.returncode == from_stdin.returncode == 0
    assert from_folder.stdout.splitlines()[1:] == from_stdin.stdout.splitlines()[1:]
    assert f"config: {tmp_path / 'config.json'};" in from_folder.stdout
    assert from_stdin.stdout.startswith("config: standard input;")


def one_line_error(result, *words):
    assert result.returncode == 2 and result.stdout == "", result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("posenc explain: error: "), result.stderr
    # a command-line user cannot pass a keyword argument: the reader's assume='llama' reads --assume llama
    assert "assume=" not in lines[0], lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_bad_input_gets_one_line_and_status_2(tmp_path, bundled):
    (tmp_path / "broken.json").write_text('{"model_type": "llama",\n "num_hidden_layers": }', encoding="utf-8")
    one_line_error(run("explain", tmp_path / "broken.json"), "is not JSON", "line 2")
    one_line_error(run("explain", "-", stdin="[1, 2]"), "not an object")
    one_line_error(run("explain", tmp_path / "missing.json"), "cannot read", "missing.json")
    one_line_error(run("explain", bundled["Llama 3.1 8B"], "--dtype", "int3"), "unknown dtype 'int3'", "float32")
    one_line_error(run("explain", bundled["Llama 3.1 8B"], "--context", "8k,lots"), "--context 'lots'")
    one_line_error(run("explain", bundled["Llama 3.1 8B"], "--context", "0"), "--context '0'")
    one_line_error(run("explain", bundled["Llama 3.1 8B"], "--engine", "vllm"), "unknown engine 'vllm'")
    # a model_type the reader does not transcribe is refused first, by name, in the command's words
    refused = json.dumps({"model_type": "mystery_lm", "num_hidden_layers": 4, "head_dim": 64, "sliding_window": 4096})
    one_line_error(run("explain", "-", stdin=refused), "model_type 'mystery_lm'", "not a family the reader transcribes",
                   "pass --assume llama")
    # with --assume llama, its window is refused by key: what a window means is the family's code's to say
    one_line_error(run("explain", "-", "--assume", "llama", stdin=refused), "model_type 'mystery_lm'",
                   "(--assume llama given)", "sliding_window = 4096")
    nested = json.dumps({"model_type": "qwen3", "num_hidden_layers": 2, "head_dim": 64, "layer_types": ["full_attention"] * 2,
                         "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e4}}})
    one_line_error(run("explain", "-", stdin=nested), "rope_parameters is nested", "'qwen3'")
    # .venv holds neither torch nor transformers (the lock has neither): the engine that needs them says how to get them
    for option in ("--check", "--engine=transformers"):
        one_line_error(run("explain", bundled["Llama 3.1 8B"], option), "needs torch and transformers",
                       'pip install "torch>=2.6" --index-url https://download.pytorch.org/whl/cpu, then pip install '
                       '"transformers>=5.25,<6" (the extra [hf]')
    usage = run("explain")
    assert usage.returncode == 2 and "usage: posenc explain" in usage.stderr


def test_a_multimodal_config_is_read_from_its_text_config(bundled):
    rep = report(bundled["Qwen3.5 9B"])
    assert rep["text_config"] is True and rep["num_layers"] == 32 and rep["model_type"] == "qwen3_5_text"
    assert any("text_config" in n for n in rep["notes"])


def test_plain_posenc_is_still_the_interpreter(tmp_path):
    result = run(stdin="PE 2 4\nDOT 5 3 1 0 1 0\n")
    assert result.returncode == 0 and result.stdout == "0.9093 -0.4161 0.0200 0.9998\n-0.4161\n"
    (tmp_path / "cmds.txt").write_text("ROPE 1 1 0\nFOO 1\n", encoding="utf-8")
    bad = run(tmp_path / "cmds.txt")
    assert bad.returncode == 1 and bad.stdout == "0.5403 0.8415\n" and "unknown command 'FOO'" in bad.stderr
    assert run("--help").stdout.startswith("usage: posenc [-h] [file]")  # the installed script, named as typed


def test_top_level_help_names_the_explain_subcommand():
    for option in ("--help", "-h"):
        shown = run(option)
        assert shown.returncode == 0 and shown.stderr == ""
        assert ("\nsubcommand:\n  explain CONFIG  explain a model's config.json: its position design, layer by layer "
                "(posenc explain --help)\n") in shown.stdout, shown.stdout
    assert "usage: posenc explain" in run("explain", "--help").stdout


def test_the_transformers_engine_is_not_imported_by_the_course_engine(bundled):
    code = ("import sys; from posenc_helpers.explain_cli import main; main([sys.argv[1]]); "
            "assert not {'torch', 'transformers'} & set(sys.modules), sorted(sys.modules)")
    result = subprocess.run([sys.executable, "-c", code, str(bundled["Gemma 3 27B"])], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr


def test_nothing_reaches_the_network(tmp_path, bundled):
    # every socket connection raises inside the command's process
    (tmp_path / "sitecustomize.py").write_text(
        "import socket\n"
        "def _refuse(*args, **kwargs):\n    raise OSError('network used')\n"
        "socket.socket.connect = _refuse\nsocket.create_connection = _refuse\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    probe = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9))"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert "network used" in probe.stderr  # the guard is active in a child process
    for path in (bundled["DeepSeek-V3"], REAL[0]):
        assert run("explain", path, env=env).returncode == 0


def test_json_is_the_text_as_data(bundled):
    rep = report(bundled["Qwen3.5 9B"])
    assert rep["format"] == 1 and rep["engine"]["name"] == "course"
    text = run("explain", bundled["Qwen3.5 9B"]).stdout
    for kind in rep["kinds"]:
        assert f"{kind['id']} ×{kind['count']} ({kind['layer_type']})" in text
    # Qwen3.5's linear-attention layers keep a fixed state: conv 8,192 × 4 (bfloat16) + 32 × 128 × 128 (float32)
    state = rep["kv_cache"]["state_numbers"]
    assert state["conv"] == 24 * 8192 * 4 and state["recurrent"] == 24 * 32 * 128 * 128
    assert rep["kv_cache"]["state_bytes"] == state["conv"] * 2 + state["recurrent"] * 4
    assert np.isclose(rep["kv_cache"]["contexts"][0]["bytes_per_token"], rep["kv_cache"]["contexts"][0]["bytes"] / 8192)


def test_the_docs_page_shows_the_commands_current_output():
    page = (ROOT / "docs" / "EXPLAIN.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```text\n\$ posenc (explain [^\n]+)\n(.*?)```", page, re.S)
    # the course's engine's examples (--check and --engine transformers need make test-hf's environment)
    blocks = [(c, shown) for c, shown in blocks if "--check" not in c and "--engine" not in c]
    assert len(blocks) >= 3
    for command, shown in blocks:
        result = run(*command.split(), cwd=ROOT)
        assert result.returncode == 0 and result.stdout == shown, command


# --- the reader's refusals, in the command's words (issue 42 §2 met issue 45) ---------------------------------------

# a family the reader does not transcribe, Llama-sized: 4 layers, 8 heads of 512 / 8 = 64 dims, 2 KV heads
MYSTERY = {"model_type": "mystery_lm", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8,
           "num_key_value_heads": 2, "rope_theta": 1e4, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}


def test_assume_llama_reads_an_unknown_family_and_says_so():
    config = json.dumps(MYSTERY)
    text = run("explain", "-", "--assume", "llama", stdin=config)
    assert text.returncode == 0 and text.stderr == "", text.stderr
    # the first line (wrapped at 100 characters) says what was assumed
    first = " ".join(text.stdout.split("\nengine: ")[0].split())
    assert first == ("config: standard input; model_type 'mystery_lm', not a family the reader transcribes: read as "
                     "Llama's code reads it (assumed on request; see the notes)"), first
    notes = text.stdout[text.stdout.index("\nnotes:\n"):]
    assert "model_type 'mystery_lm' is not a family the reader transcribes: read as Llama's code reads it, as " \
           "--assume llama asks" in " ".join(notes.split())
    assert "assume=" not in text.stdout
    rep = json.loads(run("explain", "-", "--assume", "llama", "--json", stdin=config).stdout)
    assert rep["assumed"] == {"model_type": "mystery_lm", "read_as": "llama"} and rep["model_type"] == "mystery_lm"
    assert rep["notes"][0].startswith("model_type 'mystery_lm' is not a family the reader transcribes")
    # what the family's own code decides is not claimed: QK-norm and sinks unknown
    (kind,) = rep["kinds"]
    assert kind["qk_norm"] == "unknown" and kind["sinks"] == "unknown"
    # read as Llama: 4 layers × 2 (keys, values) × 2 KV heads × 64 dims = 1,024 numbers per token, 2 bytes each;
    # 32 pairs, ω_k = 10,000^(−2k/64)
    assert rep["kv_cache"]["numbers_per_token"] == 4 * 2 * 2 * 64 and rep["kv_cache"]["bytes_per_token"] == 2048
    assert kind["pairs"] == 32 and np.allclose(kind["inv_freq"], [1e4 ** (-2 * k / 64) for k in range(32)], rtol=1e-13)
    # and exactly as the same config with model_type 'llama' (nothing else differs)
    llama = json.loads(run("explain", "-", "--json", stdin=json.dumps({**MYSTERY, "model_type": "llama"})).stdout)
    same = ("attention", "window", "rope", "pairs", "rotary_dim", "head_dim", "layout", "base", "inv_freq",
            "softmax_scale", "kv_numbers_per_token", "kv_holds")
    assert [kind[f] for f in same] == [llama["kinds"][0][f] for f in same]
    assert llama["assumed"] is None and rep["kv_cache"]["contexts"] == llama["kv_cache"]["contexts"]


def test_assume_takes_only_llama_and_only_with_the_course_engine(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(MYSTERY), encoding="utf-8")
    one_line_error(run("explain", path, "--assume", "mistral"), "unknown family 'mistral' (--assume)", "only: llama")
    one_line_error(run("explain", path, "--assume", "Llama"), "unknown family 'Llama' (--assume)")
    one_line_error(run("explain", path, "--assume", "llama", "--engine", "transformers"),
                   "--assume is for the course's reader")
    # a family the reader transcribes is read as always, and the report says --assume changed nothing
    known = tmp_path / "qwen3.json"
    known.write_text(json.dumps({**MYSTERY, "model_type": "qwen3"}), encoding="utf-8")
    with_assume, without = report(known, "--assume", "llama"), report(known)
    assert with_assume["assumed"] is None and with_assume["kinds"] == without["kinds"]
    assert with_assume["notes"][0] == "--assume llama not used: model_type 'qwen3' is a family the reader transcribes"
    assert with_assume["notes"][1:] == without["notes"]


@pytest.mark.parametrize(("key", "value"), [("position_embedding_type", "absolute"), ("use_dynamic_ntk", True),
                                            ("use_logn_attn", True), ("num_layers", 4), ("n_layer", 4),
                                            ("multi_query_group_num", 2)])
def test_another_familys_key_is_refused_with_assume_llama_and_without_model_type(key, value):
    for config, options in (({**MYSTERY, key: value}, ("--assume", "llama")),
                            ({k: x for k, x in {**MYSTERY, key: value}.items() if k != "model_type"}, ())):
        result = run("explain", "-", *options, stdin=json.dumps(config))
        one_line_error(result, f"its {key} = {value!r} means what that family's code makes of it")


@pytest.mark.parametrize("model_type", [*sorted(NOT_ROPE), "falcon with alibi"])
def test_a_family_without_rope_gets_the_readers_own_refusal(model_type):
    config = {"model_type": model_type, "n_layer": 2, "num_hidden_layers": 2, "n_head": 4, "n_embd": 256,
              "hidden_size": 256, "num_attention_heads": 4, "torch_dtype": "float32"}
    if model_type == "falcon with alibi":
        config["model_type"], config["alibi"] = "falcon", True
    with pytest.raises(ValueError) as refusal:  # the reader's own words, from the reader
        layer_positions(config)
    said = str(refusal.value)
    assert "\n" not in said and f"model_type {config['model_type']!r} uses " in said and "not RoPE" in said
    for options in ((), ("--assume", "llama"), ("--json",)):
        result = run("explain", "-", *options, stdin=json.dumps(config))
        one_line_error(result, "not RoPE")
        assert result.stderr == f"posenc explain: error: {said}\n"


# --- the seams with the reader: its notes, its reading of a config's language model ---------------------------------


def hand_built() -> dict[str, dict]:
    """Every bundled config and every hand-built shape of the reader's tests (tests/family_shapes.py and
    tests/test_layer_positions.py's HAND)."""
    from family_shapes import EDGE, NEW
    from test_layer_positions import HAND

    return {**{f"bundled {n}": bundled_kv_config(n) for n in bundled_configs("all")},
            **{f"NEW {n}": c for n, c in NEW.items()}, **{f"EDGE {n}": c for n, c in EDGE.items()},
            **{f"HAND {n}": c for n, c in HAND.items()}}


def test_the_notes_read_back_from_describe_config_are_the_readers_own():
    """reader_notes parses describe_config's `note: ` lines (the reader exposes a per-layer config's notes nowhere
    else): held here to the list the reader builds (configs.layers._resolve, which describe_config prints)."""
    per_layer_configs = 0
    for name, config in [*hand_built().items(), ("assumed", MYSTERY | {"sliding_window": None})]:
        assume = "llama" if name == "assumed" else None
        given = reader_config(config)
        parsed = reader_notes(given, assume=assume)
        if per_layer(given, assume=assume):
            per_layer_configs += 1
            _records, notes, _family = configs_layers._resolve(given, need_count=True, assume=assume)
            assert parsed == notes, name
            assert all("\n" not in n for n in notes), name
        else:
            assert parsed == [n for n in rope_settings(given, assume=assume).notes if not n.startswith("base ")], name
        # every one reaches the report, in order, before the KV counter's and the report's own
        rep = explain(config, assume=assume)
        assert rep["notes"][: len(parsed)] == list(dict.fromkeys(parsed)), name
    assert per_layer_configs >= 40


def test_the_report_reads_each_hand_built_shape_as_the_reader_and_the_kv_counter_do():
    for name, config in hand_built().items():
        rep = explain(config)
        records = layer_positions(reader_config(config))
        layers = per_layer_report(rep)
        assert len(layers) == len(records) == rep["num_layers"], name
        for got, want in zip(layers, records, strict=True):
            assert (got["window"], got["rope"], got["rotary_dim"], got["head_dim"]) == (
                want.window, want.rope, want.rotary_dim, want.head_dim), name
        try:
            kv, _notes = kv_layers(config)
        except ValueError:
            assert all(k["kv_kind"] is None for k in rep["kinds"]), name
            continue
        assert [x["kv_numbers_per_token"] for x in layers] == [x.numbers_per_token for x in kv], name


def test_gpt_j_keys_are_named_once_by_the_kv_counter():
    """GPT-J's config.json says n_layer, n_head, n_embd, n_positions (GPTJConfig.attribute_map): the report reads
    them through the KV counter's own mapping, with or without model_type."""
    config = bundled_kv_config("GPT-J-6B")
    assert {"n_layer", "n_head", "n_embd", "n_positions"} <= set(config) and "num_hidden_layers" not in config
    rep = explain(config)
    assert rep["num_layers"] == config["n_layer"] == 28 and rep["declared_context"] == config["n_positions"] == 2048
    # GPT-J: every head's 64 rotary dims of 4,096 / 16 = 256 turn interleaved; 16 KV heads × 256 × 2 per layer
    (kind,) = rep["kinds"]
    assert (kind["rotary_dim"], kind["head_dim"], kind["layout"]) == (64, 256, "interleaved")
    assert kind["kv_numbers_per_token"] == 2 * 16 * 256
    untyped = explain({k: x for k, x in config.items() if k != "model_type"})
    assert untyped["kinds"][0]["inv_freq"] == kind["inv_freq"] and untyped["num_layers"] == 28


def test_a_compressed_layer_without_its_entries_is_not_totalled():
    # the transformers engine measures no compressed entries (kv_holds "not traced"): no total rather than a short one
    from posenc_helpers.explain import NOT_TRACED, course_layers, kv_summary

    layers, _ = course_layers(bundled_kv_config("DeepSeek V4 Flash"))
    assert kv_summary(layers, (8192,), 2)["contexts"][0]["bytes"] == kv_cache(bundled_kv_config("DeepSeek V4 Flash"),
                                                                             8192).total_bytes
    without = [{k: v for k, v in x.items() if k != "kv_compressed"} for x in layers]
    assert kv_summary(without, (8192,), 2) is None
    unmeasured = [{**x, "kv_holds": NOT_TRACED} for x in layers]
    assert kv_summary(unmeasured, (8192,), 2) is None


@pytest.mark.parametrize("config, want", [
    ({"model_type": "kimi_linear", "n_positions": 2048, "model_max_length": 1048576}, 2048),
    ({"model_type": "kimi_linear", "model_max_length": 1048576}, 1048576),
    ({"model_type": "kimi_linear", "max_position_embeddings": 0, "n_positions": 2048, "model_max_length": 9}, 2048),
    ({"model_type": "llama", "model_max_length": 8192}, None),  # only Kimi Linear reads model_max_length so
    ({"model_type": "gpt2", "n_positions": 1024}, 1024),
])
def test_the_declared_context_takes_the_keys_in_order(config, want):
    # explain and the base bound read the same key first (configs.context_field): n_positions before Kimi's fallback
    from posenc_helpers import base_bound
    from posenc_helpers.explain import declared_context

    assert declared_context(config) == want
    if want is not None and config.get("max_position_embeddings", 1) != 0:
        assert base_bound._declared_context(config) == want
