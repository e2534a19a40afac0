"""Foundations every layer may use, importing nothing of evalstore but :mod:`evalstore.errors`:

* :mod:`.aggregate`: the one rule summarising per-topic scores (mean, geometric mean, sum);
* :mod:`.arguments`: what the public functions accept as names (a string is one name);
* :mod:`.memory_limit`: the memory limit's spelling, default and bytes;
* :mod:`.python_udf`: declaring a Python function as an SQL function (``@sql_function``) and
  registering the declared ones on a connection (which modules declare them:
  :mod:`evalstore.metrics.sql_functions`);
* :mod:`.resources`: where the SQL files, migrations and the sample collection live;
* :mod:`.generated`: the rule for documents generated from the code;
* :mod:`.lazy`: the names a package re-exports, imported on first use;
* :mod:`.progress`: progress bars;
* :mod:`.optional`: the message for an optional library that is absent.
"""
