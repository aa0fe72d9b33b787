-- New-Order (2.4.2.2): one line's stock: the new quantity the client computed from
-- no_stock's (s_quantity - qty, + 91 when that leaves less than 10), the line's
-- quantity, 1 for a line from a remote warehouse.
UPDATE stock
   SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1,
       s_remote_cnt = s_remote_cnt + ?
 WHERE s_w_id = ? AND s_i_id = ?
