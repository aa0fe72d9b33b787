-- 3.3.2.4: sum(o_ol_cnt) = number of order_line rows, per district.
WITH violation AS (
  SELECT o.o_w_id, o.o_d_id
  FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS line_count FROM orders GROUP BY o_w_id, o_d_id) o
  LEFT JOIN (SELECT ol_w_id, ol_d_id, count(*) AS line_count FROM order_line GROUP BY ol_w_id, ol_d_id) l
    ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
  WHERE l.line_count IS NULL OR o.line_count <> l.line_count
)
SELECT count(*) OVER () AS violations, o_w_id, o_d_id
FROM violation
ORDER BY 1, 2, 3
LIMIT 5
