"""posenc_helpers: the tested math behind the positional-encoding notebooks.

>>> from posenc_helpers import sinusoidal
>>> sinusoidal(2, 4).round(4)
array([ 0.9093, -0.4161,  0.02  ,  0.9998])

``__version__`` is the installed distribution's version, which pyproject.toml
sets (the one place the version is written).
"""

from importlib import metadata as _metadata

from .conventions import (
    half_split_to_interleaved,
    interleaved_to_half_split,
    rope_complex,
    rope_half_split,
    sinusoidal_concat,
)
from .core import (
    alibi_bias,
    alibi_slopes,
    frequencies,
    rope,
    rope_score,
    shift_matrix,
    sinusoidal,
    wavelengths,
)
from .scaling import (
    base_for_wavelength,
    ntk_base,
    scaled_frequencies,
    yarn_attention_factor,
    yarn_ramp,
)

try:
    __version__ = _metadata.version("posenc_helpers")
except _metadata.PackageNotFoundError:  # pragma: no cover - imported from a source tree never installed
    __version__ = "0+unknown"

__all__ = [
    "alibi_bias",
    "alibi_slopes",
    "frequencies",
    "rope",
    "rope_score",
    "shift_matrix",
    "sinusoidal",
    "wavelengths",
    "half_split_to_interleaved",
    "interleaved_to_half_split",
    "rope_complex",
    "rope_half_split",
    "sinusoidal_concat",
    "base_for_wavelength",
    "ntk_base",
    "scaled_frequencies",
    "yarn_attention_factor",
    "yarn_ramp",
]
