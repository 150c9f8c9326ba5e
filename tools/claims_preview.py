"""Preview the headline claims on the re-scored rows kept so far: each claim's k/n and its worst margin in SEs.

``python -m tools.claims_preview`` reads ``runs/partials/results-<stamp>.jsonl`` (the headline sweep's rows kept under
the current code's stamp, :func:`posenc_helpers.lab.results.row_stamp`), takes the seeds whose every row is in, writes
them as a results file in a temporary folder, and prints :func:`posenc_helpers.lab.claims.margins` of each group of
notebooks 12 and 13 on all of them (those groups read the headline entries only; the extra tasks' own group is left
out: its rows are another sweep). A claim whose worst seed
clears its bound by fewer than 4 sequence-level SEs (``ratio`` below 4) must be restated before the rows become the
stored results (issue 43). These are sweep seeds: reading them is how claims are derived; held-out seeds come later
from the restated claims' hash. Nothing is written to the repository.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def kept_table(path=None) -> dict:
    """``{(seed, task, row): entry}`` of the seeds whose every headline row is kept in the partial file."""
    from posenc_helpers.lab import results
    from posenc_helpers.lab.pool import read_lines

    path = Path(path) if path is not None else results.PARTIALS / f"results-{results.row_stamp()}.jsonl"
    if not path.is_file():
        raise SystemExit(f"no rows kept yet under this code's stamp: {path} does not exist")
    rows = {}
    for _, item in read_lines(path):
        seed, task, scheme = item["job"][:3]
        rows[(seed, task, scheme)] = item["result"]
    seeds = sorted({s for s, _, _ in rows})
    whole = [s for s in seeds if all((s, t, r) in rows for t in results.TASKS for r in results.ROWS)]
    table = {}
    for (seed, task, scheme), kept in rows.items():
        if seed in whole:
            table[(seed, task, scheme)] = {
                k: (v if k in ("final_loss", "machine") or k.endswith("_seconds") else results._restore(v))
                for k, v in kept.items()
            }
    return table


def kept_views(path=None) -> dict:
    """``{seed: view}`` (:func:`posenc_helpers.lab.claims.view`) of every whole seed kept, read back through a results
    file written in a temporary folder, as the sweep's file will be read."""
    from posenc_helpers.lab import claims, results

    table = kept_table(path)
    seeds = sorted({s for s, _, _ in table})
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "results.json"
        results.save(table, saved)
        sweep = results.load(saved)
    return {seed: claims.view(sweep, seed) for seed in seeds}


def views_from_command_line(argv, description) -> dict:
    """:func:`kept_views` of the partial file ``--partial`` names (default: the current stamp's), after printing which
    seeds they are; refuses fewer than 3 whole seeds."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--partial", help="the partial file (default: the current stamp's)")
    args = parser.parse_args(argv)
    views = kept_views(args.partial)
    seeds = sorted(views)
    if len(seeds) < 3:
        raise SystemExit(f"{len(seeds)} whole seeds kept ({seeds}); a preview needs at least 3")
    print(f"{len(seeds)} whole seeds kept: {seeds}")
    return views


def main(argv=None) -> None:
    from posenc_helpers.lab import claims

    # the groups of notebooks 12 and 13 read the headline entries only: each seed's view of the kept rows alone
    views = views_from_command_line(argv, __doc__.splitlines()[0])
    for group in ("12", "12 scaling", "12 fine-tune", "13"):
        print(f"\n== {group}")
        print(claims.margin_report(claims.margins(claims.groups()[group], views)))


if __name__ == "__main__":
    main()
