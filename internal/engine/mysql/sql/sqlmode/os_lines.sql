-- Order-Status (2.6.2.2): the lines of the order os_order found (one snapshot); the
-- amount in cents.
SELECT ol_i_id, ol_supply_w_id, ol_quantity, CAST(ol_amount * 100 AS SIGNED), ol_delivery_d
  FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?
