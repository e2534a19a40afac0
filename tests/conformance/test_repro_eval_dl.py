"""`evalstore repro` side by side with repro_eval 0.5.0 on real TREC Deep Learning passage runs:
every value (KTU, RBO, RMSE, nRMSE, ER, ΔRI, t-test p-values) within 1e-6.

The run pairs (original baseline/advanced -> reproduction):

* DL 2019, ``bm25base_p``/``bm25base_rm3_p`` -> ``bm25tuned_p``/``bm25tuned_rm3_p`` (the organisers'
  default and tuned BM25 and BM25+RM3), in both ranking orders (trec_eval's and repro_eval's);
* DL 2019, ``p_bert``/``p_exp_bert`` -> ``idst_bert_p1``/``idst_bert_p2``;
* DL 2019, ``bm25base_p``/``bm25base_rm3_p`` -> deterministic perturbations of them: scores rounded
  to one decimal (many ties, broken by docno descending in both tools) and every third pair of
  adjacent documents swapped; RBO also at repro_eval's default p = 0.95;
* replicability: DL 2019 ``bm25base_p``/``bm25base_rm3_p`` -> DL 2020 ``p_bm25``/``p_bm25rm3`` on the
  DL 2020 qrels (ER, ΔRI, unpaired t-tests).

repro_eval evaluates with ir_measures (pytrec_eval); evalstore with its own SQL (trec_eval's
conventions). The runs chosen retrieve 1000 documents on every topic: repro_eval's KTU fails on lists
of different lengths. repro_eval and pandas are in the test extra; without them this module skips.
"""

from __future__ import annotations

import gzip
import math
import warnings

import pytest
from support import DATA_DIR, ROOT, need_shared

import evalstore
from evalstore.repro import reproducibility

pytestmark = [pytest.mark.slow, pytest.mark.shared]
TOL = 1e-6
#: evalstore metric -> repro_eval's key (ir_measures' name)
METRICS = {
    "AP": "AP",
    "nDCG": "nDCG",
    "nDCG@10": "nDCG@10",
    "nDCG@100": "nDCG@100",
    "P@10": "P@10",
    "P@100": "P@100",
    "R@100": "R@100",
    "R@1000": "R@1000",
    "RR": "RR",
    "Rprec": "Rprec",
    "Bpref": "Bpref",
    "AP@100": "AP@100",
}
#: values compared with repro_eval per case (and p-values of identical score vectors, 1 here and
#: NaN in repro_eval): each test checks its own; together they are the count the docs quote
PER_PAIR = 4 + 8 * len(METRICS)  # KTU and RBO of both runs; RMSE, nRMSE, p-values of both; ER, ΔRI
CASES = {
    "bm25_default_to_tuned[trec_eval]": (PER_PAIR, 0),
    "bm25_default_to_tuned[repro_eval]": (PER_PAIR, 0),
    "bert_runs": (PER_PAIR, 0),
    "perturbed_reproduction_with_ties[0.8]": (PER_PAIR - 2, 2),
    "perturbed_reproduction_with_ties[0.95]": (PER_PAIR - 2, 2),
    "replicability_dl19_to_dl20": (4 * len(METRICS), 0),  # ER, ΔRI and the unpaired p-values
}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    need_shared(DATA_DIR / "trec-dl-2019-passage")
    pytest.importorskip("pandas", reason="repro_eval needs pandas (the test extra installs it)")
    # repro_eval.Evaluator imports scipy.stats.stats (deprecated, gone in SciPy 2): skip, do not fail, then
    pytest.importorskip("repro_eval.Evaluator", reason="repro_eval 0.5.0 is the reference (the test extra installs it)")
    tmp = tmp_path_factory.mktemp("repro_dl")
    d19 = DATA_DIR / "trec-dl-2019-passage"
    d20 = DATA_DIR / "trec-dl-2020-passage"
    files = {}
    for name in ["bm25base_p", "bm25base_rm3_p", "bm25tuned_p", "bm25tuned_rm3_p", "p_bert", "p_exp_bert",
                 "idst_bert_p1", "idst_bert_p2"]:  # fmt: skip
        files[name] = _unzip(d19 / "runs" / f"{name}.run.gz", tmp / f"{name}.run")
    for name in ["p_bm25", "p_bm25rm3"]:
        files[name] = _unzip(d20 / "runs" / f"{name}.run.gz", tmp / f"{name}.run")
    for name in ["bm25base_p", "bm25base_rm3_p"]:
        files[f"{name}_perturbed"] = _perturb(files[name], tmp / f"{name}_perturbed.run")
    s = evalstore.open(":memory:")
    s.ingest_qrels(d19 / "qrels.txt", name="dl19", progress=False)
    s.ingest_qrels(d20 / "qrels.txt", name="dl20", progress=False)
    s.ingest_run(list(files.values()), progress=False)
    yield s, files, {"dl19": str(d19 / "qrels.txt"), "dl20": str(d20 / "qrels.txt")}
    s.close()


def _unzip(src, dst):
    with gzip.open(src, "rt", encoding="utf-8") as f:
        dst.write_text(f.read(), encoding="utf-8")
    return dst


def _perturb(src, dst):
    """Scores to one decimal (ties) and, per topic, every third pair of neighbours swapped; the
    lines stay sorted by score; the tag changes so that the run has its own name."""
    by_topic: dict[str, list[tuple[str, float]]] = {}
    for line in src.read_text().splitlines():
        t, _, doc, _, score, _ = line.split()
        by_topic.setdefault(t, []).append((doc, float(score)))
    out = []
    for t, rows in by_topic.items():
        docs = [d for d, _ in rows]
        scores = [round(sc, 1) for _, sc in rows]
        for i in range(0, len(docs) - 1, 6):
            docs[i], docs[i + 1] = docs[i + 1], docs[i]
        out += [f"{t} Q0 {d} {i + 1} {sc:.1f} {dst.stem}" for i, (d, sc) in enumerate(zip(docs, scores))]
    dst.write_text("\n".join(out) + "\n")
    return dst


def _repro_eval(qrels, files, b, a, rb, ra, rep_qrels=None, p=0.8):
    from repro_eval.Evaluator import RpdEvaluator, RplEvaluator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = dict(
            qrels_orig_path=qrels,
            run_b_orig_path=str(files[b]),
            run_a_orig_path=str(files[a]),
            run_b_rep_path=str(files[rb]),
            run_a_rep_path=str(files[ra]),
        )
        if rep_qrels is None:
            ev = RpdEvaluator(**kw)
            ev.trim()
            ev.evaluate()
            return {
                "ktu": ev.ktu(),
                "rbo": ev.rbo(p=p),
                "rmse": ev.rmse(),
                "nrmse": ev.nrmse(),
                "er": ev.er(),
                "dri": ev.dri(),
                "ttest": ev.ttest(),
            }
        ev = RplEvaluator(**kw, qrels_rpl_path=rep_qrels)
        ev.trim()
        ev.evaluate()
        return {"er": ev.er(), "dri": ev.dri(), "ttest": ev.ttest()}


def _compare(ours: dict, ref: dict) -> tuple[int, int]:
    """Every value of ours against repro_eval's; returns how many were compared, and how many
    p-values of identical score vectors (1 here, NaN in repro_eval) were set aside."""
    n = identical = 0
    bad = []
    for key, val in ours.items():
        if key in ("ktu", "rbo"):
            for side, v in val.items():
                n += 1
                if not math.isclose(v, ref[key][side], rel_tol=0, abs_tol=TOL):
                    bad.append((key, side, v, ref[key][side]))
        elif key in ("er", "dri"):
            for m, v in val.items():
                n += 1
                if not math.isclose(v, ref[key][METRICS[m]], rel_tol=0, abs_tol=TOL):
                    bad.append((key, m, v, ref[key][METRICS[m]]))
        else:
            for side, per in val.items():
                for m, v in per.items():
                    r = ref[key][side][METRICS[m]]
                    if key == "ttest" and math.isnan(r) and v == 1.0:
                        # identical per-topic scores: p = 1 here, NaN in repro_eval (docs/reproducibility.md)
                        identical += 1
                        continue
                    n += 1
                    if not math.isclose(v, r, rel_tol=0, abs_tol=TOL):
                        bad.append((key, side, m, v, r))
    assert not bad, bad
    return n, identical


@pytest.mark.parametrize("order", ["trec_eval", "repro_eval"])
def test_bm25_default_to_tuned(env, order):
    s, files, qrels = env
    runs = ("bm25base_p", "bm25base_rm3_p", "bm25tuned_p", "bm25tuned_rm3_p")
    ours = reproducibility(s, "dl19", *runs, list(METRICS), order=order, save=False)
    assert (
        _compare(ours.to_dict(), _repro_eval(qrels["dl19"], files, *runs)) == CASES[f"bm25_default_to_tuned[{order}]"]
    )


def test_bert_runs(env):
    s, files, qrels = env
    runs = ("p_bert", "p_exp_bert", "idst_bert_p1", "idst_bert_p2")
    ours = reproducibility(s, "dl19", *runs, list(METRICS), save=False)
    assert _compare(ours.to_dict(), _repro_eval(qrels["dl19"], files, *runs)) == CASES["bert_runs"]


@pytest.mark.parametrize("p", [0.8, 0.95])
def test_perturbed_reproduction_with_ties(env, p):
    s, files, qrels = env
    runs = ("bm25base_p", "bm25base_rm3_p", "bm25base_p_perturbed", "bm25base_rm3_p_perturbed")
    ours = reproducibility(s, "dl19", *runs, list(METRICS), rbo_p=p, order="repro_eval", save=False)
    # R@1000 keeps its per-topic values (the same 1000 documents): its two p-values are the
    # documented difference (1 here, NaN in repro_eval), the rest must agree
    assert ours.ttest["baseline"]["R@1000"] == ours.ttest["advanced"]["R@1000"] == 1.0
    assert (
        _compare(ours.to_dict(), _repro_eval(qrels["dl19"], files, *runs, p=p))
        == CASES[f"perturbed_reproduction_with_ties[{p}]"]
    )
    same = reproducibility(s, "dl19", *runs, list(METRICS), rbo_p=p, order="trec_eval", save=False)
    assert same.to_dict() == ours.to_dict()  # the files are sorted by score: both orders agree


def test_replicability_dl19_to_dl20(env):
    s, files, qrels = env
    runs = ("bm25base_p", "bm25base_rm3_p", "p_bm25", "p_bm25rm3")
    ours = reproducibility(s, "dl19", *runs, list(METRICS), rep_qrels="dl20", save=False)
    ref = _repro_eval(qrels["dl19"], files, *runs, rep_qrels=qrels["dl20"])
    assert _compare(ours.to_dict(), ref) == CASES["replicability_dl19_to_dl20"]


def test_count_of_values_compared():
    """The agreement count the docs quote is the sum over the cases above (each test checks its own
    count, so this holds in whatever order, or on whichever worker, they run), and every case is a test."""
    tests = {name.removeprefix("test_") for name, f in globals().items() if name.startswith("test_") and callable(f)}
    assert {case.split("[")[0] for case in CASES} == tests - {"count_of_values_compared"}
    values = sum(v for v, _ in CASES.values())
    identical = sum(i for _, i in CASES.values())
    assert values == 544 and identical == 4
    assert f"**{values} values agree within 1e-6**; the {identical} p-values of identical score vectors" in " ".join(
        (ROOT / "docs" / "reproducibility.md").read_text(encoding="utf-8").split()
    )
    assert f"{values} values agree with repro_eval 0.5.0 within 1e-6" in " ".join(
        (ROOT / "docs" / "reproducibility.md").read_text(encoding="utf-8").split()
    )
