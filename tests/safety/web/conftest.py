"""The web pages' fixtures (tests/webfixtures.py): the web store, a private copy, Starlette's client."""

from webfixtures import client, web_store, web_store_master  # noqa: F401
