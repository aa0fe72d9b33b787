-- Secondary indexes, created after the load: one sort each instead of row-by-row
-- maintenance (the primary keys are in schema.sql). No foreign keys, as in the
-- PostgreSQL schema: the consistency checks verify the relationships.
--
-- Payment and Order-Status by last name (2.5.2.2, 2.6.2.2): rows ordered by c_first
-- (then c_id, which InnoDB appends to every secondary index).
ALTER TABLE customer ADD INDEX customer_name (c_w_id, c_d_id, c_last, c_first);
-- Order-Status: the customer's latest order (2.6.2.2).
ALTER TABLE orders   ADD INDEX orders_customer (o_w_id, o_d_id, o_c_id, o_id);
