-- 3.3.2.6: o_ol_cnt = the order's number of order_line rows.
WITH violation AS (
  SELECT o.o_w_id, o.o_d_id, o.o_id
  FROM orders o
  LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) AS line_count
             FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l
    ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
  WHERE l.line_count IS NULL OR o.o_ol_cnt <> l.line_count
)
SELECT count(*) OVER () AS violations, o_w_id, o_d_id, o_id
FROM violation
ORDER BY 1, 2, 3, 4
LIMIT 5
