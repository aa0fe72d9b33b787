-- New-Order (2.4.2.2): the district's tax (in 1/10000) and next order id, the new
-- order's id. BEGIN IMMEDIATE holds the write lock: no other writer can take the same
-- id before no_district_update.
SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?
