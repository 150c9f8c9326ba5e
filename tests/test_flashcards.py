"""Flashcards: the cards are right, every notebook has its cards, the widget shows the right card, the static list is current."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from posenc_helpers import alibi_slopes, frequencies, rope, sinusoidal, wavelengths
from posenc_helpers.base_bound import base_lower_bound
from posenc_helpers.configs import bundled_configs, bundled_kv_fields, bundled_sources, rope_settings
from posenc_helpers.flashcards import CARDS, Card, cards_markdown, flashcard_deck, notebooks_of
from posenc_helpers.precision import rope_angles, round_to
from posenc_helpers.relative import t5_bucket
from posenc_helpers.scaling import scaled_frequencies
from tools.nav import NUMBERED

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "06-flashcards.ipynb"
#: The deck itself has no cards about itself.
DECK = "06"


def test_there_are_at_least_40_distinct_cards():
    assert len(CARDS) >= 40
    assert len({card.question for card in CARDS}) == len(CARDS)
    for card in CARDS:
        assert card.question.strip() and card.answer.strip()
        # a question, or a statement to judge: "True or false: …."
        true_or_false = card.question.startswith("True or false: ") and card.question.endswith(".")
        assert card.question.endswith("?") or true_or_false, card.question
        assert card.answer.endswith("."), card.answer


def test_every_numbered_notebook_on_disk_has_at_least_three_cards():
    # A new notebook (11, 12, 13, …) fails here until it appends its cards to CARDS.
    on_disk = sorted(NUMBERED.match(p.name).group(1) for p in (ROOT / "notebooks").glob("*.ipynb") if NUMBERED.match(p.name))
    assert "01" in on_disk and "10" in on_disk
    missing = {nb: sum(c.notebook == nb for c in CARDS) for nb in on_disk if nb != DECK}
    assert all(count >= 3 for count in missing.values()), f"notebooks with fewer than 3 cards: {missing}"


def test_cards_only_name_notebooks_that_exist_or_are_planned():
    on_disk = {NUMBERED.match(p.name).group(1) for p in (ROOT / "notebooks").glob("*.ipynb") if NUMBERED.match(p.name)}
    # 00 is being written alongside these cards; every other tag must name a notebook on disk
    assert set(notebooks_of()) - on_disk <= {"00"}, set(notebooks_of()) - on_disk
    assert DECK not in notebooks_of()


def test_a_card_needs_a_two_digit_notebook():
    with pytest.raises(ValueError, match="two-digit"):
        Card("q?", "a.", notebook="8")
    with pytest.raises(TypeError):
        Card("q?", "a.")  # the notebook is required


def test_there_are_misconception_cards_with_reasons():
    myths = [c for c in CARDS if c.question.startswith("True or false:")]
    assert len(myths) >= 8
    for card in myths:
        verdict = re.split(r"[.,:]", card.answer)[0]
        assert verdict in {"True", "False", "False as published"}, card.answer
        assert len(card.answer) > len(verdict) + 20, "a misconception card gives the reason"


# The corrections of issue 9, as the cards must state them.
CORRECTIONS = [
    ("08", "stably, which is not the same as usefully"),
    ("08", "untrained"),
    ("09", "fine-tuning"),
    ("10", "Integer positions are exact up to 2²⁴"),
    ("04", "number of rotated dimensions"),
    ("03", "RᵀR = I"),
    ("03", "[[1, 1], [0, 1]]"),
    ("00", "causal mask"),
    ("01", "pair index"),
    # issue 15: the cosine's spread named, the learned table's shape and quality, the course's letters
    ("00", "standard deviation"),
    ("00", "nearly identical results"),
    ("00", "(L, D)"),
    ("01", "test length longer than L"),
    # issue 42: transformers' dynamic cache keeps W − 1, a static one allocates min(W, max_cache_len); Ruoss et al.
    # draw one position set per forward call for the batch, the lab one per sequence; FIRE squeezes near keys
    ("16", "in transformers' dynamic cache"),
    ("16", "min(W, max_cache_len)"),
    ("17", "one set per forward call"),
    ("17", "the lab draws one per sequence"),
    ("17", "near keys are squeezed"),
]


@pytest.mark.parametrize("notebook, phrase", CORRECTIONS)
def test_the_corrections_are_on_the_cards(notebook, phrase):
    assert any(phrase in c.question + " " + c.answer for c in CARDS if c.notebook == notebook), (notebook, phrase)


def test_no_card_repeats_the_corrected_claims():
    text = " ".join(c.question + " " + c.answer for c in CARDS)
    assert "From the vector being rotated" not in text
    assert "determinant is cos²θ + sin²θ = 1; it" not in text
    assert "adds nothing new" not in text
    assert "never the model width" not in text                     # a one-head model's head is the model width
    assert "with q ≠ k can tell" not in text                       # q = 2k is symmetric too
    assert "indeed no function" not in text                        # a whole vector of sines can pin the position
    assert "Only pair 0" not in text                                # at 10⁶, pairs 16 and 32 of D = 128 land exactly too
    assert "in every call, as the authors' code does" not in text  # the authors draw per call, the lab per sequence
    assert "reads its keys on the scale training covered" not in text  # the range is kept, the scale is not


# The lesson's own six cards, by the fact each one asks for.
SEED_FACTS = [
    ("even index", "sine"),
    ("frequency", "1 / 10000^(2k/D)"),
    ("shift matrix", "rotation"),
    ("PE(0)", "0, 1, 0, 1"),
    ("dotted", "cos(ωₖ · (pos₁ − pos₂))"),
    ("bounded", "every 2π"),
]


@pytest.mark.parametrize("in_question, in_answer", SEED_FACTS)
def test_the_lessons_cards_are_in_the_deck(in_question, in_answer):
    assert any(in_question in c.question and in_answer in c.answer for c in CARDS), (in_question, in_answer)


# Every number on a card, recomputed here from the formulas, or named as a setting the card chooses.
_turns = {b: 2048 * frequencies(64, b) / (2 * math.pi) for b in (100, 10000, 1e8)}
_err32 = abs(float(rope_angles(1e6, 128, dtype="float32")[1]) - 1e6 * 10000 ** (-2 / 128))
VERIFIED = {
    "0.9093": math.sin(2),
    "0.4161": -math.cos(2),          # printed as −0.4161
    "0.0200": math.sin(0.02),
    "0.02": 0.02,                    # 2 / 10000^(2/4)
    "0.9998": math.cos(0.02),
    "628.3": 2 * math.pi * 10000 ** (2 / 4),
    "0.8415": math.sin(1),
    "0.0100": math.sin(0.01),
    "0.01": 10000 ** (-2 / 4),       # ω₁ for D = 4
    "25330": (1000 / (2 * math.pi)) ** 2,
    "84": math.sin(1) / math.sin(0.01),
    "0.05": _err32,                  # float32 angle error of pair 1, D = 128, at 10⁶
    "90.5": 8 * 16 ** (7 / 8),       # where T5's last bucket formula reaches 15
    "0.044": 1 / math.sqrt(512),     # the std of a random cosine, D = 512
    "0.035": math.sqrt(2 / math.pi) / math.sqrt(512),   # its mean |cos|, large-D form
}
# The claims behind the derived numbers, each computed with the package's own functions:
# GPT-J's head: rope with rotary_dim 64 leaves the other 256 − 64 elements of a 256-element head untouched
_x256 = np.arange(1.0, 257.0)
_untouched = np.flatnonzero(rope(_x256, 5.0, rotary_dim=64) == _x256)
# ALiBi, 12 heads: heads 8 to 11 get 2^(−0.5), 2^(−1.5), 2^(−2.5), 2^(−3.5), and head 8 is the steepest
_alibi12 = alibi_slopes(12)
_alibi_extra = bool(np.allclose(_alibi12[8:], 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5]))) and _alibi12.argmax() == 8
# the sine card: pair 0 (ω = 1) reads sin 0.5 at 0.5 and at π − 0.5, but sin 1.5 and sin(π + 0.5) a step later
_sine_alone = (math.isclose(sinusoidal(0.5, 2)[0], sinusoidal(math.pi - 0.5, 2)[0], rel_tol=1e-12)
               and math.isclose(sinusoidal(1.5, 2)[0], math.sin(1.5), rel_tol=1e-12)
               and abs(sinusoidal(1.5, 2)[0] - sinusoidal(math.pi + 0.5, 2)[0]) > 1)
# Llama 3 (D = 128, base 500000): the pairs whose wavelength is longer than L = 8192
_never = np.flatnonzero(wavelengths(128, 500000.0) > 8192)
# T5's encoder (32 buckets, max_distance 128): the keys before the query that land in the last bucket
_t5_last = (np.flatnonzero(t5_bucket(-np.arange(1, 20000)) == t5_bucket(-20000)) + 1).tolist()
# llama3 scaling (low 1, high 4, D = 128, base 10000, L = 4096, s = 8): kept pairs and pairs divided by s
_omega = frequencies(128, 10000.0)
_llama3 = scaled_frequencies(128, 10000.0, "llama3", 8.0, original_max_position=4096, low_freq_factor=1,
                             high_freq_factor=4)
with np.errstate(over="ignore"):
    _float16_max = round_to(65504, "float16") == 65504 and bool(np.isinf(round_to(65520, "float16")))
# notebook 15: the unigram baseline, by hand from the shipped text (counts of the first 90 %, scored on the rest)
_text = (ROOT / "posenc_helpers" / "lab" / "data" / "tragedies.txt").read_text(encoding="ascii")
_cut = int(0.9 * len(_text))
_counts = {c: _text[:_cut].count(c) for c in set(_text)}
_unigram = -sum(math.log2(_counts[c] / _cut) * _text[_cut:].count(c) for c in set(_text[_cut:])) / (len(_text) - _cut)
# ... and every model of the shipped sweep at L, more than 1.9 bits below it
_sweep = json.loads((ROOT / "posenc_helpers" / "lab" / "text_results.json").read_text())
_at_L = [r["bits"][0] for r in _sweep["rows"]]
VERIFIED["4.97"] = _unigram
# notebook 12: iRoPE on the previous-token task, over the shipped sweep's seeds (past L), and the chunk ceiling
_head = json.loads((ROOT / "posenc_helpers" / "lab" / "results.json").read_text())
_irope = [r for r in _head["rows"] if (r["task"], r["scheme"]) == ("prev", "irope_w32")]  # chunks of L
_chunked = np.array([r["beyond"][1:] for r in _irope], dtype=float)
_window = np.array([r["masks"]["sliding"][1:] for r in _irope], dtype=float)
_full_8L = np.array([r["masks"]["full"][-1] for r in _irope], dtype=float)
VERIFIED["0.971"] = 1 - (1 / 32) * (15 / 16)
_rope_prev = {r["seed"]: r for r in _head["rows"] if (r["task"], r["scheme"]) == ("prev", "rope")}
_col_3L = _head["lengths"].index(96)
_plain_3L = np.array([r["beyond"][_col_3L] for r in _rope_prev.values()], dtype=float)
_ntk_3L = np.array([r["scaled"]["ntk"][_col_3L] for r in _rope_prev.values()], dtype=float)
# notebook 16: Men et al.'s Eq. 11 at head width 16 for 256 tokens
_bound_256 = base_lower_bound(256, 16)
#: Whole numbers that a card derives: each is checked by its own condition.
DERIVED = {
    "13": (_turns[1e8] < 0.01).sum() == 13 and (_turns[10000] < 0.5).sum() == 9 and (_turns[100] < 0.5).sum() == 0,
    "192": len(_untouched) == 192 and _untouched[0] == 64,
    "257": round_to(257, "bfloat16") == 256,
    "258": round_to(258, "bfloat16") == 258,
    "2049": round_to(2049, "float16") == 2048,
    "65504": float(np.finfo(np.float16).max) == 65504 and _float16_max,
    "0.5": _alibi_extra and _sine_alone,
    "1.5": _alibi_extra and _sine_alone,
    "2.5": _alibi_extra,
    "3.5": _alibi_extra,
    # bfloat16 numbers in [8192, 16384) are 64 apart, so an angle there can move by 32: 8224 is a tie and goes to 8192
    "8192": bool(np.all(np.diff(round_to(np.arange(8192, 16384, 16.0), "bfloat16")) % 64 == 0))
            and round_to(8256, "bfloat16") == 8256 and round_to(8224, "bfloat16") == 8192,
    # ... up to 16384, where the gap doubles to 128 (16448 is a tie and goes to the even 16384)
    "16384": round_to(16384 - 64, "bfloat16") == 16384 - 64 and round_to(16384 + 64, "bfloat16") == 16384,
    # notebook 11: pairs 35 to 63 of Llama 3 never finish a turn within 8192 tokens, 29 of them
    "29": len(_never) == 29 == sum(2 * math.pi * 500000 ** (2 * k / 128) > 8192 for k in range(64)),
    "35": _never[0] == 35,
    "63": _never[-1] == 63 == len(_omega) - 1,
    # notebook 11: Mistral 7B v0.1 declares 32768 tokens; its paper's context length, recorded in the source note, is 8192
    "32768": bundled_configs()["Mistral 7B"]["max_position_embeddings"] == 32768
             and "context_len of 8192" in bundled_sources()["Mistral 7B"]["note"],
    # notebook 11: GPT-NeoX-20B rotates 24 of its 96 head dims, 25%, and leaves 75% unrotated
    "25": (lambda s: s.rotary_dim / s.head_dim == 0.25)(rope_settings(bundled_configs()["GPT-NeoX-20B"])),
    "75": (lambda s: 1 - s.rotary_dim / s.head_dim == 0.75)(rope_settings(bundled_configs()["GPT-NeoX-20B"])),
    # notebook 08: T5's encoder bucket 8 + ⌊ln(d/8)/ln 16 · 8⌋ (capped at 15) first reaches 15 at d = 91
    "91": _t5_last[0] == 91
          == min(d for d in range(8, 200) if 8 + math.floor(math.log(d / 8) / math.log(16) * 8) >= 15)
          # and notebook 16: base 10000 at head width 16 first turns B_m negative at m = 91 (a literal loop)
          and min(m for m in range(300) if sum(math.cos(m * 10000.0 ** (-2 * i / 16)) for i in range(8)) < 0) == 91,
    # notebook 16: DeepSeek-V3's latent + rotary key, and every head's key (nope + rope) and value, from its fields
    "576": (lambda f: f["kv_lora_rank"] + f["qk_rope_head_dim"] == 576)(bundled_kv_fields()["DeepSeek-V3"]["fields"]),
    "40960": (lambda f: f["num_attention_heads"] * (f["qk_nope_head_dim"] + f["qk_rope_head_dim"] + f["v_head_dim"])
              == 40960)(bundled_kv_fields()["DeepSeek-V3"]["fields"]),
    # notebook 16: Eq. 11 at head width 16 for 256 tokens, and base 10000 above it
    "8570": round(_bound_256) == 8570 < 10000
             and all(sum(math.cos(m * _bound_256 ** (-2 * i / 16)) for i in range(8)) >= 0 for m in range(257)),
    "15": t5_bucket(-91) == 15 and t5_bucket(-90) == 14 and _t5_last == list(range(91, 20000)),
    # notebook 09: llama3 with low 1, high 4, D = 128, base 10000, L = 4096 keeps λ < L/4 and divides λ > L
    "36": (_llama3 == _omega).sum() == 36 == sum(2 * math.pi * 10000 ** (2 * k / 128) < 4096 / 4 for k in range(64)),
    # and notebook 14: Gemma 3's sliding layers (D = 128, base 10000) finish 36 turns within their window of 1024
    "36w": sum(2 * math.pi * 10000 ** (2 * k / 128) <= 1024 for k in range(64)) == 36,
    "18": np.isclose(_llama3, _omega / 8, rtol=1e-15, atol=0).sum() == 18
          == sum(2 * math.pi * 10000 ** (2 * k / 128) > 4096 for k in range(64)),
    # notebook 14: Gemma 3 27B (D = 128): global base 1000000 × 8 over its context of 131072; base 10000 over it
    "27": sum(2 * math.pi * 8 * 1e6 ** (2 * k / 128) > 131072 for k in range(64)) == 27
          and sum(2 * math.pi * 10000 ** (2 * k / 128) <= 131072 for k in range(64)) == 64,
    # notebook 15: every model of the sweep learned the text, at L more than 1.9 bits below the unigram baseline
    "1.9": len(_at_L) == len(_sweep["schemes"]) * len(_sweep["seeds"]) >= 25 and max(_at_L) < _unigram - 1.9,
    # notebook 12: iRoPE with chunks of L 0.97 past L at every length on every seed, 1.00 with the window, 0.15-0.36
    # at 8L with the full mask
    "0.97": len(_irope) == len(_head["seeds"]) >= 5 and {f"{x:.2f}" for x in _chunked.ravel()} == {"0.97"},
    "1.00": {f"{x:.2f}" for x in _window.ravel()} == {"1.00"},
    "0.15": f"{_full_8L.min():.2f}" == "0.15",  # as the notebook prints it
    "0.36": f"{_full_8L.max():.2f}" == "0.36",
    # notebook 12: NTK at 3L on prev below plain RoPE on 18 of the sweep's 20 seeds
    "18 of 20": int((_ntk_3L < _plain_3L).sum()) == 18,
    "20": len(_head["seeds"]) == 20 == len(_plain_3L),
}
#: Settings the cards choose (lengths, bases, head counts, notebook numbers), not results.
#: (1000 also stands for PI's "within 1000 steps", a published count that no formula gives.)
SETTINGS = {"10", "100", "1000", "10000", "08", "11", "12", "16", "32", "64", "128", "256", "2048", "0.1", "500000",
            "4096", "512",
            # notebook 14: Gemma 3's global base, window and context; Llama 4's floor_scale default is the "8192" above
            "1000000", "1024", "131072",
            # notebook 15: the name WikiText-103
            "103",
            # notebook 18: the transformers release a card names (5.24.0)
            "5.24"}


def test_every_number_on_the_cards_is_right():
    text = " ".join(f"{c.question} {c.answer}" for c in CARDS)
    found = set(re.findall(r"\d+\.\d+|\d{2,}", text))
    unchecked = found - set(VERIFIED) - set(DERIVED) - SETTINGS
    assert not unchecked, f"numbers on the cards that this test does not recompute: {sorted(unchecked)}"
    for literal, value in VERIFIED.items():
        if literal in found:
            decimals = len(literal.split(".")[1]) if "." in literal else 0
            tolerance = 0.5 * 10 ** -decimals + 1e-12 if literal not in {"84", "0.05"} else (1.0 if literal == "84" else 0.005)
            assert abs(value - float(literal)) <= tolerance, literal
    assert all(DERIVED.values()), [k for k, ok in DERIVED.items() if not ok]
    # the signs that go with them
    assert "−0.4161" in text and "−0.4161" in next(c.answer for c in CARDS if "(5, 3)" in c.question)


def test_the_deck_shows_the_first_card_with_its_answer_hidden():
    deck = flashcard_deck()
    assert deck.counter.value == f"Card 1 of {len(CARDS)}"
    assert CARDS[0].question in deck.question.value
    assert deck.answer.value == ""


def test_show_answer_then_next_hides_it_again():
    deck = flashcard_deck()
    deck.show_button.click()
    assert deck.answer_shown and CARDS[0].answer in deck.answer.value
    deck.next_button.click()
    assert deck.current == CARDS[1] and deck.answer.value == ""
    assert CARDS[1].question in deck.question.value
    assert deck.counter.value == f"Card 2 of {len(CARDS)}"


def test_next_wraps_around_after_the_last_card():
    deck = flashcard_deck()
    for _ in range(len(CARDS)):
        deck.next_button.click()
    assert deck.position == 0 and deck.current == CARDS[0]


@pytest.mark.parametrize("seed", [0, 7])
def test_shuffle_is_seeded(seed):
    rng = np.random.default_rng(seed)
    first, second = rng.permutation(len(CARDS)), rng.permutation(len(CARDS))
    deck = flashcard_deck(seed=seed)
    deck.next_button.click()
    deck.show_button.click()
    deck.shuffle_button.click()
    assert deck.order == list(first) and deck.position == 0 and deck.answer.value == ""
    assert deck.current == CARDS[first[0]]
    assert CARDS[first[0]].question in deck.question.value
    deck.shuffle_button.click()
    assert deck.order == list(second)
    assert sorted(deck.order) == list(range(len(CARDS)))
    deck.reset()
    assert deck.order == list(range(len(CARDS))) and deck.current == CARDS[0]
    deck.shuffle_button.click()
    assert deck.order == list(first)  # reset re-seeds


def test_different_seeds_deal_different_orders():
    a, b = flashcard_deck(seed=0), flashcard_deck(seed=1)
    a.shuffle()
    b.shuffle()
    assert a.order != b.order


def test_text_is_escaped_in_the_widget_and_the_list():
    cards = [Card("Is 1 < 2 & 3 > 2?", "Yes: <b> is not bold here.", "01")]
    deck = flashcard_deck(cards)
    assert "1 &lt; 2 &amp; 3 &gt; 2" in deck.question.value
    deck.show_button.click()
    assert "&lt;b&gt;" in deck.answer.value
    assert "<b>" not in cards_markdown(cards).split("</summary>")[1]


def test_an_empty_deck_is_refused():
    with pytest.raises(ValueError, match="at least one card"):
        flashcard_deck([])


def _cells():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return [c for c in nb["cells"]
            if not "".join(c["source"]).startswith("<!--NAVIGATION-->") and c.get("id") != "colab-setup"]


def test_the_notebooks_static_list_is_current():
    sources = ["".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown"]
    static = next(s for s in sources if s.startswith("## All cards"))
    assert static.endswith(cards_markdown(CARDS)), "the static list is stale: rebuild notebooks/06-flashcards.ipynb"
    assert static.count("<details>") == len(CARDS)
    for nb in notebooks_of():
        assert f'<a id="cards-{nb}"></a>' in static and f"### Notebook {nb}" in static


def test_the_filter_keeps_one_notebooks_cards_and_shuffles_within_them():
    deck = flashcard_deck(seed=3)
    deck.next_button.click()
    deck.notebook_filter.value = "04"
    fours = [i for i, c in enumerate(CARDS) if c.notebook == "04"]
    assert deck.order == fours and deck.position == 0 and deck.answer.value == ""
    assert deck.counter.value == f"Card 1 of {len(fours)} (notebook 04)"
    for _ in range(len(fours)):
        deck.next_button.click()
    assert deck.current == CARDS[fours[0]]  # wraps within the filter
    deck.shuffle_button.click()
    expected = [fours[i] for i in np.random.default_rng(3).permutation(len(fours))]
    assert deck.order == expected
    deck.reset()
    assert deck.notebook_filter.value == "all" and deck.order == list(range(len(CARDS)))


def test_only_the_widget_cell_ignores_its_output():
    code = [c for c in _cells() if c["cell_type"] == "code"]
    ignored = ["".join(c["source"]) for c in code if "nbval-ignore-output" in c["metadata"].get("tags", [])]
    assert len(ignored) == 1 and "flashcard_deck(" in ignored[0]
    assert not any("NBVAL_" in "".join(c["source"]) for c in code), "a marker comment instead of a cell tag"


def test_links_to_a_notebooks_cards_point_at_an_existing_group():
    linked = set()
    for path in (ROOT / "notebooks").rglob("*.ipynb"):
        linked |= set(re.findall(r"06-flashcards\.ipynb#cards-(\d\d)", path.read_text(encoding="utf-8")))
    assert {"01", "02", "03", "04", "05"} <= linked
    assert linked <= set(notebooks_of()), linked - set(notebooks_of())
