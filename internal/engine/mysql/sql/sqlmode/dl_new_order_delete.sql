-- Delivery (2.7.4.2): that new_order row, deleted.
DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?
