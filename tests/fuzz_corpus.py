"""A corpus of malformed run and qrels files, generated (deterministically) for
tests/safety/test_malformed_files.py.

Each case is ``(name, kind, bytes, what the message must mention)``: kind is 'run' or 'qrels'; the
message check is a lower-case fragment of the expected error. ``python tests/fuzz_corpus.py DIR``
writes the files to DIR (to try them by hand).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

GOOD_RUN = b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d1 1 0.5 sys\n"
GOOD_QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"


def _run_line(**over: str) -> bytes:
    f = {"topic": "q1", "q0": "Q0", "doc": "dX", "rank": "3", "score": "0.25", "tag": "sys"}
    f.update(over)
    return " ".join(f.values()).encode() + b"\n"


def _qrels_line(**over: str) -> bytes:
    f = {"topic": "q1", "iter": "0", "doc": "dX", "grade": "1"}
    f.update(over)
    return " ".join(f.values()).encode() + b"\n"


def cases() -> list[tuple[str, str, bytes, str]]:
    out: list[tuple[str, str, bytes, str]] = []
    run, qr = GOOD_RUN, GOOD_QRELS
    # --- runs: fields and numbers
    for name, line, expect in [
        ("run_too_few_fields", b"q1 Q0 dX 3 0.25\n", "wrong number of columns"),
        ("run_one_field", b"q1\n", "wrong number of columns"),
        ("run_rank_float", _run_line(rank="1.5"), "is not an integer"),
        ("run_rank_text", _run_line(rank="first"), "is not an integer"),
        ("run_rank_hex", _run_line(rank="0x10"), "is not an integer"),
        ("run_rank_underscore", _run_line(rank="1_000"), "is not an integer"),
        ("run_rank_empty_sign", _run_line(rank="-"), "is not an integer"),
        ("run_score_text", _run_line(score="high"), "not a finite number"),
        ("run_score_nan", _run_line(score="nan"), "not a finite number"),
        ("run_score_inf", _run_line(score="inf"), "not a finite number"),
        ("run_score_minus_inf", _run_line(score="-inf"), "not a finite number"),
        ("run_score_comma", _run_line(score="0,5"), "not a finite number"),
        ("run_score_two_dots", _run_line(score="1.2.3"), "not a finite number"),
        ("run_score_exp_only", _run_line(score="e5"), "not a finite number"),
        ("run_score_overflow", _run_line(score="1e999"), "not a finite number"),
        ("run_nul_in_doc", _run_line(doc="d\x00X"), "control character"),
        ("run_nul_in_topic", _run_line(topic="q\x001"), "control character"),
        ("run_escape_in_doc", _run_line(doc="d\x1b[31mX"), "control character"),
        ("run_bell_in_tag", _run_line(tag="sy\x07s"), "control character"),
        ("run_x01_in_doc", _run_line(doc="d\x01X"), "control character"),
        ("run_del_in_doc", _run_line(doc="d\x7fX"), "control character"),
        ("run_formfeed", _run_line(doc="d\x0cX"), "control character"),
    ]:
        out.append((name, "run", run + line, expect))
    # --- runs: structure
    out += [
        ("run_empty", "run", b"", "empty file"),
        ("run_only_comments", "run", b"# a comment\n\n   \n# another\n", "empty file"),
        ("run_blank_lines_only", "run", b"\n\n\n", "empty file"),
        ("run_duplicate_doc", "run", run + b"q1 Q0 d1 3 0.1 sys\n", "duplicate document"),
        ("run_duplicate_doc_tab", "run", run.replace(b" ", b"\t") + b"q1\tQ0\td2\t3\t0.1\tsys\n", "duplicate document"),
        ("run_two_tags", "run", run + _run_line(tag="other"), "several run tags"),
        ("run_bad_utf8", "run", run + b"q1 Q0 d\xff\xfe 4 0.1 sys\n", "not utf-8"),
        ("run_latin1", "run", run + "q1 Q0 caf\xe9 4 0.1 sys\n".encode("latin-1"), "not utf-8"),
        ("run_truncated_gzip", "run", gzip.compress(run * 50)[:-20], "gzip"),
        ("run_gzip_garbage", "run", b"\x1f\x8b" + b"not really gzip" * 10, "gzip"),
        ("run_bzip2", "run", b"BZh91AY&SY" + b"\x00" * 40, "bzip2"),
        ("run_zip", "run", b"PK\x03\x04" + b"\x00" * 40, "zip"),
        ("run_xz", "run", b"\xfd7zXZ\x00" + b"\x00" * 40, "xz"),
        ("run_zstd", "run", b"\x28\xb5\x2f\xfd" + b"\x00" * 40, "zstd"),
        ("run_huge_line", "run", run + b"q1 Q0 " + b"d" * 2_100_000 + b" 4 0.1 sys\n", "longer than"),
        ("run_mixed_bad_middle", "run", run * 200 + _run_line(score="?") + run.replace(b"q", b"z"), "finite"),
        ("run_header_line", "run", b"topic Q0 docno rank score tag\n" + run, "not a finite number"),
        ("run_csv_commas", "run", b"q1,Q0,d1,1,2.5,sys\n", "wrong number of columns"),
        ("run_qrels_given_as_run", "run", qr, "wrong number of columns"),
        ("run_nul_line", "run", run + b"\x00\x00\x00\n", "control character"),
        ("run_binary_junk", "run", bytes(range(1, 32)) * 4 + b"\n", "control character"),
    ]
    # --- qrels
    for name, line, expect in [
        ("qrels_grade_float", _qrels_line(grade="1.5"), "is not an integer"),
        ("qrels_grade_text", _qrels_line(grade="rel"), "is not an integer"),
        ("qrels_grade_empty", b"q1 0 dX\n", "wrong number of columns"),
        ("qrels_five_fields", b"q1 0 dX 1 extra\n", "wrong number of columns"),
        ("qrels_grade_nan", _qrels_line(grade="nan"), "is not an integer"),
        ("qrels_grade_huge", _qrels_line(grade="99999999999999999999"), "is not an integer"),
        ("qrels_nul_doc", _qrels_line(doc="d\x00X"), "control character"),
        ("qrels_escape_topic", _qrels_line(topic="q\x1b1"), "control character"),
        ("qrels_run_given", GOOD_RUN.splitlines()[0] + b"\n", "wrong number of columns"),
    ]:
        out.append((name, "qrels", qr + line, expect))
    out += [
        ("qrels_empty", "qrels", b"", "empty file"),
        ("qrels_comments_only", "qrels", b"# nothing\n", "empty file"),
        ("qrels_judged_twice", "qrels", qr + b"q1 0 d1 0\n", "judged twice"),
        ("qrels_bad_utf8", "qrels", qr + b"q1 0 \xc3\x28 1\n", "not utf-8"),
        ("qrels_truncated_gzip", "qrels", gzip.compress(qr * 40)[:-12], "gzip"),
        ("qrels_bzip2", "qrels", b"BZh91AY&SY" + b"\x00" * 40, "bzip2"),
        ("qrels_huge_line", "qrels", qr + b"q1 0 " + b"x" * 2_100_000 + b" 1\n", "longer than"),
        ("qrels_header", "qrels", b"topic iteration docno relevance\n" + qr, "is not an integer"),
        ("qrels_tabs_and_spaces_bad", "qrels", qr + b"q1\t0  dZ\t\tx\n", "is not an integer"),
    ]
    return out


def write(folder: Path) -> list[tuple[Path, str, str]]:
    """Write every case to ``folder``; return ``(path, kind, expected fragment)``."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, kind, data, expect in cases():
        path = folder / f"{name}.{'run' if kind == 'run' else 'qrels'}"
        path.write_bytes(data)
        written.append((path, kind, expect))
    return written


if __name__ == "__main__":
    for path, kind, expect in write(Path(sys.argv[1] if len(sys.argv) > 1 else "fuzz-corpus")):
        print(kind, path, "->", expect)
