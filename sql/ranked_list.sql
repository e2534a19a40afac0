-- The ranked judged list: the one relation every metric reads.
--
-- Built by the engine (evalstore/metrics/engine.py, build_ranked_list) once per evaluation
-- context, i.e. per combination of the context parameters rel, judged_only and gains, for all
-- requested runs and all requested qrels sets (e.g. a qrels set and its subsamples) at once.
-- Placeholders: ${qrels_ids}, ${rel}, ${gain_expr} (grade -> gain), ${depth}
-- (truncation; a huge number when none), ${rank_source} (the rows with their evaluation rank),
-- ${judged_only}, ${use_pool}, ${topic_pairs}, ${topic_filter}, ${retrieved_counts} (the rows per
-- (run_id, topic) after depth: counted over rl_retrieved, or given by the reader when rank_source
-- holds only the rows whose docno some qrels set judges), and (multi-line, so not spelled here
-- with the dollar sign) running_columns, ideal_join, running_window: the optional columns of rl_judged;
-- condensed_rank: with judged_only, row_number() over the judged rows by orig_rank, else orig_rank
-- (chosen in Python, so that the window is not in the plan when it is not needed).
--
-- Every relation is keyed by qrels_id (and run_id, topic where it applies); metric SQL groups by
-- (qrels_id, run_id, topic).
--
--   rl_qrels(qrels_id, topic, doc, grade, gain, isrel, judged)
--       the qrels sets with gains. For a subsample, the parent's judged documents that the
--       subsample dropped are added with grade -1 ("in the pool but unjudged", trec_eval's reading
--       of a negative grade), so infAP sees the parent's pool; every other metric treats them
--       exactly like unjudged documents (judged = false, isrel = 0, gain = 0).
--   rl_qtopics(qrels_id, topic, R, N, R_gain, ideal_total, max_grade, n_pool)
--       R = relevant (grade >= rel), N = judged nonrelevant (0 <= grade < rel),
--       R_gain = docs with gain > 0 (length of the ideal list), ideal_total = cg_I(R_gain)
--   rl_ideal(qrels_id, topic, rank, gain, icg)
--       the ideal list: every doc with gain > 0, highest gain first; icg = cg_I(rank)
--   rl_retrieved(run_id, topic, doc, rank, score)
--       every retrieved row of the selected runs, judged or not, with its evaluation rank (after
--       depth truncation) and the run's score (NULL for NTCIR res files); not keyed by qrels_id
--   rl_topics(qrels_id, run_id, topic, num_ret, R, N, R_gain, ideal_total, max_grade, n_pool, in_run)
--       the evaluated (qrels, run, topic) triples; num_ret = docs retrieved (after depth, and
--       counting judged docs only when judged_only); in_run = the run retrieved docs for the topic
--       (false for a qrels topic the run lacks, evaluated with complete)
--   rl_judged(qrels_id, run_id, topic, doc, rank, score, grade, gain, isrel, judged, cnt, cg, cg_ideal,
--             gain_ideal, num_ret, R, N, R_gain, ideal_total, max_grade, jrank)
--       the retrieved docs that appear in rl_qrels (judged, or grade < 0 = pooled but
--       unjudged), in evaluation order:
--       rank        evaluation rank r (1-based; renumbered over judged docs when judged_only)
--       score       the run's score (NULL for NTCIR res files)
--       isrel       1 if grade >= rel (and grade >= 0), else 0
--       judged      grade >= 0
--       cnt         count(r)  = relevant docs at ranks <= r
--       jrank       judged docs (grade >= 0) at ranks <= r: the condensed rank r' of a judged row
--                   (= rank when judged_only)
--       cg          cg(r)     = sum of gains at ranks <= r
--       cg_ideal    cg_I(r)   = cumulative ideal gain at rank r (constant after the ideal list ends)
--       gain_ideal  g_I(r)
--       The running and ideal columns (cnt, jrank, cg, cg_ideal, gain_ideal) are computed only
--       when the SQL of a metric being evaluated names them (engine.RUNNING_COLUMNS): each is a
--       window aggregate or a join over every judged row, and most metric sets need one or two.
--   rl_subtopics(qrels_id, topic, subtopic, doc, grade, gain, isrel, prob)
--       the per-subtopic (intent) judgments of diversity qrels sets (subtopic_qrels_data), built
--       only when a metric block reads it (-- reads: rl_subtopics). isrel = 1 if grade >= rel (the
--       binarisation of ndeval), gain = the grade's gain (context gains); prob = P(subtopic | topic):
--       the given intent probability, 0 for a subtopic left out of a topic's given probabilities,
--       else uniform over the topic's subtopics. An intent that has a probability but no judgment
--       has one row with doc NULL (it counts as an intent, never matches a document). A qrels set
--       without subtopic judgments counts as one subtopic '0' per topic (its qrels_data rows), as
--       ir_measures reads qrels without an iteration column.
-- Unjudged retrieved docs (not in the qrels) have no row in rl_judged: they have gain 0, are not
-- relevant and still occupy their rank (unless judged_only). Metrics that need the number of
-- retrieved docs read num_ret. A metric must test `judged`/`isrel`, never mere presence of a row.

CREATE OR REPLACE TEMP TABLE rl_qrels AS
WITH base AS (
    SELECT qrels_id, topic, doc, grade FROM qrels_data WHERE qrels_id IN (${qrels_ids})
    UNION ALL
    SELECT s.qrels_id, p.topic, p.doc, -1 AS grade
    FROM subsample_meta s
    JOIN qrels_data p ON p.qrels_id = s.parent_id
    WHERE ${use_pool} AND s.qrels_id IN (${qrels_ids}) AND p.grade >= 0
      AND NOT EXISTS (SELECT 1 FROM qrels_data c
                      WHERE c.qrels_id = s.qrels_id AND c.topic = p.topic AND c.doc = p.doc)
)
SELECT qrels_id, topic, doc, grade,
       CAST(${gain_expr} AS DOUBLE) AS gain,
       CAST(grade >= greatest(${rel}, 0) AS INTEGER) AS isrel,
       grade >= 0 AS judged
FROM base;

CREATE OR REPLACE TEMP TABLE rl_qtopics AS
SELECT qrels_id, topic,
       count(*) FILTER (WHERE isrel = 1)                AS R,
       count(*) FILTER (WHERE judged AND isrel = 0)     AS N,
       count(*) FILTER (WHERE gain > 0)                 AS R_gain,
       coalesce(sum(gain), 0)::DOUBLE                   AS ideal_total,
       max(grade)                                       AS max_grade,
       count(*)                                         AS n_pool
FROM rl_qrels
GROUP BY qrels_id, topic;

-- (the window is spelled out in full, not as a refinement of a named window: Spark SQL has no
-- OVER (w ROWS ...), and the same SQL runs there; see docs/scale.md)
CREATE OR REPLACE TEMP TABLE rl_ideal AS
SELECT qrels_id, topic,
       row_number() OVER (PARTITION BY qrels_id, topic ORDER BY gain DESC, grade DESC, doc) AS rank,
       gain,
       sum(gain) OVER (PARTITION BY qrels_id, topic ORDER BY gain DESC, grade DESC, doc
                       ROWS UNBOUNDED PRECEDING) AS icg
FROM rl_qrels
WHERE gain > 0;

-- The retrieved rows of the selected runs with their evaluation rank, truncated at the depth,
-- on topics that some selected qrels set judges (run topics without judgments are ignored).
-- A view: only the judged rows are materialised (rl_hits). Under the trec_eval convention the
-- ranks are stored, so the scan is cheap; under ntcireval the engine first materialises the
-- file-order ranks (temp table rl_file_order) and ${rank_source} reads it.
CREATE OR REPLACE TEMP VIEW rl_retrieved AS
SELECT run_id, topic, doc, rank, score
FROM (${rank_source}) s
WHERE rank <= ${depth}
  AND topic IN (SELECT DISTINCT topic FROM rl_qtopics);

CREATE OR REPLACE TEMP TABLE rl_hits AS
SELECT q.qrels_id, r.run_id, r.topic, r.doc, r.rank AS orig_rank, r.score, q.grade, q.gain, q.isrel, q.judged
FROM rl_retrieved r
JOIN rl_qrels q ON q.topic = r.topic AND q.doc = r.doc
WHERE NOT ${judged_only} OR q.judged;

-- rl_qtopics is joined once, in ${topic_pairs}, which gives each (qrels_id, run_id, topic) with the
-- topic's qrels columns, n_ret and in_run. (Joining it a second time on (qrels_id, topic) let the
-- join order optimiser pair its two scans on qrels_id alone, which is one value for one qrels set:
-- a product of topics x topics, 100 M rows at 10,000 topics, before the topics were matched.) Every
-- join here is on the full key, so the cost is linear in the topics whatever order is chosen.
CREATE OR REPLACE TEMP TABLE rl_topics AS
WITH ret AS (
    ${retrieved_counts}
), hits AS (
    SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE judged) AS n_judged FROM rl_hits
    GROUP BY qrels_id, run_id, topic
), pairs AS (
    ${topic_pairs}
)
SELECT p.qrels_id, p.run_id, p.topic,
       CASE WHEN ${judged_only} THEN coalesce(h.n_judged, 0) ELSE p.n_ret END AS num_ret,
       p.R, p.N, p.R_gain, p.ideal_total, p.max_grade, p.n_pool, p.in_run
FROM pairs p
LEFT JOIN hits h ON h.qrels_id = p.qrels_id AND h.run_id = p.run_id AND h.topic = p.topic
WHERE ${topic_filter};

CREATE OR REPLACE TEMP TABLE rl_judged AS
WITH ranked AS (
    SELECT qrels_id, run_id, topic, doc, score, grade, gain, isrel, judged,
           ${condensed_rank} AS rank
    FROM rl_hits
)
SELECT k.qrels_id, k.run_id, k.topic, k.doc, k.rank::INTEGER AS rank, k.score, k.grade, k.gain, k.isrel, k.judged,
       t.num_ret, t.R, t.N, t.R_gain, t.ideal_total, t.max_grade
       ${running_columns}
FROM ranked k
JOIN rl_topics t ON t.qrels_id = k.qrels_id AND t.run_id = k.run_id AND t.topic = k.topic
${ideal_join}
${running_window};

-- (built only when a block reads it; see ranked_list.render)
CREATE OR REPLACE TEMP TABLE rl_subtopics AS
WITH sub AS (
    SELECT qrels_id, topic, subtopic, doc, grade FROM subtopic_qrels_data WHERE qrels_id IN (${qrels_ids})
    UNION ALL
    SELECT q.qrels_id, q.topic, '0' AS subtopic, q.doc, q.grade FROM qrels_data q
    WHERE q.qrels_id IN (${qrels_ids})
      AND NOT EXISTS (SELECT 1 FROM subtopic_qrels_data s WHERE s.qrels_id = q.qrels_id)
    UNION ALL
    SELECT p.qrels_id, p.topic, p.subtopic, NULL AS doc, 0 AS grade FROM subtopic_probs p
    WHERE p.qrels_id IN (${qrels_ids})
      AND NOT EXISTS (SELECT 1 FROM subtopic_qrels_data s
                      WHERE s.qrels_id = p.qrels_id AND s.topic = p.topic AND s.subtopic = p.subtopic)
), n AS (
    SELECT qrels_id, topic, count(DISTINCT subtopic) AS n_sub FROM sub GROUP BY qrels_id, topic
), given AS (
    SELECT DISTINCT qrels_id, topic FROM subtopic_probs WHERE qrels_id IN (${qrels_ids})
)
SELECT s.qrels_id, s.topic, s.subtopic, s.doc, s.grade,
       CAST(${gain_expr} AS DOUBLE) AS gain,
       CAST(s.doc IS NOT NULL AND s.grade >= greatest(${rel}, 0) AS INTEGER) AS isrel,
       CAST(coalesce(p.prob, CASE WHEN g.topic IS NULL THEN 1.0 / n.n_sub ELSE 0.0 END) AS DOUBLE) AS prob
FROM sub s
JOIN n ON n.qrels_id = s.qrels_id AND n.topic = s.topic
LEFT JOIN given g ON g.qrels_id = s.qrels_id AND g.topic = s.topic
LEFT JOIN subtopic_probs p ON p.qrels_id = s.qrels_id AND p.topic = s.topic AND p.subtopic = s.subtopic;
