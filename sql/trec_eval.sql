-- trec_eval's binary and gain measures, per (run, topic), over the ranked judged list.
--
-- Source: trec_eval 10.0 (usnistgov/trec_eval, m_*.c), restated in
-- ../shared/reference/trec_eval_semantics.md Sec. 6. Notation: r = evaluation rank, isrel(r) = 1 if
-- grade >= rel, count(r) = cnt, R = relevant docs in the qrels, k = cutoff, n = num_ret.
--
--   AP      = (1/R) sum_{r: isrel(r)} count(r)/r                    (m_map.c; Sakai 000 Eq. 1)
--   AP@k    = (1/R) sum_{r <= k: isrel(r)} count(r)/r               (m_map_cut.c)
--   P@k     = count(k)/k  (denominator k even when n < k)          (m_P.c)
--   R@k     = count(k)/R                                           (m_recall.c)
--   RR      = 1/r_1, r_1 = rank of the first relevant doc           (m_recip_rank.c)
--   nDCG    = sum_r g(r)/log2(r+1) / sum_{i<=|ideal|} g_I(i)/log2(i+1)   (m_ndcg.c; linear gain,
--             the ideal list is every judged doc with gain > 0, not truncated to n)
--   nDCG@k  = the same with both sums truncated at k               (m_ndcg_cut.c)
--   NumRet, NumRel, NumRelRet                                      (m_num_*.c; summed in the summary)
-- A topic with R = 0 scores 0 (trec_eval keeps it in the mean).

-- @metric AP
SELECT qrels_id, run_id, topic, sum(cnt / rank) FILTER (WHERE isrel = 1 AND rank <= ${k}) / any_value(R) AS value
FROM rl_judged WHERE R > 0
GROUP BY qrels_id, run_id, topic

-- @metric P
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1 AND rank <= ${k}) / ${k} AS value
FROM rl_judged
GROUP BY qrels_id, run_id, topic

-- @metric R
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1 AND rank <= ${k}) / any_value(R) AS value
FROM rl_judged WHERE R > 0
GROUP BY qrels_id, run_id, topic

-- @metric RR
SELECT qrels_id, run_id, topic, 1.0 / min(rank) AS value
FROM rl_judged WHERE isrel = 1 AND rank <= ${k}
GROUP BY qrels_id, run_id, topic

-- @metric nDCG
WITH idcg AS (
    SELECT qrels_id, topic, sum(gain / log2(rank + 1)) AS idcg FROM rl_ideal WHERE rank <= ${k} GROUP BY qrels_id, topic
)
SELECT j.qrels_id, j.run_id, j.topic, sum(j.gain / log2(j.rank + 1)) / any_value(i.idcg) AS value
FROM rl_judged j JOIN idcg i USING (qrels_id, topic)
WHERE j.rank <= ${k} AND j.gain > 0 AND i.idcg > 0
GROUP BY j.qrels_id, j.run_id, j.topic

-- @metric NumRet
SELECT qrels_id, run_id, topic, least(num_ret, ${k}) AS value FROM rl_topics

-- @metric NumRel
SELECT qrels_id, run_id, topic, R AS value FROM rl_topics

-- @metric NumRelRet
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1 AND rank <= ${k}) AS value
FROM rl_judged GROUP BY qrels_id, run_id, topic
