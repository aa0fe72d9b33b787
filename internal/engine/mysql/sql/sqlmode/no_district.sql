-- New-Order (2.4.2.2): the district's tax (in 1/10000) and next order id, the new
-- order's id. FOR UPDATE: no other New-Order of the district can take the same id
-- before no_district_update.
SELECT CAST(d_tax * 10000 AS SIGNED), d_next_o_id
  FROM district WHERE d_w_id = ? AND d_id = ?
   FOR UPDATE
