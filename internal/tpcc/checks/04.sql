-- 3.3.2.4: sum(o_ol_cnt) = number of order_line rows, per district.
WITH violation AS (
  SELECT o.o_w_id, o.o_d_id
  FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS lines FROM orders GROUP BY o_w_id, o_d_id) o
  LEFT JOIN (SELECT ol_w_id, ol_d_id, count(*) AS lines FROM order_line GROUP BY ol_w_id, ol_d_id) l
    ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
  WHERE l.lines IS NULL OR o.lines <> l.lines
)
SELECT count(*) OVER () AS violations, o_w_id, o_d_id
FROM violation
ORDER BY 1, 2, 3
LIMIT 5
