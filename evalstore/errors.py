"""Errors meant for people: each says what is wrong, where, and what to do."""

from __future__ import annotations


class EvalstoreError(Exception):
    """Any error evalstore reports to the user (the CLI prints it without a traceback)."""


class StoreError(EvalstoreError):
    """The store cannot be opened or is of an unknown version."""


class StoreLockedError(StoreError):
    """Another process holds the store file open for writing."""


class IngestError(EvalstoreError):
    """Bad input file. Carries the file, the 1-based line number and the offending text."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        text: str | None = None,
        expected: str | None = None,
    ):
        self.file, self.line, self.text, self.expected = file, line, text, expected
        parts = []
        where = file or ""
        if line is not None:
            where += f", line {line}" if where else f"line {line}"
        parts.append(f"{where}: {message}" if where else message)
        if text is not None:
            shown = text if len(text) <= 200 else text[:200] + "..."
            parts.append(f"  offending text: {shown!r}")
        if expected:
            parts.append(f"  expected: {expected}")
        super().__init__("\n".join(parts))


class MetricError(EvalstoreError):
    """Unknown metric name or bad parameter."""


class NotFoundError(EvalstoreError):
    """A named run, qrels set or subsample does not exist in the store."""


class SubsampleError(EvalstoreError):
    """Bad subsample request (fractions, parameters, name clash)."""


class MetaError(EvalstoreError):
    """A meta-evaluation cannot be run as asked (too few runs or topics, bad parameters)."""
