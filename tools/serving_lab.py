"""The lab models notebook 18 reads, trained and shipped: ``python -m tools.serving_lab`` (``make lab-serving``).

Section 10 of notebook 18 reads three RoPE models trained on the lab's passkey task (seeds 0, 1, 2) and one
learned-table model trained on the previous-token task (seed 0), each at the lab's default budget
(``posenc_helpers.lab.train(scheme, task, seed=seed)``). Training them in the notebook took over two minutes of its
run, so they are trained here, in workers of the lab's pool (one XLA thread each, the model cache read first), and
written as float16 to ``posenc_helpers/data/serving_lab/<scheme>_<task>_seed_<seed>.npz``
(:func:`posenc_helpers.streaming.write_float16`), with ``settings.json`` beside them: each file's scheme, task,
seed, Config, bytes, SHA-256 and training losses (to 5 significant digits), the training call, the lab's code
version, the library versions and this machine's fingerprint. :func:`posenc_helpers.serving.load_lab_model` reads
them without JAX; the tests check that a model retrained here is its file (bit for bit after float16 rounding on
the machine that wrote them) and that the files behave as the notebook says.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "posenc_helpers" / "data" / "serving_lab"
COMMAND = "make lab-serving  (python -m tools.serving_lab)"

#: (scheme, task, seed) of every shipped model, in the order notebook 18 reads them.
MODELS = (("rope", "passkey", 0), ("rope", "passkey", 1), ("rope", "passkey", 2), ("learned", "prev", 0))


def train_one(scheme, task, seed):
    """One model as the notebook trained it (the lab's defaults), in a worker: (Config as a dict, steps, flat
    float32 parameters, the training losses to 5 significant digits)."""
    import numpy as np

    from posenc_helpers import lab
    from posenc_helpers.serving import flatten_params

    run = lab.train(scheme, task, seed=seed, progress=False)
    flat = {k: np.asarray(a, np.float32) for k, a in flatten_params(run.params).items()}
    losses = [float(f"{x:.5g}") for x in np.asarray(run.losses, np.float64)]
    return dataclasses.asdict(run.config), run.steps, flat, losses


def export(out: Path = OUT, log=print) -> dict:
    """Train (or read from the model cache) every model of :data:`MODELS`, write the files; the settings."""
    from posenc_helpers.lab import cache, fingerprint
    from posenc_helpers.lab.pool import pool_map
    from posenc_helpers.lab.train import DEFAULTS
    from posenc_helpers.streaming import write_float16

    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for (scheme, task, seed), (config, steps, flat, losses) in zip(MODELS, pool_map(train_one, MODELS), strict=True):
        path = out / f"{scheme}_{task}_seed_{seed}.npz"
        size = write_float16(path, flat)
        files[path.name] = {
            "scheme": scheme,
            "task": task,
            "seed": seed,
            "steps": steps,
            "config": config,
            "bytes": size,
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "losses": losses,
        }
        log(f"wrote {path.relative_to(ROOT)} ({size:,} bytes)")
    settings = {
        "about": "The lab models notebook 18 reads (section 10), float16. Each was trained by "
        "posenc_helpers.lab.train(scheme, task, seed=seed) at the lab's defaults below, in a worker of the "
        "lab's pool; posenc_helpers.serving.load_lab_model reads it.",
        "train": "posenc_helpers.lab.train(scheme, task, seed=seed, progress=False)",
        "defaults": dict(DEFAULTS),
        "dtype": "float16",
        "files": files,
        "code_version": cache.code_version(),
        "fingerprint": fingerprint.fingerprint(worker=True),
        "command": COMMAND,
    }
    (out / "settings.json").write_text(_dumps(settings))
    return settings


def _dumps(settings) -> str:
    # indented JSON with each loss curve on one line (a thousand numbers a model, not a thousand lines)
    curves = {name: info.pop("losses") for name, info in settings["files"].items()}
    for name in curves:
        settings["files"][name]["losses"] = f"@losses:{name}@"
    text = json.dumps(settings, indent=1) + "\n"
    for name, curve in curves.items():
        text = text.replace(f'"@losses:{name}@"', json.dumps(curve))
        settings["files"][name]["losses"] = curve
    return text


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv:
        raise SystemExit("usage: python -m tools.serving_lab")
    export()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
