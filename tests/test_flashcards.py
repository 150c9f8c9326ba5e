"""Flashcards: the cards are right, the widget shows the right card, the static list is current."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from posenc_helpers.flashcards import CARDS, Card, cards_markdown, flashcard_deck

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "06-flashcards.ipynb"


def test_there_are_at_least_15_distinct_cards():
    assert len(CARDS) >= 15
    assert len({card.question for card in CARDS}) == len(CARDS)
    for card in CARDS:
        assert card.question.strip() and card.answer.strip()
        assert card.question.endswith("?"), card.question
        assert card.answer.endswith("."), card.answer


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


# Every decimal number on a card, recomputed here from the formulas (λ₁ = 2π·100, B = (1000/2π)², …).
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
}


def test_every_number_on_the_cards_is_right():
    text = " ".join(f"{c.question} {c.answer}" for c in CARDS)
    found = set(re.findall(r"\d+\.\d+|\d{2,}", text))
    unchecked = found - set(VERIFIED) - {"10000", "100", "1000"}
    assert not unchecked, f"numbers on the cards that this test does not recompute: {sorted(unchecked)}"
    for literal, value in VERIFIED.items():
        if literal in found:
            decimals = len(literal.split(".")[1]) if "." in literal else 0
            assert abs(value - float(literal)) <= 0.5 * 10 ** -decimals + 1e-12 or (literal == "84" and int(value) == 84), literal
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
    cards = [Card("Is 1 < 2 & 3 > 2?", "Yes: <b> is not bold here.")]
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
    return [c for c in nb["cells"] if not "".join(c["source"]).startswith("<!--NAVIGATION-->")]


def test_the_notebooks_static_list_is_current():
    sources = ["".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown"]
    static = next(s for s in sources if s.startswith("## All cards"))
    assert static.endswith(cards_markdown(CARDS)), "the static list is stale: rebuild notebooks/06-flashcards.ipynb"
    assert static.count("<details>") == len(CARDS)


def test_only_the_widget_cell_ignores_its_output():
    code = ["".join(c["source"]) for c in _cells() if c["cell_type"] == "code"]
    ignored = [s for s in code if "NBVAL_IGNORE_OUTPUT" in s]
    assert len(ignored) == 1 and "flashcard_deck(" in ignored[0]
