-- New-Order (2.4.2.2): the customer's discount (in 1/10000), last name and credit. A
-- plain read: these columns never change.
SELECT CAST(c_discount * 10000 AS SIGNED), c_last, c_credit
  FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?
