-- Delivery (2.7.4.2): the sum of the order's line amounts, in cents.
SELECT coalesce(sum(ol_amount), 0) FROM order_line
 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?
