"""posenc_helpers.serving and its figures: each helper against a literal implementation (tests/literal_serving.py),
the numpy model against the course's other implementations of the lab's model, and the properties the notebook
teaches (exact conversions, relative positions, the shift's exactness), every refusal by name."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import literal_serving as lit
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers import decoder, serving, streaming
from posenc_helpers.configs import bundled_configs, layer_positions
from posenc_helpers.core import frequencies

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "18-position-when-serving.ipynb"


def _tiny(seed=1, layers=2, vocab=7, d_model=8, heads=2):
    return streaming.random_params(vocab=vocab, d_model=d_model, heads=heads, layers=layers, seed=seed)


def _ids(T, vocab=7, batch=2, seed=0):
    return np.random.default_rng(seed).integers(0, vocab, (batch, T))


# ---- rotation, layouts and signs ----------------------------------------------------------------------------------


@given(layout=st.sampled_from(serving.LAYOUTS), sign=st.sampled_from([1, -1]), factor=st.floats(0.5, 2.0),
       seed=st.integers(0, 1000))
@settings(max_examples=25, deadline=None)
def test_rotate_is_the_literal_rotation(layout, sign, factor, seed):
    rng = np.random.default_rng(seed)
    x, pos, omega = rng.standard_normal((5, 8)), rng.uniform(0, 50, 5), rng.uniform(0, 1, 4)
    got = serving.rotate(x, pos, omega, layout=layout, sign=sign, factor=factor)
    assert np.allclose(got, lit.rotate(x, pos, omega, layout, sign, factor), atol=1e-12)


def test_interleaved_rotation_is_the_courses_rope_and_half_split_is_the_decoders():
    from posenc_helpers.core import rope

    rng = np.random.default_rng(3)
    x, pos = rng.standard_normal((6, 16)), np.arange(6.0)
    omega = frequencies(16, 10000.0)
    assert np.allclose(serving.rotate(x, pos, omega), rope(x, pos), atol=1e-12)
    assert np.allclose(serving.rotate(x, pos, omega, layout="half"), decoder.rope_rotate(x, pos, omega, 16), atol=1e-12)


def test_shifting_a_rotated_key_is_rotating_it_at_the_shifted_position():
    rng = np.random.default_rng(4)
    k, omega = rng.standard_normal((5, 16)), frequencies(16)
    pos = np.array([40.0, 41, 57, 63, 200])
    for layout in serving.LAYOUTS:
        back = serving.rotate(serving.rotate(k, pos, omega, layout=layout), np.full(5, -32.0), omega, layout=layout)
        assert np.abs(back - serving.rotate(k, pos - 32, omega, layout=layout)).max() < 1e-12


def test_to_half_split_is_transformers_permute_on_q_and_k_only():
    p = _tiny(d_model=16, heads=2)
    half = serving.to_half_split(p, heads=2)
    for before, after in zip(p["blocks"], half["blocks"], strict=True):
        qkv, new = np.asarray(before["qkv"]), after["qkv"]
        # transformers permutes the rows of wq and wk (out, in); the lab stores their transposes as columns
        assert np.array_equal(new[:, :16], lit.hf_permute(qkv[:, :16].T, 2).T)
        assert np.array_equal(new[:, 16:32], lit.hf_permute(qkv[:, 16:32].T, 2).T)
        assert np.array_equal(new[:, 32:], qkv[:, 32:])
    back = serving.to_interleaved(half, heads=2)
    assert all(np.array_equal(a["qkv"], b["qkv"]) for a, b in zip(back["blocks"], p["blocks"], strict=True))


def test_the_permutation_makes_the_layouts_agree_and_forgetting_it_changes_every_position_but_the_first():
    p, x = _tiny(d_model=16, heads=2), _ids(12)
    right = serving.forward(p, x, heads=2)
    assert np.abs(serving.forward(serving.to_half_split(p, heads=2), x, heads=2, layout="half") - right).max() < 1e-12
    forgot = serving.forward(p, x, heads=2, layout="half")
    assert np.abs(forgot[:, 0] - right[:, 0]).max() < 1e-12  # position 0: nothing turns
    assert np.abs(forgot[:, 1:] - right[:, 1:]).max(axis=(0, 2)).min() > 1e-6


def test_flipping_the_sign_is_absorbed_exactly_by_the_flipped_weights_in_either_layout():
    p, x = _tiny(d_model=16, heads=2), _ids(10)
    for layout in serving.LAYOUTS:
        right = serving.forward(p, x, heads=2, layout=layout)
        flipped = serving.flip_rotation_sign(p, heads=2, layout=layout)
        assert np.abs(serving.forward(flipped, x, heads=2, layout=layout, sign=-1) - right).max() < 1e-12
        wrong = serving.forward(p, x, heads=2, layout=layout, sign=-1)
        assert np.abs(wrong[:, 0] - right[:, 0]).max() < 1e-12 and np.abs(wrong - right).max() > 1e-3


# ---- the model ------------------------------------------------------------------------------------------------------


def test_forward_is_the_streaming_modules_model_on_a_shipped_model():
    p = streaming.load_params(0)
    x = streaming.validation()[:130].reshape(2, 65)
    assert np.abs(serving.forward(p, x, heads=4) - streaming.forward(p, x, heads=4)).max() < 1e-10


def test_forward_is_the_labs_jax_model_for_rope_and_for_a_learned_table():
    pytest.importorskip("jax")
    import jax

    from posenc_helpers import lab
    from posenc_helpers.lab.model import Config, init

    for scheme in serving.SCHEMES:
        config = Config(scheme=scheme, vocab=9, d_model=16, heads=2, layers=2, train_len=12)
        params = init(jax.random.key(5), config)
        x = _ids(12, vocab=9)
        ref = np.asarray(lab.forward(params, x, config), np.float64)
        numpy_params = jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), params)
        assert np.abs(serving.forward(numpy_params, x, heads=2, scheme=scheme) - ref).max() < 1e-4, scheme


def test_rope_positions_matter_only_through_their_differences():
    p, x = _tiny(), _ids(9)
    base = serving.forward(p, x, heads=2)
    assert np.abs(serving.forward(p, x, heads=2, positions=np.arange(9) + 37) - base).max() < 1e-10


def test_a_learned_table_reads_the_row_of_each_position_and_refuses_rows_it_lacks():
    p = _tiny()
    rng = np.random.default_rng(2)
    table = rng.standard_normal((12, 8))
    x = _ids(6)
    shifted = serving.forward({**p, "pos": table}, x, heads=2, scheme="learned", positions=np.arange(6) + 4)
    rolled = serving.forward({**p, "pos": table[4:]}, x, heads=2, scheme="learned")
    assert np.abs(shifted - rolled).max() < 1e-12
    with pytest.raises(ValueError, match="the learned table has 12 rows .* got 7 … 12"):
        serving.forward({**p, "pos": table}, x, heads=2, scheme="learned", positions=np.arange(6) + 7)
    with pytest.raises(ValueError, match="layout is a setting of scheme 'rope' only"):
        serving.forward({**p, "pos": table}, x, heads=2, scheme="learned", layout="half")
    with pytest.raises(ValueError, match=r"scheme 'learned' needs params\['pos'\]"):
        serving.forward(p, x, heads=2, scheme="learned")


def test_a_window_as_wide_as_the_sequence_is_the_causal_mask_and_masks_are_the_literal_ones():
    for T, W in ((7, 3), (5, 1), (6, 6), (4, None)):
        assert np.array_equal(serving.window_mask(T, W), lit.window_mask(T, W))
    p, x = _tiny(), _ids(8)
    assert np.abs(serving.forward(p, x, heads=2, allowed=serving.window_mask(8, 8)) - serving.forward(p, x, heads=2)).max() == 0


def test_forward_refuses_what_it_cannot_read():
    p = _tiny()
    with pytest.raises(ValueError, match="tokens must lie in 0 … 6"):
        serving.forward(p, [[0, 9]], heads=2)
    with pytest.raises(ValueError, match="heads must split d_model = 8"):
        serving.forward(p, [[0, 1]], heads=3)
    with pytest.raises(ValueError, match="layout must be one of 'interleaved', 'half', got 'neox'"):
        serving.forward(p, [[0, 1]], heads=2, layout="neox")
    with pytest.raises(ValueError, match="allowed must let every query read at least one key"):
        serving.forward(p, [[0, 1]], heads=2, allowed=np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match="positions must be numbers of shape"):
        serving.forward(p, [[0, 1]], heads=2, positions=[0, 1, 2])
    with pytest.raises(ValueError, match="sign must be 1 or -1"):
        serving.rotate(np.ones((1, 2)), [0], [1.0], sign=2)


# ---- packing, positions, tables ---------------------------------------------------------------------------------------


@given(st.lists(st.integers(1, 5), min_size=1, max_size=5))
@settings(max_examples=30, deadline=None)
def test_packed_segments_are_the_literal_ones(lengths):
    restart = np.concatenate([np.arange(n) for n in lengths])[None]
    assert np.array_equal(serving.packed_segments(restart), lit.packed_segments(restart))
    assert serving.packed_segments(restart)[0, -1] == len(lengths) - 1
    run_on = np.arange(restart.shape[1])[None]
    assert not serving.packed_segments(run_on).any()


def test_packed_sequences_with_restarted_positions_are_each_sequence_alone():
    p = _tiny()
    a, b = _ids(5, batch=1, seed=1)[0], _ids(6, batch=1, seed=2)[0]
    packed = np.concatenate([a, b])[None]
    positions = np.concatenate([np.arange(5), np.arange(6)])[None]
    mask = serving.packed_mask(serving.packed_segments(positions))
    out = serving.forward(p, packed, heads=2, positions=positions, allowed=mask)
    assert np.abs(out[0, 5:] - serving.forward(p, b[None], heads=2)[0]).max() < 1e-12
    assert np.abs(out[0, :5] - serving.forward(p, a[None], heads=2)[0]).max() < 1e-12


def test_jumped_positions_and_table_rows():
    assert serving.jumped_positions(2, 3, 0).tolist() == [0, 1, 2, 3, 4]
    assert serving.jumped_positions(6, 2, 6).tolist() == [0, 1, 2, 3, 4, 5, 12, 13]
    table = np.arange(20).reshape(10, 2)
    assert np.array_equal(serving.table_rows(table, 7, 3), table[7:10])
    with pytest.raises(ValueError, match=r"the table has 10 rows, so rows 8 … 10 \(start 8, count 3\) do not exist"):
        serving.table_rows(table, 8, 3)
    with pytest.raises(ValueError, match="jump must be a non-negative integer, got -1"):
        serving.jumped_positions(2, 2, -1)


# ---- the cache, token by token -------------------------------------------------------------------------------------


def test_every_policy_is_the_full_forward_until_the_cache_first_fills():
    p, x = _tiny(), _ids(10)
    full = serving.bits(serving.forward(p, x[:, :-1], heads=2), x[:, 1:])
    for policy in serving.POLICIES:
        out = serving.stream(p, x, heads=2, cache=9, keep=2, policy=policy)
        assert np.abs(out - full).max() < 1e-12, policy


def test_rolling_is_notebook_16s_window_and_sinks_at_text_positions():
    p = streaming.load_params(1)
    tokens, _ = streaming.streams(2, 90)
    for keep in (0, 4):
        ours = serving.stream(p, tokens, heads=4, cache=32, keep=keep)
        theirs = streaming.stream_bits(p, tokens, heads=4, cache=32, sinks=keep, positions="text")
        assert np.abs(ours - theirs).max() < 1e-10, keep


@pytest.mark.parametrize("policy", serving.POLICIES)
@pytest.mark.parametrize("positions", serving.POSITION_RULES)
def test_a_one_layer_stream_is_the_literal_list_of_cells(policy, positions):
    p = _tiny(layers=1, seed=3)
    x = _ids(26, batch=1, seed=4)
    ours = serving.stream(p, x, heads=2, cache=8, keep=2, policy=policy, positions=positions)[0]
    theirs = lit.stream_one_layer(p, x[0], heads=2, cache=8, keep=2, policy=policy, positions=positions)
    assert np.abs(ours - theirs).max() < 1e-9


def test_with_nothing_kept_a_shift_changes_nothing_and_forgetting_to_turn_the_keys_does():
    p, x = _tiny(seed=5), _ids(40, seed=6)
    drop = serving.stream(p, x, heads=2, cache=10, policy="drop")
    assert np.abs(serving.stream(p, x, heads=2, cache=10, policy="shift") - drop).max() < 1e-10
    assert np.abs(serving.stream(p, x, heads=2, cache=10, policy="shift_unrotated") - drop).max() > 1e-3


def test_recompute_runs_the_kept_tokens_again_from_scratch():
    p, x = _tiny(seed=7), _ids(14, batch=1, seed=8)
    out = serving.stream(p, x, heads=2, cache=8, keep=2, policy="recompute")
    # the cache fills at t = 8: cells 2, 3, 4 leave, tokens 0, 1, 5, 6, 7 are run again, then token 8 is read
    kept = x[:, [0, 1, 5, 6, 7, 8]]
    fresh = serving.bits(serving.forward(p, kept, heads=2)[:, -1], x[:, 9])
    assert abs(out[0, 8] - fresh[0]) < 1e-12


def test_stream_refuses_by_name():
    p = _tiny()
    with pytest.raises(ValueError, match="policy must be one of 'roll', 'drop', 'shift', 'shift_unrotated', "
                                         "'recompute', got 'evict'"):
        serving.stream(p, _ids(5), heads=2, policy="evict")
    with pytest.raises(ValueError, match="keep must be an integer in 0 … cache − 2 = 2"):
        serving.stream(p, _ids(5), heads=2, cache=4, keep=3)
    with pytest.raises(ValueError, match="positions must be one of 'true', 'kept', got 'cache'"):
        serving.stream(p, _ids(5), heads=2, positions="cache")


# ---- sliding windows ----------------------------------------------------------------------------------------------


@given(window=st.integers(1, 9), chunks=st.lists(st.integers(1, 12), min_size=1, max_size=6),
       max_len=st.integers(1, 20))
@settings(max_examples=60, deadline=None)
def test_sliding_cache_sizes_are_the_literal_token_lists(window, chunks, max_len):
    assert serving.sliding_cache_sizes(window, chunks) == lit.sliding_sizes(window, chunks, "dynamic")
    static = serving.sliding_cache_sizes(window, chunks, kind="static", max_cache_len=max_len)
    assert static == lit.sliding_sizes(window, chunks, "static", max_len)
    total = np.cumsum(chunks)
    # what the code's comments say: the dynamic layer holds the last W − 1 (all when W = 1), the static min(W, len)
    held = [h for h, _ in serving.sliding_cache_sizes(window, chunks)]
    assert held == [t if window == 1 else min(t, window - 1) for t in total]
    assert [h for h, _ in static] == [min(t, window, max_len) for t in total]


def test_one_token_through_a_full_window_reads_w_keys_in_both_caches_as_the_mask_allows():
    W = 128
    dynamic = serving.sliding_cache_sizes(W, [300, 1])
    static = serving.sliding_cache_sizes(W, [300, 1], kind="static", max_cache_len=4096)
    assert dynamic == [(127, 300), (127, 128)] and static == [(128, 300), (128, 128)]
    assert serving.window_mask(300, W).sum(1).max() == W


def test_the_decoders_cache_keeps_what_transformers_dynamic_layer_keeps():
    spec = decoder.tiny_spec("qwen3", window=5, layers=2)
    cache = decoder.KVCache.empty(spec, batch=1)
    decoder.decode(spec, decoder.random_weights(spec), np.arange(12)[None] % 32, prefill=9, cache=cache)
    assert cache.length(1) == serving.sliding_cache_sizes(5, [9, 1, 1, 1])[-1][0] == 4


@pytest.mark.parametrize(("T", "W"), [(5, 3), (9, 4), (4, 8), (12, 1)])
def test_the_ring_prefill_mask_is_the_literal_slots(T, W):
    assert np.array_equal(serving.ring_prefill_mask(T, W), lit.ring_prefill_mask(T, W))


def test_a_ring_prefill_within_the_window_is_causal_and_past_it_reads_the_future():
    assert np.array_equal(serving.ring_prefill_mask(6, 8), serving.window_mask(6))
    m = serving.ring_prefill_mask(20, 8)
    assert (m & ~serving.window_mask(20)).any()


# ---- partial rotary, quantization, retrieval ---------------------------------------------------------------------


def test_partial_frequencies_are_transformers_two_conventions_as_the_course_reader_reads_them():
    gemma4 = {"model_type": "gemma4_text", "num_hidden_layers": 6, "hidden_size": 2304, "num_attention_heads": 8,
              "head_dim": 256, "global_head_dim": 512, "sliding_window": 512, "max_position_embeddings": 131072}
    full = next(x for x in layer_positions(gemma4) if x.layer_type == "full_attention")
    omega, width = serving.partial_frequencies(512, 0.25, base=full.base, convention="proportional")
    assert np.allclose(omega, full.inv_freq, rtol=1e-12) and width == 512
    q35 = next(x for x in layer_positions(bundled_configs("all")["Qwen3.5 9B"]) if x.rope)
    omega, width = serving.partial_frequencies(q35.head_dim, q35.rotary_dim / q35.head_dim, base=q35.base)
    assert np.allclose(omega, q35.inv_freq, rtol=1e-12) and width == q35.rotary_dim
    # the literal formulas
    neox, r = serving.partial_frequencies(64, 0.5, base=500.0)
    assert r == 32 and np.allclose(neox, [500.0 ** (-2 * k / 32) for k in range(16)])
    prop, _ = serving.partial_frequencies(64, 0.5, base=500.0, convention="proportional")
    assert np.allclose(prop, [500.0 ** (-2 * k / 64) if k < 16 else 0.0 for k in range(32)])


def test_the_two_conventions_agree_only_when_the_whole_head_turns():
    same = [serving.partial_frequencies(32, 1.0, base=100.0, convention=c) for c in serving.CONVENTIONS]
    assert np.array_equal(same[0][0], same[1][0]) and same[0][1] == same[1][1]
    with pytest.raises(ValueError, match="convention must be one of 'neox', 'proportional', got 'gptj'"):
        serving.partial_frequencies(32, 0.5, convention="gptj")
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\], got 0.0"):
        serving.partial_frequencies(32, 0.0)


@given(n_bits=st.integers(1, 8), seed=st.integers(0, 1000), axis=st.sampled_from([0, 1, -1]))
@settings(max_examples=30, deadline=None)
def test_quantize_is_the_literal_quantizer(n_bits, seed, axis):
    x = np.random.default_rng(seed).standard_normal((4, 5)) * 3
    got = serving.quantize(x, n_bits, axis=axis)
    assert np.allclose(got, lit.quantize(x, n_bits, axis), atol=1e-12)
    lo, hi = x.min(axis=axis, keepdims=True), x.max(axis=axis, keepdims=True)
    assert np.all(np.abs(got - x) <= (hi - lo) / (2**n_bits - 1) / 2 + 1e-12)  # at most half a step off


def test_attention_change_and_key_accuracy_are_the_literal_ones():
    rng = np.random.default_rng(9)
    q, k = rng.standard_normal((2, 6, 4))
    k_hat = k + 0.1 * rng.standard_normal(k.shape)
    assert abs(serving.attention_change(q, k, k_hat) - lit.attention_change(q, k, k_hat)) < 1e-12
    logits = rng.standard_normal((5, 4, 3))
    target, mask = logits.argmax(-1), rng.random((5, 4)) < 0.5
    target[0, 0], mask[0, 0] = (target[0, 0] + 1) % 3, True  # sequence 0 gets a scored answer wrong
    target[1, 1], mask[1, 1] = (target[1, 1] + 1) % 3, False  # sequence 1 a wrong answer that is not scored
    expected = np.mean([all(logits[b, t].argmax() == target[b, t] for t in range(4) if mask[b, t]) for b in range(5)])
    assert serving.key_accuracy(logits, target, mask) == expected


# ---- the figures and the slider ----------------------------------------------------------------------------------


def test_the_layout_figure_draws_what_bits_by_position_computes():
    import matplotlib.pyplot as plt

    from posenc_helpers.viz import serving as vs

    curves = vs.bits_by_position(n=8)
    assert np.abs(curves["ported, permuted"] - curves["right"]).max() < 1e-10
    for wrong in ("layout forgotten", "sign flipped"):  # position 0 is the same, the rest is not
        assert abs(curves[wrong][0] - curves["right"][0]) < 1e-10 and curves[wrong][8:].mean() > curves["right"][8:].mean() + 1
    fig, ax = plt.subplots()
    lines = vs.plot_bits_by_position(ax, curves)
    assert np.array_equal(lines["sign flipped"].get_ydata(), curves["sign flipped"])
    plt.close(fig)


def test_key_ranges_grow_after_rope_only_where_pairs_turn_within_the_window():
    from posenc_helpers.viz import serving as vs

    ranges = vs.key_ranges()
    assert ranges["pre"].shape == ranges["post"].shape == (64,)
    head = np.arange(64) % 16  # dim within the head; interleaved pair k = dim // 2 turns by 64·ω_k over the window
    slow = frequencies(16)[head // 2] * 64 < 0.5
    assert np.allclose(ranges["post"][slow], ranges["pre"][slow], rtol=0.2)
    assert ranges["post"][~slow].mean() > 1.3 * ranges["pre"][~slow].mean()


def test_the_partial_slider_starts_on_its_defaults_and_shows_no_gap_when_the_whole_head_turns():
    from posenc_helpers.viz import serving as vs

    demo = vs.partial_demo()
    assert demo.values == {"fraction": 0.25, "base": 1e7}
    gap = demo.handles["gap"].get_ydata()
    assert np.allclose(gap, vs.score_gap(0.25, 1e7)) and gap[0] > 0.05
    demo.controls["fraction"].value = 1.0
    assert np.abs(demo.handles["gap"].get_ydata()).max() < 1e-12
    assert abs(vs.score_gap(0.25, 1e7, distances=[0])[0]) < 1e-12


def test_the_score_gap_is_the_scores_of_the_decoders_rotation():
    from posenc_helpers.viz import serving as vs

    rng = np.random.default_rng(0)  # score_gap's own draw
    q, k = rng.standard_normal((2, 16, 32))
    delta = np.array([0.0, 1, 5, 40, 300])

    def scores(convention):
        inv_freq, rotary = serving.partial_frequencies(32, 0.5, base=500.0, convention=convention)
        turned = decoder.rope_rotate(np.broadcast_to(k[:, None], (16, 5, 32)), delta[None], inv_freq, rotary)
        return np.einsum("pd,ptd->pt", q, turned)

    neox, prop = scores("neox"), scores("proportional")
    expected = np.sqrt(((prop - neox) ** 2).mean(0)) / np.sqrt((neox**2).mean(0))
    got = vs.score_gap(0.5, 500.0, head_dim=32, distances=delta, pairs=16)
    assert np.allclose(got, expected, atol=1e-12) and abs(got[0]) < 1e-12


def test_the_retrieval_plot_draws_one_line_per_window_and_the_chance_level():
    import matplotlib.pyplot as plt

    from posenc_helpers.viz import serving as vs

    fig, ax = plt.subplots()
    lines = vs.plot_window_retrieval(ax, [3, 10, 20], {"full": [1, 1, 1], "window 8": [1, 0, 0]}, chance=1 / 6,
                                     title="t")
    assert list(lines) == ["full", "window 8", "chance"] and ax.get_title() == "t"
    assert lines["window 8"].get_ydata().tolist() == [1, 0, 0] and lines["chance"].get_ydata()[0] == 1 / 6
    plt.close(fig)


# ---- the notebook: sections 1-9 run without JAX --------------------------------------------------------------------


def test_only_the_notebooks_last_part_imports_the_lab():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    lab_import = r"\bposenc_helpers\.lab\b|\bimport jax\b|\bfrom posenc_helpers import lab\b"
    uses = [i for i, src in enumerate(code) if re.search(lab_import, src)]
    assert uses, "the JAX part imports posenc_helpers.lab"
    first = uses[0]
    assert all(not re.search(r"\blab\.", src) for src in code[:first])
    heading = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "needs JAX" in "".join(c["source"]))
    code_before_heading = sum(c["cell_type"] == "code" for c in cells[:heading])
    assert first >= code_before_heading


def test_the_module_imports_with_jax_blocked():
    code = ("import sys\n"
            "for name in ('jax', 'jaxlib', 'optax', 'posenc_helpers.lab'):\n"
            "    sys.modules[name] = None\n"
            "from posenc_helpers import serving\n"
            "from posenc_helpers.viz import serving as vs\n"
            "print(vs.partial_demo().values)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
