"""The per-layer record: what one decoder layer does with position, and its query temperatures.

:class:`LayerPositions` is one layer's window, RoPE (or none), ``inv_freq``,
softmax scale, query temperature and QK-norm (:class:`QKNorm`), as the
model's transformers-5 code computes them. Taught in
notebooks/14-position-per-layer.ipynb.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import _validate as v


@dataclass(frozen=True)
class QKNorm:
    """How one layer normalises its queries and keys, and where that happens relative to RoPE.

    * ``where``: ``"before_rope"`` (q and k are normalised, then rotated), ``"after_rope"`` (rotated, then
      normalised) or ``"no_rope"`` (normalised in a layer that has no RoPE);
    * ``over``: ``"head"`` (each head's ``head_dim`` channels on their own) or ``"all_heads"`` (the whole
      projection, every head together, before it is split into heads: OLMo 3);
    * ``kind``: ``"rms"`` (x / √(mean x² + ε), so the result has norm about √width), ``"l2"``
      (x / √(Σ x² + ε), norm about 1) or ``"layer"`` (LayerNorm: (x − mean x) / √(var x + ε));
    * ``weight``: ``"learned"`` (times a learned vector w, initialised to ones), ``"one_plus_learned"``
      (times 1 + w, w initialised to zeros: Gemma 3, Qwen3-Next, Qwen3.5), ``"learned_and_bias"`` (times w plus a
      learned bias b: Phi), ``"learned_per_head"`` (each head its own w, no bias: StableLM, Cohere),
      ``"learned_on_k"`` (q without a weight, k with one: DeepSeek V4's ``q_b_norm`` and ``kv_norm``) or ``"none"``.
    """

    where: str
    over: str
    kind: str
    weight: str

    def __str__(self) -> str:
        over = "per head" if self.over == "head" else "over all heads together"
        weight = {"learned": "a learned weight", "one_plus_learned": "a learned weight as 1 + w",
                  "learned_and_bias": "a learned weight and bias",
                  "learned_per_head": "a separate learned weight for each head",
                  "learned_on_k": "a learned weight on k only", "none": "no weight"}[self.weight]
        where = {"before_rope": "before the rotation", "after_rope": "after the rotation",
                 "no_rope": "in a layer without RoPE"}[self.where]
        kind = "LayerNorm (mean removed)" if self.kind == "layer" else f"{self.kind.upper()} norm"
        return f"{kind} {over}, {weight}, {where}"


#: What ``LayerPositions.qk_norm`` holds for a ``model_type`` outside :data:`FAMILIES` (other than ``"llama"``):
#: whether q and k are normalised is decided by the family's modeling code, which no config key states.
QK_NORM_UNKNOWN = "unknown"


@dataclass(frozen=True)
class CompressedBranch:
    """A layer's compressed-attention branch: keys that each stand for a block of past tokens (DeepSeek V4).

    Besides its sliding window, a DeepSeek V4 layer of type ``"compressed_sparse_attention"`` (CSA) or
    ``"heavily_compressed_attention"`` (HCA) attends to *compressed entries*: every ``rate`` source tokens are
    pooled (a learned softmax gate over the block) into one entry of ``head_dim`` numbers, which serves as key and
    value at once. As transformers 5.25.0 computes them (models/deepseek_v4/modeling_deepseek_v4.py):

    * ``rate``: m, the source tokens per entry (``config.compress_rates[layer_type]``: 4 for CSA, 128 for HCA);
    * ``span``: the tokens one entry pools: 2m for CSA (entry w mixes block w − 1's "Ca" series with block w's
      "Cb" series, ``DeepseekV4CSACompressor.forward``), m for HCA (``DeepseekV4HCACompressor.forward``);
    * ``top_k``: how many entries each query keeps, picked by the lightning indexer (CSA: ``index_topk``), or None
      when every visible entry is attended (HCA);
    * the entry's RoPE: entry w is rotated at position ``w · rate``, the position of the first token of block w
      (``positions * self.compress_rate + first_window_position``), with the same frequencies as the layer's own
      q and k (the ``"compress"`` rotary: ``compress_rope_theta`` and YaRN);
    * what a query sees: a query at position t sees entries w < ⌊(t + 1) / rate⌋, the blocks it has read to the
      end (``causal_threshold = (position_ids + 1) // self.compress_rate``).

    Taught in notebooks/14-position-per-layer.ipynb.

    >>> hca = CompressedBranch(rate=128, span=128, top_k=None)
    >>> hca.entry_positions(3).tolist(), hca.visible(127), hca.visible(126)   # block 0 closes at token 127
    ([0, 128, 256], 1, 0)
    """

    rate: int
    span: int
    top_k: int | None

    def entry_positions(self, entries) -> np.ndarray:
        """The position each of the first ``entries`` compressed entries is rotated at: w · rate."""
        entries = v.positive_int("entries", entries) if entries else 0
        return np.arange(entries, dtype=np.int64) * self.rate

    def visible(self, t) -> int:
        """How many entries a query at position ``t`` may attend to: ⌊(t + 1) / rate⌋."""
        t = int(t)
        if t < 0:
            raise ValueError(f"t must be a position ≥ 0, got {t}")
        return (t + 1) // self.rate


@dataclass(frozen=True)
class Indexer:
    """A layer's sparse-attention indexer: a small attention that picks which keys the layer attends to.

    GLM-5's DSA (models/glm_moe_dsa/modeling_glm_moe_dsa.py, ``GlmMoeDsaIndexer``) scores every cached token; DeepSeek
    V4's lightning indexer (``DeepseekV4Indexer``) scores the CSA branch's compressed entries. Its own q and k carry
    RoPE with the layer's frequencies, so position enters the choice of keys as well as the attention itself:

    * ``head_dim``: the width of the indexer's q and k (``index_head_dim``); ``heads``: its query heads;
    * ``rotary_dim``: how many of those dims turn, and ``rotated``: which ones (``"leading"``: GLM-5 splits
      [rope | pass]; ``"trailing"``: DeepSeek V4's apply_rotary_pos_emb turns the last dims);
    * ``top_k``: the keys (or entries) each query keeps (``index_topk``);
    * ``scores``: what it scores, ``"tokens"`` (GLM-5) or ``"compressed entries"`` (DeepSeek V4); ``"reused"`` for
      a GLM-5 layer whose ``indexer_types`` entry is ``"shared"``: it has no indexer of its own and reuses the
      previous layer's choice of keys (``GlmMoeDsaAttention``: ``topk_indices = prev_topk_indices``).

    Taught in notebooks/14-position-per-layer.ipynb.
    """

    head_dim: int
    heads: int
    rotary_dim: int
    rotated: str
    top_k: int
    scores: str


@dataclass(frozen=True)
class LayerPositions:
    """What one decoder layer does with position, as the model's transformers-5 code computes it.

    * ``layer_type``: the config's own name for the layer's attention (``"full_attention"``, ...);
    * ``window``: the sliding window or chunk size in tokens, None for full attention (ModernBERT's is its
      whole bidirectional ``local_attention``; Hugging Face stores half of it as ``sliding_window``; a Gemma 3
      config with ``use_bidirectional_attention``, as EmbeddingGemma's, likewise gets its whole bidirectional
      span, 2·⌊sliding_window/2⌋, where Hugging Face stores ⌊sliding_window/2⌋ + 1 as an exclusive bound);
    * ``rope``: False for a layer with no positional encoding (NoPE);
    * ``inv_freq``: the numpy (float64) version of Hugging Face's ``inv_freq`` buffer for the layer's type,
      same length and order, zeros where Hugging Face has zeros; None when ``rope`` is False;
    * ``rotary_dim``: the number of dimensions rotated (0 without RoPE);
    * ``attention_factor``: Hugging Face's ``attention_scaling``, the factor on cos and sin;
    * ``layout``: ``"half-split"`` (pair k is dims k and k + d/2) or ``"interleaved"`` (dims 2k and 2k + 1);
    * ``softmax_scale``: the multiplier on q·k before the softmax;
    * ``query_temperature``: None, or a function of the position array giving the factor on each query;
    * ``head_dim``: the width of q and k in that layer (rotated and position-free dims together);
    * ``rope_type``, ``base``, ``factor``: the frequency rule, base and scaling factor (None without RoPE);
    * ``mrope_section``, ``mrope_interleaved``: multimodal RoPE's split of the pairs over (t, h, w), if any;
    * ``qk_norm``: a :class:`QKNorm` when the layer normalises q and k, None when it does not, and
      :data:`QK_NORM_UNKNOWN` for a family outside :data:`FAMILIES`, whose code the reader has not read;
    * ``read_as``: whose code the record follows: the family's name (``"Gemma 3"``, ``"Llama-style"`` for a config
      without ``model_type``), or, for a ``model_type`` read with ``assume="llama"``, a sentence saying so;
    * ``rotated``: where the part of the q·k head that the rotation acts on sits: ``"leading"`` (the first dims:
      the whole head for most families, the first ``rotary_dim`` for partial RoPE; Gemma 4's proportional RoPE acts
      on the whole head, its non-turning pairs with ω = 0) or ``"trailing"`` (the last ``rotary_dim``: DeepSeek-V3's
      and GLM-5's MLA, which split q into [no position | rotated], and DeepSeek V4), None without RoPE;
    * ``compressed``: a :class:`CompressedBranch` when the layer also attends to compressed entries (DeepSeek V4's
      CSA and HCA layers), else None;
    * ``indexer``: an :class:`Indexer` when a sparse-attention indexer picks the keys (GLM-5, DeepSeek V4's CSA),
      else None;
    * ``sinks``: True when the attention has a learned sink logit per head (gpt-oss, DeepSeek V4: ``self.sinks``,
      passed to the attention as ``s_aux``).
    """

    layer_type: str
    window: int | None
    rope: bool
    inv_freq: np.ndarray | None = field(compare=False)
    rotary_dim: int
    attention_factor: float
    layout: str
    softmax_scale: float
    query_temperature: object = field(compare=False)
    head_dim: int = 0
    rope_type: str | None = None
    base: float | None = None
    factor: float | None = None
    mrope_section: tuple[int, ...] | None = None
    mrope_interleaved: bool = False
    qk_norm: QKNorm | str | None = None
    read_as: str = ""
    rotated: str | None = None
    compressed: CompressedBranch | None = None
    indexer: Indexer | None = None
    sinks: bool = False

    @property
    def pairs(self) -> int:
        """The number of pairs that turn (rotary_dim / 2)."""
        return self.rotary_dim // 2

    @property
    def mrope_axes(self) -> tuple[str, ...] | None:
        """For multimodal RoPE, the axis ("t", "h" or "w") each pair's angle follows; None otherwise.

        Contiguous (Qwen2-VL): the first section's pairs follow t, the next h, the last w. Interleaved
        (Qwen3-VL, Qwen3.5, ``recomposition_frequencies``): pair k follows h when k mod 3 = 1 and
        k < 3·section[1], w when k mod 3 = 2 and k < 3·section[2], t otherwise.
        """
        if self.mrope_section is None or self.inv_freq is None:
            return None
        t, h, w = self.mrope_section
        if not self.mrope_interleaved:
            return ("t",) * t + ("h",) * h + ("w",) * w
        # k % 3 == 1 and k < 3h → h; k % 3 == 2 and k < 3w → w; else t
        return tuple("h" if k % 3 == 1 and k < 3 * h else "w" if k % 3 == 2 and k < 3 * w else "t"
                     for k in range(len(self.inv_freq)))


# Llama 4's NoPE layers (Llama4TextAttention.forward): q ← q · (1 + attn_scale · ln(1 + ⌊(p + 1) / floor_scale⌋))
def llama4_query_temperature(positions, *, attn_scale=0.1, floor_scale=8192):
    """The factor Llama 4 multiplies each query of a NoPE layer by, at positions ``positions``.

    1 + attn_scale · ln(1 + ⌊(p + 1)/floor_scale⌋), from transformers 5's ``Llama4TextAttention.forward``: exactly
    1 for the first floor_scale − 1 positions, then growing like a logarithm.
    Taught in notebooks/14-position-per-layer.ipynb.

    >>> llama4_query_temperature([0, 8190, 8191, 16383]).round(4)
    array([1.    , 1.    , 1.0693, 1.1099])
    """
    p = v.real_array("positions", positions)
    # 1 + attn_scale · ln(1 + ⌊(p + 1) / floor_scale⌋)
    return 1.0 + attn_scale * np.log1p(np.floor((p + 1.0) / floor_scale))


# Ministral 3 (get_llama_4_attn_scale): q ← q · (1 + β · ln(1 + ⌊p / original_max_position_embeddings⌋))
def llama_4_scaling_temperature(positions, *, beta, original_max_position):
    """The factor Ministral 3 multiplies every query by: 1 + β · ln(1 + ⌊p / L⌋), L its original length.

    From transformers 5's ``get_llama_4_attn_scale`` (models/ministral3/modeling_ministral3.py), with
    β = ``rope_parameters["llama_4_scaling_beta"]``. Unlike Llama 4's, it uses p (not p + 1) and acts on every
    layer. Taught in notebooks/14-position-per-layer.ipynb.

    >>> llama_4_scaling_temperature([0, 16383, 16384], beta=0.1, original_max_position=16384).round(4)
    array([1.    , 1.    , 1.0693])
    """
    p = v.real_array("positions", positions)
    # 1 + β · ln(1 + ⌊p / L⌋)
    return 1.0 + beta * np.log1p(np.floor(p / original_max_position))
