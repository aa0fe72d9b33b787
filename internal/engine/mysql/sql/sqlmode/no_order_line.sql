-- New-Order (2.4.2.2): one order line; ol_amount given in cents.
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ? / 100, ?)
