-- trec_eval's measures, per (qrels set, run, topic), over the ranked judged list (ranked_list.sql).
--
-- Source: trec_eval 10.0 (usnistgov/trec_eval, tag v10.0, m_*.c), restated in
-- trec_eval's m_*.c files; conformance: tests/conformance/test_trec_eval.py.
-- Notation: r = evaluation rank (1-based; renumbered over judged docs when judged_only, trec_eval
-- -J); isrel(r) = 1 if grade >= rel (trec_eval -l); count(r) = cnt = relevant docs at ranks <= r;
-- R = relevant docs in the qrels; N = judged nonrelevant docs in the qrels (0 <= grade < rel);
-- n = num_ret; k = cutoff; RR_n = num_rel_ret = count(n).
--
--   AP        = (1/R) sum_{r: isrel(r)} count(r)/r                        m_map.c; Sakai IPSJ TOD 2007 Eq. 1
--   AP@k      = (1/R) sum_{r <= k: isrel(r)} count(r)/r                   m_map_cut.c
--   GM_AP     = AP per topic; summary exp(mean ln max(AP, 1e-5))          m_gm_map.c, meas_avg.c
--   P@k       = count(k)/k  (denominator k even when n < k)               m_P.c
--   R@k       = count(k)/R                                                m_recall.c
--   RelP@k    = count(k)/min(k, R)                                        m_rel_P.c
--   Success@k = 1 if count(k) > 0                                         m_success.c
--   Rprec     = count(R)/R                                                m_Rprec.c
--   RprecMult = count(c)/c with c = (long)(mult*R + 0.9)                  m_Rprec_mult.c
--   RR        = 1/r_1, r_1 = rank of the first relevant doc               m_recip_rank.c
--   nDCG      = sum_r g(r)/log2(r+1) / sum_{i<=|I|} g_I(i)/log2(i+1)      m_ndcg.c; Jarvelin &
--               (linear gain = grade or the declared gain of the level;  Kekalainen 2002
--               ideal list I = every judged doc with gain > 0, never truncated to n)
--   nDCG@k    = both sums truncated at k                                  m_ndcg_cut.c
--               dcg='exp-log2': g replaced by 2^g - 1 in both sums (Burges et al. 2005; gdeval.pl,
--               whose ideal is the same list cut at k; ranx ndcg_burges without a cutoff)
--   DCG@k     = sum_{r<=k} g(r)/log2(r+1), unnormalised (2^g - 1 with dcg='exp-log2')   ranx dcg
--   Bpref     = (1/R) sum_{relevant retrieved d} (1 - min(m_d, R)/min(N, R)), m_d = judged
--               nonrelevant docs ranked above d (the term is 1 when m_d = 0) m_bpref.c;
--               Buckley & Voorhees SIGIR 2004 (trec_eval's corrected bpref)
--   infAP     = (1/R) sum over relevant retrieved docs at 0-based index j (counting every
--               retrieved doc) of 1 if j = 0, else
--               1/(j+1) + j/(j+1) * (rs-1+nr+u)/j * (rs-1+eps)/(rs-1+nr+2 eps), eps = 1e-5,
--               rs = relevant so far (incl.), nr = judged nonrelevant above, u = pooled-but-
--               unjudged (qrels grade < 0) above                          m_infap.c; Yilmaz &
--                                                                        Aslam CIKM 2006
--   IPrec     = interpolated precision at recall level p: c = lround(p R) (v9: (long)(p R + 0.9));
--               0 if c > RR_n, else max_{j >= max(c, 1)} j / r_j over the relevant retrieved
--               docs (r_j = rank of the j-th)                             m_iprec_at_recall.c
--   11pt_avg  = mean of IPrec over the levels (default 0, 0.1, ..., 1)    m_11pt_avg.c
--   NumRet, NumRel, NumRelRet, NumNonrelJudgedRet (docs retrieved with 0 <= grade < rel)
--               summed in the summary                                    m_num_*.c
--   SetP = RR_n/n, SetR = RR_n/R, SetF = (beta+1) SetP SetR/(beta SetP + SetR) (beta not
--   squared), SetAP = RR_n^2/(n R), SetRelP = RR_n/min(n, R)              m_set_*.c
--   Utility   = a RR_n + b (n - RR_n) + c (R - RR_n) + d (num_docs + RR_n - n - R); 0 for a topic
--               that the run does not retrieve for (trec_eval -c resets it) m_utility.c
--   Unj@k     = (docs in the top k that are not judged, i.e. not in the qrels or grade < 0)/k
--                                                                        m_unjudged.c
-- A topic with R = 0 scores 0 (trec_eval keeps it in the mean). Missing rows get the metric's
-- `missing` value (0).
--
-- Blocks with `-- explain: terms` compute their value from the per-rank CTE `terms` (one row per
-- judged document: its term `contribution`, and `norm`, the divisor of the sum) that
-- `evalstore explain` prints; see evalstore/metrics/sqlfile.py.

-- @metric AP
-- reads: rl_judged
-- needs: cnt
-- params: k
-- explain: terms
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, CAST(NULL AS DOUBLE) AS discount, cnt,
           CASE WHEN isrel = 1 AND rank <= ${k} THEN cnt / rank END AS contribution, R AS norm
    FROM rl_judged WHERE R > 0
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric P
-- reads: rl_judged
-- params: k
-- explain: terms
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, CAST(NULL AS DOUBLE) AS discount,
           CASE WHEN isrel = 1 AND rank <= ${k} THEN 1 END AS contribution, ${k} AS norm
    FROM rl_judged
)
SELECT qrels_id, run_id, topic, count(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric R
-- reads: rl_judged
-- params: k
-- explain: terms
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, CAST(NULL AS DOUBLE) AS discount,
           CASE WHEN isrel = 1 AND rank <= ${k} THEN 1 END AS contribution, R AS norm
    FROM rl_judged WHERE R > 0
)
SELECT qrels_id, run_id, topic, count(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric RelP
-- reads: rl_judged
-- params: k
-- explain: terms
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, CAST(NULL AS DOUBLE) AS discount,
           CASE WHEN isrel = 1 AND rank <= ${k} THEN 1 END AS contribution, least(${k}, R) AS norm
    FROM rl_judged WHERE R > 0
)
SELECT qrels_id, run_id, topic, count(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric Success
-- reads: rl_judged
-- params: k
-- explain: terms, running=max
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, CAST(NULL AS DOUBLE) AS discount,
           CASE WHEN rank <= ${k} THEN isrel END AS contribution
    FROM rl_judged
)
SELECT qrels_id, run_id, topic, max(contribution) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric Rprec
-- reads: rl_judged
-- explain: terms
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, CAST(NULL AS DOUBLE) AS discount,
           CASE WHEN isrel = 1 AND rank <= R THEN 1 END AS contribution, R AS norm
    FROM rl_judged WHERE R > 0
)
SELECT qrels_id, run_id, topic, count(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric RprecMult
-- reads: rl_judged
-- params: mult
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1 AND rank <= c) / any_value(c) AS value
FROM (SELECT *, floor(${mult} * R + 0.9) AS c FROM rl_judged)
WHERE c >= 1
GROUP BY qrels_id, run_id, topic

-- @metric RR
-- reads: rl_judged
-- params: k
-- explain: terms, running=max
-- (the largest term 1/r is the first relevant document's)
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, rank AS discount,
           CASE WHEN isrel = 1 AND rank <= ${k} THEN 1.0 / rank END AS contribution
    FROM rl_judged
)
SELECT qrels_id, run_id, topic, max(contribution) AS value
FROM terms WHERE contribution IS NOT NULL
GROUP BY qrels_id, run_id, topic

-- @metric nDCG
-- reads: rl_judged, rl_ideal
-- params: dcg, k
-- explain: terms, ideal=iterms
WITH ig AS (
    SELECT qrels_id, topic, rank, CASE WHEN ${dcg} = 'exp-log2' THEN pow(2.0, gain) - 1 ELSE gain END AS gain,
           log2(rank + 1) AS discount
    FROM rl_ideal WHERE rank <= ${k}
), iterms AS (
    SELECT *, gain / discount AS contribution FROM ig
), idcg AS (
    SELECT qrels_id, topic, exact_sum(contribution) AS idcg FROM iterms GROUP BY qrels_id, topic
), g AS (
    SELECT j.qrels_id, j.run_id, j.topic, j.doc, j.rank, j.grade,
           CASE WHEN ${dcg} = 'exp-log2' THEN pow(2.0, j.gain) - 1 ELSE j.gain END AS gain,
           log2(j.rank + 1) AS discount, i.idcg AS norm
    FROM rl_judged j JOIN idcg i USING (qrels_id, topic)
), terms AS (
    SELECT *, CASE WHEN rank <= ${k} AND gain <> 0 THEN gain / discount END AS contribution FROM g
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms
WHERE rank <= ${k} AND gain <> 0 AND norm > 0
GROUP BY qrels_id, run_id, topic

-- @metric DCG
-- reads: rl_judged
-- params: dcg, k
-- explain: terms
WITH g AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade,
           CASE WHEN ${dcg} = 'exp-log2' THEN pow(2.0, gain) - 1 ELSE gain END AS gain, log2(rank + 1) AS discount
    FROM rl_judged
), terms AS (
    SELECT *, CASE WHEN rank <= ${k} AND gain <> 0 THEN gain / discount END AS contribution FROM g
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) AS value
FROM terms WHERE rank <= ${k} AND gain <> 0
GROUP BY qrels_id, run_id, topic

-- @metric Bpref
-- reads: rl_judged
-- needs: cnt, jrank
-- explain: terms
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, CAST(NULL AS DOUBLE) AS discount,
           jrank - cnt AS nr,   /* at a relevant row: the judged nonrelevant docs above it */
           CASE WHEN isrel = 1 THEN CASE WHEN jrank - cnt = 0 THEN 1.0 ELSE 1.0 - least(jrank - cnt, R) / least(N, R) END
                END AS contribution,
           R AS norm
    FROM rl_judged WHERE R > 0
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms WHERE gain = 1
GROUP BY qrels_id, run_id, topic

-- @metric infAP
-- reads: rl_judged
-- needs: cnt, pool
SELECT qrels_id, run_id, topic,
       exact_sum(CASE WHEN rank = 1 THEN 1.0
                ELSE 1.0 / rank
                     + ((rank - 1.0) / rank) * ((cnt - 1 + nr + u) / (rank - 1.0))
                       * ((cnt - 1 + 1e-5) / (cnt - 1 + nr + 2e-5)) END) / any_value(R) AS value
FROM (SELECT *,
             sum(CASE WHEN judged AND isrel = 0 THEN 1 ELSE 0 END) OVER w AS nr,
             sum(CASE WHEN NOT judged THEN 1 ELSE 0 END) OVER w AS u
      FROM rl_judged
      WINDOW w AS (PARTITION BY qrels_id, run_id, topic ORDER BY rank ROWS UNBOUNDED PRECEDING))
WHERE isrel = 1 AND R > 0
GROUP BY qrels_id, run_id, topic

-- @metric IPrec
-- reads: rl_judged, rl_topics
-- needs: cnt
-- params: convention, judged_only, recall, rounding
-- (trec_eval 9.0.8 with -J prints nan for a topic without relevant docs whose retrieved docs are all unjudged: the
-- condensed list is empty; reproduced under the trec_eval9 and ir_measures conventions)
WITH rel AS (
    SELECT qrels_id, run_id, topic, cnt, R,
           max(cnt / rank) OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank DESC
                                 ROWS UNBOUNDED PRECEDING) AS ip
    FROM rl_judged WHERE isrel = 1
)
SELECT qrels_id, run_id, topic, ip AS value
FROM rel
WHERE cnt = greatest(CASE WHEN coalesce(${rounding}, CASE WHEN ${convention} IN ('trec_eval9', 'ir_measures') THEN 'v9' END) = 'v9' THEN floor(${recall} * R + 0.9) ELSE round(${recall} * R) END, 1)
UNION ALL
SELECT qrels_id, run_id, topic, CAST('NaN' AS DOUBLE) AS value
FROM rl_topics
WHERE ${judged_only} AND num_ret = 0 AND R = 0 AND ${convention} IN ('trec_eval9', 'ir_measures')

-- @metric 11pt_avg
-- reads: rl_judged
-- needs: cnt
-- params: convention, levels, rounding
WITH lv AS (
    SELECT unnest(coalesce(${levels}, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]::DOUBLE[])) AS p
), rel AS (
    SELECT qrels_id, run_id, topic, cnt, R,
           max(cnt / rank) OVER (PARTITION BY qrels_id, run_id, topic ORDER BY rank DESC
                                 ROWS UNBOUNDED PRECEDING) AS ip
    FROM rl_judged WHERE isrel = 1
)
SELECT r.qrels_id, r.run_id, r.topic, exact_sum(r.ip) / (SELECT count(*) FROM lv) AS value
FROM rel r JOIN lv
  ON r.cnt = greatest(CASE WHEN coalesce(${rounding}, CASE WHEN ${convention} IN ('trec_eval9', 'ir_measures') THEN 'v9' END) = 'v9' THEN floor(lv.p * r.R + 0.9) ELSE round(lv.p * r.R) END, 1)
GROUP BY r.qrels_id, r.run_id, r.topic

-- @metric NumRet
-- reads: rl_topics
-- params: k
SELECT qrels_id, run_id, topic, least(num_ret, ${k}) AS value FROM rl_topics

-- @metric NumRel
-- reads: rl_topics
SELECT qrels_id, run_id, topic, R AS value FROM rl_topics

-- @metric NumRelRet
-- reads: rl_judged
-- params: k
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1 AND rank <= ${k}) AS value
FROM rl_judged GROUP BY qrels_id, run_id, topic

-- @metric NumNonrelJudgedRet
-- reads: rl_judged
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE judged AND isrel = 0) AS value
FROM rl_judged GROUP BY qrels_id, run_id, topic

-- @metric SetP
-- reads: rl_judged
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1) / any_value(num_ret) AS value
FROM rl_judged WHERE num_ret > 0
GROUP BY qrels_id, run_id, topic

-- @metric SetR
-- reads: rl_judged
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1) / any_value(R) AS value
FROM rl_judged WHERE R > 0
GROUP BY qrels_id, run_id, topic

-- @metric SetF
-- reads: rl_judged
-- params: beta
SELECT qrels_id, run_id, topic,
       CASE WHEN nrr > 0 THEN (${beta} + 1.0) * (nrr / n) * (nrr / R) / (${beta} * (nrr / n) + nrr / R) ELSE 0 END AS value
FROM (SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1) AS nrr,
             any_value(num_ret) AS n, any_value(R) AS R
      FROM rl_judged WHERE R > 0 AND num_ret > 0
      GROUP BY qrels_id, run_id, topic)

-- @metric SetAP
-- reads: rl_judged
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1) ^ 2 / (any_value(num_ret) * any_value(R)) AS value
FROM rl_judged WHERE R > 0 AND num_ret > 0
GROUP BY qrels_id, run_id, topic

-- @metric SetRelP
-- reads: rl_judged
SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1) / least(any_value(num_ret), any_value(R)) AS value
FROM rl_judged WHERE R > 0 AND num_ret > 0
GROUP BY qrels_id, run_id, topic

-- @metric Utility
-- reads: rl_judged, rl_topics, rl_retrieved
-- params: a, b, c, d, num_docs
WITH nrr AS (
    SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE isrel = 1) AS nrr
    FROM rl_judged GROUP BY qrels_id, run_id, topic
), in_run AS (
    SELECT DISTINCT run_id, topic FROM rl_retrieved
)
SELECT t.qrels_id, t.run_id, t.topic,
       ${a} * coalesce(x.nrr, 0) + ${b} * (t.num_ret - coalesce(x.nrr, 0)) + ${c} * (t.R - coalesce(x.nrr, 0))
       + ${d} * (${num_docs} + coalesce(x.nrr, 0) - t.num_ret - t.R) AS value
FROM rl_topics t
JOIN in_run USING (run_id, topic)
LEFT JOIN nrr x USING (qrels_id, run_id, topic)

-- @metric Unj
-- reads: rl_judged, rl_topics
-- params: k
SELECT t.qrels_id, t.run_id, t.topic, (least(t.num_ret, ${k}) - coalesce(j.n_judged, 0)) / ${k} AS value
FROM rl_topics t
LEFT JOIN (SELECT qrels_id, run_id, topic, count(*) FILTER (WHERE judged AND rank <= ${k}) AS n_judged
           FROM rl_judged GROUP BY qrels_id, run_id, topic) j USING (qrels_id, run_id, topic)
