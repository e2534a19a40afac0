"""TREC topic files: the SGML of the ad hoc tracks and the XML of the later tracks.

SGML (TREC 1-8, Robust, Terabyte, ...)::

    <top>
    <num> Number: 301
    <title> International Organized Crime
    <desc> Description:
    Identify organizations that participate in international criminal activity ...
    <narr> Narrative:
    A relevant document must as a minimum identify the organization ...
    </top>

A field runs from its tag to the next tag (closing tags such as ``</title>`` are allowed); the
labels ``Number:``, ``Topic:``, ``Description:`` and ``Narrative:`` are dropped, whitespace
collapsed. XML (Web, Session, Decision, ...)::

    <topic number="1" type="faceted">
      <query>obama family tree</query>
      <description>Find information on President Barack Obama's family history ...</description>
      <narrative>...</narrative>
    </topic>

``<title>`` may stand for ``<query>``, ``<question>`` for ``<description>``; ``<subtopic>``
elements are left out. Entities (``&amp;``) are decoded. Each topic keeps the line its
``<top>``/``<topic>`` starts on, for messages.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from ..errors import IngestError

_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_TOPIC = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.S | re.I)
_SGML_TAG = re.compile(r"<\s*(/?)\s*([a-zA-Z]+)[^>]*>")
_LABELS = {
    "num": re.compile(r"^\s*number\s*:\s*", re.I),
    "title": re.compile(r"^\s*topic\s*:\s*", re.I),
    "desc": re.compile(r"^\s*description\s*:\s*", re.I),
    "narr": re.compile(r"^\s*narrative\s*:\s*", re.I),
}
_SGML_FIELDS = {"title": "title", "desc": "description", "narr": "narrative"}
_XML_FIELDS = {
    "title": ("query", "title"),
    "description": ("description", "question", "desc"),
    "narrative": ("narrative", "narr"),
}
_NUMBER_ATTR = re.compile(r"""\bnumber\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_SUBTOPIC = re.compile(r"<subtopic\b.*?</subtopic>", re.S | re.I)


@dataclass
class Topic:
    topic: str
    line: int
    title: str | None = None
    description: str | None = None
    narrative: str | None = None

    def field(self, name: str) -> str | None:
        return {"title": self.title, "description": self.description, "narrative": self.narrative}[name]


def _clean(text: str) -> str | None:
    out = " ".join(html.unescape(text).split())
    return out or None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _sgml(body: str) -> dict[str, str]:
    """The fields of one ``<top>`` block: each tag's text up to the next tag."""
    fields: dict[str, str] = {}
    tags = list(_SGML_TAG.finditer(body))
    for i, m in enumerate(tags):
        closing, name = m.group(1), m.group(2).lower()
        if closing:
            continue
        end = tags[i + 1].start() if i + 1 < len(tags) else len(body)
        value = body[m.end() : end]
        label = _LABELS.get(name)
        if label:
            value = label.sub("", value, count=1)
        fields.setdefault(name, value)
    return fields


def parse(text: str, file: str) -> list[Topic]:
    """The topics of a TREC topic file (SGML or XML); IngestError naming the line of a topic
    without a number, or a file with no topic at all."""
    topics: list[Topic] = []
    for m in _TOP.finditer(text):
        line = _line_of(text, m.start())
        f = _sgml(m.group(1))
        num = _clean(f.get("num", ""))
        if not num:
            raise _error("a <top> without a topic number (<num>)", file, line, m.group(0))
        t = Topic(num.split()[0] if num else "", line)
        for tag, field in _SGML_FIELDS.items():
            setattr(t, field, _clean(f.get(tag, "")))
        topics.append(t)
    for m in _TOPIC.finditer(text):
        line = _line_of(text, m.start())
        a = _NUMBER_ATTR.search(m.group(1))
        body = _SUBTOPIC.sub(" ", m.group(2))
        num = next((g for g in a.groups() if g is not None), None) if a else None
        if num is None:
            inner = re.search(r"<(?:number|num|id)>(.*?)</(?:number|num|id)>", body, re.S | re.I)
            num = inner.group(1) if inner else None
        num = _clean(num or "")
        if not num:
            raise _error('a <topic> without a number (number="..." or <number>)', file, line, m.group(0))
        t = Topic(num, line)
        for field, tags in _XML_FIELDS.items():
            for tag in tags:
                v = re.search(rf"<{tag}\b[^>]*>(.*?)</{tag}\s*>", body, re.S | re.I)
                if v:
                    setattr(t, field, _clean(v.group(1)))
                    break
        topics.append(t)
    if not topics:
        raise IngestError(
            "no topic found (no <top>...</top> or <topic>...</topic> block)",
            file=file,
            line=1,
            text=text.splitlines()[0] if text.strip() else "",
            expected="TREC topics: <top> <num> Number: 301 <title> ... </top>, or "
            '<topic number="1"> <query>...</query> </topic>; for qid<TAB>text files use --format tsv',
        )
    return sorted(topics, key=lambda t: t.line)


def _error(message: str, file: str, line: int, block: str) -> IngestError:
    return IngestError(
        message,
        file=file,
        line=line,
        text=" ".join(block.split())[:200],
        expected='<top> <num> Number: 301 <title> ... </top>, or <topic number="1"> <query>...</query> </topic>',
    )
