-- Sakai's blended-ratio family: Q-measure, O-measure, P-measure, P+-measure, and NTCIREVAL's
-- cutoff forms Q@l and AP@l.
--
-- Sources: Sakai, "On the properties of evaluation metrics for finding one highly relevant
-- document", IPSJ TOD 2007 (Sec. 3, Eqs. 1-3, 6, 7) and AIRS 2006; Sakai, "Alternatives to Bpref",
-- SIGIR 2007 (Eq. 21, the beta parameter); NTCIREVAL 190111 (the @l forms).
-- Notation (sql/ranked_list.sql): r = rank, isrel(r), count(r) = cnt, cg(r) = cg,
-- cg_I(r) = cg_ideal (constant after the ideal list ends), R = relevant docs in the qrels.
-- A document is relevant when its level >= 1; unjudged documents have gain 0 and keep their rank.
--
--   BR(r)      = (beta cg(r) + count(r)) / (beta cg_I(r) + r)             blended ratio (Eq. 2 / 21)
--   Q-measure  = (1/R) sum_{r: isrel} BR(r)                               (Eq. 2; beta = 0 gives AP)
--   Q@k        = (1/min(k, R)) sum_{r <= k: isrel} BR(r)                  (NTCIREVAL Q@l)
--   AP-ntcir@k = (1/min(k, R)) sum_{r <= k: isrel} count(r)/r             (NTCIREVAL AP@l)
--   O-measure  = BR(r_1), r_1 = rank of the first relevant doc            (Eq. 3)
--   P-measure  = BR(r_p), r_p = rank of the first doc of the highest level
--                retrieved (levels, not gains)                             (Eq. 6)
--   P+-measure = (1/count(r_p)) sum_{r <= r_p: isrel} BR(r)               (Eq. 7; UDF pplus_measure)
-- O, P, P+ are 0 when no relevant doc is retrieved. With @k they are computed on the top k only
-- (truncation: r_1 and r_p are taken within the top k). Topics with R = 0 give no row (score 0
-- under the trec_eval convention; dropped by the engine under ntcireval).

-- @metric Q-measure
-- reads: rl_judged
-- needs: cnt, cg, cg_ideal
-- params: beta, has_cutoff, k
-- explain: terms
-- (terms: each rank's blended ratio BR(r) at a relevant rank as its contribution; the discount
-- shown is BR's denominator beta cg_I(r) + r)
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, gain, ${beta} * cg_ideal + rank AS discount, cnt, cg, cg_ideal,
           CASE WHEN isrel = 1 AND rank <= ${k} THEN (${beta} * cg + cnt) / (${beta} * cg_ideal + rank) END
               AS contribution,
           CASE WHEN ${has_cutoff} THEN least(${k}, R) ELSE R END AS norm
    FROM rl_judged WHERE R > 0
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric AP-ntcir
-- reads: rl_judged
-- needs: cnt
-- params: k
-- explain: terms
WITH terms AS (
    SELECT qrels_id, run_id, topic, doc, rank, grade, isrel AS gain, CAST(NULL AS DOUBLE) AS discount, cnt,
           CASE WHEN isrel = 1 AND rank <= ${k} THEN cnt / rank END AS contribution, least(${k}, R) AS norm
    FROM rl_judged WHERE R > 0
)
SELECT qrels_id, run_id, topic, exact_sum(contribution) / any_value(norm) AS value
FROM terms
GROUP BY qrels_id, run_id, topic

-- @metric O-measure
-- reads: rl_judged
-- needs: cnt, cg, cg_ideal
-- params: beta, k
SELECT qrels_id, run_id, topic,
       arg_min((${beta} * cg + cnt) / (${beta} * cg_ideal + rank), rank) AS value
FROM rl_judged WHERE isrel = 1 AND rank <= ${k}
GROUP BY qrels_id, run_id, topic

-- @metric P-measure
-- reads: rl_judged
-- needs: cnt, cg, cg_ideal
-- params: beta, k
-- r_p: order the relevant docs by level (highest first), then rank; take the first.
SELECT qrels_id, run_id, topic,
       arg_min((${beta} * cg + cnt) / (${beta} * cg_ideal + rank), {'level': -grade, 'rank': rank}) AS value
FROM rl_judged WHERE isrel = 1 AND rank <= ${k}
GROUP BY qrels_id, run_id, topic

-- @metric P-plus
-- reads: rl_judged, rl_ideal
-- params: beta, k
-- udfs: pplus_measure
WITH ideal AS (
    SELECT qrels_id, topic, list(gain) AS gains FROM rl_ideal GROUP BY qrels_id, topic
)
SELECT j.qrels_id, j.run_id, j.topic,
       pplus_measure(list(j.rank ORDER BY j.rank), list(j.grade ORDER BY j.rank), list(j.gain ORDER BY j.rank),
                     coalesce(any_value(i.gains), []::DOUBLE[]), ${beta}) AS value
FROM rl_judged j
LEFT JOIN ideal i ON i.qrels_id = j.qrels_id AND i.topic = j.topic
WHERE j.rank <= ${k} AND j.isrel = 1          -- nonrelevant rows add nothing to cg(r) or count(r)
GROUP BY j.qrels_id, j.run_id, j.topic
