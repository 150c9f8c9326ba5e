"""The lab's persistent JAX compilation cache: where it goes, that it is used, and that it can be turned off.

Each check runs in a fresh interpreter, because the cache is configured once,
when ``posenc_helpers.lab`` is imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import jax
from posenc_helpers import lab
print(repr(lab.compilation_cache_dir()))
print(repr(jax.config.jax_compilation_cache_dir))
if {train}:
    lab.train("alibi", "prev", steps=2, train_len=8, d_model=16, heads=2, layers=1, progress=False)
"""


def probe(env_value, train=False):
    env = {k: v for k, v in os.environ.items() if k != "POSENC_JAX_CACHE"}
    if env_value is not None:
        env["POSENC_JAX_CACHE"] = env_value
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(train=train)], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def test_the_env_var_moves_the_cache_and_compiled_programs_land_there(tmp_path):
    folder = tmp_path / "cache"
    chosen, configured = probe(str(folder), train=True)
    assert chosen == configured == repr(str(folder))
    assert folder.is_dir() and any(folder.iterdir()), "training compiled nothing into the cache"


def test_off_disables_the_cache():
    chosen, configured = probe("off")
    assert chosen == "None" and configured in ("None", "''")


def test_default_is_the_checkouts_ignored_folder():
    chosen, _ = probe(None)
    assert chosen == repr(str(ROOT / ".jax-cache"))
    assert ".jax-cache/" in (ROOT / ".gitignore").read_text().splitlines()
