-- Delivery (2.7.4.2): the sum of the order's line amounts, in cents; a locking
-- (current) read, as dl_order.
SELECT CAST(COALESCE(SUM(ol_amount), 0) * 100 AS SIGNED) FROM order_line
 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?
   FOR UPDATE
