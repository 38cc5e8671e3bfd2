"""The held-out benchmark data for a real model (tests/fixtures/realmodel/heldout_*.jsonl), written apart
from the first set, shares no id and no sentence with it. The first set's checks run on it too
(test_realmodel_fixtures.py, parametrized by set). No model runs."""

from __future__ import annotations

from test_realmodel_fixtures import load_reports, load_tasks


def test_the_heldout_set_shares_no_id_and_no_sentence_with_the_first_set() -> None:
    def norm(text: str) -> str:
        return " ".join(text.lower().split())

    first = [(r.id, norm(r.report)) for r in load_reports()] + [(t.id, norm(t.request)) for t in load_tasks()]
    heldout = [(r.id, norm(r.report)) for r in load_reports("heldout")]
    heldout += [(t.id, norm(t.request)) for t in load_tasks("heldout")]
    first_ids, first_texts = {i for i, _ in first}, {text for _, text in first}
    assert not [i for i, _ in heldout if i in first_ids]
    assert not [i for i, text in heldout if text in first_texts]
