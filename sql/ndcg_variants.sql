-- nDCG as NTCIREVAL computes it (two variants, both with LINEAR gains) and Hit@k.
--
-- Sources: Jarvelin & Kekalainen, ACM TOIS 2002 (the original discount), restated as Sakai 2007
-- ("Alternatives to Bpref", SIGIR 2007, Eq. 22); NTCIREVAL 190111 nDCG@l, MSnDCG@l and Hit@l.
--
--   disc_b(r)    = 1 if r = 1 or r <= b, else log_b(r); b = 0 means ln(r) for every r >= 2
--                  (NTCIREVAL -logb 0: rank 2 is divided by ln 2 < 1)
--   nDCG-JK@k    = sum_{r <= k} g(r)/disc_b(r) / sum_{r <= k} g_I(r)/disc_b(r)        (SIGIR 2007 Eq. 22)
--   MSnDCG@k     = sum_{r <= k} g(r)/log(r+1) / sum_{r <= k} g_I(r)/log(r+1)        ("Microsoft" nDCG)
--   Hit@k        = 1 if a relevant doc (level >= rel) is in the top k, else 0
-- g = the gain of the document's level (gains=), g_I = the ideal list's gains. Without @k the
-- whole list (and the whole ideal list) is used. With gains = grades MSnDCG@k = trec_eval ndcg_cut.

-- @metric nDCG-JK
-- reads: rl_judged, rl_ideal
-- params: b, k
WITH dg AS (
    SELECT qrels_id, run_id, topic,
           exact_sum(gain / CASE WHEN rank = 1 THEN 1.0
                           WHEN ${b} = 0 THEN ln(rank)
                           WHEN rank <= ${b} THEN 1.0
                           ELSE ln(rank) / ln(${b}) END) AS dcg
    FROM rl_judged WHERE gain > 0 AND rank <= ${k}
    GROUP BY qrels_id, run_id, topic
), idg AS (
    SELECT qrels_id, topic,
           exact_sum(gain / CASE WHEN rank = 1 THEN 1.0
                           WHEN ${b} = 0 THEN ln(rank)
                           WHEN rank <= ${b} THEN 1.0
                           ELSE ln(rank) / ln(${b}) END) AS idcg
    FROM rl_ideal WHERE rank <= ${k}
    GROUP BY qrels_id, topic
)
SELECT d.qrels_id, d.run_id, d.topic, d.dcg / i.idcg AS value
FROM dg d JOIN idg i ON i.qrels_id = d.qrels_id AND i.topic = d.topic
WHERE i.idcg > 0

-- @metric MSnDCG
-- reads: rl_judged, rl_ideal
-- params: k
WITH dg AS (
    SELECT qrels_id, run_id, topic, exact_sum(gain / log2(rank + 1)) AS dcg
    FROM rl_judged WHERE gain > 0 AND rank <= ${k}
    GROUP BY qrels_id, run_id, topic
), idg AS (
    SELECT qrels_id, topic, exact_sum(gain / log2(rank + 1)) AS idcg
    FROM rl_ideal WHERE rank <= ${k}
    GROUP BY qrels_id, topic
)
SELECT d.qrels_id, d.run_id, d.topic, d.dcg / i.idcg AS value
FROM dg d JOIN idg i ON i.qrels_id = d.qrels_id AND i.topic = d.topic
WHERE i.idcg > 0

-- @metric Hit
-- reads: rl_judged
-- params: k
SELECT qrels_id, run_id, topic, 1.0 AS value
FROM rl_judged WHERE isrel = 1 AND rank <= ${k}
GROUP BY qrels_id, run_id, topic
