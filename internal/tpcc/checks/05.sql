-- 3.3.2.5: o_carrier_id is null if and only if the order has a new_order row.
WITH violation AS (
  SELECT o.o_w_id, o.o_d_id, o.o_id
  FROM orders o
  LEFT JOIN new_order n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id
  WHERE (o.o_carrier_id IS NULL AND n.no_o_id IS NULL)
     OR (o.o_carrier_id IS NOT NULL AND n.no_o_id IS NOT NULL)
)
SELECT count(*) OVER () AS violations, o_w_id, o_d_id, o_id
FROM violation
ORDER BY 1, 2, 3, 4
LIMIT 5
