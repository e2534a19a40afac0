-- evalstore schema, migration 3: meta-evaluation results (evalstore.meta, `evalstore meta ...`).
--
-- Every analysis run is one row of meta_runs: what was analysed (inputs: the qrels sets, metrics
-- as canonical names, runs, topics and a sha256 of each exact score matrix), how (params: number
-- of resamples, alpha, bins, test, adjustment, missing-topic policy, evaluation options) and with
-- which seed. The result tables carry its analysis_id. Rerunning an analysis with the same inputs,
-- parameters and seed reproduces its result rows exactly (only analysis_id and created_at differ).
-- Runs, qrels sets and metrics are stored by name: an analysis is a snapshot, it does not follow
-- later changes of the store.

CREATE SEQUENCE meta_analysis_id_seq START 1;

CREATE TABLE meta_runs (
    analysis_id       BIGINT PRIMARY KEY DEFAULT nextval('meta_analysis_id_seq'),
    kind              VARCHAR NOT NULL,   -- 'kendall', 'swap', 'discpower', 'tests', 'robustness'
    params            JSON NOT NULL,
    seed              BIGINT,             -- NULL for analyses without random draws (kendall)
    inputs            JSON NOT NULL,
    evalstore_version VARCHAR NOT NULL,
    created_at        TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Rank correlation between the system rankings of two score columns (000 Eq. 8-9).
CREATE TABLE meta_correlations (
    analysis_id BIGINT NOT NULL,
    col_a       INTEGER NOT NULL,         -- 0-based position of the column in the request
    col_b       INTEGER NOT NULL,
    qrels_a     VARCHAR NOT NULL,
    metric_a    VARCHAR NOT NULL,         -- canonical metric name
    qrels_b     VARCHAR NOT NULL,
    metric_b    VARCHAR NOT NULL,
    n_runs      INTEGER NOT NULL,
    tau         DOUBLE,                   -- tau_b when either ranking has ties, else tau_a
    tau_a       DOUBLE,                   -- 000 Eq. 8: 2(pos - neg) / (n(n-1))
    tau_b       DOUBLE,
    concordant  INTEGER NOT NULL,
    discordant  INTEGER NOT NULL,
    ties_a      INTEGER NOT NULL,         -- pairs tied only in column a
    ties_b      INTEGER NOT NULL,
    ties_both   INTEGER NOT NULL,
    z           DOUBLE,                   -- 000 Eq. 9
    p_value     DOUBLE,                   -- two-sided normal test on z
    spearman    DOUBLE
);

-- Swap method summary per column (000 Table 3) and swap rates per difference bin (000 Fig. 4).
CREATE TABLE meta_swap (
    analysis_id    BIGINT NOT NULL,
    qrels          VARCHAR NOT NULL,
    metric         VARCHAR NOT NULL,
    n_runs         INTEGER NOT NULL,
    n_topics       INTEGER NOT NULL,
    n_pairs        INTEGER NOT NULL,
    trials         INTEGER NOT NULL,      -- B
    max_rate       DOUBLE NOT NULL,       -- swap rate required (0.05)
    abs_diff       DOUBLE,                -- lowest bin edge from which every non-empty bin is <= max_rate
    abs_diff_first DOUBLE,                -- lowest bin edge whose own rate is <= max_rate
    max_diff       DOUBLE NOT NULL,       -- largest |D| over all pairs, trials and both topic sets
    rel_diff       DOUBLE,                -- abs_diff / max_diff
    share          DOUBLE                 -- comparisons with |D| >= abs_diff / all comparisons
);

CREATE TABLE meta_swap_bins (
    analysis_id BIGINT NOT NULL,
    qrels       VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,
    bin         INTEGER NOT NULL,         -- 0..20
    lo          DOUBLE NOT NULL,          -- bin = [lo, hi)
    hi          DOUBLE NOT NULL,          -- 'inf' for the last bin
    comparisons BIGINT NOT NULL,
    swaps       BIGINT NOT NULL,
    swap_rate   DOUBLE                    -- NULL for an empty bin
);

-- One row per (column, run pair, test): paired tests and the bootstrap ASL.
CREATE TABLE meta_pair_tests (
    analysis_id BIGINT NOT NULL,
    qrels       VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,
    run_a       VARCHAR NOT NULL,         -- the run with the higher (or equal) mean
    run_b       VARCHAR NOT NULL,
    mean_a      DOUBLE NOT NULL,
    mean_b      DOUBLE NOT NULL,
    diff        DOUBLE NOT NULL,          -- mean of per-topic differences a - b
    test        VARCHAR NOT NULL,         -- 'bootstrap', 't', 'wilcoxon', 'randomisation'
    statistic   DOUBLE,                   -- t(z); t; min(R+, R-); mean difference
    p_value     DOUBLE NOT NULL,          -- ASL for the bootstrap
    p_adjusted  DOUBLE NOT NULL,          -- = p_value unless an adjustment was asked for
    significant BOOLEAN NOT NULL          -- p_adjusted < alpha
);

-- Discriminative power per column and test (000 Table 4, 002 Table 3).
CREATE TABLE meta_discpower (
    analysis_id   BIGINT NOT NULL,
    qrels         VARCHAR NOT NULL,
    metric        VARCHAR NOT NULL,
    test          VARCHAR NOT NULL,
    alpha         DOUBLE NOT NULL,
    adjust        VARCHAR NOT NULL,
    n_runs        INTEGER NOT NULL,
    n_topics      INTEGER NOT NULL,
    n_pairs       INTEGER NOT NULL,
    n_significant INTEGER NOT NULL,
    disc_power    DOUBLE,                 -- n_significant / n_pairs
    est_diff      DOUBLE                  -- bootstrap only: 000 Fig. 7, two significant figures
);

-- Robustness to incomplete judgments (002 Secs. 6-7, 004 Sec. 5), one row per metric and qrels
-- set: the full qrels (fraction 1) and each subsample (fraction, trial).
CREATE TABLE meta_robustness_trials (
    analysis_id   BIGINT NOT NULL,
    metric        VARCHAR NOT NULL,       -- the metric as requested (canonical names in inputs)
    parent        VARCHAR NOT NULL,
    qrels         VARCHAR NOT NULL,
    fraction      DOUBLE NOT NULL,
    trial         INTEGER NOT NULL,
    n_runs        INTEGER NOT NULL,
    n_topics      INTEGER NOT NULL,
    tau           DOUBLE,                 -- ranking on this qrels vs on the full qrels
    n_pairs       INTEGER NOT NULL,
    n_significant INTEGER NOT NULL,
    c11           INTEGER NOT NULL,       -- 004 Table 2: H0 accepted with full and with this qrels
    c12           INTEGER NOT NULL,       -- accepted with full, rejected here (false negative)
    c21           INTEGER NOT NULL,       -- rejected with full, accepted here (false positive)
    c22           INTEGER NOT NULL        -- rejected with both
);

CREATE VIEW meta_robustness AS
    SELECT analysis_id, metric, parent, fraction,
           count(*) AS n_trials,
           avg(tau) AS tau_mean, min(tau) AS tau_min, max(tau) AS tau_max,
           avg(n_significant::DOUBLE / nullif(n_pairs, 0)) AS disc_power,
           sum(c11) AS c11, sum(c12) AS c12, sum(c21) AS c21, sum(c22) AS c22,
           (sum(c11) + sum(c22))::DOUBLE / nullif(sum(c11) + sum(c12) + sum(c21) + sum(c22), 0) AS accuracy,
           sqrt((sum(c11)::DOUBLE / nullif(sum(c11) + sum(c12), 0))
                * (sum(c11)::DOUBLE / nullif(sum(c11) + sum(c21), 0))) AS g_mean,
           sum(c21) AS false_pos,
           sum(c12) AS false_neg
    FROM meta_robustness_trials
    GROUP BY analysis_id, metric, parent, fraction;

-- Knee of the tau and accuracy curves (004 Tables 3 and 5).
CREATE TABLE meta_knees (
    analysis_id BIGINT NOT NULL,
    metric      VARCHAR NOT NULL,
    criterion   VARCHAR NOT NULL,         -- 'tau' or 'accuracy'
    threshold   DOUBLE NOT NULL,          -- 0.9
    knee        DOUBLE,                   -- lowest fraction from which the curve stays > threshold
    knee_first  DOUBLE                    -- lowest fraction whose value is > threshold
);
