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

-- @fragment over_length
-- params: has_cutoff, k
(${has_cutoff} AND (any_value(length) IS NULL OR any_value(length) > ${k}))

-- @metric strict_vital
-- reads: rl_nuggets
-- params: over_length
SELECT qrels_id, run_id, topic,
       CASE WHEN ${over_length} THEN (CASE WHEN any_value(length) IS NULL THEN NULL ELSE 0.0 END)
            WHEN count(*) FILTER (WHERE vital) = 0 THEN 0.0
            ELSE count(*) FILTER (WHERE vital AND grade = 2) / count(*) FILTER (WHERE vital) END AS value
FROM rl_nuggets
GROUP BY qrels_id, run_id, topic

-- @metric strict_all
-- reads: rl_nuggets
-- params: over_length
SELECT qrels_id, run_id, topic,
       CASE WHEN ${over_length} THEN (CASE WHEN any_value(length) IS NULL THEN NULL ELSE 0.0 END)
            ELSE count(*) FILTER (WHERE grade = 2) / count(*) END AS value
FROM rl_nuggets
GROUP BY qrels_id, run_id, topic

-- @metric vital
-- reads: rl_nuggets
-- params: over_length
SELECT qrels_id, run_id, topic,
       CASE WHEN ${over_length} THEN (CASE WHEN any_value(length) IS NULL THEN NULL ELSE 0.0 END)
            WHEN count(*) FILTER (WHERE vital) = 0 THEN 0.0
            ELSE (count(*) FILTER (WHERE vital AND grade = 2) + 0.5 * count(*) FILTER (WHERE vital AND grade = 1))
                 / count(*) FILTER (WHERE vital) END AS value
FROM rl_nuggets
GROUP BY qrels_id, run_id, topic

-- @metric all
-- reads: rl_nuggets
-- params: over_length
SELECT qrels_id, run_id, topic,
       CASE WHEN ${over_length} THEN (CASE WHEN any_value(length) IS NULL THEN NULL ELSE 0.0 END)
            ELSE (count(*) FILTER (WHERE grade = 2) + 0.5 * count(*) FILTER (WHERE grade = 1)) / count(*) END AS value
FROM rl_nuggets
GROUP BY qrels_id, run_id, topic

-- @metric weighted
-- reads: rl_nuggets
-- params: okay, partial, over_length
SELECT qrels_id, run_id, topic,
       CASE WHEN ${over_length} THEN (CASE WHEN any_value(length) IS NULL THEN NULL ELSE 0.0 END)
            WHEN exact_sum(CASE WHEN vital THEN 1.0 ELSE ${okay} END) = 0 THEN 0.0
            ELSE exact_sum(CASE WHEN vital THEN 1.0 ELSE ${okay} END
                           * CASE grade WHEN 2 THEN 1.0 WHEN 1 THEN ${partial} ELSE 0.0 END)
                 / exact_sum(CASE WHEN vital THEN 1.0 ELSE ${okay} END) END AS value
FROM rl_nuggets
GROUP BY qrels_id, run_id, topic
