-- 3.3.2.10: c_balance = sum(ol_amount of delivered lines) - sum(h_amount), per customer.
WITH violation AS (
  SELECT c.c_w_id, c.c_d_id, c.c_id
  FROM customer c
  LEFT JOIN (SELECT o.o_w_id, o.o_d_id, o.o_c_id, sum(l.ol_amount) AS delivered
             FROM orders o
             JOIN order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
             WHERE l.ol_delivery_d IS NOT NULL
             GROUP BY o.o_w_id, o.o_d_id, o.o_c_id) ol
    ON ol.o_w_id = c.c_w_id AND ol.o_d_id = c.c_d_id AND ol.o_c_id = c.c_id
  LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) AS paid
             FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h
    ON h.h_c_w_id = c.c_w_id AND h.h_c_d_id = c.c_d_id AND h.h_c_id = c.c_id
  WHERE c.c_balance <> coalesce(ol.delivered, 0) - coalesce(h.paid, 0)
)
SELECT count(*) OVER () AS violations, c_w_id, c_d_id, c_id
FROM violation
ORDER BY 1, 2, 3, 4
LIMIT 5
