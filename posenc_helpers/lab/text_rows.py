"""The text lab's rows scored by window (issue 43), for the re-scoring of ``text_results.json`` and the context tables.

The stored text sweep (:mod:`.text`) keeps one number per length: the mean loss over every validation window. Its
claims were weighed with no noise at all. A row of this module keeps, for every bits-per-character number, the standard
error over the validation windows it averages (non-overlapping windows of T characters, 1,551 at L = 64 and 96 at
16L): windows are the units of text the mean is taken over, and the SE says how much another stretch of the same play
could move the mean. Neighbouring windows come from the same scene, so the SE over windows is a floor on the text's
noise, not a ceiling; the seeds add their own spread, which the claims read as the range over seeds.

A RoPE row also holds the fine-tunes with s set for the length they are read at (issue 43 §3): beside the sweep's
s = 4 (:data:`.text.FINETUNE_LEN`, the fine-tune's own length 4L), PI, NTK and YaRN are fine-tuned at 4L with s = 8
and s = 16, as notebook 12 does with s = 8 (Peng et al. 2023, the YaRN paper, fine-tune with the scale of the
target; :func:`.text.finetune` with ``factor``). Every fine-tune is also scored past its own length (``tuned``): the
mean loss over the positions 4L … T − 1 of each window of T = 8L and 16L, so a claim about reading past the
fine-tune's length does not average in the positions it trained on.

The same job computes the model's context table (:func:`.text_context.row`), so the context claims can be read on
every sweep seed, not the first three.

``python -m posenc_helpers.lab.text_rows [WORKERS]`` computes every row of :data:`.text.SEEDS` × :data:`.text.TEXT_SCHEMES`
in the lab's pool, each a fresh worker, and keeps each finished row in ``runs/partials/text-<stamp>.jsonl``
(:func:`row_stamp`), so a stopped run resumes; no stored file is written yet. Held-out seeds come later, from the
hash of the restated claims (:mod:`.ledger`).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from . import text as T

__all__ = ["FINETUNES", "PAST_FACTORS", "window_bits", "mean_se", "scored", "row", "row_stamp", "jobs", "sweep", "main"]

#: The fine-tunes a RoPE row holds, ``{name: (method, s)}``, each FINETUNE_STEPS at FINETUNE_LEN × L: the sweep's four
#: (s = FINETUNE_LEN for the rescalings; "plain" rescales nothing), and PI, NTK and YaRN with s for 8L and for 16L.
FINETUNES = {
    "plain": (None, None), "pi": ("pi", None), "ntk": ("ntk", None), "yarn": ("yarn", None),
    **{f"{m}_s{s}": (m, s) for s in (8, 16) for m in T.METHODS},
}

#: The lengths, as multiples of L, at which a fine-tune is also scored past its own length (positions ≥ 4L only).
PAST_FACTORS = (8, 16)


def window_bits(run, length, *, method=None, start=0) -> np.ndarray:
    """Each validation window's mean loss in bits over its positions ``start`` … ``length`` − 1: one per window.

    The windows are :func:`.text.bits_per_char`'s (non-overlapping, ``length`` characters), so with ``start = 0``
    their mean is ``bits_per_char(run, [length], method=method)``. NaN where the scheme cannot run (the learned
    table past L).
    """
    length = T._length(length)
    if not isinstance(start, int) or isinstance(start, bool) or not 0 <= start < length:
        raise ValueError(f"start must be a position in 0 … {length - 1}, got {start!r}")
    if run.config.scheme == "learned" and length > run.train_len:
        return np.full(1, np.nan)
    return T._window_nll(run, length, method)[:, start:].mean(axis=1)


def mean_se(values) -> tuple[float, float]:
    """The mean of per-window ``values`` and its standard error √(s²/n) over the n windows (NaN, NaN: cannot run).

    >>> mean_se([1.0, 2.0, 3.0])
    (2.0, 0.57735)
    """
    a = np.asarray(values, dtype=float).ravel()
    if np.isnan(a).any():
        return math.nan, math.nan
    if a.size < 2:
        raise ValueError(f"a standard error over windows needs at least 2 windows, got {a.size}")
    return float(a.mean()), round(float(a.std(ddof=1) / math.sqrt(a.size)), 5)


def scored(run, lengths, *, method=None, start=0) -> tuple[list, list]:
    """``(bits, SEs)`` at each length of ``lengths``: :func:`mean_se` of :func:`window_bits`."""
    pairs = [mean_se(window_bits(run, n, method=method, start=start)) for n in lengths]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def row(seed, scheme) -> dict:
    """One model's numbers, with their SEs over windows: a row of the re-scored text sweep (JSON values only).

    ``bits``/``bits_se`` at each length of :data:`.text.FACTORS` × L; ``by_position`` (the loss at each position of
    a window of 8L, as the stored sweep keeps it); ``final_train_bits``; for RoPE ``scaled``/``scaled_se`` (each
    test-time rescaling with s = T / L), ``finetuned``/``finetuned_se`` (each fine-tune of :data:`FINETUNES`, read
    with its own rescaling at every length) and ``tuned``/``tuned_se`` (the same, over the positions past the
    fine-tune's length only, at :data:`PAST_FACTORS` × L); and ``context``, the model's context table
    (:func:`.text_context.row`). Seconds of wall time and the machine are recorded beside.
    """
    from . import text_context
    from .fingerprint import fingerprint

    w0 = time.perf_counter()
    run = T.train(scheme, seed=seed, progress=False)
    L = run.train_len
    lengths = [f * L for f in T.FACTORS]
    out = {"scheme": scheme, "seed": seed, "final_train_bits": float(run.losses[-50:].mean() / math.log(2))}
    out["train_seconds"] = round(time.perf_counter() - w0, 1)
    out["bits"], out["bits_se"] = scored(run, lengths)
    out["by_position"] = T.loss_by_position(run, 8 * L).tolist()
    if scheme == "rope":
        pairs = {m: scored(run, lengths, method=m) for m in T.METHODS}
        out["scaled"], out["scaled_se"] = {m: p[0] for m, p in pairs.items()}, {m: p[1] for m, p in pairs.items()}
        for key in ("finetuned", "finetuned_se", "tuned", "tuned_se"):
            out[key] = {}
        for name, (method, s) in FINETUNES.items():
            ft = T.finetune(run, length=T.FINETUNE_LEN * L, method=method, factor=s, progress=False)
            out["finetuned"][name], out["finetuned_se"][name] = scored(ft, lengths)
            past = [f * L for f in PAST_FACTORS]
            out["tuned"][name], out["tuned_se"][name] = scored(ft, past, start=T.FINETUNE_LEN * L)
    w1 = time.perf_counter()
    context = text_context.row(run)
    out["context"] = {k: context[k] for k in ("blocks", "sliding", "nonoverlapping")}
    out["context_seconds"] = round(time.perf_counter() - w1, 1)
    out["seconds"] = round(time.perf_counter() - w0, 1)
    out["machine"] = fingerprint()  # the processor and libraries that ran it
    return _clean(out)


def _clean(x):
    from .results import _clean as clean

    return clean(x)


def row_stamp() -> str:
    """16 hex digits naming the code a row is computed by: the model cache's code version, the text lab and its
    context module whole, this module's row functions, the rescalings, the settings and the Python version (without
    comments or docstrings). Rows kept under another stamp are never read."""
    import hashlib
    import importlib
    import inspect
    import textwrap
    from pathlib import Path

    from . import text_context
    from .cache import code_text, code_version

    modules = [T, text_context, importlib.import_module("posenc_helpers.scaling")]
    parts = [code_version(), f"python {sys.version_info[0]}.{sys.version_info[1]}"]
    parts += [code_text(Path(m.__file__).read_text(encoding="utf-8")) for m in modules]
    parts += [code_text(textwrap.dedent(inspect.getsource(f))) for f in (window_bits, mean_se, scored, row, _clean)]
    from .results import _clean as results_clean

    parts.append(code_text(textwrap.dedent(inspect.getsource(results_clean))))
    parts.append(repr((FINETUNES, PAST_FACTORS, T.DEFAULTS, T.FACTORS, T.METHODS, T.YARN_BETA, T.FINETUNE_LEN,
                       T.FINETUNE_STEPS)))
    return hashlib.sha256("\n\0".join(parts).encode()).hexdigest()[:16]


def jobs(seeds=T.SEEDS, schemes=T.TEXT_SCHEMES) -> list[tuple]:
    """``(seed, scheme)`` for every row, seed by seed (a stopped run leaves whole seeds behind it).

    >>> jobs((0, 1), ("rope", "alibi"))
    [(0, 'rope'), (0, 'alibi'), (1, 'rope'), (1, 'alibi')]
    """
    return [(int(seed), scheme) for seed in seeds for scheme in schemes]


def sweep(seeds=T.SEEDS, *, workers=1, log=print) -> dict:
    """Every row of :func:`jobs` in the lab's pool, each in a fresh worker, kept as it finishes under :func:`row_stamp`
    in ``runs/partials/`` (:data:`.results.PARTIALS`): ``{(seed, scheme): row}``."""
    if set(seeds) & {T.HELD_OUT_SEED}:
        raise ValueError(f"seeds={list(seeds)!r} holds the held-out seed {T.HELD_OUT_SEED}; held-out rows are not trained here")
    from .pool import resumable
    from .results import PARTIALS

    return resumable(row, jobs(seeds), name=f"text-{row_stamp()}", folder=PARTIALS, workers=workers, log=log,
                     spawn=True, recycle=True)


def main(argv=None) -> None:
    """``python -m posenc_helpers.lab.text_rows [WORKERS]``: :func:`sweep` on the text sweep's seeds."""
    argv = list(sys.argv[1:] if argv is None else argv)
    workers = int(argv[0]) if argv else 1
    print(f"row stamp {row_stamp()}", flush=True)
    out = sweep(workers=workers, log=lambda line: print(line, flush=True))
    print(f"{len(out)} rows")


if __name__ == "__main__":
    # run the module's own functions (not __main__'s), so the worker processes can find them
    from posenc_helpers.lab.text_rows import main as _main

    _main()
