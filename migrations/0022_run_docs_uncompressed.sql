-- evalstore schema, migration 22: run_row_data.doc is stored without compression.
--
-- DuckDB's own choice for the docnos of a run (DICT_FSST: a dictionary, its strings FSST-coded) costs
-- about 260 ns per row when rows are written, half of the whole write of a run's rows (measured on
-- TREC DL 2020's runs, one thread: 485 ns per row with it, 275 without); most docnos of a run are
-- distinct, so the dictionary saves little and FSST about 5 bytes a row (the table's rows take
-- 21 MB per million rows instead of 16). Reading them back is no slower (no decoding).
-- The table is rebuilt with the same columns, in the same order, its rows copied as they are.
CREATE TABLE run_row_data_0022 (
    run_id         INTEGER NOT NULL,
    topic          VARCHAR NOT NULL,
    doc            VARCHAR USING COMPRESSION uncompressed NOT NULL,
    rank           INTEGER NOT NULL,
    line_no        BIGINT  NOT NULL,
    submitted_rank BIGINT,
    score          DOUBLE
);
INSERT INTO run_row_data_0022 SELECT run_id, topic, doc, rank, line_no, submitted_rank, score FROM run_row_data;
DROP TABLE run_row_data;
ALTER TABLE run_row_data_0022 RENAME TO run_row_data;
