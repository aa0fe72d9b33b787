-- Payment (2.5.2.2): a bad-credit customer pays the amount (in cents, twice) and its
-- c_data gets the payment prepended (the 3rd argument: "c_id c_d_id c_w_id d_id w_id
-- amount|", made by the client), keeping 500 characters.
UPDATE customer
   SET c_balance = c_balance - ? / 100, c_ytd_payment = c_ytd_payment + ? / 100,
       c_payment_cnt = c_payment_cnt + 1,
       c_data = LEFT(CONCAT(?, c_data), 500)
 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?
