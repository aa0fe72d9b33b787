-- 3.3.2.3: max(no_o_id) - min(no_o_id) + 1 = number of new_order rows, per district.
WITH violation AS (
  SELECT no_w_id, no_d_id
  FROM new_order
  GROUP BY no_w_id, no_d_id
  HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)
)
SELECT count(*) OVER () AS violations, no_w_id, no_d_id
FROM violation
ORDER BY 1, 2, 3
LIMIT 5
