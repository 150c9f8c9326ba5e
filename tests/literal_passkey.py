"""The passkey task written out literally: one sequence at a time, from its parts, with plain Python lists.

Nothing is shared with ``posenc_helpers.lab.tasks`` or ``.passkey``:

- :func:`literal_position` reads the depth as a decimal (``decimal.Decimal``)
  and truncates d·F, the floor for d·F ≥ 0;
- :func:`literal_sequence` appends the tokens of one sequence in reading order;
- :func:`parse_sequence` finds the needle in a generated sequence by its
  marker, so a batch can be rebuilt literally from its own parts;
- :func:`literal_cell` scores one grid cell with the float64 loop model of
  ``literal_lab``, one sequence and one answer at a time.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
from literal_lab import literal_forward


def literal_position(depth, length, key_len=3):
    """The needle's marker position: int(d·F) with d read as the decimal it prints as, F = T − 2K − 1."""
    filler = length - 2 * key_len - 1
    return int(Decimal(repr(float(depth))) * filler)


def literal_sequence(filler, key, a, vocab):
    """``(tokens, target, mask)`` of one passkey sequence, as lists: filler[:a], M, key, filler[a:], M, key[:-1]."""
    marker = vocab - 1
    tokens = []
    for t in filler[:a]:
        tokens.append(int(t))
    tokens.append(marker)
    for t in key:
        tokens.append(int(t))
    for t in filler[a:]:
        tokens.append(int(t))
    tokens.append(marker)
    for t in key[:-1]:
        tokens.append(int(t))
    target, mask = [], []
    for p in range(len(tokens)):
        n = p - (len(tokens) - len(key))  # index of the answer at position p, if any
        target.append(int(key[n]) if n >= 0 else 0)
        mask.append(n >= 0)
    return tokens, target, mask


def parse_sequence(tokens, vocab, key_len=3):
    """``(filler, key, a)`` of a generated sequence: the needle is the marker that is not the query's."""
    tokens = [int(t) for t in tokens]
    marker = vocab - 1
    where = [p for p, t in enumerate(tokens) if t == marker]
    assert len(where) == 2 and where[1] == len(tokens) - key_len, where
    a = where[0]
    key = tokens[a + 1:a + 1 + key_len]
    filler = tokens[:a] + tokens[a + 1 + key_len:len(tokens) - key_len]
    return filler, key, a


def literal_cell(params, config, tokens, target, mask, *, omega=None, logit_scale=1.0):
    """One grid cell scored one answer at a time: ``(key accuracy, token accuracy, smallest top-2 margin)``."""
    whole, right, answers, margin = 0, 0, 0, np.inf
    for b in range(len(tokens)):
        logits, _ = literal_forward(params, [int(t) for t in tokens[b]], config, omega=omega, logit_scale=logit_scale)
        all_right = True
        for p in range(len(tokens[b])):
            if not mask[b][p]:
                continue
            row = list(logits[p])
            best = max(range(len(row)), key=lambda c: row[c])
            second = max(row[c] for c in range(len(row)) if c != best)
            margin = min(margin, row[best] - second)
            answers += 1
            if best == int(target[b][p]):
                right += 1
            else:
                all_right = False
        whole += all_right
    return whole / len(tokens), right / answers, margin
