-- Order-Status (2.6.2.2): the lines of the customer's latest order (the one os_order
-- reads: both run in one repeatable-read transaction).
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
  FROM order_line
 WHERE ol_w_id = $1 AND ol_d_id = $2
   AND ol_o_id = (SELECT max(o_id) FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3)
