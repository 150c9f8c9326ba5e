"""A tiny causal transformer in plain JAX, with one switch for the positional scheme.

Read it top to bottom, in the order the data meets it: the config, the
parameters, the embedding (where "learned" and "sinusoidal" add positions),
attention (where "rope" rotates q and k and "alibi" and "t5" bias the logits),
the MLP, a pre-norm block, the model, and the loss. ``"none"`` (NoPE) adds no
position anywhere: the causal mask alone tells a token how many came before it.

The scheme enters in three small functions, each built on the course's own
helpers, in one line of :func:`attention` for the query temperature of
``"rope_nope"`` and ``"irope"`` (its factor from :func:`query_temperature`), and
in one more for the mask of ``"irope"``'s RoPE layers (:func:`rope_layer_mask`):

==================  ====================================================  ==========================
scheme              where it enters                                       the course's helper
==================  ====================================================  ==========================
``"learned"``       :func:`add_positions`: row t of a trained table        (the table is a parameter)
``"sinusoidal"``    :func:`add_positions`: PE(t) added to the embedding    ``sinusoidal``
``"rope"``          :func:`rotate_qk`: q and k turned by t·ω_k, every      ``frequencies`` (or
                    layer                                                 ``scaled_frequencies``)
``"alibi"``         :func:`bias_logits`: −slope_h·(i − j) on the logits    ``alibi_bias``
``"t5"``            :func:`bias_logits`: a learned scalar per (bucket,     ``t5_bucket``
                    head), one table shared by every layer
``"rope_nope"``     :func:`rotate_qk` on the RoPE layers only; the NoPE    ``frequencies``,
                    layers (``nope_layers``) get nothing, or with          ``llama4_query_temperature``
                    ``query_temperature`` Llama 4's query temperature;
                    every layer attends with the full causal mask
``"irope"``         as ``"rope_nope"``, with the query temperature on,     ``frequencies``,
                    and the RoPE layers attend within chunks of L          ``llama4_query_temperature``
                    (:func:`rope_layer_mask`), as Llama 4 ships it
``"none"``          nowhere                                                —
==================  ====================================================  ==========================

Five more schemes were built for length generalisation (:data:`LENGTH_SCHEMES`):

========================  ==============================================  ===========================
scheme                    where it enters                                 the course's helper
========================  ==============================================  ===========================
``"rand_sinusoidal"``     :func:`add_positions`: PE(p_t) at positions      ``sinusoidal``
                          p_0 < p_1 < … drawn from 0 … M − 1
``"rand_learned"``        :func:`add_positions`: row p_t of a table of M   (the table is a parameter)
                          rows
``"rand_rope"``           :func:`rotate_qk`: q and k turned by p_t·ω_k     ``frequencies``
``"rand_alibi"``          :func:`bias_logits`: −slope_h·p_(i−j), a drawn   ``alibi_slopes``
                          distance for each offset i − j
``"fire"``                :func:`fire_bias`: a small MLP of the distance,  —
                          log-scaled and divided by the query's position
========================  ==============================================  ===========================

The four ``rand_`` schemes are Ruoss et al. (2023)'s randomized positions
(:func:`draw_positions`): the positions are drawn again in training and at
test, one set per sequence (the authors' code draws one set per forward
call, shared by the batch; see :class:`Config`). ``"fire"`` is Li et al.
(2023)'s FIRE (:func:`fire_bias`).

Taught in notebooks/12-extrapolation-lab.ipynb and 13-trained-heads.ipynb.

>>> import jax
>>> config = Config(scheme="rope")
>>> params = init(jax.random.key(0), config)
>>> tokens = jax.numpy.zeros((2, 10), dtype="int32")
>>> forward(params, tokens, config).shape      # (batch, T, vocab)
(2, 10, 16)
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..configs import llama4_query_temperature
from ..core import alibi_bias, alibi_slopes, frequencies, sinusoidal
from ..relative import t5_bucket

__all__ = [
    "SCHEMES",
    "LENGTH_SCHEMES",
    "ALL_SCHEMES",
    "RANDOMIZED",
    "RANDOM_RANGE",
    "FIRE_WIDTH",
    "FIRE_C",
    "SCHEME_TITLES",
    "LLAMA4_ATTN_SCALE",
    "T5_BUCKETS",
    "Config",
    "check_scheme",
    "init",
    "count_params",
    "add_positions",
    "rotate_qk",
    "t5_bucket_grid",
    "bias_logits",
    "query_temperature",
    "ROPE_MASKS",
    "rope_layer_mask",
    "draw_positions",
    "fire_bias",
    "FIRE_EPS",
    "attention",
    "forward",
    "loss_fn",
]

#: Every positional scheme the model knows.
SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi", "t5", "rope_nope", "irope")

#: The schemes built for length generalisation: Ruoss et al.'s randomized positions on four schemes, and FIRE.
LENGTH_SCHEMES = ("rand_sinusoidal", "rand_learned", "rand_rope", "rand_alibi", "fire")

#: Every scheme :func:`check_scheme` accepts.
ALL_SCHEMES = SCHEMES + LENGTH_SCHEMES

#: Each randomized scheme, and the scheme it randomizes.
RANDOMIZED = {"rand_sinusoidal": "sinusoidal", "rand_learned": "learned", "rand_rope": "rope", "rand_alibi": "alibi"}

#: M, the range the randomized schemes draw positions from (0 … M − 1) by default: the ``noise_max_length``
#: of the authors' example (google-deepmind/randomized_positional_encodings, experiments/example.py), 2,048.
#: It must be at least the longest sequence the model reads; the lab tests up to 8L = 256.
RANDOM_RANGE = 2048

#: FIRE's MLP width and the starting value of its log scale c: the defaults of the FIRE module in
#: mcleish7/arithmetic (cramming/architectures/embeddings.py, ``mlp_width=32, init_c=0.1``), which cites the paper.
FIRE_WIDTH = 32
FIRE_C = 0.1

#: How each scheme is labelled in figures and tables.
SCHEME_TITLES = {
    "none": "NoPE",
    "learned": "learned table",
    "sinusoidal": "sinusoidal",
    "rope": "RoPE",
    "alibi": "ALiBi",
    "t5": "T5 bias",
    "rope_nope": "RoPE + NoPE",
    "irope": "iRoPE",
    "rand_sinusoidal": "sinusoidal, randomized",
    "rand_learned": "learned, randomized",
    "rand_rope": "RoPE, randomized",
    "rand_alibi": "ALiBi, randomized",
    "fire": "FIRE",
}

#: The masks ``"irope"``'s RoPE layers can attend with (:func:`rope_layer_mask`): Llama 4's chunks, a
#: sliding window, or the full causal mask (which makes it ``"rope_nope"`` with the query temperature).
ROPE_MASKS = ("chunked", "sliding", "full")

#: Llama 4's strength of the query temperature on its NoPE layers (``attn_scale``, transformers 5's
#: models/llama4/configuration_llama4.py default, and Llama-4-Scout-17B-16E's config.json).
LLAMA4_ATTN_SCALE = 0.1

#: The number of T5 buckets the lab uses by default (T5's own is 32, for max_distance 128).
T5_BUCKETS = 16

# the fields that belong to some schemes only: left at None with every other scheme
_HYBRIDS = ("rope_nope", "irope")
_SCHEME_FIELDS = {
    "t5_buckets": ("t5",), "t5_max_distance": ("t5",),
    "nope_layers": _HYBRIDS, "query_temperature": _HYBRIDS, "floor_scale": _HYBRIDS, "attn_scale": _HYBRIDS,
    "rope_mask": ("irope",), "rope_window": ("irope",),
    "max_position": tuple(RANDOMIZED),
    "fire_width": ("fire",), "fire_c": ("fire",), "fire_threshold": ("fire",),
}


def check_scheme(scheme) -> str:
    """Return ``scheme`` if it is known, else a ValueError listing the valid names.

    >>> check_scheme("xpos")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: scheme must be one of 'none', 'learned', ..., 'rand_alibi', 'fire', got 'xpos'
    """
    if not isinstance(scheme, str) or scheme not in ALL_SCHEMES:
        names = ", ".join(repr(s) for s in ALL_SCHEMES)
        raise ValueError(f"scheme must be one of {names}, got {scheme!r}")
    return scheme


@dataclasses.dataclass(frozen=True)
class Config:
    """Everything that fixes the model's shape. Frozen, so ``jax.jit`` can take it as a static argument.

    The fields after ``pos_std`` belong to one scheme each and stay None (or
    False) with every other scheme (a ValueError names the field otherwise);
    with their own scheme, None is replaced by the default below when the
    Config is made, so a Config always shows the settings it runs with.

    ``"t5"``: T5's learned relative bias, bucket = ``t5_bucket(j − i,
    bidirectional=False, num_buckets=t5_buckets, max_distance=t5_max_distance)``
    for query i and key j (a causal decoder: unidirectional). T5 itself uses 32
    buckets and max_distance 128 (transformers' models/t5/configuration_t5.py);
    at L = 32 the distances 0 … 31 seen in training would then reach only
    buckets 0 … 21, and the other 10 would never train. The lab's defaults,
    16 buckets and max_distance = L, are reached by every bucket: 0 … 7 hold
    distances 0 … 7 exactly, and the last (15) holds distances 27 … 31 in
    training and every distance of 27 or more past L, so past L every distance
    lands in a trained bucket.

    >>> c = Config(scheme="t5")
    >>> c.t5_buckets, c.t5_max_distance           # 16 buckets, max_distance = train_len
    (16, 32)
    >>> [int(t5_bucket(-d, bidirectional=False, num_buckets=16, max_distance=32)) for d in (7, 8, 26, 27, 31, 500)]
    [7, 8, 14, 15, 15, 15]

    ``"rope_nope"``: Llama 4's mix of RoPE and NoPE layers, without the
    chunked attention Llama 4 gives its RoPE layers (``attention_chunk_size``):
    here every layer attends with the full causal mask, so this is an ablation
    of iRoPE, not iRoPE. The layers in
    ``nope_layers`` have no positional encoding, the others RoPE. Llama 4
    makes every 4th layer NoPE (transformers' configuration_llama4.py:
    ``no_rope_layer_interval = 4``, layer i uses RoPE iff (i + 1) % 4 ≠ 0, so
    layers 3, 7, 11, …); the lab's default is the last layer of its 2, the
    closest a 2-layer model gets. ``query_temperature=True`` multiplies the
    queries of the NoPE layers by 1 + attn_scale·ln(1 + ⌊(t + 1)/floor_scale⌋)
    at position t (the course's ``llama4_query_temperature``), in training and
    at test, as transformers' ``Llama4TextAttention`` does. Llama 4 Scout's
    floor_scale is 8,192, the same number as its ``attention_chunk_size`` and
    its ``rope_scaling.original_max_position_embeddings``: the temperature
    starts where its original context length ends. The lab's default keeps that
    meaning, floor_scale = train_len, so the factor is exactly 1 for positions
    0 … L − 2 and grows from position L − 1 on; ``attn_scale`` defaults to
    Llama 4's 0.1.

    >>> c = Config(scheme="rope_nope", query_temperature=True)
    >>> c.nope_layers, c.floor_scale, c.attn_scale
    ((1,), 32.0, 0.1)
    >>> Config(scheme="rope", nope_layers=(1,))
    Traceback (most recent call last):
    ...
    ValueError: nope_layers is a setting of scheme 'rope_nope' or 'irope' only, got nope_layers=(1,) with scheme 'rope'

    ``"irope"``: Llama 4's design as it ships (iRoPE): the layers of
    ``"rope_nope"``, the query temperature on by default, and the RoPE
    layers attending with ``rope_mask``: ``"chunked"`` (default), query i
    sees key j ≤ i only when ⌊i/W⌋ = ⌊j/W⌋, transformers' ``chunked_overlay``
    (masking_utils.py) that Llama 4 puts on every RoPE layer when
    ``attention_chunk_size`` is set (configuration_llama4.py: layer_types
    ``"chunked_attention"`` for the RoPE layers, ``"full_attention"`` for the
    NoPE ones); ``"sliding"``, key j only when i − j < W
    (``sliding_window_overlay``); or ``"full"``. W = ``rope_window``, by
    default L, as Llama 4 Scout's chunk of 8,192 equals its
    ``original_max_position_embeddings``. The NoPE layers always attend with
    the full causal mask. In training at L every window of W = L holds the
    whole sequence, so the mask only acts past L.

    >>> c = Config(scheme="irope")
    >>> c.nope_layers, c.query_temperature, c.rope_mask, c.rope_window
    ((1,), True, 'chunked', 32)

    ``"rand_sinusoidal"``, ``"rand_learned"``, ``"rand_rope"``,
    ``"rand_alibi"``: Ruoss et al. (2023), "Randomized Positional Encodings
    Boost Length Generalization of Transformers". Each sequence of T tokens
    reads the positions p_0 < … < p_(T−1), a sorted sample without
    replacement from 0 … M − 1 (:func:`draw_positions`), M =
    ``max_position`` (default :data:`RANDOM_RANGE`, 2,048, the authors'
    example), drawn again for every batch in training and at test: the
    authors' code draws in every call of the model (``hk.next_rng_key()``
    in models/positional_encodings.py), and their evaluation
    (experiments/range_evaluation.py) passes a fresh key to every call. The
    randomized scheme is then the plain one at positions p instead of
    0 … T − 1: PE(p_t), row p_t of a table of M rows (so the table has M
    rows, not L), RoPE turned by p_t·ω_k. ALiBi is randomized as the
    authors' ``compute_noisy_alibi_encodings_biases`` does it: the distance
    an offset i − j = δ stands for is drawn, 0 for δ = 0 and a sorted sample
    of 1 … M − 1 for δ = 1 … T − 1, and the bias is −slope_h times it. Two
    differences from their code, both the lab's: the draw is made per
    sequence (theirs is one per call, shared by the batch), and the model
    is a causal decoder, so ALiBi's other side (the keys after the query,
    theirs offset by 0.5 to tell left from right) is masked out.

    >>> c = Config(scheme="rand_learned")
    >>> c.max_position
    2048
    >>> Config(scheme="rand_rope", max_position=16)
    Traceback (most recent call last):
    ...
    ValueError: max_position must be at least train_len = 32 (a training sequence draws 32 distinct positions), got 16

    ``"fire"``: Li et al. (2023), "Functional Interpolation for Relative
    Positions Improves Long Context Transformers". Each layer adds to
    head h's logit for query i and key j ≤ i the bias
    f_θ(ψ(i − j) / ψ(max(τ, i)))_h, with ψ(x) = ln(1 + c·x) (c > 0 learned,
    starting at ``fire_c``), τ = |m|·τ_0 a threshold with the multiplier m
    learned (starting at 1) and τ_0 = ``fire_threshold``, and f_θ an MLP
    1 → ``fire_width`` (ReLU) → heads (:func:`fire_bias`). Dividing by ψ of
    the query's own position is the progressive interpolation: the input to
    f stays in [0, 1] at any length, so a long sequence is read in the range
    training saw. The threshold keeps short prefixes from being stretched:
    below τ the divisor is fixed. The reference module (mcleish7/arithmetic,
    cramming/architectures/embeddings.py, which cites the paper) starts
    τ_0 at 512 with c = 0.1 and width 32; the lab keeps c and the width and
    starts τ_0 at L/4 = 8 (a choice of the lab's: a threshold of L or more would
    leave the division unused in training), so queries 8 … 31 meet the
    interpolation in training already. Each layer has its own f, c and m.

    >>> c = Config(scheme="fire")
    >>> c.fire_width, c.fire_c, c.fire_threshold
    (32, 0.1, 8.0)
    """

    scheme: str = "rope"  # one of SCHEMES
    vocab: int = 16  # token ids 0 … vocab − 1
    d_model: int = 64  # width of the residual stream
    heads: int = 4  # attention heads per layer
    layers: int = 2  # transformer blocks
    mlp_ratio: int = 4  # MLP hidden width = mlp_ratio · d_model
    train_len: int = 32  # the length of every training sequence (and of the learned table)
    base: float = 10000.0  # RoPE's and the sinusoids' frequency base
    pos_std: float = 0.02  # "learned": the table starts N(0, pos_std²), GPT-2's initializer_range
    t5_buckets: int | None = None  # "t5": number of buckets B (None → T5_BUCKETS = 16)
    t5_max_distance: int | None = None  # "t5": T5's max_distance M (None → train_len)
    nope_layers: tuple | None = None  # "rope_nope", "irope": the layers without RoPE (None → the last layer)
    # "rope_nope", "irope": Llama 4's query temperature on the NoPE layers (None → off for "rope_nope", on for "irope")
    query_temperature: bool | None = None
    floor_scale: float | None = None  # "rope_nope", "irope": the temperature's floor_scale (None → train_len)
    attn_scale: float | None = None  # "rope_nope", "irope": the temperature's strength (None → Llama 4's 0.1)
    rope_mask: str | None = None  # "irope": the RoPE layers' mask, one of ROPE_MASKS (None → "chunked")
    rope_window: int | None = None  # "irope": the chunk or window W of the RoPE layers (None → train_len)
    max_position: int | None = None  # "rand_*": positions are drawn from 0 … max_position − 1 (None → RANDOM_RANGE)
    fire_width: int | None = None  # "fire": the MLP's hidden width (None → FIRE_WIDTH = 32)
    fire_c: float | None = None  # "fire": the starting value of the log scale c (None → FIRE_C = 0.1)
    fire_threshold: float | None = None  # "fire": the threshold's starting value τ_0 (None → train_len / 4)

    def __post_init__(self):
        check_scheme(self.scheme)
        for name in ("vocab", "d_model", "heads", "layers", "mlp_ratio", "train_len"):
            v.positive_int(name, getattr(self, name))
        v.base_value(self.base)
        if v.real_scalar("pos_std", self.pos_std) <= 0:
            raise ValueError(f"pos_std must be positive, got {self.pos_std!r}")
        if self.d_model % self.heads:
            raise ValueError(f"d_model must be a multiple of heads, got d_model={self.d_model} and heads={self.heads}")
        if self.scheme in ("rope", "rand_rope") + _HYBRIDS and self.head_dim % 2:
            raise ValueError(
                f"RoPE rotates pairs, so the head dimension d_model/heads must be even, "
                f"got {self.d_model}/{self.heads} = {self.head_dim}"
            )
        if self.scheme in ("sinusoidal", "rand_sinusoidal") and self.d_model % 2:
            raise ValueError(f"the sinusoidal table needs an even d_model, got {self.d_model}")
        for name, owners in _SCHEME_FIELDS.items():
            value = getattr(self, name)
            if self.scheme not in owners and value is not None and value is not False:
                names = " or ".join(repr(o) for o in owners)
                raise ValueError(
                    f"{name} is a setting of scheme {names} only, got {name}={value!r} with scheme {self.scheme!r}"
                )
        if self.scheme == "t5":
            self._check_t5()
        if self.scheme in _HYBRIDS:
            self._check_rope_nope()
        if self.scheme == "irope":
            self._check_irope()
        if self.scheme in RANDOMIZED:
            self._check_random()
        if self.scheme == "fire":
            self._check_fire()

    def _set(self, name, value):
        object.__setattr__(self, name, value)  # frozen: fill in a default once, when the Config is made

    def _check_t5(self):
        buckets = v.positive_int("t5_buckets", T5_BUCKETS if self.t5_buckets is None else self.t5_buckets)
        distance = v.positive_int(
            "t5_max_distance", self.train_len if self.t5_max_distance is None else self.t5_max_distance
        )
        if buckets < 2:
            raise ValueError(f"t5_buckets must be at least 2 (half of them exact distances), got {buckets}")
        if distance <= buckets // 2:
            raise ValueError(
                f"t5_max_distance must exceed the {buckets // 2} exact buckets (t5_buckets={buckets}), got {distance}"
            )
        self._set("t5_buckets", buckets)
        self._set("t5_max_distance", distance)

    def _check_rope_nope(self):
        layers = (self.layers - 1,) if self.nope_layers is None else self.nope_layers
        if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
            raise TypeError(f"nope_layers must be a tuple of layer indices, got {layers!r}")
        layers = tuple(layers)
        if not all(v._is_int(i) for i in layers):
            raise TypeError(f"nope_layers must be a tuple of integer layer indices, got {layers!r}")
        layers = tuple(sorted({int(i) for i in layers}))
        if not layers:
            raise ValueError("nope_layers must name at least one layer (with none, the scheme is 'rope')")
        if layers[0] < 0 or layers[-1] >= self.layers:
            raise ValueError(f"nope_layers must be layer indices in 0 … {self.layers - 1}, got {self.nope_layers!r}")
        if len(layers) == self.layers:
            raise ValueError(
                f"nope_layers must leave at least one RoPE layer (with every layer NoPE, the scheme is 'none'), "
                f"got {self.nope_layers!r} for {self.layers} layers"
            )
        temperature = (self.scheme == "irope") if self.query_temperature is None else self.query_temperature
        if not isinstance(temperature, (bool, np.bool_)):
            raise TypeError(f"query_temperature must be True or False, got {self.query_temperature!r}")
        floor_scale = v.real_scalar("floor_scale", self.train_len if self.floor_scale is None else self.floor_scale)
        if floor_scale <= 0:
            raise ValueError(f"floor_scale must be positive, got {self.floor_scale!r}")
        attn_scale = v.real_scalar("attn_scale", LLAMA4_ATTN_SCALE if self.attn_scale is None else self.attn_scale)
        if attn_scale < 0:
            raise ValueError(f"attn_scale must be zero or positive, got {self.attn_scale!r}")
        self._set("nope_layers", layers)
        self._set("query_temperature", bool(temperature))
        self._set("floor_scale", floor_scale)
        self._set("attn_scale", attn_scale)

    def _check_irope(self):
        mask = "chunked" if self.rope_mask is None else self.rope_mask
        if not isinstance(mask, str) or mask not in ROPE_MASKS:
            raise ValueError(f"rope_mask must be one of {', '.join(map(repr, ROPE_MASKS))}, got {self.rope_mask!r}")
        window = v.positive_int("rope_window", self.train_len if self.rope_window is None else self.rope_window)
        self._set("rope_mask", mask)
        self._set("rope_window", window)

    def _check_random(self):
        m = v.positive_int("max_position", RANDOM_RANGE if self.max_position is None else self.max_position)
        if m < self.train_len:
            raise ValueError(
                f"max_position must be at least train_len = {self.train_len} (a training sequence draws "
                f"{self.train_len} distinct positions), got {self.max_position}"
            )
        self._set("max_position", m)

    def _check_fire(self):
        width = v.positive_int("fire_width", FIRE_WIDTH if self.fire_width is None else self.fire_width)
        c = v.real_scalar("fire_c", FIRE_C if self.fire_c is None else self.fire_c)
        if not c > 0:
            raise ValueError(f"fire_c must be positive (ψ(x) = ln(1 + c·x)), got {self.fire_c!r}")
        tau = v.real_scalar("fire_threshold", self.train_len / 4 if self.fire_threshold is None else self.fire_threshold)
        if not tau > 0:
            raise ValueError(f"fire_threshold must be positive, got {self.fire_threshold!r}")
        self._set("fire_width", width)
        self._set("fire_c", float(c))
        self._set("fire_threshold", float(tau))

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    def uses_rope(self, layer: int) -> bool:
        """Whether layer ``layer`` rotates q and k: every layer of "rope", the non-NoPE layers of "rope_nope" and "irope"."""
        return self.scheme == "rope" or (self.scheme in _HYBRIDS and layer not in self.nope_layers)


# ---- parameters: a nested dict of arrays -------------------------------------------------------


def init(key, config: Config) -> dict:
    """Random parameters for ``config``: a nested dict of float32 arrays.

    Weights are normal with standard deviation 1/√(fan-in); LayerNorm gains
    start at 1 and biases at 0; the token embedding is N(0, 1).

    ``"learned"`` has a ``"pos"`` table of shape (train_len, d_model), normal
    with standard deviation ``pos_std`` (default 0.02: GPT-2's
    ``initializer_range``, which transformers' ``GPT2PreTrainedModel`` uses
    for its position table ``wpe``, an ``nn.Embedding``). With N(0, 1), the
    token embedding's scale, the table hardly moved in training (6.3 %).

    ``"t5"`` has a ``"t5_bias"`` table of shape (t5_buckets, heads), one for
    the whole model, normal with standard deviation 1/√d_model: T5's own
    initialisation of ``relative_attention_bias`` (transformers'
    ``T5PreTrainedModel._init_weights``, with ``initializer_factor`` 1). Small
    next to the logits, which start of order 1, so the model starts close to
    NoPE and training decides what each bucket is worth.

    >>> p = init(jax.random.key(0), Config(scheme="t5"))
    >>> p["t5_bias"].shape, "pos" in p                  # (buckets, heads); no table of positions
    ((16, 4), False)
    """
    d, h = config.d_model, config.mlp_ratio * config.d_model
    keys = iter(jax.random.split(key, 4 + 4 * config.layers))

    def dense(n_in, n_out):
        return jax.random.normal(next(keys), (n_in, n_out)) / math.sqrt(n_in)

    params = {"embed": jax.random.normal(next(keys), (config.vocab, d))}
    if config.scheme == "learned":
        # P ~ N(0, pos_std²): (train_len, d_model)
        params["pos"] = jax.random.normal(next(keys), (config.train_len, d)) * config.pos_std
    elif config.scheme == "rand_learned":
        # P ~ N(0, pos_std²): (max_position, d_model), a row for every position a draw can give
        params["pos"] = jax.random.normal(next(keys), (config.max_position, d)) * config.pos_std
    elif config.scheme == "t5":
        # b ~ N(0, 1/d_model): (buckets, heads), as T5 initialises it
        params["t5_bias"] = jax.random.normal(next(keys), (config.t5_buckets, config.heads)) / math.sqrt(d)
    params["blocks"] = [
        {
            "ln1": {"gain": jnp.ones(d), "bias": jnp.zeros(d)},
            "qkv": dense(d, 3 * d),
            "out": dense(d, d),
            "ln2": {"gain": jnp.ones(d), "bias": jnp.zeros(d)},
            "mlp_in": dense(d, h),
            "mlp_in_bias": jnp.zeros(h),
            "mlp_out": dense(h, d),
            "mlp_out_bias": jnp.zeros(d),
        }
        for _ in range(config.layers)
    ]
    params["ln_f"] = {"gain": jnp.ones(d), "bias": jnp.zeros(d)}
    params["unembed"] = dense(d, config.vocab)
    if config.scheme == "fire":
        # each layer's f_θ: 1 → width → heads, weights N(0, 1/fan-in), biases 0; c and the multiplier m
        w = config.fire_width
        for block, k in zip(params["blocks"], jax.random.split(jax.random.fold_in(key, 0xF12E), config.layers), strict=True):
            k1, k2 = jax.random.split(k)
            block["fire"] = {
                "w1": jax.random.normal(k1, (1, w)), "b1": jnp.zeros(w),
                "w2": jax.random.normal(k2, (w, config.heads)) / math.sqrt(w), "b2": jnp.zeros(config.heads),
                "c": jnp.float32(config.fire_c), "m": jnp.float32(1.0),
            }
    return params


def count_params(params) -> int:
    """Number of trainable numbers in ``params``."""
    return int(sum(np.size(p) for p in jax.tree_util.tree_leaves(params)))


# ---- where position enters: three small functions ------------------------------------------------


def add_positions(x, params, config: Config, positions=None):
    """Absolute schemes add a position vector to each token's embedding.

    ``"rand_sinusoidal"`` and ``"rand_learned"`` add the vector of position
    p_t instead of t, ``positions`` the (batch, T) array of
    :func:`draw_positions`.

    ``"learned"`` adds row t of the trained table, which only has
    ``train_len`` rows: a longer input raises a ValueError naming both.
    ``"sinusoidal"`` adds ``sinusoidal(t, d_model)``, the course's own table.
    Every other scheme returns x unchanged.
    """
    # x: (batch, T, d_model)
    T = x.shape[1]
    if config.scheme in ("rand_sinusoidal", "rand_learned"):
        if positions is None:
            raise ValueError(f"scheme {config.scheme!r} reads drawn positions: pass positions (see draw_positions)")
        if config.scheme == "rand_learned":
            # x_t ← x_t + P[p_t], P the trained table of max_position rows
            return x + params["pos"][positions]
        # x_t ← x_t + PE(p_t), PE from the course's sinusoidal(): a table of max_position rows, read at p_t
        table = jnp.asarray(sinusoidal(np.arange(config.max_position), config.d_model, config.base), dtype=x.dtype)
        return x + table[positions]
    if config.scheme == "learned":
        table = params["pos"]
        if T > table.shape[0]:
            raise ValueError(
                f"the learned table has {table.shape[0]} rows (its training length), "
                f"so it cannot embed a sequence of length {T}"
            )
        # x_t ← x_t + P[t]
        return x + table[:T]
    if config.scheme == "sinusoidal":
        # x_t ← x_t + PE(t), PE from the course's sinusoidal(): (T, d_model)
        return x + jnp.asarray(sinusoidal(np.arange(T), config.d_model, config.base), dtype=x.dtype)
    return x


def rotate_qk(q, k, omega, positions=None):
    """Rotate every (even, odd) pair of q and k at position t by the angle t·ω_k, as ``rope`` does.

    With ``positions`` (a (batch, T) array, ``"rand_rope"``'s draw), the
    token at index t of sequence b is turned by p_bt·ω_k instead.

    ``omega`` holds one frequency per pair (head_dim/2 of them), normally
    ``frequencies(head_dim, base)``; a test-time scaling method passes
    ``scaled_frequencies(...)`` instead.
    """
    # q, k: (batch, heads, T, head_dim); omega: (head_dim/2,)
    T = q.shape[2]
    if positions is None:
        # θ[t, k] = t·ω_k: (T, head_dim/2)
        theta = jnp.arange(T, dtype=q.dtype)[:, None] * jnp.asarray(omega, dtype=q.dtype)
    else:
        # θ[b, t, k] = p_bt·ω_k, one row of positions per sequence: (batch, 1, T, head_dim/2)
        theta = jnp.asarray(positions, dtype=q.dtype)[:, None, :, None] * jnp.asarray(omega, dtype=q.dtype)
    cos, sin = jnp.cos(theta), jnp.sin(theta)

    def turn(x):
        a, b = x[..., 0::2], x[..., 1::2]
        # (a, b) → (a cos θ − b sin θ, a sin θ + b cos θ), then interleave back
        return jnp.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)

    return turn(q), turn(k)


def t5_bucket_grid(T: int, config: Config) -> np.ndarray:
    """The T5 bucket of every (query i, key j) pair: ``t5_bucket(j − i)``, unidirectional; shape (T, T).

    Keys after the query (j > i) get bucket 0, as in T5's decoder; the causal mask hides them anyway.

    >>> t5_bucket_grid(4, Config(scheme="t5"))[3]          # query 3 reads keys 0 … 3 at distances 3, 2, 1, 0
    array([3, 2, 1, 0])
    """
    pos = np.arange(T)
    # bucket[i, j] = t5_bucket(n − m) with key n = j, query m = i
    return t5_bucket(
        pos[None, :] - pos[:, None], bidirectional=False,
        num_buckets=config.t5_buckets, max_distance=config.t5_max_distance,
    )


def bias_logits(logits, config: Config, table=None, positions=None):
    """Add a scheme's bias to the logits; schemes without one pass through.

    ``"alibi"`` adds −slope_h·|i − j| to head h's logits (the course's
    ``alibi_bias``). ``"t5"`` adds ``table[bucket(j − i), h]``, with ``table``
    the model's ``params["t5_bias"]`` of shape (t5_buckets, heads) and the
    bucket from :func:`t5_bucket_grid`. As in T5, one table serves every layer
    (transformers' ``T5Stack``: only block 0 has ``has_relative_attention_bias``,
    and its bias is passed on to the other layers). T5 itself does not scale
    q·k by 1/√head_dim (``T5Attention.scaling = 1.0``; its query
    initialisation absorbs the factor); the lab keeps its own 1/√head_dim for
    every scheme, and adds the bias after it, so the bias enters as T5's does:
    straight onto the logits.

    ``"rand_alibi"`` adds −slope_h·p_(i−j) for query i and key j ≤ i, with
    ``positions`` the (batch, T) draw of :func:`draw_positions` (p_0 = 0):
    the offset i − j stands for the drawn distance p_(i−j).
    """
    # logits: (batch, heads, T, T)
    T = logits.shape[-1]
    if config.scheme == "rand_alibi":
        if positions is None:
            raise ValueError("scheme 'rand_alibi' reads drawn distances: pass positions (see draw_positions)")
        # offset δ[i, j] = i − j on the causal side (the keys after the query are masked): (T, T)
        offset = np.maximum(np.arange(T)[:, None] - np.arange(T)[None, :], 0)
        # bias[b, h, i, j] = −slope_h · p_b,δ(i,j), p_b,0 = 0: (batch, heads, T, T)
        dist = jnp.asarray(positions)[:, offset].astype(logits.dtype)
        slopes = jnp.asarray(alibi_slopes(config.heads), dtype=logits.dtype)
        return logits - slopes[None, :, None, None] * dist[:, None]
    if config.scheme == "alibi":
        return logits + jnp.asarray(alibi_bias(T, config.heads), dtype=logits.dtype)
    if config.scheme == "t5":
        if table is None:
            raise ValueError("scheme 't5' needs its bias table: pass table=params['t5_bias']")
        # bias[h, i, j] = table[bucket(j − i), h]: (heads, T, T)
        bias = jnp.take(jnp.asarray(table), jnp.asarray(t5_bucket_grid(T, config)), axis=0).transpose(2, 0, 1)
        return logits + bias.astype(logits.dtype)
    return logits


def draw_positions(key, batch: int, length: int, config: Config):
    """The positions a randomized scheme reads: a (batch, length) int32 array, one sorted draw per sequence.

    For ``"rand_sinusoidal"``, ``"rand_learned"`` and ``"rand_rope"``, row b is
    p_0 < p_1 < … < p_(length−1), drawn without replacement from 0 … M − 1
    (M = ``config.max_position``) and sorted, as the authors'
    ``noisy_fixed_positional_encodings`` draws them. For ``"rand_alibi"``,
    row b is the distance each offset δ = 0 … length − 1 stands for: 0, then
    a sorted draw without replacement from 1 … M − 1, as their
    ``compute_noisy_alibi_encodings_biases`` draws them. A length above M
    cannot be drawn: a ValueError names both.

    The subset is the indices of the ``length`` largest of M uniform draws
    (``jax.lax.top_k``): every subset is equally likely (up to ties between
    float32 draws, which top_k breaks by index). The authors draw with
    ``jax.random.choice(..., replace=False)``, the same distribution, which
    permutes all M: on this lab's batches its draw took about 20 times as long as top_k's.

    >>> c = Config(scheme="rand_rope", train_len=4, max_position=6)
    >>> p = np.asarray(draw_positions(jax.random.key(0), 3, 5, c))
    >>> p.shape, bool((np.diff(p, axis=1) > 0).all()), bool(p.min() >= 0 and p.max() < 6)
    ((3, 5), True, True)
    >>> a = np.asarray(draw_positions(jax.random.key(0), 3, 5, dataclasses.replace(c, scheme="rand_alibi")))
    >>> a[:, 0].tolist(), bool(a[:, 1:].min() >= 1)
    ([0, 0, 0], True)
    >>> draw_positions(jax.random.key(0), 3, 7, c)
    Traceback (most recent call last):
    ...
    ValueError: length 7 cannot be drawn from max_position = 6 positions: a randomized scheme reads at most max_position tokens
    """
    if config.scheme not in RANDOMIZED:
        raise ValueError(f"draw_positions is for the randomized schemes {tuple(RANDOMIZED)}, got scheme {config.scheme!r}")
    batch = v.positive_int("batch", batch)
    length = v.positive_int("length", length)
    M = config.max_position
    if length > M:
        raise ValueError(
            f"length {length} cannot be drawn from max_position = {M} positions: "
            f"a randomized scheme reads at most max_position tokens"
        )
    keys = jax.random.split(key, batch)

    def sample(k, n, size):
        # a uniform random subset of `size` of 0 … n − 1: the indices of the `size` largest of n uniform draws
        return jnp.sort(jax.lax.top_k(jax.random.uniform(k, (n,)), size)[1])

    if config.scheme == "rand_alibi":
        def one(k):
            # 0, then length − 1 distinct distances from 1 … M − 1, sorted
            d = sample(k, M - 1, length - 1) + 1
            return jnp.concatenate([jnp.zeros(1, d.dtype), d])
    else:
        def one(k):
            # length distinct positions from 0 … M − 1, sorted
            return sample(k, M, length)
    return jax.vmap(one)(keys).astype(jnp.int32)


#: FIRE's ε, added to the divisor (the reference module's ``eps=1e-6``).
FIRE_EPS = 1e-6


def fire_bias(T: int, fire: dict, config: Config):
    """FIRE's bias for every head, query i and key j of a sequence of T tokens: (heads, T, T).

    b[h, i, j] = f_θ(ψ(i − j) / (ψ(max(τ, i)) + ε))_h with ψ(x) = ln(1 + |c·x|),
    τ = |m·τ_0| (τ_0 = ``config.fire_threshold``), ε = 10⁻⁶, and f_θ(u) =
    W_2·relu(W_1·u + b_1) + b_2; ``fire`` holds one layer's ``w1`` (1, width),
    ``b1``, ``w2`` (width, heads), ``b2``, ``c`` and ``m`` (:func:`init`).
    The keys after the query (j > i) get ψ(|i − j|) as the reference's
    ``abs`` gives; the causal mask hides them.

    >>> c = Config(scheme="fire", heads=2, d_model=16)
    >>> block = init(jax.random.key(0), c)["blocks"][0]
    >>> fire_bias(5, block["fire"], c).shape
    (2, 5, 5)
    """
    i = jnp.arange(T, dtype=jnp.float32)[:, None]
    j = jnp.arange(T, dtype=jnp.float32)[None, :]

    def psi(x):
        # ψ(x) = ln(1 + |c·x|), the log that spreads out the near distances
        return jnp.log(jnp.abs(fire["c"] * x) + 1.0)

    tau = jnp.abs(fire["m"] * config.fire_threshold)
    # u[i, j] = ψ(i − j) / (ψ(max(τ, i)) + ε), in [0, 1] on the causal side: (T, T)
    u = psi(i - j) / (psi(jnp.maximum(i, tau)) + FIRE_EPS)
    hidden = jax.nn.relu(u[..., None] * fire["w1"][0] + fire["b1"])
    # (T, T, heads) → (heads, T, T)
    return (hidden @ fire["w2"] + fire["b2"]).transpose(2, 0, 1)


def query_temperature(T: int, config: Config) -> np.ndarray:
    """Llama 4's factor for the queries of a NoPE layer at positions 0 … T − 1: shape (T,).

    1 + attn_scale·ln(1 + ⌊(t + 1)/floor_scale⌋), the course's
    ``llama4_query_temperature`` (transformers' ``Llama4TextAttention.forward``
    computes ``log1p(floor((pos + 1) / floor_scale)) * attn_scale + 1``).

    >>> query_temperature(34, Config(scheme="rope_nope", query_temperature=True))[[0, 30, 31, 33]].round(4)
    array([1.    , 1.    , 1.0693, 1.0693])
    """
    return llama4_query_temperature(np.arange(T), attn_scale=config.attn_scale, floor_scale=config.floor_scale)


def rope_layer_mask(T: int, config: Config, layer: int) -> np.ndarray:
    """Which keys each query of layer ``layer`` may read: a (T, T) boolean array, [i, j] for query i, key j.

    The causal mask j ≤ i for every layer of every scheme, and on the RoPE
    layers of ``"irope"`` also its ``rope_mask`` with W = ``rope_window``:
    ``"chunked"`` keeps ⌊i/W⌋ = ⌊j/W⌋ (Llama 4's chunked attention: the
    first query of each chunk sees only itself), ``"sliding"`` keeps
    i − j < W (the last W keys), ``"full"`` adds nothing.

    >>> c = Config(scheme="irope", train_len=4)
    >>> rope_layer_mask(6, c, 0).astype(int)          # layer 0 rotates: chunks of W = 4
    array([[1, 0, 0, 0, 0, 0],
           [1, 1, 0, 0, 0, 0],
           [1, 1, 1, 0, 0, 0],
           [1, 1, 1, 1, 0, 0],
           [0, 0, 0, 0, 1, 0],
           [0, 0, 0, 0, 1, 1]])
    >>> rope_layer_mask(6, dataclasses.replace(c, rope_mask="sliding"), 0)[5].astype(int)   # the last 4 keys
    array([0, 0, 1, 1, 1, 1])
    >>> bool(rope_layer_mask(6, c, 1).all() == np.tri(6, dtype=bool).all())   # layer 1, NoPE: causal only
    True
    """
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    keep = j <= i
    if config.scheme == "irope" and config.uses_rope(layer):
        W = config.rope_window
        if config.rope_mask == "chunked":
            keep &= i // W == j // W
        elif config.rope_mask == "sliding":
            keep &= i - j < W
    return keep


# ---- the model ---------------------------------------------------------------------------------


def _layer_norm(x, p):
    # (x − mean) / √(var + ε) · gain + bias, over the last axis
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * p["gain"] + p["bias"]


def attention(x, block, config: Config, *, omega=None, logit_scale=1.0, layer=0, t5_table=None, positions=None):
    """Causal multi-head self-attention; returns ``(output, weights)``.

    ``weights[b, h, i, j]`` is how much query i of head h reads key j (zero for
    j > i, and outside :func:`rope_layer_mask`). ``layer`` is the block's
    index: ``"rope_nope"`` and ``"irope"`` rotate q and k on their RoPE layers
    only, and with ``query_temperature`` scale the queries of their NoPE
    layers. RoPE rotates q and k by ``omega`` (default:
    ``frequencies(head_dim, base)``); the test-time rescaling is for
    ``"rope"`` only, so the hybrids always rotate by their own frequencies
    and ignore ``omega``. ``logit_scale`` multiplies the logits (YaRN's
    temperature). ``t5_table`` is the ``"t5"`` bias table.
    """
    B, T, d = x.shape
    H, Dh = config.heads, config.head_dim
    # q, k, v: (batch, heads, T, head_dim)
    q, k, val = (x @ block["qkv"]).reshape(B, T, 3, H, Dh).transpose(2, 0, 3, 1, 4)
    if config.scheme == "rand_rope":
        # q_t, k_t turned by p_t·ω_k at the drawn positions
        q, k = rotate_qk(q, k, frequencies(Dh, config.base), positions)
    elif config.uses_rope(layer):
        rope_omega = omega if config.scheme == "rope" and omega is not None else frequencies(Dh, config.base)
        q, k = rotate_qk(q, k, rope_omega)
    elif config.scheme in _HYBRIDS and config.query_temperature:
        # q_t ← q_t · (1 + attn_scale·ln(1 + ⌊(t + 1)/floor_scale⌋)) on a NoPE layer
        q = q * jnp.asarray(query_temperature(T, config), dtype=q.dtype)[:, None]
    # logits[b, h, i, j] = q_i · k_j / √head_dim: (batch, heads, T, T)
    logits = jnp.einsum("bhid,bhjd->bhij", q, k) * (logit_scale / math.sqrt(Dh))
    logits = bias_logits(logits, config, t5_table, positions)
    if config.scheme == "fire":
        # logits[b, h, i, j] += f_θ(ψ(i − j)/ψ(max(τ, i)))_h
        logits = logits + fire_bias(T, block["fire"], config).astype(logits.dtype)
    if config.scheme == "irope":
        keep = jnp.asarray(rope_layer_mask(T, config, layer))  # causal, and irope's chunks on its RoPE layers
    else:
        keep = jnp.tril(jnp.ones((T, T), dtype=bool))
    logits = jnp.where(keep, logits, -jnp.inf)
    weights = jax.nn.softmax(logits, axis=-1)
    # out: (batch, heads, T, head_dim) → (batch, T, d_model)
    out = jnp.einsum("bhij,bhjd->bhid", weights, val).transpose(0, 2, 1, 3).reshape(B, T, d)
    return out @ block["out"], weights


def _mlp(x, block):
    # x → W_out · gelu(W_in · x + b_in) + b_out
    return jax.nn.gelu(x @ block["mlp_in"] + block["mlp_in_bias"]) @ block["mlp_out"] + block["mlp_out_bias"]


def forward(
    params, tokens, config: Config, *, omega=None, logit_scale=1.0, return_attention=False, key=None, positions=None
):
    """Logits for every position: (batch, T, vocab). Pure: no state, no globals.

    With ``return_attention=True`` it returns ``(logits, weights)``, the weights
    of shape (layers, batch, heads, T, T). ``omega`` and ``logit_scale`` are the
    test-time RoPE scaling knobs of :func:`attention`. A randomized scheme
    (:data:`RANDOMIZED`) reads the positions :func:`draw_positions` draws
    from ``key``, or the (batch, T) array ``positions`` given; the other
    schemes ignore ``key`` and refuse ``positions``.

    >>> c = Config(scheme="rand_rope")
    >>> forward(init(jax.random.key(0), c), jnp.zeros((2, 5), "int32"), c)
    Traceback (most recent call last):
    ...
    ValueError: scheme 'rand_rope' draws its positions at random: pass key= (a jax.random key) or positions=
    """
    B, T = tokens.shape
    if config.scheme in RANDOMIZED:
        if positions is None:
            if key is None:
                raise ValueError(
                    f"scheme {config.scheme!r} draws its positions at random: pass key= (a jax.random key) or positions="
                )
            positions = draw_positions(key, B, T, config)
        elif tuple(positions.shape) != (B, T):
            raise ValueError(f"positions must have the tokens' shape {(B, T)}, got {tuple(positions.shape)}")
    elif positions is not None:
        raise ValueError(f"positions= is for the randomized schemes {tuple(RANDOMIZED)}, got scheme {config.scheme!r}")
    # x: (batch, T, d_model)
    x = params["embed"][tokens]
    x = add_positions(x, params, config, positions)
    maps = []
    for layer, block in enumerate(params["blocks"]):
        # pre-norm residual block: x ← x + attn(LN(x)); x ← x + mlp(LN(x))
        out, weights = attention(
            _layer_norm(x, block["ln1"]), block, config, omega=omega, logit_scale=logit_scale,
            layer=layer, t5_table=params.get("t5_bias"), positions=positions,
        )
        x = x + out
        x = x + _mlp(_layer_norm(x, block["ln2"]), block)
        maps.append(weights)
    # logits: (batch, T, vocab)
    logits = _layer_norm(x, params["ln_f"]) @ params["unembed"]
    if return_attention:
        return logits, jnp.stack(maps)
    return logits


def loss_fn(params, tokens, target, mask, config: Config, *, omega=None, logit_scale=1.0, key=None):
    """Mean cross-entropy over the scored positions (where ``mask`` is True).

    ``omega`` and ``logit_scale`` go to :func:`forward`: a fine-tune with
    rescaled RoPE frequencies trains with them (see :func:`.train.finetune`).
    ``key`` draws a randomized scheme's positions (:func:`draw_positions`).
    """
    logits = forward(params, tokens, config, omega=omega, logit_scale=logit_scale, key=key)
    # −log p(target) at each position: (batch, T)
    nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), target[..., None], axis=-1)[..., 0]
    return (nll * mask).sum() / mask.sum()
