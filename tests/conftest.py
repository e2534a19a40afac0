"""Shared fixtures. Tests that need ../shared (real TREC/CLEF data, conformance files) carry the
``shared`` marker and skip with a clear reason when it is absent; CI always has it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import support
from support import SAMPLE, SHARED, need_shared, run_cli

import evalstore


def pytest_runtest_setup(item):
    """The ``shared`` marker is the one declaration: a marked test skips when ../shared is absent,
    and :func:`support.need_shared` refuses to serve an unmarked one."""
    support.CURRENT_MARKERS = {m.name for m in item.iter_markers()}
    if "shared" in support.CURRENT_MARKERS and not SHARED.exists():
        pytest.skip(f"needs {SHARED} (the project's shared/ folder beside the checkout); not present here")


#: test modules whose tests share an expensive module fixture: under pytest-xdist (pytest -n auto)
#: each runs whole on one worker, and every other test is balanced on its own (xdist's loadgroup
#: would do this with marks, but it groups nothing under pytest 9.2: pytest-xdist issue 1386).
#: Most expensive first: the workers start with them (see pytest_collection_modifyitems).
ONE_WORKER = {
    "tests/conformance/test_ranx_fusion_dl19.py": "three TREC DL 2019 runs in a store and as ranx runs (the kit)",
    "tests/conformance/test_spark.py": "one Spark session (a JVM) and the layout it reads",
    "tests/conformance/test_repro_eval_dl.py": "a store of ten TREC DL runs",
    "tests/conformance/test_dl_official.py": "stores of every TREC DL 2019 and 2020 run",
    "tests/conformance/test_ntcireval.py": "a store of every NTCIREVAL fixture",
    "tests/conformance/test_trectools.py": "a store of every TREC DL 2019 run and trectools' runs of them",
}


#: The unit lane (``pytest -m unit``, tests/README.md): the unit tests of the package's lower layers
#: and of its seams, no real data, no store of every run, no browser, no server process.
UNIT = (
    "tests/test_structure.py",
    "tests/evalstore/base/",
    "tests/evalstore/stats/",
    "tests/evalstore/intervals/",
    "tests/evalstore/output/",
    "tests/evalstore/results/",
    "tests/evalstore/metrics/test_options.py",
    "tests/evalstore/metrics/test_names.py",
    "tests/evalstore/evaluation/test_request.py",
    "tests/evalstore/ingest/test_tables.py",
)


def pytest_collection_modifyitems(config, items):
    """The expensive tests first, so that the workers of ``pytest -n`` finish together (the many
    short tests at the end fill the gaps): the modules of :data:`ONE_WORKER` in its order, then the
    tests marked ``slow``, then the others, each group in collection order. The tests of
    :data:`UNIT` get the ``unit`` mark (unless ``slow``)."""
    for item in items:
        if item.nodeid.startswith(UNIT) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.unit)
    order = list(ONE_WORKER)

    def cost_rank(item) -> tuple[int, int]:
        module = item.nodeid.split("::", 1)[0]
        if module in ONE_WORKER:
            return (0, order.index(module))
        return (1, 0) if item.get_closest_marker("slow") else (2, 0)

    items.sort(key=cost_rank)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``pytest -n``: balance by test, except the modules of :data:`ONE_WORKER` (an explicit
    ``--dist`` is kept), handed out in collection order (the expensive first, above)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # xdist would put the scopes with most tests first

    class ByTest(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER else nodeid

    return ByTest(config, log)


def _ingest_sample(s) -> None:
    s.ingest_qrels(SAMPLE / "qrels.txt", name="sample", progress=False)
    s.ingest_run(sorted((SAMPLE / "runs").glob("*.txt")), progress=False)


@pytest.fixture(scope="session")
def template_stores(tmp_path_factory):
    """Store files made once per test session (per worker under pytest-xdist) and copied per test:
    ``empty`` (every migration applied) and ``sample`` (the bundled sample collection: qrels set
    'sample' and its six runs). A copy opens without migrating or ingesting anything."""
    folder = tmp_path_factory.mktemp("templates")
    paths = {"empty": folder / "empty.duckdb", "sample": folder / "sample.duckdb"}
    evalstore.open(paths["empty"]).close()
    with evalstore.open(paths["sample"]) as s:
        _ingest_sample(s)
    return paths


@pytest.fixture(scope="session")
def rag_template(tmp_path_factory) -> Path:
    """The bundled RAG sample (evalstore/data/rag: answers, nuggets, manual and automatic
    assignments and support labels, qrels, topics, documents) in a store file, made once per
    session (per worker) when a test first asks for it."""
    from evalstore.cli.demo import ingest_rag_sample

    path = tmp_path_factory.mktemp("rag") / "rag.duckdb"
    with evalstore.open(path) as s:
        ingest_rag_sample(s)
    return path


@pytest.fixture
def rag_db(rag_template, tmp_path) -> Path:
    """A copy of the RAG sample's store, private to the test (a path, for the command line)."""
    path = tmp_path / "rag.duckdb"
    shutil.copyfile(rag_template, path)
    return path


@pytest.fixture
def rag_store(rag_db):
    """An open store holding the RAG sample, private to the test."""
    s = evalstore.open(rag_db)
    yield s
    s.close()


def _copy_of(template_stores, which: str, tmp_path) -> Path:
    path = tmp_path / f"{which}.duckdb"
    shutil.copyfile(template_stores[which], path)
    return path


@pytest.fixture
def store(template_stores, tmp_path):
    """An empty store of the current schema, private to the test."""
    s = evalstore.open(_copy_of(template_stores, "empty", tmp_path))
    yield s
    s.close()


@pytest.fixture
def sample_store(template_stores, tmp_path):
    """An open store holding the bundled sample collection: qrels set 'sample' and its six runs."""
    s = evalstore.open(_copy_of(template_stores, "sample", tmp_path))
    yield s
    s.close()


@pytest.fixture
def shared_dir():
    return need_shared()


@pytest.fixture
def sample_db(template_stores, tmp_path):
    """A store file holding the bundled sample collection: qrels set 'sample' and its six runs."""
    return _copy_of(template_stores, "sample", tmp_path)


@pytest.fixture
def cli():
    """``code, out, err = cli("eval", ..., stdin=TEXT)``: :func:`support.run_cli`, the one way the
    tests run a command line (its error layer included); no traceback may reach stderr."""

    def run(*args, stdin: str | None = None, env: dict[str, str] | None = None):
        result = run_cli(*args, stdin=stdin, env=env)
        assert "Traceback" not in result.stderr
        return result

    return run
