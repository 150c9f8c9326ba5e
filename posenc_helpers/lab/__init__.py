"""The extrapolation lab: tiny transformers trained short and tested long, one per positional scheme.

One module per idea, read in this order: :mod:`.tasks` (the data),
:mod:`.model` (the transformer and its scheme switch), :mod:`.train`,
:mod:`.evaluate`. Taught in notebooks/12-extrapolation-lab.ipynb and
notebooks/13-trained-heads.ipynb.

>>> from posenc_helpers import lab
>>> lab.SCHEMES
('none', 'learned', 'sinusoidal', 'rope', 'alibi')
>>> lab.TASKS, lab.EXTRA_TASKS
(('prev', 'first'), ('back3', 'recall'))
"""

# The lab needs the `jax` extra (lessons 00-11 do not): say in one line what to install.
try:
    import jax  # noqa: F401
    import optax  # noqa: F401
    import tqdm  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised by tests/test_no_jax.py in a subprocess
    raise ImportError(
        f"posenc_helpers.lab needs JAX, optax and tqdm ({error.name or 'one of them'} is missing): "
        "run `make lab`, or `pip install 'posenc_helpers[jax]'`"
    ) from error

from .evaluate import (
    LENGTHS,
    SCALINGS,
    accuracy,
    attention,
    attention_by_distance,
    evaluate,
    learned_similarity,
    rope_pair_usage,
    rope_scaling,
    test_batch,
)
from .model import SCHEME_TITLES, SCHEMES, Config, forward, init
from .tasks import EXTRA_TASKS, TASK_TITLES, TASKS, chance
from .train import DEFAULTS, FINETUNE, Run, finetune, initial_params, train

__all__ = [
    "SCHEMES",
    "SCHEME_TITLES",
    "TASKS",
    "EXTRA_TASKS",
    "TASK_TITLES",
    "LENGTHS",
    "SCALINGS",
    "DEFAULTS",
    "FINETUNE",
    "Config",
    "Run",
    "init",
    "forward",
    "train",
    "finetune",
    "initial_params",
    "accuracy",
    "evaluate",
    "attention",
    "attention_by_distance",
    "learned_similarity",
    "rope_pair_usage",
    "rope_scaling",
    "test_batch",
    "chance",
]
