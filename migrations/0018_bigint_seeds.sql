-- evalstore schema, migration 18 (issue 39.10): the seeds of stored intervals and rank intervals
-- are BIGINT, as --seed is documented (0 .. 2^63 - 1); an INTEGER column refused --seed 2147483648
-- with a conversion error after the scores were stored. DuckDB cannot change the type of a column
-- of a primary key, so each table is made again with its rows (the views read them by name).
CREATE TABLE interval_data_v17 (
    run_id       INTEGER NOT NULL,
    qrels_id     INTEGER NOT NULL,
    metric       VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,            -- 't' or 'bootstrap'
    level        DOUBLE NOT NULL,             -- confidence level, e.g. 0.95
    trials       INTEGER NOT NULL,            -- bootstrap resamples B (0 for t)
    seed         BIGINT NOT NULL,             -- bootstrap seed (0 for t)
    scale        VARCHAR NOT NULL,            -- 'mean', or 'log' for a geometric mean
    lo           DOUBLE,                      -- NULL when undefined (fewer than 2 topics)
    hi           DOUBLE,
    n_topics     INTEGER NOT NULL,
    evaluated_at TIMESTAMP NOT NULL,          -- evaluations.computed_at of the scores used
    computed_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (run_id, qrels_id, metric, method, level, trials, seed)
);
INSERT INTO interval_data_v17 SELECT * FROM interval_data;
DROP TABLE interval_data;
ALTER TABLE interval_data_v17 RENAME TO interval_data;

CREATE TABLE rank_interval_data_v17 (
    run_id       INTEGER NOT NULL,
    qrels_id     INTEGER NOT NULL,
    metric       VARCHAR NOT NULL,
    method       VARCHAR NOT NULL,      -- 'bootstrap' or 't'
    level        DOUBLE NOT NULL,
    trials       INTEGER NOT NULL,      -- 0 for t
    seed         BIGINT NOT NULL,       -- 0 for t
    n_runs       INTEGER NOT NULL,
    rank         INTEGER NOT NULL,
    lo           INTEGER NOT NULL,
    hi           INTEGER NOT NULL,
    widened      BOOLEAN NOT NULL,      -- the percentile interval missed the rank and was widened to it
    evaluated_at TIMESTAMP NOT NULL,
    computed_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (run_id, qrels_id, metric, method, level, trials, seed)
);
INSERT INTO rank_interval_data_v17 SELECT * FROM rank_interval_data;
DROP TABLE rank_interval_data;
ALTER TABLE rank_interval_data_v17 RENAME TO rank_interval_data;
