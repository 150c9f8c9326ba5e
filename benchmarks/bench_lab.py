"""The extrapolation lab's speed, measured in one run: ``python benchmarks/bench_lab.py`` (``make bench``).

For each scheme, one model is trained on the previous-token task at the
notebooks' budget (``lab.DEFAULTS``), in this process. Reported per model:

- seconds per model, compilation included;
- compile seconds: the first compiled call minus a steady call of the same
  size (near 0 when JAX's persistent cache, ``lab.compilation_cache_dir()``,
  already holds the program);
- training tokens per second, over the steps after the first call;
- CPU time / wall time while training (about 1 = one core busy);
- the fraction of the machine's float32 matmul rate: the model's matmul
  FLOPs per training token, counted as 3 × the forward pass's (backward ≈ 2 ×
  forward), times tokens per second, divided by the best rate measured below
  for a 1024 × 1024 float32 matmul with numpy and with jax on all cores.

Evaluation tokens per second are measured on a second pass over the four
test lengths (32 … 256), after their compilation. Budget (issue 10): every
model ≤ 40 s including compilation. The machine is shared, so the numbers
vary between runs; the load average is printed with them.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

import numpy as np

from posenc_helpers import lab
from posenc_helpers.lab.evaluate import EVAL_BATCH

BUDGET_S = 40.0

#: The module (the package exports a function of the same name, `lab.train`).
T = importlib.import_module("posenc_helpers.lab.train")


def matmul_rate(n=1024, repeats=5) -> dict:
    """Best float32 FLOP/s of an n × n matmul (2n³ FLOPs) over ``repeats``, with numpy and with jax."""
    import jax
    import jax.numpy as jnp

    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    rates = {}
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    rates["numpy"] = 2 * n**3 / best
    x = jnp.asarray(a)
    f = jax.jit(lambda m: m @ m)
    f(x).block_until_ready()
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        f(x).block_until_ready()
        best = min(best, time.perf_counter() - t)
    rates["jax"] = 2 * n**3 / best
    return rates


def train_flops_per_token(config) -> float:
    """Matmul FLOPs per training token: 3 × forward (2 per multiply-add), full T×T attention as computed."""
    d, t, v, h = config.d_model, config.train_len, config.vocab, config.mlp_ratio * config.d_model
    # per layer: qkv 2·d·3d, out 2·d·d, MLP 2·d·h·2, scores q·k 2·T·d and weights·v 2·T·d
    per_layer = 2 * d * 3 * d + 2 * d * d + 2 * 2 * d * h + 4 * t * d
    return 3 * (config.layers * per_layer + 2 * d * v)


def main() -> int:
    d = lab.DEFAULTS
    tokens_per_step = d["batch"] * d["train_len"]
    print(f"cores: {os.cpu_count()}, load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"compilation cache: {lab.compilation_cache_dir()}")
    rates = matmul_rate()
    peak = max(rates.values())
    print("float32 matmul 1024²: " + ", ".join(f"{k} {r / 1e9:.1f} GFLOP/s" for k, r in rates.items()))
    print(f"budget per model: {d['steps']} steps × {d['batch']} × {d['train_len']} tokens")
    print(
        f"{'scheme':11s} {'model (s)':>10s} {'compile (s)':>12s} {'train tok/s':>12s} {'CPU/wall':>9s}"
        f" {'of matmul':>10s} {'eval tok/s':>11s}"
    )
    ok = True
    for scheme in lab.SCHEMES:
        calls = []
        original = T._train_chunk

        def timed(*args, _original=original, _calls=calls, **kw):
            t = time.perf_counter()
            out = _original(*args, **kw)
            out[2].block_until_ready()
            _calls.append(time.perf_counter() - t)
            return out

        T._train_chunk = timed
        start, cpu = time.perf_counter(), time.process_time()
        try:
            run = lab.train(scheme, "prev", progress=False)
        finally:
            T._train_chunk = original
        total = time.perf_counter() - start
        cpu_ratio = (time.process_time() - cpu) / total
        steady = sum(calls[1:])
        compile_s = calls[0] - float(np.median(calls[1:]))
        train_tps = (d["steps"] - T.STEPS_PER_CALL) * tokens_per_step / steady
        fraction = train_tps * train_flops_per_token(run.config) / peak
        lengths = [32] if scheme == "learned" else list(lab.LENGTHS)
        lab.accuracy(run, lengths)  # compile each length
        t = time.perf_counter()
        lab.accuracy(run, lengths)
        eval_tps = EVAL_BATCH * sum(lengths) / (time.perf_counter() - t)
        ok &= total <= BUDGET_S
        flag = "" if total <= BUDGET_S else f"  OVER {BUDGET_S:.0f} s"
        print(
            f"{scheme:11s} {total:10.1f} {compile_s:12.1f} {train_tps:12.0f} {cpu_ratio:9.2f}"
            f" {fraction:10.1%} {eval_tps:11.0f}{flag}"
        )
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"budget: every model <= {BUDGET_S:.0f} s including compilation: {'met' if ok else 'NOT MET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
