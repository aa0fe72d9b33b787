-- 3.3.2.1: w_ytd = sum(d_ytd) per warehouse.
WITH violation AS (
  SELECT w.w_id
  FROM warehouse w
  JOIN (SELECT d_w_id, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
  WHERE w.w_ytd <> d.ytd
)
SELECT count(*) OVER () AS violations, w_id
FROM violation
ORDER BY 1, 2
LIMIT 5
