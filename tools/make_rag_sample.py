#!/usr/bin/env python3
"""Generate a synthetic TREC RAG collection (deterministic): generated answers with citations,
nuggets, a manual and an automatic nugget assignment set, manual and automatic support labels,
qrels, topics and document texts. Not real data.

    python tools/make_rag_sample.py                      # the bundled sample: evalstore/data/rag/
    python tools/make_rag_sample.py --topics 36 --runs 12 --out /tmp/rag36   # a larger collection

The model. Each topic has a pool of documents and 3 to 10 nuggets (vital with probability 0.45;
the third topic has okay nuggets only), each nugget contained in some of the documents; a
document's grade is the number of nuggets it contains (at most 3). Each run has a retrieval
quality, a generation skill, a citation faithfulness and a verbosity. Its answer to a topic cites
its top documents (a noisy ranking by grade) and covers each nugget according to a latent score
``z = skill - difficulty + 0.8 [a cited document contains it] + topic effect + noise``: the manual
assessor assigns support above 0.9, partial_support above 0.2, else not_support. The automatic
assessor (an LLM) sees the same latent score, shifted by a lenient bias (+0.25), a bias of its own
per topic and a little noise of its own: it disagrees with the manual assessor near the thresholds
and more on some topics than others, mostly by giving more credit, as AutoNuggetizer's
assignments do against NIST assessors' (Pradeep et al. 2024). Support labels of each (sentence,
citation) follow the same scheme: full when the cited document contains the sentence's nugget
(partial when the answer covers it only partially), partial or none otherwise; the automatic
labels are more lenient towards partial support (Thakur et al. 2025).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "evalstore" / "data" / "rag"
SUBJECTS = [
    "coffee", "sleep", "exercise", "sugar", "remote work", "solar panels", "bees", "vaccines", "inflation",
    "microplastics", "social media", "meditation", "electric cars", "wildfires", "tariffs", "antibiotics",
    "urban trees", "video games", "minimum wage", "deep sea mining",
]  # fmt: skip
OBJECTS = [
    "heart health", "memory", "productivity", "crop yields", "air quality", "housing prices", "anxiety",
    "bird populations", "local economies", "children's learning", "water supplies", "energy bills",
    "life expectancy", "ocean life", "small businesses", "immune response",
]  # fmt: skip
VERBS = [
    "raises", "lowers", "protects", "harms", "changes", "improves", "weakens", "depends on", "predicts",
    "slows", "speeds up", "reshapes",
]  # fmt: skip
FILLER = [
    "Researchers have studied this question for many years and the evidence keeps growing",
    "The answer depends on the context and on how the question is framed by different sources",
    "Several reviews summarise the findings of many smaller studies on this topic",
    "Experts also point out that more long-term data would help settle the open questions",
    "Public interest in the topic has grown quickly over the last decade",
]
MANUAL_T = (0.2, 0.9)  # latent thresholds: partial_support, support
LABELS = ["not_support", "partial_support", "support"]
SUPPORT_LABELS = ["none", "partial", "full"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, default=8)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=2040)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    write(generate(a.topics, a.runs, a.seed), a.out)


def generate(n_topics: int, n_runs: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    topics = [_topic(rng, i) for i in range(n_topics)]
    runs = _runs(rng, n_runs)
    answers, assign, support = [], {"manual": [], "auto": []}, {"manual": [], "auto": []}
    auto_topic_bias = rng.normal(0, 0.3, n_topics)
    for r in runs:
        for t, tb in zip(topics, auto_topic_bias):
            ans, labels, sup = _answer(rng, r, t, tb)
            answers.append(ans)
            for who in ("manual", "auto"):
                assign[who].append({"query": t["query"], "qid": t["qid"], "run_id": r["name"],
                                    "response_length": ans["response_length"], "nuggets": labels[who]})  # fmt: skip
                support[who] += sup[who]
    return {"topics": topics, "runs": runs, "answers": answers, "assign": assign, "support": support}


def _topic(rng, i: int) -> dict:
    subject = SUBJECTS[i % len(SUBJECTS)]
    qid = f"R{i + 1:03d}"
    n_nuggets = int(rng.integers(3, 11))
    objects = rng.choice(OBJECTS, size=n_nuggets, replace=False)
    nuggets = [
        {"text": f"{subject} {VERBS[int(rng.integers(len(VERBS)))]} {o}",
         "importance": "okay" if i == 2 or rng.random() > 0.45 else "vital",
         "difficulty": float(rng.normal(0, 0.8))}
        for o in objects
    ]  # fmt: skip
    n_docs = 30
    holds = rng.random((n_docs, n_nuggets)) < 0.12  # which documents contain which nuggets
    for n in range(n_nuggets):
        if not holds[:, n].any():
            holds[int(rng.integers(n_docs)), n] = True
    grades = np.minimum(holds.sum(axis=1), 3)
    docs = [f"rag-{qid}-{d:03d}" for d in range(n_docs)]
    query = f"what does {subject} do to {objects[0]} and beyond"
    return {"qid": qid, "query": query, "subject": subject, "nuggets": nuggets, "docs": docs, "holds": holds,
            "grades": grades, "effect": float(rng.normal(0, 0.5))}  # fmt: skip


def _runs(rng, n: int) -> list[dict]:
    quality = np.linspace(0.2, 1.6, n)
    skill = np.linspace(-0.7, 1.0, n) + rng.normal(0, 0.25, n)
    order = rng.permutation(n)
    return [
        {"name": f"rag{k + 1:02d}", "quality": float(quality[order[k]]), "skill": float(skill[order[k]]),
         "faithful": float(rng.uniform(0.5, 0.95)), "verbose": float(rng.uniform(1, 6)),
         "k": int(rng.choice([5, 10, 20]))}
        for k in range(n)
    ]  # fmt: skip


def _grade(z: float, shift: float = 0.0) -> int:
    return int(z + shift > MANUAL_T[1]) + int(z + shift > MANUAL_T[0])


def _answer(rng, r: dict, t: dict, auto_topic_bias: float) -> tuple[dict, dict, dict]:
    score = r["quality"] * t["grades"] + rng.normal(0, 1, len(t["docs"]))
    refs = [int(d) for d in np.argsort(-score, kind="stable")[: r["k"]]]
    sentences, labels = [], {"manual": [], "auto": []}
    for n, nug in enumerate(t["nuggets"]):
        cited_has = any(t["holds"][d, n] for d in refs)
        z = r["skill"] - nug["difficulty"] + 0.8 * cited_has + t["effect"] + rng.normal(0, 0.5)
        manual, auto = _grade(z), _grade(z, 0.25 + auto_topic_bias + rng.normal(0, 0.25))
        for who, g in (("manual", manual), ("auto", auto)):
            labels[who].append({"text": nug["text"], "importance": nug["importance"], "assignment": LABELS[g]})
        if manual:
            sentences.append({"nugget": n, "grade": manual, "text": _sentence(rng, nug["text"], manual, t)})
    for _ in range(int(rng.poisson(r["verbose"]))):
        sentences.insert(int(rng.integers(len(sentences) + 1)), {"nugget": None, "grade": 0, "text": _filler(rng)})
    answer, support = [], {"manual": [], "auto": []}
    for i, s in enumerate(sentences):
        cites = _citations(rng, r, t, refs, s["nugget"])
        answer.append({"text": s["text"], "citations": [refs.index(d) for d in cites]})
        for d in cites:
            y = _support_latent(rng, t, d, s)
            for who, shift in (("manual", 0.0), ("auto", 0.3 + rng.normal(0, 0.3))):
                g = int(y + shift > 1.0) + int(y + shift > 0.0)
                support[who].append({"run_id": r["name"], "topic_id": t["qid"], "sentence": i,
                                     "citation": refs.index(d), "label": SUPPORT_LABELS[g]})  # fmt: skip
    length = sum(len(s["text"].split()) for s in answer)
    ans = {"run_id": r["name"], "topic_id": t["qid"], "topic": t["query"], "references": [t["docs"][d] for d in refs],
           "response_length": length, "answer": answer}  # fmt: skip
    return ans, labels, support


def _sentence(rng, nugget: str, grade: int, t: dict) -> str:
    lead = ["Studies show that", "According to several sources,", "It is well documented that", "Evidence suggests"]
    text = f"{lead[int(rng.integers(len(lead)))]} {nugget}"
    if grade == 1:
        text += ", although the size of the effect is unclear"
    return text + f" for people interested in {t['subject']}."


def _filler(rng) -> str:
    return FILLER[int(rng.integers(len(FILLER)))] + "."


def _citations(rng, r: dict, t: dict, refs: list[int], nugget: int | None) -> list[int]:
    if nugget is None:
        return [refs[int(rng.integers(len(refs)))]] if rng.random() < 0.4 else []
    holding = [d for d in refs if t["holds"][d, nugget]]
    first = holding[0] if holding and rng.random() < r["faithful"] else refs[int(rng.integers(len(refs)))]
    cites = [first]
    if rng.random() < 0.3:
        other = refs[int(rng.integers(len(refs)))]
        if other != first:
            cites.append(other)
    return cites if rng.random() > 0.08 else []


def _support_latent(rng, t: dict, d: int, s: dict) -> float:
    if s["nugget"] is not None and t["holds"][d, s["nugget"]]:
        base = 1.5 if s["grade"] == 2 else 0.5
    else:
        base = 0.3 if t["grades"][d] >= 2 else -0.6
    return base + float(rng.normal(0, 0.35))


def write(c: dict, out: Path) -> None:
    (out / "answers").mkdir(parents=True, exist_ok=True)
    for r in c["runs"]:
        _jsonl(out / "answers" / f"{r['name']}.jsonl", [a for a in c["answers"] if a["run_id"] == r["name"]])
    _jsonl(out / "nuggets.jsonl", [
        {"qid": t["qid"], "query": t["query"],
         "nuggets": [{"text": n["text"], "importance": n["importance"]} for n in t["nuggets"]]}
        for t in c["topics"]
    ])  # fmt: skip
    for who in ("manual", "auto"):
        _jsonl(out / f"assignments.{who}.jsonl", c["assign"][who])
        _jsonl(out / f"support.{who}.jsonl", c["support"][who])
    with open(out / "qrels.txt", "w", newline="\n") as f:
        for t in c["topics"]:
            for doc, g in zip(t["docs"], t["grades"]):
                f.write(f"{t['qid']} 0 {doc} {int(g)}\n")
    with open(out / "topics.tsv", "w", newline="\n") as f:
        f.writelines(f"{t['qid']}\t{t['query']}\n" for t in c["topics"])
    with open(out / "docs.tsv", "w", newline="\n") as f:
        for t in c["topics"]:
            for d, doc in enumerate(t["docs"]):
                held = [n["text"] for n, h in zip(t["nuggets"], t["holds"][d]) if h]
                body = ". ".join(s[0].upper() + s[1:] for s in held) or f"A page that mentions {t['subject']}"
                f.write(f"{doc}\t{body}. {FILLER[d % len(FILLER)]}.\n")


def _jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="\n") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


if __name__ == "__main__":
    main()
