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

-- @metric support_precision
-- reads: rl_citations
SELECT qrels_id, run_id, topic, avg(credit) AS value
FROM rl_citations WHERE citation IS NOT NULL
GROUP BY qrels_id, run_id, topic

-- @metric support_recall
-- reads: rl_citations
WITH sentences AS (
    SELECT qrels_id, run_id, topic, sentence, coalesce(max(credit), 0.0) AS best
    FROM rl_citations GROUP BY qrels_id, run_id, topic, sentence
)
SELECT qrels_id, run_id, topic, avg(best) AS value
FROM sentences
GROUP BY qrels_id, run_id, topic
