-- TPC-C tables (1.3.1) with the spec's names and types, columns in the generator's
-- order (the loader names tpcc.Table.Columns()). Money and rates are exact DECIMALs;
-- timestamps DATETIME in UTC (the generator's 'YYYY-MM-DD HH:MM:SS', and NOW() with
-- the session's time_zone '+00:00'). InnoDB, utf8mb4 with binary collation (byte
-- order, as SQLite and PostgreSQL's C collation sort c_first).
--
-- The primary keys are here, not after the load: InnoDB clusters a table on its
-- primary key, so adding one later rebuilds the whole table, and the generator's rows
-- come in key order anyway. Measured at 2 and 4 warehouses, loading into keyed tables
-- and adding only the secondary indexes afterwards (indexes.sql) halves the build.

-- What storbench recorded at build: one row (built_at is RFC 3339 text), written
-- last. Created first, so that a build interrupted while it creates the tables (each
-- CREATE commits on MariaDB) reads as storbench's unfinished build.
CREATE TABLE storbench_build (
  warehouses INT NOT NULL,
  seed       BIGINT NOT NULL,
  c_load     INT NOT NULL,
  built_at   VARCHAR(40) NOT NULL,
  version    VARCHAR(255) NOT NULL,
  build_schema VARCHAR(40) NOT NULL -- engine.Schema.Name
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE warehouse (
  w_id       INT NOT NULL,
  w_name     VARCHAR(10),
  w_street_1 VARCHAR(20),
  w_street_2 VARCHAR(20),
  w_city     VARCHAR(20),
  w_state    CHAR(2),
  w_zip      CHAR(9),
  w_tax      DECIMAL(4,4),
  w_ytd      DECIMAL(12,2),
  PRIMARY KEY (w_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE district (
  d_id        SMALLINT NOT NULL,
  d_w_id      INT NOT NULL,
  d_name      VARCHAR(10),
  d_street_1  VARCHAR(20),
  d_street_2  VARCHAR(20),
  d_city      VARCHAR(20),
  d_state     CHAR(2),
  d_zip       CHAR(9),
  d_tax       DECIMAL(4,4),
  d_ytd       DECIMAL(12,2),
  d_next_o_id INT,
  PRIMARY KEY (d_w_id, d_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE customer (
  c_id           INT NOT NULL,
  c_d_id         SMALLINT NOT NULL,
  c_w_id         INT NOT NULL,
  c_first        VARCHAR(16),
  c_middle       CHAR(2),
  c_last         VARCHAR(16),
  c_street_1     VARCHAR(20),
  c_street_2     VARCHAR(20),
  c_city         VARCHAR(20),
  c_state        CHAR(2),
  c_zip          CHAR(9),
  c_phone        CHAR(16),
  c_since        DATETIME,
  c_credit       CHAR(2),
  c_credit_lim   DECIMAL(12,2),
  c_discount     DECIMAL(4,4),
  c_balance      DECIMAL(12,2),
  c_ytd_payment  DECIMAL(12,2),
  c_payment_cnt  INT,
  c_delivery_cnt INT,
  c_data         VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- No key, as in the spec: InnoDB clusters it on a hidden row id.
CREATE TABLE history (
  h_c_id   INT,
  h_c_d_id SMALLINT,
  h_c_w_id INT,
  h_d_id   SMALLINT,
  h_w_id   INT,
  h_date   DATETIME,
  h_amount DECIMAL(6,2),
  h_data   VARCHAR(24)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE new_order (
  no_o_id INT NOT NULL,
  no_d_id SMALLINT NOT NULL,
  no_w_id INT NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE orders (
  o_id         INT NOT NULL,
  o_d_id       SMALLINT NOT NULL,
  o_w_id       INT NOT NULL,
  o_c_id       INT,
  o_entry_d    DATETIME,
  o_carrier_id SMALLINT,
  o_ol_cnt     SMALLINT,
  o_all_local  SMALLINT,
  PRIMARY KEY (o_w_id, o_d_id, o_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE order_line (
  ol_o_id        INT NOT NULL,
  ol_d_id        SMALLINT NOT NULL,
  ol_w_id        INT NOT NULL,
  ol_number      SMALLINT NOT NULL,
  ol_i_id        INT,
  ol_supply_w_id INT,
  ol_delivery_d  DATETIME,
  ol_quantity    SMALLINT,
  ol_amount      DECIMAL(6,2),
  ol_dist_info   CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE item (
  i_id    INT NOT NULL,
  i_im_id INT,
  i_name  VARCHAR(24),
  i_price DECIMAL(5,2),
  i_data  VARCHAR(50),
  PRIMARY KEY (i_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE stock (
  s_i_id       INT NOT NULL,
  s_w_id       INT NOT NULL,
  s_quantity   SMALLINT,
  s_dist_01    CHAR(24),
  s_dist_02    CHAR(24),
  s_dist_03    CHAR(24),
  s_dist_04    CHAR(24),
  s_dist_05    CHAR(24),
  s_dist_06    CHAR(24),
  s_dist_07    CHAR(24),
  s_dist_08    CHAR(24),
  s_dist_09    CHAR(24),
  s_dist_10    CHAR(24),
  s_ytd        INT,
  s_order_cnt  INT,
  s_remote_cnt INT,
  s_data       VARCHAR(50),
  PRIMARY KEY ({stock_key})
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
