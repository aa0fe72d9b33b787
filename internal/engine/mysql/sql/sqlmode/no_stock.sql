-- New-Order (2.4.2.2): one line's stock in its supply warehouse (the 2nd argument),
-- locked until commit: the client computes the new quantity from it. The 1st argument
-- is the order's district, whose s_dist_XX becomes ol_dist_info.
SELECT s_quantity, s_data,
       CASE ? WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
              WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
              WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
              WHEN 10 THEN s_dist_10 END
  FROM stock WHERE s_w_id = ? AND s_i_id = ?
   FOR UPDATE
