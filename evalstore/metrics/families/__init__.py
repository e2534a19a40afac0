"""Metric families: one module per SQL file in ``sql/``, each registering its metrics.

Every module in this package is imported when the registry is first used, so a new family
only needs a new module here and its SQL file.
"""

import importlib
import pkgutil

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")
