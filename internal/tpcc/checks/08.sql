-- 3.3.2.8: w_ytd = sum(h_amount) per warehouse.
WITH violation AS (
  SELECT w.w_id
  FROM warehouse w
  LEFT JOIN (SELECT h_w_id, sum(h_amount) AS paid FROM history GROUP BY h_w_id) h ON h.h_w_id = w.w_id
  WHERE h.paid IS NULL OR w.w_ytd <> h.paid
)
SELECT count(*) OVER () AS violations, w_id
FROM violation
ORDER BY 1, 2
LIMIT 5
