-- Payment (2.5.2) in one call, one round trip and one transaction. The customer is
-- p_c_id, or when p_by_name the middle one of those named p_c_last (2.5.2.2). The
-- amount arrives in cents. Returns one row: the paid customer's id.
CREATE PROCEDURE storbench_payment(
  p_w_id INT, p_d_id INT, p_c_w_id INT, p_c_d_id INT, p_c_id INT,
  p_by_name BOOLEAN, p_c_last VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  p_amount_cents BIGINT)
MODIFIES SQL DATA
BEGIN
  DECLARE v_amount DECIMAL(6,2) DEFAULT p_amount_cents / 100;
  DECLARE v_c_id INT DEFAULT p_c_id;
  DECLARE v_n INT;
  DECLARE v_w_name, v_d_name VARCHAR(10);
  DECLARE v_address VARCHAR(200); -- street, city, state, zip (and phone, since): for display
  DECLARE v_first, v_last VARCHAR(16);
  DECLARE v_middle, v_credit CHAR(2);
  DECLARE v_credit_lim, v_balance DECIMAL(12,2);
  DECLARE v_discount DECIMAL(4,4);
  DECLARE v_found BOOLEAN DEFAULT TRUE;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

  START TRANSACTION;
  -- 2.5.2.2: the warehouse's and the district's year-to-date, with their names (for
  -- h_data) and addresses.
  UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w_id;
  SELECT w_name, CONCAT_WS(' ', w_street_1, w_street_2, w_city, w_state, w_zip)
    INTO v_w_name, v_address FROM warehouse WHERE w_id = p_w_id;
  UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT d_name, CONCAT_WS(' ', d_street_1, d_street_2, d_city, d_state, d_zip)
    INTO v_d_name, v_address FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;

  IF p_by_name THEN
    -- 2.5.2.2: the customer at position ceil(n/2) of the n of that last name, ordered
    -- by c_first (c_id breaks ties so that every run picks the same row).
    SELECT COUNT(*) INTO v_n FROM customer
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
    IF v_n = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'Payment: no customer of that last name';
    END IF;
    SET v_n = (v_n - 1) DIV 2;
    SELECT c_id INTO v_c_id FROM customer
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
     ORDER BY c_first, c_id LIMIT v_n, 1;
  END IF;

  -- 2.5.2.2: the customer, locked; then its balance, year-to-date payment and count. A
  -- bad-credit customer's c_data gets "C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT|"
  -- prepended, keeping 500 characters.
  SELECT c_first, c_middle, c_last,
         CONCAT_WS(' ', c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since),
         c_credit, c_credit_lim, c_discount, c_balance
    INTO v_first, v_middle, v_last, v_address, v_credit, v_credit_lim, v_discount, v_balance
    FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
  IF NOT v_found THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'Payment: the warehouse, district or customer is missing';
  END IF;
  UPDATE customer
     SET c_balance = c_balance - v_amount, c_ytd_payment = c_ytd_payment + v_amount,
         c_payment_cnt = c_payment_cnt + 1,
         c_data = IF(v_credit = 'BC',
                     LEFT(CONCAT(v_c_id, ' ', p_c_d_id, ' ', p_c_w_id, ' ', p_d_id, ' ', p_w_id, ' ', v_amount, '|', c_data), 500),
                     c_data)
   WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;

  -- 2.5.2.2: the history row, dated now (UTC); h_data is w_name and d_name separated
  -- by 4 spaces.
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, UTC_TIMESTAMP(), v_amount,
          CONCAT(v_w_name, '    ', v_d_name));
  COMMIT;
  SELECT v_c_id AS customer_id;
END
