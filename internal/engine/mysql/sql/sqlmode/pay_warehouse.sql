-- Payment (2.5.2.2): the warehouse's name (for h_data) and address, locked until the
-- update.
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?
   FOR UPDATE
