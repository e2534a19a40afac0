"""evalstore compare: p-values against scipy, Tukey HSD against brute-force enumeration, BH/BY,
effect sizes by hand, the paper tables (LaTeX markers = stored p-values) and the CLI checks."""

from __future__ import annotations

import itertools
import math
import re
import shutil
import subprocess

import numpy as np
import pytest
from support import DATA_DIR, need_shared, run_cli

import evalstore
from evalstore.comparison import result as render
from evalstore.errors import MetaError
from evalstore.stats import effects as fx
from evalstore.stats.sampling import sign_flips
from evalstore.stats.significance import adjust, min_trials, randomisation, tukey_hsd, wilcoxon

DL20 = DATA_DIR / "trec-dl-2020-passage"
DL19 = DATA_DIR / "trec-dl-2019-passage"
DL20_RUNS = ["p_bm25", "pash_r3", "pinganNLP2", "RMIT-Bart", "nlm-bert-rr", "bigIR-T5-R"]


@pytest.fixture(scope="module")
def dl20():
    need_shared(DL20)
    chosen = [DL20 / "runs" / f"{r}.run.gz" for r in DL20_RUNS]
    s = evalstore.open(":memory:")
    s.ingest_qrels(DL20 / "qrels.txt", name="dl20", progress=False)
    s.ingest_run(chosen, name_from="file", progress=False)
    yield s
    s.close()


# --------------------------------------------------------------------------- against scipy
@pytest.mark.slow
@pytest.mark.shared
def test_t_and_wilcoxon_p_values_equal_scipy_on_dl2020(dl20):
    from scipy import stats

    runs = [r for (r,) in dl20.sql("SELECT name FROM runs ORDER BY name").rows]
    base, others = runs[0], runs[1:]
    checked = 0
    for metric in ("nDCG@10", "AP(rel=2)", "RR(rel=2)"):
        for test in ("t", "wilcoxon"):
            cmp = dl20.compare("dl20", base, others, [metric], test=test, save=False, complete=True)
            m = cmp.matrices[0]  # the per-topic scores the comparison used, from the store
            x = dict(zip(m.runs, m.values))
            for p in cmp.pairs:
                d = x[p["run"]] - x[p["other"]]
                if test == "t":
                    ref = stats.ttest_rel(x[p["run"]], x[p["other"]]).pvalue
                else:
                    nz = d[d != 0]
                    ties = len(np.unique(np.abs(nz))) < len(nz)
                    # "approx": SciPy 1.11's name (the floor) of what later releases call "asymptotic"
                    method = "exact" if (not ties and len(nz) <= 50) else "approx"
                    ref = stats.wilcoxon(nz, zero_method="wilcox", correction=False, method=method).pvalue
                assert p["p_value"] == pytest.approx(ref, rel=1e-9, abs=1e-14), (metric, test, p["run"])
                checked += 1
    assert checked == 2 * 3 * len(others)


def test_compare_on_a_nugget_metric_is_scipys_paired_t_test(rag_store):
    """compare --qrels manual -b rag01 -m strict_vital -m vital: each p-value is scipy's ttest_rel on
    the per-topic scores read from the scores view (not from the comparison), and the LaTeX table
    marks what the stored p-values say."""
    from scipy import stats

    metrics = ["strict_vital", "vital", "weighted"]
    cmp = rag_store.compare("manual", "rag01", None, metrics, test="t")
    checked = 0
    for metric in metrics:
        rows = rag_store.sql(
            "SELECT run, topic, value FROM scores WHERE qrels = 'manual' AND metric = ?", [metric]
        ).rows
        per_run: dict[str, dict[str, float]] = {}
        for run, topic, value in rows:
            per_run.setdefault(run, {})[topic] = value
        topics = sorted(per_run["rag01"])
        for run in cmp.runs[1:]:
            p = cmp.pair(run, "rag01", metric)
            ref = stats.ttest_rel([per_run[run][t] for t in topics], [per_run["rag01"][t] for t in topics]).pvalue
            assert p is not None and p["p_value"] == pytest.approx(ref, rel=1e-9, abs=1e-14), (metric, run)
            checked += 1
    assert checked == 3 * 5
    assert "strict" in cmp.to_latex() and cmp.analysis_id is not None


@pytest.mark.slow
@pytest.mark.shared
def test_randomisation_p_counts_the_observed_pattern_and_agrees_with_scipy(dl20):
    """p = (c + 1) / (B + 1) with c counted over our sign patterns (checked literally), and within
    Monte-Carlo error of scipy.stats.permutation_test (samples pairing, B resamples each)."""
    from scipy import stats

    m = dl20.compare("dl20", "p_bm25", None, ["nDCG@10"], save=False, complete=True).matrices[0]
    x = dict(zip(m.runs, m.values))
    runs = sorted(x)
    B = 4000
    for other in runs[1:4]:
        z = x[other] - x[runs[0]]
        _, p = randomisation(z[None, :], B, 3)
        signs = sign_flips(z.size, B, 3)
        c = int(np.count_nonzero(np.abs(signs @ z) / z.size >= abs(z.mean()) - 1e-12))
        assert p[0] == (c + 1) / (B + 1) > 0
        ref = stats.permutation_test(
            (x[other], x[runs[0]]),
            lambda a, b: np.mean(a - b),
            permutation_type="samples",
            n_resamples=B,
            alternative="two-sided",
            random_state=np.random.default_rng(5),
        ).pvalue
        # both are Monte-Carlo estimates of the same exact p: allow 5 binomial standard errors each
        se = math.sqrt(max(ref, 1 / B) * (1 - min(ref, 0.5)) / B)
        assert abs(p[0] - ref) <= 10 * se + 2 / B


@pytest.mark.slow
@pytest.mark.shared
def test_bh_and_by_equal_scipy_and_a_hand_implementation(dl20):
    from scipy import stats

    cmp = dl20.compare("dl20", "p_bm25", None, ["nDCG@10"], test="t", all_pairs=True, save=False, complete=True)
    p = np.array([r["p_value"] for r in cmp.pairs])
    m = p.size
    for method in ("bh", "by"):
        ours = adjust(p, method)
        assert np.allclose(ours, stats.false_discovery_control(p, method=method), rtol=0, atol=1e-15)
        c = 1.0 if method == "bh" else sum(1 / i for i in range(1, m + 1))
        order = np.argsort(p)
        hand = np.empty(m)
        running = 1.0
        for rank in range(m, 0, -1):  # step-up: running minimum from the largest p down
            i = order[rank - 1]
            running = min(running, p[i] * m * c / rank)
            hand[i] = running
        assert np.allclose(ours, hand, rtol=1e-12, atol=0)


# --------------------------------------------------------------------------- Tukey HSD
def _brute_force_tukey(X: np.ndarray) -> np.ndarray:
    m, n = X.shape
    ranges = []
    for perms in itertools.product(itertools.permutations(range(m)), repeat=n):
        means = [sum(X[perms[j][i], j] for j in range(n)) / n for i in range(m)]
        ranges.append(max(means) - min(means))
    obs = X.mean(axis=1)
    P = np.ones((m, m))
    for i in range(m):
        for j in range(m):
            if i != j:
                P[i, j] = sum(r >= abs(obs[i] - obs[j]) - 1e-12 for r in ranges) / len(ranges)
    return P


def test_tukey_hsd_enumerates_small_matrices_exactly():
    X = np.array([[0.5, 0.2, 0.9], [0.1, 0.3, 0.4], [0.6, 0.6, 0.2]])
    D, P, trials = tukey_hsd(X, B=1000)
    assert trials == 6**3
    assert np.allclose(P, _brute_force_tukey(X), atol=1e-15)
    assert np.allclose(D, X.mean(axis=1)[:, None] - X.mean(axis=1)[None, :])


def test_tukey_hsd_randomised_agrees_with_enumeration():
    X = np.array([[0.5, 0.2, 0.9, 0.3, 0.7], [0.1, 0.3, 0.4, 0.2, 0.1], [0.6, 0.6, 0.2, 0.8, 0.9]])
    exact = _brute_force_tukey(X)  # 6^5 = 7776 arrangements
    _, P, trials = tukey_hsd(X, B=5000, seed=1)
    assert trials == 5000 and P.min() >= 1 / 5001
    se = np.sqrt(exact * (1 - exact) / 5000)
    assert np.all(np.abs(P - exact) <= 5 * se + 2 / 5000)


# --------------------------------------------------------------------------- effect sizes
def test_effect_sizes_by_hand():
    X = np.array([[0.2, 0.4, 0.6, 0.8], [0.1, 0.5, 0.3, 0.9], [0.0, 0.0, 0.3, 0.3]])
    z = (X[1] - X[0])[None, :]  # -0.1, 0.1, -0.3, 0.1: mean -0.05
    sd = math.sqrt((0.05**2 + 0.15**2 + 0.25**2 + 0.15**2) / 3)
    assert fx.d_z(z)[0] == pytest.approx(-0.05 / sd, rel=1e-12)
    lo, hi = fx.t_interval(z)
    half = 3.182446305284263 * sd / 2  # t_{3, 0.975} = 3.1824..., sqrt(4) = 2
    assert (lo[0], hi[0]) == pytest.approx((-0.05 - half, -0.05 + half), rel=1e-9)
    # V_E by hand: residual x_ij - row mean - column mean + grand mean, squared, / ((3-1)(4-1))
    rows, cols, grand = X.mean(axis=1), X.mean(axis=0), X.mean()
    ve = sum((X[i, j] - rows[i] - cols[j] + grand) ** 2 for i in range(3) for j in range(4)) / 6
    assert fx.residual_variance(X) == pytest.approx(ve, rel=1e-12)
    assert fx.smd(z, X)[0] == pytest.approx(-0.05 / math.sqrt(ve), rel=1e-12)
    blo, bhi = fx.bootstrap_interval(z, 2000, 0)
    assert -0.3 <= blo[0] <= -0.05 <= bhi[0] <= 0.1


@pytest.mark.slow
@pytest.mark.shared
def test_monte_carlo_p_is_never_zero_and_too_few_trials_are_named(dl20):
    cmp = dl20.compare(
        "dl20", "p_bm25", None, ["nDCG@10"], test="randomization", adjust="holm", all_pairs=True, trials=50,
        seed=1, save=False, complete=True,
    )  # fmt: skip
    assert min(p["p_value"] for p in cmp.pairs) == pytest.approx(1 / 51)
    assert not any(p["significant"] for p in cmp.pairs)
    assert any(f"--trials {min_trials(0.05, len(cmp.pairs), 'holm')}" in n for n in cmp.notes)
    with pytest.raises(MetaError, match="Tukey HSD test already controls"):
        dl20.compare("dl20", "p_bm25", None, ["AP"], test="tukey-hsd", adjust="holm", save=False)
    with pytest.raises(MetaError, match="unknown test"):
        dl20.compare("dl20", "p_bm25", None, ["AP"], test="z", save=False)


def test_wilcoxon_rule_is_ours_on_ties():
    from scipy import stats

    z = np.array([[0.1, -0.1, 0.2, 0.0, 0.3, 0.1]])
    _, p = wilcoxon(z)
    ref = stats.wilcoxon(z[0][z[0] != 0], correction=False, method="approx").pvalue
    assert p[0] == pytest.approx(ref, rel=1e-12)


# --------------------------------------------------------------------------- tables
@pytest.mark.slow
@pytest.mark.shared
def test_latex_markers_match_the_stored_p_values(dl20, tmp_path):
    cmp = dl20.compare("dl20", "p_bm25", None, ["nDCG@10", "AP(rel=2)"], test="t", adjust="holm", complete=True)
    tex = render.latex(cmp)
    stored = {
        (a, m): sig
        for a, m, sig in dl20.sql(
            "SELECT run_a, metric, significant FROM meta_pair_tests WHERE analysis_id = ? AND run_b = 'p_bm25'",
            [cmp.analysis_id],
        ).rows
    }
    body = tex.split("\\midrule")[-1].split("\\bottomrule")[0].strip().splitlines()
    assert len(body) == len(cmp.runs) - 1
    for line in body:
        run = line.split(" & ")[0].replace("\\_", "_")
        cells = line.rstrip(" \\").split(" & ")[1:]
        for cell, stored_name in zip(cells, cmp.stored):
            marked = "uparrow" in cell or "downarrow" in cell
            assert marked == stored[(run, stored_name)], (run, stored_name)
    assert tex.count("\\textbf{") == 2 and "\\toprule" in tex and "\\bottomrule" in tex
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed: the LaTeX table was checked for structure and markers, not compiled")
    doc = tmp_path / "t.tex"
    doc.write_text("\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n" + tex + "\\end{document}\n")
    subprocess.run(["pdflatex", "-interaction=nonstopmode", doc.name], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "t.pdf").exists()


@pytest.mark.slow
@pytest.mark.shared
def test_markdown_bolds_the_best_and_shows_markers(dl20):
    cmp = dl20.compare("dl20", "p_bm25", None, ["nDCG@10"], test="t", save=False, complete=True)
    md = render.markdown(cmp)
    best = cmp.runs[int(np.argmax(cmp.means[:, 0]))]
    assert re.search(rf"\| {re.escape(best)}[^|]* \| \*\*{cmp.means.max():.4f}\*\*", md)
    n_up = sum(1 for p in cmp.pairs if p["significant"] and p["diff"] > 0)
    assert md.count("▲") == n_up + 1  # + the legend line
    assert render.format_p(0.0004) == "<0.001" and render.format_p(0.0123) == "0.012"


# --------------------------------------------------------------------------- CLI


def test_cli_checks_options_before_any_work(sample_db, tmp_path):
    db = sample_db
    before = db.read_bytes()
    base = ["compare", "--db", str(db), "-q", "sample", "-b", "bm25", "-m", "AP"]
    r = run_cli(*base, "--test", "z")
    assert r.exit_code == 2 and "'z' is not one of" in r.output
    r = run_cli(*base, "-f", "latex", "-o", str(tmp_path / "x.md"))
    assert r.exit_code == 2 and "does not match" in r.output
    r = run_cli(*base, "--plot", str(tmp_path / "nope" / "p.png"))
    assert r.exit_code == 2 and "does not exist" in r.output
    assert db.read_bytes() == before
    r = run_cli(*base, "-o", str(tmp_path / "c.tex"), "--plot", str(tmp_path / "c.png"))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "c.tex").read_text().startswith("% evalstore; needs \\usepackage{booktabs}") and (
        tmp_path / "c.png"
    ).stat().st_size


@pytest.mark.slow
@pytest.mark.shared
def test_the_readme_command_on_dl2019(tmp_path):
    need_shared(DL19)
    db = tmp_path / "dl19.duckdb"
    with evalstore.open(db) as s:
        s.ingest_qrels(DL19 / "qrels.txt", name="dl19", progress=False)
        s.ingest_run(
            [DL19 / "runs" / f"{r}.run.gz" for r in ("bm25base_p", "p_bert", "idst_bert_p1", "TUW19-p1-f")],
            name_from="file",
            progress=False,
        )
    r = run_cli("compare", "--db", str(db), "--qrels", "dl19", "--baseline", "bm25base_p", "-r", "p_bert", "-r",
         "idst_bert_p1", "-r", "TUW19-p1-f", "-m", "nDCG@10", "-m", "AP(rel=2)", "--test", "tukey-hsd",
         "--format", "latex",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "bm25base\\_p (baseline) & 0.5058 & 0.3013" in r.output
    assert "idst\\_bert\\_p1 & \\textbf{0.7645}$^{\\uparrow}$ & \\textbf{0.5030}$^{\\uparrow}$" in r.output


def test_eval_and_discpower_plots(sample_db, tmp_path):
    db = sample_db
    before = db.read_bytes()
    r = run_cli("eval", "--db", str(db), "-q", "sample", "-m", "AP", "--plot", str(tmp_path / "x" / "b.png"))
    assert r.exit_code == 2 and "does not exist" in r.output and db.read_bytes() == before
    r = run_cli("eval", "--db", str(db), "-q", "sample", "-m", "AP", "-m", "nDCG@10", "--plot", "b.pdf")
    assert r.exit_code == 2 and "must end in .png" in r.output
    r = run_cli("eval", "--db", str(db), "-q", "sample", "-m", "AP", "--plot", str(tmp_path / "b.png"))
    assert r.exit_code == 0, r.output
    png = tmp_path / "b.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = run_cli(
        "meta",
        "discpower",
        "--db",
        str(db),
        "-q",
        "sample",
        "-m",
        "AP",
        "-B",
        "200",
        "--plot",
        str(tmp_path / "d.png"),
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "d.png").read_bytes()[:4] == b"\x89PNG"
