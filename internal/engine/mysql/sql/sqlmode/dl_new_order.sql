-- Delivery (2.7.4.2): the district's oldest new_order row, locked. No row: the district
-- has none and is skipped. A second Delivery of the warehouse waits here for the first
-- to commit, then reads past the row it deleted: two never deliver the same order.
SELECT no_o_id FROM new_order
 WHERE no_w_id = ? AND no_d_id = ?
 ORDER BY no_o_id LIMIT 1
   FOR UPDATE
