"""The extrapolation lab: tiny transformers trained short and tested long, one per positional scheme.

One module per idea, read in this order: :mod:`.tasks` (the data),
:mod:`.model` (the transformer and its scheme switch), :mod:`.train`,
:mod:`.evaluate`. Taught in notebooks/12-extrapolation-lab.ipynb and
notebooks/13-trained-heads.ipynb.

>>> from posenc_helpers import lab
>>> lab.SCHEMES
('none', 'learned', 'sinusoidal', 'rope', 'alibi', 't5', 'rope_nope', 'irope')
>>> lab.LENGTH_SCHEMES
('rand_sinusoidal', 'rand_learned', 'rand_rope', 'rand_alibi', 'fire')
>>> lab.TASKS, lab.EXTRA_TASKS
(('prev', 'first'), ('back3', 'recall'))
"""

# The lab needs the `jax` extra (lessons 00-11 do not): say in one line what to install, first for a
# pip user, then for a clone of the repository. `from None`: no chained traceback above that line.
try:
    import jax  # noqa: F401
    import optax  # noqa: F401
    import tqdm  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised by tests/test_no_jax.py in a subprocess
    if isinstance(error, ModuleNotFoundError) and error.name:
        _why = f"{error.name.partition('.')[0]} is missing"
    else:  # installed but failing to import (a version clash, say): keep its reason, on the same line
        _why = " ".join(f"{type(error).__name__}: {error}".split())
    raise ImportError(
        f"posenc_helpers.lab needs JAX, optax and tqdm ({_why}): "
        'run `pip install "posenc_helpers[jax]"`, or `make lab` in a clone of the repository'
    ) from None

import os as _os
from pathlib import Path as _Path

from .evaluate import (
    LENGTHS,
    SCALINGS,
    YARN_LAB,
    YARN_LLAMA,
    accuracy,
    attention,
    attention_by_distance,
    attention_entropy,
    attention_summary,
    attention_to_first,
    evaluate,
    learned_similarity,
    logn_scale,
    rope_pair_usage,
    rope_scaling,
    test_batch,
)
from .model import ALL_SCHEMES, LENGTH_SCHEMES, SCHEME_TITLES, SCHEMES, Config, forward, init
from .shipped import shipped_run
from .tasks import EXTRA_TASKS, PASSKEY_LEN, RECALL_PAIRS, RETRIEVAL_TASKS, TASK_TITLES, TASKS, chance, chance_uniform
from .train import DEFAULTS, FINETUNE, Run, finetune, initial_params, train, train_all

#: The environment variable that moves (or, set to "off", disables) JAX's persistent compilation cache.
CACHE_ENV = "POSENC_JAX_CACHE"


def compilation_cache_dir() -> str | None:
    """The folder of JAX's persistent compilation cache for the lab, or None if it is off.

    ``$POSENC_JAX_CACHE`` if set (``"off"`` or empty: no cache); else
    ``.jax-cache/`` at the repository root when the package runs from a
    checkout (the project's .gitignore lists it); else
    ``~/.cache/posenc_helpers/jax``. Compiled programs are stored there, so a
    second run of a notebook skips most of the compiling; nothing is
    downloaded. Set once, when ``posenc_helpers.lab`` is imported.
    """
    chosen = _os.environ.get(CACHE_ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off") else chosen
    root = _Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "posenc_helpers").is_dir():
        return str(root / ".jax-cache")
    return str(_Path.home() / ".cache" / "posenc_helpers" / "jax")


_cache = compilation_cache_dir()
if _cache is not None:
    jax.config.update("jax_compilation_cache_dir", _cache)
    # the lab's programs compile in 0.1 s to a few seconds: keep every one that takes 0.1 s or more
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)

__all__ = [
    "SCHEMES",
    "LENGTH_SCHEMES",
    "ALL_SCHEMES",
    "SCHEME_TITLES",
    "TASKS",
    "EXTRA_TASKS",
    "RETRIEVAL_TASKS",
    "PASSKEY_LEN",
    "TASK_TITLES",
    "LENGTHS",
    "SCALINGS",
    "YARN_LAB",
    "YARN_LLAMA",
    "RECALL_PAIRS",
    "DEFAULTS",
    "FINETUNE",
    "Config",
    "Run",
    "shipped_run",
    "init",
    "forward",
    "train",
    "train_all",
    "finetune",
    "initial_params",
    "accuracy",
    "evaluate",
    "attention",
    "attention_by_distance",
    "learned_similarity",
    "rope_pair_usage",
    "rope_scaling",
    "logn_scale",
    "attention_entropy",
    "attention_to_first",
    "attention_summary",
    "test_batch",
    "chance",
    "chance_uniform",
    "compilation_cache_dir",
    "CACHE_ENV",
]
