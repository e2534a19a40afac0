"""Conformance with trec_eval 10.0: evalstore must print trec_eval's numbers.

Every expected output of the conformance kit (``../shared/conformance/trec_eval``: the
``all_trec*.txt``, ``cutoffs*.txt`` and ``out.test*`` files and ``synthetic/``) is either listed in
CASES with the trec_eval command line that produced it, or in NOT_APPLICABLE with the reason. For
each case the qrels and run are ingested into a store, every measure of the expected file is
evaluated in ONE ``store.evaluate`` call (trec_eval's own measure names, with trec_eval's -l/-J
mapped onto ``rel=``/``judged_only=``, -c onto ``complete=True``, -M onto ``depth=``), and every
value is compared per topic and in the summary (``all``) within 5e-5 (trec_eval prints 4
decimals). The topic sets must agree as well, and ``num_q`` must equal the number of topics
averaged.

Exclusions (each with its reason; see docs/trec_eval.md):

* ``runid``, ``relstring``: not measures (a run label; a per-topic string of relevance codes).
* ``rbp``: depends on undefined behaviour in trec_eval (uninitialised min/max in m_rbp.c).
* measures evalstore does not implement: ``rbp_resid``, ``binG``, ``G``, ``ndcg_rel``, ``Rndcg``
  (trec_eval's experimental gain measures and RBP's residual).
* ``num_rel`` in the summary of a ``-c -l L`` run with L != 1: trec_eval counts qrels entries with
  grade > 0 there, ignoring -l (m_num_rel.c); the test asserts that quirk value instead.
* ``-nan``: trec_eval divides 0 by 0 in iprec_at_recall/11pt_avg for a topic with no retrieved
  judged document under -J (``-c -J``, the fake ranking of a missing topic is removed); evalstore
  scores 0. Those cells (and the summary they poison) are skipped; the test asserts that evalstore
  gives 0 for the topic.

The core inputs and expected outputs are copied in ``tests/fixtures/trec_eval`` (with trec_eval's
licence), so these tests run without ../shared; the TREC RAG 2024 comment set (1 MB) is read from
../shared only and is skipped when it is absent.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import FIXTURES as KIT_COPIES
from support import TREC_EVAL_DIR, need_shared, run_cli

import evalstore
from evalstore.metrics import registry

FIXTURES = KIT_COPIES / "trec_eval"
TOL = 5e-5 + 1e-9

# trec_eval measures that are not compared, with the reason (see the module docstring)
NOT_COMPARED = {
    "runid": "a run label, not a measure",
    "num_q": "checked against the number of topics evalstore averages",
    "relstring": "a string of relevance codes, not a number",
    "rbp": "undefined behaviour in trec_eval 10.0 (m_rbp.c reads uninitialised min/max)",
    "rbp_resid": "not implemented in evalstore (RBP's residual)",
    "binG": "not implemented (trec_eval experimental gain measure)",
    "G": "not implemented (trec_eval experimental gain measure)",
    "ndcg_rel": "not implemented (trec_eval experimental gain measure)",
    "Rndcg": "not implemented (trec_eval experimental gain measure)",
}

# expected outputs of the kit that are not reproduced, with the reason
NOT_APPLICABLE = {
    "out.test.aqZ": "-Z z-score normalisation (needs per-topic means/stddevs from other systems) is not implemented",
    "out.test.prefs": "preference judgments (-R prefs) are outside evalstore's qrels model",
    "out.test.qrels_prefs": "preference measures (-R qrels_prefs) are not implemented",
    "out.test.qrels_jg": "multi-judgment-group qrels (-R qrels_jg) are outside evalstore's qrels model",
}


@dataclass(frozen=True)
class Case:
    expected: str
    qrels: str
    run: str
    rel: int = 1
    judged_only: bool = False
    complete: bool = False
    depth: int | None = None
    rounding: str = "v10"  # v9 = trec_eval 9.0.8's iprec_at_recall rounding
    command: str = ""


CASES = [
    Case(
        "all_trec.q.txt",
        "qrels.test",
        "results.test",
        complete=True,
        command="trec_eval -q -c -m all_trec qrels.test results.test",
    ),
    Case(
        "all_trec.J.q.txt",
        "qrels.test",
        "results.test",
        judged_only=True,
        command="trec_eval -q -J -m all_trec qrels.test results.test",
    ),
    Case(
        "all_trec.rel_level.q.txt",
        "qrels.rel_level",
        "results.test",
        command="trec_eval -q -m all_trec qrels.rel_level results.test",
    ),
    Case(
        "all_trec.rel_level.J.q.txt",
        "qrels.rel_level",
        "results.test",
        judged_only=True,
        command="trec_eval -q -J -m all_trec qrels.rel_level results.test",
    ),
    Case(
        "all_trec.rel_level.l2.q.txt",
        "qrels.rel_level",
        "results.test",
        rel=2,
        command="trec_eval -q -l2 -m all_trec qrels.rel_level results.test",
    ),
    Case(
        "all_trec.rel_level.l2.J.q.txt",
        "qrels.rel_level",
        "results.test",
        rel=2,
        judged_only=True,
        command="trec_eval -q -J -l2 -m all_trec qrels.rel_level results.test",
    ),
    Case(
        "all_trec.rel_level.c.trunc.q.txt",
        "qrels.rel_level",
        "results.trunc",
        complete=True,
        command="trec_eval -q -c -m all_trec qrels.rel_level results.trunc",
    ),
    Case(
        "all_trec.rel_level.l2.c.trunc.q.txt",
        "qrels.rel_level",
        "results.trunc",
        rel=2,
        complete=True,
        command="trec_eval -q -c -l2 -m all_trec qrels.rel_level results.trunc",
    ),
    Case(
        "all_trec.302.q.txt",
        "qrels-302.test",
        "results-302.test",
        command="trec_eval -q -m all_trec qrels-302.test results-302.test",
    ),
    Case(
        "all_trec.comment.q.txt",
        "qrels.comment.test",
        "results.comment.test.gz",
        complete=True,
        command="zcat results.comment.test.gz | trec_eval -q -c -m all_trec qrels.comment.test -",
    ),
    Case(
        "cutoffs.rel_level.q.txt",
        "qrels.rel_level",
        "results.test",
        command="trec_eval -q -m P.1,3,5,10,20 -m recall.1,3,5,10,100 -m ndcg_cut.1,3,5,10,20 "
        "-m map_cut.10,100 -m success.1,3,5,10 qrels.rel_level results.test",
    ),
    Case("out.test", "qrels.test", "results.test", command="trec_eval qrels.test results.test"),
    Case("out.test.a", "qrels.test", "results.test", command="trec_eval -m all_trec qrels.test results.test"),
    Case("out.test.aq", "qrels.test", "results.test", command="trec_eval -m all_trec -q qrels.test results.test"),
    Case(
        "out.test.aqc",
        "qrels.test",
        "results.trunc",
        complete=True,
        command="trec_eval -m all_trec -q -c qrels.test results.trunc",
    ),
    Case(
        "out.test.aqcM",
        "qrels.test",
        "results.trunc",
        complete=True,
        depth=100,
        command="trec_eval -m all_trec -q -c -M100 qrels.test results.trunc",
    ),
    Case(
        "out.test.aql",
        "qrels.rel_level",
        "results.test",
        rel=2,
        command="trec_eval -m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test",
    ),
    Case(
        "out.test.meas_params",
        "qrels.test",
        "results.test",
        command="trec_eval -q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
        "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 "
        "-mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test",
    ),
    Case(
        "out.comment.test",
        "qrels.comment.test",
        "results.comment.test.gz",
        command="zcat results.comment.test.gz | trec_eval qrels.comment.test -",
    ),
    Case(
        "synthetic/edge.all_trec.c.q.txt",
        "synthetic/edge.qrels",
        "synthetic/edge.run",
        complete=True,
        command="trec_eval -q -c -m all_trec -m relstring.20 edge.qrels edge.run",
    ),
    Case(
        "synthetic/edge.all_trec.c.J.q.txt",
        "synthetic/edge.qrels",
        "synthetic/edge.run",
        complete=True,
        judged_only=True,
        command="trec_eval -q -c -J -m all_trec -m relstring.20 edge.qrels edge.run",
    ),
    Case(
        "synthetic/edge.all_trec.c.l2.q.txt",
        "synthetic/edge.qrels",
        "synthetic/edge.run",
        complete=True,
        rel=2,
        command="trec_eval -q -c -l2 -m all_trec -m relstring.20 edge.qrels edge.run",
    ),
    Case(
        "synthetic/edge.all_trec.noc.v9_0_8.q.txt",
        "synthetic/edge.qrels",
        "synthetic/edge.run",
        rounding="v9",
        command="trec_eval 9.0.8: trec_eval -q -m all_trec -m relstring.20 edge.qrels edge.run",
    ),
]


def locate(name: str) -> Path:
    """A kit file: the copy in tests/fixtures, else ../shared (a case reading it is marked shared)."""
    if (FIXTURES / name).exists():
        return FIXTURES / name
    return need_shared(TREC_EVAL_DIR) / name


def reads_shared(case) -> bool:
    """Whether a case needs a file of the kit that tests/fixtures does not copy."""
    return any(not (FIXTURES / name).exists() for name in (case.expected, case.qrels, case.run))


def case_params():
    return [pytest.param(c, id=c.expected, marks=[pytest.mark.shared] if reads_shared(c) else []) for c in CASES]


@dataclass
class Expected:
    values: dict[tuple[str, str], str] = field(default_factory=dict)  # (measure, topic) -> printed value
    measures: list[str] = field(default_factory=list)  # in file order

    def topics(self, measure: str) -> set[str]:
        return {t for (m, t) in self.values if m == measure and t != "all"}


def parse_expected(path: Path) -> Expected:
    """trec_eval output: ``measure<ws>topic<ws>value`` per line."""
    exp = Expected()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        measure, topic, value = line.split(None, 2)
        exp.values[(measure, topic)] = value.strip()
        if measure not in exp.measures:
            exp.measures.append(measure)
    return exp


def base_name(measure: str) -> str:
    return re.sub(r"_\d+$", "", measure) if measure.startswith("relstring") else measure


def query_name(measure: str, case: Case) -> str:
    """trec_eval's printed name with the case's options as parameters (only those the metric takes)."""
    spec = registry.parse_metric(measure)[0].spec
    opts = {
        "rel": case.rel if case.rel != 1 else None,
        "judged_only": "true" if case.judged_only else None,
        "rounding": case.rounding if case.rounding != "v10" else None,
    }
    params = [f"{k}={v}" for k, v in opts.items() if v is not None and spec.param(k) is not None]
    return measure + (f"({','.join(params)})" if params else "")


@pytest.fixture(scope="module")
def kit_store():
    s = evalstore.open(":memory:")
    s.loaded = {}
    yield s
    s.close()


def load(store, qrels: str, run: str) -> tuple[str, str]:
    """Ingest a kit qrels file and run file once per module; returns their names in the store."""
    names = []
    for kind, name in (("qrels", qrels), ("run", run)):
        key = (kind, name)
        if key not in store.loaded:
            path = locate(name)
            label = name.replace("/", "_")
            if kind == "qrels":
                store.ingest_qrels(path, name=label, progress=False)
            else:
                store.ingest_run(path, name=label, progress=False)
            store.loaded[key] = label
        names.append(store.loaded[key])
    return names[0], names[1]


def compared_measures(exp: Expected) -> list[str]:
    return [m for m in exp.measures if base_name(m) not in NOT_COMPARED]


def run_case(store, case: Case):
    exp = parse_expected(locate(case.expected))
    qrels, run = load(store, case.qrels, case.run)
    measures = compared_measures(exp)
    names = {query_name(m, case): m for m in measures}
    res = store.evaluate(qrels, [run], list(names), complete=case.complete, depth=case.depth, save=False)
    ours: dict[tuple[str, str], float] = {}
    for _, topic, disp, value in res.per_topic:
        ours[(names[disp], topic)] = value
    n_topics = {}
    for _, disp, mean, n in res.means:
        ours[(names[disp], "all")] = mean
        n_topics[names[disp]] = n
    return exp, ours, n_topics, measures


def qrels_positive_count(store, qrels: str) -> int:
    return store.sql("SELECT count(*) FROM qrels WHERE qrels = ? AND grade > 0", [qrels]).rows[0][0]


@pytest.mark.parametrize("case", case_params())
def test_conformance(kit_store, case):
    exp, ours, n_topics, measures = run_case(kit_store, case)
    assert measures, f"{case.expected}: no measure to compare"
    compared, problems = 0, []
    nan_measures = {m for (m, t), v in exp.values.items() if "nan" in v}
    for measure in measures:
        gm = measure.startswith("gm_")  # trec_eval prints gm_* only in the summary
        if not gm and exp.topics(measure):
            got_topics = {t for (m, t) in ours if m == measure and t != "all"}
            if got_topics != exp.topics(measure):
                problems.append(f"{measure}: topics {sorted(got_topics)} != trec_eval's {sorted(exp.topics(measure))}")
        for (m, topic), text in exp.values.items():
            if m != measure or (gm and topic != "all"):
                continue
            if "nan" in text:
                if topic != "all":  # trec_eval's 0/0; evalstore's value for the topic is 0
                    assert ours[(measure, topic)] == 0.0, (case.expected, measure, topic)
                continue
            if topic == "all" and measure in nan_measures:
                continue  # the summary of a column holding trec_eval's nan
            want = float(text)
            if measure == "num_rel" and topic == "all" and case.complete and case.rel != 1:
                # trec_eval quirk (m_num_rel.c): with -c the summary counts qrels entries with grade > 0
                qrels, _ = load(kit_store, case.qrels, case.run)
                assert qrels_positive_count(kit_store, qrels) == want
                continue
            got = ours.get((measure, topic))
            compared += 1
            if got is None or math.isnan(got) or abs(got - want) > TOL:
                problems.append(f"{measure} {topic}: evalstore {got!r}, trec_eval {text}")
    if ("num_q", "all") in exp.values:
        want_q = int(exp.values[("num_q", "all")])
        assert all(n == want_q for n in n_topics.values()), f"num_q {want_q} vs topics averaged {n_topics}"
    assert not problems, (
        f"{case.expected} ({case.command}): {len(problems)} of {compared} values differ:\n" + "\n".join(problems[:40])
    )
    assert compared > 0


@pytest.mark.parametrize("kit", ["fixtures", pytest.param("shared", marks=pytest.mark.shared)])
def test_every_expected_file_is_covered(kit):
    """Each expected output in the kit (and in its copies in tests/fixtures) is a conformance case or
    is listed as not applicable."""
    base = FIXTURES if kit == "fixtures" else need_shared(TREC_EVAL_DIR)
    files = sorted(
        p.relative_to(base).as_posix()
        for pattern in ("all_trec*.txt", "cutoffs*.txt", "out.*", "synthetic/*.txt")
        for p in base.glob(pattern)
    )
    assert files
    known = {c.expected for c in CASES} | set(NOT_APPLICABLE)
    assert [f for f in files if f not in known] == []


@pytest.mark.shared
def test_fixture_copies_identical_to_kit():
    """The copies in tests/fixtures are byte-identical to the kit."""
    need_shared(TREC_EVAL_DIR)
    copied = [p for p in FIXTURES.rglob("*") if p.is_file()]
    assert len(copied) >= 20
    for p in copied:
        src = TREC_EVAL_DIR / p.relative_to(FIXTURES)
        assert src.read_bytes() == p.read_bytes(), p


def test_trec_eval_measure_lists_parse_as_trec_eval_prints_them():
    """out.test.meas_params: each -m argument expands to the names trec_eval prints (sorted cutoffs, atol)."""
    expect = {
        "iprec_at_recall..10,.20,.25,.75,.50": [
            "iprec_at_recall_0.10",
            "iprec_at_recall_0.20",
            "iprec_at_recall_0.25",
            "iprec_at_recall_0.50",
            "iprec_at_recall_0.75",
        ],
        "P.5,7,3": ["P_3", "P_5", "P_7"],
        "recall.20,2000": ["recall_20", "recall_2000"],
        "Rprec_mult.5.0,0.2,0.35": ["Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"],
        "ndcg_cut.10,20,23.4": ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"],
        "success.2,5,20": ["success_2", "success_5", "success_20"],
    }
    printed = parse_expected(locate("out.test.meas_params")).measures
    for arg, names in expect.items():
        assert [i.display for i in registry.parse_metric(arg)] == names
        assert set(names) <= set(printed)
    # single-valued measures with parameters keep the name as written and map onto parameters
    assert registry.parse_metric("utility.2,-1,0,0")[0].p == {
        **registry.parse_metric("utility")[0].p,
        "a": 2.0,
        "b": -1.0,
    }
    assert registry.parse_metric("11pt_avg..25,.5,.75")[0].p["levels"] == (0.25, 0.5, 0.75)
    assert registry.parse_metric("ndcg.1=3,2=9,4=4.5")[0].p["gains"] == (3.0, 9.0, 3.0, 4.5)


def test_cli_trec_format_matches_trec_eval(tmp_path):
    """``evalstore eval --format trec -p -m all_trec`` prints trec_eval -q's layout and numbers."""
    db = str(tmp_path / "s.duckdb")
    for args in (
        ["ingest", "qrels", str(locate("qrels.test")), "--name", "qrels.test"],
        ["ingest", "run", str(locate("results.test"))],
    ):
        r = run_cli(*args + ["--db", db])
        assert r.exit_code == 0, r.output
    r = run_cli("eval", "-q", "qrels.test", "-m", "all_trec", "--format", "trec", "-p", "--db", db)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    exp = parse_expected(locate("out.test.aq"))
    seen, topics = set(), []
    for line in lines:
        measure, topic, value = line.split("\t")
        assert measure == f"{measure.rstrip():<22s}"  # trec_eval's %-22s
        measure = measure.rstrip()
        key = (measure, topic)
        assert key in exp.values, f"{key} is not in trec_eval's output"
        want = exp.values[key]
        if measure.startswith("num_"):
            assert value == want  # integers print as integers
        else:
            assert re.fullmatch(r"-?\d+\.\d{4}", value) and abs(float(value) - float(want)) <= TOL, (key, value, want)
        seen.add(key)
        topics.append(topic)
    # per-topic lines first, topics in strcmp order, the summary (all) last
    assert topics == sorted(t for t in topics if t != "all") + ["all"] * topics.count("all")
    missing = {k for k in exp.values if base_name(k[0]) not in NOT_COMPARED} - seen
    assert missing == set()


@pytest.mark.parametrize("qrels, run", [("qrels-302.test", "results-302.test"), ("qrels.rel_level", "results.test")])
def test_v9_rounding_matches_pytrec_eval(kit_store, qrels, run):
    """``rounding=v9`` reproduces trec_eval 9.0.8's iprec_at_recall/11pt_avg, as embedded in pytrec_eval
    (topic 302: iprec_at_recall_0.60 is 0.1528 in v10 but 0.1420 in 9.0.8)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    q: dict[str, dict[str, int]] = {}
    for line in locate(qrels).read_text().splitlines():
        t, _, d, g = line.split()
        q.setdefault(t, {})[d] = int(g)
    r: dict[str, dict[str, float]] = {}
    for line in locate(run).read_text().splitlines():
        f = line.split()
        r.setdefault(f[0], {})[f[2]] = float(f[4])
    theirs = pytrec_eval.RelevanceEvaluator(q, {"iprec_at_recall", "11pt_avg"}).evaluate(r)
    qname, rname = load(kit_store, qrels, run)
    names = [f"iprec_at_recall_{p:.2f}(rounding=v9)" for p in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)]
    names.append("11pt_avg(rounding=v9)")
    ours = kit_store.evaluate(qname, [rname], names, save=False).topics()[rname]
    assert set(ours) == set(theirs)
    for topic, vals in theirs.items():
        for name in names:
            assert abs(ours[topic][name] - vals[name.split("(")[0]]) < 1e-9, (topic, name)
