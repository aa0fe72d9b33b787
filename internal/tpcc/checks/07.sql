-- 3.3.2.7: ol_delivery_d is null if and only if the order's o_carrier_id is null.
WITH violation AS (
  SELECT l.ol_w_id, l.ol_d_id, l.ol_o_id, l.ol_number
  FROM order_line l
  JOIN orders o ON o.o_w_id = l.ol_w_id AND o.o_d_id = l.ol_d_id AND o.o_id = l.ol_o_id
  WHERE (l.ol_delivery_d IS NULL AND o.o_carrier_id IS NOT NULL)
     OR (l.ol_delivery_d IS NOT NULL AND o.o_carrier_id IS NULL)
)
SELECT count(*) OVER () AS violations, ol_w_id, ol_d_id, ol_o_id, ol_number
FROM violation
ORDER BY 1, 2, 3, 4, 5
LIMIT 5
