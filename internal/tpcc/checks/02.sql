-- 3.3.2.2: d_next_o_id - 1 = max(o_id) = max(no_o_id) per district.
WITH violation AS (
  SELECT d.d_w_id, d.d_id
  FROM district d
  LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) AS max_o FROM orders GROUP BY o_w_id, o_d_id) o
    ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
  LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS max_no FROM new_order GROUP BY no_w_id, no_d_id) n
    ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
  WHERE o.max_o IS NULL OR d.d_next_o_id - 1 <> o.max_o
     OR (n.max_no IS NOT NULL AND d.d_next_o_id - 1 <> n.max_no)
)
SELECT count(*) OVER () AS violations, d_w_id, d_id
FROM violation
ORDER BY 1, 2, 3
LIMIT 5
