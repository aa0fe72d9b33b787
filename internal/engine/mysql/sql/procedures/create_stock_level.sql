-- Stock-Level (2.8.2) in one call and one statement, in a read-only transaction
-- (isolation level 1 would suffice, 2.8.2.1): the distinct items of the district's
-- last 20 orders whose stock in the warehouse is below the threshold. Returns one row:
-- that count. The explicit COMMIT is for the database's TPM: it counts Com_commit and
-- Com_rollback, which an autocommit SELECT does not raise.
CREATE PROCEDURE storbench_stock_level(p_w_id INT, p_d_id INT, p_threshold INT)
READS SQL DATA
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION READ ONLY;
  SELECT COUNT(DISTINCT s.s_i_id) AS low_stock
    FROM district d
    JOIN order_line ol ON ol.ol_w_id = d.d_w_id AND ol.ol_d_id = d.d_id
                      AND ol.ol_o_id >= d.d_next_o_id - 20 AND ol.ol_o_id < d.d_next_o_id
    JOIN stock s ON s.s_w_id = d.d_w_id AND s.s_i_id = ol.ol_i_id
   WHERE d.d_w_id = p_w_id AND d.d_id = p_d_id AND s.s_quantity < p_threshold;
  COMMIT;
END
