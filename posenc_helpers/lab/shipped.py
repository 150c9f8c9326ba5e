"""The lab models the package ships (notebook 18), as :class:`.train.Run` objects the lab's own scorers take.

:func:`posenc_helpers.serving.load_lab_model` reads a shipped model's float16 file as numpy arrays, with no JAX;
:func:`shipped_run` wraps the same arrays with the :class:`.model.Config` and training settings its
``settings.json`` records, so that :func:`.passkey.passkey_grid`, :func:`.evaluate.evaluate` and
:func:`.model.forward` read it as they read a model :func:`.train.train` returned, without training it.
``make lab-serving`` (tools/serving_lab.py) writes the files.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..serving import lab_model_file, lab_model_settings, load_lab_model
from .model import Config
from .train import Run

__all__ = ["shipped_run"]


def shipped_run(scheme, task, seed) -> Run:
    """The shipped model (``scheme``, ``task``, ``seed``) as a Run: float16 weights as float32, its Config.

    ``losses`` is the training curve as ``settings.json`` records it (one loss per step, to 5 significant digits).
    What is not shipped is refused by name, as :func:`posenc_helpers.serving.load_lab_model` refuses it.

    >>> run = shipped_run("rope", "passkey", 1)
    >>> run.config.scheme, run.train_len, run.steps, run.losses.shape, run.params["embed"].dtype
    ('rope', 32, 1000, (1000,), dtype('float32'))
    """
    params = load_lab_model(scheme, task, seed)  # refuses what is not shipped, and a seed that is not an integer
    seed = int(seed)
    info = lab_model_settings()["files"][lab_model_file(scheme, task, seed)]
    config = Config(**info["config"])
    as_jax = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), params)
    losses = np.asarray(info["losses"], np.float64)
    return Run(scheme, task, config.train_len, as_jax, losses, config, seed, info["steps"])

