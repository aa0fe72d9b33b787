-- Delivery (2.7.4.2): the order's carrier is set; its customer is read.
UPDATE orders SET o_carrier_id = $4
 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3
RETURNING o_c_id
