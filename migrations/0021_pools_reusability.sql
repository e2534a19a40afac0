-- evalstore schema, migration 21 (issue 41): judgment pools built from the stored runs, leave-out
-- subsamples (the qrels without one group's unique contributions) and the reusability analysis.
--
-- 1. A pool (evalstore pool; evalstore/pool/) is the set of (topic, doc) an assessor is given,
--    made from stored runs by a strategy (depth: the union of every run's top K; rbp: the K docs
--    of a topic with the highest sum or max over runs of (1-p) p^(rank-1); rrf: the K with the
--    highest sum of 1/(k + rank)), optionally without the docs a qrels set already judges.
--    pool_meta holds its recipe (params: p, the aggregate, k, the ranks read, the excluded qrels
--    set and the runs with the sha256 each had), pool_data its documents, pool_contributions which
--    run brought each document at what rank (depth: the runs with it in their top K; rbp, rrf:
--    every run that retrieved it). A dropped run's contributions go with it (drop.py clears every
--    table with a run_id column); the pool keeps its documents.
CREATE SEQUENCE pool_id_seq START 1;
CREATE TABLE pool_meta (
    pool_id     INTEGER PRIMARY KEY DEFAULT nextval('pool_id_seq'),
    name        VARCHAR NOT NULL UNIQUE,
    strategy    VARCHAR NOT NULL,    -- 'depth', 'rbp', 'rrf'
    depth       INTEGER NOT NULL,    -- K
    params      JSON NOT NULL,
    description VARCHAR NOT NULL,    -- "depth-10 pool of 37 runs", ...
    n_topics    INTEGER NOT NULL,
    n_docs      BIGINT NOT NULL,
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE pool_data (
    pool_id   INTEGER NOT NULL,
    topic     VARCHAR NOT NULL,
    doc       VARCHAR NOT NULL,
    value     DOUBLE,                -- rbp, rrf: the pooled weight the document was chosen by; depth: NULL
    n_runs    INTEGER NOT NULL,      -- the runs that contributed it
    best_rank BIGINT NOT NULL        -- the best rank a contributing run gave it
);

CREATE TABLE pool_contributions (
    pool_id INTEGER NOT NULL,
    run_id  INTEGER NOT NULL,
    topic   VARCHAR NOT NULL,
    doc     VARCHAR NOT NULL,
    rank    BIGINT NOT NULL          -- the rank the pool read (evaluation or submitted)
);

-- one row per pooled document
CREATE VIEW pools AS
    SELECT m.name AS pool, d.topic, d.doc
    FROM pool_data d JOIN pool_meta m USING (pool_id);

-- the pools with their recipes
CREATE VIEW pool_sets AS
    SELECT name, strategy, depth, description, n_topics, n_docs, params, created_at
    FROM pool_meta;

-- which run brought which pooled document at what rank
CREATE VIEW pool_runs AS
    SELECT m.name AS pool, r.name AS run, c.topic, c.doc, c.rank
    FROM pool_contributions c
    JOIN pool_meta m USING (pool_id)
    JOIN run_meta r USING (run_id);

-- 2. Leave-out subsamples (evalstore meta reusability): the parent qrels without every judged
--    document that only one group's runs (or one run) brought into the depth-K pool of the runs.
--    Methods 'leave_one_group_out' (names <parent>@logo<K>:<group>) and 'leave_one_run_out'
--    (<parent>@loro<K>:<run>); fraction, seed, trial, min_rel and min_nonrel belong to
--    Buckley-Voorhees subsamples and are NULL for them. left_out: the group (or run) left out;
--    pool_depth: K; pool_runs: the pool's runs, each with its group and sha256.
ALTER TABLE subsample_meta ALTER COLUMN fraction DROP NOT NULL;
ALTER TABLE subsample_meta ALTER COLUMN seed DROP NOT NULL;
ALTER TABLE subsample_meta ALTER COLUMN trial DROP NOT NULL;
ALTER TABLE subsample_meta ALTER COLUMN min_rel DROP NOT NULL;
ALTER TABLE subsample_meta ALTER COLUMN min_nonrel DROP NOT NULL;
ALTER TABLE subsample_meta ADD COLUMN left_out VARCHAR;
ALTER TABLE subsample_meta ADD COLUMN pool_depth INTEGER;
ALTER TABLE subsample_meta ADD COLUMN pool_runs JSON;

-- subsamples: the columns of migration 2 with left_out and pool_depth before the sizes
DROP VIEW subsamples;
CREATE VIEW subsamples AS
    SELECT q.name, p.name AS parent, s.method, s.fraction, s.seed, s.trial, s.min_rel, s.min_nonrel,
           s.left_out, s.pool_depth,
           q.n_topics, q.n_judged,
           (SELECT count(*) FROM qrels_data d WHERE d.qrels_id = s.qrels_id AND d.grade >= 1) AS n_rel,
           (SELECT count(*) FROM qrels_data d WHERE d.qrels_id = s.qrels_id AND d.grade = 0) AS n_nonrel,
           s.created_at
    FROM subsample_meta s
    JOIN qrels_meta q ON q.qrels_id = s.qrels_id
    JOIN qrels_meta p ON p.qrels_id = s.parent_id;

-- 3. The reusability analysis (meta_runs kind 'reusability'; params: the parent qrels set, the
--    depth, how runs were grouped). Per metric: how the leaderboard changes when every run is
--    scored on the qrels without its own group's unique contributions (Zobel, SIGIR 1998; Buckley
--    et al., IRJ 2007).
CREATE TABLE meta_reusability (
    analysis_id       BIGINT NOT NULL,
    metric            VARCHAR NOT NULL,   -- as requested (canonical names in meta_runs.inputs)
    n_runs            INTEGER NOT NULL,
    n_topics          INTEGER NOT NULL,
    tau               DOUBLE,             -- Kendall's tau-b between the full and the leave-out leaderboards
    tau_ap            DOUBLE,             -- tau_AP of the leave-out leaderboard against the full one
    mean_change       DOUBLE,             -- mean over runs of mean_reduced - mean_full
    max_drop          DOUBLE,             -- the largest mean_full - mean_reduced
    max_drop_run      VARCHAR,
    max_rank_drop     INTEGER NOT NULL,   -- the largest rank_reduced - rank_full (0: no run falls)
    max_rank_drop_run VARCHAR,
    n_rank_changes    INTEGER NOT NULL    -- runs whose rank differs
);

-- one row per (metric, run)
CREATE TABLE meta_reusability_runs (
    analysis_id  BIGINT NOT NULL,
    metric       VARCHAR NOT NULL,
    run          VARCHAR NOT NULL,
    left_out     VARCHAR NOT NULL,       -- the run's group (leave-one-run-out: the run)
    qrels        VARCHAR NOT NULL,       -- the leave-out subsample the run was scored on
    mean_full    DOUBLE,
    mean_reduced DOUBLE,
    rank_full    INTEGER NOT NULL,       -- competition rank among the runs, full qrels
    rank_reduced INTEGER NOT NULL,       -- ... every run scored without its group's unique documents
    rank_alone   INTEGER NOT NULL        -- mean_reduced among the other runs' full means: where the run
                                         -- would stand on the full leaderboard had its group not taken part
);

-- one row per group left out
CREATE TABLE meta_reusability_groups (
    analysis_id        BIGINT NOT NULL,
    left_out           VARCHAR NOT NULL,
    qrels              VARCHAR NOT NULL,  -- the leave-out subsample
    n_runs             INTEGER NOT NULL,
    n_unique           BIGINT NOT NULL,   -- pooled (topic, doc) only this group's runs brought
    n_removed          BIGINT NOT NULL,   -- ... of them judged (grade >= 0): removed from the qrels
    n_removed_relevant BIGINT NOT NULL    -- ... of those relevant (grade >= 1)
);
