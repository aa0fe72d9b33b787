-- New-Order (2.4.2.2): the order, entered now (UTC: the session's time zone, like the
-- load's timestamps).
INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
VALUES (?, ?, ?, ?, NOW(), NULL, ?, ?)
