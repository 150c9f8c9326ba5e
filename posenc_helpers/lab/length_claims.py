"""What notebook 17 states about the length-generalisation sweep, as claims checked on every seed.

The rows come from :mod:`.length_results` (``length_results.json``: the new
schemes on prev and first, every scheme on passkey) and, for the plain schemes
on prev and first, from the headline sweep (:mod:`.results`), read for the same
seeds. :func:`views` turns one seed's rows into the numbers a claim reads:

* ``v[task, scheme, T]``: accuracy past L at test length T (over all positions
  at T = L), a :class:`.claims.Measured` on the answers the evaluation scores;
* ``v["passkey", name, T]``: whole-key passkey accuracy at length T (name: a
  scheme, or ``"rope+pi"``, ``"rope+ntk"``, ``"rope+yarn"``: RoPE rescaled at
  test time with s = T/L): in the stored file averaged over the grid's five
  depths and counted as 160 keys; in a re-scored file past L only, by
  haystack over the needles more than L back, with its SE over 256 haystacks
  (:func:`.passkey.far_summary`). Re-scored prev and first rows carry their SE
  over 256 sequences too.

The seed test (tests/test_lab_length.py) checks every claim on the sweep's
seeds and on the held-out seeds (``length_results_heldout.json``), which no
notebook reads.
"""

from __future__ import annotations

import numpy as np

from . import claims as C
from . import length_results, results
from .evaluate import EVAL_BATCH, EVAL_SEQUENCES
from .model import LENGTH_SCHEMES

__all__ = [
    "PAIRS", "TASKS", "label", "passkey_names", "beyond", "key_past_L", "views", "summary", "CLAIMS", "check",
    "report", "NOPE_BOUND",
]

#: Each design built for length generalisation beside the plain scheme it changes (FIRE beside T5's learned bias,
#: the other learned relative bias).
PAIRS = (
    ("sinusoidal", "rand_sinusoidal"), ("learned", "rand_learned"), ("rope", "rand_rope"), ("alibi", "rand_alibi"),
    ("t5", "fire"),
)

TASKS = length_results.TASKS


#: How the test-time rescalings are labelled beside the schemes' own titles.
_METHOD_TITLES = {"pi": "PI", "ntk": "NTK", "yarn": "YaRN"}


def label(name) -> str:
    """A line's label: the scheme's title, or "RoPE + YaRN" for ``"rope+yarn"``.

    >>> label("rand_rope"), label("rope+yarn")
    ('RoPE, randomized', 'RoPE + YaRN')
    """
    from .model import SCHEME_TITLES

    if "+" in name:
        scheme, method = name.split("+")
        return f"{SCHEME_TITLES[scheme]} + {_METHOD_TITLES[method]}"
    return SCHEME_TITLES[name]


def passkey_names() -> tuple:
    """Every line of the passkey sweep: each scheme, then RoPE with each test-time rescaling."""
    return tuple(length_results.PASSKEY_SCHEMES) + tuple(f"rope+{m}" for m in length_results.METHODS)


def _n(task, T, L):
    # the answers an accuracy counts: past L beyond L, every position at L (claims.answers reads the test batch)
    return C.answers(task, T, positions="all" if T <= L else "beyond", train_len=L)


def beyond(row) -> np.ndarray:
    """One prev/first row's accuracy at each test length: over all positions at L, past L beyond it."""
    return np.concatenate([[row["accuracy"][0]], np.asarray(row["beyond"], dtype=float)[1:]])


def key_past_L(grid) -> np.ndarray:
    """Whole-key accuracy at each grid length, averaged over the grid's depths: (lengths,)."""
    return np.asarray(grid, dtype=float).mean(axis=0)


def views(doc, head=None) -> dict:
    """``{seed: view}`` for every seed of ``doc`` (a :func:`.length_results.load`), with the plain schemes of
    ``head`` (a :func:`.results.load`; default the shipped headline sweep) on prev and first."""
    head = results.load() if head is None else head
    lengths = list(doc["lengths"])
    grid_lengths = list(doc["grid_lengths"])
    L = doc["train_len"]
    out = {}
    for seed in doc["seeds"]:
        v = {}
        for task in TASKS:
            for plain, new in PAIRS:
                for scheme, table in ((new, doc["table"]), (plain, head["table"])):
                    row = table.get((seed, task, scheme))
                    if row is None:
                        continue
                    if "beyond_se" in row:  # re-scored: over test sequences, with the SE over them
                        ses = np.concatenate([[row["accuracy_se"][0]], np.asarray(row["beyond_se"], dtype=float)[1:]])
                        for T, a, se in zip(lengths, beyond(row), ses, strict=True):
                            v[task, scheme, T] = C.Measured(float(a), EVAL_SEQUENCES, se=float(se))
                        continue
                    for T, a in zip(lengths, beyond(row), strict=True):
                        v[task, scheme, T] = C.Measured(float(a), _n(task, T, L))
        for scheme in length_results.PASSKEY_SCHEMES:
            row = doc["table"][(seed, "passkey", scheme)]
            if "far" in row:  # re-scored: past L counted by haystack over the far needles only, with its SE
                parts = {scheme: row} | ({f"rope+{m}": g for m, g in row["scaled"].items()} if scheme == "rope" else {})
                for name, part in parts.items():
                    for T, a, se in zip(grid_lengths, part["far"], part["far_se"], strict=True):
                        if a is not None and not np.isnan(a):
                            v["passkey", name, T] = C.Measured(float(a), EVAL_SEQUENCES, se=float(se))
                continue
            grids = {scheme: row["key"]}
            if scheme == "rope":
                grids.update({f"rope+{m}": g["key"] for m, g in row["scaled"].items()})
            for name, grid in grids.items():
                n = EVAL_BATCH * len(doc["depths"])  # whole keys counted: one per sequence and depth
                for T, a in zip(grid_lengths, key_past_L(grid), strict=True):
                    v["passkey", name, T] = C.Measured(float(a), n)
        out[seed] = v
    return out


def summary(vs, key) -> tuple:
    """``(median, low, high)`` over the seeds of ``vs`` of the number at ``key``."""
    x = np.array([float(v[key]) for v in vs.values()])
    return float(np.median(x)), float(x.min()), float(x.max())


_8L = 256


def _v(v, task, scheme, T=_8L):
    return v[task, scheme, T]


#: The claims notebook 17 states about the stored sweep, each on every seed at 8L = 256. They were written with the
#: sweep's six seeds in view; the held-out seeds' rows, checked by the seed test, arrive in the same commit
#: (d8c3030), so the repository cannot show that they were trained after (docs/CLAIMS.md).
CLAIMS: tuple = (
    C.Claim("prev, 8L: randomizing the sinusoidal encoding raises its accuracy past L",
            lambda v: _v(v, "prev", "rand_sinusoidal") > _v(v, "prev", "sinusoidal")),
    C.Claim("prev, 8L: randomizing RoPE raises its accuracy past L",
            lambda v: _v(v, "prev", "rand_rope") > _v(v, "prev", "rope")),
    C.Claim("prev, 8L: randomizing ALiBi lowers its accuracy past L",
            lambda v: _v(v, "prev", "rand_alibi") < _v(v, "prev", "alibi")),
    C.Claim("prev, 8L: the randomized learned table runs, and scores at least 0.3 past L",
            lambda v: _v(v, "prev", "rand_learned") >= 0.3),
    C.Claim("prev, 8L: FIRE beats T5's buckets past L",
            lambda v: _v(v, "prev", "fire") > _v(v, "prev", "t5")),
    # (dropped: "first, 8L: randomizing RoPE raises its accuracy past L" holds on 6 of 6 seeds, but once plain RoPE's
    # scores carry their SE over 256 test sequences (the headline sweep re-scored, issue 43) its closest seed clears it
    # by 3.3 SE; notebook 17 gives it as a count until the length sweep is re-scored and its claims restated)
    C.Claim("passkey, 8L: YaRN at test time retrieves more whole keys than plain RoPE, PI and NTK",
            lambda v: (_v(v, "passkey", "rope+yarn") > _v(v, "passkey", "rope+pi"))
            & (_v(v, "passkey", "rope+yarn") > _v(v, "passkey", "rope+ntk"))
            & (_v(v, "passkey", "rope+yarn") > _v(v, "passkey", "rope"))),
    C.Claim("passkey, 8L: randomizing the sinusoidal encoding and RoPE raises their whole keys",
            lambda v: (_v(v, "passkey", "rand_sinusoidal") > _v(v, "passkey", "sinusoidal"))
            & (_v(v, "passkey", "rand_rope") > _v(v, "passkey", "rope"))),
    C.Claim("first, 8L: every design built for length generalisation keeps at least 0.99 past L",
            lambda v: all(_v(v, "first", s) >= 0.99 for s in LENGTH_SCHEMES)),
    # "NoPE writes at least 0.9 of the keys whole at 8L" held on five of the six seeds and failed on seed 2 (0.66):
    # notebook 17 shows that failure, and states the spread instead
    C.Spread("passkey, 8L: NoPE writes most keys whole (median at least 0.9) but varies from seed to seed "
             "(range at least 0.3)", lambda v: float(_v(v, "passkey", "none")), median=(0.9, None), wide=0.3),
)

#: The per-seed claim notebook 17 shows failing: it holds on seeds 3, 4 and 5 and fails on seed 2.
NOPE_BOUND = C.Claim("passkey, 8L: NoPE writes at least 0.9 of the keys whole", lambda v: _v(v, "passkey", "none") >= 0.9)


def check(vs) -> dict:
    """Every claim over the seeds of ``vs``: ``{text: {"holds", "k", "n", "margin", "se", "ratio", "seed"}}``.

    A :class:`.claims.Claim` is :func:`.claims.margins`'s entry (k of n seeds, the worst comparison and its
    standard errors) with ``holds`` = on every seed; a :class:`.claims.Spread` holds over the seeds
    (``margin`` from :meth:`.claims.Spread.margin`, no k, n or standard error).
    """
    out = {}
    per_seed = [c for c in CLAIMS if isinstance(c, C.Claim)]
    for text, m in C.margins(per_seed, vs).items():
        out[text] = {"holds": m["k"] == m["n"], **m}
    for c in CLAIMS:
        if not isinstance(c, C.Claim):
            margin = c.margin(vs)
            out[c.text] = {"holds": margin >= 0, "k": None, "n": len(vs), "margin": margin, "se": None, "ratio": None,
                           "seed": None}
    return out


def report(table) -> str:
    """:func:`check`'s table as text: a line per claim."""
    lines = []
    for text, m in table.items():
        mark = "holds" if m["holds"] else "FAILS"
        seeds = f"{m['k']}/{m['n']} seeds" if m["k"] is not None else f"over {m['n']} seeds"
        if m["ratio"] is not None:
            ratio = f", worst margin {m['margin']:+.3f} = {m['ratio']:.1f} SE"
        else:
            ratio = "" if m["margin"] is None else f", margin {m['margin']:+.3f}"
        if m.get("mixed"):
            ratio += f"; not weighed on seeds {m['mixed']}: a comparison inside it went the other way"
        lines.append(f"{mark}: {text} ({seeds}{ratio})")
    return "\n".join(lines)
