-- Delivery (2.7.4.2): the order's carrier (the 1st argument).
UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?
