"""T5's relative position buckets: a learned bias per bucket of distances.

T5 (Raffel et al., 2020) adds to every attention logit a learned scalar
b[h, bucket(n − m)] that depends only on the relative position n − m of the
key (n) to the query (m). Distances are grouped into buckets: one bucket per
distance for small distances, then logarithmically wider buckets up to
``max_distance``, after which every distance shares the last bucket. Like
ALiBi it is a bias on the logits, not a vector added to the tokens; unlike
ALiBi the bias values are learned.

Taught in notebooks/08-other-schemes.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate as v

__all__ = ["t5_bucket"]


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128) -> np.ndarray | int:
    """The bucket T5 gives a relative position n − m (key position minus query position).

    As Hugging Face's ``T5Attention._relative_position_bucket`` computes it:

    * bidirectional (the encoder): half the buckets for each sign; keys after
      the query (n − m > 0) get an offset of num_buckets/2, and the distance
      is |n − m|. Unidirectional (the decoder): only keys at or before the
      query count, distance = max(m − n, 0), and all buckets are available.
    * With B buckets for the distance, the first B/2 distances get a bucket
      each (exact); a distance d ≥ B/2 gets
      B/2 + ⌊ln(d / (B/2)) / ln(max_distance / (B/2)) · (B − B/2)⌋, capped at B − 1.

    So every distance of ``max_distance`` or more lands in the last bucket,
    and the model cannot tell those distances apart. The last bucket in fact
    starts earlier, where the formula first reaches B − 1: with the defaults
    (B = 16 per sign, max_distance = 128) at distance 91. ``relative_position``
    is an integer or an integer array; the result has its shape (an int for
    a scalar). Taught in notebooks/08-other-schemes.ipynb.

    >>> [int(t5_bucket(d)) for d in (-1, 0, 1, 7, 8)]       # 16 buckets per sign, 8 exact
    [1, 0, 17, 23, 24]
    >>> int(t5_bucket(-20))      # 8 + ⌊ln(20/8)/ln(128/8)·8⌋ = 8 + ⌊2.643⌋ = 10
    10
    >>> [int(t5_bucket(-d)) for d in (90, 91, 128, 1000)]    # 8 + ⌊6.98⌋ = 14 at 90; from 91 on, one shared bucket
    [14, 15, 15, 15]
    >>> int(t5_bucket(-5, bidirectional=False)), int(t5_bucket(5, bidirectional=False))   # future keys: bucket 0
    (5, 0)
    """
    rel = np.asarray(relative_position)
    if rel.dtype == bool or not np.issubdtype(rel.dtype, np.integer):
        raise TypeError(
            f"relative_position must be an integer or an array of integers (key position − query position), "
            f"got {v._show(relative_position)}"
        )
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise TypeError(f"bidirectional must be True or False, got {v._show(bidirectional)}")
    num_buckets = v.positive_int("num_buckets", num_buckets)
    max_distance = v.positive_int("max_distance", max_distance)
    per_side = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_side // 2
    if max_exact < 1:
        raise ValueError(
            f"num_buckets must leave at least 2 buckets per direction, got num_buckets={num_buckets} "
            f"(bidirectional={bidirectional})"
        )
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance must exceed the {max_exact} exact buckets (num_buckets={num_buckets}), "
            f"got max_distance={max_distance}"
        )
    rel = rel.astype(np.int64)
    buckets = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        # keys after the query use the upper half of the buckets
        buckets += (rel > 0).astype(np.int64) * per_side
        distance = np.abs(rel)
    else:
        # only keys at or before the query: distance = max(m − n, 0)
        distance = -np.minimum(rel, 0)
    small = distance < max_exact
    with np.errstate(divide="ignore"):
        # B/2 + ⌊ln(d/(B/2)) / ln(max_distance/(B/2)) · (B − B/2)⌋, capped at B − 1
        scaled = np.log(np.maximum(distance, 1) / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + np.floor(scaled * (per_side - max_exact)).astype(np.int64)
    large = np.minimum(large, per_side - 1)
    buckets += np.where(small, distance, large)
    return int(buckets) if buckets.ndim == 0 else buckets
