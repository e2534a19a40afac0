-- evalstore schema, migration 15 (issue 33): comparing two judges (evalstore agree) and rank
-- intervals on leaderboards (--rank-ci).
--
-- 1. An agreement analysis is a meta_runs row (kind 'agree'; params: the reference and candidate
--    qrels sets, --rel, the test; inputs: the score matrices of the ranking agreement). Its rows:

-- Label agreement over the (topic, doc) pairs judged (grade >= 0) in both sets: one row for all
-- topics together (topic NULL) and one per topic; evalstore/stats/agreement.py defines the values.
CREATE TABLE meta_agree_labels (
    analysis_id     BIGINT NOT NULL,
    topic           VARCHAR,            -- NULL: all topics together
    n_common        BIGINT NOT NULL,    -- pairs judged in both sets
    n_ref_only      BIGINT NOT NULL,    -- judged in the reference set only
    n_cand_only     BIGINT NOT NULL,    -- judged in the candidate set only
    agreement       DOUBLE,             -- share of common pairs with the same grade
    kappa           DOUBLE,             -- Cohen's kappa (scikit-learn's cohen_kappa_score)
    kappa_linear    DOUBLE,             -- linearly weighted
    kappa_quadratic DOUBLE,             -- quadratically weighted
    kappa_binary    DOUBLE,             -- on grade >= rel in both sets
    alpha_nominal   DOUBLE,             -- Krippendorff's alpha (the krippendorff package)
    alpha_ordinal   DOUBLE,
    ref_relevant    BIGINT NOT NULL,    -- common pairs with grade >= rel in the reference set
    cand_relevant   BIGINT NOT NULL     -- ... in the candidate set
);

-- The confusion matrix of grades over the common pairs (zero cells left out), overall and per topic.
CREATE TABLE meta_agree_confusion (
    analysis_id BIGINT NOT NULL,
    topic       VARCHAR,                -- NULL: all topics together
    ref_grade   INTEGER NOT NULL,
    cand_grade  INTEGER NOT NULL,
    n           BIGINT NOT NULL
);

-- Ranking agreement per metric over the runs evaluated under both sets.
CREATE TABLE meta_agree_ranking (
    analysis_id     BIGINT NOT NULL,
    metric          VARCHAR NOT NULL,   -- as requested (canonical names in meta_runs.inputs)
    n_runs          INTEGER NOT NULL,
    n_topics        INTEGER NOT NULL,   -- topics both leaderboards average over
    tau_b           DOUBLE,             -- Kendall's tau-b (scipy.stats.kendalltau)
    spearman        DOUBLE,             -- Spearman's rho (scipy.stats.spearmanr)
    tau_ap          DOUBLE,             -- tau_AP of the candidate ranking against the reference's
    tau_ap_sym      DOUBLE,             -- Urbano & Marrero's symmetric tau_AP,b
    max_rank_change INTEGER NOT NULL,   -- largest |rank under ref - rank under cand|
    best_ref        VARCHAR,            -- the best run under each set
    best_cand       VARCHAR,
    test            VARCHAR NOT NULL,   -- paired test of each run against best_ref ('t', 'wilcoxon', ...)
    alpha           DOUBLE NOT NULL,
    n_flips         INTEGER NOT NULL    -- runs whose significance against best_ref differs between the sets
);

-- One row per (metric, run): the run under both sets.
CREATE TABLE meta_agree_runs (
    analysis_id BIGINT NOT NULL,
    metric      VARCHAR NOT NULL,
    run         VARCHAR NOT NULL,
    mean_ref    DOUBLE,
    mean_cand   DOUBLE,
    rank_ref    INTEGER NOT NULL,       -- competition rank (1 = best, ties share the best rank)
    rank_cand   INTEGER NOT NULL,
    p_ref       DOUBLE,                 -- p-value of the run against best_ref under each set (NULL for best_ref)
    p_cand      DOUBLE,
    sig_ref     BOOLEAN,
    sig_cand    BOOLEAN,
    flip        BOOLEAN NOT NULL        -- sig_ref <> sig_cand
);

-- 2. Rank intervals of stored evaluations (eval / export leaderboard --rank-ci): each run's rank
--    among the runs ranked together (n_runs of them) by the mean of a metric on a qrels set, with
--    its interval (method 'bootstrap': the paired bootstrap over topics with trials and seed;
--    't': from paired t intervals; evalstore/stats/rank_intervals.py). One ranking per (qrels,
--    metric, method, level, trials, seed): storing one replaces the previous. evaluated_at ties a
--    row to the evaluation it ranked (as interval_data's).
CREATE TABLE rank_interval_data (
    run_id       INTEGER NOT NULL,
    qrels_id     INTEGER NOT NULL,
    metric       VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,      -- 'bootstrap' or 't'
    level        DOUBLE NOT NULL,
    trials       INTEGER NOT NULL,      -- 0 for t
    seed         INTEGER NOT NULL,      -- 0 for t
    n_runs       INTEGER NOT NULL,
    rank         INTEGER NOT NULL,
    lo           INTEGER NOT NULL,
    hi           INTEGER NOT NULL,
    widened      BOOLEAN NOT NULL,      -- the percentile interval missed the rank and was widened to it
    evaluated_at TIMESTAMP NOT NULL,
    computed_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (run_id, qrels_id, metric, method, level, trials, seed)
);

-- The stored rank intervals whose rankings read only current evaluations, by name.
CREATE VIEW rank_intervals AS
    WITH d AS (
        SELECT d.*, bool_and(d.evaluated_at = e.computed_at)
                        OVER (PARTITION BY d.qrels_id, d.metric, d.method, d.level, d.trials, d.seed) AS current
        FROM rank_interval_data d
        JOIN evaluations e ON e.run_id = d.run_id AND e.qrels_id = d.qrels_id AND e.metric = d.metric
    )
    SELECT r.name AS run, q.name AS qrels, d.metric, d.method, d.level,
           CASE WHEN d.method = 'bootstrap' THEN d.trials END AS trials,
           CASE WHEN d.method = 'bootstrap' THEN d.seed END AS seed,
           d.n_runs, d.rank, d.lo AS rank_lo, d.hi AS rank_hi, d.widened, d.computed_at
    FROM d JOIN run_meta r ON r.run_id = d.run_id JOIN qrels_meta q ON q.qrels_id = d.qrels_id
    WHERE d.current;

-- 3. The leaderboard gains rank (1 + the runs with a higher mean on the same qrels set and metric)
--    and, where a stored ranking covers every run of that board and reads its current scores, the
--    most recent one's rank_lo, rank_hi and rank_method. The view of the previous migration keeps
--    its columns and order under the name leaderboard_means; the new columns come after them.
ALTER VIEW leaderboard RENAME TO leaderboard_means;
CREATE VIEW leaderboard AS
    WITH lb AS (
        SELECT m.*,
               rank() OVER (PARTITION BY m.qrels, m.metric ORDER BY m.mean DESC NULLS LAST) AS rank,
               count(*) OVER (PARTITION BY m.qrels, m.metric) AS n_board
        FROM leaderboard_means m
    ), ranking AS (
        SELECT ri.*, count(*) OVER (PARTITION BY ri.qrels, ri.metric, ri.method, ri.level, ri.trials, ri.seed) AS n_rows
        FROM rank_intervals ri
    ), chosen AS (
        SELECT ranking.* FROM ranking
        JOIN (SELECT DISTINCT qrels, metric, n_board FROM lb) b
          ON b.qrels = ranking.qrels AND b.metric = ranking.metric AND b.n_board = ranking.n_rows
                                     AND ranking.n_runs = ranking.n_rows
        QUALIFY dense_rank() OVER (PARTITION BY ranking.qrels, ranking.metric
                                   ORDER BY ranking.computed_at DESC, ranking.method, ranking.level,
                                            ranking.trials NULLS FIRST, ranking.seed NULLS FIRST) = 1
    )
    SELECT lb.* EXCLUDE (n_board), c.rank_lo, c.rank_hi, c.method AS rank_method
    FROM lb LEFT JOIN chosen c ON c.run = lb.run AND c.qrels = lb.qrels AND c.metric = lb.metric;
