"""claims.check_seeds: a reader's own seeds, checked with every claim of notebooks 12 and 13.

Training is replaced by a stand-in that hands back a shipped sweep seed's rows under a new seed number, so
the check's plumbing is tested in seconds: every claim must hold on them (they hold on that sweep seed), and
a row made worse must make the matching claim fail on the new seed and on no other.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from posenc_helpers.lab import claims, results

NEW = 123_456  # a seed no shipped sweep holds


def _stand_in(source_seed, spoil=None):
    sweep, extra = results.load(), results.load_extra()
    calls = []

    def train(seeds, *, workers=None):
        calls.append((list(seeds), workers))
        head = {(NEW, t, s): copy.deepcopy(e) for (seed, t, s), e in sweep["table"].items() if seed == source_seed}
        more = {(NEW, t, s): copy.deepcopy(e) for (seed, t, s), e in extra["table"].items() if seed == source_seed}
        if spoil:
            spoil(head)
        return head, more

    return train, calls


def test_every_claim_holds_on_a_sweep_seeds_rows_under_a_new_number():
    train, calls = _stand_in(1)
    out = claims.check_seeds([NEW], workers=1, train=train)
    assert calls == [([NEW], 1)]
    assert set(out) == set(claims.groups())
    for group, found in out.items():
        assert {s for by_seed in found["claims"].values() for s in by_seed} == {NEW}, group
        assert not claims.failures(found["claims"]), claims.report(found["claims"])
        assert all(found["over"].values()), found["over"]
        assert set(found["over"]) == {st.text for st in claims.over_seeds()[group]}


def test_a_worse_row_fails_its_claim_on_the_new_seed():
    def spoil(head):
        beyond = np.array(head[NEW, "prev", "alibi"]["beyond"], dtype=float)
        beyond[1:] = 0.5  # ALiBi no longer extrapolates on prev
        head[NEW, "prev", "alibi"]["beyond"] = beyond

    train, _ = _stand_in(1, spoil)
    found = claims.check_seeds([NEW], train=train)["12"]["claims"]
    failed = claims.failures(found)
    assert "ALiBi scores at least 0.93 past L on prev at every length" in failed
    assert all(seeds == [NEW] for seeds in failed.values())


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        ([], "names no seed"),
        ([results.SEEDS[3]], "is a seed of the shipped sweeps"),
        ([-1], "is not a non-negative integer"),
        ([True], "is not a non-negative integer"),
    ],
)
def test_bad_seeds_are_refused_by_name(seeds, message):
    with pytest.raises(ValueError, match=message):
        claims.check_seeds(seeds, train=lambda *a, **k: pytest.fail("must not train"))
