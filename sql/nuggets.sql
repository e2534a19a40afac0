-- Nugget evaluation of generated answers (TREC 2024 RAG, AutoNuggetizer): each block reads the
-- nuggets assigned to each judged answer (rl_nuggets, sql/answer_lists.sql), one row per nugget:
-- vital (else okay) and grade 2 support / 1 partial_support / 0 not_support.
--
-- nuggetizer's calculate_nugget_scores (castorini/nuggetizer 0.0.5, nuggetizer/core/metrics.py),
-- over the nuggets assigned to one answer:
--   strict_vital = #(vital, support) / #vital
--   strict_all   = #(support) / #nuggets
--   vital        = (#(vital, support) + 0.5 #(vital, partial_support)) / #vital
--   all          = (#(support) + 0.5 #(partial_support)) / #nuggets
--   each 0 when its denominator is 0 (a topic without vital nuggets scores 0 on the vital forms).
-- weighted(okay, partial) = sum_n w(n) c(n) / sum_n w(n), w = 1 (vital) or okay (okay nuggets),
--   c = 1 (support), partial (partial_support), 0; 0 without nuggets (Pradeep et al., SIGIR 2025:
--   vital 1, okay 0.5).
-- With a cutoff @L (words): an answer longer than L words (its response_length) scores 0, the
-- track's length limit as a budget (TREC 2024 RAG: 400 words); a judged answer that is not stored
-- (no length) has no value at a cutoff.
-- An evaluated answer without assigned nuggets has no row here and scores 0 (the engine's missing
-- value), as in nuggetizer.
--
-- Each block's CTE `terms` (one row per assigned nugget: the nugget's text as `doc`, its position
-- as `rank`, `gain` its credit, `discount` its weight in the score, `contribution` = gain x
-- discount, 0 over the length budget; `norm` the sum of the weights) is what `evalstore explain`
-- prints: the value is sum(contribution) / norm, 0 when norm is 0.

-- @fragment over_length
-- params: has_cutoff, k
(${has_cutoff} AND (length IS NULL OR length > ${k}))

-- @fragment nugget_item
qrels_id, run_id, topic, text AS doc, nugget + 1 AS rank, grade, importance, assignment, length

-- @fragment nugget_score
-- params: has_cutoff
SELECT qrels_id, run_id, topic,
       CASE WHEN ${has_cutoff} AND any_value(length) IS NULL THEN NULL
            WHEN any_value(norm) = 0 THEN 0.0
            ELSE exact_sum(contribution) / any_value(norm) END AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric strict_vital
-- reads: rl_nuggets
-- params: over_length, nugget_item, nugget_score
-- explain: terms
WITH terms AS (
    SELECT ${nugget_item},
           CASE WHEN grade = 2 THEN 1.0 ELSE 0.0 END AS gain, CASE WHEN vital THEN 1.0 ELSE 0.0 END AS discount,
           CASE WHEN ${over_length} THEN 0.0 WHEN vital AND grade = 2 THEN 1.0 ELSE 0.0 END AS contribution,
           count(*) FILTER (WHERE vital) OVER (PARTITION BY qrels_id, run_id, topic) AS norm
    FROM rl_nuggets
)
${nugget_score}

-- @metric strict_all
-- reads: rl_nuggets
-- params: over_length, nugget_item, nugget_score
-- explain: terms
WITH terms AS (
    SELECT ${nugget_item},
           CASE WHEN grade = 2 THEN 1.0 ELSE 0.0 END AS gain, 1.0 AS discount,
           CASE WHEN ${over_length} THEN 0.0 WHEN grade = 2 THEN 1.0 ELSE 0.0 END AS contribution,
           count(*) OVER (PARTITION BY qrels_id, run_id, topic) AS norm
    FROM rl_nuggets
)
${nugget_score}

-- @metric vital
-- reads: rl_nuggets
-- params: over_length, nugget_item, nugget_score
-- explain: terms
WITH terms AS (
    SELECT ${nugget_item},
           grade / 2.0 AS gain, CASE WHEN vital THEN 1.0 ELSE 0.0 END AS discount,
           CASE WHEN ${over_length} OR NOT vital THEN 0.0 ELSE grade / 2.0 END AS contribution,
           count(*) FILTER (WHERE vital) OVER (PARTITION BY qrels_id, run_id, topic) AS norm
    FROM rl_nuggets
)
${nugget_score}

-- @metric all
-- reads: rl_nuggets
-- params: over_length, nugget_item, nugget_score
-- explain: terms
WITH terms AS (
    SELECT ${nugget_item},
           grade / 2.0 AS gain, 1.0 AS discount,
           CASE WHEN ${over_length} THEN 0.0 ELSE grade / 2.0 END AS contribution,
           count(*) OVER (PARTITION BY qrels_id, run_id, topic) AS norm
    FROM rl_nuggets
)
${nugget_score}

-- @metric weighted
-- reads: rl_nuggets
-- params: okay, partial, over_length, nugget_item, nugget_score
-- explain: terms
WITH weights AS (
    SELECT *, CASE grade WHEN 2 THEN 1.0 WHEN 1 THEN ${partial} ELSE 0.0 END AS gain,
           CASE WHEN vital THEN 1.0 ELSE ${okay} END AS discount
    FROM rl_nuggets
), terms AS (
    SELECT ${nugget_item},
           gain, discount, CASE WHEN ${over_length} THEN 0.0 ELSE gain * discount END AS contribution,
           sum(discount) OVER (PARTITION BY qrels_id, run_id, topic) AS norm
    FROM weights
)
${nugget_score}
