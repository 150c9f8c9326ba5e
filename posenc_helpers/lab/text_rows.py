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
128k, twice its fine-tune length. s = 16 at 4L reads four times past the fine-tune, further than either. Every
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
another stamp (the row stays in the file). No stored
file is written yet; held-out seeds come later, from the hash of the restated claims (:mod:`.ledger`).
"""

from __future__ import annotations

import math
import numbers
import sys
import time

import numpy as np

from . import text as T
from . import text_context as C

__all__ = ["BLOCK", "N_BLOCKS", "FINETUNES", "PAST_FACTORS", "block_bits", "row", "row_stamp", "jobs", "sweep", "main"]

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


def main(argv=None) -> None:
    """``python -m posenc_helpers.lab.text_rows [WORKERS]``: :func:`sweep` on the text sweep's seeds."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) > 1 or (argv and not argv[0].isdigit()) or (argv and int(argv[0]) < 1):
        raise SystemExit(f"usage: python -m posenc_helpers.lab.text_rows [WORKERS], WORKERS a number of at least 1; got {argv}")
    workers = int(argv[0]) if argv else 1
    print(f"row stamp {row_stamp()}", flush=True)
    out = sweep(workers=workers, log=lambda line: print(line, flush=True))
    print(f"{len(out)} rows")


if __name__ == "__main__":
    # run the module's own functions (not __main__'s), so the worker processes can find them
    from posenc_helpers.lab.text_rows import main as _main

    _main()
