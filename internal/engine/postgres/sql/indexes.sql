-- Keys and indexes, created after the load (one sort each instead of row-by-row
-- maintenance). No foreign keys: they would add a trigger per write that HammerDB's
-- schema does not have, and the consistency checks verify the relationships.
ALTER TABLE warehouse  ADD PRIMARY KEY (w_id);
ALTER TABLE district   ADD PRIMARY KEY (d_w_id, d_id);
ALTER TABLE customer   ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
ALTER TABLE new_order  ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE orders     ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE item       ADD PRIMARY KEY (i_id);
ALTER TABLE stock      ADD PRIMARY KEY ({stock_key});
-- Payment and Order-Status by last name (2.5.2.2, 2.6.2.2): rows ordered by c_first.
CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first);
-- Order-Status: the customer's latest order (2.6.2.2).
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
