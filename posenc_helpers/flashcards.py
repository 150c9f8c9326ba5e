"""Flashcards on positional encoding: the cards as data, a widget to study them, a static list.

Taught in notebooks/06-flashcards.ipynb. :data:`CARDS` holds the cards;
:func:`flashcard_deck` builds the widget (the card, "show answer", "next" and
"shuffle", which draws orders from a generator seeded once, so every run
shuffles the same way); :func:`cards_markdown` renders every card for readers
without a kernel, with each answer folded into a ``<details>`` block.

>>> deck = flashcard_deck(seed=0)
>>> deck.counter.value
'Card 1 of 20'
>>> deck.answer.value                      # hidden until asked for
''
>>> deck.show_button.click()
>>> deck.answer.value.startswith('<div')
True
>>> deck.next_button.click(); deck.position, deck.answer.value
(1, '')
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

__all__ = ["Card", "CARDS", "FlashcardDeck", "flashcard_deck", "cards_markdown"]


@dataclass(frozen=True)
class Card:
    """One card: a question and its answer, in plain text with Unicode math."""

    question: str
    answer: str


#: The cards: the first six come from the lesson's own cards, the rest cover the exercise and RoPE.
CARDS: list[Card] = [
    Card("At an even index of PE(pos), is it a sine or a cosine?",
         "A sine. The odd index right after it holds the cosine of the same angle."),
    Card("What is the frequency ωₖ of pair k?",
         "ωₖ = 1 / 10000^(2k/D), so pair k sits at the angle pos · ωₖ."),
    Card("What kind of matrix is the shift matrix that turns PE(pos) into PE(pos + offset)?",
         "A rotation: block diagonal, each 2 × 2 block turning pair k by the angle ωₖ · offset."),
    Card("What pattern does PE(0) show?",
         "0, 1, 0, 1, …: every angle is 0, so every sine is 0 and every cosine is 1."),
    Card("One pair's (sin, cos) at pos₁ dotted with the same pair at pos₂ gives what?",
         "cos(ωₖ · (pos₁ − pos₂)): the absolute positions cancel and only the distance is left."),
    Card("Why do the values stay bounded however large pos gets?",
         "The angle wraps around the circle every 2π, and sine and cosine never leave [−1, 1]."),
    Card("What is PE(2) for D = 4?",
         "[sin 2, cos 2, sin 0.02, cos 0.02] = [0.9093, −0.4161, 0.0200, 0.9998]."),
    Card("Which index goes into the exponent: the element index i or the pair index k?",
         "The pair index k = i // 2, so the sine and the cosine of a pair share one angle."),
    Card("Is the exponent 2k/D or k/D?",
         "2k/D. With k/D every pair after the first turns too fast."),
    Card("For D = 4, how many positions does pair 1 take to turn once?",
         "λ₁ = 2π / ω₁ = 2π · 100 ≈ 628.3 positions."),
    Card("What is the last element of PE(pos) when D is odd?",
         "The sine of a pair whose cosine would fall off the end."),
    Card("How does RoPE turn a pair (a, b) by the angle θ?",
         "To (a·cos θ − b·sin θ, a·sin θ + b·cos θ): counter-clockwise."),
    Card("You turn (1, 0) by a small positive angle. Which coordinate rises?",
         "The second: the result is (cos θ, sin θ). If it falls, the signs of the sine terms are swapped."),
    Card("In RoPE, where does the D in the exponent come from?",
         "From the vector being rotated, D = len(vec), not from a model-wide setting."),
    Card("What happens to the last element of an odd-length vector in RoPE?",
         "Nothing: it has no partner, so it passes through unchanged."),
    Card("With q = k = (1, 0), what RoPE score do the positions (5, 3) and (9, 7) get?",
         "The same, cos 2 = −0.4161: the score depends on the offset m − n only."),
    Card("Does a RoPE rotation change the length of a pair?",
         "No. Its determinant is cos²θ + sin²θ = 1; it turns the pair and keeps its length."),
    Card("From pos 0 to pos 1 with D = 4, which element changes more, 0 or 2?",
         "Element 0: sin 1 = 0.8415 against sin 0.01 = 0.0100, about 84 times as much."),
    Card("With D = 4, which base B gives pair 1 a wavelength of 1000 positions?",
         "2π · √B = 1000, so B = (1000 / 2π)² ≈ 25330. A bigger base gives longer wavelengths."),
    Card("How does ALiBi bring position into attention?",
         "Without vectors: it subtracts a penalty proportional to the distance from each attention score."),
]


class FlashcardDeck(widgets.VBox):
    """A deck of cards in a widget: the card, "show answer", "next" and a seeded "shuffle".

    ``order`` lists card indices in the order of study and ``position`` points
    into it. The first shuffle gives ``np.random.default_rng(seed).permutation(len(cards))``;
    later shuffles keep drawing from that same generator.
    """

    def __init__(self, cards: Sequence[Card] = CARDS, seed: int = 0):
        if not cards:
            raise ValueError("cards must hold at least one card, got an empty sequence")
        self.cards = list(cards)
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self.order = list(range(len(self.cards)))
        self.position = 0
        self.answer_shown = False

        self.counter = widgets.HTML()
        self.question = widgets.HTML(layout={"min_height": "3.5em", "width": "42em"})
        self.answer = widgets.HTML(layout={"min_height": "3.5em", "width": "42em"})
        self.show_button = widgets.Button(description="show answer", button_style="info", icon="eye")
        self.next_button = widgets.Button(description="next", icon="arrow-right")
        self.shuffle_button = widgets.Button(description="shuffle", icon="random")
        self.show_button.on_click(lambda _: self.show_answer())
        self.next_button.on_click(lambda _: self.next_card())
        self.shuffle_button.on_click(lambda _: self.shuffle())
        buttons = widgets.HBox([self.show_button, self.next_button, self.shuffle_button])
        super().__init__([self.counter, self.question, self.answer, buttons])
        self._render()

    @property
    def current(self) -> Card:
        """The card on show."""
        return self.cards[self.order[self.position]]

    def show_answer(self) -> None:
        self.answer_shown = True
        self._render()

    def next_card(self) -> None:
        """The next card, back to the first after the last; the answer is hidden again."""
        self.position = (self.position + 1) % len(self.cards)
        self.answer_shown = False
        self._render()

    def shuffle(self) -> None:
        """A new order from the seeded generator, starting at its first card."""
        self.order = [int(i) for i in self._rng.permutation(len(self.cards))]
        self.position = 0
        self.answer_shown = False
        self._render()

    def reset(self) -> None:
        """Back to the cards' own order, the first card, the answer hidden and the generator re-seeded."""
        self._rng = np.random.default_rng(self.seed)
        self.order = list(range(len(self.cards)))
        self.position = 0
        self.answer_shown = False
        self._render()

    def _render(self) -> None:
        card = self.current
        self.counter.value = f"Card {self.position + 1} of {len(self.cards)}"
        self.question.value = f'<div style="font-size: 1.4em; font-weight: bold">{html.escape(card.question, quote=False)}</div>'
        self.answer.value = (f'<div style="font-size: 1.3em">{html.escape(card.answer, quote=False)}</div>'
                             if self.answer_shown else "")


def flashcard_deck(cards: Sequence[Card] = CARDS, seed: int = 0) -> FlashcardDeck:
    """The widget for ``cards``, in their own order until "shuffle" is pressed. Taught in notebooks/06-flashcards.ipynb."""
    return FlashcardDeck(cards, seed)


def cards_markdown(cards: Sequence[Card] = CARDS) -> str:
    """Every card as markdown: the question shows, the answer unfolds from a ``<details>`` block.

    >>> print(cards_markdown([Card("2 + 2 < 5?", "Yes & no.")]))
    <details><summary><b>1.</b> 2 + 2 &lt; 5?</summary>
    <BLANKLINE>
    Yes &amp; no.
    <BLANKLINE>
    </details>
    """
    blocks = []
    for number, card in enumerate(cards, start=1):
        blocks.append(f"<details><summary><b>{number}.</b> {html.escape(card.question, quote=False)}</summary>\n\n"
                      f"{html.escape(card.answer, quote=False)}\n\n</details>")
    return "\n\n".join(blocks)
