-- Order-Status (2.6.2.2): the customer's balance and name.
SELECT c_balance, c_first, c_middle, c_last
  FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3
