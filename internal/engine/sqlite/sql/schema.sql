-- TPC-C tables (1.3.1) with the spec's names, columns in the generator's order (the
-- loader inserts tpcc.Table.Columns()). SQLite has no exact decimals: money is an
-- INTEGER of cents and the tax and discount rates INTEGERs of 1/10000 (scaled.go lists
-- these columns, and the loader converts the generator's decimals into them), so sums
-- stay exact. Timestamps are TEXT in UTC, 'YYYY-MM-DD HH:MM:SS': the generator's format
-- and datetime('now')'s. Plain rowid tables: keys and indexes come after the load
-- (indexes.sql).
CREATE TABLE warehouse (
  w_id       INTEGER NOT NULL,
  w_name     TEXT,
  w_street_1 TEXT,
  w_street_2 TEXT,
  w_city     TEXT,
  w_state    TEXT,
  w_zip      TEXT,
  w_tax      INTEGER, -- 1/10000
  w_ytd      INTEGER  -- cents
);

CREATE TABLE district (
  d_id        INTEGER NOT NULL,
  d_w_id      INTEGER NOT NULL,
  d_name      TEXT,
  d_street_1  TEXT,
  d_street_2  TEXT,
  d_city      TEXT,
  d_state     TEXT,
  d_zip       TEXT,
  d_tax       INTEGER, -- 1/10000
  d_ytd       INTEGER, -- cents
  d_next_o_id INTEGER
);

CREATE TABLE customer (
  c_id           INTEGER NOT NULL,
  c_d_id         INTEGER NOT NULL,
  c_w_id         INTEGER NOT NULL,
  c_first        TEXT,
  c_middle       TEXT,
  c_last         TEXT,
  c_street_1     TEXT,
  c_street_2     TEXT,
  c_city         TEXT,
  c_state        TEXT,
  c_zip          TEXT,
  c_phone        TEXT,
  c_since        TEXT,    -- UTC timestamp
  c_credit       TEXT,
  c_credit_lim   INTEGER, -- cents
  c_discount     INTEGER, -- 1/10000
  c_balance      INTEGER, -- cents
  c_ytd_payment  INTEGER, -- cents
  c_payment_cnt  INTEGER,
  c_delivery_cnt INTEGER,
  c_data         TEXT
);

CREATE TABLE history (
  h_c_id   INTEGER,
  h_c_d_id INTEGER,
  h_c_w_id INTEGER,
  h_d_id   INTEGER,
  h_w_id   INTEGER,
  h_date   TEXT,    -- UTC timestamp
  h_amount INTEGER, -- cents
  h_data   TEXT
);

CREATE TABLE new_order (
  no_o_id INTEGER NOT NULL,
  no_d_id INTEGER NOT NULL,
  no_w_id INTEGER NOT NULL
);

CREATE TABLE orders (
  o_id         INTEGER NOT NULL,
  o_d_id       INTEGER NOT NULL,
  o_w_id       INTEGER NOT NULL,
  o_c_id       INTEGER,
  o_entry_d    TEXT, -- UTC timestamp
  o_carrier_id INTEGER,
  o_ol_cnt     INTEGER,
  o_all_local  INTEGER
);

CREATE TABLE order_line (
  ol_o_id        INTEGER NOT NULL,
  ol_d_id        INTEGER NOT NULL,
  ol_w_id        INTEGER NOT NULL,
  ol_number      INTEGER NOT NULL,
  ol_i_id        INTEGER,
  ol_supply_w_id INTEGER,
  ol_delivery_d  TEXT,    -- UTC timestamp, NULL until delivered
  ol_quantity    INTEGER,
  ol_amount      INTEGER, -- cents
  ol_dist_info   TEXT
);

CREATE TABLE item (
  i_id    INTEGER NOT NULL,
  i_im_id INTEGER,
  i_name  TEXT,
  i_price INTEGER, -- cents
  i_data  TEXT
);

CREATE TABLE stock (
  s_i_id       INTEGER NOT NULL,
  s_w_id       INTEGER NOT NULL,
  s_quantity   INTEGER,
  s_dist_01    TEXT,
  s_dist_02    TEXT,
  s_dist_03    TEXT,
  s_dist_04    TEXT,
  s_dist_05    TEXT,
  s_dist_06    TEXT,
  s_dist_07    TEXT,
  s_dist_08    TEXT,
  s_dist_09    TEXT,
  s_dist_10    TEXT,
  s_ytd        INTEGER, -- a quantity, not money
  s_order_cnt  INTEGER,
  s_remote_cnt INTEGER,
  s_data       TEXT
);

-- What storbench recorded at build: one row (built_at is RFC 3339 text).
CREATE TABLE storbench_build (
  warehouses INTEGER NOT NULL,
  seed       INTEGER NOT NULL,
  c_load     INTEGER NOT NULL,
  built_at   TEXT NOT NULL,
  version    TEXT NOT NULL,
  build_schema TEXT NOT NULL -- engine.Schema.Name
);
