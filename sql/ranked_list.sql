-- The ranked judged list: the one relation every metric reads.
--
-- Built by the engine (evalstore/metrics/engine.py) once per evaluation context, i.e. per
-- combination of the context parameters rel, judged_only and gains, for all requested runs at
-- once. Placeholders: ${qrels_id}, ${run_ids}, ${rel}, ${gain_expr} (grade -> gain), ${depth}
-- (truncation, a large number when none), ${rank_source} (the rows with their evaluation rank),
-- ${judged_only}, ${topic_filter}.
--
-- Relations (temporary, per context):
--   rl_qrels(topic, doc, grade, gain, isrel, judged)          the qrels set, with gains
--   rl_qtopics(topic, R, N, R_gain, ideal_total, max_grade, n_pool)  per-topic judgment counts
--   rl_ideal(topic, rank, gain, cg)                           the ideal list: every doc with gain > 0,
--                                                             highest gain first; cg = cg_I(rank)
--   rl_topics(run_id, topic, num_ret, R, N, R_gain, ideal_total, max_grade, n_pool)
--                                                             the evaluated (run, topic) pairs
--   rl_judged(run_id, topic, doc, rank, grade, gain, isrel, judged, cnt, cg, cg_ideal, gain_ideal,
--             num_ret, R, N, R_gain, ideal_total, max_grade)
--                                                             the retrieved docs that appear in the
--                                                             qrels (judged, or grade < 0 = pooled
--                                                             but unjudged), in evaluation order:
--       rank        evaluation rank r (1-based; renumbered over judged docs when judged_only)
--       isrel       1 if grade >= rel (and grade >= 0), else 0
--       judged      grade >= 0
--       cnt         count(r)  = relevant docs at ranks <= r
--       cg          cg(r)     = sum of gains at ranks <= r
--       cg_ideal    cg_I(r)   = cumulative ideal gain at rank r (constant after the ideal list ends)
--       gain_ideal  g_I(r)
-- Unjudged retrieved docs have no row in rl_judged: they have gain 0 and are not relevant, and they
-- still occupy their rank (unless judged_only). Metrics that need the number of retrieved docs read
-- num_ret.

CREATE OR REPLACE TEMP TABLE rl_qrels AS
SELECT topic, doc, grade,
       CAST(${gain_expr} AS DOUBLE) AS gain,
       CAST(grade >= greatest(${rel}, 0) AS INTEGER) AS isrel,
       grade >= 0 AS judged
FROM qrels_data
WHERE qrels_id = ${qrels_id};

CREATE OR REPLACE TEMP TABLE rl_qtopics AS
SELECT topic,
       count(*) FILTER (WHERE isrel = 1)                AS R,
       count(*) FILTER (WHERE judged AND isrel = 0)     AS N,
       count(*) FILTER (WHERE gain > 0)                 AS R_gain,
       coalesce(sum(gain), 0)::DOUBLE                   AS ideal_total,
       max(grade)                                       AS max_grade,
       count(*)                                         AS n_pool
FROM rl_qrels
GROUP BY topic;

CREATE OR REPLACE TEMP TABLE rl_ideal AS
SELECT topic,
       row_number() OVER w AS rank,
       gain,
       sum(gain) OVER (w ROWS UNBOUNDED PRECEDING) AS cg
FROM rl_qrels
WHERE gain > 0
WINDOW w AS (PARTITION BY topic ORDER BY gain DESC, grade DESC, doc);

-- The retrieved rows of the selected runs with their evaluation rank, truncated at the depth.
CREATE OR REPLACE TEMP TABLE rl_retrieved AS
SELECT run_id, topic, doc, rank
FROM (${rank_source}) s
WHERE rank <= ${depth}
  AND topic IN (SELECT topic FROM rl_qtopics);

CREATE OR REPLACE TEMP TABLE rl_hits AS
SELECT r.run_id, r.topic, r.doc, r.rank AS orig_rank, q.grade, q.gain, q.isrel, q.judged
FROM rl_retrieved r
JOIN rl_qrels q ON q.topic = r.topic AND q.doc = r.doc
WHERE NOT ${judged_only} OR q.judged;

CREATE OR REPLACE TEMP TABLE rl_topics AS
WITH ret AS (
    SELECT run_id, topic,
           CASE WHEN ${judged_only} THEN 0 ELSE count(*) END AS num_ret_all
    FROM rl_retrieved GROUP BY run_id, topic
), hits AS (
    SELECT run_id, topic, count(*) AS n_hits FROM rl_hits GROUP BY run_id, topic
), pairs AS (
    ${topic_pairs}
)
SELECT p.run_id, p.topic,
       CASE WHEN ${judged_only} THEN coalesce(h.n_hits, 0) ELSE coalesce(r.num_ret_all, 0) END AS num_ret,
       q.R, q.N, q.R_gain, q.ideal_total, q.max_grade, q.n_pool
FROM pairs p
JOIN rl_qtopics q USING (topic)
LEFT JOIN ret r USING (run_id, topic)
LEFT JOIN hits h USING (run_id, topic)
WHERE ${topic_filter};

CREATE OR REPLACE TEMP TABLE rl_judged AS
WITH ranked AS (
    SELECT run_id, topic, doc, grade, gain, isrel, judged,
           CASE WHEN ${judged_only}
                THEN row_number() OVER (PARTITION BY run_id, topic ORDER BY orig_rank)
                ELSE orig_rank END AS rank
    FROM rl_hits
)
SELECT k.run_id, k.topic, k.doc, k.rank::INTEGER AS rank, k.grade, k.gain, k.isrel, k.judged,
       sum(k.isrel) OVER w AS cnt,
       sum(k.gain) OVER w AS cg,
       coalesce(i.cg, t.ideal_total) AS cg_ideal,
       coalesce(i.gain, 0) AS gain_ideal,
       t.num_ret, t.R, t.N, t.R_gain, t.ideal_total, t.max_grade
FROM ranked k
JOIN rl_topics t USING (run_id, topic)
LEFT JOIN rl_ideal i ON i.topic = k.topic AND i.rank = k.rank
WINDOW w AS (PARTITION BY k.run_id, k.topic ORDER BY k.rank ROWS UNBOUNDED PRECEDING);
