-- Stock-Level (2.8.2.2): the distinct items of the district's last 20 orders whose
-- stock in the warehouse is below the threshold (the 3rd argument). One statement
-- (autocommit): isolation level 1 suffices (2.8.2.1).
SELECT COUNT(DISTINCT s.s_i_id)
  FROM district d
  JOIN order_line ol ON ol.ol_w_id = d.d_w_id AND ol.ol_d_id = d.d_id
                    AND ol.ol_o_id >= d.d_next_o_id - 20 AND ol.ol_o_id < d.d_next_o_id
  JOIN stock s ON s.s_w_id = d.d_w_id AND s.s_i_id = ol.ol_i_id
 WHERE d.d_w_id = ? AND d.d_id = ? AND s.s_quantity < ?
