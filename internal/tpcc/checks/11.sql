-- 3.3.2.11: count(orders) - count(new_order) = 2100 per district (holds only until
-- the first Delivery).
WITH violation AS (
  SELECT o.o_w_id, o.o_d_id
  FROM (SELECT o_w_id, o_d_id, count(*) AS orders FROM orders GROUP BY o_w_id, o_d_id) o
  LEFT JOIN (SELECT no_w_id, no_d_id, count(*) AS new_orders FROM new_order GROUP BY no_w_id, no_d_id) n
    ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id
  WHERE o.orders - coalesce(n.new_orders, 0) <> 2100
)
SELECT count(*) OVER () AS violations, o_w_id, o_d_id
FROM violation
ORDER BY 1, 2, 3
LIMIT 5
