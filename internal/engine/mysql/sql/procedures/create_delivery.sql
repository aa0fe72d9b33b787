-- Delivery (2.7.4) in one call, one round trip and one transaction: the 10 districts
-- of the warehouse in order. Each district's oldest new_order row is locked and
-- deleted, its order gets the carrier, its lines the delivery date, and its customer
-- the order's amount; a district without one is skipped (2.7.4.2). A concurrent
-- Delivery of the same warehouse waits on the first district's row lock, then finds
-- the next order: none is delivered twice. Returns one row: the skipped districts.
CREATE PROCEDURE storbench_delivery(p_w_id INT, p_carrier_id INT)
MODIFIES SQL DATA
BEGIN
  DECLARE v_d_id INT DEFAULT 1;
  DECLARE v_skipped INT DEFAULT 0;
  DECLARE v_o_id, v_c_id INT;
  DECLARE v_amount DECIMAL(12,2);
  DECLARE v_found BOOLEAN;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION;
  WHILE v_d_id <= 10 DO -- tpcc.DistrictsPerWarehouse
    SET v_found = TRUE;
    SELECT no_o_id INTO v_o_id FROM new_order
     WHERE no_w_id = p_w_id AND no_d_id = v_d_id
     ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_found THEN
      DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d_id AND no_o_id = v_o_id;
      -- 2.7.4.2: the order's customer; its carrier. Locking reads, like the new_order
      -- row's: they read the newest committed rows, where a plain read would read the
      -- transaction's snapshot, which misses an order committed after it was taken
      -- (the district's queue was empty then, and a New-Order refilled it since).
      SELECT o_c_id INTO v_c_id FROM orders
       WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id FOR UPDATE;
      IF NOT v_found THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'Delivery: the order of a new_order row is missing';
      END IF;
      UPDATE orders SET o_carrier_id = p_carrier_id WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id;
      -- 2.7.4.2: the sum of the lines' amounts; every line dated now (UTC).
      SELECT COALESCE(SUM(ol_amount), 0) INTO v_amount FROM order_line
       WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id FOR UPDATE;
      UPDATE order_line SET ol_delivery_d = UTC_TIMESTAMP()
       WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id;
      -- 2.7.4.2: the customer's balance grows by the sum; one more delivery.
      UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
       WHERE c_w_id = p_w_id AND c_d_id = v_d_id AND c_id = v_c_id;
    ELSE
      SET v_skipped = v_skipped + 1; -- 2.7.4.2: no order to deliver
    END IF;
    SET v_d_id = v_d_id + 1;
  END WHILE;
  COMMIT;
  SELECT v_skipped AS skipped;
END
