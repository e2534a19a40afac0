"""Metrics: the registry (names, parameters, citations), the SQL engine and the families."""

from .registry import all_metrics, describe, parse  # noqa: F401
