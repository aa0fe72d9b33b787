-- New-Order (2.4.2.2): the district's next order id, incremented.
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?
