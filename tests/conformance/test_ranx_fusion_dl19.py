"""Every fusion method x normalisation against ranx's ``fuse`` on three TREC DL 2019 passage runs
(tests/ranx_fusion_kit.py; ``python tests/ranx_fusion_kit.py`` prints the table).

* Methods and normalisations that read scores only: the same fused score for every (topic,
  document) as ranx's, to the last bit (sums in ranx's order).
* Those that read positions (rrf, isr, log_isr, logn_isr, bordafuse, w_bordafuse, rbc; the rank
  and borda normalisations): the documents whose score differs are all tied documents of an input
  run (ranx orders ties by NumPy's unstable argsort, evalstore by docno descending), and with the
  runs handed to ranx in evalstore's order the scores agree to the last bit, but for RBC's
  phi^(rank - 1), which numba computes by repeated multiplication (at most 1 ulp).
* Methods of ranks refuse a normalisation (it cannot change them; ranx's borda would order the
  candidates as a Python set).
"""

from __future__ import annotations

import importlib.util

import pytest
from ranx_fusion_kit import Kit, combos
from support import DATA_DIR, need_shared

from evalstore.fusion import METHODS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.shared,
    pytest.mark.skipif(
        importlib.util.find_spec("ranx") is None, reason="needs ranx (the test extra: pip install -e '.[test]')"
    ),
]

#: RBC: numba's phi ** i (repeated multiplication) against pow(): 1 ulp of the contributions
ULP_SLACK = {"rbc": 1e-15}


@pytest.fixture(scope="module")
def kit():
    need_shared(DATA_DIR / "trec-dl-2019-passage")
    return Kit(DATA_DIR / "trec-dl-2019-passage")


@pytest.mark.parametrize("method", list(METHODS))
def test_method_against_ranx(kit, method):
    for m, norm in combos():
        if m != method:
            continue
        row = kit.compare(m, norm)
        if METHODS[m].reads == "ranks" and norm != "none":
            assert "fuses ranks" in row.refused, (m, norm)
            continue
        assert not row.refused, (m, norm, row.refused)
        assert row.n_docs > 80_000
        slack = ULP_SLACK.get(m, 0.0)
        if row.positional:
            assert row.tied_explained, (m, norm, "a document that is not tied scores differently")
        else:
            assert row.diff <= slack, (m, norm, row.diff)
        assert row.same_order <= slack, (m, norm, row.same_order)


def test_ties_are_there(kit):
    """The runs have tied scores, so the positional rows above test what they claim."""
    assert len(kit.tied) > 500
