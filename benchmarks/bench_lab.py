"""The extrapolation lab's speed, measured in one run: ``python benchmarks/bench_lab.py``.

For each scheme, one model is trained on the previous-token task at the
notebooks' budget (``lab.DEFAULTS``): the seconds per model include the
compilation, and training tokens per second are counted over the steps after
the first compiled call. Evaluation tokens per second are measured on a
second pass over the four test lengths (32 … 256), after their compilation.
Budgets (issue 10): every model ≤ 40 s including compilation. The machine is
shared, so the numbers vary between runs; the load average is printed with them.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

from posenc_helpers import lab
from posenc_helpers.lab.evaluate import EVAL_BATCH

BUDGET_S = 40.0

#: The module (the package exports a function of the same name, `lab.train`).
T = importlib.import_module("posenc_helpers.lab.train")


def main() -> int:
    d = lab.DEFAULTS
    tokens_per_step = d["batch"] * d["train_len"]
    print(f"cores: {os.cpu_count()}, load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"budget per model: {d['steps']} steps × {d['batch']} × {d['train_len']} tokens")
    print(f"{'scheme':11s} {'model (s)':>10s} {'first call (s)':>15s} {'train tok/s':>12s} {'eval tok/s':>11s}")
    ok = True
    for scheme in lab.SCHEMES:
        first = {}
        original = T._train_chunk

        def timed(*args, _original=original, _first=first, **kw):
            out = _original(*args, **kw)
            if "t" not in _first:
                out[2].block_until_ready()
                _first["t"] = time.perf_counter()
            return out

        T._train_chunk = timed
        start = time.perf_counter()
        try:
            run = lab.train(scheme, "prev", progress=False)
        finally:
            T._train_chunk = original
        total = time.perf_counter() - start
        steady = total - (first["t"] - start)
        train_tps = (d["steps"] - T.STEPS_PER_CALL) * tokens_per_step / steady
        lengths = [32] if scheme == "learned" else list(lab.LENGTHS)
        lab.accuracy(run, lengths)  # compile each length
        start = time.perf_counter()
        lab.accuracy(run, lengths)
        eval_tps = EVAL_BATCH * sum(lengths) / (time.perf_counter() - start)
        ok &= total <= BUDGET_S
        flag = "" if total <= BUDGET_S else f"  OVER {BUDGET_S:.0f} s"
        print(f"{scheme:11s} {total:10.1f} {total - steady:15.1f} {train_tps:12.0f} {eval_tps:11.0f}{flag}")
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"budget: every model <= {BUDGET_S:.0f} s including compilation: {'met' if ok else 'NOT MET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
