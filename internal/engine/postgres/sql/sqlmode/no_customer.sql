-- New-Order (2.4.2.2): the customer's discount (in 1/10000), last name and credit.
SELECT (c_discount * 10000)::integer, c_last, c_credit
  FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3
