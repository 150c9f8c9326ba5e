"""The text lab compiles one evaluation program per length: the last, partial batch is padded to the batch's shape.

Before, the padding repeated the first rows of the last batch (``tk[:pad]``),
which cannot fill it when fewer rows are left than are missing: 4 of the 5
text lengths then compiled a second program for the same numbers.
"""

from __future__ import annotations

import numpy as np

from posenc_helpers.lab import text as T


def test_bits_per_char_compiles_one_program_per_length_and_repeats_none():
    # width 12 (head_dim 6): a configuration no other test compiles, so the count is this test's
    run = T.train("alibi", steps=2, train_len=16, d_model=12, heads=2, layers=1, progress=False, cache=False)
    lengths = [16, 32, 64]
    val = T._validation(run)
    partial = [(val.size - 1) // n % max(1, T._EVAL_TOKENS // n) for n in lengths]
    assert all(k > 0 for k in partial), "each length must end on a partial batch for this test to mean anything"
    before = T._nll._cache_size()
    first = T.bits_per_char(run, lengths)
    assert T._nll._cache_size() - before == len(lengths)
    again = T.bits_per_char(run, lengths)
    assert T._nll._cache_size() - before == len(lengths)
    np.testing.assert_array_equal(first, again)
