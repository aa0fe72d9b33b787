-- New-Order (2.4.2) in one call, one round trip and one transaction.
--
-- The lines arrive as four comma-separated lists of one number per line, in stock-lock
-- order (tpcc.NewOrderInput.LockOrder: by supply warehouse, then item): their items,
-- supply warehouses, quantities and ol_numbers (each line's position in the input).
-- Every New-Order locks its stock rows in this one order, so two New-Orders cannot
-- deadlock on stock.
--
-- Returns one row: rolled_back (1 when an unused item id rolled everything back,
-- d_next_o_id included, 2.4.2.3; it is an expected outcome, not an error), order_id,
-- total_cents and brands (2.4.2.2, for the terminal's display: bit ol_number - 1 set
-- when that line's brand-generic is "B").
--
-- An unused item finds no item row: its line is skipped, the other lines and the order
-- are entered all the same, and everything rolls back at the end (2.4.2.3), so a
-- rolled-back New-Order does the same work as the others.
CREATE PROCEDURE storbench_new_order(
  p_w_id INT, p_d_id INT, p_c_id INT,
  p_i_ids VARCHAR(255) CHARACTER SET ascii, p_supply_w_ids VARCHAR(255) CHARACTER SET ascii,
  p_quantities VARCHAR(255) CHARACTER SET ascii, p_numbers VARCHAR(255) CHARACTER SET ascii)
MODIFIES SQL DATA
proc: BEGIN
  DECLARE v_lines INT DEFAULT LENGTH(p_i_ids) - LENGTH(REPLACE(p_i_ids, ',', '')) + 1;
  DECLARE v_k INT DEFAULT 1;
  DECLARE v_o_id, v_i_id, v_supply_w_id, v_quantity, v_number, v_s_quantity INT;
  DECLARE v_all_local INT DEFAULT 1;
  DECLARE v_w_tax, v_d_tax, v_discount DECIMAL(4,4);
  DECLARE v_c_last VARCHAR(16);
  DECLARE v_credit CHAR(2);
  DECLARE v_price DECIMAL(5,2);
  DECLARE v_i_name VARCHAR(24);
  DECLARE v_i_data, v_s_data VARCHAR(50);
  DECLARE v_dist_info CHAR(24);
  DECLARE v_amount DECIMAL(6,2);
  DECLARE v_sum DECIMAL(12,2) DEFAULT 0;
  DECLARE v_brands BIGINT DEFAULT 0;
  DECLARE v_unused BOOLEAN DEFAULT FALSE;
  DECLARE v_found BOOLEAN DEFAULT TRUE;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
  -- Any error (a deadlock, 1213, included) rolls back and reaches the client, whose
  -- driver retries what it should.
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION;
  -- 2.4.2.2: the district's tax and next order id (the new order's), incremented; the
  -- warehouse's tax; the customer's discount, last name and credit.
  SELECT d_tax, d_next_o_id INTO v_d_tax, v_o_id
    FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
  SELECT c_discount, c_last, c_credit INTO v_discount, v_c_last, v_credit
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  IF NOT v_found THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'New-Order: the warehouse, district or customer is missing';
  END IF;

  WHILE v_k <= v_lines DO
    SET v_i_id = SUBSTRING_INDEX(SUBSTRING_INDEX(p_i_ids, ',', v_k), ',', -1),
        v_supply_w_id = SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply_w_ids, ',', v_k), ',', -1),
        v_quantity = SUBSTRING_INDEX(SUBSTRING_INDEX(p_quantities, ',', v_k), ',', -1),
        v_number = SUBSTRING_INDEX(SUBSTRING_INDEX(p_numbers, ',', v_k), ',', -1);
    -- 2.4.2.2: the line's item and its price.
    SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item WHERE i_id = v_i_id;
    IF NOT v_found THEN
      SET v_unused = TRUE, v_found = TRUE; -- 2.4.2.3: rolled back at the end
    ELSE
      -- 2.4.2.2: the stock of the supply warehouse; the order's district picks s_dist_XX.
      SELECT s_quantity, s_data,
             CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                         WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                         WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                         WHEN 10 THEN s_dist_10 END
        INTO v_s_quantity, v_s_data, v_dist_info
        FROM stock WHERE s_w_id = v_supply_w_id AND s_i_id = v_i_id FOR UPDATE;
      IF NOT v_found THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'New-Order: a stock row is missing';
      END IF;
      -- 2.4.2.2: s_quantity - ol_quantity if that leaves at least 10, else + 91; a line
      -- from another warehouse counts in s_remote_cnt and clears o_all_local.
      UPDATE stock
         SET s_quantity = IF(v_s_quantity >= v_quantity + 10, v_s_quantity - v_quantity, v_s_quantity - v_quantity + 91),
             s_ytd = s_ytd + v_quantity, s_order_cnt = s_order_cnt + 1,
             s_remote_cnt = s_remote_cnt + (v_supply_w_id <> p_w_id)
       WHERE s_w_id = v_supply_w_id AND s_i_id = v_i_id;
      IF v_supply_w_id <> p_w_id THEN
        SET v_all_local = 0;
      END IF;
      -- 2.4.2.2: brand-generic "B" when both i_data and s_data hold ORIGINAL.
      IF INSTR(v_i_data, 'ORIGINAL') > 0 AND INSTR(v_s_data, 'ORIGINAL') > 0 THEN
        SET v_brands = v_brands | (1 << (v_number - 1));
      END IF;
      -- 2.4.2.2: ol_amount = ol_quantity * i_price, exact.
      SET v_amount = v_quantity * v_price, v_sum = v_sum + v_amount;
      INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                              ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o_id, p_d_id, p_w_id, v_number, v_i_id, v_supply_w_id, NULL, v_quantity, v_amount, v_dist_info);
    END IF;
    SET v_k = v_k + 1;
  END WHILE;

  -- 2.4.2.2: the order, entered now (UTC, like the load's timestamps), and its
  -- new_order row. After the lines: o_all_local is known then.
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (v_o_id, p_d_id, p_w_id, p_c_id, UTC_TIMESTAMP(), NULL, v_lines, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
  IF v_unused THEN
    -- 2.4.2.3: the unused item rolls the whole transaction back.
    ROLLBACK;
    SELECT 1 AS rolled_back, 0 AS order_id, 0 AS total_cents, 0 AS brands;
    LEAVE proc;
  END IF;
  COMMIT;
  -- 2.4.2.2: total = sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax), in
  -- cents rounded half up.
  SELECT 0 AS rolled_back, v_o_id AS order_id,
         ROUND(v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax) * 100) AS total_cents, v_brands AS brands;
END
