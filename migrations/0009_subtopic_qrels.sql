-- evalstore schema, migration 9: subtopic (intent) judgments for diversity evaluation.
--
-- A diversity qrels set is an ordinary qrels set (a row of qrels_meta; qrels_data holds one row per
-- (topic, doc) with grade = the highest grade over the doc's subtopics, so every ad hoc metric works
-- on it) plus its per-subtopic judgments here. Written by `ingest qrels --format subtopic` (ndeval's
-- `topic subtopic doc grade`) and `--format ntcir-intents` (NTCIR per-intent levels, with optional
-- intent probabilities). Subsamples copy the subtopic rows of the documents they keep.

CREATE TABLE subtopic_qrels_data (
    qrels_id INTEGER NOT NULL,
    topic    VARCHAR NOT NULL,
    subtopic VARCHAR NOT NULL,       -- subtopic / intent id, as written
    doc      VARCHAR NOT NULL,
    grade    INTEGER NOT NULL        -- the doc's grade (NTCIR: level) for this subtopic
);

-- P(subtopic | topic) as given by an intent probability file (`topic intent prob`). A topic without
-- rows here has uniform probabilities over its subtopics (see the intents view).
CREATE TABLE subtopic_probs (
    qrels_id INTEGER NOT NULL,
    topic    VARCHAR NOT NULL,
    subtopic VARCHAR NOT NULL,
    prob     DOUBLE  NOT NULL
);

CREATE VIEW subtopic_qrels AS
    SELECT m.name AS qrels, d.topic, d.subtopic, d.doc, d.grade
    FROM subtopic_qrels_data d JOIN qrels_meta m USING (qrels_id);

-- Every subtopic of every topic of a diversity qrels set with its probability: the given one, or
-- 1 / (number of subtopics of the topic) when the topic has no given probabilities. A subtopic that
-- has a probability but no judgment is listed too (it counts for I-rec).
CREATE VIEW intents AS
    WITH s AS (
        SELECT qrels_id, topic, subtopic FROM subtopic_qrels_data
        UNION
        SELECT qrels_id, topic, subtopic FROM subtopic_probs
    ), given AS (
        SELECT DISTINCT qrels_id, topic FROM subtopic_probs
    )
    SELECT m.name AS qrels, s.topic, s.subtopic,
           CASE WHEN g.topic IS NULL THEN 1.0 / count(*) OVER (PARTITION BY s.qrels_id, s.topic)
                ELSE coalesce(p.prob, 0.0) END AS prob,
           p.prob IS NOT NULL AS given
    FROM s
    JOIN qrels_meta m USING (qrels_id)
    LEFT JOIN given g ON g.qrels_id = s.qrels_id AND g.topic = s.topic
    LEFT JOIN subtopic_probs p ON p.qrels_id = s.qrels_id AND p.topic = s.topic AND p.subtopic = s.subtopic;
