-- Rank fusion of stored runs, for all topics at once (evalstore/fusion/compute.py renders it; the
-- expressions come from the registry, evalstore/fusion/registry.py, the values from temporary
-- tables, never from the text).
--
-- Placeholders:
--   ${inputs}       table (pos, run_id): the input runs, pos = 1.. in the order given
--   ${docs}         table (did, tid, topic, doc): the candidates, numbered by block `docs`
--   ${candidates}   table (cand, w_1 .. w_n, <one column per method parameter>): one fusion per
--                   cand (one for `fuse`, every grid point for `fuse --optimize`); w_i: run i's weight
--   ${rank_column}  rank (the evaluation rank: score descending, docno descending) or
--                   submitted_rank (the rank column as written)
--   ${depth}        the documents of each input run considered per topic (a huge number: all)
--   ${norm}, ${norm_missing}      the normalisation of a present document, and of a candidate the
--                                 run lacks (NULL: it stays missing)
--   ${run_columns}  per input run i: its normalised score s_i, position p_i, documents n_i and
--                   whether it counts the document (k_i), from block `run_columns`
--   ${values}       per input run i: its contribution v_i (the method's value, or its value for a
--                   candidate the run lacks; NULL: none)
--   ${params}       the method's parameter columns of the candidates table
--   ${combine}      the combination of v_1 .. v_n (and w_1 .. w_n) of a document
--   ${top}          the documents kept per topic in each fusion (a huge number: all)
--
-- Blocks: `docs` numbers the candidates once (did in docno order within a topic, so that did DESC
-- is docno DESC; tid per topic); `normalized` ends with one row per input run and candidate
-- (normalised score, position, counts), pivoted by `wide` into one row per candidate with every
-- run's columns; `fused` crosses them with the candidates table and ranks every fusion: no
-- grouping at the size of the grid, which matters when --optimize fuses 66 weightings at once.
-- Sums run in the order of the runs (compute.py's macros; list_sum of an ordered list for the
-- normalisation's sums): the same additions as ranx's, and the same double whatever the threads.

-- @block docs
WITH input_docs AS (
    SELECT DISTINCT r.topic, r.doc
    FROM run_row_data r JOIN ${inputs} i ON i.run_id = r.run_id
    WHERE r.${rank_column} <= ${depth}
)
SELECT topic, doc, row_number() OVER (ORDER BY topic, doc) AS did, dense_rank() OVER (ORDER BY topic) AS tid
FROM input_docs

-- @block normalized
inp AS (
    SELECT i.pos, d.tid, d.did, r.score, r.${rank_column} AS p
    FROM run_row_data r
    JOIN ${inputs} i ON i.run_id = r.run_id
    JOIN ${docs} d ON d.topic = r.topic AND d.doc = r.doc
    WHERE r.${rank_column} <= ${depth}
),
cands AS (SELECT tid, count(*) AS c FROM ${docs} GROUP BY tid),
stats AS (
    SELECT pos, tid, count(*) AS n, min(score) AS s_min, max(score) AS s_max,
           list_sum(list(score ORDER BY p, did DESC)) AS s_sum
    FROM inp GROUP BY pos, tid
),
spread AS (
    SELECT i.pos, i.tid,
           sqrt(list_sum(list((i.score - st.s_sum / st.n) ** 2 ORDER BY i.p, i.did DESC)) / any_value(st.n)) AS s_sd
    FROM inp i JOIN stats st ON st.pos = i.pos AND st.tid = i.tid
    GROUP BY i.pos, i.tid
),
grid AS (
    SELECT ri.pos, d.tid, d.did, i.score, i.p, i.did IS NOT NULL AS present, coalesce(st.n, 0) AS n, cs.c,
           st.s_min, st.s_max, st.s_sum, st.s_sum / st.n AS s_mean, sp.s_sd
    FROM ${inputs} ri
    CROSS JOIN ${docs} d
    JOIN cands cs ON cs.tid = d.tid
    LEFT JOIN inp i ON i.pos = ri.pos AND i.did = d.did
    LEFT JOIN stats st ON st.pos = ri.pos AND st.tid = d.tid
    LEFT JOIN spread sp ON sp.pos = ri.pos AND sp.tid = d.tid
),
normalized AS (
    SELECT pos, tid, did, present, n, c, p,
           CASE WHEN present THEN (${norm}) ELSE (${norm_missing}) END AS s,
           present OR (${norm_missing}) IS NOT NULL AS counted
    FROM grid
)

-- @block run_columns
max(s) FILTER (WHERE pos = ${i}) AS s_${i}, max(p) FILTER (WHERE pos = ${i}) AS p_${i},
max(n) FILTER (WHERE pos = ${i}) AS n_${i}, bool_or(counted) FILTER (WHERE pos = ${i}) AS k_${i}

-- @block fused
, wide AS (
    SELECT did, any_value(tid) AS tid, any_value(c) AS c, ${run_columns}
    FROM normalized GROUP BY did
),
valued AS (
    SELECT cd.cand, x.tid, x.did${params}, ${values}
    FROM wide x CROSS JOIN ${candidates} cd
),
scored AS (
    SELECT cand, tid, did, ${combine} AS score FROM valued
)
SELECT cand, tid, did, score,
       row_number() OVER (PARTITION BY cand, tid ORDER BY score DESC, did DESC) AS rank
FROM scored
QUALIFY rank <= ${top}
