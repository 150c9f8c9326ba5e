"""The text lab's RoPE models for notebook 16, shipped and streamed: ``python -m tools.inference_lab [--held-out | --ledger]``.

``make lab-inference`` runs it. With the lab's model cache (each model is
trained once, then read back in seconds; see ``posenc_helpers/lab/cache.py``):

1. the RoPE model of every seed of the text sweep (``lab.text.train("rope",
   seed=s)`` for s in ``lab.text.SEEDS``) is written as float16 to
   ``posenc_helpers/data/text_rope/seed_<s>.npz``, with ``settings.json``
   beside them (the training settings, the lab's code version, the versions,
   this command);
2. each is read back from its file and streamed through the rolling cache by
   :func:`posenc_helpers.streaming.seed_row` (numpy, no JAX);
3. each is fine-tuned with ABF (the base raised to 500,000) at 4L for the sweep's
   100 steps (``lab.text.finetune(run, length=256, method="abf")``) and read at
   L … 16L by ``lab.text.bits_per_char``, with the standard error over the
   validation windows;

and ``posenc_helpers/data/inference_results.json`` gets the rows, the settings,
versions, command, wall time and load average. ``--held-out`` does steps 2 and
3 for ``lab.text.HELD_OUT_SEED`` (its weights float16-rounded in memory, never
shipped) and writes ``inference_results_heldout.json``, which only the tests
read; it prints no number, so that whoever runs it does not see the held-out
rows before the tests check the claims on them. ``--ledger`` checks the claims on
held-out seeds derived from the hash of ``posenc_helpers/streaming.py`` and
appends the outcome to the ledger (:func:`ledger_check`, issue 43).
"""

from __future__ import annotations

import os

# one BLAS thread: the numpy forward multiplies small matrices, and on two shared cores OpenBLAS's threads
# contend (measured 10-20x slower under load); set before numpy is imported. XLA's threads are not affected.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from posenc_helpers import streaming  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "posenc_helpers" / "data"
WEIGHTS = DATA / "text_rope"
COMMAND = "make lab-inference  (python -m tools.inference_lab; --held-out for the held-out seed)"


def _versions() -> dict:
    from importlib.metadata import version

    return {"python": platform.python_version(), **{n: version(n) for n in ("jax", "jaxlib", "optax", "numpy")}}


def _train(seed):
    from posenc_helpers.lab import text as T

    return T.train("rope", seed=seed, progress=False)


def _float16(params):
    # the float16 rounding the shipped files apply, kept in memory (the held-out model is not shipped)
    import jax

    return jax.tree_util.tree_map(lambda a: np.asarray(a, np.float16).astype(np.float32), params)


def _abf(run) -> dict:
    """ABF's fine-tune (the sweep's: 100 steps at 4L) read at L … 16L, with the SE over the validation windows."""
    from posenc_helpers.lab import text as T

    lengths = [f * run.train_len for f in T.FACTORS]
    ft = T.finetune(run, length=T.FINETUNE_LEN * run.train_len, method="abf", progress=False)
    bits = T.bits_per_char(ft, lengths)
    # the standard error of each mean: the spread of the non-overlapping windows' means / √(windows)
    se = []
    for n in lengths:
        per_window = T._window_nll(ft, n, None).mean(1)
        se.append(float(per_window.std(ddof=1) / np.sqrt(per_window.size)))
    return {"lengths": lengths, "bits": np.round(bits, 5).tolist(), "se": np.round(se, 5).tolist(),
            "base": T.ABF_BASE, "finetune_len": T.FINETUNE_LEN * run.train_len, "steps": T.FINETUNE_STEPS}


def _row(seed, run, params, log) -> dict:
    t0 = time.perf_counter()
    row = {"seed": seed, **streaming.seed_row(params, heads=run.config.heads, base=run.config.base)}
    t1 = time.perf_counter()
    row["abf"] = _abf(run)
    row["seconds"]["abf"] = round(time.perf_counter() - t1, 1)
    row["seconds"]["row"] = round(time.perf_counter() - t0, 1)
    log(f"seed {seed}: streamed in {row['seconds']['stream']} + {row['seconds']['recompute']} s, "
        f"ABF in {row['seconds']['abf']} s")
    return row


def export(seeds, out=WEIGHTS, log=print) -> dict:
    """Write each seed's RoPE model as float16 and ``settings.json``; returns the settings."""
    import dataclasses

    from posenc_helpers.lab import cache
    from posenc_helpers.lab import text as T

    out.mkdir(parents=True, exist_ok=True)
    files, config = {}, None
    for seed in seeds:
        run = _train(seed)
        path = out / f"seed_{seed}.npz"
        size = streaming.write_params(path, run.params)
        files[path.name] = {"bytes": size, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        config = dataclasses.asdict(run.config)
        log(f"wrote {path.relative_to(ROOT)} ({size:,} bytes)")
    settings = {
        "about": "The text lab's RoPE models (notebook 15's sweep), float16, for notebook 16. Each was trained by "
                 "posenc_helpers.lab.text.train('rope', seed=<seed>) with the settings below; "
                 "posenc_helpers.streaming.load_params reads it.",
        "scheme": "rope", "base": config["base"], "vocab_size": len(T.VOCAB), "vocab": T.VOCAB,
        "defaults": dict(T.DEFAULTS), "config": config, "seeds": list(seeds), "dtype": "float16", "files": files,
        "code_version": cache.code_version(), "versions": _versions(), "command": COMMAND,
    }
    (out / "settings.json").write_text(json.dumps(settings, indent=1) + "\n")
    return settings


def sweep(log=print) -> dict:
    """Export the sweep's models, stream each from its shipped file, fine-tune each with ABF; the results dict."""
    from posenc_helpers.lab import text as T

    w0 = time.perf_counter()
    export(T.SEEDS, log=log)
    streaming.settings.cache_clear()
    rows = [_row(seed, _train(seed), streaming.load_params(seed), log) for seed in T.SEEDS]
    return _table(rows, T.SEEDS, w0, "float16 from posenc_helpers/data/text_rope (as shipped)")


def held_out(log=print) -> dict:
    """The held-out seed's row, its weights float16-rounded in memory as the shipped ones are."""
    from posenc_helpers.lab import text as T

    w0 = time.perf_counter()
    run = _train(T.HELD_OUT_SEED)
    rows = [_row(T.HELD_OUT_SEED, run, _float16(run.params), log)]
    return _table(rows, (T.HELD_OUT_SEED,), w0, "float16-rounded in memory (the held-out model is not shipped)")


#: How many held-out seeds a ledger check of notebook 16's claims draws (issue 43: at least 3 for the text lab).
LEDGER_SEEDS = 3
#: The rows of the ledger's checks, for anyone to recompute the outcome (no notebook reads them).
LEDGER_ROWS = DATA / "inference_results_ledger.json"


def ledger_check(k=LEDGER_SEEDS, log=print, ledger_path=None) -> dict:
    """Check notebook 16's claims (:data:`posenc_helpers.streaming.CLAIMS`) on held-out seeds fixed by their code.

    The seeds come from the SHA-256 of ``posenc_helpers/streaming.py`` (:func:`posenc_helpers.lab.ledger.seeds_for`,
    ``k`` new ones, skipping the text sweep's seeds, its former held-out seed and every seed checked before, and
    every earlier seed again). Each seed's RoPE text model is trained as the sweep trains it, streamed from its
    float16-rounded weights, fine-tuned with ABF, and with no rescaling, PI, NTK and YaRN as the text sweep does
    (:func:`posenc_helpers.lab.text.finetune_bits`). The outcome, each claim's k of n, is appended to the ledger,
    the rows are kept in :data:`LEDGER_ROWS` (one entry per check), and nothing else is printed: no number of a
    held-out row.
    """
    from posenc_helpers.lab import ledger, stats
    from posenc_helpers.lab import text as T

    path = ledger.PATH if ledger_path is None else ledger_path
    digest = stats.source_hash(ROOT / "posenc_helpers" / "streaming.py")
    exclude = sorted(set(T.SEEDS) | {T.HELD_OUT_SEED})
    drawn, skip, seeds = ledger.seeds_for("streaming", digest, k, exclude=exclude, path=path)
    log(f"streaming.py at {digest[:12]}: held-out seeds {seeds} (drawn {drawn})")
    w0 = time.perf_counter()
    rows, views = [], {}
    for seed in seeds:
        run = _train(seed)
        row = _row(seed, run, _float16(run.params), lambda line: log(line.split(":")[0] + ": streamed"))
        row["finetuned"] = {m or "plain": T.finetune_bits(run, m) for m in (None,) + T.METHODS}
        rows.append(row)
        views[seed] = streaming.view_of(row, {**row["finetuned"], "abf": row["abf"]["bits"]})
        log(f"seed {seed}: done")
    outcome = streaming.check(views)
    claims = {text: [int(sum(by_seed.values())), len(by_seed)] for text, by_seed in outcome.items()}
    entry = ledger.append("streaming", digest, drawn, claims, exclude=skip, path=path,
                          note=f"tools/inference_lab.py --ledger: {len(seeds)} RoPE text models, trained after the "
                               "claims' commit; rows in posenc_helpers/data/inference_results_ledger.json")
    table = _table(rows, tuple(seeds), w0, "float16-rounded in memory (held-out models are not shipped)")
    table.update(hash=digest, drawn=drawn)
    kept = json.loads(LEDGER_ROWS.read_text()) if LEDGER_ROWS.is_file() else {"checks": []}
    kept["checks"].append(table)
    LEDGER_ROWS.write_text(dumps(kept))
    log(ledger.status("streaming", digest, path=path))
    return entry


def _table(rows, seeds, w0, weights) -> dict:
    from posenc_helpers.lab import cache

    tokens, offsets = streaming.streams()
    return {
        "about": "StreamingLLM in miniature (notebook 16): each seed's RoPE text model read through a rolling cache "
                 "of L entries in four settings (posenc_helpers.streaming.SETTINGS), bits per character per stream, "
                 "the attention the first tokens get; and its ABF fine-tune's bits at L ... 16L.",
        "settings": {"cache": streaming.CACHE, "sinks": streaming.SINKS, "streams": streaming.STREAMS,
                     "stream_chars": streaming.STREAM_CHARS, "offsets": offsets.tolist(),
                     "scored": f"queries t >= L = {streaming.CACHE}: {tokens.shape[1] - 1 - streaming.CACHE} per stream",
                     "first_weight_queries": "window positions 4 ... L - 1", "dtype": "float32 (numpy)",
                     "weights": weights},
        "seeds": list(seeds),
        "rows": rows,
        "code_version": cache.code_version(),
        "versions": _versions(),
        "command": COMMAND,
        "wall_seconds": round(time.perf_counter() - w0, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
    }


def dumps(table) -> str:
    """JSON with one key per line and every innermost list of numbers on one line (a small file, readable diffs).

    >>> print(dumps({"a": [[1, 2], [3, 4]], "b": "x"}))
    {
     "a": [
      [1, 2],
      [3, 4]
     ],
     "b": "x"
    }
    """
    text = json.dumps(table, indent=1)
    # a list that holds only numbers: "[\n  1,\n  2\n ]" → "[1, 2]"
    return re.sub(r"\[\s*([-+\d.eE]+(?:,\s*[-+\d.eE]+)*)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text) + "\n"


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv not in ([], ["--held-out"], ["--ledger"]):
        raise SystemExit("usage: python -m tools.inference_lab [--held-out | --ledger]")
    if argv == ["--ledger"]:
        ledger_check()
        return 0
    if argv:
        table = held_out(log=lambda line: print(line.split(":")[0] + ": done"))
        path = DATA / "inference_results_heldout.json"
    else:
        table = sweep()
        path = DATA / "inference_results.json"
    path.write_text(dumps(table))
    print(f"wrote {path.relative_to(ROOT)} in {table['wall_seconds']} s, load average {table['load_average']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
