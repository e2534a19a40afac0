-- Expected reciprocal rank (Chapelle et al. 2009): gdeval's form (ERR, as in ir_measures) and
-- NTCIREVAL's linear form with its normalised version (ERR-ntcir, nERR-ntcir).
--
-- ERR (gdeval.pl 1.2a, the only provider of ir_measures' ERR@k; TREC Web track 2010-2014):
--
--   R(r)     = (2^g(r) - 1) / 2^${max_rel}     g = the grade (0 for grades <= 0); max_rel = gdeval's
--                                              MAX_JUDGMENT, 4, not the collection's top grade
--   ERR@k    = sum_{r <= k} R(r)/r prod_{i < r} (1 - R(i))
-- Not normalised. gdeval prints 5 decimals; the ir_measures convention rounds the same way.
--
-- ERR-ntcir, nERR-ntcir:
-- Source: NTCIREVAL 190111 (ntcir_eval.c). The probability that the user stops at rank r is linear in the gain:
--
--   p(r)     = g(r) / (g_max + 1)          g_max = ${gmax}: the gain of the highest DECLARED level
--                                          (the last gains= value), else the qrels' highest grade;
--                                          never the highest level of the topic
--   ERR@k    = sum_{r <= k} (1/r) p(r) prod_{i < r} (1 - p(i))
--   nERR@k   = ERR@k / ERR@k of the ideal list (every relevant doc, highest gain first)
-- Unjudged and nonrelevant docs have p = 0 but keep their rank. Without @k the whole list is
-- used. p(r) < 1 always, so the product is computed as exp(sum ln(1 - p)), the sum exact (each ln
-- rounded to 24 decimals, as exact_sum), so that a value does not depend on which other runs and
-- topics were evaluated with it (a sum of doubles over a window did, in the last bit).
--
-- Fragment err_run (ERR-ntcir, nERR-ntcir): p = stop probability of each judged doc with gain > 0 at rank <= k, s adds go_on = prod_{i<r} (1 - p(i)).
-- The per-rank CTEs `terms` (and `iterms`, the ideal list's) hold each rank's term p go_on / r
-- (`contribution`) that the blocks sum and `evalstore explain` prints (the blocks' `-- explain:`).

-- @fragment err_run
-- reads: rl_judged
-- params: gmax, k
p AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, gain, gain / (${gmax} + 1.0) AS p
    FROM rl_judged WHERE gain > 0 AND rank <= ${k}
), s AS (
    SELECT *, exp(coalesce(CAST(sum(CAST(ln(1.0 - p) AS DECIMAL(38, 24))) OVER (
                      PARTITION BY qrels_id, run_id, topic ORDER BY rank
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS DOUBLE), 0)) AS go_on
    FROM p
), terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, gain, rank AS discount, p, go_on,
           p * go_on / rank AS contribution
    FROM s
)

-- @metric ERR-ntcir
-- params: err_run
-- explain: terms
WITH ${err_run}
SELECT qrels_id, run_id, topic, exact_sum(contribution) AS value
FROM terms GROUP BY qrels_id, run_id, topic

-- @metric nERR-ntcir
-- reads: rl_ideal
-- params: err_run, gmax, k
-- explain: nterms, ideal=iterms
WITH ${err_run}, ip AS (
    SELECT qrels_id, topic, rank, gain, gain / (${gmax} + 1.0) AS p FROM rl_ideal WHERE rank <= ${k}
), iss AS (
    SELECT *, exp(coalesce(CAST(sum(CAST(ln(1.0 - p) AS DECIMAL(38, 24))) OVER (
                      PARTITION BY qrels_id, topic ORDER BY rank
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS DOUBLE), 0)) AS go_on
    FROM ip
), iterms AS (
    SELECT qrels_id, topic, rank, gain, rank AS discount, p, go_on, p * go_on / rank AS contribution FROM iss
), ideal AS (
    SELECT qrels_id, topic, exact_sum(contribution) AS err FROM iterms GROUP BY qrels_id, topic
), nterms AS (
    SELECT t.*, i.err AS norm FROM terms t JOIN ideal i ON i.qrels_id = t.qrels_id AND i.topic = t.topic
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM nterms WHERE norm > 0
GROUP BY qrels_id, run_id, topic

-- @metric ERR
-- reads: rl_judged
-- params: k, max_rel
-- explain: terms
-- (gain = 2^g - 1, p = gain / 2^max_rel: the stop probability R(r); go_on = prod_{i<r} (1 - R(i)))
WITH g AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, pow(2.0, greatest(grade, 0)) - 1.0 AS gain
    FROM rl_judged WHERE grade > 0 AND rank <= ${k}
), p AS (
    SELECT *, gain / pow(2.0, ${max_rel}) AS p FROM g
), s AS (
    SELECT *, exp(coalesce(CAST(sum(CAST(ln(1.0 - p) AS DECIMAL(38, 24))) OVER (
                      PARTITION BY qrels_id, run_id, topic ORDER BY rank
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS DOUBLE), 0)) AS go_on
    FROM p
), terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, gain, rank AS discount, p, go_on,
           p * go_on / rank AS contribution
    FROM s
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) AS value
FROM terms GROUP BY qrels_id, run_id, topic
