-- Delivery (2.7.4.2): the order's lines, dated now (UTC: the session's time zone).
UPDATE order_line SET ol_delivery_d = NOW()
 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?
