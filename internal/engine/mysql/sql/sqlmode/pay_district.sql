-- Payment (2.5.2.2): the district's name (for h_data) and address, locked until the
-- update.
SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
  FROM district WHERE d_w_id = ? AND d_id = ?
   FOR UPDATE
