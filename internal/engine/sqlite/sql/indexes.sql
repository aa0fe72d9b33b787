-- Keys and indexes, created after the load (one sort each instead of row-by-row
-- maintenance). SQLite cannot add a primary key to a table: the keys are unique
-- indexes. No foreign keys, as in the PostgreSQL schema: the consistency checks
-- verify the relationships.
CREATE UNIQUE INDEX warehouse_pkey ON warehouse (w_id);
CREATE UNIQUE INDEX district_pkey ON district (d_w_id, d_id);
CREATE UNIQUE INDEX customer_pkey ON customer (c_w_id, c_d_id, c_id);
CREATE UNIQUE INDEX new_order_pkey ON new_order (no_w_id, no_d_id, no_o_id);
CREATE UNIQUE INDEX orders_pkey ON orders (o_w_id, o_d_id, o_id);
CREATE UNIQUE INDEX order_line_pkey ON order_line (ol_w_id, ol_d_id, ol_o_id, ol_number);
CREATE UNIQUE INDEX item_pkey ON item (i_id);
CREATE UNIQUE INDEX stock_pkey ON stock ({stock_key});
-- Payment and Order-Status by last name (2.5.2.2, 2.6.2.2): rows ordered by c_first.
CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first);
-- Order-Status: the customer's latest order (2.6.2.2).
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
