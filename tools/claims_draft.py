"""The headline claims restated for the re-scored sweep (issue 43 §1, §3), a draft derived on the kept sweep seeds.

The re-scored sweep (:func:`posenc_helpers.lab.results.sweep_row`: every accuracy over 256 test sequences, iRoPE with
chunks of L/4, L/2 as a second setting and L as the ablation, fine-tunes also scored past 4L) changes what the stored
claims of notebooks 12 and 13 (``claims.CLAIMS_12`` …) can say: on its first 12 seeds, 32 of the 44 it can weigh
(of 48) clear their bound by fewer than 4 sequence-level SEs or fail (``python -m tools.claims_preview``), and the
iRoPE claims describe chunks of L. This module holds their restatement, derived on sweep seeds only (reading sweep
seeds is how claims are derived; held-out seeds come from the restated module's hash afterwards). Each restated
claim says in a comment what the stored one said and why it changed. ``python -m tools.claims_draft`` prints their
margins on every whole seed kept (:func:`tools.claims_preview.kept_table`).

When every headline row is in, the thresholds are checked again on all 20 seeds; then these groups replace the
stored ones in :mod:`posenc_helpers.lab.claims` together with the new ``results.json`` and notebooks 12 and 13's
text, and this file goes. Until then nothing reads it but its own command and its test.

What a bound at 256 sequences can say: an accuracy's SE is weighed as whole sequences failing, √(q(1 − q)/256) at
the point q within the margin of the score that is nearest 1/2 (:func:`posenc_helpers.lab.claims.comparison_error`),
so a perfect score can be stated "at least 0.94" and no higher, and a score near 0.9 needs a bound about 0.10 away
(0.957 → 0.87, 0.887 → 0.78). A comparison that no bound states at 4 SE on every seed is dropped as a claim, and its
comment says so; notebook 12 can give it as a statistic (on how many seeds, the gap's median and range). It is not
turned into a share of the seeds: a share does not weigh each seed against its noise, and a few held-out seeds
could not break "on three seeds in four" after 20 sweep seeds that all hold.
"""

from __future__ import annotations

from posenc_helpers.lab.claims import (
    _C13_PAST_L,
    _CHANCE,
    Claim,
    _b,
    _c13_alibi_flat,
    _c13_beyond,
    _c13_ent_last,
    _c13_first_min,
    _ft,
    _lengths,
    at,
)

_TASKS = ("prev", "first")
#: The schemes of the headline figure (iRoPE with chunks of L/4, :func:`posenc_helpers.lab.results.model_of`).
_SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi", "t5", "rope_nope", "irope")
_BUT_IROPE = tuple(s for s in _SCHEMES if s != "irope")
#: iRoPE's chunk settings: L/4 (the headline), L/2 (the second setting) and L (the ablation, Llama 4's chunk = L).
_IROPE = {"irope": 8, "irope_w16": 16, "irope_w32": 32}


def _tuned(v, task, method, steps, T):
    # a fine-tune's accuracy past its own length 4L (positions ≥ 4L of a sequence of T)
    return at(v, task, "rope", T, "finetune", method, str(steps), "tuned")


CLAIMS_12 = [
    # stored: "at least 0.9 at L on prev" (3.1 SE on iRoPE with chunks of L/4, 0.957)
    Claim("every model scores at least 0.87 at L on prev",
          lambda v: all(at(v, "prev", s, 32, "accuracy") >= 0.87 for s in _SCHEMES), live=True),
    # stored: "every model at least 0.95 at L on first": iRoPE with chunks of L/4 scores 0.71-0.74 there
    Claim("every model but iRoPE with chunks of L/4 scores at least 0.94 at L on first",
          lambda v: all(at(v, "first", s, 32, "accuracy") >= 0.94 for s in _BUT_IROPE)),
    # stored: 0.97 (2.8 SE on a perfect score; 0.94 is the most 256 sequences allow, and ALiBi on prev is 0.9996)
    Claim("ALiBi scores at least 0.93 past L at every length, on both tasks",
          lambda v: all(_b(v, t, "alibi", T) >= 0.93 for t in _TASKS for T in _lengths(v, t)), live=True),
    # stored: "at most 4 times chance at 2L, twice chance at 8L" (1.9 SE)
    Claim("sinusoidal on prev: at most 5 times chance past L at 2L, at most 3 times chance at 8L",
          lambda v: _b(v, "prev", "sinusoidal", 64) <= 5 * _CHANCE
          and _b(v, "prev", "sinusoidal", 256) <= 3 * _CHANCE, live=True),
    # stored: "at least 0.75 at 2L, and at least 0.2 lower at 8L" (2.3 SE)
    Claim("RoPE on prev degrades: at least 0.72 past L at 2L, and at least 0.1 lower at 8L than at 2L",
          lambda v: _b(v, "prev", "rope", 64) >= 0.72 and _b(v, "prev", "rope", 256) <= _b(v, "prev", "rope", 64) - 0.1,
          live=True),
    # stored: 0.97 (2.8 SE)
    Claim("NoPE, T5's bias and RoPE + NoPE find the first token: at least 0.94 past L at every length",
          lambda v: all(_b(v, "first", s, T) >= 0.94 for s in ("none", "t5", "rope_nope") for T in _lengths(v, "first"))),
    # stored: "at least 0.15 below ALiBi …, below RoPE at 2L and 4L" (3.0 SE); RoPE's lead is a spread (SPREADS_12)
    # ("above 3 times chance" held by 4.0 SE on 12 seeds and by 3.96 with seeds 12 and 13; 0.1 below ALiBi by 4.2)
    Claim("NoPE on prev: above twice chance and at least 0.08 below ALiBi at every length past L",
          lambda v: all(2 * _CHANCE < _b(v, "prev", "none", T) <= _b(v, "prev", "alibi", T) - 0.08
                        for T in _lengths(v, "prev")), live=True),
    # stored: "below ALiBi at every length past L, at most 0.5 at 8L" (3.7 SE, at 2L)
    Claim("RoPE + NoPE on prev degrades: below ALiBi from 3L on, at most 0.5 at 8L",
          lambda v: all(_b(v, "prev", "rope_nope", T) < _b(v, "prev", "alibi", T) for T in _lengths(v, "prev") if T >= 96)
          and _b(v, "prev", "rope_nope", 256) <= 0.5, live=True),
    # stored: "below ALiBi at every length past L, at most 0.6 at 8L" (2.2 SE, at 2L)
    Claim("T5's bias on prev degrades: below ALiBi from 3L on, at most 0.6 at 8L",
          lambda v: all(_b(v, "prev", "t5", T) < _b(v, "prev", "alibi", T) for T in _lengths(v, "prev") if T >= 96)
          and _b(v, "prev", "t5", 256) <= 0.6, live=True),
    # iRoPE, re-derived for chunks shorter than L (issue 43 §3). Stored: four claims about chunks of L.
    Claim("iRoPE with chunks of L/4 on prev: at least 0.78 past L at every length",
          lambda v: all(_b(v, "prev", "irope", T) >= 0.78 for T in _lengths(v, "prev")), live=True),
    # with chunks of L/4 the model's final loss on first stays near 0.5 (0.001 with chunks of L/2 or L), and the
    # same weights read with the full mask score 0.92-0.98 past L at 2L: what its chunks take from it is shown, why
    # is not
    Claim("iRoPE on first at L: at most 0.87 with chunks of L/4, at least 0.93 with chunks of L/2 or L",
          lambda v: at(v, "first", "irope", 32, "accuracy") <= 0.87
          and all(at(v, "first", s, 32, "accuracy") >= 0.93 for s in ("irope_w16", "irope_w32"))),
    # (0.72 with chunks of L held by 4 SE on 17 seeds; seed 17 scores 0.608 there at 2L, 3.6 SE: restated 0.75)
    Claim("iRoPE on first past L: at most 0.5 with chunks of L/4, 0.62 with chunks of L/2 and 0.75 with chunks of L "
          "(the ablation), at every length",
          lambda v: all(_b(v, "first", s, T) <= bound for s, bound in (("irope", 0.5), ("irope_w16", 0.62),
                                                                        ("irope_w32", 0.75))
                        for T in _lengths(v, "first"))),
    Claim("the same iRoPE models with a sliding window of L instead of chunks score at least 0.92 on prev past L at "
          "every length, for every chunk setting",
          lambda v: all(_b(v, "prev", s, T, "masks", "sliding") >= 0.92 for s in _IROPE for T in _lengths(v, "prev"))),
    Claim("the same iRoPE models with the full mask on prev: at least 0.1 below their chunked score at 4L and 8L, for "
          "every chunk setting",
          lambda v: all(_b(v, "prev", s, T, "masks", "full") <= _b(v, "prev", s, T) - 0.1
                        for s in _IROPE for T in (128, 256))),
]


CLAIMS_12_SCALING = [
    # stored: 0.97 (2.8 SE)
    Claim("PI and YaRN with the lab's thresholds find the first token: at least 0.94 past L at every length",
          lambda v: all(_b(v, "first", "rope", T, "scaled", m) >= 0.94 for m in ("pi", "yarn")
                        for T in _lengths(v, "first"))),
    Claim("PI collapses on prev: at most 0.5 past L at 2L, at most 3 times chance at 8L",
          lambda v: _b(v, "prev", "rope", 64, "scaled", "pi") <= 0.5
          and _b(v, "prev", "rope", 256, "scaled", "pi") <= 3 * _CHANCE, live=True),
    # stored: "at most 0.5 past L at 2L" (2.5 SE; 0.55 held by 4.0 SE on 12 seeds, 3.8 with seeds 12 and 13)
    Claim("YaRN with LLaMA's thresholds acts like PI on prev: at most 0.6 past L at 2L, at most 3 times chance at 8L",
          lambda v: _b(v, "prev", "rope", 64, "scaled", "yarn_llama") <= 0.6
          and _b(v, "prev", "rope", 256, "scaled", "yarn_llama") <= 3 * _CHANCE, live=True),
    # stored: "NTK beats plain RoPE at 8L on both tasks" (1.9 SE on the closest seed; 8 of 12 seeds clear 4 SE):
    # dropped as a claim
    # stored: "log-n scaling moves no scheme's accuracy past L by more than 0.15" (2.5 SE; the largest move on any
    # seed is 0.042, but two scores near 1/2, weighed as independent, need about 0.22 between them at 4 SE)
    Claim("log-n scaling moves no scheme's accuracy past L by more than 0.25, on either task, at any length",
          lambda v: all(abs(_b(v, t, s, T, "logn") - _b(v, t, s, T)) <= 0.25
                        for t in _TASKS for s in _SCHEMES if s != "learned" for T in _lengths(v, t))),
]

CLAIMS_12_FINETUNE = [
    # stored: 0.95 on each task (3.6 and 2.8 SE)
    Claim("after 100 steps at 4L every fine-tune (s = 4) scores at least 0.92 past L at 2L and 4L (inside the "
          "fine-tune's length), on both tasks",
          lambda v: all(_ft(v, t, m, 100, T) >= 0.92 for t in _TASKS for m in ("none", "pi", "ntk", "yarn")
                        for T in (64, 128)), live=True),
    # stored: "past L at every length up to 8L", 0.9 on prev and 0.95 on first (3.4 SE); now read where the
    # fine-tune never trained: positions past 4L ("tuned")
    # (0.9 held by 4.1 SE on 16 seeds; seed 16 scores 0.935 there, 1.9 SE)
    Claim("plain RoPE fine-tuned at 4L with no rescaling keeps at least 0.84 at the positions past 4L, at every length "
          "up to 8L, on both tasks",
          lambda v: all(_tuned(v, t, "none", 100, T) >= 0.84 for t in _TASKS for T in (160, 192, 224, 256)), live=True),
    # stored: "PI and YaRN with s = 4 below plain RoPE fine-tuned at 8L on prev" (0.7 SE, YaRN; 9 of 12 seeds clear
    # 4 SE at the positions past 4L): YaRN's part is dropped as a claim
    Claim("after 100 steps at 4L, PI with s = 4 is below plain RoPE fine-tuned at the positions past 4L at 8L on prev",
          lambda v: _tuned(v, "prev", "pi", 100, 256) < _tuned(v, "prev", "none", 100, 256), live=True),
    # stored: 0.95 (2.6 SE)
    Claim("with s = 8 (set for the target 8L), after 100 steps at 4L every fine-tune scores at least 0.91 past L at "
          "2L and 4L (inside the fine-tune's length), on both tasks",
          lambda v: all(_ft(v, t, f"{m}_s8", 100, T) >= 0.91 for t in _TASKS for m in ("pi", "ntk", "yarn")
                        for T in (64, 128))),
    # stored: "at least 0.99 past L at 8L" (1.6 SE); now at the positions past 4L
    Claim("with s = 8, NTK and YaRN fine-tuned for 100 steps at 4L keep at least 0.94 at the positions past 4L, at "
          "every length up to 8L, on prev",
          lambda v: all(_tuned(v, "prev", f"{m}_s8", 100, T) >= 0.94 for m in ("ntk", "yarn")
                        for T in (160, 192, 224, 256))),
    # the spreads and shares of notebooks 12 and 13 (claims.over_seeds) are kept as they stand; a share's seeds are
    # not weighed either (see the module's docstring), which the swap is to revisit
    # stored: "with s = 8, PI below plain RoPE fine-tuned at 8L on prev" (2.5 SE on seed 11; 11 of 12 seeds clear 4
    # SE at the positions past 4L): dropped as a claim
    # stored: "NTK and YaRN at least 0.99 past L at 4L, PI at most 0.95" (1.6 SE); PI's part (below NTK and YaRN on
    # 10 of 12 seeds by 4 SE; no bound on PI alone clears 4 SE) is dropped
    Claim("after 25 steps at 4L on prev, NTK and YaRN (s = 4 or 8) score at least 0.94 past L at 4L (inside the "
          "fine-tune's length)",
          lambda v: all(_ft(v, "prev", m + k, 25, 128) >= 0.94 for m in ("ntk", "yarn") for k in ("", "_s8"))),
    # stored: "PI's fine-tune starts below plain RoPE's: after 25 steps at most 0.95 at L on prev" (3.3 SE; "at most
    # 0.98" held by 4.3 SE on 12 seeds and 3.9 with seeds 12 and 13; a bound that clears 4 SE, 0.99, says little
    # beside plain RoPE's 1.00): dropped as a claim
]


#: Notebook 13's claims that change; the other 13 of ``claims.CLAIMS_13`` clear 4 SE as they stand (8.9 to 90.2 on
#: the kept seeds), or read no SE (four: a layer index and the learned table's three claims, whose numbers are no
#: means over inputs).
CLAIMS_13_CHANGED = [
    # stored: "changes ≤ 0.1 nats" (3.6 SE, the bound Σ|c|·SE over the heads' entropies)
    Claim("ALiBi's steepest head: entropy changes ≤ 0.12 nats from T = 64 to 256 (both layers), uniform rises ≥ 0.5",
          lambda v: _c13_alibi_flat(v)[0] <= 0.12 and _c13_alibi_flat(v)[1] >= 0.5),
    # stored: "the weight on token 0 is ≥ 0.7 at every length, accuracy past L at 8L ≥ 0.95" (2.5 SE on the weight)
    Claim("RoPE on first: with PI the weight on token 0 is ≥ 0.5 at every length, accuracy past L at 8L ≥ 0.94",
          lambda v: _c13_first_min(v, "pi") >= 0.5 and _c13_beyond(v, "first", "rope", "pi", 256) >= 0.94),
    # stored: "log-n lowers RoPE's last-layer entropy at T = 256, on both tasks" (2.5 SE: the bound adds the two
    # entropies' SEs, though they are read on the same inputs; on prev every seed clears 24 SE, on first 8 of 12
    # clear 4): stated on prev
    Claim("log-n lowers RoPE's last-layer entropy at T = 256 on prev",
          lambda v: _c13_ent_last(v, "prev", "rope", -1, "logn") < _c13_ent_last(v, "prev", "rope", -1)),
    # stored: "log-n on prev: changes no scheme's accuracy past L at 8L by more than 0.1; ALiBi's stays ≥ 0.95" (1.6
    # SE once its accuracies carry their SE over sequences; the largest change on any seed is 0.031)
    Claim("log-n on prev: changes no scheme's accuracy past L at 8L by more than 0.22; ALiBi's stays at least 0.93",
          lambda v: all(abs(_c13_beyond(v, "prev", s, "logn", 256) - _c13_beyond(v, "prev", s, "beyond", 256)) <= 0.22
                        for s in _C13_PAST_L) and _c13_beyond(v, "prev", "alibi", "logn", 256) >= 0.93),
]


def main(argv=None) -> None:
    from posenc_helpers.lab import claims
    from tools.claims_preview import views_from_command_line

    views = views_from_command_line(argv, __doc__.splitlines()[0])
    for name, group in (("12", CLAIMS_12), ("12 scaling", CLAIMS_12_SCALING), ("12 fine-tune", CLAIMS_12_FINETUNE),
                        ("13 (the claims that change)", CLAIMS_13_CHANGED)):
        print(f"\n== {name} (restated)")
        print(claims.margin_report(claims.margins(group, views)))
    print("\n== the stored spreads and shares of notebooks 12 and 13, unchanged")
    for name in ("12", "12 scaling", "13"):
        print(claims.over_report(claims.over_seeds()[name], list(views.values())))


if __name__ == "__main__":
    main()
