"""posenc_helpers: the tested math behind the positional-encoding notebooks.

>>> from posenc_helpers import sinusoidal
>>> sinusoidal(2, 4).round(4)
array([ 0.9093, -0.4161,  0.02  ,  0.9998])
"""

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
