-- 3.3.2.9: d_ytd = sum(h_amount) per district.
WITH violation AS (
  SELECT d.d_w_id, d.d_id
  FROM district d
  LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) AS paid FROM history GROUP BY h_w_id, h_d_id) h
    ON h.h_w_id = d.d_w_id AND h.h_d_id = d.d_id
  WHERE h.paid IS NULL OR d.d_ytd <> h.paid
)
SELECT count(*) OVER () AS violations, d_w_id, d_id
FROM violation
ORDER BY 1, 2, 3
LIMIT 5
