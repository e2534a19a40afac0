"""The store handle's names (evalstore.db.handle): a name not stored gets the closest names, or
the stored ones with the subsamples counted aside (issue 44.4: subsamples aside, as elsewhere)."""

from __future__ import annotations

import pytest

from evalstore.errors import NotFoundError


def test_an_unknown_qrels_set_lists_the_judged_sets_and_counts_the_subsamples(sample_store):
    sample_store.create_subsamples("sample", [0.5, 0.3], trials=2)
    with pytest.raises(NotFoundError) as e:
        sample_store.qrels_id("nope")
    assert str(e.value) == "no qrels set named 'nope' in the store (qrels sets: sample; and 4 subsample(s))"
    with pytest.raises(NotFoundError, match=r"did you mean 'sample@bv0.5#1'"):
        sample_store.qrels_id("sample@bv0.5#7")
