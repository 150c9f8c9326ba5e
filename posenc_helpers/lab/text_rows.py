"""The text lab's rows kept block by block (issue 43), for the re-scoring of ``text_results.json`` and the context tables.

The stored text sweep (:mod:`.text`) keeps one number per length, the mean loss over every validation window, and its
claims were weighed with no noise at all. A row of this module also keeps every curve block by block: the validation
text's first :data:`N_BLOCKS` stretches of :data:`BLOCK` characters (96 of 1,024, 16L at L = 64), each with the mean
loss of the characters it holds, read in the non-overlapping windows of T as the sweep reads them (every T of the
sweep divides 1,024, so a block holds whole windows). From the blocks a claim takes its noise:

- a claim that compares two numbers read on the same text (two schemes, two lengths, a fine-tune and the zero-shot
  model, one seed's model against another's) is weighed by the SE of the blockwise differences. Every model is scored
  on the same text, so most of the text's noise cancels in a difference. A review measured neighbouring differences
  as nearly uncorrelated (lag 1: −0.03);
- a claim about one number alone is weighed over larger blocks (4,096 characters, four blocks), a precaution: a
  review measured neighbouring 64-character windows of one number correlated (lag 1: 0.20–0.24) and an SE over
  4,096-character blocks 1.9 times the SE over windows at L; between 1,024-character blocks the correlation is to be
  measured on the kept rows.

The validation text is the last 10 % of the shipped tragedies (the middle of Act II of Antony and Cleopatra to the
end), the same for every seed: its noise is another stretch of the same play, which the seeds do not average away.

A RoPE row also holds the fine-tunes with s set for a target longer than the fine-tune (issue 43 §3): beside the
sweep's s = 4 (:data:`.text.FINETUNE_LEN`: the fine-tune's own length, 4L), PI, NTK and YaRN are fine-tuned at 4L
with s = 8 and s = 16 (:func:`.text.finetune` with ``factor``). Notebook 12 sets s = 8 for a fine-tune at 4L read at
8L; the YaRN paper (Peng et al. 2023) reports its s = 32 model, fine-tuned on 64k-token sequences, extrapolating to
128k, twice its fine-tune length; s = 16 at 4L is read four times past the fine-tune. Every
curve of a RoPE row (as trained, rescaled at test time, fine-tuned) is also kept past the fine-tune's length
(``past``): the positions 4L … T − 1 of each window of T = 8L and 16L only, so a claim about reading past the
fine-tune compares like with like, without the positions the fine-tune trained on.

The same job keeps the model's context table (:func:`.text_context.context_use` with each window's gain per block,
and sliding against non-overlapping windows block by block over the first :data:`.text_context.N_CHARS`
characters), so the context claims can be read on every sweep seed, not the first three.

``python -m posenc_helpers.lab.text_rows [WORKERS]`` computes every row of :data:`.text.SEEDS` × :data:`.text.TEXT_SCHEMES`
in the lab's pool, each in a fresh worker, and keeps each finished row in ``runs/partials/text-<stamp>.jsonl``
(:func:`row_stamp`); a stopped run resumes there. Each row records the stamp of the code that computed it (a worker
imports the code from disk, so code edited during a run would show), and the sweep fails at its end naming any row of
another stamp (the row stays in the file). A worker's stamp is computed from the source as it stands on disk when
the row ends, so do not edit this module, :mod:`.text` or :mod:`.text_context` while rows are computed: an edit that
only moves lines changes the stamp (five rows were refused that way and computed again).

``--bands`` computes the loss by position in bands (:func:`band_sweep`), ``--save`` writes both to
:data:`BLOCKS_PATH` (``text_blocks.json``, what notebook 15's claims read), and ``--held-out`` runs the claims'
check on held-out seeds drawn from text_claims.py's hash (:func:`ledger_check`).
"""

from __future__ import annotations

import json
import math
import numbers
import sys
import time
from pathlib import Path

import numpy as np

from . import text as T
from . import text_context as C

__all__ = [
    "BLOCK", "N_BLOCKS", "FINETUNES", "PAST_FACTORS", "BANDS", "BAND_FACTOR", "BLOCKS_PATH", "BLOCKS_HELD_OUT_PATH",
    "HELD_OUT_SEEDS", "FORMER_HELD_OUT", "block_bits", "row", "row_stamp", "jobs", "sweep", "band_bits", "bands",
    "band_row", "band_stamp", "band_sweep", "context_table", "save_blocks", "load_blocks", "held_out_row",
    "held_out_rows", "ledger_seeds", "judge", "ledger_check", "main",
]

#: The characters in a block: 16L, the longest window the sweep reads, so a block holds whole windows at every T.
BLOCK = 1024
#: The blocks of the validation text every curve is kept on: its first 96 × 1,024 = 98,304 targets (of 99,327).
N_BLOCKS = 96

#: The fine-tunes a RoPE row holds, ``{name: (method, s)}``, each FINETUNE_STEPS at FINETUNE_LEN × L: the sweep's four
#: (s = FINETUNE_LEN for the rescalings; "plain" rescales nothing), and PI, NTK and YaRN with s for 8L and for 16L.
FINETUNES = {
    "plain": (None, None), "pi": ("pi", None), "ntk": ("ntk", None), "yarn": ("yarn", None),
    **{f"{m}_s{s}": (m, s) for s in (8, 16) for m in T.METHODS},
}

#: The lengths, as multiples of L, at which every curve of a RoPE row is also kept past the fine-tune (positions ≥ 4L).
PAST_FACTORS = (8, 16)


def block_bits(run, length, *, method=None, start=0, n_blocks=N_BLOCKS, block=BLOCK) -> np.ndarray:
    """The mean loss in bits of each block of ``block`` validation targets, read in non-overlapping windows of
    ``length``: ``(n_blocks,)``. With ``start``, only the positions ``start`` … ``length`` − 1 of each window count.

    The windows are :func:`.text.bits_per_char`'s (window w reads characters wT … wT + T − 1), so block b holds the
    targets b·block … (b + 1)·block − 1, ``block / length`` whole windows. ``method`` rescales a RoPE model as
    :func:`.text.bits_per_char` does (a fine-tuned run is read with its own rescaling). All NaN where the scheme
    cannot run (the learned table past L).
    """
    length = T._length(length)
    block = _int("block", block, least=1)
    n_blocks = _int("n_blocks", n_blocks, least=2)
    if block % length:
        raise ValueError(f"length={length} must divide block={block}, so that a block holds whole windows")
    if isinstance(start, bool) or not isinstance(start, (numbers.Integral, np.integer)) or not 0 <= start < length:
        raise ValueError(f"start must be a position in 0 … {length - 1}, got {start!r}")
    if run.config.scheme == "learned" and length > run.train_len:
        return np.full(n_blocks, np.nan)
    nll = T._window_nll(run, length, method)  # (windows, length)
    if nll.size < n_blocks * block:
        raise ValueError(f"n_blocks={n_blocks} blocks of {block} need {n_blocks * block} targets, the text holds {nll.size}")
    by_block = nll.ravel()[: n_blocks * block].reshape(n_blocks, block)
    keep = np.arange(block) % length >= start  # each target's position within its window
    return by_block[:, keep].mean(axis=1)


def _int(name, value, *, least) -> int:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or value < least:
        raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")
    return int(value)


def _curve(run, lengths, **how) -> dict:
    # one curve: its blocks at each length (and, with start = 0, the mean over every window, as the stored sweep keeps)
    out = {"blocks": [block_bits(run, n, **how) for n in lengths]}
    if how.get("start", 0) == 0:
        out["bits"] = T.bits_per_char(run, lengths, method=how.get("method")).tolist()
    return out


def _context(run) -> dict:
    # the model's context table, with what a paired SE needs: each window's gain per block of L, and sliding against
    # non-overlapping windows block by block over the same characters
    L, n_chars = run.train_len, C.N_CHARS
    stride1 = C.sliding_nll(run, L, 1, n_chars)
    use = C._context_use(run, C.N_WINDOWS, C.FACTOR, stride1, windows=True)
    out = {k: np.asarray(use[k]) for k in ("whole", "last_L", "gain", "gain_se", "gain_windows")}
    sliding, plain = [], []
    for length, stride in zip([m * L for m in C.MULTIPLES], C.strides(L), strict=True):
        slide = stride1 if (stride == 1 and length == L) else C.sliding_nll(run, length, stride, n_chars)
        sliding.append(slide.reshape(-1, BLOCK).mean(axis=1))
        plain.append(C.sliding_nll(run, length, length, n_chars).reshape(-1, BLOCK).mean(axis=1))
    out["sliding_blocks"], out["nonoverlapping_blocks"] = sliding, plain
    return out


def row(seed, scheme) -> dict:
    """One model's numbers, block by block: a row of the re-scored text sweep (JSON values only).

    ``bits`` (the mean over every window, at each length of :data:`.text.FACTORS` × L) and ``blocks`` (the
    :func:`block_bits` at each length); ``by_position`` (the loss at each position of a window of 8L, as the stored
    sweep keeps it); ``final_train_bits``; for RoPE, ``scaled[method]`` (each test-time rescaling with s = T / L) and
    ``finetuned[name]`` (each fine-tune of :data:`FINETUNES`, read with its own rescaling), each ``{"bits",
    "blocks"}``, and ``past`` with the blocks of every one of those curves (``"rope"``, ``"scaled:<method>"``,
    ``"finetuned:<name>"``) over positions 4L … T − 1 at :data:`PAST_FACTORS` × L; ``context`` (:func:`_context`).
    Also the stamp of the code that computed it, the machine, and seconds of wall time.
    """
    from .fingerprint import fingerprint

    w0 = time.perf_counter()
    run = T.train(scheme, seed=seed, progress=False)
    L = run.train_len
    lengths, past = [f * L for f in T.FACTORS], [f * L for f in PAST_FACTORS]
    after = T.FINETUNE_LEN * L  # the fine-tune's length: "past" keeps the positions from here on
    out = {"scheme": scheme, "seed": seed, "stamp": row_stamp(), "lengths": lengths, "block": BLOCK}
    out["final_train_bits"] = float(run.losses[-50:].mean() / math.log(2))
    out["model_seconds"] = round(time.perf_counter() - w0, 1)  # trained, or read from the model cache
    out.update(_curve(run, lengths))
    out["by_position"] = T.loss_by_position(run, 8 * L)
    if scheme == "rope":
        out["scaled"] = {m: _curve(run, lengths, method=m) for m in T.METHODS}
        out["past"] = {"rope": _curve(run, past, start=after)["blocks"]}
        for m in T.METHODS:
            out["past"][f"scaled:{m}"] = _curve(run, past, method=m, start=after)["blocks"]
        out["finetuned"] = {}
        for name, (method, s) in FINETUNES.items():
            ft = T.finetune(run, length=after, method=method, factor=s, progress=False)
            out["finetuned"][name] = _curve(ft, lengths)
            out["past"][f"finetuned:{name}"] = _curve(ft, past, start=after)["blocks"]
    w1 = time.perf_counter()
    out["context"] = _context(run)
    out["context_seconds"] = round(time.perf_counter() - w1, 1)
    out["seconds"] = round(time.perf_counter() - w0, 1)
    out["machine"] = fingerprint()  # the processor and libraries that ran it
    from .results import _clean

    return _clean(out)


def row_stamp() -> str:
    """16 hex digits naming the code a row is computed by: the model cache's code version (model, train, tasks,
    cache, and the helpers a model computes with, the rescalings among them), the text lab and its context module
    whole, the shipped text, this module's row functions and settings, and the Python version (code without comments or
    docstrings). An edit anywhere in text.py or text_context.py moves it, so stop a run before editing them."""
    import hashlib
    import inspect
    import textwrap
    from pathlib import Path

    from .cache import code_text, code_version
    from .results import _clean

    parts = [code_version(), f"python {sys.version_info[0]}.{sys.version_info[1]}"]
    parts += [code_text(Path(m.__file__).read_text(encoding="utf-8")) for m in (T, C)]
    parts.append(hashlib.sha256(T.TEXT_PATH.read_bytes()).hexdigest())
    functions = (block_bits, _int, _curve, _context, row, _clean)
    parts += [code_text(textwrap.dedent(inspect.getsource(f))) for f in functions]
    parts.append(repr((BLOCK, N_BLOCKS, FINETUNES, PAST_FACTORS)))
    return hashlib.sha256("\n\0".join(parts).encode()).hexdigest()[:16]


def jobs(seeds=T.SEEDS, schemes=T.TEXT_SCHEMES) -> list[tuple]:
    """``(seed, scheme)`` for every row, seed by seed (a stopped run leaves whole seeds behind it).

    >>> jobs((0, 1), ("rope", "alibi"))
    [(0, 'rope'), (0, 'alibi'), (1, 'rope'), (1, 'alibi')]
    >>> jobs((1.5,))
    Traceback (most recent call last):
    ...
    ValueError: seeds: each seed must be an integer of at least 0, got 1.5
    """
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, np.integer)) or seed < 0:
            raise ValueError(f"seeds: each seed must be an integer of at least 0, got {seed!r}")
    for scheme in schemes:
        if scheme not in T.TEXT_SCHEMES:
            raise ValueError(f"schemes: {scheme!r} is not one of the text lab's {', '.join(map(repr, T.TEXT_SCHEMES))}")
    return [(int(seed), scheme) for seed in seeds for scheme in schemes]


def sweep(seeds=T.SEEDS, *, workers=1, log=print) -> dict:
    """Every row of :func:`jobs` in the lab's pool, each in a fresh worker, kept as it finishes under :func:`row_stamp`
    in ``runs/partials/`` (:data:`.results.PARTIALS`): ``{(seed, scheme): row}``. A row whose own stamp is not the
    file's (code edited while the run went on) is refused, by its job."""
    if T.HELD_OUT_SEED in set(seeds):
        raise ValueError(f"seeds={list(seeds)!r} holds the held-out seed {T.HELD_OUT_SEED}; held-out rows are not trained here")
    from .pool import resumable
    from .results import PARTIALS

    stamp = row_stamp()
    out = resumable(row, jobs(seeds), name=f"text-{stamp}", folder=PARTIALS, workers=workers, log=log, spawn=True,
                    recycle=True)
    other = {job: r["stamp"] for job, r in out.items() if r.get("stamp") != stamp}
    if other:
        raise ValueError(f"rows computed by other code than stamp {stamp} (edited during the run?): {other}")
    return out


# ---- the loss by position, in bands, block by block (the position claims of notebook 15) -----------------------

#: The bands of a window of :data:`BAND_FACTOR` × L whose loss the position claims read, each ``(a, z)`` in units of
#: L/32 (so 32 is L): the positions a·L/32 … z·L/32 − 1. At L = 64: 2 to 9 characters past L, [L/2, L) (the
#: reference: the last half of the trained length), [L, 3L/2), [2L, 4L) and [L, 8L).
BANDS = ((33, 37), (16, 32), (32, 48), (64, 128), (32, 256))
#: The window the bands are read in: 8L, as ``by_position`` keeps it.
BAND_FACTOR = 8


def band_bits(run, length, a, z, *, n_blocks=N_BLOCKS, block=BLOCK) -> np.ndarray:
    """The mean loss in bits of the positions ``a`` … ``z`` − 1 of each window of ``length``, block by block:
    ``(n_blocks,)``, each block's mean over the windows it holds (:func:`block_bits`' blocks, with an end as well as a
    start). All NaN where the scheme cannot run."""
    length = T._length(length)
    for name, value in (("a", a), ("z", z)):
        if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or not 0 <= value <= length:
            raise ValueError(f"{name} must be a position in 0 … {length}, got {value!r}")
    if not a < z:
        raise ValueError(f"a={a} must be below z={z}: the band a … z − 1 holds no position")
    block, n_blocks = _int("block", block, least=1), _int("n_blocks", n_blocks, least=2)
    if block % length:
        raise ValueError(f"length={length} must divide block={block}, so that a block holds whole windows")
    if run.config.scheme == "learned" and length > run.train_len:
        return np.full(n_blocks, np.nan)
    return _band_blocks(T._window_nll(run, length, None), a, z, n_blocks, block)


def _band_blocks(nll, a, z, n_blocks, block) -> np.ndarray:
    # each block's mean loss over the positions a … z − 1 of the windows it holds; nll is (windows, length)
    if nll.size < n_blocks * block:
        raise ValueError(f"n_blocks={n_blocks} blocks of {block} need {n_blocks * block} targets, the text holds {nll.size}")
    by_block = nll.ravel()[: n_blocks * block].reshape(n_blocks, block)
    position = np.arange(block) % nll.shape[1]
    return by_block[:, (position >= a) & (position < z)].mean(axis=1)


def bands(run) -> dict:
    """``{"a:z": blocks}`` for every band of :data:`BANDS` (positions in characters, at this run's L), read in windows
    of :data:`BAND_FACTOR` × L."""
    L = run.train_len
    if L % 32:
        raise ValueError(f"the bands are set in units of L/32, so L must be a multiple of 32, got {L}")
    unit, length = L // 32, BAND_FACTOR * L
    if run.config.scheme == "learned":  # cannot run past L: every band NaN, as band_bits gives it
        return {f"{a * unit}:{z * unit}": band_bits(run, length, a * unit, z * unit) for a, z in BANDS}
    nll = T._window_nll(run, length, None)  # read once, every band cut from it as band_bits cuts one
    return {f"{a * unit}:{z * unit}": _band_blocks(nll, a * unit, z * unit, N_BLOCKS, BLOCK) for a, z in BANDS}


def band_row(seed, scheme) -> dict:
    """One model's :func:`bands` (the model from the model cache, else trained as :func:`row` trains it), with the
    stamp of the code that computed them (:func:`band_stamp`)."""
    from .results import _clean

    run = T.train(scheme, seed=seed, progress=False)
    return _clean({"scheme": scheme, "seed": seed, "stamp": band_stamp(), "bands": bands(run)})


def band_stamp() -> str:
    """16 hex digits naming the code :func:`band_row` computes by: :func:`row_stamp` and the band functions."""
    import hashlib
    import inspect
    import textwrap

    from .cache import code_text

    parts = [row_stamp(), repr((BANDS, BAND_FACTOR))]
    parts += [code_text(textwrap.dedent(inspect.getsource(f))) for f in (band_bits, _band_blocks, bands, band_row)]
    return hashlib.sha256("\n\0".join(parts).encode()).hexdigest()[:16]


def band_sweep(seeds=T.SEEDS, *, workers=1, log=print) -> dict:
    """:func:`band_row` for every row of :func:`jobs`, kept in ``runs/partials/text-bands-<stamp>.jsonl``."""
    from .pool import resumable
    from .results import PARTIALS

    stamp = band_stamp()
    out = resumable(band_row, jobs(seeds), name=f"text-bands-{stamp}", folder=PARTIALS, workers=workers, log=log,
                    spawn=True, recycle=True)
    other = {job: r["stamp"] for job, r in out.items() if r.get("stamp") != stamp}
    if other:
        raise ValueError(f"band rows computed by other code than stamp {stamp} (edited during the run?): {other}")
    return out


# ---- the stored block file, and the held-out check of the text claims (issue 43) -----------------------------------

#: The sweep's rows and band rows as computed (:func:`sweep`, :func:`band_sweep`): what the text claims read.
BLOCKS_PATH = Path(__file__).with_name("text_blocks.json")
#: The rows of the held-out seeds fixed by text_claims.py's code (:func:`ledger_check`).
BLOCKS_HELD_OUT_PATH = Path(__file__).with_name("text_blocks_heldout.json")
#: How many held-out seeds a check of the text claims draws (issue 43: at least 3 for the text lab).
HELD_OUT_SEEDS = 3
#: Text seeds trained and looked at before the first ledger check of the text claims: the former held-out seed of
#: notebook 15 (:data:`.text.HELD_OUT_SEED`) and notebook 16's held-out RoPE models (its ledger entry's seeds).
FORMER_HELD_OUT = (9072, 1569, 1865, 2984)
#: The claims module whose source hash fixes the held-out seeds.
CLAIMS_SOURCE = Path(__file__).with_name("text_claims.py")


def save_blocks(rows, band_rows, path=BLOCKS_PATH, **about) -> None:
    """Write rows and band rows (each a list of :func:`row` / :func:`band_row` results) as one JSON file, seed by
    seed and scheme by scheme, with the stamps that computed them; ``about`` adds keys (the seeds' hash, say)."""
    rows = sorted(rows, key=lambda r: (r["seed"], T.TEXT_SCHEMES.index(r["scheme"])))
    band_rows = sorted(band_rows, key=lambda r: (r["seed"], T.TEXT_SCHEMES.index(r["scheme"])))
    pairs = [(r["seed"], r["scheme"]) for r in rows]
    if pairs != [(r["seed"], r["scheme"]) for r in band_rows]:
        raise ValueError("rows and band_rows must hold the same (seed, scheme) pairs")
    for kind, stamp, these in (("row", row_stamp(), rows), ("band row", band_stamp(), band_rows)):
        other = sorted({r["stamp"] for r in these} - {stamp})
        if other:
            raise ValueError(f"{kind}s computed by other code (stamps {other}; this code's is {stamp})")
    doc = {"about": "notebook 15's text lab, block by block (posenc_helpers.lab.text_rows): each row's curves as the "
                    "mean loss of each block of 1,024 validation characters; bands: the loss by position in bands",
           "stamp": row_stamp(), "band_stamp": band_stamp(), "seeds": sorted({r["seed"] for r in rows}), **about,
           "rows": rows, "bands": band_rows}
    Path(path).write_text(json.dumps(doc, separators=(",", ":")) + "\n")


def load_blocks(path=BLOCKS_PATH) -> tuple[list, list]:
    """``(rows, band_rows)`` of a file :func:`save_blocks` wrote, for :func:`.text_claims.block_views`."""
    doc = json.loads(Path(path).read_text())
    return doc["rows"], doc["bands"]


def held_out_row(seed, scheme) -> dict:
    """:func:`row` and :func:`band_row` of one model in one job: a held-out seed's row."""
    return {"row": row(seed, scheme), "bands": band_row(seed, scheme)}


def ledger_seeds(ledger_path=None) -> tuple[str, list[int], list[int], list[int]]:
    """The held-out seeds of a check of text_claims.py as its code is now: ``(hash, drawn, exclude, seeds)``, as
    :func:`.results.ledger_seeds` gives them for claims.py; ``exclude`` holds the text sweep's seeds and
    :data:`FORMER_HELD_OUT`. Anyone can recompute them; nothing trains."""
    from . import ledger, stats

    path = ledger.PATH if ledger_path is None else Path(ledger_path)
    digest = stats.source_hash(CLAIMS_SOURCE)
    exclude = sorted(set(T.SEEDS) | set(FORMER_HELD_OUT))
    drawn, skip, seeds = ledger.seeds_for("text_claims", digest, HELD_OUT_SEEDS, exclude=exclude, path=path)
    return digest, drawn, skip, seeds


def held_out_rows(seeds, *, workers=1, log=print) -> tuple[list, list]:
    """:func:`held_out_row` for every scheme of ``seeds``, each kept as it finishes in
    ``runs/partials/text-heldout-<stamp>.jsonl``: ``(rows, band_rows)``. Refuses a sweep seed."""
    from .pool import resumable
    from .results import PARTIALS

    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, (numbers.Integral, np.integer)) or s < 0 for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of non-negative integers, got {seeds!r}")
    if set(seeds) & set(T.SEEDS):
        raise ValueError(f"seeds={seeds!r} holds sweep seeds {sorted(set(seeds) & set(T.SEEDS))}, not held-out ones")
    name = f"text-heldout-{band_stamp()}"
    out = resumable(held_out_row, jobs(seeds), name=name, folder=PARTIALS, workers=workers, log=log, spawn=True,
                    recycle=True)
    rows, bands_ = [out[j]["row"] for j in jobs(seeds)], [out[j]["bands"] for j in jobs(seeds)]
    other = sorted({r["stamp"] for r in rows} - {row_stamp()} | {r["stamp"] for r in bands_} - {band_stamp()})
    if other:
        raise ValueError(f"held-out rows computed by other code (stamps {other}; edited during the run?)")
    return rows, bands_


def _committed_hash() -> str | None:
    # text_claims.py's source hash as the last commit holds it ("" if not committed, None where git cannot say)
    import hashlib
    import subprocess

    from .cache import code_text

    source = CLAIMS_SOURCE.resolve()
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=source.parent, capture_output=True, text=True,
                             timeout=60)
        if top.returncode != 0:
            return None
        rel = source.relative_to(Path(top.stdout.strip()).resolve()).as_posix()
        shown = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=source.parent, capture_output=True, text=True,
                               timeout=60)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return "" if shown.returncode != 0 else hashlib.sha256(code_text(shown.stdout).encode()).hexdigest()


def judge(rows, band_rows) -> tuple[dict, dict]:
    """Every claim of :func:`.text_claims.groups` on the seeds of ``rows``: ``({claim: [k, n]}, {claim: ratio})``,
    the ratio being the claim's margin on its closest seed in SEs (:func:`.claims.margins`). (The text claims hold no
    share or spread, which would be judged over the pooled seeds.)"""
    from . import claims as C
    from . import text_claims as TC

    outcome, ratios = {}, {}
    views, context = TC.block_views(rows, band_rows), TC.context_block_views(rows)
    for group, statements in TC.groups().items():
        table = C.margins(statements, context if "context" in group else views)
        for text, m in table.items():
            outcome[text] = [int(m["k"]), int(m["n"])]
            ratios[text] = None if m["ratio"] is None else float(np.clip(m["ratio"], -999, 999))
    return outcome, ratios


def ledger_check(*, workers=1, log=print, ledger_path=None) -> dict:
    """Check every text claim on held-out seeds fixed by text_claims.py's code, and append the outcome to the
    ledger (``make lab-text-heldout``), as :func:`.results.ledger_check` does for claims.py.

    Refused before anything trains: a stored block file of other row code, text_claims.py other than its last
    commit (the seeds are drawn from committed claims, and trained after them), and a second check at the same hash.
    Then the seeds' rows are trained and kept row by row (:func:`held_out_rows`; a stopped run resumes), written to
    :data:`BLOCKS_HELD_OUT_PATH`, judged (:func:`judge`), and one ledger entry appended. ``log`` hears the seeds and
    each row's progress, never a held-out number.
    """
    from . import ledger

    path = ledger.PATH if ledger_path is None else Path(ledger_path)
    stored = json.loads(BLOCKS_PATH.read_text())
    if (stored.get("stamp"), stored.get("band_stamp")) != (row_stamp(), band_stamp()):
        raise ValueError(f"{BLOCKS_PATH.name} was computed by other code (stamps {stored.get('stamp')!r}, "
                         f"{stored.get('band_stamp')!r}; this code's are {row_stamp()!r}, {band_stamp()!r}): the "
                         "held-out rows are judged beside its rows, so compute it again first")
    digest, drawn, skip, seeds = ledger_seeds(path)
    committed = _committed_hash()
    if committed is None:
        log("text_claims.py: git cannot say here whether these claims were committed before their seeds were trained")
    elif committed != digest:
        raise ValueError(f"text_claims.py is not as its last commit holds it (hash {digest[:12]}… here, "
                         f"{committed[:12] + '…' if committed else 'none'} committed): commit the claims first; their "
                         "held-out seeds are drawn from the committed code and trained after it")
    done = [e for e in ledger.entries("text_claims", path) if e["hash"] == digest]
    if done:
        raise ValueError(f"text_claims.py at {digest[:12]}… was checked on {done[0]['date']} on seeds "
                         f"{done[0]['seeds']}: its held-out seeds have been seen; change the claims instead")
    from . import stats, text_claims  # noqa: F401 - the claims judged are the ones imported now, at this hash

    log(f"text_claims.py at {digest[:12]}…: held-out seeds {seeds} (drawn {drawn} from its hash)")
    rows, band_rows = held_out_rows(seeds, workers=workers, log=log)
    if stats.source_hash(CLAIMS_SOURCE) != digest:
        raise ValueError("text_claims.py changed while its held-out rows were trained: the rows are kept; commit the "
                         "claims the seeds were drawn for back, or change them and run the check of the new hash")
    save_blocks(rows, band_rows, BLOCKS_HELD_OUT_PATH, hash=digest, drawn=drawn)
    outcome, ratios = judge(rows, band_rows)
    entry = ledger.append(
        "text_claims", digest, drawn, outcome, exclude=skip, path=path, ratios=ratios,
        note=f"python -m posenc_helpers.lab.text_rows --held-out: every scheme's row of {len(seeds)} seeds, trained "
             f"after the claims' commit by row code {row_stamp()} and band code {band_stamp()} (the sweep's too); rows "
             f"in posenc_helpers/lab/{BLOCKS_HELD_OUT_PATH.name}. Each claim holds on k of n seeds")
    log(ledger.status("text_claims", digest, path=path))
    return entry


def context_table(rows) -> dict:
    """The context tables of every seed the rows hold, as :func:`.text_context.load` gives its file's: ``seeds``,
    ``schemes``, ``lengths``, ``strides``, ``n_windows``, ``n_chars``, ``defaults`` (the text lab's), and by scheme
    arrays (seeds, blocks of L) of ``whole``, ``last_L``, ``gain``, ``gain_se``, and (seeds, lengths) of ``sliding``
    and ``nonoverlapping`` (each the mean of its blocks: the text's first :data:`.text_context.N_CHARS` characters),
    NaN where the scheme cannot run. The rows keep every seed's table (:func:`row`), so notebook 15 reads all of them,
    not the file's first three."""
    by_seed: dict[int, dict] = {}
    for r in rows:
        by_seed.setdefault(int(r["seed"]), {})[r["scheme"]] = r
    seeds = sorted(by_seed)
    schemes = [s for s in T.TEXT_SCHEMES if all(s in by_seed[seed] for seed in seeds)]
    if not seeds or not schemes:
        raise ValueError("rows: no scheme has a row for every seed the rows hold")
    lengths = [int(n) for n in by_seed[seeds[0]][schemes[0]]["lengths"]]
    L = lengths[0]
    # the models were trained with the text lab's defaults (text.py is in the rows' stamp), at the rows' L
    out = {"seeds": seeds, "schemes": schemes, "lengths": lengths, "strides": C.strides(L),
           "n_windows": C.N_WINDOWS, "n_chars": C.N_CHARS, "defaults": {**T.DEFAULTS, "train_len": L}}
    nan = lambda xs: np.array([np.nan if x is None else x for x in xs], dtype=float)  # noqa: E731
    for name in ("whole", "last_L", "gain", "gain_se"):
        out[name] = {s: np.stack([nan(by_seed[seed][s]["context"][name]) for seed in seeds]) for s in schemes}
    for name, key in (("sliding", "sliding_blocks"), ("nonoverlapping", "nonoverlapping_blocks")):
        out[name] = {s: np.stack([[np.mean(nan(b)) for b in by_seed[seed][s]["context"][key]] for seed in seeds])
                     for s in schemes}
    return out


def main(argv=None) -> None:
    """``python -m posenc_helpers.lab.text_rows [--bands | --save | --held-out] [WORKERS]``: :func:`sweep` (with
    ``--bands``, :func:`band_sweep`) on the text sweep's seeds; with ``--save``, both (resumed from their kept rows)
    written by :func:`save_blocks`; with ``--held-out``, :func:`ledger_check`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with_bands, held_out, save = "--bands" in argv, "--held-out" in argv, "--save" in argv
    argv = [a for a in argv if a not in ("--bands", "--held-out", "--save")]
    if len(argv) > 1 or (argv and not argv[0].isdigit()) or (argv and int(argv[0]) < 1):
        raise SystemExit("usage: python -m posenc_helpers.lab.text_rows [--bands | --save | --held-out] [WORKERS], "
                         f"WORKERS a number of at least 1; got {argv}")
    workers = int(argv[0]) if argv else 1
    log = lambda line: print(line, flush=True)  # noqa: E731
    if held_out:
        ledger_check(workers=workers, log=log)
        return
    if save:
        rows, band_rows = sweep(workers=workers, log=log), band_sweep(workers=workers, log=log)
        save_blocks(list(rows.values()), list(band_rows.values()))
        print(f"wrote {BLOCKS_PATH}: {len(rows)} rows and {len(band_rows)} band rows")
        return
    if with_bands:
        print(f"band stamp {band_stamp()}", flush=True)
        print(f"{len(band_sweep(workers=workers, log=log))} band rows")
        return
    print(f"row stamp {row_stamp()}", flush=True)
    out = sweep(workers=workers, log=log)
    print(f"{len(out)} rows")


if __name__ == "__main__":
    # run the module's own functions (not __main__'s), so the worker processes can find them
    from posenc_helpers.lab.text_rows import main as _main

    _main()
