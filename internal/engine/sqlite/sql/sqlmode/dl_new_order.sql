-- Delivery (2.7.4.2): the district's oldest new_order row. No row: the district has
-- none and is skipped. BEGIN IMMEDIATE keeps other Deliveries out until commit, so
-- two never race for the same order.
SELECT no_o_id FROM new_order
 WHERE no_w_id = ? AND no_d_id = ?
 ORDER BY no_o_id LIMIT 1
