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
-- explain: terms, ideal=iterms
WITH iterms AS (
    SELECT qrels_id, topic, rank, gain, disc AS discount, gain / disc AS contribution
    FROM (SELECT *, CASE WHEN rank = 1 THEN 1.0
                         WHEN ${b} = 0 THEN ln(rank)
                         WHEN rank <= ${b} THEN 1.0
                         ELSE ln(rank) / ln(${b}) END AS disc
          FROM rl_ideal WHERE rank <= ${k})
), idg AS (
    SELECT qrels_id, topic, exact_sum(contribution) AS idcg FROM iterms GROUP BY qrels_id, topic
), terms AS (
    SELECT j.qrels_id, j.run_id, j.topic, j.doc, j.rank, j.grade, j.gain, j.disc AS discount,
           j.gain / j.disc AS contribution, i.idcg AS norm
    FROM (SELECT *, CASE WHEN rank = 1 THEN 1.0
                         WHEN ${b} = 0 THEN ln(rank)
                         WHEN rank <= ${b} THEN 1.0
                         ELSE ln(rank) / ln(${b}) END AS disc
          FROM rl_judged WHERE gain > 0 AND rank <= ${k}) j
    JOIN idg i ON i.qrels_id = j.qrels_id AND i.topic = j.topic
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms WHERE norm > 0
GROUP BY qrels_id, run_id, topic

-- @metric MSnDCG
-- reads: rl_judged, rl_ideal
-- params: k
-- explain: terms, ideal=iterms
WITH iterms AS (
    SELECT qrels_id, topic, rank, gain, log2(rank + 1) AS discount, gain / log2(rank + 1) AS contribution
    FROM rl_ideal WHERE rank <= ${k}
), idg AS (
    SELECT qrels_id, topic, exact_sum(contribution) AS idcg FROM iterms GROUP BY qrels_id, topic
), terms AS (
    SELECT j.qrels_id, j.run_id, j.topic, j.doc, j.rank, j.grade, j.gain, log2(j.rank + 1) AS discount,
           j.gain / log2(j.rank + 1) AS contribution, i.idcg AS norm
    FROM rl_judged j JOIN idg i ON i.qrels_id = j.qrels_id AND i.topic = j.topic
    WHERE j.gain > 0 AND j.rank <= ${k}
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms WHERE norm > 0
GROUP BY qrels_id, run_id, topic

-- @metric Hit
-- reads: rl_judged
-- params: k
SELECT qrels_id, run_id, topic, 1.0 AS value
FROM rl_judged WHERE isrel = 1 AND rank <= ${k}
GROUP BY qrels_id, run_id, topic
