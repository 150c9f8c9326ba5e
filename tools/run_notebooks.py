"""Re-execute notebooks in place: ``python -m tools.run_notebooks [PATH ...]``.

``make notebooks`` runs it over every notebook, so stored outputs never go
stale after a helper changes. Each notebook runs in a fresh kernel from the
current environment, with its own folder as the working directory, top to
bottom, exactly as nbval will replay it. Cell timings and widget state are
not stored, so the files stay small and their diffs stay quiet. A code cell
tagged ``remove-output`` runs but stores no output: its output differs on
every machine (notebook 17's run-time estimates), so it is tagged
``nbval-ignore-output`` too.

The lab's model cache starts empty for each invocation (a temporary folder,
shared by the notebooks of that one run, as ``.ci/run`` does for the test
suite), unless ``POSENC_MODEL_CACHE`` is set: a model read back prints
"read from the model cache" where a fresh one shows a progress bar, so a
notebook executed against a warm cache would store an output that CI's
first run, with an empty cache, does not print.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def all_notebooks(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def execute(path: Path, timeout: int = 600) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        store_widget_state=False,
    )
    client.execute()
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
            if "remove-output" in cell.metadata.get("tags", []):
                # a cell whose output differs on every machine (a run-time estimate): run, but store nothing
                cell.outputs = []
    nbformat.write(nb, path)


def coalesce_streams(outputs: list) -> list:
    """Merge consecutive stdout (or stderr) chunks, which the kernel splits at random flush times.

    >>> from nbformat.v4 import new_output
    >>> out = coalesce_streams([new_output("stream", name="stdout", text="a\\n"),
    ...                         new_output("stream", name="stdout", text="b\\n")])
    >>> len(out), out[0]["text"]
    (1, 'a\\nb\\n')
    """
    merged: list = []
    for output in outputs:
        if (output.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == output.get("name")):
            merged[-1]["text"] = merged[-1]["text"] + output["text"]
        else:
            merged.append(output)
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.run_notebooks", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="notebooks to run (default: all under notebooks/)")
    options = parser.parse_args(argv)
    paths = [Path(p) for p in options.paths] or all_notebooks()
    own_cache = "POSENC_MODEL_CACHE" not in os.environ
    if own_cache:  # the kernels inherit it
        os.environ["POSENC_MODEL_CACHE"] = tempfile.mkdtemp(prefix="posenc-model-cache-")
    try:
        return _run(paths)
    finally:
        if own_cache:
            shutil.rmtree(os.environ.pop("POSENC_MODEL_CACHE"), ignore_errors=True)


def _run(paths: list[Path]) -> int:
    failed = []
    for path in paths:
        print(f"executing {path}", flush=True)
        try:
            execute(path)
        except Exception as exc:  # report every failing notebook, then fail
            failed.append(path)
            print(f"FAILED {path}: {type(exc).__name__}: {str(exc)[-2000:]}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} notebook(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
