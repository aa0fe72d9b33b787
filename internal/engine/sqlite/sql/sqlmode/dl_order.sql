-- Delivery (2.7.4.2): the order's customer.
SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?
