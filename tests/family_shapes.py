"""The hand-built configs of issue 42 §2: one or more per family read since then, and the four edge cases.

Plain dicts, nothing imported: ``tests/test_families.py`` reads them, and ``python -m tools.hf_reference --configs``
builds each with transformers 5.24.0's own config class to record what the class makes of it
(``tests/data/hf_config_reference.json``). The sizes are made up, not any checkpoint's.
"""

# one or more per family read since issue 42
NEW = {
    "OLMo 2": {"model_type": "olmo2", "num_hidden_layers": 3, "hidden_size": 512, "num_attention_heads": 8,
               "num_key_value_heads": 2, "rope_theta": 5e5, "max_position_embeddings": 4096},
    "OLMo 2 head_dim and YaRN": {
        "model_type": "olmo2", "num_hidden_layers": 2, "hidden_size": 512, "num_attention_heads": 4, "head_dim": 96,
        "max_position_embeddings": 16384,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}},
    "GLM defaults (head_dim 128, partial 0.5)": {
        "model_type": "glm", "num_hidden_layers": 2, "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 1e4},
    "GLM-4 partial in rope_parameters": {
        "model_type": "glm4", "num_hidden_layers": 2, "hidden_size": 2048, "num_attention_heads": 32, "head_dim": 64,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.75}},
    "GLM-4 top-level partial with linear scaling": {
        "model_type": "glm4", "num_hidden_layers": 2, "hidden_size": 2048, "num_attention_heads": 16,
        "partial_rotary_factor": 0.25, "rope_theta": 5e5, "rope_scaling": {"rope_type": "linear", "factor": 2.0}},
    "GLM-4-MoE with use_qk_norm": {
        "model_type": "glm4_moe", "num_hidden_layers": 3, "hidden_size": 1024, "num_attention_heads": 8,
        "head_dim": 128, "num_key_value_heads": 2, "partial_rotary_factor": 0.5, "rope_theta": 1e6,
        "use_qk_norm": True, "max_position_embeddings": 131072},
    "GLM-4-MoE defaults": {"model_type": "glm4_moe", "num_hidden_layers": 2, "hidden_size": 1024,
                           "num_attention_heads": 8, "rope_theta": 1e6},
    "Phi partial 0.4": {"model_type": "phi", "num_hidden_layers": 2, "hidden_size": 2560, "num_attention_heads": 32,
                        "partial_rotary_factor": 0.4, "rope_theta": 1e4, "max_position_embeddings": 2048},
    "Phi defaults with qk_layernorm": {"model_type": "phi", "num_hidden_layers": 2, "hidden_size": 1024,
                                       "num_attention_heads": 16, "qk_layernorm": True},
    "StableLM defaults (partial 0.25)": {"model_type": "stablelm", "num_hidden_layers": 2, "hidden_size": 2560,
                                         "num_attention_heads": 32, "rope_theta": 1e4},
    "StableLM qk_layernorm, partial 0.5": {
        "model_type": "stablelm", "num_hidden_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
        "num_key_value_heads": 8, "partial_rotary_factor": 0.5, "qk_layernorm": True, "rope_theta": 1e4},
    "Cohere defaults (base 500,000)": {"model_type": "cohere", "num_hidden_layers": 2, "hidden_size": 1024,
                                       "num_attention_heads": 8},
    "Cohere use_qk_norm": {"model_type": "cohere", "num_hidden_layers": 2, "hidden_size": 1024,
                           "num_attention_heads": 8, "rope_theta": 8e6, "use_qk_norm": True,
                           "max_position_embeddings": 131072},
    "Gemma defaults (head_dim 256)": {"model_type": "gemma", "num_hidden_layers": 2, "hidden_size": 3072,
                                      "num_attention_heads": 16, "rope_theta": 1e4},
    "Gemma head_dim and linear": {"model_type": "gemma", "num_hidden_layers": 2, "hidden_size": 2048,
                                  "num_attention_heads": 8, "head_dim": 128, "rope_theta": 1e4,
                                  "rope_scaling": {"rope_type": "linear", "factor": 4.0}},
    "Falcon multi-query": {"model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 4544,
                           "num_attention_heads": 71, "rope_theta": 1e4, "max_position_embeddings": 2048},
    "Falcon new architecture, dynamic": {
        "model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 1024, "num_attention_heads": 16,
        "num_kv_heads": 4, "new_decoder_architecture": True, "max_position_embeddings": 2048,
        "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}},
    "Nemotron defaults (partial 0.5)": {"model_type": "nemotron", "num_hidden_layers": 2, "hidden_size": 6144,
                                        "num_attention_heads": 48, "num_key_value_heads": 8, "rope_theta": 1e4},
    "Nemotron null head_dim": {"model_type": "nemotron", "num_hidden_layers": 2, "hidden_size": 1024,
                               "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": None,
                               "partial_rotary_factor": 0.25},
    "Llama": {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 1024, "num_attention_heads": 8,
              "rope_theta": 5e5},
}

# the four edge cases of issue 42 §2, as hand-built configs
EDGE = {
    "Qwen2 use_sliding_window false, sliding layer_types": {
        "model_type": "qwen2", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8,
        "num_key_value_heads": 2, "rope_theta": 1e6, "use_sliding_window": False, "sliding_window": 1024,
        "layer_types": ["full_attention", "full_attention", "sliding_attention", "sliding_attention"],
        "dtype": "bfloat16"},
    "Qwen2.5-VL use_sliding_window (max_window_layers 80)": {
        "model_type": "qwen2_5_vl", "num_hidden_layers": 82, "hidden_size": 512, "num_attention_heads": 8,
        "rope_theta": 1e6, "use_sliding_window": True, "sliding_window": 2048,
        "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}},
    "Cohere2 head_dim key": {
        "model_type": "cohere2", "num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 256, "sliding_window": 512, "rope_theta": 5e4, "dtype": "bfloat16"},
    "Ministral 3 sliding_window": {
        "model_type": "ministral3", "num_hidden_layers": 3, "hidden_size": 5120, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "sliding_window": 4096, "max_position_embeddings": 262144,
        "dtype": "bfloat16"},
    "Qwen3.5 without mrope_section": {
        "model_type": "qwen3_5_text", "num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 128, "dtype": "bfloat16",
        "rope_parameters": {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25}},
}

# the families transformers 5.25.0 added that issue 44 §2 bundles (DeepSeek V4, GLM-5, Kimi Linear): hand-built
# shapes held to tests/hf5_reference.py's transcription of the 5.25.0 code (not in hf_config_reference.json, which
# transformers 5.24.0 built)
NEW_2026 = {
    "DeepSeek V4 defaults": {"model_type": "deepseek_v4", "num_hidden_layers": 6},
    "DeepSeek V4 legacy compress_ratios, YaRN, qk_rope_head_dim 32": {
        "model_type": "deepseek_v4", "num_hidden_layers": 5, "head_dim": 256, "num_attention_heads": 8,
        "hidden_size": 1024, "qk_rope_head_dim": 32, "compress_ratios": [0, 4, 128, 4, 0, 4], "rope_theta": 1e4,
        "compress_rope_theta": 1e5, "sliding_window": 64, "max_position_embeddings": 65536,
        "rope_scaling": {"type": "yarn", "factor": 4, "original_max_position_embeddings": 4096, "beta_fast": 32,
                         "beta_slow": 1},
        "index_topk": 16, "index_head_dim": 64, "index_n_heads": 8},
    "DeepSeek V4 layer_types and compress_rates": {
        "model_type": "deepseek_v4", "num_hidden_layers": 4, "head_dim": 128, "partial_rotary_factor": 0.25,
        "layer_types": ["compressed_sparse_attention", "sliding_attention", "heavily_compressed_attention",
                        "compressed_sparse_attention"],
        "compress_rates": {"compressed_sparse_attention": 8, "heavily_compressed_attention": 32},
        "sliding_window": 16, "rope_parameters": {"rope_type": "default", "rope_theta": 5e4}},
    "DeepSeek V4 nested main and compress": {
        "model_type": "deepseek_v4", "num_hidden_layers": 3, "head_dim": 128, "compress_ratios": [0, 4, 128],
        "max_position_embeddings": 32768,
        "rope_parameters": {"main": {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5},
                            "compress": {"rope_type": "yarn", "rope_theta": 4e4, "factor": 8.0,
                                         "original_max_position_embeddings": 4096, "partial_rotary_factor": 0.25}}},
    "DeepSeek V4 nested, default sets, no partial factor": {
        "model_type": "deepseek_v4", "num_hidden_layers": 2, "head_dim": 64, "compress_ratios": [0, 128],
        "rope_parameters": {"main": {"rope_type": "default", "rope_theta": 1e4},
                            "compress": {"rope_type": "default", "rope_theta": 4e4}}},
    "GLM-5 defaults": {"model_type": "glm_moe_dsa", "num_hidden_layers": 3},
    "GLM-5 index_topk_freq 2, YaRN with mscale_all_dim": {
        "model_type": "glm_moe_dsa", "num_hidden_layers": 6, "qk_rope_head_dim": 32, "qk_nope_head_dim": 96,
        "index_topk_freq": 2, "index_head_dim": 64, "index_n_heads": 4, "index_topk": 32,
        "max_position_embeddings": 16384,
        "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0,
                            "original_max_position_embeddings": 4096, "mscale_all_dim": 1.0}},
    "GLM-5 index_topk_pattern FSSF": {
        "model_type": "glm_moe_dsa", "num_hidden_layers": 4, "index_topk_pattern": "FSSF",
        "rope_parameters": {"rope_type": "default", "rope_theta": 1e6}},
    "Kimi Linear defaults": {"model_type": "kimi_linear", "num_hidden_layers": 9},
    "Kimi Linear 1-indexed layer lists": {
        "model_type": "kimi_linear", "num_hidden_layers": 5, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32,
        "linear_attn_config": {"full_attn_layers": [2, 5], "kda_layers": [1, 3, 4], "head_dim": 64, "num_heads": 4,
                               "short_conv_kernel_size": 3}},
}
