-- 3.3.2.12: c_balance + c_ytd_payment = sum(ol_amount of delivered lines), per customer.
WITH violation AS (
  SELECT c.c_w_id, c.c_d_id, c.c_id
  FROM customer c
  LEFT JOIN (SELECT o.o_w_id, o.o_d_id, o.o_c_id, sum(l.ol_amount) AS delivered
             FROM orders o
             JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
             WHERE l.ol_delivery_d IS NOT NULL
             GROUP BY o.o_w_id, o.o_d_id, o.o_c_id) ol
    ON ol.o_w_id = c.c_w_id AND ol.o_d_id = c.c_d_id AND ol.o_c_id = c.c_id
  WHERE c.c_balance + c.c_ytd_payment <> coalesce(ol.delivered, 0)
)
SELECT count(*) OVER () AS violations, c_w_id, c_d_id, c_id
FROM violation
ORDER BY 1, 2, 3, 4
LIMIT 5
