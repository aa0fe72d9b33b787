-- Statistics for the optimizer. InnoDB has no checkpoint a client can ask for (it
-- flushes continuously): the load's dirty pages are written back during the first run.
ANALYZE TABLE warehouse, district, customer, history, new_order, orders, order_line, item, stock;
