-- New-Order (2.4.2.2): one line's stock in its supply warehouse ($1), quantity $3;
-- $4 is 1 for a line from a remote warehouse; $5 is the order's district, whose
-- s_dist_XX becomes ol_dist_info.
UPDATE stock
   SET s_quantity = CASE WHEN s_quantity >= $3::integer + 10 THEN s_quantity - $3::integer
                         ELSE s_quantity - $3::integer + 91 END,
       s_ytd = s_ytd + $3::integer,
       s_order_cnt = s_order_cnt + 1,
       s_remote_cnt = s_remote_cnt + $4::integer
 WHERE s_w_id = $1 AND s_i_id = $2
RETURNING s_quantity, s_data,
          CASE $5::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                           WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                           WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                           WHEN 10 THEN s_dist_10 END
