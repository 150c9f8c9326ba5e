"""The sweep of the schemes built for length generalisation, and of every scheme on retrieval past L.

Two parts, one file each (``length_results.json``, and
``length_results_heldout.json`` for the held-out seeds):

- ``"prev"`` and ``"first"``: the five schemes of :data:`.model.LENGTH_SCHEMES`
  (Ruoss et al.'s randomized positions on sinusoidal, learned, RoPE and ALiBi;
  Li et al.'s FIRE), trained at the lab's budget and scored as the headline
  sweep scores its schemes: accuracy at :data:`.results.SWEEP_LENGTHS` over
  every position, and past L only.
- ``"passkey"``: every scheme (:data:`.model.ALL_SCHEMES`) trained on the
  passkey task and read on :func:`.passkey.passkey_grid`'s depth × length grid;
  each RoPE model also with the test-time rescalings (PI, NTK, YaRN at
  s = T/L).

The seeds are :data:`SEEDS`, the first six of the headline sweep's (a
budget: 23 models a seed), and the stored held-out file holds the lab's
former held-out seeds (:data:`STORED_HELD_OUT`), whose rows for these schemes
and this task no claim was written with; the next held-out seeds come from
length_claims' hash (issue 43). ``make lab-length`` runs both parts
(``python -m posenc_helpers.lab.length_results``, then ``--held-out``);
the held-out run prints no numbers. Notebook 17 reads the files; the seed
test (tests/test_lab_length.py) checks its claims on both.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from . import results
from .evaluate import EVAL_SEQUENCES, evaluate_cells
from .model import ALL_SCHEMES, LENGTH_SCHEMES, RANDOMIZED
from .passkey import DEPTHS, GRID_LENGTHS, far_summary, haystack_scores
from .pool import pool_map
from .recipe import train_authors
from .results import SWEEP_LENGTHS, _clean
from .tasks import PASSKEY_LEN
from .train import DEFAULTS, train

__all__ = [
    "SEEDS", "STORED_HELD_OUT", "TASKS", "PASSKEY_SCHEMES", "METHODS", "PATH", "HELD_OUT_PATH", "jobs", "row", "sweep", "save",
    "load", "main", "RANDOMIZED_RECIPE", "model_of", "settled", "row_stamp", "STORED_SEEDS",
]

#: The seeds of this sweep: the headline sweep's 20 (issue 43 asks for at least 20; the stored file holds the first
#: six, :data:`STORED_SEEDS`, from before).
SEEDS = results.SEEDS

#: The seeds the stored ``length_results.json`` holds, from the code before sequence scoring.
STORED_SEEDS = (0, 1, 2, 3, 4, 5)

#: The seeds the stored ``length_results_heldout.json`` holds: two of the headline sweep's former held-out seeds
#: (:data:`.results.FORMER_HELD_OUT`), until length_claims' own check draws its seeds from its hash (issue 43).
STORED_HELD_OUT = (7482, 8507)

#: Each randomized scheme's training recipe, ``{"batch", "steps", "curriculum"}`` with ``"max_position"`` and
#: ``"optimiser": "authors"`` when its rung changed them, as the randomized pilot's second rule chooses it
#: (``randomized_pilot.choose`` and ``length_options``, tools/randomized_pilot.py; a scheme left out is not settled,
#: and ``--settled`` leaves its rows out). Empty until the second rule has chosen. On 2026-12-07 the first
#: rule (``randomized_pilot.decided``) would have taken the dearest recipe of the first ladder, batch 128 and 6,000
#: steps with the length curriculum, because no cheaper recipe reached the plain ceiling at L on prev on every pilot
#: seed; it was filled in, and taken out again the same day after a lab review showed the ladder does not improve
#: with cost: on prev, from the sweep's recipe to the curriculum at 3,000 steps, rand_alibi fell at L (0.990–0.993
#: to 0.978–0.980), the others stayed or rose a little, and all four fell past L at 8L; each rung changed batch,
#: steps and curriculum at once. The second rule (one factor per rung towards the authors' recipe, their optimiser among
#: them; a ceiling test with the ceiling's own noise; the authors' arm trained whatever it chooses) was committed
#: the same day, and revised after a review, before any row of its new rungs or any 6,000-step row existed.
RANDOMIZED_RECIPE: dict = {}

#: The tasks the five new schemes are swept on, beside "passkey" (which every scheme is swept on).
TASKS = ("prev", "first")

#: Every scheme on the passkey task.
PASSKEY_SCHEMES = ALL_SCHEMES

#: The matched controls: each plain scheme trained on its randomized partner's recipe (``"<plain>_matched"``), so
#: that "randomizing raises (or lowers) it" is not read from a bigger training budget. On the first seeds only
#: (:data:`MATCHED_SEEDS`), on prev, first and passkey; not the learned table, whose rows are its training length
#: (a length curriculum cannot train it).
MATCHED = {"sinusoidal": "rand_sinusoidal", "rope": "rand_rope", "alibi": "rand_alibi"}
MATCHED_SEEDS = SEEDS[:5]

#: Rows the passkey sweep also trains beside its schemes: iRoPE with chunks of L, the ablation the stored file held
#: as "irope", so that a change is not read as the chunk size's when it is the scoring's.
PASSKEY_ABLATIONS = ("irope_w32",)

#: The test-time rescalings every RoPE passkey model is also read with (s = T/L).
METHODS = ("pi", "ntk", "yarn")

PATH = Path(__file__).with_name("length_results.json")
HELD_OUT_PATH = Path(__file__).with_name("length_results_heldout.json")


def jobs(seeds) -> list:
    """Every ``(seed, task, scheme)`` of the sweep for ``seeds``: the new schemes on prev and first, all on passkey.

    >>> len(jobs(SEEDS)), jobs([0])[0], jobs([0])[-1]
    (525, (0, 'prev', 'rand_sinusoidal'), (0, 'passkey', 'alibi_matched'))
    """
    out = []
    for seed in seeds:
        out += [(seed, task, scheme) for task in TASKS for scheme in LENGTH_SCHEMES]
        out += [(seed, "passkey", scheme) for scheme in (*PASSKEY_SCHEMES, *PASSKEY_ABLATIONS)]
        if seed in MATCHED_SEEDS:
            out += [(seed, task, f"{plain}_matched") for task in (*TASKS, "passkey") for plain in MATCHED]
    return out


def model_of(scheme) -> tuple[str, dict]:
    """The scheme a row trains and its training options: iRoPE with the headline sweep's chunks of L/4
    (:func:`.results.model_of`), a randomized scheme on its recipe (:data:`RANDOMIZED_RECIPE`), the rest on the lab's.

    >>> model_of("alibi"), model_of("irope")
    (('alibi', {}), ('irope', {'rope_window': 8, 'floor_scale': 8}))
    """
    if scheme.endswith("_matched") and scheme.removesuffix("_matched") in MATCHED:
        plain = scheme.removesuffix("_matched")
        # the plain scheme on its randomized partner's recipe, but for M, which a plain scheme has no use for
        return plain, {k: v for k, v in model_of(MATCHED[plain])[1].items() if k != "max_position"}
    if scheme in RANDOMIZED:
        if scheme not in RANDOMIZED_RECIPE:
            raise ValueError(f"{scheme!r} has no recipe yet: the randomized pilot decides it (RANDOMIZED_RECIPE)")
        return scheme, dict(RANDOMIZED_RECIPE[scheme])
    if scheme in results.ROWS:
        return results.model_of(scheme)
    return scheme, {}


def settled(scheme) -> bool:
    """Whether a scheme's recipe is final: every scheme but a randomized one the pilot has not decided yet (and the
    matched control of one)."""
    if scheme.endswith("_matched") and scheme.removesuffix("_matched") in MATCHED:
        scheme = MATCHED[scheme.removesuffix("_matched")]
    return scheme not in RANDOMIZED or scheme in RANDOMIZED_RECIPE


def _passkey_numbers(run, seed, **rescaling) -> dict:
    # the grid haystack by haystack: each depth's whole keys with its SE, past L over the far needles only, per token
    scores = haystack_scores(run, seed=seed, **rescaling)
    far = far_summary(scores)
    return {"key": _clean(far["key"]), "key_se": _clean(far["key_se"]), "far": _clean(far["far"]),
            "far_se": _clean(far["far_se"]), "far_depths": far["far_depths"].tolist(),
            "distance": scores["distance"].tolist(), "token": _clean(np.mean(scores["right"], axis=2) / PASSKEY_LEN)}


def row(seed, task, scheme) -> dict:
    """Train one model on its recipe (:func:`model_of`) and score it: one row of the file.

    prev and first: accuracy over all positions and past L at :data:`.results.SWEEP_LENGTHS`, each over
    :data:`.evaluate.EVAL_SEQUENCES` test sequences with its SE over them. Passkey: the depth × length grid on as many
    haystacks (:func:`.passkey.haystack_scores`), each depth's whole keys with its SE over haystacks, and past L
    counted by haystack over the depths whose needle lies more than L before the query (:func:`.passkey.far_summary`);
    a RoPE model also with each test-time rescaling of :data:`METHODS`.
    """
    start = time.perf_counter()
    name, options = model_of(scheme)
    kwargs = dict(options)
    if kwargs.pop("optimiser", "lab") == "authors":  # the randomized pilot's rung of the authors' optimiser
        run = train_authors(name, task, seed=seed, **kwargs)
    else:
        run = train(name, task, seed=seed, progress=False, **kwargs)
    trained = time.perf_counter() - start
    out = {"seed": seed, "task": task, "scheme": scheme, "final_loss": float(run.losses[-1]), "options": options}
    if task == "passkey":
        out.update(_passkey_numbers(run, seed))
        if scheme == "rope":
            out["scaled"] = {m: _passkey_numbers(run, seed, method=m) for m in METHODS}
    else:
        cells = evaluate_cells(run, list(SWEEP_LENGTHS), seed=seed)
        out.update({k: _clean(cells[k]) for k in ("accuracy", "accuracy_se", "beyond", "beyond_se")})
    out["train_seconds"] = round(trained, 1)
    out["eval_seconds"] = round(time.perf_counter() - start - trained, 1)
    from .fingerprint import fingerprint

    out["machine"] = fingerprint()  # rows kept across sessions can come from several machines
    return out


def row_stamp() -> str:
    """16 hex digits that name the code a row is computed by (as :func:`.results.row_stamp` does for the headline
    sweep): the model cache's code version, the scoring, the rescalings and the passkey's scoring, the authors'
    optimiser (:mod:`.recipe`, outside the model cache's code), this module's row functions and settings, and the
    Python version. The partial file of a run is named by it."""
    import hashlib
    import importlib
    import inspect
    import textwrap

    from . import stats
    from .cache import code_text, code_version

    modules = [importlib.import_module(f"{__package__}.{m}") for m in ("evaluate", "passkey", "recipe")]
    modules.append(importlib.import_module("posenc_helpers.scaling"))
    parts = [code_version(), f"python {sys.version_info[0]}.{sys.version_info[1]}"]
    parts += [code_text(Path(m.__file__).read_text(encoding="utf-8")) for m in modules]
    parts += [code_text(textwrap.dedent(inspect.getsource(f)))
              for f in (model_of, _clean, _passkey_numbers, row, stats.per_sequence, stats.summarize)]
    # RANDOMIZED_RECIPE is left out: each row keeps its options, and sweep() reads back only rows trained on the
    # recipe their scheme has now, so the pilot's verdict does not orphan the rows trained before it
    parts.append(repr((SWEEP_LENGTHS, DEPTHS, GRID_LENGTHS, METHODS, results.ROW_OPTIONS, EVAL_SEQUENCES, DEFAULTS,
                       TASKS, PASSKEY_SCHEMES, PASSKEY_ABLATIONS, MATCHED, MATCHED_SEEDS)))
    return hashlib.sha256("\n\0".join(parts).encode()).hexdigest()[:16]


def sweep(seeds, *, workers=None, log=print, partial=None, only_settled=False, spawn=True) -> dict:
    """Every row of :func:`jobs` for ``seeds``, in the lab's pool; the file's dictionary.

    ``partial``: a path the rows finished so far are written to after each one
    (JSON lines), and read back first, so an interrupted sweep resumes where it stopped.
    ``only_settled``: train only the rows whose recipe is final (:func:`settled`). Every row trains in a spawned
    one-thread worker (``spawn``), even with one worker.
    """
    start = time.perf_counter()
    todo = [job for job in jobs(seeds) if settled(job[2]) or not only_settled]
    unsettled = sorted({job[2] for job in todo if not settled(job[2])})
    if unsettled:  # refused before any training, not after the pool has trained the rest
        raise ValueError(f"{', '.join(unsettled)}: no recipe yet (RANDOMIZED_RECIPE, the randomized pilot decides); "
                         "train the other rows with only_settled=True (--settled)")
    rows = []
    if partial is not None and Path(partial).exists():
        from .pool import read_lines

        # a row cut off mid-write is dropped (pool.read_lines). A row is read back only if it was trained on the recipe
        # its scheme has now (the recipe is not in the stamp, so the settled rows survive the pilot's verdict)
        rows = [r for _, r in read_lines(partial) if settled(r["scheme"]) and r.get("options") == model_of(r["scheme"])[1]]
    resumed = len(rows)
    have = {(r["seed"], r["task"], r["scheme"]) for r in rows}
    todo = [job for job in todo if job not in have]

    def done(i, r):
        rows.append(r)
        if partial is not None:
            with open(partial, "a") as f:
                f.write(json.dumps(r) + "\n")
        if log is not None:
            log(f"{len(rows) - resumed}/{len(todo)} seed {r['seed']} {r['task']} {r['scheme']}: "
                f"trained in {r['train_seconds']} s")

    # rows written as each finishes (not in job order), so a run stopped at a session's end keeps all it finished;
    # with spawn (the default) every row gets a fresh worker (pool_map's recycle), without it all run here
    pool_map(row, todo, workers=workers, on_result=done, spawn=spawn, ordered=False, recycle=spawn)
    order = {job: n for n, job in enumerate(jobs(seeds))}
    rows.sort(key=lambda r: order[(r["seed"], r["task"], r["scheme"])])
    machines = []  # every machine that computed a row; the file's fingerprint only when there is one
    for r in rows:
        if r.get("machine") and r["machine"] not in machines:
            machines.append(r["machine"])

    return {
        "about": "the length-generalisation schemes on prev and first, and every scheme on passkey "
        "(regenerate: make lab-length)",
        "seeds": sorted(seeds),
        "train_len": DEFAULTS["train_len"],
        "steps": DEFAULTS["steps"],
        "lengths": list(SWEEP_LENGTHS),
        "depths": list(DEPTHS),
        "grid_lengths": list(GRID_LENGTHS),
        "methods": list(METHODS),
        "seconds_wall": round(time.perf_counter() - start, 1),  # this run's; a resumed run's excludes the earlier rows
        "rows_from_partial": resumed,
        "row_seconds": round(sum(r["train_seconds"] + r["eval_seconds"] for r in rows), 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "workers": workers or os.cpu_count(),
        "stamp": row_stamp(),
        "sequences": EVAL_SEQUENCES,
        "randomized_recipe": RANDOMIZED_RECIPE,
        "machines": machines,
        **({"fingerprint": machines[0]} if len(machines) == 1 else {}),
        "rows": rows,
    }


def save(doc, path) -> None:
    Path(path).write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")


def load(path=PATH) -> dict:
    """The file as ``{"seeds", "lengths", ..., "table": {(seed, task, scheme): row}}`` with arrays.

    >>> doc = load()
    >>> doc["seeds"] == STORED_SEEDS, doc["table"][(0, "passkey", "rope")]["key"].shape    # depths × lengths
    (True, (5, 4))
    """
    doc = json.loads(Path(path).read_text())
    table = {}
    for r in doc["rows"]:
        entry = dict(r)
        for name in ("accuracy", "beyond", "key", "token", "accuracy_se", "beyond_se", "key_se", "far", "far_se"):
            if name in entry:
                entry[name] = np.array(entry[name], dtype=float)
        if "scaled" in entry:
            entry["scaled"] = {m: {k: np.array(x, dtype=float) for k, x in g.items()} for m, g in entry["scaled"].items()}
        table[(r["seed"], r["task"], r["scheme"])] = entry
    out = {k: v for k, v in doc.items() if k != "rows"}
    out["seeds"] = tuple(doc["seeds"])
    out["table"] = table
    return out


def main(argv=None) -> None:
    """``python -m posenc_helpers.lab.length_results [--held-out] [--settled] [WORKERS]``.

    Rows are appended to ``runs/partials/length-<stamp>.jsonl`` (``length-heldout-<stamp>.jsonl``) as they finish,
    committed, so a stopped run resumes where it stopped, in a later session too; the file is written once every
    row is in. ``--settled`` trains only the rows whose recipe is final (:func:`settled`) and writes no file.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--held-out" in argv:
        # issue 43: the held-out seeds of this sweep are drawn from length_claims' hash (ledger), once its claims
        # read the re-scored rows (far needles, SEs over sequences), and trained after that commit
        raise SystemExit("--held-out waits for length_claims to read the re-scored rows; its seeds will come from "
                         "length_claims' hash (ledger.seeds_for), not the former held-out seeds")
    held_out = "--held-out" in argv
    only_settled = "--settled" in argv
    argv = [a for a in argv if a not in ("--held-out", "--settled")]
    workers = int(argv[0]) if argv else None
    seeds, path = (STORED_HELD_OUT, HELD_OUT_PATH) if held_out else (SEEDS, PATH)
    partial = results.PARTIALS / f"length{'-heldout' if held_out else ''}-{row_stamp()}.jsonl"
    partial.parent.mkdir(parents=True, exist_ok=True)
    # the held-out run prints which rows it trained, not their numbers: the seed test reads them first
    doc = sweep(seeds, workers=workers, partial=partial, only_settled=only_settled)
    if only_settled:
        print(f"{len(doc['rows'])} settled rows in {partial}; the file waits for the pilot's recipes")
        return
    save(doc, path)
    print(f"wrote {path} in {doc['seconds_wall']} s")


if __name__ == "__main__":
    from posenc_helpers.lab.length_results import main as _main

    _main()
