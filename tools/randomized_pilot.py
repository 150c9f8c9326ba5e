"""The randomized-positions pilot (issue 43 §3): which recipe brings each ``rand_`` scheme to its ceiling at L.

The length sweep trains the randomized schemes on a fixed L = 32, batch 32 and 1,000 steps. Ruoss et al.'s
``experiments/example.py`` trains with a length curriculum (``UniformCurriculum(range(1, 41))``), batch 128 and
10,000 steps. This pilot trains each randomized scheme on recipes between the two (the plain scheme it
randomizes on the sweep's recipe only, for the ceiling), and scores each model at L (and past it) on 256 test
sequences with the SE over sequences (:func:`posenc_helpers.lab.evaluate.evaluate_cells`). A recipe is chosen
for the sweep by the rule of :func:`recipe_for`, before the sweep's seeds are trained.

The pilot's seeds (:data:`SEEDS`) are none of the sweeps' and fall outside the range held-out seeds are drawn from
(1,000 to 9,999), so choosing a recipe on them looks at no seed a claim is checked on.

Each finished model appends one JSON line to :data:`PATH` (committed, so a stopped pilot resumes in a later session
where it stopped; a line is never rewritten). Run::

    PYTHONPATH=. .venv/bin/python -m tools.randomized_pilot             # train what is missing (2 workers)
    PYTHONPATH=. .venv/bin/python -m tools.randomized_pilot --verdict   # print the table and the rule's verdict
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

PATH = Path(__file__).resolve().parent.parent / "runs" / "randomized_pilot.jsonl"

#: Seeds no sweep uses and no held-out draw can give (those are 1,000-9,999).
SEEDS = (500, 501, 502)

#: (batch, steps, curriculum): the length sweep's recipe, then the authors' scaled to this model.
RECIPES = ((32, 1000, False), (128, 3000, True), (128, 6000, True))

#: Each randomized scheme and the plain scheme it randomizes (the ceiling it must reach at L).
PAIRS = (("rand_alibi", "alibi"), ("rand_rope", "rope"), ("rand_sinusoidal", "sinusoidal"), ("rand_learned", "learned"))

#: How far below the plain scheme's ceiling at L a randomized model may score and still count as reaching it: one
#: fixed tolerance for every model, so a noisier model gets no looser bar (a bar of k of its own SE would).
TOLERANCE = 0.002

TASKS = ("prev", "first")

#: Lengths scored: L, then 2L, 4L and 8L (past L).
LENGTHS = (32, 64, 128, 256)


def jobs() -> list[tuple]:
    """Every (scheme, task, batch, steps, curriculum, seed) the pilot trains, cheapest recipes first."""
    out = []
    for batch, steps, curriculum in RECIPES:
        for seed in SEEDS:
            for task in TASKS:
                for rand, plain in PAIRS:
                    out.append((rand, task, batch, steps, curriculum, seed))
                    if (batch, steps, curriculum) == RECIPES[0]:
                        out.append((plain, task, batch, steps, curriculum, seed))
    return out


def row(scheme, task, batch, steps, curriculum, seed) -> dict:
    """Train one model and score it: accuracy and its SE over 256 sequences at :data:`LENGTHS`."""
    from posenc_helpers.lab.evaluate import evaluate_cells
    from posenc_helpers.lab.train import train

    start = time.perf_counter()
    run = train(scheme, task, seed=seed, steps=steps, batch=batch, curriculum=curriculum, progress=False)
    cells = evaluate_cells(run, list(LENGTHS), seed=seed)
    return {
        "scheme": scheme, "task": task, "batch": batch, "steps": steps, "curriculum": curriculum, "seed": seed,
        "lengths": list(LENGTHS),
        **{k: [None if np.isnan(x) else round(float(x), 6) for x in cells[k]]
           for k in ("accuracy", "accuracy_se", "beyond", "beyond_se")},
        "final_loss": round(float(run.losses[-1]), 6),
        "seconds": round(time.perf_counter() - start),
    }


def _key(line: dict) -> tuple:
    return (line["scheme"], line["task"], line["batch"], line["steps"], line["curriculum"], line["seed"])


def load(path=PATH) -> list[dict]:
    """The pilot's finished rows, in the order they finished."""
    if not Path(path).exists():
        return []
    return [json.loads(s) for s in Path(path).read_text().splitlines() if s.strip()]


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=PATH.parent)
    return out.stdout.strip()


def run_missing(workers=2) -> None:
    """Train what is missing, one recipe at a time: a scheme whose seeds all reach the ceiling on a cheaper recipe
    (:func:`recipe_for`) is not trained on the dearer ones."""
    from posenc_helpers.lab.pool import pool_map

    PATH.parent.mkdir(parents=True, exist_ok=True)
    commit = _commit()

    def keep(i, entry):
        entry["code_commit"] = commit
        with PATH.open("a") as f:
            f.write(json.dumps(entry) + "\n")
        past = "cannot run" if entry["beyond"][-1] is None else f"{entry['beyond'][-1]:.3f}"
        print(f"{_key(entry)}: at L {entry['accuracy'][0]:.4f} ± {entry['accuracy_se'][0]:.4f}, "
              f"past L at 8L {past}, {entry['seconds']} s", flush=True)

    for recipe in RECIPES:
        done = {_key(x) for x in load()}
        settled = {rand for rand, _ in PAIRS if recipe_for(rand) is not None}
        todo = [j for j in jobs() if j[2:5] == recipe and j not in done and j[0] not in settled]
        print(f"recipe {recipe}: {len(todo)} to train; settled on a cheaper recipe: {sorted(settled)}", flush=True)
        if todo:
            # every row in a spawned one-thread worker, even with one worker, as the sweeps train
            # a fresh worker per model: the pilot's reused worker twice failed to compile ("Cannot allocate memory")
            # with most of the RAM free, and the headline sweep's reused worker held 22,676 memory maps of the
            # 65,530 vm.max_map_count allows after 70 rows; that the maps caused it is likely, not shown
            pool_map(row, todo, workers=workers, on_result=lambda i, entry, todo=todo: keep(i, entry), spawn=True,
                     recycle=True)


#: A randomized model reaches the ceiling at L when its accuracy there is at least the lowest the plain scheme
#: scores at L on the pilot's seeds under the sweep's recipe, less :data:`TOLERANCE`. (The bar was first 2 of the
#: randomized model's own SE; a review found it looser for noisier models. It was changed on 2026-12-07 in the working
#: tree before any curriculum row had finished, and committed (e8d87a9) a minute after the first two had, unread. The
#: sweep's-recipe rows miss the ceiling on prev and reach it on first under either bar, but for rand_alibi on first
#: at seed 500, 0.9932 against 1.0, which only the old bar let pass.)
def verdict(rows=None) -> dict:
    """For each (randomized scheme, task, recipe): how many pilot seeds reach the plain scheme's ceiling at L."""
    rows = load() if rows is None else rows
    plain = {}
    for x in rows:
        if (x["batch"], x["steps"], x["curriculum"]) == RECIPES[0]:
            plain.setdefault((x["scheme"], x["task"]), []).append(x["accuracy"][0])
    out = {}
    for rand, base in PAIRS:
        for task in TASKS:
            ceiling = min(plain.get((base, task), [np.nan]))
            for recipe in RECIPES:
                got = [x for x in rows if (x["scheme"], x["task"]) == (rand, task)
                       and (x["batch"], x["steps"], x["curriculum"]) == recipe]
                reached = sum(x["accuracy"][0] >= ceiling - TOLERANCE for x in got)
                out[(rand, task, recipe)] = {"ceiling": ceiling, "reached": reached, "of": len(got),
                                             "at_L": [x["accuracy"][0] for x in got],
                                             "past_8L": [x["beyond"][-1] for x in got]}
    return out


def recipe_for(scheme, rows=None):
    """The cheapest recipe of :data:`RECIPES` on which every pilot seed of ``scheme`` reaches the ceiling at L on
    every task of :data:`TASKS`; None while no recipe does (or its rows are not all in). If no recipe does once
    every row is in, the length sweep takes the dearest recipe, and its claims say the scheme stays below the
    ceiling at L there. Three of three seeds bound the per-seed failure rate only below 63 % (95 %): a pilot's
    verdict, not a claim. The rule, fixed before the pilot's curriculum rows were trained."""
    table = verdict(rows)
    for recipe in RECIPES:
        if all(table[(scheme, task, recipe)]["reached"] == len(SEEDS) for task in TASKS):
            return recipe
    return None


def decided(scheme, rows=None):
    """The recipe :func:`recipe_for`'s rule gives ``scheme`` once no pilot row still to come can change it, else None.

    Walking :data:`RECIPES` from the cheapest: a recipe on which every seed has reached the ceiling on every task is
    the choice; one with a seed below the ceiling on some task has failed, whatever its other rows say; one with rows
    still to come and no failure yet leaves the choice open. When every cheaper recipe has failed, the rule takes the
    dearest whether or not it reaches the ceiling, so its own rows cannot change the choice."""
    table = verdict(rows)
    for recipe in RECIPES[:-1]:
        cells = [table[(scheme, task, recipe)] for task in TASKS]
        if all(c["reached"] == len(SEEDS) for c in cells):
            return recipe
        if not any(c["reached"] < c["of"] for c in cells):
            return None  # no seed below the ceiling yet, and rows still to come
    return RECIPES[-1]


def print_verdict() -> None:
    for (rand, task, (batch, steps, cur)), v in verdict().items():
        recipe = f"batch {batch}, {steps} steps{', curriculum' if cur else ''}"
        at_l = ", ".join(f"{a:.3f}" for a in v["at_L"])
        past = ", ".join(f"{a:.2f}" for a in v["past_8L"])
        print(f"{rand:16s} {task:6s} {recipe:34s} ceiling {v['ceiling']:.3f}: {v['reached']} of {v['of']} "
              f"reach it; at L [{at_l}]; past L at 8L [{past}]")
    for rand, _ in PAIRS:
        print(f"{rand}: recipe {recipe_for(rand)} (batch, steps, curriculum; None: no recipe reaches the ceiling yet); "
              f"decided: {decided(rand)} (None: rows still to come can change it)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdict", action="store_true", help="print the table and the verdict; train nothing")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.verdict:
        print_verdict()
    else:
        run_missing(workers=args.workers)


if __name__ == "__main__":
    sys.exit(main())
