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

from typing import TYPE_CHECKING

from .base.lazy import exports
from .version import __version__

if TYPE_CHECKING:
    from .api import evaluate, experiment
    from .comparison import Comparison, compare
    from .comparison.experiments import Experiment
    from .errors import EvalstoreError, IngestError, MetricError, StoreError
    from .evaluation.in_memory import Evaluator
    from .metrics.user import register_measure, unregister_measure
    from .store import Store, open  # noqa: A004  (evalstore.open opens a store, like sqlite3.connect)

#: Where each name of the package is defined: imported on first use (PEP 562,
#: :mod:`evalstore.base.lazy`), so that ``import evalstore`` (and the command line's start) does not
#: load DuckDB, Arrow and numpy before a command needs them.
_EXPORTS = {
    "Comparison": ".comparison",
    "EvalstoreError": ".errors",
    "Evaluator": ".evaluation.in_memory",
    "Experiment": ".comparison.experiments",
    "IngestError": ".errors",
    "MetricError": ".errors",
    "Store": ".store",
    "StoreError": ".errors",
    "compare": ".comparison",
    "evaluate": ".api",
    "experiment": ".api",
    "open": ".store",
    "register_measure": ".metrics.user",
    "unregister_measure": ".metrics.user",
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

__all__ = [
    "Comparison",
    "EvalstoreError",
    "Evaluator",
    "Experiment",
    "IngestError",
    "MetricError",
    "Store",
    "StoreError",
    "__version__",
    "compare",
    "evaluate",
    "experiment",
    "open",
    "register_measure",
    "unregister_measure",
]
