-- New-Order (2.4.2.2): the order's new_order row.
INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)
