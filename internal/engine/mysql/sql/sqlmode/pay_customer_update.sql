-- Payment (2.5.2.2): a good-credit customer pays the amount (in cents, twice).
UPDATE customer
   SET c_balance = c_balance - ? / 100, c_ytd_payment = c_ytd_payment + ? / 100,
       c_payment_cnt = c_payment_cnt + 1
 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?
