"""Qwen2-VL's (t, h, w) position ids, against literal transcriptions of two transformers releases' get_rope_index.

Transcribed from Qwen2VLModel.get_rope_index in src/transformers/models/qwen2_vl/modeling_qwen2_vl.py of the
transformers 5.0.0 and 5.23.0 wheels (one batch row, no attention mask, images only), with lists instead of tensors.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_helpers.multiaxis import mrope_angles, mrope_pair_axis, mrope_position_ids

TEXT, VISION_START, IMAGE = 0, 7, 9   # token ids for the transcription (only their roles matter)


def tokens_for(segments, merge=2):
    """input_ids, mm_token_type_ids and image_grid_thw for segments; each image follows a vision-start token."""
    ids, types, grids = [], [], []
    for item in segments:
        if isinstance(item, int):
            ids += [TEXT] * item
            types += [0] * item
        else:
            assert ids and ids[-1] == TEXT, "an image needs a text token before it to hold vision_start"
            ids[-1] = VISION_START
            t, h, w = item
            ids += [IMAGE] * (t * (h // merge) * (w // merge))
            types += [1] * (t * (h // merge) * (w // merge))
            grids.append((t, h, w))
    return ids, types, grids


def get_rope_index_5_0_0(input_tokens, image_grid_thw, spatial_merge_size=2):
    # transformers 5.0.0: the text before each image starts at llm_pos_ids_list[-1].max() + 1
    vision_start_indices = [i for i, tok in enumerate(input_tokens) if tok == VISION_START]
    image_nums = sum(input_tokens[i + 1] == IMAGE for i in vision_start_indices)
    llm_pos_ids_list = []
    st_ = 0
    image_index = 0
    remain_images = image_nums
    for _ in range(image_nums):
        ed_image = input_tokens.index(IMAGE, st_) if IMAGE in input_tokens and remain_images > 0 else len(input_tokens) + 1
        t, h, w = image_grid_thw[image_index]
        image_index += 1
        remain_images -= 1
        ed = ed_image
        llm_grid_t, llm_grid_h, llm_grid_w = t, h // spatial_merge_size, w // spatial_merge_size
        text_len = ed - st_
        st_idx = max(max(row) for row in llm_pos_ids_list[-1]) + 1 if llm_pos_ids_list else 0
        llm_pos_ids_list.append([[i + st_idx for i in range(text_len)] for _ in range(3)])
        t_index = [ti for ti in range(llm_grid_t) for _ in range(llm_grid_h * llm_grid_w)]
        h_index = [hi for _ in range(llm_grid_t) for hi in range(llm_grid_h) for _ in range(llm_grid_w)]
        w_index = [wi for _ in range(llm_grid_t) for _ in range(llm_grid_h) for wi in range(llm_grid_w)]
        llm_pos_ids_list.append([[i + text_len + st_idx for i in index] for index in (t_index, h_index, w_index)])
        st_ = ed + llm_grid_t * llm_grid_h * llm_grid_w
    if st_ < len(input_tokens):
        st_idx = max(max(row) for row in llm_pos_ids_list[-1]) + 1 if llm_pos_ids_list else 0
        text_len = len(input_tokens) - st_
        llm_pos_ids_list.append([[i + st_idx for i in range(text_len)] for _ in range(3)])
    return [list(itertools.chain.from_iterable(block[axis] for block in llm_pos_ids_list)) for axis in range(3)]


def get_rope_index_5_23_0(mm_token_type_ids, image_grid_thw, spatial_merge_size=2):
    # transformers 5.23.0: groups by token type; after an image current_pos += max(h, w) // spatial_merge_size
    input_type_group = []
    for key, group in itertools.groupby(enumerate(mm_token_type_ids), lambda x: x[1]):
        group = list(group)
        input_type_group.append((key, group[0][0], group[-1][0] + 1))
    grids = iter(image_grid_thw)
    current_pos = 0
    llm_pos_ids_list = []
    for modality_type, start_idx, end_idx in input_type_group:
        if modality_type == 0:
            text_len = end_idx - start_idx
            llm_pos_ids_list.append([[i + current_pos for i in range(text_len)] for _ in range(3)])
            current_pos += text_len
        else:
            t, h, w = next(grids)
            # get_vision_position_ids(current_pos, grid_thw, 1, spatial_merge_size), time_interval 1
            grid_t, grid_h, grid_w = t // 1, h // spatial_merge_size, w // spatial_merge_size
            cells = [(ti, hi, wi) for ti in range(grid_t) for hi in range(grid_h) for wi in range(grid_w)]
            llm_pos_ids_list.append([[cell[0] * 1 + current_pos for cell in cells],
                                     [cell[1] + current_pos for cell in cells],
                                     [cell[2] + current_pos for cell in cells]])
            current_pos += max(h, w) // spatial_merge_size
    return [list(itertools.chain.from_iterable(block[axis] for block in llm_pos_ids_list)) for axis in range(3)]


def both_releases(segments):
    ids, types, grids = tokens_for(segments)
    return get_rope_index_5_0_0(ids, grids), get_rope_index_5_23_0(types, grids)


@pytest.mark.parametrize("segments", [
    [3, (1, 4, 6), 2],                  # the notebook's sequence
    [1, (1, 8, 2), 4],                  # a tall image: the text resumes after the largest row id
    [5, (1, 2, 2), 1, (1, 6, 4), 3],    # two images
    [4],                                # text only
    [2, (1, 4, 4)],                     # ends with an image
])
def test_matches_both_transcriptions(segments):
    old, new = both_releases(segments)
    got = mrope_position_ids(segments)
    assert got.shape == (3, len(old[0]))
    assert got.tolist() == old == new


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 6), st.integers(1, 6)), min_size=1, max_size=4),
       st.integers(0, 4))
def test_random_sequences_match_both_transcriptions(parts, tail):
    segments = []
    for text, h2, w2 in parts:
        segments += [text, (1, 2 * h2, 2 * w2)]
    segments.append(tail)
    old, new = both_releases(segments)
    got = mrope_position_ids(segments)
    assert got.tolist() == old == new
    # properties: text tokens carry three equal ids; every segment starts one past the largest id before it
    start = 0
    for item in segments:
        width = item if isinstance(item, int) else (item[1] // 2) * (item[2] // 2)
        block = got[:, start:start + width]
        if start and width:
            assert block.min() == got[:, :start].max() + 1
        if isinstance(item, int):
            assert (block[0] == block[1]).all() and (block[1] == block[2]).all()
        start += width


def test_the_notebook_sequence_by_hand():
    # text ×3, a 4 × 6 patch image (2 × 3 tokens after merging 2 × 2), text ×2
    ids = mrope_position_ids([3, (1, 4, 6), 2])
    assert ids[:, :3].tolist() == [[0, 1, 2]] * 3
    assert ids[:, 3:9].tolist() == [[3] * 6, [3, 3, 3, 4, 4, 4], [3, 4, 5, 3, 4, 5]]
    assert ids[:, 9:].tolist() == [[6, 7]] * 3      # largest used is 5, so 6, not 3 + 6 = 9


def test_pair_axis_is_the_split_mrope_angles_uses():
    axis = mrope_pair_axis([16, 24, 24])
    assert axis.tolist() == [0] * 16 + [1] * 24 + [2] * 24
    theta = mrope_angles(1.0, 0.0, 0.0, 128, [16, 24, 24])
    np.testing.assert_array_equal(theta != 0, axis == 0)


@pytest.mark.parametrize("segments, kwargs, exc, text", [
    ([2, (2, 4, 4)], {}, ValueError, "t = 1"),
    ([2, (1, 3, 4)], {}, ValueError, "divisible by spatial_merge_size = 2"),
    ([True], {}, TypeError, r"segments\[0\] must be an int"),
    ([-1], {}, ValueError, r"segments\[0\] must be a text length >= 0"),
    ([2, (1, 4)], {}, TypeError, r"segments\[1\]"),
    ("abc", {}, TypeError, "segments must be a list"),
    ([2], {"spatial_merge_size": 0}, ValueError, "spatial_merge_size must be a positive integer"),
])
def test_bad_input(segments, kwargs, exc, text):
    with pytest.raises(exc, match=text):
        mrope_position_ids(segments, **kwargs)


def test_bad_section():
    with pytest.raises(ValueError, match="three pair counts"):
        mrope_pair_axis([16, 24])
