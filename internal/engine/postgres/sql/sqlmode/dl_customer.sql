-- Delivery (2.7.4.2): the customer's balance grows by the order's amount ($4, in
-- cents); one more delivery.
UPDATE customer
   SET c_balance = c_balance + $4::bigint::numeric / 100,
       c_delivery_cnt = c_delivery_cnt + 1
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3
