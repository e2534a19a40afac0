-- Diversity (intent-aware) metrics over subtopic judgments (rl_subtopics): ndeval's, as ir_measures
-- 0.4.3 computes them through pyndeval (ndeval 4.5), and Sakai's D-measures as NTCIREVAL.
--
-- Sources: ndeval 4.5 (TREC Web track, ndeval.c; through pyndeval 0.0.8 in ir_measures 0.4.3);
-- Clarke et al., Novelty and diversity in information retrieval evaluation, SIGIR 2008 (alpha-nDCG);
-- Clarke et al., An effectiveness measure for ambiguous and underspecified queries, ICTIR 2009 (NRBP);
-- Agrawal et al., Diversifying search results, WSDM 2009 (intent-aware metrics); Chapelle et al.,
-- CIKM 2009 (ERR); Zhai et al., SIGIR 2003 (subtopic recall); Sakai & Song, Evaluating diversified
-- search results using per-intent graded relevance, SIGIR 2011 (I-rec, D-nDCG, D#-nDCG), as
-- NTCIREVAL's D-measures (NTCIR-9..12 INTENT/IMine).
--
-- ndeval metrics. A subtopic s of a topic counts only if some doc is relevant to it (grade >= rel);
-- S = the number of such subtopics. rel_s(d) = 1 if d is relevant to s. c_s(i) = the docs above
-- rank i relevant to s. The ranking is pyndeval's: score descending, ties by docno ASCENDING (not
-- trec_eval's descending order; the blocks re-rank rl_retrieved's rows by (score DESC, doc); res
-- files, which have no score, keep their rank). Unjudged docs are relevant to nothing.
--   gain(i)       = sum_s rel_s(d_i) (1 - alpha)^c_s(i)
--   alpha_DCG@k   = sum_{i<=k} gain(i) / log2(i+1)  /  sum_{i<=k} S (1 - alpha)^(i-1) / log2(i+1)
--                   (the "ideal-ideal": every subtopic covered at every rank)
--   ERR_IA@k      = the same with discount 1/i and alpha = 0.5
--   alpha_nDCG@k  = sum_{i<=k} gain(i)/log2(i+1)  /  the same sum over the greedy ideal ranking
--   nERR_IA@k     = sum_{i<=k} gain(i)/i  /  the same over the greedy ideal ranking (alpha = 0.5)
--                   greedy ideal: at each rank the judged doc of largest gain, ties to the larger
--                   docno (diversity_greedy_gains, evalstore/metrics/udf_diversity.py)
--   NRBP          = (1 - (1 - alpha) beta) / S * sum_i beta^(i-1) gain(i)     (whole list)
--   nNRBP         = NRBP / NRBP of the greedy ideal; NULL (ndeval: nan) when S = 0 and the run
--                   retrieved docs for the topic (a topic missing from the run scores 0, as
--                   ir_measures pads it)
--   P_IA@k        = sum_{i<=k} sum_s rel_s(d_i) / (k S)
--   StRecall@k    = |{s : some d_i, i <= k, is relevant to s}| / S
--   AP_IA         = (1/S) sum_s AP_s, AP_s = sum_{i: rel_s(d_i)} (c_s(i) + 1) / i / R_s  (whole list)
-- At k = 1 ndeval 4.5 (and so pyndeval) prints alpha-DCG@1 and ERR-IA@1 without dividing by the
-- ideal-ideal (the raw gain of rank 1, e.g. 3.0 for a doc relevant to 3 subtopics): a quirk of its
-- code. Here @1 is divided like every other k (checked against pyndeval on random data: every other
-- value, @1 of alpha_nDCG and nERR_IA included, agrees within 1e-9).
-- ndeval looks at ranks <= 20 only (ir_measures refuses a cutoff above 20); here any k is computed
-- as defined. A topic with S = 0 scores 0 (nNRBP: NULL); a judged topic missing from a run scores 0.
--
-- D-measures (NTCIREVAL). P(i|q) = rl_subtopics.prob (given, else uniform over the topic's intents);
-- g_i(d) = the gain of d's level for intent i (gain = level, or gains=); rank = the evaluation rank
-- of the store's convention (rl_retrieved.rank: trec_eval's order, or NTCIREVAL's file order).
--   GG(d)         = sum_i P(i|q) g_i(d)                              (global gain)
--   D-nDCG@k      = sum_{r<=k} GG(d_r)/log2(r+1)  /  sum_{r<=k} GG*(r)/log2(r+1)
--                   GG*: the judged docs by GG descending (the ideal list); 0 when GG* is empty.
--                   The discount is log2(r+1) (NTCIREVAL's MSnDCG form, which the D-measures use).
--   I-rec@k       = |intents with a relevant doc (level >= rel) in the top k| / |intents of the topic|
--   D#-nDCG@k     = gamma I-rec@k + (1 - gamma) D-nDCG@k                 (gamma = 0.5 by default)
--                   registered as Dsharp-nDCG ('#' is not a name character); D#-nDCG is an alias

-- @fragment nd_ranking
-- reads: rl_retrieved, rl_subtopics
rk AS (
    SELECT run_id, topic, doc,
           row_number() OVER (PARTITION BY run_id, topic
                              ORDER BY score DESC NULLS LAST, CASE WHEN score IS NULL THEN rank END, doc) AS rank
    FROM rl_retrieved
), st AS (
    SELECT qrels_id, topic, count(DISTINCT subtopic) AS S FROM rl_subtopics WHERE isrel = 1
    GROUP BY qrels_id, topic
), hit AS (
    SELECT s.qrels_id, r.run_id, r.topic, r.rank, s.subtopic,
           row_number() OVER (PARTITION BY s.qrels_id, r.run_id, r.topic, s.subtopic ORDER BY r.rank) - 1 AS c
    FROM rk r JOIN rl_subtopics s ON s.topic = r.topic AND s.doc = r.doc AND s.isrel = 1
)

-- @fragment nd_ideal
-- reads: rl_subtopics
-- params: alpha
-- udfs: diversity_greedy_gains
greedy AS (
    SELECT qrels_id, topic, diversity_greedy_gains(list(doc), list(subtopic), ${alpha}) AS g
    FROM rl_subtopics WHERE isrel = 1 GROUP BY qrels_id, topic
), ideal AS (
    SELECT qrels_id, topic, unnest(g) AS gain, generate_subscripts(g, 1) AS i FROM greedy
)

-- @metric alpha_DCG
-- params: nd_ranking, alpha, k
WITH ${nd_ranking}, run AS (
    SELECT qrels_id, run_id, topic, exact_sum(pow(1 - ${alpha}, c) / log2(rank + 1)) AS v
    FROM hit WHERE rank <= ${k} GROUP BY qrels_id, run_id, topic
), ii AS (
    SELECT st.qrels_id, st.topic, exact_sum(st.S * pow(1 - ${alpha}, r.i - 1) / log2(r.i + 1)) AS v
    FROM st CROSS JOIN (SELECT range AS i FROM range(1, ${k} + 1)) r GROUP BY st.qrels_id, st.topic
)
SELECT run.qrels_id, run.run_id, run.topic, run.v / ii.v AS value
FROM run JOIN ii ON ii.qrels_id = run.qrels_id AND ii.topic = run.topic

-- @metric ERR_IA
-- params: nd_ranking, k
WITH ${nd_ranking}, run AS (
    SELECT qrels_id, run_id, topic, exact_sum(pow(0.5, c) / rank) AS v
    FROM hit WHERE rank <= ${k} GROUP BY qrels_id, run_id, topic
), ii AS (
    SELECT st.qrels_id, st.topic, exact_sum(st.S * pow(0.5, r.i - 1) / r.i) AS v
    FROM st CROSS JOIN (SELECT range AS i FROM range(1, ${k} + 1)) r GROUP BY st.qrels_id, st.topic
)
SELECT run.qrels_id, run.run_id, run.topic, run.v / ii.v AS value
FROM run JOIN ii ON ii.qrels_id = run.qrels_id AND ii.topic = run.topic

-- @metric alpha_nDCG
-- params: nd_ranking, nd_ideal, alpha, k
WITH ${nd_ranking}, ${nd_ideal}, run AS (
    SELECT qrels_id, run_id, topic, exact_sum(pow(1 - ${alpha}, c) / log2(rank + 1)) AS v
    FROM hit WHERE rank <= ${k} GROUP BY qrels_id, run_id, topic
), iv AS (
    SELECT qrels_id, topic, exact_sum(gain / log2(i + 1)) AS v FROM ideal WHERE i <= ${k} GROUP BY qrels_id, topic
)
SELECT run.qrels_id, run.run_id, run.topic, run.v / iv.v AS value
FROM run JOIN iv ON iv.qrels_id = run.qrels_id AND iv.topic = run.topic
WHERE iv.v > 0

-- @metric nERR_IA
-- reads: rl_subtopics
-- params: nd_ranking, k
-- udfs: diversity_greedy_gains
WITH ${nd_ranking}, run AS (
    SELECT qrels_id, run_id, topic, exact_sum(pow(0.5, c) / rank) AS v
    FROM hit WHERE rank <= ${k} GROUP BY qrels_id, run_id, topic
), greedy AS (
    SELECT qrels_id, topic, diversity_greedy_gains(list(doc), list(subtopic), 0.5) AS g
    FROM rl_subtopics WHERE isrel = 1 GROUP BY qrels_id, topic
), ideal AS (
    SELECT qrels_id, topic, unnest(g) AS gain, generate_subscripts(g, 1) AS i FROM greedy
), iv AS (
    SELECT qrels_id, topic, exact_sum(gain / i) AS v FROM ideal WHERE i <= ${k} GROUP BY qrels_id, topic
)
SELECT run.qrels_id, run.run_id, run.topic, run.v / iv.v AS value
FROM run JOIN iv ON iv.qrels_id = run.qrels_id AND iv.topic = run.topic
WHERE iv.v > 0

-- @metric NRBP
-- params: nd_ranking, alpha, beta
WITH ${nd_ranking}
SELECT h.qrels_id, h.run_id, h.topic,
       (1 - (1 - ${alpha}) * ${beta}) / any_value(st.S) * exact_sum(pow(${beta}, h.rank - 1) * pow(1 - ${alpha}, h.c)) AS value
FROM hit h JOIN st ON st.qrels_id = h.qrels_id AND st.topic = h.topic
GROUP BY h.qrels_id, h.run_id, h.topic

-- @metric nNRBP
-- reads: rl_topics
-- params: nd_ranking, nd_ideal, alpha, beta
WITH ${nd_ranking}, ${nd_ideal}, run AS (
    SELECT qrels_id, run_id, topic, exact_sum(pow(${beta}, rank - 1) * pow(1 - ${alpha}, c)) AS v
    FROM hit GROUP BY qrels_id, run_id, topic
), iv AS (
    SELECT qrels_id, topic, exact_sum(pow(${beta}, i - 1) * gain) AS v FROM ideal GROUP BY qrels_id, topic
)
SELECT t.qrels_id, t.run_id, t.topic,
       CASE WHEN iv.v > 0 THEN coalesce(run.v, 0) / iv.v WHEN t.num_ret = 0 THEN 0 END AS value
FROM rl_topics t
LEFT JOIN iv ON iv.qrels_id = t.qrels_id AND iv.topic = t.topic
LEFT JOIN run ON run.qrels_id = t.qrels_id AND run.run_id = t.run_id AND run.topic = t.topic

-- @metric P_IA
-- params: nd_ranking, k
WITH ${nd_ranking}
SELECT h.qrels_id, h.run_id, h.topic, count(*) / (${k} * any_value(st.S)) AS value
FROM hit h JOIN st ON st.qrels_id = h.qrels_id AND st.topic = h.topic
WHERE h.rank <= ${k}
GROUP BY h.qrels_id, h.run_id, h.topic

-- @metric StRecall
-- params: nd_ranking, k
WITH ${nd_ranking}
SELECT h.qrels_id, h.run_id, h.topic, count(DISTINCT h.subtopic) / any_value(st.S) AS value
FROM hit h JOIN st ON st.qrels_id = h.qrels_id AND st.topic = h.topic
WHERE h.rank <= ${k}
GROUP BY h.qrels_id, h.run_id, h.topic

-- @metric AP_IA
-- reads: rl_subtopics
-- params: nd_ranking
WITH ${nd_ranking}, rs AS (
    SELECT qrels_id, topic, subtopic, count(*) AS R FROM rl_subtopics WHERE isrel = 1
    GROUP BY qrels_id, topic, subtopic
), ap AS (
    SELECT h.qrels_id, h.run_id, h.topic, h.subtopic, exact_sum((h.c + 1) / h.rank) / any_value(rs.R) AS ap
    FROM hit h JOIN rs ON rs.qrels_id = h.qrels_id AND rs.topic = h.topic AND rs.subtopic = h.subtopic
    GROUP BY h.qrels_id, h.run_id, h.topic, h.subtopic
)
SELECT ap.qrels_id, ap.run_id, ap.topic, exact_sum(ap.ap) / any_value(st.S) AS value
FROM ap JOIN st ON st.qrels_id = ap.qrels_id AND st.topic = ap.topic
GROUP BY ap.qrels_id, ap.run_id, ap.topic

-- @fragment d_measures
-- reads: rl_retrieved, rl_subtopics
-- params: k
gg AS (
    SELECT qrels_id, topic, doc, exact_sum(prob * gain) AS gg FROM rl_subtopics WHERE doc IS NOT NULL
    GROUP BY qrels_id, topic, doc
), dcg AS (
    SELECT g.qrels_id, r.run_id, r.topic, exact_sum(g.gg / log2(r.rank + 1)) AS v
    FROM rl_retrieved r JOIN gg g ON g.topic = r.topic AND g.doc = r.doc
    WHERE r.rank <= ${k} AND g.gg > 0
    GROUP BY g.qrels_id, r.run_id, r.topic
), ig AS (
    SELECT qrels_id, topic, gg, row_number() OVER (PARTITION BY qrels_id, topic ORDER BY gg DESC, doc) AS i
    FROM gg WHERE gg > 0
), idcg AS (
    SELECT qrels_id, topic, exact_sum(gg / log2(i + 1)) AS v FROM ig WHERE i <= ${k} GROUP BY qrels_id, topic
), dndcg AS (
    SELECT d.qrels_id, d.run_id, d.topic, d.v / i.v AS v
    FROM dcg d JOIN idcg i ON i.qrels_id = d.qrels_id AND i.topic = d.topic
), nint AS (
    SELECT qrels_id, topic, count(DISTINCT subtopic) AS n FROM rl_subtopics GROUP BY qrels_id, topic
), covered AS (
    SELECT s.qrels_id, r.run_id, r.topic, count(DISTINCT s.subtopic) AS c
    FROM rl_retrieved r JOIN rl_subtopics s ON s.topic = r.topic AND s.doc = r.doc AND s.isrel = 1
    WHERE r.rank <= ${k}
    GROUP BY s.qrels_id, r.run_id, r.topic
), irec AS (
    SELECT c.qrels_id, c.run_id, c.topic, c.c / n.n AS v
    FROM covered c JOIN nint n ON n.qrels_id = c.qrels_id AND n.topic = c.topic
)

-- @metric I-rec
-- params: d_measures
WITH ${d_measures}
SELECT qrels_id, run_id, topic, v AS value FROM irec

-- @metric D-nDCG
-- params: d_measures
WITH ${d_measures}
SELECT qrels_id, run_id, topic, v AS value FROM dndcg

-- @metric Dsharp-nDCG
-- reads: rl_topics
-- params: d_measures, gamma
WITH ${d_measures}
SELECT t.qrels_id, t.run_id, t.topic, ${gamma} * coalesce(i.v, 0) + (1 - ${gamma}) * coalesce(d.v, 0) AS value
FROM rl_topics t
LEFT JOIN irec i ON i.qrels_id = t.qrels_id AND i.run_id = t.run_id AND i.topic = t.topic
LEFT JOIN dndcg d ON d.qrels_id = t.qrels_id AND d.run_id = t.run_id AND d.topic = t.topic
