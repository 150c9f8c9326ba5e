"""tools/claims_draft.py: the restated headline claims hold on every kept sweep seed, by 4 sequence-level SE.

The draft is derived on the headline sweep's kept rows (``runs/partials``); as rows come in, a seed that breaks a
restated claim fails here, so the restatement is revisited before it replaces the stored claims.
"""


import pytest

from posenc_helpers.lab import claims, results
from tools import claims_draft as D
from tools import claims_preview

GROUPS = {"12": D.CLAIMS_12, "12 scaling": D.CLAIMS_12_SCALING, "12 fine-tune": D.CLAIMS_12_FINETUNE,
          "13": D.CLAIMS_13_CHANGED}


@pytest.fixture(scope="module")
def views():
    path = results.PARTIALS / f"results-{results.row_stamp()}.jsonl"
    if not path.is_file():
        pytest.skip(f"no headline rows kept under this code's stamp ({path.name})")
    views = claims_preview.kept_views(path)
    if len(views) < 3:
        pytest.skip(f"{len(views)} whole seeds kept")
    return views


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_restated_claim_clears_4_sequence_level_ses_on_every_kept_seed(views, group):
    table = claims.margins(GROUPS[group], views)
    thin = {text: m for text, m in table.items()
            if m["k"] < m["n"] or m["mixed"] or m["ratio"] is None or m["ratio"] < 4}
    assert not thin, claims.margin_report(thin)


def test_the_restated_texts_are_new_or_say_why_they_are_kept():
    stored = {c.text for group in claims.groups().values() for c in group}
    for group in GROUPS.values():
        for c in group:
            assert c.text not in stored or c.text.startswith("PI collapses on prev"), c.text
