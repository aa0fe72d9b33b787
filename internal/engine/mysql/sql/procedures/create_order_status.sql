-- Order-Status (2.6.2) in one call, one round trip and one read-only transaction (one
-- snapshot: the order and its lines agree). The customer is chosen as in Payment.
-- Returns one row: the customer's id, its latest order's id (0 when it has none) and
-- that order's line count.
CREATE PROCEDURE storbench_order_status(
  p_w_id INT, p_d_id INT, p_c_id INT, p_by_name BOOLEAN,
  p_c_last VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin)
READS SQL DATA
BEGIN
  DECLARE v_c_id INT DEFAULT p_c_id;
  DECLARE v_n INT;
  DECLARE v_o_id INT DEFAULT 0;
  DECLARE v_line_count INT DEFAULT 0;
  DECLARE v_balance DECIMAL(12,2);
  DECLARE v_first, v_last VARCHAR(16);
  DECLARE v_middle CHAR(2);
  DECLARE v_entry_d DATETIME;
  DECLARE v_carrier_id INT;
  DECLARE v_lines TEXT; -- the lines' columns: for display
  DECLARE v_found BOOLEAN DEFAULT TRUE;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION READ ONLY;
  IF p_by_name THEN
    -- 2.6.2.2: the customer at position ceil(n/2) ordered by c_first, as in Payment.
    SELECT COUNT(*) INTO v_n FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
    IF v_n = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'Order-Status: no customer of that last name';
    END IF;
    SET v_n = (v_n - 1) DIV 2;
    SELECT c_id INTO v_c_id FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
     ORDER BY c_first, c_id LIMIT v_n, 1;
  END IF;
  -- 2.6.2.2: the customer's balance and name.
  SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
  IF NOT v_found THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'Order-Status: the customer is missing';
  END IF;
  -- 2.6.2.2: the customer's latest order and its lines (none: nothing to show).
  SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry_d, v_carrier_id
    FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
   ORDER BY o_id DESC LIMIT 1;
  IF v_found THEN
    SELECT COUNT(*),
           GROUP_CONCAT(ol_i_id, ' ', ol_supply_w_id, ' ', ol_quantity, ' ', ol_amount, ' ',
                        IFNULL(ol_delivery_d, '') SEPARATOR '\n')
      INTO v_line_count, v_lines
      FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
  END IF;
  COMMIT;
  SELECT v_c_id AS customer_id, v_o_id AS order_id, v_line_count AS line_count;
END
