-- Order-Status (2.6.2.2): the customer's latest order.
SELECT o_id, o_entry_d, o_carrier_id
  FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?
 ORDER BY o_id DESC LIMIT 1
