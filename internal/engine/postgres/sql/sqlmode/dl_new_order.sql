-- Delivery (2.7.4.2): the district's oldest new_order row, deleted. No row: the
-- district has none and is skipped (dl_lock.sql keeps other Deliveries out).
DELETE FROM new_order
 WHERE no_w_id = $1 AND no_d_id = $2
   AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = $1 AND no_d_id = $2)
RETURNING no_o_id
