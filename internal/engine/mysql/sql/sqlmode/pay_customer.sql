-- Payment (2.5.2.2): the customer's name, address and credit (c_credit, the 11th
-- column, tells whether c_data changes), credit limit (cents), discount (1/10000) and
-- balance (cents), locked until the update.
SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
       c_phone, c_since, c_credit, CAST(c_credit_lim * 100 AS SIGNED),
       CAST(c_discount * 10000 AS SIGNED), CAST(c_balance * 100 AS SIGNED)
  FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?
   FOR UPDATE
