"""The examples of the README and the docs run as written and print what the page shows (issue 44.9).

An example is marked in README.md or a page of docs/ by an HTML comment (invisible on the rendered
page) naming the store it runs on, ``demo`` (a fresh ``evalstore demo`` store in the working folder) or ``dl19``
(the TREC DL 2019 qrels as ``dl19`` and its 37 runs; as ``$EVALSTORE_DB`` in the README, given
with ``--db`` here):

* ``<!-- example: STORE -->`` before a code block of ``evalstore`` commands: they run in order;
* ``<!-- example: STORE: COMMAND -->``: the one command.

The output shown next (a fenced block, or Markdown: tables and bold titles) is compared with the
last command's output (standard output, else standard error) by its shape: numbers are masked,
blank lines ignored, the shown lines must appear in order and one after the other, except where a
line of the README is ``...`` (or a table row of ``...``), which stands for any lines; the output
may say more before and after (titles, legends).

Other promises of the pages about their own text are checked here too: the pandas example
(docs/store.md) runs without a warning, the report's file-name rule (docs/web.md) is the one of
evalstore/web/links.py, the README's Evaluator example prints the values shown.
"""

from __future__ import annotations

import re
import shlex
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import DATA_DIR, ROOT, need_shared, run_cli

import evalstore
from evalstore.base.resources import sample_dir

README = (ROOT / "README.md").read_text(encoding="utf-8")
#: the pages that show examples: the README and docs/ (the generated references aside)
PAGES = [
    ROOT / "README.md",
    *(p for p in sorted((ROOT / "docs").glob("*.md")) if p.name not in ("cli.md", "metrics.md")),
]
_MARK = re.compile(r"^<!-- example: (\w+)(?:: (.+?))? -->$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass
class Example:
    page: str  # README.md, docs/compare.md, ...
    line: int  # of the marker
    store: str
    commands: list[list[str]]
    shown: list[str]

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.store}) {' '.join(self.commands[-1][:3])} ..."


def _commands(text: str) -> list[list[str]]:
    """The ``evalstore`` commands of a block (lines continued by a backslash joined)."""
    joined = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            assert words[0] == "evalstore", f"not an evalstore command: {line}"
            out.append(words[1:])
    return out


def _block(lines: list[str], i: int) -> tuple[list[str], int]:
    """The fenced block starting at line ``i`` (its text lines) and the line after it; or the
    Markdown (tables, bold titles, blank lines) starting there."""
    if lines[i].startswith("```"):
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        return lines[i + 1 : end], end + 1
    j = i
    while j < len(lines) and (lines[j].startswith("|") or _title(lines[j]) or not lines[j].strip()):
        j += 1
    return lines[i:j], j


def _title(line: str) -> bool:
    """A bold title on a line of its own (``**labels: judge against sample**``)."""
    return line.startswith("**") and line.rstrip().endswith("**") and len(line.strip()) > 4


def examples() -> list[Example]:
    return [e for page in PAGES for e in _examples(page)]


def _examples(page: Path) -> list[Example]:
    lines = page.read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines):
        m = _MARK.match(line)
        if not m:
            continue
        i = n + 1
        while not lines[i].strip():
            i += 1
        if m[2]:
            commands = _commands(m[2])
        else:
            block, i = _block(lines, i)
            commands = _commands("\n".join(block))
            while not lines[i].strip():
                i += 1
        shown, _ = _block(lines, i)
        out.append(Example(str(page.relative_to(ROOT)), n + 1, m[1], commands, shown))
    return out


EXAMPLES = examples()


def _shape(line: str) -> str:
    return _NUMBER.sub("#", line.strip())


def _gap(line: str) -> bool:
    """``...``, or a table row of ``...`` and empty cells: any lines."""
    return [c.strip() for c in line.strip().strip("|").split("|") if c.strip()] == ["..."]


def same_shape(shown: list[str], printed: str) -> str | None:
    """None when the shown lines appear in the printed output (see the module docstring), else
    the first shown line that does not."""
    actual = [_shape(x) for x in printed.splitlines() if x.strip()]
    j, anywhere = 0, True
    for line in (x for x in shown if x.strip()):
        if _gap(line):
            anywhere = True
            continue
        want = _shape(line)
        if anywhere:
            while j < len(actual) and actual[j] != want:
                j += 1
        if j >= len(actual) or actual[j] != want:
            return line
        j, anywhere = j + 1, False
    return None


def test_the_pages_have_examples():
    assert {e.store for e in EXAMPLES} == {"demo", "dl19"} and len(EXAMPLES) >= 7
    assert all(e.shown and e.commands for e in EXAMPLES)


def test_same_shape_rules():
    printed = "title\n| a | 1.5 |\n| b | 2 |\n| c | 3 |\nlegend 4\n"
    assert same_shape(["| a | 0.1 |", "| b | 7 |"], printed) is None
    assert same_shape(["| a | 0.1 |", "| ... |", "| c | 3 |"], printed) is None
    assert same_shape(["| a | 0.1 |", "| c | 3 |"], printed) == "| c | 3 |"  # not one after the other
    assert same_shape(["| A | 1 |"], printed) == "| A | 1 |"


@pytest.fixture(scope="module")
def dl19_store(tmp_path_factory):
    data = need_shared(DATA_DIR / "trec-dl-2019-passage")
    path = tmp_path_factory.mktemp("readme") / "dl19.duckdb"
    with evalstore.open(path) as s:
        s.ingest_qrels(data / "qrels.txt", name="dl19", progress=False)
        s.ingest_run(sorted((data / "runs").glob("*.gz")), progress=False)
    return path


def _run(example: Example, monkeypatch, tmp_path: Path, db: Path | None) -> str:
    monkeypatch.chdir(tmp_path)
    result = None
    for args in example.commands:
        # the sample's path as the README gives it from a checkout; the store of $EVALSTORE_DB
        args = [a.replace("evalstore/data/sample", str(sample_dir())) for a in args]
        if db is not None and "--db" not in args:
            args += ["--db", str(db)]
        result = run_cli(*args)
        assert result.exit_code == 0, (str(example), args, result.output)
    assert result is not None
    return result.stdout or result.stderr


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.store == "demo"], ids=str)
def test_demo_examples(example, monkeypatch, tmp_path):
    if not any(args[:1] == ["demo"] for args in example.commands):
        assert run_cli("demo", "--db", tmp_path / "evalstore-demo.duckdb").exit_code == 0
    printed = _run(example, monkeypatch, tmp_path, None)
    missing = same_shape(example.shown, printed)
    assert missing is None, f"{example}: the page shows {missing!r}; the command printed:\n{printed}"


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.store == "dl19"], ids=str)
def test_dl19_examples(example, dl19_store, monkeypatch, tmp_path):
    db = tmp_path / "dl19.duckdb"
    shutil.copy(dl19_store, db)
    printed = _run(example, monkeypatch, tmp_path, db)
    missing = same_shape(example.shown, printed)
    assert missing is None, f"{example}: the page shows {missing!r}; the command printed:\n{printed}"


def test_the_pandas_example_runs_without_a_warning(sample_db):
    pytest.importorskip("pandas")
    (code,) = re.findall(r"`(duckdb\.connect\([^`]*\)\.df\(\))`", (ROOT / "docs" / "store.md").read_text())
    import duckdb

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = eval(code.replace('"evalstore.duckdb"', repr(str(sample_db))), {"duckdb": duckdb})  # noqa: S307
    assert list(df.columns[:5]) == ["run", "qrels", "metric", "topic", "value"]


def test_the_report_file_name_rule_is_links():
    from evalstore.web import links

    web = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    (chars,) = re.findall(r"only\s+`([^`]+)`, no leading or trailing dot", web)
    said = re.compile("[" + "".join(re.escape(c) if len(c) == 1 else c for c in chars.split()) + "]")
    for code in range(32, 127):
        assert bool(said.fullmatch(chr(code))) == bool(links._SAFE.fullmatch(chr(code))), chr(code)
    assert "at most 100\ncharacters" in web and links.MAX_FILE_STEM == 100
    assert links.file_name("nDCG@10") == "nDCG@10" and links.file_name("dl19-bm25") == "dl19-bm25"
    assert re.fullmatch(r"_script_-[0-9a-f]{8}", links.file_name("<script>"))
    stems = links.file_names(["BM25", "bm25"])
    assert all(re.search(r"-[0-9a-f]{8}$", s) for s in stems.values())


def test_the_evaluator_example_prints_what_is_shown():
    (line,) = [x for x in README.splitlines() if x.startswith("ev.evaluate({")]
    call, shown = line.split("  # ")
    ev = evalstore.Evaluator({"q1": {"d1": 2, "d2": 0, "d3": 1}}, ["nDCG@10", "AP"])
    got = eval(call, {"ev": ev})  # noqa: S307
    assert {t: {m: round(v, 4) for m, v in ms.items()} for t, ms in got.items()} == eval(shown)  # noqa: S307
