-- Citation support of generated answers (TREC 2024 RAG support evaluation; Thakur et al., SIGIR
-- 2025, arXiv 2504.15205): each block reads every (sentence, citation) pair of each judged answer
-- and each sentence without a citation (rl_citations, sql/answer_lists.sql), with the credit of
-- the pair's support label: 1 full, 0.5 partial, 0 none (an unlabelled citation counts as none).
--
--   support_precision = mean over the answer's (sentence, citation) pairs of their credit
--                       (0 for an answer without any citation)
--   support_recall    = mean over the answer's sentences of the best credit among the sentence's
--                       citations (a sentence without a citation counts 0; 0 for an answer
--                       without sentences)
--
-- `terms` (what `evalstore explain` prints): one row per pair (precision: the cited document as
-- `doc`, ranked by sentence and citation) or per sentence (recall: its best citation's document),
-- `gain` the credit, `discount` 1, `norm` the number of pairs or sentences.

-- @metric support_precision
-- reads: rl_citations
-- explain: terms
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, row_number() OVER (PARTITION BY qrels_id, run_id, topic
                                                            ORDER BY sentence, citation) AS rank,
           grade, sentence, citation, label, credit AS gain, 1.0 AS discount, credit AS contribution,
           count(*) OVER (PARTITION BY qrels_id, run_id, topic) AS norm
    FROM rl_citations WHERE citation IS NOT NULL
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric support_recall
-- reads: rl_citations
-- explain: terms
WITH best AS (
    SELECT qrels_id, run_id, topic, sentence, any_value(text) AS text, coalesce(max(credit), 0.0) AS gain,
           max(grade) AS grade, arg_max(doc, credit) AS doc, count(citation) AS citations
    FROM rl_citations GROUP BY qrels_id, run_id, topic, sentence
), terms AS (
    SELECT qrels_id, run_id, topic, doc, sentence + 1 AS rank, grade, citations, text, gain, 1.0 AS discount,
           gain AS contribution, count(*) OVER (PARTITION BY qrels_id, run_id, topic) AS norm
    FROM best
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic
