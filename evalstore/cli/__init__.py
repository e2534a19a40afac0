"""The ``evalstore`` command line: a thin Typer layer over the library.

Each command parses its options, makes one library call and hands the result to one writer
(:mod:`.output`, over :mod:`evalstore.output`). The application and the entry point are in
:mod:`.app`, the options shared by commands in :mod:`.options`; the command groups live in their
own modules, imported here so that they register on the application.
"""

from . import (
    answer_cmds,
    compare_cmds,
    eval_cmds,
    explain_cmds,
    fusion_cmds,
    judge_cmds,
    layout_cmds,
    measure_cmds,
    meta_cmds,
    pool_cmds,
    repro_cmds,
    store_cmds,
    subsample_cmds,
    web_cmds,
)
from .app import app, main

__all__ = [
    "answer_cmds",
    "app",
    "compare_cmds",
    "eval_cmds",
    "explain_cmds",
    "fusion_cmds",
    "judge_cmds",
    "layout_cmds",
    "main",
    "measure_cmds",
    "meta_cmds",
    "pool_cmds",
    "repro_cmds",
    "store_cmds",
    "subsample_cmds",
    "web_cmds",
]
