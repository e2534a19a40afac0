-- evalstore schema, migration 11: results of `evalstore repro` (Breuer et al., SIGIR 2020, as
-- repro_eval 0.5.0 computes them) and `evalstore design` (Sakai, topic set size design, IRJ 2016).
-- Each analysis is a meta_runs row (kind 'repro' or 'design'); docs/reproducibility.md defines the values.

-- One row per value of a reproduction: measure 'arp' (mean score; side = the run's role:
-- baseline, advanced, rep_baseline, rep_advanced), 'ktu' and 'rbo' (side baseline or advanced,
-- no metric), 'rmse', 'nrmse', 'p_value' (side baseline or advanced, per metric), 'er' and 'dri'
-- (the pair: no side, per metric).
CREATE TABLE meta_repro (
    analysis_id BIGINT NOT NULL,
    measure     VARCHAR NOT NULL,
    side        VARCHAR,
    metric      VARCHAR,              -- as requested (canonical names in meta_runs.inputs)
    value       DOUBLE,               -- NULL when undefined (a zero denominator)
    n_topics    INTEGER               -- topics averaged over (arp, ktu, rbo, rmse, nrmse)
);

-- KTU and RBO of every topic of a reproduction.
CREATE TABLE meta_repro_topics (
    analysis_id BIGINT NOT NULL,
    measure     VARCHAR NOT NULL,     -- 'ktu' or 'rbo'
    side        VARCHAR NOT NULL,     -- 'baseline' or 'advanced'
    topic       VARCHAR NOT NULL,
    value       DOUBLE                -- NULL: KTU of fewer than 2 documents
);

-- Topic set size design: one row per (qrels, metric) of an analysis.
CREATE TABLE meta_design (
    analysis_id      BIGINT NOT NULL,
    qrels            VARCHAR NOT NULL,
    metric           VARCHAR NOT NULL,
    test             VARCHAR NOT NULL,   -- 't' (paired t-test), 'anova' (one-way ANOVA), 'ci' (CI width)
    alpha            DOUBLE NOT NULL,
    beta             DOUBLE,             -- NULL for 'ci'
    min_diff         DOUBLE NOT NULL,    -- minD (t), the minimum detectable range (anova), the width cap (ci)
    systems          INTEGER,            -- m (anova)
    n_runs           INTEGER NOT NULL,   -- runs of the score matrix V_E was estimated from
    n_topics         INTEGER NOT NULL,   -- its topics (the set's current size)
    variance         DOUBLE NOT NULL,    -- V_E, residual variance of the two-way ANOVA without replication
    sigma2           DOUBLE NOT NULL,    -- the variance the design uses: 2 V_E (t, ci) or V_E (anova)
    n                INTEGER NOT NULL,   -- topics required, exact (noncentral t / F; expected CI width)
    n_approx         INTEGER NOT NULL,   -- Sakai's closed-form approximation
    achieved         DOUBLE NOT NULL,    -- power at n (t, anova) or expected CI width at n (ci)
    min_diff_current DOUBLE,             -- reverse: minD detectable (t, anova) / expected width (ci) with n_topics
    power_current    DOUBLE              -- power with n_topics at min_diff (t, anova)
);
