-- New-Order (2.4.2.2): the district's tax (in 1/10000) and next order id, incremented.
UPDATE district SET d_next_o_id = d_next_o_id + 1
 WHERE d_w_id = $1 AND d_id = $2
RETURNING (d_tax * 10000)::integer, d_next_o_id - 1
