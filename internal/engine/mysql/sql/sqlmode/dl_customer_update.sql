-- Delivery (2.7.4.2): the customer's balance grows by the order's amount (the 1st
-- argument, in cents); one more delivery.
UPDATE customer
   SET c_balance = c_balance + ? / 100, c_delivery_cnt = c_delivery_cnt + 1
 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?
