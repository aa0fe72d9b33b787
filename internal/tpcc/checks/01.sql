-- 3.3.2.1: w_ytd = sum(d_ytd) per warehouse.
SELECT count(*) OVER () AS violations, w.w_id
FROM warehouse w
JOIN (SELECT d_w_id, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
WHERE w.w_ytd <> d.ytd
ORDER BY w.w_id
LIMIT 5
