-- Payment (2.5.2.2): the history row, dated now (UTC: the session's time zone); the
-- amount given in cents; h_data is w_name and d_name (the last two arguments)
-- separated by 4 spaces.
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES (?, ?, ?, ?, ?, NOW(), ? / 100, CONCAT(?, '    ', ?))
