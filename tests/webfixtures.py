"""Fixtures of the tests of the web pages (tests/evalstore/web/, tests/safety/web/, tests/browser/),
imported by those modules: a store file built from the bundled sample (evalstore demo), with a run
whose name is HTML, a run whose name has a comma, a slash and a question mark, and one stored
analysis of each kind the meta page draws; a private copy per test; Starlette's test client.
Importing this module skips the importing tests when the web extra is not installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason='the web extra is not installed (pip install "evalstore[web-test]")')
pytest.importorskip("jinja2", reason='the web extra is not installed (pip install "evalstore[web-test]")')
# Starlette's test client needs httpx, which the web-test extra brings and the web extra does not
# (`pip install ".[web,test]"` then `pytest` stopped at collection with an error)
pytest.importorskip("httpx", reason='Starlette\'s test client needs httpx: pip install "evalstore[web-test]"')

from websupport import build_store  # noqa: E402


@pytest.fixture(scope="session")
def web_store_master(tmp_path_factory) -> Path:
    return build_store(tmp_path_factory.mktemp("web") / "web.duckdb")


@pytest.fixture
def web_store(web_store_master, tmp_path) -> Path:
    """A private copy of the store for a test (tests may compare its bytes, or write to it)."""
    dst = tmp_path / "store.duckdb"
    shutil.copyfile(web_store_master, dst)
    return dst


def client_of(store: Path):
    """Starlette's test client of ``evalstore serve`` over the store file ``store`` (a server error
    is answered as the server answers it, a page, rather than raised)."""
    from starlette.testclient import TestClient

    from evalstore.web.app import Source, create_app

    return TestClient(create_app(Source(str(store))), base_url="http://127.0.0.1", raise_server_exceptions=False)


@pytest.fixture
def client(web_store):
    with client_of(web_store) as c:
        yield c
