"""The ir_measures conformance kit (../shared/conformance/ir_measures): its collections loaded into
one store, and evalstore's values for its measure strings next to ir_measures 0.4.3's.

Used by tests/conformance/test_ir_measures.py; ``python tests/irm_kit.py`` prints a report (per
measure and provider: rows compared, rows that differ, an example).
"""

from __future__ import annotations

import csv
import math
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import evalstore
from evalstore.errors import EvalstoreError

KIT_NAME = Path("conformance") / "ir_measures"
TOLERANCE = 1e-6

#: collection (as in expected.tsv) -> (qrels file, run files), relative to the kit
COLLECTIONS = {
    "adhoc": ("adhoc/qrels.txt", "adhoc/runs/*.run"),
    "diversity": ("diversity/qrels.txt", "diversity/runs/*.run"),
    "tiny": ("tiny/adhoc/qrels.txt", "tiny/adhoc/runs/*.run"),
    "tiny_div": ("tiny/diversity/qrels.txt", "tiny/diversity/runs/*.run"),
}
DIVERSITY = {"diversity", "tiny_div"}


@dataclass(frozen=True)
class Row:
    collection: str  # the qrels set: adhoc, diversity, tiny or tiny_div
    run: str
    measure: str
    topic: str
    value: float
    provider: str


def load_expected(kit: Path) -> list[Row]:
    rows = []
    with open(kit / "expected.tsv", newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            coll = r["collection"]
            if coll == "tiny" and r["run"].startswith("td"):
                coll = "tiny_div"
            rows.append(Row(coll, r["run"], r["measure"], r["topic"], float(r["value"]), r["provider"]))
    return rows


def default_providers(kit: Path) -> dict[str, str]:
    """measure string -> the provider ir_measures uses for it by default ('-' when none)."""
    with open(kit / "measures.tsv", newline="") as f:
        return {r["measure"]: r["default_provider"] for r in csv.DictReader(f, delimiter="\t")}


def open_kit(kit: Path) -> evalstore.Store:
    """An in-memory store with every collection of the kit: one qrels set per collection, runs
    named as in expected.tsv."""
    store = evalstore.open(":memory:")
    for coll, (qrels, runs) in COLLECTIONS.items():
        kw = {"format": "subtopic"} if coll in DIVERSITY else {}
        try:
            store.ingest_qrels(kit / qrels, name=coll, progress=False, **kw)
        except EvalstoreError:
            if coll in DIVERSITY:
                continue  # subtopic qrels not supported by this build
            raise
        store.ingest_run(sorted(kit.glob(runs)), progress=False)
    return store


def runs_of(kit: Path, coll: str) -> list[str]:
    return sorted(p.stem for p in kit.glob(COLLECTIONS[coll][1]))


def compute(
    store: evalstore.Store, kit: Path, coll: str, measures: list[str]
) -> dict[str, dict[tuple[str, str], float] | str]:
    """For each measure string: {(run, topic or 'all'): value} on collection ``coll`` under the
    ir_measures convention, or the error message when evalstore refuses it. One evaluation of all
    the measures (as a user asks for several); a refusal names no measure the kit can rely on, so
    the measures are then split until each refused one is evaluated, and refused, on its own."""
    if coll not in store.qrels_names():
        return dict.fromkeys(measures, "no subtopic qrels in this build")
    try:
        res = store.evaluate(coll, runs_of(kit, coll), measures, convention="ir_measures", save=False)
    except EvalstoreError as e:
        if len(measures) == 1:
            return {measures[0]: str(e)}
        half = len(measures) // 2
        return {**compute(store, kit, coll, measures[:half]), **compute(store, kit, coll, measures[half:])}
    out: dict[str, dict[tuple[str, str], float]] = {m: {} for m in measures}
    for run, topic, metric, value in res.per_topic:
        out[metric][(run, topic)] = value
    for run, metric, mean, _n in res.means:
        out[metric][(run, "all")] = mean
    return out


def same(a: float | None, b: float) -> bool:
    """Equal within the tolerance; an undefined value (evalstore: no value, ir_measures: nan) on
    both sides counts as equal."""
    if a is None:
        return math.isnan(b)
    if math.isnan(b) or math.isnan(a):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= TOLERANCE


def compare(kit: Path, rows: list[Row], providers: set[str] | None = None):
    """Yield (row, value computed by evalstore or error text) for every row (of ``providers``)."""
    store = open_kit(kit)
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        if providers is None or r.provider in providers:
            groups[(r.collection, r.measure)].append(r)
    try:
        for coll in sorted({c for c, _ in groups}):
            values = compute(store, kit, coll, sorted(m for c, m in groups if c == coll))
            for (c, measure), rs in sorted(groups.items()):
                if c != coll:
                    continue
                got = values[measure]
                for r in rs:
                    yield r, (got if isinstance(got, str) else got.get((r.run, r.topic)))
    finally:
        store.close()


def report(kit: Path, only_default: bool = True) -> None:
    rows = load_expected(kit)
    defaults = default_providers(kit)
    if only_default:
        rows = [r for r in rows if defaults.get(r.measure) == r.provider]
    stats: dict[tuple[str, str], list] = defaultdict(lambda: [0, 0, None])
    for r, got in compare(kit, rows):
        s = stats[(r.measure, r.provider)]
        s[0] += 1
        if isinstance(got, str) or not same(got, r.value):
            s[1] += 1
            if s[2] is None:
                s[2] = f"{r.collection}/{r.run}/{r.topic}: got {got} expected {r.value}"
    bad = total = 0
    for (m, p), (n, nbad, ex) in sorted(stats.items()):
        total += n
        bad += nbad
        if nbad:
            print(f"{m}\t{p}\t{nbad}/{n}\t{ex}"[:300])
    print(f"rows {total}, differing {bad}")


if __name__ == "__main__":
    from support import SHARED

    report(SHARED / KIT_NAME, only_default="--all" not in sys.argv)
