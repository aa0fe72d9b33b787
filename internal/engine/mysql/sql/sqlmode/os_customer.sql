-- Order-Status (2.6.2.2): the customer's balance (in cents) and name.
SELECT CAST(c_balance * 100 AS SIGNED), c_first, c_middle, c_last
  FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?
