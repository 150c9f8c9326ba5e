"""Sentences in notebook 11 that state counts about the bundled configs, read from the notebook and held to the data.

If a model is added to posenc_helpers/data/rope_configs.json, or a source's cross-check changes, these fail until the
notebook's sentences say the new truth (and the notebook's own asserts, re-executed, agree). The data file's own "about"
text (each note names its second copies, cross_checked sums them up) is held to every entry, both groups.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from posenc_helpers.configs import bundled_configs, bundled_sources, config_summary, rope_settings
from posenc_helpers.viz.shipped import unfinished_pairs

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "11-rope-as-shipped.ipynb"
DATA = Path(__file__).resolve().parent.parent / "posenc_helpers" / "data" / "rope_configs.json"
HASH = re.compile(r"\b[0-9a-f]{40}\b")


@pytest.fixture(scope="module")
def prose() -> str:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    text = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.sub(r"\s+", " ", text)


def names(listed: str) -> list[str]:
    return [n.strip() for n in listed.split(",")]


def test_the_unscaled_count_and_names_match_the_data(prose):
    match = re.search(r"for the (\d+) unscaled configs \(([^)]*)\)", prose)
    assert match, "the 'L' caveat sentence is gone or reworded"
    count, listed = int(match.group(1)), names(match.group(2))
    unscaled = [name for name, cfg in bundled_configs().items() if rope_settings(cfg).rope_type == "default"]
    assert listed == unscaled and count == len(unscaled) == 6
    # for these, the reader's L is the declared context
    for name in unscaled:
        s = config_summary(bundled_configs()[name])
        assert s["length"] == s["context"] == bundled_configs()[name].get(
            "max_position_embeddings", bundled_configs()[name].get("n_positions")), name


def test_the_sources_sentence_matches_each_entrys_cross_check(prose):
    every = re.search(r"confirms every number of (\d+) entries \(([^)]*)\)", prose)
    some = re.search(r"only some numbers of (\d+) \(([^:]*):", prose)
    none = re.search(r"for (\d+) \(([^)]*)\) no attributable second copy", prose)
    assert every and some and none, "the sources sentence is gone or reworded"
    said = {"every number": every, "some numbers": some, "none": none}
    groups: dict[str, list[str]] = {key: [] for key in said}
    for name, source in bundled_sources().items():
        groups[source["cross_checked"]].append(name)
    for key, match in said.items():
        assert names(match.group(2)) == groups[key] and int(match.group(1)) == len(groups[key]), key


@pytest.mark.parametrize("name", sorted(bundled_sources("all")))
def test_every_entrys_note_backs_its_label(name):
    # the data file's "about" says so of every entry, the 2025-26 group included: a cross-check with a commit other
    # than the source's own exactly when cross_checked is not "none", and "partial" exactly for "some numbers"
    source = bundled_sources("all")[name]
    assert source["cross_checked"] in ("every number", "some numbers", "none"), name
    note = source["note"]
    after = note[note.find("Cross-check"):] if "Cross-check" in note else ""
    other_commits = set(HASH.findall(after)) - {source["commit"]}
    assert bool(other_commits) == (source["cross_checked"] != "none"), name
    assert ("partial" in after) == (source["cross_checked"] == "some numbers"), name


def test_no_entry_keeps_a_cross_check_outside_its_source():
    # one shape for every entry: the cross-check lives in source.note and source.cross_checked only
    data = json.loads(DATA.read_text(encoding="utf-8"))
    models, about = data["models"], data["about"]
    assert "names the second public copies" in about and "'source.cross_checked' sums that up" in about
    assert all(set(m) <= {"name", "source", "config", "group", "kv"} for m in models)
    # the KV-cache fields (issue 29) sit beside the RoPE config, each with its own source: never inside "config"
    assert all(set(m["kv"]["source"]) == {"repository", "path", "commit"} for m in models)
    assert all("num_key_value_heads" not in json.dumps(m["config"]) for m in models)
    assert all(set(m["source"]) == {"repository", "path", "commit", "note", "cross_checked"} for m in models)


def test_the_mistral_sentence_matches_the_data(prose):
    assert ("The bundled Mistral 7B is v0.1 (base 10,000): its config declares 32,768 tokens, and its paper gives a "
            "context length of 8,192. But every layer of v0.1 attends through a sliding window of 4,096 tokens") in prose
    assert ("within it 18 of its 64 pairs never finish a turn, not the table's 4 (within 32,768) nor 14 (within "
            "8,192). v0.2 and later use base 1,000,000 and no window.") in prose
    cfg, note = bundled_configs()["Mistral 7B"], bundled_sources()["Mistral 7B"]["note"]
    assert cfg["rope_theta"] == 10000.0 and cfg["max_position_embeddings"] == 32768
    assert "Mistral-7B-v0.1" in note and "context_len of 8192" in note and "rope_theta 1000000.0" in note
    assert "sliding_window 4096" in note and "window_size 4096" in note  # the window the sentence counts in
    assert unfinished_pairs(128, cfg["rope_theta"], 8192) == 14 and config_summary(cfg)["never_turn"] == 4
    assert unfinished_pairs(128, cfg["rope_theta"], 4096) == 18
    # the counts by hand: λ_k = 2π·10000^(k/64) > 8192 for k = 50 … 63, > 4096 for k = 46 … 63
    assert sum(2 * 3.141592653589793 * 10000 ** (k / 64) > 8192 for k in range(64)) == 14
    assert sum(2 * 3.141592653589793 * 10000 ** (k / 64) > 4096 for k in range(64)) == 18


def test_the_phi3_revision_is_named_in_notebook_and_data(prose):
    commit = "10d25dfa1593265daf4a3bac573ab76ccf61d60f"
    assert commit in prose and commit in bundled_sources()["Phi-3-mini 128k"]["note"]
    assert bundled_configs()["Phi-3-mini 128k"]["rope_scaling"]["type"] == "su"   # the first release's name
