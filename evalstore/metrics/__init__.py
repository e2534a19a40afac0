"""Metrics: the registry (names, parameters, citations), the families, and the SQL engine.

Importing this package imports every family module of :mod:`.families`, each of which registers its
metrics, so :func:`get` / :func:`parse_metric` know every metric whichever module is imported first.
"""

from . import families as _families  # noqa: F401  (registers every family's metrics)
from .registry import MetricInstance, MetricSpec, all_metrics, describe, get, parse_metric

__all__ = ["MetricInstance", "MetricSpec", "all_metrics", "describe", "get", "parse_metric"]
