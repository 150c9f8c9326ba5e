"""Flashcards for the whole course: the cards as data, a widget to study them, a static list.

Taught in notebooks/06-flashcards.ipynb, the course-wide review deck.
:data:`CARDS` holds the cards, each tagged with the notebook it reviews
(``Card(question, answer, notebook="08")``). A notebook added later appends its
own cards with one line each::

    CARDS.append(Card("What does notebook 11 show?", "….", notebook="11"))

(or one more ``Card(...)`` line in the list below). :func:`flashcard_deck`
builds the widget: the card, "show answer", "next", "shuffle" (orders drawn
from a generator seeded once, so every run shuffles the same way) and a filter
by notebook. :func:`cards_markdown` renders every card for readers without a
kernel, grouped by notebook under headings with stable anchors
(``06-flashcards.ipynb#cards-08``), each answer folded into a ``<details>`` block.

>>> deck = flashcard_deck(seed=0)
>>> deck.counter.value == f"Card 1 of {len(CARDS)}"
True
>>> deck.answer.value                      # hidden until asked for
''
>>> deck.show_button.click()
>>> deck.answer.value.startswith('<div')
True
>>> deck.next_button.click(); deck.position, deck.answer.value
(1, '')
>>> deck.notebook_filter.value = "03"      # only the cards of notebook 03
>>> deck.current.notebook, deck.counter.value.endswith("(notebook 03)")
('03', True)
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np

__all__ = ["Card", "CARDS", "TOPICS", "FlashcardDeck", "flashcard_deck", "cards_markdown", "notebooks_of"]

_NOTEBOOK = re.compile(r"^\d\d$")


@dataclass(frozen=True)
class Card:
    """One card: a question, its answer (plain text with Unicode math) and the number of the notebook it reviews."""

    question: str
    answer: str
    notebook: str

    def __post_init__(self):
        if not isinstance(self.notebook, str) or not _NOTEBOOK.match(self.notebook):
            raise ValueError(f"notebook must be a two-digit string such as '08', got {self.notebook!r}")


#: A short topic per notebook, for the headings of the static list; a notebook missing here is headed by its number.
TOPICS: dict[str, str] = {
    "00": "why a transformer needs positions",
    "01": "clock hands: the sinusoidal encoding",
    "02": "the pos = 2 trace",
    "03": "the shift matrix",
    "04": "RoPE",
    "05": "the exercise",
    "07": "conventions and layouts",
    "08": "learned tables, ALiBi and T5 buckets",
    "09": "long context",
    "10": "precision",
    "11": "RoPE as shipped",
    "12": "the extrapolation lab",
    "13": "what trained heads do with position",
    "14": "position per layer",
    "15": "the lab on real text",
    "16": "position at inference",
    "17": "your own experiment",
    "18": "position when serving",
}

#: The cards, tagged by notebook. Misconception cards ask "True or false: …" and give the reason.
CARDS: list[Card] = [
    # 00: why a transformer needs positions
    Card("Without positions and without a causal mask, what happens to self-attention's outputs when you shuffle the tokens?",
         "They are shuffled the same way and otherwise unchanged: attention is permutation-equivariant, so "
         "\"dog bites man\" and \"man bites dog\" give the same set of output rows.", "00"),
    Card("True or false: a decoder with a causal mask and no positional encoding cannot tell positions apart.",
         "False. The mask lets the token at position t see exactly t + 1 tokens, itself and those before it, so order "
         "leaks into the outputs. This is why decoders without positional encodings (NoPE) can work at all.", "00"),
    Card("Why not give the model the raw position 0, 1, 2, … as a feature?",
         "It grows without bound: it soon dwarfs the token embedding, and a long input brings values larger than any "
         "seen in training.", "00"),
    Card("Why not divide each position by the sequence length, so that it lies in [0, 1]?",
         "Then one step means a different amount in texts of different lengths, so the same distance looks different "
         "in a short text and a long one.", "00"),
    Card("How is the sinusoidal encoding like a binary counter?",
         "Each bit of a counter flips at its own rate, the lowest bit fastest; each sinusoid pair turns at its own rate, "
         "pair 0 fastest. Unlike the bits, the sinusoids are smooth, and still bounded.", "00"),
    Card("In the original transformer, what is scaled by √d_model before the positional encoding is added?",
         "The token embedding: Vaswani et al. multiply the embedding weights by √d_model, then add PE(pos).", "00"),
    Card("Why does each pair of the sinusoidal encoding hold a cosine as well as a sine?",
         "So that moving on is one fixed linear map: sin(ω(pos + 1)) needs cos(ω·pos) as well as sin(ω·pos). With both, "
         "PE(pos + k) = T_k · PE(pos) for a block-diagonal rotation matrix T_k that depends on k alone; the sines alone "
         "have no such matrix.", "00"),
    Card("Vaswani et al. also tried a learned position table, of shape (L, D). How did it compare with the sinusoids?",
         "They found \"nearly identical results\" (Table 3, row E), and kept the sinusoids because they may let the "
         "model extrapolate to sequences longer than those seen in training.", "00"),
    Card("True or false: for D = 512, the typical cosine between a random direction and a fixed vector is 1/√D ≈ 0.044.",
         "False. 1/√D ≈ 0.044 is the cosine's standard deviation; its typical size, the mean of |cos|, is smaller, "
         "about √(2/π)/√D ≈ 0.035.", "00"),
    # 01: clock hands
    Card("At an even index of PE(pos), is it a sine or a cosine?",
         "A sine. The odd index right after it holds the cosine of the same angle.", "01"),
    Card("What is the frequency ωₖ of pair k?",
         "ωₖ = 1 / 10000^(2k/D), so pair k sits at the angle pos · ωₖ.", "01"),
    Card("What pattern does PE(0) show?",
         "0, 1, 0, 1, …: every angle is 0, so every sine is 0 and every cosine is 1.", "01"),
    Card("Why do the values stay bounded however large pos gets?",
         "The angle wraps around the circle every 2π, and sine and cosine never leave [−1, 1].", "01"),
    Card("For D = 4, how many positions does pair 1 take to turn once?",
         "λ₁ = 2π / ω₁ = 2π · 100 ≈ 628.3 positions.", "01"),
    Card("With D = 4, which base B gives pair 1 a wavelength of 1000 positions?",
         "2π · √B = 1000, so B = (1000 / 2π)² ≈ 25330. A bigger base gives longer wavelengths.", "01"),
    Card("Vaswani et al. write sin(pos / 10000^(2i/d_model)). What is their i in this course's letters?",
         "The pair index k: their i labels the elements 2i and 2i + 1. d2l calls it j (and writes i for the "
         "position); the Annotated Transformer's arange(0, d_model, 2) holds 2k.", "01"),
    Card("True or false: the paper's 10000^(2i/d_model) is the element-index mistake.",
         "False. The paper's i is the pair index, so its formula is right. The mistake is to put the element index, "
         "which runs over all D slots, in its place.", "01"),
    Card("Why the base 10000?",
         "The paper gives no derivation: it sets the wavelengths from 2π to 10000 · 2π. Over 2048 tokens with D = 64 "
         "it keeps 9 of 32 pairs under half a turn, while base 100 makes every pair wrap and base 10⁸ leaves 13 "
         "pairs nearly still.", "01"),
    Card("In the course's letters, what are D, L and T?",
         "D is the width of the encoding vector (d_model when it is added to the token embeddings; for RoPE the "
         "rotated dimensions of a head), L the training length, which is also the number of rows of a learned table "
         "of shape (L, D), and T a test length longer than L.", "01"),
    # 02: the pos = 2 trace
    Card("What is PE(2) for D = 4?",
         "[sin 2, cos 2, sin 0.02, cos 0.02] = [0.9093, −0.4161, 0.0200, 0.9998].", "02"),
    Card("Which index goes into the exponent: the element index i or the pair index k?",
         "The pair index k = i // 2, so the sine and the cosine of a pair share one angle.", "02"),
    Card("What is the last element of PE(pos) when D is odd?",
         "The sine of a pair whose cosine would fall off the end.", "02"),
    Card("From pos 0 to pos 1 with D = 4, which element changes more, 0 or 2?",
         "Element 0: sin 1 = 0.8415 against sin 0.01 = 0.0100, about 84 times as much.", "02"),
    Card("How does the sinusoidal encoding enter the original transformer?",
         "It is added to the token embedding, element by element: x = tok + PE(pos), where Vaswani et al. first "
         "scale the embedding by √d_model. Nothing in PE is trained.", "02"),
    # 03: the shift matrix
    Card("What kind of matrix is the shift matrix that turns PE(pos) into PE(pos + offset)?",
         "A rotation: block diagonal, each 2 × 2 block turning pair k by the angle ωₖ · offset.", "03"),
    Card("One pair's (sin, cos) at pos₁ dotted with the same pair at pos₂ gives what?",
         "cos(ωₖ · (pos₁ − pos₂)): the absolute positions cancel and only the distance is left.", "03"),
    Card("Does a RoPE rotation change the length of a pair?",
         "No. Each 2 × 2 block R is orthogonal, RᵀR = I, and that keeps lengths. Its determinant cos²θ + sin²θ = 1 "
         "alone would not: the shear [[1, 1], [0, 1]] has determinant 1 and stretches (0, 1) to length √2.", "03"),
    Card("Why does each pair hold a cosine as well as a sine?",
         "With sines alone no matrix moves a position: sin(ω(p + 1)) needs cos(ωp), which is missing. One pair's sine "
         "does not even decide its next value: sin 0.5 = sin(π − 0.5), yet one step later they read sin 1.5 and "
         "sin(π + 0.5), different numbers. With the cosine, the shift is a rotation.", "03"),
    Card("True or false: PE(m)·PE(n) tells whether the key comes before or after the query.",
         "False. It equals Σₖ cos(ωₖ(m − n)), and cosine is even, so the distances +3 and −3 give the same value. "
         "RoPE can tell them apart when some pair of q is not parallel to the same pair of k; q ≠ k alone is not "
         "enough (q = 2k scores both directions alike).", "03"),
    # 04: RoPE
    Card("How does RoPE turn a pair (a, b) by the angle θ?",
         "To (a·cos θ − b·sin θ, a·sin θ + b·cos θ): counter-clockwise.", "04"),
    Card("In RoPE, where does the D in the exponent come from?",
         "It is the number of rotated dimensions: the head size when the whole head is rotated (Llama), fewer in "
         "partial-rotary models, not the model width.", "04"),
    Card("GPT-J rotates 64 of the 256 dimensions of each head. Which D goes into ωₖ = 10000^(−2k/D)?",
         "D = 64, the number of rotated dimensions. The other 192 pass through unrotated.", "04"),
    Card("With q = k = (1, 0), what RoPE score do the positions (5, 3) and (9, 7) get?",
         "The same, cos 2 = −0.4161: the score depends on the offset m − n only.", "04"),
    Card("Why does RoPE rotate the query and the key but not the value?",
         "The value is the content that flows into the output. Rotated by its own absolute position, it would make the "
         "output change when the whole sentence moves; rotating only q and k keeps position in the scores, where "
         "only m − n matters.", "04"),
    Card("True or false: RoPE makes every attention score shrink as the distance grows.",
         "False. RoFormer shows that an upper bound on |score| shrinks on average with distance, with wiggles; a "
         "particular score need not decay.", "04"),
    # 05: the exercise
    Card("Is the exponent 2k/D or k/D?",
         "2k/D. With k/D every pair after the first turns too fast.", "05"),
    Card("You turn (1, 0) by a small positive angle. Which coordinate rises?",
         "The second: the result is (cos θ, sin θ). If it falls, the signs of the sine terms are swapped.", "05"),
    Card("In the exercise's rotate (and the course's rope), what happens to the last element of an odd-length vector?",
         "Nothing: it has no partner, so it passes through unchanged. In shipped models the rotated dimensions "
         "come in whole pairs, so the case does not arise there.", "05"),
    # 07: conventions
    Card("Meta's Llama code pairs x[2k] with x[2k + 1]. Which elements does Hugging Face's rotate_half pair?",
         "x[k] with x[k + D/2]: the first half with the second half.", "07"),
    Card("True or false: the rotate_half layout gives different attention scores from Meta's interleaved layout.",
         "False, if the weights are permuted to match: with P = evens first, then odds, half_split_rope(Px) = "
         "P·rope(x), and (Pq)·(Pk) = q·k. With unpermuted weights the scores are wrong and nothing raises an error.", "07"),
    Card("How do tensor2tensor's sinusoids differ from the paper's?",
         "They store all the sines first, then all the cosines, and space the frequencies so that the slowest is "
         "exactly 10⁻⁴.", "07"),
    Card("What does Hugging Face's Llama conversion script change so that rotate_half gives Meta's scores?",
         "The weights, not the code: it permutes each head's query and key projection rows with P, evens first and "
         "then odds.", "07"),
    # 08: learned tables, ALiBi and T5 buckets
    Card("How does ALiBi bring position into attention?",
         "Without vectors: it subtracts a penalty proportional to the distance, with one slope per head, from each "
         "attention score.", "08"),
    Card("A position table learned at training length L has rows 0 … L − 1. What happens at position L?",
         "There is no row for it. A plain lookup raises an error (an IndexError in NumPy); code that clamps the index "
         "silently reuses the last row, and a position gone negative, such as −1, silently wraps round to the last "
         "row in Python.", "08"),
    Card("What are ALiBi's slopes for 8 heads?",
         "2^(−1), 2^(−2), …, 2^(−8), that is 1/2, 1/4, …, 1/256.", "08"),
    Card("For 12 heads, are ALiBi's slopes in decreasing order?",
         "No. Heads 0 to 7 get 2^(−1) … 2^(−8); heads 8 to 11 get every other slope of the 16-head sequence, "
         "2^(−0.5), 2^(−1.5), 2^(−2.5), 2^(−3.5), so head 8 is the steepest.", "08"),
    Card("True or false: past its training length, ALiBi makes good use of the extra context.",
         "False. ALiBi extrapolates stably, which is not the same as usefully. Perplexity stays flat (the ALiBi "
         "paper's result) mostly because the bias suppresses distant tokens, an effective window of roughly the "
         "training length; past it come bias values and longer softmax rows that training never produced.", "08"),
    Card("True or false: a randomly initialised position table shows what a trained one learns.",
         "False. An untrained (random) table shows only the table's shape and its hard edge after the last row; what "
         "training puts in the rows takes a trained model to see.", "08"),
    Card("With T5's defaults (32 buckets, max_distance 128), from which distance on do all keys before the query get "
         "the same bias in the encoder?",
         "From 91, not 128: the bucket 8 + ⌊ln(d/8)/ln 16 · 8⌋ first reaches the last one, 15, at d = 91 "
         "(8·16^(7/8) ≈ 90.5). A key 91 tokens away and one 10000 away get the same learned bias, so T5 cannot tell "
         "them apart by position.", "08"),
    Card("True or false: T5's relative position bias, like ALiBi's, is a fixed formula.",
         "False. Both add to each attention score a bias that depends only on the relative position, but ALiBi's "
         "slopes are fixed, while T5 learns one bias per head for each bucket of distances, shared by all layers.",
         "08"),
    # 09: long context
    Card("What does Position Interpolation do to RoPE?",
         "It divides every position, equivalently every ωₖ, by the scale factor s, so the longer context stays within "
         "the range of angles seen in training, at the price of steps s times finer.", "09"),
    Card("NTK-aware scaling uses which base, and what happens to the fastest and the slowest pair?",
         "base · s^(D/(D − 2)). Pair 0 keeps its frequency; the slowest pair is divided by exactly s.", "09"),
    Card("What does YaRN do with a pair that turns more than β = 32 times within the training length?",
         "It keeps that pair's frequency. Pairs under α = 1 turn are interpolated as in PI, a ramp blends those in "
         "between, and the attention logits are multiplied by (0.1 ln s + 1)².", "09"),
    Card("True or false: PI and YaRN let a model read a longer context with no extra training.",
         "False as published: their headline results use fine-tuning, within 1000 steps for PI and a few hundred for "
         "YaRN. Without it the scaled model still runs, but those numbers do not describe that setting; "
         "dynamic scaling (dynamic NTK, for one) is designed for inference without fine-tuning.", "09"),
    Card("With low_freq_factor 1 and high_freq_factor 4, which pairs does llama3 scaling keep, and which does it "
         "divide by s?",
         "It keeps pairs whose wavelength is under L/4 and divides by s those longer than L, blending linearly in L/λ "
         "in between: YaRN's paper ramp with α = 1, β = 4 and no temperature. For D = 128, base 10000 and L = 4096 "
         "that keeps 36 pairs and divides 18.", "09"),
    Card("What does dynamic NTK do, and when?",
         "Only at inference: up to the training length L it keeps the model's frequencies; past L it uses NTK-aware "
         "scaling with base · (s·seq_len/L − (s − 1))^(D/(D − 2)), a base that grows with the sequence. Hugging "
         "Face's module keeps state across calls, and which state depends on the transformers release: recent "
         "releases keep the frequencies of the longest sequence seen, until one shorter than L resets them; in the "
         "early 5.x releases, before a fix, each input longer than L got its own frequencies but nothing reset "
         "them.", "09"),
    Card("How does LongRoPE (rope_type \"longrope\", formerly \"su\") rescale RoPE?",
         "It divides each pair by its own searched factor: the short_factor table up to the training length L, the "
         "long_factor table beyond. Its attention factor √(1 + ln s / ln L) depends only on s and L.", "09"),
    # 10: precision
    Card("Up to which integer does bfloat16 store every position exactly, and what becomes of 257?",
         "Up to 256 = 2⁸. 257 lies halfway between 256 and 258, and the tie goes to the even 256.", "10"),
    Card("True or false: in float32, RoPE angles are exact up to position 2²⁴.",
         "False. Integer positions are exact up to 2²⁴, but ωₖ is rounded too, so the angle errs much earlier: for "
         "D = 128, pair 1's float32 angle is off by about 0.05 rad at position 10⁶. Pair 0, whose ω = 1 is stored "
         "exactly, keeps exact angles up to 2²⁴.", "10"),
    Card("In a bfloat16 model, why compute the RoPE angles pos · ωₖ in float32 rather than in bfloat16?",
         "Rounding cos and sin, numbers in [−1, 1], to bfloat16 moves them by at most 2⁻⁹; rounding a large angle can "
         "move it by many radians (by up to 32 rad for an angle between 8192 and 16384, such as pair 0's at position "
         "10⁴, where bfloat16's numbers are 64 apart).", "10"),
    Card("Which position is the first that float16 stores wrongly, and what is its largest finite value?",
         "2049, which rounds to 2048. Its largest finite value is 65504.", "10"),
    # 11: RoPE as shipped
    Card("GPT-J rotates only 64 of the 256 dimensions of each head. What is D in ωₖ = base^(−2k/D)?",
         "The number of rotated dimensions, 64; the other 192 pass through unchanged. D equals the head dimension "
         "only when the whole head is rotated.", "11"),
    Card("With Llama 3's base 500000 and training length 8192, how many of its 64 pairs never finish a turn?",
         "29, pairs 35 to 63: their wavelengths 2π·500000^(2k/128) are longer than 8192 tokens.", "11"),
    Card("What is the llama3 rope_type in terms of YaRN?",
         "YaRN's paper ramp with α = low_freq_factor and β = high_freq_factor, and no attention temperature.", "11"),
    Card("True or false: a YaRN or LongRoPE attention factor a multiplies the attention logits by a.",
         "False. It multiplies cos and sin, and both q and k are rotated with them, so the logits grow by a².", "11"),
    Card("Qwen2-VL gives a text token three equal position ids (t, h, w). What does its multimodal RoPE compute?",
         "Exactly one-dimensional RoPE in the half-split layout at that position.", "11"),
    Card("A config has no rope scaling. Which length L does describe_config count unfinished turns within, and is it "
         "the training length?",
         "max_position_embeddings, the context the config declares, which need not be the training length: Mistral "
         "7B v0.1 declares 32768 tokens, while its paper gives a context length of 8192.", "11"),
    Card("Why does GPT-NeoX rotate only the first 25% of each head's dimensions?",
         "Its paper, following GPT-J, reports that initial experiments found this the best balance of performance and "
         "computational efficiency. A consequence: the other 75% add a term to q·k that is the same at every "
         "position.", "11"),
    Card("In Qwen2-VL, which position id does the first text token after an image get?",
         "The largest id the image used plus one: an image starting at id p with h × w merged tokens uses ids up to "
         "p + max(h, w) − 1, so the text resumes at p + max(h, w), not at its index in the sequence.", "11"),
    Card("How does Pixtral's 2D RoPE share the frequencies between rows and columns?",
         "It builds one table ωⱼ = base^(−2j/D) over the head and gives the rows its even entries and the columns its "
         "odd ones, so each column frequency is the row one times base^(−2/D). The textbook axial split gives both "
         "halves the same table.", "11"),
    # 12: the extrapolation lab
    Card("In the extrapolation lab, trained on 32 tokens, which scheme keeps the previous-token task perfect up to "
         "8 times that length?",
         "ALiBi, near-perfect at every length on every seed of the sweep. Sinusoidal falls to about twice chance on "
         "the positions past the training length (at 2 times it), "
         "RoPE degrades gradually, NoPE extrapolates only partly, and the learned table cannot run at all past its "
         "32 rows.", "12"),
    Card("True or false: a decoder with no positional encoding (NoPE) cannot work past its training length.",
         "False. In the lab, NoPE finds the first token at every test length up to 8 times the training length, "
         "where RoPE's accuracy varies widely from seed to seed: a causal model can recognise position 0, the one "
         "position that attends only to itself. On the previous-token task NoPE extrapolates only partly: behind "
         "ALiBi at every length and behind RoPE at 2 and 4 times; at 8 times, how far RoPE leads it varies from seed "
         "to seed.", "12"),
    Card("Without fine-tuning, with the factor set to T/L at each test length T, what do PI, NTK-aware scaling and "
         "YaRN do for the lab's RoPE models?",
         "PI makes the first-token task perfect again but drops the previous-token task to near chance, because it "
         "slows the fast pairs. NTK-aware scaling scores above plain RoPE at 8 times the training length on both "
         "tasks on every seed of the sweep (a count, not a bound: on the closest seed the gap is under 2 of the "
         "standard errors the lab's rule for a bound counts, as if whole sequences failed), though not at every "
         "length (at 3 times, on the previous-token task, it scored below plain RoPE on 18 of the 20 seeds). YaRN "
         "with thresholds set for this model (β = 4) beats plain RoPE at 8 times on the previous-token task on most "
         "seeds, not all; with the paper's β = 32, set for LLaMA, it "
         "acts like PI, because at L = 32 even the fastest pair turns only about 5 times within L.", "12"),
    Card("Why can YaRN's thresholds not be copied from one model to another with a different training length?",
         "Its ramp keeps or interpolates a pair by how many times the pair turns within the training length, "
         "L·ω/2π. The same β means a different set of pairs at L = 32 than at L = 4096.", "12"),
    Card("In the lab, after 100 fine-tuning steps at 4 times the training length, does rescaling beat plain RoPE?",
         "It depends on the method, and for YaRN on the s it is set for. PI, NTK and YaRN all recover at 4 times L, "
         "as the papers report, and so does plain RoPE fine-tuned with no rescaling. At the positions past 4 times L, "
         "which the fine-tune never trained on, plain RoPE and NTK hold on the previous-token task with either s. PI "
         "falls below plain RoPE there with either s, on every seed of the sweep; YaRN falls below it with s = 4, set "
         "for the fine-tune length, and stays at the ceiling with s = 8, set for the target 8 times L. On recall, "
         "with s = 8, YaRN is above plain RoPE past 4 times L on all 8 seeds of its run (a count, not a bound: on "
         "the closest seed the gap is too small for the lab's rule for a bound).", "12"),
    Card("In the lab, iRoPE (Llama 4's design: RoPE layers that read only their own chunk) trained with chunks of L "
         "tokens scores 0.97 past L on the previous-token task at every length. Why not 1?",
         "The first query of every chunk reads only itself on the RoPE layer, so it cannot see the token before it: "
         "1 in 32 of the positions past L. Guessed at chance, 1 in 16 of those is still right, so the ceiling is "
         "1 − (1/32)(15/16) = 0.971. A sliding window of L keys instead of chunks gives the same model 1.00, and "
         "the full mask 0.15–0.36 at 8 times L (lowest and highest of the 20 seeds of the sweep).", "12"),
    Card("Why does the lab also score only the positions past the training length?",
         "Over all positions, the first L set a floor: a model perfect up to L and at chance after it scores about "
         "one half at 2L, which hides a complete failure past L.", "12"),
    # 13: what trained heads do with position
    Card("Past the training length, what happens to the weight a trained ALiBi previous-token head puts one token back?",
         "It stays about where it was inside the training length: the bias depends only on i − j, and distance 1 "
         "occurred at every position in training. The sinusoidal model's head loses that weight.", "13"),
    Card("Which RoPE pairs does the lab's trained previous-token head lean on?",
         "The fast ones: the three pairs with a wavelength under 64 tokens carry most of its |q|·|k| share. PI slows "
         "exactly those pairs, which is why it breaks that task.", "13"),
    Card("How can you tell that the lab's learned table trained, and what does training put into its similarity "
         "matrix?",
         "Compare it with its own start (run.initial_params): it ends more than its own size away from it, and its "
         "rows turn away from their starting directions. The random start's rows are close to orthogonal; after "
         "training on the previous-token task, neighbouring rows are alike and rows far apart point away from each "
         "other on average: an order of positions learned from the task alone.", "13"),
    Card("On the lab's first-token task, RoPE's attention to token 0 fades past the training length on most seeds, "
         "by an amount that varies widely from seed to seed. What do log-n scaling and PI do to it?",
         "On the sweep's seeds, log-n scaling sharpens the softmax of the long queries but raises the weight on "
         "token 0, and the accuracy, only a little; PI, which maps every distance into the range of angles seen in "
         "training, keeps both high on every seed. Notebook 13 gives these as medians and ranges over the seeds, "
         "not as bounds a new seed must meet. For this small model they fit out-of-range angles better than "
         "dilution as the cause.", "13"),
    # 14: position per layer
    Card("Why can Gemma 3's sliding layers keep base 10000 while its global layers use 1000000 with linear ×8?",
         "A sliding layer never compares tokens further apart than its 1024-token window, where 36 of its 64 pairs "
         "already finish a turn. Over the 131072-token context, base 10000 would make all 64 pairs wrap around; the "
         "global base leaves 27 that never finish a turn.", "14"),
    Card("In a Llama 4 config, what does a 1 in no_rope_layers mean?",
         "That the layer uses RoPE. A 0 marks a layer with no positional encoding (by default every fourth layer).",
         "14"),
    Card("What does Llama 4 multiply the queries of its NoPE layers by, and why?",
         "τ(p) = 1 + attn_scale·ln(1 + ⌊(p + 1)/floor_scale⌋), by default 1 + 0.1·ln(1 + ⌊(p + 1)/8192⌋). A layer "
         "without positions spreads its softmax over more keys as the context grows; scaling the query scales every "
         "logit gap back up.", "14"),
    Card("How does proportional RoPE (Gemma 4, p-RoPE) differ from GPT-NeoX's partial rotary?",
         "GPT-NeoX spreads ωₖ = base^(−2k/r) over its r rotated dims. Proportional RoPE keeps the whole head's "
         "ωₖ = base^(−2k/head_dim) for the first pairs and sets the slowest ones to ω = 0, so they carry no position "
         "at all.", "14"),
    Card("Why can't multi-head latent attention fold its key projection into the query once RoPE is applied?",
         "The score becomes q_mᵀ·R_(n−m)·W_uk·c_n: the rotation sits between the query and the key projection and "
         "changes with n − m. DeepSeek-V3 therefore keeps 128 position-free dims per head and adds one shared "
         "64-dim rotary key.", "14"),
    Card("True or false: with gpt-oss's learned sink, each row of attention weights on the real keys sums to 1.",
         "False. The sink is one more logit in the softmax whose weight is then dropped, so the real keys share less "
         "than 1: a head can put weight nowhere.", "14"),
    # 15: the lab on real text
    Card("In Press et al.'s Figure 1, what was trained, and what did each position method do past the training length?",
         "The Baevski & Auli language model (16 layers of width 1024) on WikiText-103, with windows of L = 512 or "
         "L = 1024 tokens, one model per position method. Past L, the sinusoidal model's perplexity degraded after a "
         "few dozen tokens, rotary's somewhat later, T5's bias later still, and ALiBi's did not degrade.", "15"),
    Card("In notebook 15's character-level sweep (L = 64), how do the sinusoidal and RoPE models do at 8L?",
         "Worse than the unigram baseline of about 4.97 bits per character, a model that ignores context: the "
         "sinusoidal model breaks within a few characters past L, RoPE holds for about L/2 more and then breaks. "
         "ALiBi stays flat up to 16L.", "15"),
    Card("True or false: a flat loss past the training length shows that a model extrapolates.",
         "False. A model that ignores context is flat too. First check that it learned the text at L: in notebook 15 "
         "every model is more than 1.9 bits per character below the unigram baseline of about 4.97.", "15"),
    Card("In notebook 15, what does a 100-step fine-tune at 4L do for the RoPE models?",
         "At 4L every variant recovers (plain RoPE, PI, NTK and YaRN); NTK and YaRN end up below the original "
         "model's loss at L. PI is worse than the original inside L. Past 4L all of them degrade again, and ALiBi, "
         "never fine-tuned, beats them at 16L.", "15"),
    # 16: position at inference
    Card("How many numbers does a layer of full attention cache per token, and what do GQA, a sliding window, MLA and "
         "linear attention change?",
         "2·h_kv·d_head: a key and a value for each key head. GQA lowers h_kv; in transformers' dynamic cache a sliding "
         "layer of window W keeps only its last W − 1 tokens between steps (a static cache allocates "
         "min(W, max_cache_len) slots); MLA caches a latent and one shared rotary key (576 numbers for "
         "DeepSeek-V3, where every head's key and value would be 40960); a linear-attention layer keeps a state of "
         "fixed size.", "16"),
    Card("Why may a KV cache store keys already rotated by RoPE?",
         "(R_m·q)·(R_n·k) = qᵀ·R_(n−m)·k: a key's rotation depends only on its own position, which never changes, "
         "and each new query brings its own rotation. Rotating every cached key at read time with the new query's "
         "position instead makes every score forget the distance.", "16"),
    Card("True or false: position ids that count the left padding change a RoPE model's logits.",
         "False: every position of the padded row moves by the same amount, and RoPE's scores depend on n − m only. "
         "They would change with absolute positions (a learned or sinusoidal table) or with Llama 4's query "
         "temperature, which reads p itself.", "16"),
    Card("In notebook 16's streaming test (the text lab's RoPE models, cache of L = 64), what did the window alone do, "
         "and what did 4 sinks kept at their text positions do?",
         "The window alone lost almost nothing against recomputing every window: no head makes the first token a "
         "sink. Sinks at their text positions cost about a bit per character, since their distance grows past "
         "anything training showed; counting positions inside the cache, as StreamingLLM does, removes that cost, "
         "and then the sinks change nothing.", "16"),
    Card("True or false: a RoPE base above Men et al.'s bound for a context keeps B_m = Σ cos(m·θ_i) ≥ 0 over that "
         "context.",
         "False. The bases that pass are not an interval: at head width 16, base 10000 is above the bound for 256 "
         "tokens (8570), yet B_m turns negative at m = 91.", "16"),
    Card("Fine-tuned at 4L in the lab, how did a base raised to 500000 (ABF) compare with YaRN and plain RoPE?",
         "On the text sweep's 8 seeds it matched YaRN at 4L, beat YaRN, NTK and PI at 8L, and broke at 16L, where "
         "plain RoPE's fine-tune held best.", "16"),
    # 17: your own experiment
    Card("What do Ruoss et al.'s randomized positions change in training, and what at test?",
         "Training positions are a sorted random subset of 0 … M − 1, with the range M much longer than L (2048 in the "
         "lab, at least the longest test; the paper calls this range L, and its M is the longest test length), so "
         "their order is all a model can rely on. At test the positions are drawn from the same range: a long "
         "sequence meets no position that training could not have drawn. The authors draw one set per forward call, "
         "shared by the whole batch; the lab draws one per sequence.", "17"),
    Card("What does FIRE give its MLP for query i and key j, and what does the division do past L?",
         "ψ(i − j)/ψ(max(τ, i)) with ψ(x) = ln(1 + c·x), c and the threshold τ learned. Dividing by ψ of the "
         "query's own position keeps the input in [0, 1] at any length, with the first key at 1, so a query far "
         "past L feeds the MLP only inputs of the range training covered (progressive interpolation). The scale "
         "still moves: near keys are squeezed toward 0 as the query's position grows.", "17"),
    Card("True or false: a claim that holds on every seed you read it from can be reported as holding.",
         "False: those seeds chose it, so they cannot test it. Only seeds drawn after the claim was fixed can (as "
         "the harness draws its fresh seeds after the claims are locked); a failure there is reported as measured, "
         "and a claim changed after it needs new seeds again.", "17"),
    # 18: position when serving
    Card("A converted checkpoint predicts its first token exactly as the original does, then degrades. Which two "
         "position bugs fit, and why is the first token spared?",
         "A forgotten pair permutation (interleaved pairs run by half-split code, or the reverse) or a flipped rotation "
         "sign. The first token reads only its own key, at distance 0, where every pairing and either sign give the "
         "identity rotation; the error of a score grows with the distance.", "18"),
    Card("True or false: after evicting tokens, turning the cached RoPE keys back by the shift only approximates "
         "recomputing them at their new positions.",
         "False: R(−s)·R(p)·k = R(p − s)·k exactly, since rotations by angles proportional to the position compose. "
         "What a shift keeps and a recomputation forgets is only what the kept tokens' later layers read before the "
         "eviction.", "18"),
    Card("In transformers 5.24.0, how many keys does each query of a sliding window of W read, and how many does the "
         "dynamic cache keep between steps?",
         "W: itself and the W − 1 before it (the mask kv_idx > q_idx − W). DynamicSlidingWindowLayer keeps the last "
         "W − 1 between steps and adds the new key when it reads; the static cache keeps W, with the new key already "
         "written.", "18"),
    Card("Why quantize cached keys per channel before RoPE rather than after?",
         "RoPE turns each pair by an angle that grows with the position, so after it each channel of a fast pair sweeps "
         "through the pair's whole radius within a window: its range, and the quantizer's step, grow. Quantize before, "
         "rotate after dequantizing (KVQuant's pre-RoPE keys).", "18"),
    Card("True or false: a perplexity that stays flat when a model is served through a sliding window shows that "
         "the model still uses what left the window.",
         "False: almost every prediction needs only recent tokens, so the average cannot tell. Read through a rolling "
         "window, the lab's text models' loss stays within 0.01 bit of a full recomputation; through a window of 16, "
         "its passkey models find at most 15 % of the keys one token beyond it and none further back. Test retrieval, "
         "not perplexity.", "18"),
]


def notebooks_of(cards: Sequence[Card] = CARDS) -> list[str]:
    """The notebook numbers that have cards, in order.

    >>> notebooks_of([Card("b?", "B.", "03"), Card("a?", "A.", "01"), Card("c?", "C.", "03")])
    ['01', '03']
    """
    return sorted({card.notebook for card in cards})


class FlashcardDeck(widgets.VBox):
    """A deck of cards in a widget: the card, "show answer", "next", a seeded "shuffle" and a filter by notebook.

    ``order`` lists the indices (into ``cards``) of the cards being studied, in
    the order of study, and ``position`` points into it. The filter
    (``notebook_filter``, "all" or a notebook number) keeps the cards of one
    notebook, in their own order. A shuffle permutes the cards in the filter:
    with "all", the first shuffle gives
    ``np.random.default_rng(seed).permutation(len(cards))``; later shuffles keep
    drawing from that same generator.
    """

    ALL = "all"

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
        self.notebook_filter = widgets.Dropdown(
            options=[(f"all notebooks ({len(self.cards)} cards)", self.ALL)]
            + [(f"notebook {nb} ({sum(c.notebook == nb for c in self.cards)} cards)", nb) for nb in notebooks_of(self.cards)],
            value=self.ALL, description="cards from", layout={"width": "24em"},
        )
        self.show_button = widgets.Button(description="show answer", button_style="info", icon="eye")
        self.next_button = widgets.Button(description="next", icon="arrow-right")
        self.shuffle_button = widgets.Button(description="shuffle", icon="random")
        self.show_button.on_click(lambda _: self.show_answer())
        self.next_button.on_click(lambda _: self.next_card())
        self.shuffle_button.on_click(lambda _: self.shuffle())
        self.notebook_filter.observe(lambda _: self._restart(), names="value")
        buttons = widgets.HBox([self.show_button, self.next_button, self.shuffle_button])
        super().__init__([self.notebook_filter, self.counter, self.question, self.answer, buttons])
        self._render()

    @property
    def current(self) -> Card:
        """The card on show."""
        return self.cards[self.order[self.position]]

    def _selected(self) -> list[int]:
        """Indices of the cards that pass the filter, in their own order."""
        chosen = self.notebook_filter.value
        return [i for i, card in enumerate(self.cards) if chosen == self.ALL or card.notebook == chosen]

    def _restart(self) -> None:
        self.order = self._selected()
        self.position = 0
        self.answer_shown = False
        self._render()

    def show_answer(self) -> None:
        self.answer_shown = True
        self._render()

    def next_card(self) -> None:
        """The next card, back to the first after the last; the answer is hidden again."""
        self.position = (self.position + 1) % len(self.order)
        self.answer_shown = False
        self._render()

    def shuffle(self) -> None:
        """A new order of the filtered cards from the seeded generator, starting at its first card."""
        selected = self._selected()
        self.order = [selected[int(i)] for i in self._rng.permutation(len(selected))]
        self.position = 0
        self.answer_shown = False
        self._render()

    def reset(self) -> None:
        """Back to all cards in their own order, the first card, the answer hidden and the generator re-seeded."""
        self._rng = np.random.default_rng(self.seed)
        with self.notebook_filter.hold_trait_notifications():
            self.notebook_filter.value = self.ALL
        self._restart()

    def _render(self) -> None:
        card = self.current
        chosen = self.notebook_filter.value
        where = "" if chosen == self.ALL else f" (notebook {chosen})"
        self.counter.value = f"Card {self.position + 1} of {len(self.order)}{where}"
        self.question.value = (f'<div style="font-size: 1.4em; font-weight: bold">'
                               f'{html.escape(card.question, quote=False)}</div>')
        self.answer.value = (f'<div style="font-size: 1.3em">{html.escape(card.answer, quote=False)}</div>'
                             if self.answer_shown else "")


def flashcard_deck(cards: Sequence[Card] = CARDS, seed: int = 0) -> FlashcardDeck:
    """The widget for ``cards``, in their own order until "shuffle" is pressed. Taught in notebooks/06-flashcards.ipynb."""
    return FlashcardDeck(cards, seed)


def cards_markdown(cards: Sequence[Card] = CARDS) -> str:
    """Every card as markdown, grouped by notebook: a heading with an anchor per notebook, then its cards.

    Each question shows and its answer unfolds from a ``<details>`` block;
    cards are numbered within their notebook (08.2 is the second card of
    notebook 08), and a notebook can link to its group as
    ``06-flashcards.ipynb#cards-08``.

    >>> print(cards_markdown([Card("2 + 2 < 5?", "Yes & no.", "01")]))
    <a id="cards-01"></a>
    <BLANKLINE>
    ### Notebook 01: clock hands: the sinusoidal encoding
    <BLANKLINE>
    <details><summary><b>01.1</b> 2 + 2 &lt; 5?</summary>
    <BLANKLINE>
    Yes &amp; no.
    <BLANKLINE>
    </details>
    """
    blocks = []
    for notebook in notebooks_of(cards):
        topic = TOPICS.get(notebook)
        blocks.append(f'<a id="cards-{notebook}"></a>\n\n### Notebook {notebook}' + (f": {topic}" if topic else ""))
        group = [card for card in cards if card.notebook == notebook]
        for number, card in enumerate(group, start=1):
            blocks.append(f"<details><summary><b>{notebook}.{number}</b> {html.escape(card.question, quote=False)}</summary>\n\n"
                          f"{html.escape(card.answer, quote=False)}\n\n</details>")
    return "\n\n".join(blocks)
