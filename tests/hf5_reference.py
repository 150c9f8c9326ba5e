"""Transcriptions of Hugging Face transformers 5's position code, in numpy, for the per-layer tests.

Written against the 5.24.0 wheel; DeepSeek V4, GLM-5 (glm_moe_dsa) and Kimi Linear against the 5.25.0 wheel. In
5.25.0, modeling_rope_utils.py and the configuration files of Gemma 3 and 4, Llama 4, DeepSeek-V3, gpt-oss, OLMo 3,
Phi-3, Qwen3.5 and Qwen3-Next change no value computed here (yarn_get_mscale moves into modeling_rope_utils.py;
Phi-3's "su" is renamed before standardize_rope_params rather than after; tensor-parallel plans). Each function
names the file it transcribes (paths inside the ``transformers`` wheel, ``transformers/...``). The code follows the
original's structure and names: a config is first "constructed" the way the model's configuration class does it
(``__post_init__`` and ``convert_rope_params_to_dict``), then the rotary class builds one ``inv_freq`` buffer per
layer type, and the attention class sets each layer's ``scaling``, ``sliding_window`` and whether RoPE is applied.
torch is replaced by numpy (float64 instead of float32); nothing is imported from posenc_helpers.
"""

from __future__ import annotations

import copy
import math

import numpy as np

# --- modeling_rope_utils.py: ROPE_INIT_FUNCTIONS ---------------------------------------------------------------


def _dim(cfg: dict, params: dict) -> int:
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    return int(head_dim * params.get("partial_rotary_factor", 1.0))


def compute_default(cfg: dict, params: dict, *, partial: bool) -> tuple[np.ndarray, float]:
    """Each model's ``compute_default_rope_parameters`` (models/<model>/modeling_<model>.py).

    Most (Llama, Gemma 3/4, OLMo 3, ModernBERT, EXAONE 4, Cohere2, SmolLM3, gpt-oss, DeepSeek-V3, Ministral 3,
    Qwen3, Qwen2-VL, Qwen3-VL, Llama 4) use the whole head_dim; Qwen3-Next and Qwen3.5 read partial_rotary_factor.
    """
    base = params["rope_theta"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    dim = int(head_dim * params.get("partial_rotary_factor", 1.0)) if partial else head_dim
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)), 1.0


def compute_linear(cfg: dict, params: dict) -> tuple[np.ndarray, float]:
    """modeling_rope_utils.py, _compute_linear_scaling_rope_parameters."""
    dim = _dim(cfg, params)
    inv_freq = 1.0 / (params["rope_theta"] ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    return inv_freq / params["factor"], 1.0


def compute_proportional(cfg: dict, params: dict) -> tuple[np.ndarray, float]:
    """modeling_rope_utils.py, _compute_proportional_rope_parameters."""
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    base = params["rope_theta"]
    factor = params.get("factor", 1.0)
    rope_proportion = params.get("partial_rotary_factor", 1.0)
    rope_angles = int(rope_proportion * head_dim // 2)
    inv_freq_rotated = 1.0 / (base ** (np.arange(0, 2 * rope_angles, 2, dtype=np.float64) / head_dim))
    nope_angles = head_dim // 2 - rope_angles
    if nope_angles > 0:
        inv_freq = np.concatenate((inv_freq_rotated, np.zeros(nope_angles)))
    else:
        inv_freq = inv_freq_rotated
    return inv_freq / factor, 1.0


def compute_yarn(cfg: dict, params: dict, top_level_truncate: bool = True) -> tuple[np.ndarray, float]:
    """modeling_rope_utils.py, _compute_yarn_parameters (``truncate`` is read from the top-level
    ``config.rope_parameters``, so a nested dict's own ``truncate`` is not seen: ``top_level_truncate``)."""
    base = params["rope_theta"]
    dim = _dim(cfg, params)
    factor = params["factor"]
    attention_factor = params.get("attention_factor")
    mscale = params.get("mscale")
    mscale_all_dim = params.get("mscale_all_dim")
    original_max_position_embeddings = params["original_max_position_embeddings"]
    if factor is None:
        factor = cfg["max_position_embeddings"] / original_max_position_embeddings

    def get_mscale(scale, mscale=1):
        if scale <= 1:
            return 1.0
        return 0.1 * mscale * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = get_mscale(factor)
    beta_fast = params.get("beta_fast") or 32
    beta_slow = params.get("beta_slow") or 1

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings, truncate):
        low = find_correction_dim(low_rot, dim, base, max_position_embeddings)
        high = find_correction_dim(high_rot, dim, base, max_position_embeddings)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):  # noqa: A002 (the original's names)
        if min == max:
            max += 0.001
        linear_func = (np.arange(dim, dtype=np.float64) - min) / (max - min)
        return np.clip(linear_func, 0, 1)

    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, original_max_position_embeddings,
                                      top_level_truncate)
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2)
    inv_freq = (inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
                + inv_freq_extrapolation * inv_freq_extrapolation_factor)
    return inv_freq, attention_factor


def compute_llama3(cfg: dict, params: dict) -> tuple[np.ndarray, float]:
    """modeling_rope_utils.py, _compute_llama3_parameters (torch.where becomes np.where; 0/0 only where masked)."""
    dim = _dim(cfg, params)
    inv_freq = 1.0 / (params["rope_theta"] ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    factor = params["factor"]
    low_freq_factor = params["low_freq_factor"]
    high_freq_factor = params["high_freq_factor"]
    old_context_len = params["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    with np.errstate(divide="ignore", invalid="ignore"):
        smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama), 1.0


def compute_longrope(cfg: dict, params: dict, seq_len=None) -> tuple[np.ndarray, float]:
    """modeling_rope_utils.py, _compute_longrope_parameters."""
    base = params["rope_theta"]
    dim = _dim(cfg, params)
    long_factor = params["long_factor"]
    short_factor = params["short_factor"]
    factor = params.get("factor")
    attention_factor = params.get("attention_factor")
    original_max_position_embeddings = params["original_max_position_embeddings"]
    if factor is None:
        factor = cfg["max_position_embeddings"] / original_max_position_embeddings
    if attention_factor is None:
        if factor <= 1.0:
            attention_factor = 1.0
        else:
            attention_factor = math.sqrt(1 + math.log(factor) / math.log(original_max_position_embeddings))
    if seq_len and seq_len > original_max_position_embeddings:
        ext_factors = np.asarray(long_factor, dtype=np.float64)
    else:
        ext_factors = np.asarray(short_factor, dtype=np.float64)
    inv_freq_shape = np.arange(0, dim, 2, dtype=np.float64) / dim
    return 1.0 / (ext_factors * base**inv_freq_shape), attention_factor


def compute_dynamic(cfg: dict, params: dict) -> tuple[np.ndarray, float]:
    """modeling_rope_utils.py, _compute_dynamic_ntk_parameters at init time: seq_len = max_position_embeddings."""
    dim = _dim(cfg, params)
    factor = params["factor"]
    seq_len = cfg["max_position_embeddings"]
    base = params["rope_theta"] * ((factor * seq_len / cfg["max_position_embeddings"]) - (factor - 1)) ** (dim / (dim - 2))
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)), 1.0


ROPE_INIT_FUNCTIONS = {"dynamic": compute_dynamic, "linear": compute_linear, "yarn": compute_yarn, "llama3": compute_llama3,
                       "proportional": compute_proportional, "longrope": compute_longrope}

# --- configuration_<model>.py: __post_init__ and convert_rope_params_to_dict -------------------------------------

DEFAULT_THETA = {  # each configuration class's default_theta (configuration_utils: 10_000.0)
    "llama4_text": 500000.0, "smollm3": 2000000.0, "olmo3": 500000.0, "gpt_oss": 150000.0,
    "qwen2_vl_text": 1000000.0, "qwen2_5_vl_text": 1000000.0, "qwen3_vl_text": 500000.0,
    "cohere": 500000.0,  # configuration_cohere.py, CohereConfig.default_theta
}
# __post_init__'s kwargs.setdefault("partial_rotary_factor", ...): configuration_glm.py, configuration_glm4.py,
# configuration_glm4_moe.py, configuration_phi.py, configuration_nemotron.py (0.5), configuration_stablelm.py (0.25)
PARTIAL_FACTOR = {"glm": 0.5, "glm4": 0.5, "glm4_moe": 0.5, "phi": 0.5, "nemotron": 0.5, "stablelm": 0.25}
FIELD_DEFAULTS = {  # dataclass field defaults of each configuration class that the position code reads
    "gpt_oss": {"sliding_window": 128}, "cohere2": {"sliding_window": 4096},
    "exaone4": {"sliding_window": 4096, "sliding_window_pattern": 4}, "llama4_text": {"attention_chunk_size": 8192},
    "qwen3_next": {"head_dim": 256},
    # configuration_mistral.py, configuration_qwen2.py, configuration_qwen3.py, configuration_qwen3_moe.py
    "mistral": {"sliding_window": 4096},
    "qwen2": {"use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28},
    "qwen3": {"use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28},
    "qwen3_moe": {"use_sliding_window": False, "sliding_window": 4096},
    # configuration_gemma2.py, configuration_granite.py
    "gemma2": {"head_dim": 256, "query_pre_attn_scalar": 256, "sliding_window": 4096},
    "granite": {"attention_multiplier": 1.0},
    "phi3": {"original_max_position_embeddings": 4096},  # a field of Phi3Config: it always overrides the dict's
    # configuration_qwen2_vl.py, configuration_qwen2_5_vl.py (the text configs)
    "qwen2_vl_text": {"use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 80},
    "qwen2_5_vl_text": {"use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 80},
    # configuration_glm.py, configuration_glm4.py (head_dim: int = 128), configuration_gemma.py (head_dim: int = 256)
    "glm": {"head_dim": 128}, "glm4": {"head_dim": 128}, "gemma": {"head_dim": 256},
}
TEXT = {"gemma3": "gemma3_text", "gemma3n": "gemma3n_text", "gemma4": "gemma4_text", "llama4": "llama4_text",
        "qwen2_vl": "qwen2_vl_text",
        "qwen2_5_vl": "qwen2_5_vl_text", "qwen3_vl": "qwen3_vl_text", "qwen3_5": "qwen3_5_text",
        "mistral3": "ministral3"}


def standardize_rope_params(c: dict) -> None:
    """modeling_rope_utils.py, RotaryEmbeddingConfigMixin.standardize_rope_params."""
    rope_theta = c.get("rope_theta")
    partial_rotary_factor = c.get("partial_rotary_factor")
    rp = c.get("rope_parameters") or {}
    nested_keys = [k for k in rp if k in (c.get("layer_types") or ())]
    if not nested_keys:
        rp.setdefault("rope_type", rp.get("type", "default"))
        rp.setdefault("rope_theta", rope_theta)
        if partial_rotary_factor is not None:
            rp.setdefault("partial_rotary_factor", partial_rotary_factor)
        if rp["rope_type"] in ["llama3", "yarn", "longrope"]:
            if c.get("original_max_position_embeddings") is not None:
                rp["original_max_position_embeddings"] = c["original_max_position_embeddings"]
            else:
                rp.setdefault("original_max_position_embeddings", c.get("max_position_embeddings"))
    else:
        for layer_type in nested_keys:
            rp[layer_type].setdefault("rope_type", rp[layer_type].get("type", "default"))
            rp[layer_type].setdefault("rope_theta", rope_theta)
            if partial_rotary_factor is not None:
                rp[layer_type].setdefault("partial_rotary_factor", partial_rotary_factor)
            if rp[layer_type]["rope_type"] in ["llama3", "yarn", "longrope"]:
                rp[layer_type].setdefault("original_max_position_embeddings", c.get("max_position_embeddings"))
    c["rope_parameters"] = rp


def construct(config: dict) -> dict:
    """The text config as the model's configuration class leaves it (text_config of a multimodal config)."""
    c = copy.deepcopy(config)
    if isinstance(c.get("text_config"), dict):
        outer = c.get("model_type")
        c = c["text_config"]
        c.setdefault("model_type", TEXT.get(outer, outer))
    mt = TEXT.get(c.get("model_type"), c.get("model_type"))
    c["model_type"] = mt
    for key, value in FIELD_DEFAULTS.get(mt, {}).items():
        c.setdefault(key, value)
    n = c["num_hidden_layers"]
    if mt in ("qwen2", "qwen3", "qwen3_moe", "qwen2_vl_text", "qwen2_5_vl_text"):
        # __post_init__: the window only with use_sliding_window
        c["sliding_window"] = c["sliding_window"] if c["use_sliding_window"] else None
    if mt == "nemotron":  # configuration_nemotron.py: head_dim if not None else hidden_size // num_attention_heads
        c["head_dim"] = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    if mt == "falcon":  # configuration_falcon.py: the head_dim property
        c["head_dim"] = c["hidden_size"] // c["num_attention_heads"]
    if mt in PARTIAL_FACTOR:  # kwargs.setdefault("partial_rotary_factor", ...), read by convert_rope_params_to_dict
        c.setdefault("partial_rotary_factor", PARTIAL_FACTOR[mt])
    # Qwen3MoeConfig declares no layer_types, and modeling_qwen3_moe.py reads none: see default_layer_types
    kwargs_theta = c.pop("rope_theta", None)  # a kwarg, not a field, in transformers 5 configs
    rope_scaling = c.pop("rope_scaling", None)
    if mt == "deepseek_v4":  # configuration_deepseek_v4.py (5.25.0), DeepseekV4Config
        construct_deepseek_v4(c, kwargs_theta, rope_scaling)
    elif mt == "glm_moe_dsa":  # configuration_glm_moe_dsa.py (5.25.0), GlmMoeDsaConfig
        construct_glm_moe_dsa(c, kwargs_theta, rope_scaling)
    elif mt == "kimi_linear":  # configuration_kimi_linear.py (5.25.0), KimiLinearConfig
        construct_kimi_linear(c)
    elif mt == "gemma3_text":  # configuration_gemma3.py, Gemma3TextConfig
        pattern = c.get("sliding_window_pattern", 6)
        if c.get("layer_types") is None:
            c["layer_types"] = ["sliding_attention" if bool((i + 1) % pattern) else "full_attention" for i in range(n)]
        rp = c.get("rope_parameters") or {"sliding_attention": {"rope_type": "default"},
                                          "full_attention": {"rope_type": "default"}}
        if rope_scaling is not None:
            rp["full_attention"].update(rope_scaling)
        rp["full_attention"].setdefault("rope_theta", 1_000_000.0 if kwargs_theta is None else kwargs_theta)
        rp["sliding_attention"].setdefault("rope_theta", c.pop("rope_local_base_freq", 10_000.0))
        c["rope_parameters"] = rp
        c.setdefault("head_dim", 256)
        c.setdefault("sliding_window", 4096)
        c.setdefault("query_pre_attn_scalar", 256)
        if c.get("use_bidirectional_attention"):  # __post_init__: "due to fa we set exclusive bounds"
            c["sliding_window"] = (c["sliding_window"] // 2) + 1
    elif mt == "gemma3n_text":  # configuration_gemma3n.py, Gemma3nTextConfig
        if c.get("layer_types") is None:  # __post_init__; the class has no sliding_window_pattern field
            c["layer_types"] = ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(n)]
        rp = c.get("rope_parameters") or {"sliding_attention": {"rope_type": "default"},
                                          "full_attention": {"rope_type": "default"}}
        if rope_scaling is not None:  # convert_rope_params_to_dict
            rp["full_attention"].update(rope_scaling)
        rp.setdefault("full_attention", {"rope_type": "default"})
        rp["full_attention"].setdefault("rope_theta", 1_000_000.0 if kwargs_theta is None else kwargs_theta)
        rp.setdefault("sliding_attention", {"rope_type": "default"})
        rp["sliding_attention"].setdefault("rope_theta", c.pop("rope_local_base_freq", 10_000.0))
        c["rope_parameters"] = rp
        c.setdefault("head_dim", 256)
        c.setdefault("sliding_window", 512)
    elif mt == "gemma4_text":  # configuration_gemma4.py, Gemma4TextConfig
        if c.get("layer_types") is None:
            c["layer_types"] = ["sliding_attention" if bool((i + 1) % 6) else "full_attention" for i in range(n)]
        if c["layer_types"][-1] != "full_attention":
            c["layer_types"][-1] = "full_attention"
        if c.get("rope_parameters") is None:
            c["rope_parameters"] = {
                "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
                "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6},
            }
        c.setdefault("head_dim", 256)
        c.setdefault("sliding_window", 512)
        c["per_layer_head_dim"] = {"full_attention": c.pop("global_head_dim", 512)}
    elif mt == "olmo3":  # configuration_olmo3.py, Olmo3Config
        if c.get("layer_types") is None:
            c["layer_types"] = ["sliding_attention" if (i + 1) % 4 != 0 else "full_attention" for i in range(n)]
        rp = c.get("rope_parameters") or {"sliding_attention": {"rope_type": "default"},
                                          "full_attention": {"rope_type": "default"}}
        if rope_scaling is not None:
            rp["full_attention"].update(rope_scaling)
        # kwargs.pop("rope_theta", default_theta) twice: the second pop finds nothing left
        rp["full_attention"].setdefault("rope_theta", 500000.0 if kwargs_theta is None else kwargs_theta)
        rp["sliding_attention"].setdefault("rope_theta", 500000.0)
        c["rope_parameters"] = rp
        c.setdefault("sliding_window", 4096)
    elif mt == "modernbert":  # configuration_modernbert.py, ModernBertConfig
        every = c.get("global_attn_every_n_layers", 3)
        if c.get("layer_types") is None:
            c["layer_types"] = ["sliding_attention" if bool(i % every) else "full_attention" for i in range(n)]
        rp = c.get("rope_parameters") or {"sliding_attention": {"rope_type": "default"},
                                          "full_attention": {"rope_type": "default"}}
        if rope_scaling is not None:
            rp["full_attention"].update(rope_scaling)
            rp["sliding_attention"].update(rope_scaling)
        rp["full_attention"].setdefault("rope_theta", c.pop("global_rope_theta", 160_000.0))
        rp["sliding_attention"].setdefault("rope_theta", c.pop("local_rope_theta", 10_000.0))
        c["rope_parameters"] = rp
        c["sliding_window"] = c.get("local_attention", 128) // 2  # the property: half the local window
    elif mt == "gpt_neox":  # configuration_gpt_neox.py, convert_rope_params_to_dict
        rp = rope_scaling or c.get("rope_parameters") or {}
        rp.setdefault("rope_theta", c.pop("rotary_emb_base", 10_000.0) if kwargs_theta is None else kwargs_theta)
        rp.setdefault("partial_rotary_factor", c.pop("rotary_pct", 0.25))
        c["rope_parameters"] = rp
        c["layer_types"] = ["full_attention"] * n
    elif mt == "gptj":  # configuration_gptj.py: no rope_parameters; modeling_gptj.py fixes base 10000
        c["rope_parameters"] = {"rope_type": "gptj", "rope_theta": 10_000.0}
        c["hidden_size"], c["num_attention_heads"] = c["n_embd"], c["n_head"]
        c["layer_types"] = ["full_attention"] * n
    else:
        if mt == "ministral3" and c.get("rope_parameters") is None and rope_scaling is None:
            # configuration_ministral3.py, Ministral3Config.__post_init__
            c["rope_parameters"] = {"type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
                                    "original_max_position_embeddings": 16384,
                                    "max_position_embeddings": c.get("max_position_embeddings"),
                                    "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0, "mscale": 1.0,
                                    "llama_4_scaling_beta": 0.1}
        if mt == "deepseek_v3":  # configuration_deepseek_v3.py: head_dim = qk_rope_head_dim
            c["head_dim"] = c.get("qk_rope_head_dim", 64)
        if mt == "phi3" and rope_scaling is not None and rope_scaling.get("type") in ("su", "yarn"):
            rope_scaling["rope_type"] = "longrope"  # configuration_phi3.py: "su" and "yarn" become "longrope"
        if mt in ("qwen2_vl_text", "qwen2_5_vl_text", "qwen3_vl_text", "qwen2_vl", "qwen2_5_vl"):
            # configuration_qwen2_vl.py: "mrope" is read as "default"
            rp = rope_scaling or c.get("rope_parameters") or {}
            rp.setdefault("rope_theta", DEFAULT_THETA.get(mt, 1000000.0) if kwargs_theta is None else kwargs_theta)
            if rp.get("rope_type", rp.get("type")) == "mrope":
                rp["rope_type"] = "default"
            c["rope_parameters"] = rp
        else:
            if mt == "gpt_oss" and c.get("rope_parameters") is None and rope_scaling is None:
                rope_scaling = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                "truncate": False, "original_max_position_embeddings": 4096}
            rp = rope_scaling or c.get("rope_parameters") or {}
            c["rope_parameters"] = rp
            nested = [k for k in rp if k in (c.get("layer_types") or ())]
            theta = DEFAULT_THETA.get(mt, 10_000.0) if kwargs_theta is None else kwargs_theta
            for params in [rp[k] for k in nested] or [rp]:
                params.setdefault("rope_theta", theta)
        if mt in ("qwen3_next", "qwen3_5_text"):
            c["rope_parameters"].setdefault("partial_rotary_factor", c.pop("partial_rotary_factor", 0.25))
        if c.get("layer_types") is None:
            c["layer_types"] = default_layer_types(c, mt, n)
    c["rope_theta"] = kwargs_theta
    if mt not in ("deepseek_v4", "kimi_linear"):  # both set their rope_parameters themselves (or have none)
        standardize_rope_params(c)
    return c


# the dataclass field defaults the 5.25.0 position code reads
DEEPSEEK_V4_DEFAULTS = {"num_hidden_layers": 43, "head_dim": 512, "num_attention_heads": 64, "hidden_size": 4096,
                        "max_position_embeddings": 1048576, "compress_rope_theta": 160000.0, "sliding_window": 128,
                        "index_n_heads": 64, "index_head_dim": 128, "index_topk": 512, "partial_rotary_factor": None,
                        "layer_types": None, "compress_rates": None}
DEEPSEEK_V4_RATIO_TO_TYPE = {0: "sliding_attention", 4: "compressed_sparse_attention",
                             128: "heavily_compressed_attention"}  # _COMPRESS_RATIO_TO_LAYER_TYPE


def construct_deepseek_v4(c: dict, kwargs_theta, rope_scaling) -> None:
    """DeepseekV4Config.__post_init__ after PreTrainedConfig.__post_init__ (convert_rope_params_to_dict)."""
    for key, value in DEEPSEEK_V4_DEFAULTS.items():
        c.setdefault(key, value)
    legacy_compress_ratios = c.pop("compress_ratios", None)
    legacy_csa, legacy_hca = c.pop("compress_rate_csa", None), c.pop("compress_rate_hca", None)
    legacy_qk_rope_head_dim = c.pop("qk_rope_head_dim", None)
    rope_theta = 10000.0 if kwargs_theta is None else kwargs_theta  # rope_theta: float | int = 10000.0, a field
    # convert_rope_params_to_dict: rope_scaling or rope_parameters; a flat dict (no "main"/"compress" key) gets the
    # field rope_theta, then standardize_rope_params: rope_type from "type", original_max_position_embeddings
    rp = rope_scaling or c.get("rope_parameters") or {}
    # nested_rope_parameter_keys: the _rope_type_labels ("main", "compress") present; each gets the defaults
    for params in [rp[k] for k in ("main", "compress") if k in rp] or [rp]:
        params.setdefault("rope_theta", rope_theta)
        if c["partial_rotary_factor"] is not None:  # the field as given (None unless the config sets it)
            params.setdefault("partial_rotary_factor", c["partial_rotary_factor"])
        params.setdefault("rope_type", params.get("type", "default"))
        if params["rope_type"] in ("llama3", "yarn", "longrope"):
            params.setdefault("original_max_position_embeddings", c["max_position_embeddings"])
    n = c["num_hidden_layers"]
    if c["compress_rates"] is None:
        c["compress_rates"] = {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128}
    if legacy_csa is not None:
        c["compress_rates"]["compressed_sparse_attention"] = legacy_csa
    if legacy_hca is not None:
        c["compress_rates"]["heavily_compressed_attention"] = legacy_hca
    if c["layer_types"] is None and legacy_compress_ratios is not None:
        c["layer_types"] = [DEEPSEEK_V4_RATIO_TO_TYPE[r] for r in legacy_compress_ratios]
    if c["layer_types"] is None:
        interleave = ["compressed_sparse_attention" if i % 2 else "heavily_compressed_attention"
                      for i in range(max(n - 2, 0))]
        c["layer_types"] = ["heavily_compressed_attention"] * min(n, 2) + interleave
    c["layer_types"] = list(c["layer_types"][:n])
    if c["partial_rotary_factor"] is None:
        c["partial_rotary_factor"] = (legacy_qk_rope_head_dim / c["head_dim"] if legacy_qk_rope_head_dim is not None
                                      else 64 / 512)  # default_partial_rotary_factor
    c["qk_rope_head_dim"] = int(c["head_dim"] * c["partial_rotary_factor"])
    if isinstance(rp.get("main"), dict) and isinstance(rp.get("compress"), dict):
        c["rope_parameters"] = {"main": rp["main"], "compress": rp["compress"]}
    else:
        yarn = {k: value for k, value in rp.items() if k not in ("main", "compress")}
        main = {"rope_type": "default", "rope_theta": rope_theta, "partial_rotary_factor": c["partial_rotary_factor"]}
        compress = {**yarn, "rope_theta": c["compress_rope_theta"], "partial_rotary_factor": c["partial_rotary_factor"]}
        compress.setdefault("rope_type", "default")
        if compress["rope_type"] == "yarn":
            compress.setdefault("attention_factor", 1.0)
        c["rope_parameters"] = {"main": main, "compress": compress}


def construct_glm_moe_dsa(c: dict, kwargs_theta, rope_scaling) -> None:
    """GlmMoeDsaConfig.__post_init__, then the base class's convert_rope_params_to_dict (rope_theta: default 10000)."""
    defaults = {"num_hidden_layers": 78, "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "index_topk": 2048,
                "index_head_dim": 128, "index_n_heads": 32, "max_position_embeddings": 202752}
    for key, value in defaults.items():
        c.setdefault(key, value)
    n = c["num_hidden_layers"]
    if c.get("indexer_types") is None:
        pattern = c.get("index_topk_pattern")
        if pattern is not None:
            c["indexer_types"] = ([{"F": "full", "S": "shared"}[ch] for ch in pattern] if isinstance(pattern, str)
                                  else list(pattern))
        else:
            freq = max(c.get("index_topk_freq", 1), 1)
            offset = c.get("index_skip_topk_offset", 2)
            c["indexer_types"] = ["full" if (max(i - offset + 1, 0) % freq) == 0 else "shared" for i in range(n)]
    c["qk_head_dim"] = c["qk_nope_head_dim"] + c["qk_rope_head_dim"]
    c["head_dim"] = c["qk_rope_head_dim"]  # "point `head_dim` at it"
    if c.get("layer_types") is None:
        c["layer_types"] = ["indexed_attention"] * n
    rp = rope_scaling or c.get("rope_parameters") or {}
    rp.setdefault("rope_theta", 10_000.0 if kwargs_theta is None else kwargs_theta)
    c["rope_parameters"] = rp


def construct_kimi_linear(c: dict) -> None:
    """KimiLinearConfig.__post_init__ (its attention classes build no rotary embedding)."""
    defaults = {"num_hidden_layers": 27, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "linear_head_dim": 128,
                "linear_num_heads": 32}
    for key, value in defaults.items():
        c.setdefault(key, value)
    c["qk_head_dim"] = c["qk_nope_head_dim"] + c["qk_rope_head_dim"]
    c["head_dim"] = c["qk_rope_head_dim"]
    linear_attn_config = c.get("linear_attn_config") or {}
    c["linear_head_dim"] = linear_attn_config.get("head_dim", c["linear_head_dim"])
    c["linear_num_heads"] = linear_attn_config.get("num_heads", c["linear_num_heads"])
    n = c["num_hidden_layers"]
    if c.get("layer_types") is None:
        if "full_attn_layers" in linear_attn_config and "kda_layers" in linear_attn_config:
            layer_types = [None] * n
            for layer in linear_attn_config["full_attn_layers"]:
                layer_types[layer - 1] = "full_attention"  # types are 1-indexed in the checkpoint
            for layer in linear_attn_config["kda_layers"]:
                layer_types[layer - 1] = "linear_attention"
            c["layer_types"] = layer_types
        else:
            c["layer_types"] = ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(n)]
    c["rope_parameters"] = {}


def default_layer_types(c: dict, mt: str, n: int) -> list[str]:
    """Each configuration class's ``layer_types`` when the config has none."""
    if mt == "llama4_text":  # configuration_llama4.py
        interval = c.get("no_rope_layer_interval", 4)
        c["no_rope_layers"] = c.get("no_rope_layers") or [int((i + 1) % interval != 0) for i in range(n)]
        chunk = c.setdefault("attention_chunk_size", 8192)
        return ["chunked_attention" if no_rope and chunk is not None else "full_attention"
                for no_rope in c["no_rope_layers"]]
    if mt == "smollm3":  # configuration_smollm3.py
        if c.get("no_rope_layers") is None:
            c["no_rope_layers"] = [int((i + 1) % c.get("no_rope_layer_interval", 4) != 0) for i in range(n)]
        sliding = c.get("use_sliding_window", False) and c.get("sliding_window") is not None
        return ["sliding_attention" if sliding and not c["no_rope_layers"][i] else "full_attention" for i in range(n)]
    if mt == "cohere2":  # configuration_cohere2.py
        pattern = c.get("sliding_window_pattern", 4)
        return ["sliding_attention" if bool((i + 1) % pattern) else "full_attention" for i in range(n)]
    if mt == "exaone4":  # configuration_exaone4.py
        pattern = c.get("sliding_window_pattern", 4) if c.get("sliding_window", 4096) is not None else 0
        return ["sliding_attention" if ((i + 1) % pattern != 0 and i < n) else "full_attention" for i in range(n)]
    if mt in ("gpt_oss", "gemma2"):  # configuration_gpt_oss.py, configuration_gemma2.py
        return ["sliding_attention" if bool((i + 1) % 2) else "full_attention" for i in range(n)]
    if mt in ("qwen3_next", "qwen3_5_text"):  # configuration_qwen3_next.py, configuration_qwen3_5.py
        interval = c.get("full_attention_interval", 4)
        return ["linear_attention" if bool((i + 1) % interval) else "full_attention" for i in range(n)]
    if mt in ("qwen2", "qwen3", "qwen2_vl_text", "qwen2_5_vl_text"):
        # configuration_qwen2.py, configuration_qwen3.py, configuration_qwen2_vl.py, configuration_qwen2_5_vl.py
        return ["sliding_attention" if c["sliding_window"] is not None and i >= c["max_window_layers"]
                else "full_attention" for i in range(n)]
    if mt in ("mistral", "qwen3_moe", "phi3", "starcoder2", "ministral3"):
        # their config classes declare no layer_types, and their attention windows every layer alike: the cache
        # names each layer (cache_utils.py, get_layer_types_and_kwargs; read in the 5.25.0 wheel): "sliding_attention"
        # where config.sliding_window is not None, else "full_attention"
        return ["sliding_attention" if c.get("sliding_window") is not None else "full_attention"] * n
    return ["full_attention"] * n


# --- modeling_<model>.py: the rotary class (inv_freq per layer type) and the attention class -------------------

# the compute_default_rope_parameters that read partial_rotary_factor (the others turn the whole head_dim)
PARTIAL_DEFAULT = ("qwen3_next", "qwen3_5_text", "gpt_neox", "glm", "glm4", "glm4_moe", "phi", "stablelm", "nemotron",
                   "deepseek_v4")  # DeepseekV4RotaryEmbedding.compute_default_rope_parameters: "partial rope"


def rotary(c: dict, layer_type: str) -> tuple[np.ndarray, float]:
    """The rotary class's ``{layer_type}_inv_freq`` (or ``inv_freq``) and ``attention_scaling``."""
    rp = c["rope_parameters"]
    if c["model_type"] == "deepseek_v4":  # DeepseekV4Attention.rope_layer_type: sliding -> "main", else "compress"
        layer_type = layer_type if layer_type in ("main", "compress") else (
            "main" if layer_type == "sliding_attention" else "compress")
    nested = layer_type in rp and isinstance(rp[layer_type], dict)
    params = rp[layer_type] if nested else rp
    cfg = dict(c)
    if c["model_type"] == "deepseek_v3":  # configuration_deepseek_v3.py: head_dim = qk_rope_head_dim
        cfg["head_dim"] = c.get("qk_rope_head_dim", 64)
    if c["model_type"] == "stablelm":  # modeling_stablelm.py: getattr(config, "head_dim", None) or the split
        cfg["head_dim"] = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    if layer_type in c.get("per_layer_head_dim", {}):  # Gemma 4's per_layer_config
        cfg["head_dim"] = c["per_layer_head_dim"][layer_type]
    rope_type = params["rope_type"]
    if rope_type == "gptj":  # modeling_gptj.py, create_sinusoidal_positions(max_positions, rotary_dim)
        dim = c["rotary_dim"]
        return 1.0 / (10000 ** (np.arange(0, dim, 2, dtype=np.float64) / dim)), 1.0
    if rope_type == "default":
        return compute_default(cfg, params, partial=c["model_type"] in PARTIAL_DEFAULT)
    if rope_type == "yarn":
        # _compute_yarn_parameters reads truncate from config.rope_parameters: DeepSeek V4's top level is
        # {"main", "compress"}, so never a truncate
        top = True if nested else rp.get("truncate", True)
        return compute_yarn(cfg, params, top_level_truncate=top)
    return ROPE_INIT_FUNCTIONS[rope_type](cfg, params)


def attention(c: dict, layer_idx: int) -> dict:
    """What the model's attention class sets for layer ``layer_idx``."""
    mt = c["model_type"]
    layer_type = c["layer_types"][layer_idx]
    head_dim = c.get("per_layer_head_dim", {}).get(layer_type) or c.get("head_dim") or (
        c["hidden_size"] // c["num_attention_heads"])
    if mt in ("stablelm", "falcon"):  # StableLmAttention, FalconAttention: self.head_dim = hidden_size // num_heads
        head_dim = c["hidden_size"] // c["num_attention_heads"]
    out = {"layer_type": layer_type, "use_rope": layer_type != "linear_attention", "interleaved": False,
           "temperature": None}
    if mt == "deepseek_v3":  # DeepseekV3Attention: scaling = yarn_apply_mscale(rope_parameters, qk_head_dim ** -0.5)
        qk_head_dim = c.get("qk_nope_head_dim", 128) + c.get("qk_rope_head_dim", 64)
        scaling = qk_head_dim ** (-0.5)
        rp = c["rope_parameters"]
        if rp.get("rope_type", "default") != "default":
            mscale_all_dim = rp.get("mscale_all_dim", 0)
            if mscale_all_dim:
                factor = rp["factor"]
                mscale = 1.0 if factor <= 1 else 0.1 * mscale_all_dim * math.log(factor) + 1.0
                scaling = scaling * mscale * mscale
        out["scaling"] = scaling
        out["interleaved"] = bool(c.get("rope_interleave", True))
    elif mt == "glm_moe_dsa":  # GlmMoeDsaAttention: yarn_apply_mscale(config.rope_parameters, qk_head_dim ** -0.5)
        scaling = c["qk_head_dim"] ** (-0.5)
        rp = c["rope_parameters"]
        if rp.get("rope_type", "default") != "default" and rp.get("mscale_all_dim", 0):
            factor = rp["factor"]
            mscale = 1.0 if factor <= 1 else 0.1 * rp["mscale_all_dim"] * math.log(factor) + 1.0
            scaling = scaling * mscale * mscale
        out["scaling"] = scaling
        out["interleaved"] = True  # apply_rotary_pos_emb_interleave, whatever rope_interleave says
    elif mt == "deepseek_v4":  # DeepseekV4Attention: self.scaling = self.head_dim**-0.5; rotate_half on 0::2, 1::2
        out["scaling"] = c["head_dim"] ** -0.5
        out["interleaved"] = True
    elif mt == "kimi_linear":  # KimiLinearAttention: qk_head_dim ** (-0.5); the KDA kernels: 1 / sqrt(head_dim)
        out["scaling"] = (c["qk_head_dim"] if layer_type == "full_attention" else c["linear_head_dim"]) ** -0.5
        out["use_rope"] = False  # neither KimiLinearAttention nor KimiLinearDeltaAttention applies a rotary embedding
    elif mt in ("gemma3_text", "gemma2"):  # Gemma3Attention, Gemma2Attention: query_pre_attn_scalar ** -0.5
        out["scaling"] = c["query_pre_attn_scalar"] ** -0.5
    elif mt == "granite":  # GraniteAttention: scaling = config.attention_multiplier
        out["scaling"] = c["attention_multiplier"]
    elif mt in ("gemma4_text", "gemma3n_text"):  # Gemma4TextAttention, Gemma3nTextAttention: scaling = 1.0
        out["scaling"] = 1.0
    else:
        out["scaling"] = head_dim ** -0.5
    if mt == "llama4_text":  # Llama4TextAttention
        out["use_rope"] = bool(c["no_rope_layers"][layer_idx])
        out["interleaved"] = True
        if c.get("attn_temperature_tuning", True) and not out["use_rope"]:
            attn_scale, floor_scale = c.get("attn_scale", 0.1), c.get("floor_scale", 8192)
            out["temperature"] = lambda positions: (
                np.log1p(np.floor((np.asarray(positions, dtype=np.float64) + 1.0) / floor_scale)) * attn_scale + 1.0)
    elif mt == "gptj":  # GPTJAttention: rotate_every_two
        out["interleaved"] = True
    elif mt == "smollm3":  # SmolLM3Attention: use_rope = config.no_rope_layers[layer_idx]
        out["use_rope"] = bool(c["no_rope_layers"][layer_idx])
    elif mt == "cohere2":  # Cohere2Attention: RoPE only when sliding_window is not None; repeat_interleave
        out["use_rope"] = layer_type == "sliding_attention"
        out["interleaved"] = True
    elif mt == "cohere":  # CohereRotaryEmbedding: torch.repeat_interleave(freqs, 2); rotate_half on x[..., ::2]
        out["interleaved"] = True
    elif mt in ("glm", "glm4"):  # apply_rotary_pos_emb: cos[..., : cos.shape[-1] // 2].repeat_interleave(2)
        out["interleaved"] = True
    elif mt == "exaone4":  # Exaone4Attention: "if self.sliding_window is None or self.is_sliding"
        out["use_rope"] = c.get("sliding_window", 4096) is None or layer_type == "sliding_attention"
    elif mt == "ministral3":  # Ministral3Attention: get_llama_4_attn_scale on every layer
        rp = c["rope_parameters"]
        beta, length = rp.get("llama_4_scaling_beta"), rp.get("original_max_position_embeddings")
        out["temperature"] = lambda positions: 1 + beta * np.log(1 + np.floor(np.asarray(positions, float) / length))
    if mt in ("mistral", "qwen3_moe", "phi3", "starcoder2", "ministral3", "deepseek_v4"):
        # MistralAttention, Qwen3MoeAttention, Phi3Attention, Starcoder2Attention, Ministral3Attention,
        # DeepseekV4Attention: config.sliding_window on every layer
        out["sliding_window"] = c.get("sliding_window")
    elif layer_type == "sliding_attention":
        out["sliding_window"] = c.get("sliding_window")
        # modeling_gemma3.py, _bidirectional_window_overlay: abs(q_idx - kv_idx) < sliding_window
        out["bidirectional"] = mt == "gemma3_text" and bool(c.get("use_bidirectional_attention"))
    elif layer_type == "chunked_attention":
        out["sliding_window"] = c.get("attention_chunk_size")
    else:
        out["sliding_window"] = None
    out["head_dim"] = head_dim if mt != "deepseek_v3" else c.get("qk_nope_head_dim", 128) + c.get(
        "qk_rope_head_dim", 64)
    if mt == "glm_moe_dsa" or (mt == "kimi_linear" and layer_type == "full_attention"):
        out["head_dim"] = c["qk_head_dim"]
    elif mt == "kimi_linear":
        out["head_dim"] = c["linear_head_dim"]
    out["qk_norm"] = qk_norm(c, mt, layer_type, out["use_rope"], out["head_dim"])
    # where the rotated slice sits: MLA splits q into [nope | rope] (q_pass, q_rot = torch.split(q, [nope, rope])),
    # DeepSeek V4's apply_rotary_pos_emb takes x[..., -rope_dim:]; everyone else rotates x[..., :rotary_dim]
    out["rotated"] = None if not out["use_rope"] else (
        "trailing" if mt in ("deepseek_v3", "deepseek_v4", "glm_moe_dsa") else "leading")
    out["sinks"] = mt in ("gpt_oss", "deepseek_v4")  # GptOssAttention, DeepseekV4Attention: self.sinks (s_aux)
    out["compressed"] = compressed_branch(c, layer_type)
    out["indexer"] = indexer(c, layer_idx, layer_type)
    return out


def compressed_branch(c: dict, layer_type: str) -> dict | None:
    """DeepSeek V4's compressor (modeling_deepseek_v4.py): DeepseekV4CSACompressor / DeepseekV4HCACompressor.forward
    and the cache's store_compression_weights, with no cache (first_window_position 0) and over a whole prefix."""
    if c["model_type"] != "deepseek_v4" or layer_type == "sliding_attention":
        return None
    rate = c["compress_rates"][layer_type]
    csa = layer_type == "compressed_sparse_attention"

    def positions(n_windows: int) -> np.ndarray:
        # positions = torch.arange(n_windows) * self.compress_rate + first_window_position
        return np.arange(n_windows) * rate + 0

    def windows(seq_len: int) -> int:
        # usable = (kv.shape[1] // self.compress_rate) * self.compress_rate; n_windows = usable // compress_rate
        return ((seq_len // rate) * rate) // rate

    def sources(w: int) -> list[int]:
        # CSA: new_kv[:, :, ratio:] = window w's Cb; new_kv[:, 1:, :ratio] = window w - 1's Ca (window 0: none)
        own = list(range(w * rate, (w + 1) * rate))
        return (list(range((w - 1) * rate, w * rate)) if csa and w > 0 else []) + own

    def visible(position: int) -> int:
        # after a prefix of position + 1 tokens, the entries that exist (compressed_len) less those with
        # entry_indices >= (position_ids + 1) // self.compress_rate (block_bias -inf; CSA: the indexer's -1)
        entry_indices = np.arange(windows(position + 1))
        return int(np.count_nonzero(~(entry_indices >= (position + 1) // rate)))

    return {"rate": rate, "positions": positions, "windows": windows, "sources": sources, "visible": visible,
            "top_k": c["index_topk"] if csa else None, "rope_layer_type": "compress"}


def indexer(c: dict, layer_idx: int, layer_type: str) -> dict | None:
    """GlmMoeDsaIndexer (modeling_glm_moe_dsa.py: q_rot, q_pass = torch.split(q, [qk_rope_head_dim, ...]),
    interleaved) on "full" layers, none on "shared" ones; DeepseekV4Indexer (modeling_deepseek_v4.py, on the CSA
    compressor: its q and compressed keys through apply_rotary_pos_emb, the trailing rope slice)."""
    if c["model_type"] == "glm_moe_dsa":
        full = c["indexer_types"][layer_idx] == "full"
        return {"heads": c["index_n_heads"], "head_dim": c["index_head_dim"], "rotary_dim": c["qk_rope_head_dim"],
                "rotated": "leading", "top_k": c["index_topk"], "own": full}
    if c["model_type"] == "deepseek_v4" and layer_type == "compressed_sparse_attention":
        # DeepseekV4Indexer: self.rotary_emb(..., layer_type="compress"); apply_rotary_pos_emb turns the last
        # 2 · cos.shape[-1] channels (cos: one entry per pair of the "compress" inv_freq)
        return {"heads": c["index_n_heads"], "head_dim": c["index_head_dim"],
                "rotary_dim": 2 * len(rotary(c, "compress")[0]), "rotated": "trailing", "top_k": c["index_topk"],
                "own": True}
    return None


def qk_norm(c: dict, mt: str, layer_type: str, use_rope: bool, head_dim: int) -> dict | None:
    """The modules the attention class applies to q and k: which order against the rotation, on what (each
    head's view, or the whole q_proj output), over how many channels, with x.pow(2).mean or .sum, and how the
    weight enters (``"w"``: weight ones; ``"1+w"``: zeros)."""
    order = "norm, rotate" if use_rope else "norm"
    if layer_type == "linear_attention":  # *GatedDeltaNet.forward: use_qk_l2norm_in_kernel=True, l2norm over dim -1
        # (KimiLinearDeltaAttention: chunk_kimi_delta_attention(..., use_qk_l2norm_in_kernel=True), on linear_head_dim)
        channels = c["linear_head_dim"] if mt == "kimi_linear" else c.get("linear_key_head_dim", 128)
        return {"order": "norm", "on": "heads", "channels": channels, "reduce": "sum", "scale": None}
    if mt == "deepseek_v4":  # DeepseekV4Attention: q_b_norm = DeepseekV4UnweightedRMSNorm on each head of q,
        # kv_norm = DeepseekV4RMSNorm(head_dim) (weight ones) on the one K=V head, both before apply_rotary_pos_emb
        return {"order": order, "on": "heads", "channels": head_dim, "reduce": "mean", "scale": "w on k"}
    if mt == "llama4_text":  # Llama4TextAttention: `if self.config.use_qk_norm and self.use_rope`, after the rotary
        if not (c.get("use_qk_norm", True) and use_rope):
            return None
        return {"order": "rotate, norm", "on": "heads", "channels": head_dim, "reduce": "mean", "scale": None}  # Llama4TextL2Norm
    if mt in ("qwen3", "qwen3_moe", "qwen3_vl_text", "exaone4", "gemma3n_text", "gemma4_text"):
        # Qwen3RMSNorm / Qwen3MoeRMSNorm / Qwen3VLTextRMSNorm / Exaone4RMSNorm: weight = torch.ones(hidden_size);
        # Gemma3nRMSNorm / Gemma4RMSNorm(with_scale=True): weight = torch.ones(dim)
        return {"order": order, "on": "heads", "channels": head_dim, "reduce": "mean", "scale": "w"}
    if mt in ("gemma3_text", "qwen3_next", "qwen3_5_text"):
        # Gemma3RMSNorm / Qwen3NextRMSNorm / Qwen3_5RMSNorm: weight = torch.zeros(dim), output * (1.0 + weight)
        return {"order": order, "on": "heads", "channels": head_dim, "reduce": "mean", "scale": "1+w"}
    if mt in ("olmo3", "olmo2"):  # Olmo3Attention / Olmo2Attention: Olmo3RMSNorm / Olmo2RMSNorm(
        # config.num_attention_heads * self.head_dim) on q_proj(h); Olmo3Config, Olmo2Config: num_attention_heads 32
        return {"order": order, "on": "q_proj", "channels": c.get("num_attention_heads", 32) * head_dim, "reduce": "mean",
                "scale": "w"}
    if mt == "phi" and c.get("qk_layernorm", False):  # PhiAttention: nn.LayerNorm(hidden_size // heads), affine
        return {"order": order, "on": "heads", "channels": c["hidden_size"] // c["num_attention_heads"],
                "reduce": "centred", "scale": "w+b"}
    if mt == "stablelm" and c.get("qk_layernorm", False):  # StableLmLayerNormPerHead: nn.LayerNorm(head_dim,
        # bias=False), one per head
        return {"order": order, "on": "heads", "channels": head_dim, "reduce": "centred", "scale": "w per head"}
    if mt == "cohere" and c.get("use_qk_norm", False):  # CohereLayerNorm((heads, head_dim)): mean removed over the
        # last dim, weight (heads, head_dim), no bias
        return {"order": order, "on": "heads", "channels": head_dim, "reduce": "centred", "scale": "w per head"}
    if mt == "glm4_moe" and c.get("use_qk_norm", False):  # Glm4MoeRMSNorm(head_dim): weight = torch.ones
        return {"order": order, "on": "heads", "channels": head_dim, "reduce": "mean", "scale": "w"}
    return None  # no q_norm, k_norm or qk_norm in the attention class (DeepSeek-V3's norms act on its latents)


def mrope_axes(c: dict, pairs: int) -> list[str] | None:
    """Which axis (t, h, w) each pair follows: Qwen2-VL's apply_multimodal_rotary_pos_emb (contiguous
    mrope_section blocks) or Qwen3-VL's / Qwen3.5's recomposition_frequencies (interleaved)."""
    mt = c["model_type"]
    rp = c["rope_parameters"]
    if mt in ("qwen3_vl_text", "qwen3_5_text"):
        section = rp.get("mrope_section", [24, 20, 20] if mt == "qwen3_vl_text" else [11, 11, 10])
        axes = ["t"] * pairs
        for dim, offset in enumerate((1, 2), start=1):
            # freqs_thw[..., slice(offset, section[dim] * 3, 3)]: a slice stops at the last pair
            for k in range(offset, min(section[dim] * 3, pairs), 3):
                axes[k] = "thw"[dim]
        return axes
    if mt in ("qwen2_vl_text", "qwen2_5_vl_text", "qwen2_vl", "qwen2_5_vl") or "mrope_section" in rp:
        section = rp.get("mrope_section", [16, 24, 24])
        return [axis for axis, count in zip("thw", section, strict=True) for _ in range(count)]
    return None


def hf_layers(config: dict) -> list[dict]:
    """One dict per layer: layer_type, sliding_window, use_rope, inv_freq, attention_scaling, scaling,
    interleaved, temperature, head_dim, mrope axes, qk_norm, rotated, sinks, compressed, indexer; as transformers
    5 builds the model."""
    c = construct(config)
    out = []
    for i, layer_type in enumerate(c["layer_types"]):
        a = attention(c, i)
        if a["use_rope"]:
            a["inv_freq"], a["attention_scaling"] = rotary(c, layer_type)
            a["mrope_axes"] = mrope_axes(c, len(a["inv_freq"]))
        else:
            a["inv_freq"], a["attention_scaling"], a["mrope_axes"] = None, None, None
        out.append(a)
    return out


# --- modeling_<model>.py: the rotary class's forward and apply_rotary_pos_emb, on one head --------------------------


def _rotate_half(x: np.ndarray) -> np.ndarray:
    """rotate_half of modeling_llama.py (and Phi, StableLM, Nemotron, OLMo 2, Gemma, Falcon, GLM-4-MoE)."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return np.concatenate((-x2, x1), axis=-1)


def _rotate_half_interleaved(x: np.ndarray) -> np.ndarray:
    """rotate_half of modeling_glm.py and modeling_cohere.py: torch.stack((-x2, x1), dim=-1).flatten(-2)."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return np.stack((-x2, x1), axis=-1).reshape(x.shape)


def rotate(config: dict, x: np.ndarray, positions, layer: int = 0) -> np.ndarray:
    """One head's q (shape (T, head_dim)) after the family's rotary forward and apply_rotary_pos_emb (layer 0,
    or ``layer``). GLM-5's apply_rotary_pos_emb_interleave returns its pairs reordered (evens, then odds), the same
    for q and k: compare q·k, not the vectors."""
    c = construct(config)
    mt = c["model_type"]
    if mt == "kimi_linear":  # neither attention class applies a rotary embedding
        return x.copy()
    inv_freq, attention_scaling = rotary(c, c["layer_types"][layer])
    freqs = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    if mt == "deepseek_v4":
        # DeepseekV4RotaryEmbedding.forward: cos = freqs.cos() (no duplication); apply_rotary_pos_emb: repeat_interleave
        # (2), then the trailing rope_dim channels: rope * cos + rotate_half(rope) * sin, rotate_half on 0::2 / 1::2
        cos = np.repeat(np.cos(freqs) * attention_scaling, 2, axis=-1)
        sin = np.repeat(np.sin(freqs) * attention_scaling, 2, axis=-1)
        rope_dim = cos.shape[-1]
        nope, rope = x[..., :-rope_dim], x[..., -rope_dim:]
        return np.concatenate((nope, rope * cos + _rotate_half_interleaved(rope) * sin), axis=-1)
    if mt == "glm_moe_dsa":
        # GlmMoeDsaAttention.forward: q_pass, q_rot = torch.split(q, [qk_nope_head_dim, qk_rope_head_dim]);
        # apply_rotary_pos_emb_interleave: cos[..., : cos.shape[-1] // 2] of cat(freqs, freqs); q1, q2 = q[0::2],
        # q[1::2]; cat([q1 cos - q2 sin, q2 cos + q1 sin]); then torch.cat((q_pass, q_rot))
        emb = np.concatenate((freqs, freqs), axis=-1)
        cos, sin = np.cos(emb) * attention_scaling, np.sin(emb) * attention_scaling
        cos, sin = cos[..., : cos.shape[-1] // 2], sin[..., : sin.shape[-1] // 2]
        rope = c["qk_rope_head_dim"]
        q_pass, q_rot = x[..., : x.shape[-1] - rope], x[..., x.shape[-1] - rope:]
        q1, q2 = q_rot[..., 0::2], q_rot[..., 1::2]
        return np.concatenate((q_pass, q1 * cos - q2 * sin, q2 * cos + q1 * sin), axis=-1)
    if mt == "cohere":  # CohereRotaryEmbedding.forward: torch.repeat_interleave(freqs, 2, dim=-1)
        emb = np.repeat(freqs, 2, axis=-1)
    else:  # torch.cat((freqs, freqs), dim=-1)
        emb = np.concatenate((freqs, freqs), axis=-1)
    cos, sin = np.cos(emb) * attention_scaling, np.sin(emb) * attention_scaling
    if mt == "cohere":  # modeling_cohere.py, apply_rotary_pos_emb
        return x * cos + _rotate_half_interleaved(x) * sin
    if mt in ("glm", "glm4"):  # modeling_glm.py, apply_rotary_pos_emb: "Interleave them instead of usual shape"
        cos = np.repeat(cos[..., : cos.shape[-1] // 2], 2, axis=-1)
        sin = np.repeat(sin[..., : sin.shape[-1] // 2], 2, axis=-1)
        rotary_dim = cos.shape[-1]
        x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
        return np.concatenate((x_rot * cos + _rotate_half_interleaved(x_rot) * sin, x_pass), axis=-1)
    if mt in ("phi", "stablelm"):  # PhiAttention / StableLmAttention.forward: query_states[..., : self.rotary_ndims]
        head_dim = attention(c, 0)["head_dim"]
        rotary_ndims = int(head_dim * c["rope_parameters"]["partial_rotary_factor"])
        x_rot, x_pass = x[..., :rotary_ndims], x[..., rotary_ndims:]
        return np.concatenate((x_rot * cos + _rotate_half(x_rot) * sin, x_pass), axis=-1)
    if mt in ("nemotron", "glm4_moe", "gpt_neox", "qwen3_next", "qwen3_5_text"):  # rot_dim = cos.shape[-1]
        rotary_dim = cos.shape[-1]
        x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
        return np.concatenate((x_rot * cos + _rotate_half(x_rot) * sin, x_pass), axis=-1)
    return x * cos + _rotate_half(x) * sin  # modeling_llama.py, apply_rotary_pos_emb (OLMo 2, Gemma, Falcon, ...)
