"""evalstore: a DuckDB-backed store for information-retrieval evaluation.

::

    import evalstore
    store = evalstore.open("my.duckdb")          # or evalstore.open() -> ./evalstore.duckdb
    store.ingest_qrels("qrels.txt")
    store.ingest_run("runs/*.gz")
    res = store.evaluate("qrels", metrics=["AP", "nDCG@10"])
    store.sql("SELECT * FROM leaderboard")

    # without a store file, for notebooks:
    evalstore.evaluate({"q1": {"d1": 1}}, {"sys": {"q1": {"d1": 2.0, "d2": 1.0}}}, ["AP", "P@1"])
"""

from .api import evaluate
from .comparison import Comparison, compare
from .errors import EvalstoreError, IngestError, MetricError, StoreError
from .evaluator import Evaluator
from .facade import Store, open  # noqa: A004  (evalstore.open opens a store, like sqlite3.connect)
from .version import __version__

__all__ = [
    "Comparison",
    "EvalstoreError",
    "Evaluator",
    "IngestError",
    "MetricError",
    "Store",
    "StoreError",
    "__version__",
    "compare",
    "evaluate",
    "open",
]
