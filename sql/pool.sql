-- Judgment pools from stored runs, for all runs and topics in one pass (evalstore/pool/build.py
-- renders it; docs/pools.md defines the strategies). TrecPoolMaker.make_pool of trectools 0.0.50
-- defines the three strategies; evalstore reads the ranks it is told to (the evaluation rank by
-- default) and breaks ties its own way (below).
--
-- Placeholders (the text gets only these expressions, made from checked values; the values come
-- as bound parameters: $depth, $p, $k, $excluded, $top):
--   ${runs}         table (run_id): the runs pooled
--   ${rank_column}  rank (the evaluation rank: score descending, docno descending, as trec_eval)
--                   or submitted_rank (the rank column as written)
--   ${rows}         the temporary table of block `rows` (the candidates)
--   ${read}         the rows each run offers: `${rank_column} <= $depth` (depth) or TRUE (rbp,
--                   rrf: every retrieved document has a weight)
--   ${value}        a document's pooled weight over its rows: NULL (depth); the sum (correctly
--                   rounded, so the same double on any number of threads) or the max of
--                   (1-$p) * $p^(rank-1) (rbp); the sum of 1 / ($k + rank) (rrf)
--   $top            how many documents of a topic are pooled: all (depth) or $depth (rbp, rrf), by
--                   value, ties by docno descending (trec_eval's order of tied scores)
--
-- Blocks: `rows` the candidate rows (a run's rows it offers, without the documents the qrels set
-- $excluded judges, grade >= 0; $excluded = -1: none); `pooled` one row per pooled document with
-- its value, the runs that offered it and its best rank; `contributions` the rows of the pooled
-- documents (which run brought each at what rank).

-- @block rows
SELECT r.run_id, r.topic, r.doc, r.${rank_column} AS rank
FROM run_row_data r
JOIN ${runs} p ON p.run_id = r.run_id
WHERE ${read}
  AND NOT EXISTS (SELECT 1 FROM qrels_data q
                  WHERE q.qrels_id = $excluded AND q.grade >= 0 AND q.topic = r.topic AND q.doc = r.doc)

-- @block pooled
WITH valued AS (
    SELECT topic, doc, ${value} AS value, count(*) AS n_runs, min(rank) AS best_rank
    FROM ${rows}
    GROUP BY topic, doc
)
SELECT topic, doc, value, n_runs, best_rank
FROM valued
QUALIFY row_number() OVER (PARTITION BY topic ORDER BY value DESC, doc DESC) <= $top

-- @block contributions
SELECT c.run_id, c.topic, c.doc, c.rank
FROM ${rows} c
SEMI JOIN ${pooled} d ON d.topic = c.topic AND d.doc = c.doc

-- @block unique
-- The documents of the depth-$depth pool of the runs of ${groups} (run_id, pos: the run's group)
-- that one group alone brought (no run of another group has them in its top $depth), with that
-- group; the evaluation rank (score descending, docno descending) decides the top $depth.
SELECT r.topic, r.doc, min(g.pos) AS pos
FROM run_row_data r
JOIN ${groups} g ON g.run_id = r.run_id
WHERE r.rank <= $depth
GROUP BY r.topic, r.doc
HAVING count(DISTINCT g.pos) = 1

-- @block leave_out
-- For each group (pos 0 .. $n_groups - 1), the judgments of the qrels set $parent without the
-- judged documents (grade >= 0) of ${unique} that the group alone brought; rows with a negative
-- grade (pooled but unjudged) are kept.
SELECT g.pos, q.topic, q.doc, q.grade
FROM qrels_data q
CROSS JOIN (SELECT unnest(range($n_groups)) AS pos) g
WHERE q.qrels_id = $parent
  AND NOT (q.grade >= 0 AND EXISTS (SELECT 1 FROM ${unique} u
                                    WHERE u.pos = g.pos AND u.topic = q.topic AND u.doc = q.doc))

-- @block coverage_runs
-- Per run of ${runs}: the share of its top $k on the pool's topics that the pool $pool holds
-- (averaged over the topics it retrieved for), the pooled documents it brought, those it alone
-- brought, and how many of those the qrels set $qrels judges (grade >= 0) and finds relevant
-- (grade >= $rel); $qrels = -1: none.
WITH pool_topics AS (
    SELECT DISTINCT topic FROM pool_data WHERE pool_id = $pool
), top AS (
    SELECT r.run_id, r.topic, r.doc
    FROM run_row_data r JOIN ${runs} x ON x.run_id = r.run_id
    WHERE r.rank <= $k AND r.topic IN (SELECT topic FROM pool_topics)
), per_topic AS (
    SELECT t.run_id, t.topic, count(d.doc) / count(*) AS share
    FROM top t LEFT JOIN pool_data d ON d.pool_id = $pool AND d.topic = t.topic AND d.doc = t.doc
    GROUP BY t.run_id, t.topic
), pooled AS (
    SELECT run_id, avg(share) AS pooled_at_k, count(*) AS n_topics FROM per_topic GROUP BY run_id
), brought AS (
    SELECT run_id, count(*) AS n_contributed FROM pool_contributions WHERE pool_id = $pool GROUP BY run_id
), alone AS (
    SELECT topic, doc, min(run_id) AS run_id FROM pool_contributions WHERE pool_id = $pool
    GROUP BY topic, doc HAVING count(DISTINCT run_id) = 1
), unique_docs AS (
    SELECT a.run_id, count(*) AS n_unique,
           count(q.doc) FILTER (WHERE q.grade >= 0) AS n_unique_judged,
           count(q.doc) FILTER (WHERE q.grade >= $rel) AS n_unique_relevant
    FROM alone a LEFT JOIN qrels_data q ON q.qrels_id = $qrels AND q.topic = a.topic AND q.doc = a.doc
    GROUP BY a.run_id
)
SELECT m.name AS run, coalesce(b.n_contributed, 0) AS n_contributed, coalesce(u.n_unique, 0) AS n_unique,
       coalesce(u.n_unique_judged, 0) AS n_unique_judged, coalesce(u.n_unique_relevant, 0) AS n_unique_relevant,
       p.pooled_at_k, coalesce(p.n_topics, 0) AS n_topics
FROM ${runs} x
JOIN run_meta m ON m.run_id = x.run_id
LEFT JOIN brought b ON b.run_id = x.run_id
LEFT JOIN unique_docs u ON u.run_id = x.run_id
LEFT JOIN pooled p ON p.run_id = x.run_id
ORDER BY m.name

-- @block coverage_topics
-- Per topic of the pool $pool: its documents, the runs that brought them, and how many of them
-- the qrels set $qrels judges (grade >= 0) and finds relevant (grade >= $rel).
SELECT d.topic, count(*) AS n_docs,
       (SELECT count(DISTINCT c.run_id) FROM pool_contributions c WHERE c.pool_id = $pool AND c.topic = d.topic)
           AS n_runs,
       count(q.doc) FILTER (WHERE q.grade >= 0) AS n_judged,
       count(q.doc) FILTER (WHERE q.grade >= $rel) AS n_relevant
FROM pool_data d
LEFT JOIN qrels_data q ON q.qrels_id = $qrels AND q.topic = d.topic AND q.doc = d.doc
WHERE d.pool_id = $pool
GROUP BY d.topic
ORDER BY d.topic
