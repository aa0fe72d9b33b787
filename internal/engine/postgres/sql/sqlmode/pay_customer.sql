-- Payment (2.5.2.2): customer ($1, $2, $3) pays $6 cents at warehouse $5, district $4;
-- a bad-credit customer's c_data gets the payment prepended, keeping 500 characters.
UPDATE customer
   SET c_balance = c_balance - ($6::bigint::numeric / 100)::numeric(6,2),
       c_ytd_payment = c_ytd_payment + ($6::bigint::numeric / 100)::numeric(6,2),
       c_payment_cnt = c_payment_cnt + 1,
       c_data = CASE WHEN c_credit = 'BC'
                     THEN left(format('%s %s %s %s %s %s|', c_id, c_d_id, c_w_id, $4::integer, $5::integer,
                                      ($6::bigint::numeric / 100)::numeric(6,2)) || c_data, 500)
                     ELSE c_data END
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3
RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
          c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance
