"""ingest dataset: ir_datasets datasets registered from local files (CI cannot download), their
qrels, queries, relevance definitions and official measures; eval without -m evaluates those.

The DL 2019 check (issue 45): a dataset registered from ../shared/data/trec-dl-2019-passage's
files with ir_datasets' own documentation of msmarco-passage/trec-dl-2019/judged gives the same
qrels as ``ingest qrels``, and ``eval`` without ``-m`` gives its official measures (nDCG@10,
RR(rel=2), AP(rel=2)) equal to NIST's official scores under --convention trec_eval9."""

from __future__ import annotations

import csv
import itertools
import json

import pytest
from support import DATA_DIR, need_shared

import evalstore
from evalstore.errors import IngestError
from evalstore.ingest.datasets import FALLBACK_MEASURES

ir_datasets = pytest.importorskip("ir_datasets")
_serial = itertools.count()


class Documentation:
    """A documentation component (what ir_datasets' YAML gives a dataset)."""

    def __init__(self, doc: dict):
        self._doc = doc

    def documentation(self) -> dict:
        return dict(self._doc)


def register(qrels, queries=None, *, doc=None, defs=None, ident=None) -> str:
    """A dataset of local files in ir_datasets' registry; its id."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvQueries
    from ir_datasets.util import LocalDownload

    ident = ident or f"evalstore-test/local-{next(_serial)}"
    parts = [TrecQrels(LocalDownload(qrels), defs or {})]
    if queries is not None:
        parts.append(TsvQueries(LocalDownload(queries), namespace="test"))
    if doc is not None:
        parts.append(Documentation(doc))
    ir_datasets.registry.register(ident, Dataset(*parts))
    return ident


@pytest.fixture
def tiny(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\n")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tblack bear attacks\nq2\tsolar eclipse dates\n")
    run = tmp_path / "run.txt"
    run.write_text(
        "q1 Q0 d3 1 3.0 sys\nq1 Q0 d1 2 2.0 sys\nq1 Q0 d9 3 1.0 sys\nq2 Q0 d5 1 2.0 sys\nq2 Q0 d4 2 1.0 sys\n"
    )
    return qrels, queries, run


def test_a_dataset_is_stored_with_its_queries_relevance_and_official_measures(tiny, tmp_path):
    qrels, queries, _ = tiny
    defs = {0: "not relevant", 1: "relevant", 2: "highly relevant"}
    ident = register(qrels, queries, doc={"official_measures": ["nDCG@10", "RR(rel=2)"]}, defs=defs)
    with evalstore.open(tmp_path / "s.duckdb") as store:
        res = store.ingest_dataset(ident, name="tiny")
        assert (res.status, res.n_judged, res.n_topics) == ("added", 5, 2)
        assert (res.measures, res.measures_source) == (["nDCG@10", "RR(rel=2)"], "ir_datasets")
        row = store.sql(
            "SELECT qrels, dataset, topics, official_measures, measures_source, relevance FROM datasets"
        ).rows
        assert row[0][:5] == ("tiny", ident, "tiny", ["nDCG@10", "RR(rel=2)"], "ir_datasets")
        assert json.loads(row[0][5]) == {"0": "not relevant", "1": "relevant", "2": "highly relevant"}
        assert store.sql("SELECT topic, doc, grade FROM qrels ORDER BY ALL").rows == [
            ("q1", "d1", 2), ("q1", "d2", 0), ("q1", "d3", 1), ("q2", "d4", 1), ("q2", "d5", 0)
        ]  # fmt: skip
        assert store.sql("SELECT topic, query FROM topics ORDER BY topic").rows == [
            ("q1", "black bear attacks"), ("q2", "solar eclipse dates")
        ]  # fmt: skip
        assert store.sql("SELECT source FROM qrels_sets").rows == [(f"ir_datasets:{ident}",)]
        assert store.official_measures("tiny") == ["nDCG@10", "RR(rel=2)"]
        again = store.ingest_dataset(ident, name="tiny")  # the same content: nothing changes
        assert again.status == "unchanged"
        assert store.sql("SELECT count(*) FROM dataset_meta").rows == [(1,)]


def test_eval_without_metrics_evaluates_the_official_measures(tiny, tmp_path, cli):
    qrels, queries, run = tiny
    ident = register(qrels, queries, doc={"official_measures": ["RR(rel=2)", "P@2"]})
    db = tmp_path / "s.duckdb"
    assert cli("ingest", "dataset", ident, "--name", "tiny", "--db", db)[0] == 0
    assert cli("ingest", "run", run, "--db", db)[0] == 0
    code, out, err = cli("eval", "-q", "tiny", "--db", db, "-f", "csv")
    assert code == 0, err
    assert out.splitlines() == ["run,qrels,n_topics,RR(rel=2),P@2", "sys,tiny,2,0.25,0.75"]
    # RR(rel=2): q1's first grade >= 2 at rank 2, q2 has none: (1/2 + 0) / 2; P@2: (2/2 + 1/2) / 2
    code, out, _ = cli("eval", "-q", "tiny", "--db", db, "-f", "csv", "-m", "AP")
    assert out.splitlines()[0] == "run,qrels,n_topics,AP"


def test_a_dataset_without_official_measures_gets_the_fallback_table(tiny, tmp_path):
    qrels, _, _ = tiny
    beir = register(qrels, ident=f"beir/evalstore-test-{next(_serial)}")
    other = register(qrels)
    with evalstore.open(":memory:") as store:
        res = store.ingest_dataset(beir, name="b")
        assert (res.measures, res.measures_source, res.n_topics) == (["nDCG@10"], "fallback", 0)
        assert store.ingest_dataset(other, name="o").measures == ["AP", "nDCG@10", "P@10"]
        assert store.sql("SELECT topics FROM datasets WHERE qrels = 'b'").rows == [(None,)]
    assert FALLBACK_MEASURES[-1].pattern == ""  # every id finds an entry


def test_a_dataset_object_is_accepted_and_bad_input_is_refused(tiny):
    qrels, queries, _ = tiny
    ds = ir_datasets.load(register(qrels, queries))
    run = {"q1": {"d1": 2.0, "d3": 1.0}}
    assert evalstore.evaluate(ds.qrels_iter(), run, ["P@2"]).mean("run", "P@2") == 1.0  # without a store, as before
    with evalstore.open(":memory:") as store:
        assert store.ingest_dataset(ds, name="obj").n_judged == 5
        with pytest.raises(IngestError, match="ir_datasets has no dataset"):
            store.ingest_dataset("no-such/dataset-here")
        with pytest.raises(IngestError, match="ir_datasets id or dataset"):
            store.ingest_dataset(42)  # type: ignore[arg-type]
        assert store.sql("SELECT count(*) FROM qrels_sets").rows == [(1,)]


def test_an_official_measure_evalstore_does_not_know_stores_nothing(tiny):
    qrels, _, _ = tiny
    ident = register(qrels, doc={"official_measures": ["NoSuchMeasure@10"]})
    with evalstore.open(":memory:") as store:
        with pytest.raises(evalstore.MetricError, match="NoSuchMeasure"):
            store.ingest_dataset(ident, name="x")
        assert store.sql("SELECT count(*) FROM qrels_sets").rows == [(0,)]


@pytest.mark.shared
@pytest.mark.slow
def test_dl2019_from_local_files_matches_ingest_qrels_and_nist(tmp_path, cli):
    d = need_shared(DATA_DIR / "trec-dl-2019-passage")
    from ir_datasets.datasets.base import YamlDocumentation

    judged = ir_datasets.load("msmarco-passage/trec-dl-2019/judged")  # its documentation and grades (no download)
    ident = register(d / "qrels.txt", d / "topics.tsv", defs=judged.qrels_defs(), ident="evalstore-test/dl19-local")
    ir_datasets.registry._registered[ident]._constituents.append(
        YamlDocumentation("docs/msmarco-passage.yaml")("trec-dl-2019/judged")
    )
    db = tmp_path / "dl19.duckdb"
    assert cli("ingest", "dataset", ident, "--name", "dl19", "--db", db)[0] == 0
    assert cli("ingest", "qrels", d / "qrels.txt", "--name", "dl19-file", "--db", db)[0] == 0
    with evalstore.open(db, read_only=True) as store:
        # the same judgments (the content hash of a file is its bytes', of rows given in memory theirs)
        a, b = (store.sql("SELECT n_judged, n_topics, max_grade FROM qrels_sets WHERE name = ?", [n]).rows for n in
                ("dl19", "dl19-file"))  # fmt: skip
        assert a == b == [(9260, 43, 3)]
        one = "SELECT topic, doc, grade FROM qrels WHERE qrels = ?"
        diff = f"{one} EXCEPT {one}"
        assert store.sql(diff, ["dl19", "dl19-file"]).rows == store.sql(diff, ["dl19-file", "dl19"]).rows == []
        assert store.official_measures("dl19") == ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]
        assert store.sql("SELECT count(*) FROM topics WHERE topics = 'dl19'").rows == [(43,)]
    assert cli("ingest", "run", *sorted(d.glob("runs/*.run.gz")), "--name-from", "file", "--db", db)[0] == 0
    code, out, err = cli("eval", "-q", "dl19", "--convention", "trec_eval9", "--db", db, "-f", "csv")
    assert code == 0, err
    got = {r["run"]: r for r in csv.DictReader(out.splitlines())}
    assert list(next(iter(got.values())))[3:] == ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]
    column = {"ndcg_cut_10": "nDCG@10", "recip_rank": "RR(rel=2)", "map": "AP(rel=2)"}
    with open(d / "official_nist_scores.tsv", encoding="utf-8") as f:
        nist = [
            r for r in csv.DictReader(f, delimiter="\t") if r["summary"] == "passages-eval" and r["measure"] in column
        ]
    assert len(nist) == 37 * 3
    bad = [r for r in nist if round(float(got[r["run_tag"]][column[r["measure"]]]), 4) != float(r["value"])]
    assert bad == []
