-- The five TPC-C transactions as PL/pgSQL functions for the procedures mode: one call,
-- one round trip, one transaction each. Every name starts with storbench_ (Drop finds
-- them by that prefix). Run once after the load; CREATE OR REPLACE makes it rerunnable.
--
-- Both modes must leave the same rows: the statements here and in sql/sqlmode/*.sql
-- implement the same rules with the same expressions (money as exact numeric, amounts
-- passed in cents, timestamps in UTC like the load's).
--
-- Errors:
--   SB001  New-Order with an unused item id (2.4.2.3): raised after all the work so the
--          whole call rolls back; the client reports a rolled-back New-Order.
--   P0002  a row the spec says exists is missing (INTO STRICT, or a missing stock row).

-- New-Order (2.4.2). Lines arrive as three arrays in input order; ol_number is the
-- position in them. Returns the new order's id, the order's total in cents and the
-- lines' brand-generic (bit ol_number - 1 set for "B") (2.4.2.2, for the terminal's
-- display). An unused item (2.4.2.3) skips its line; the rest is done all the same
-- before SB001 rolls it back, so a rolled-back New-Order does the same work.
CREATE OR REPLACE FUNCTION storbench_new_order(
  p_w_id integer, p_d_id integer, p_c_id integer,
  p_i_ids integer[], p_supply_w_ids integer[], p_quantities integer[],
  OUT order_id integer, OUT total_cents bigint, OUT brands bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_lines    integer := cardinality(p_i_ids);
  v_w_tax    numeric;
  v_d_tax    numeric;
  v_discount numeric;
  v_last     text;
  v_credit   text;
  v_price    numeric;
  v_i_data   text;
  v_s_data   text;
  v_dist     text;
  v_amount   numeric;
  v_sum      numeric := 0;
  v_unused   boolean := false;
BEGIN
  brands := 0;
  -- 2.4.2.2: the warehouse's tax; the district's tax and next order id, incremented.
  SELECT w_tax INTO STRICT v_w_tax FROM warehouse WHERE w_id = p_w_id;
  UPDATE district SET d_next_o_id = d_next_o_id + 1
   WHERE d_w_id = p_w_id AND d_id = p_d_id
  RETURNING d_tax, d_next_o_id - 1 INTO STRICT v_d_tax, order_id;
  SELECT c_discount, c_last, c_credit INTO STRICT v_discount, v_last, v_credit
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;

  -- 2.4.2.2: the order (o_all_local 1 when every line is supplied by the home warehouse)
  -- and its new_order row.
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (order_id, p_d_id, p_w_id, p_c_id, now() AT TIME ZONE 'UTC', NULL, v_lines,
          CASE WHEN p_supply_w_ids <@ ARRAY[p_w_id] THEN 1 ELSE 0 END);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (order_id, p_d_id, p_w_id);

  -- The stock rows, locked first in (s_w_id, s_i_id) order, the same canonical order for
  -- every New-Order, so that concurrent New-Orders cannot deadlock on stock. A locking
  -- SELECT sorts first and locks the sorted rows as they come (the locking clause is
  -- applied to the query's output, above its ORDER BY), whatever the plan below.
  PERFORM 1 FROM stock
   WHERE (s_w_id, s_i_id) IN (SELECT * FROM unnest(p_supply_w_ids, p_i_ids))
   ORDER BY s_w_id, s_i_id
     FOR UPDATE;

  -- 2.4.2.2: each line in input order: its item, its stock updated (one update per line,
  -- an item on two lines included), its order line numbered by its position.
  FOR k IN 1 .. v_lines LOOP
    SELECT i_price, i_data INTO v_price, v_i_data FROM item WHERE i_id = p_i_ids[k];
    IF NOT FOUND THEN
      v_unused := true; -- 2.4.2.3: rolled back once the other lines are done
      CONTINUE;
    END IF;
    UPDATE stock
       SET s_quantity = CASE WHEN s_quantity >= p_quantities[k] + 10 THEN s_quantity - p_quantities[k]
                             ELSE s_quantity - p_quantities[k] + 91 END,
           s_ytd = s_ytd + p_quantities[k],
           s_order_cnt = s_order_cnt + 1,
           s_remote_cnt = s_remote_cnt + (p_supply_w_ids[k] <> p_w_id)::integer
     WHERE s_w_id = p_supply_w_ids[k] AND s_i_id = p_i_ids[k]
    RETURNING s_data,
              CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                          WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                          WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                          WHEN 10 THEN s_dist_10 END
      INTO v_s_data, v_dist;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'New-Order of district (%, %): the stock of item % in warehouse % is missing',
        p_w_id, p_d_id, p_i_ids[k], p_supply_w_ids[k] USING ERRCODE = 'P0002';
    END IF;
    -- 2.4.2.2: brand-generic "B" when both i_data and s_data hold ORIGINAL: bit k - 1.
    IF strpos(v_i_data, 'ORIGINAL') > 0 AND strpos(v_s_data, 'ORIGINAL') > 0 THEN
      brands := brands | (1::bigint << (k - 1));
    END IF;
    v_amount := p_quantities[k] * v_price; -- 2.4.2.2: ol_amount = ol_quantity * i_price
    v_sum := v_sum + v_amount;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
    VALUES (order_id, p_d_id, p_w_id, k, p_i_ids[k], p_supply_w_ids[k], NULL, p_quantities[k], v_amount, v_dist);
  END LOOP;

  IF v_unused THEN
    -- 2.4.2.3: the unused item rolls the whole transaction back, d_next_o_id included.
    RAISE EXCEPTION 'New-Order of district (%, %) has an unused item id: rolled back (2.4.2.3)', p_w_id, p_d_id
      USING ERRCODE = 'SB001';
  END IF;
  -- 2.4.2.2: total = sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax).
  total_cents := round(v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax) * 100);
END
$$;

-- The customer chosen by last name for Payment and Order-Status (2.5.2.2, 2.6.2.2):
-- the row at position ceil(n/2) of the n customers of the district named p_c_last,
-- ordered by c_first (c_id breaks ties so that every run picks the same row).
CREATE OR REPLACE FUNCTION storbench_customer_by_name(p_w_id integer, p_d_id integer, p_c_last text)
RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_ids integer[];
BEGIN
  SELECT array_agg(c_id ORDER BY c_first, c_id) INTO v_ids
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
  IF v_ids IS NULL THEN
    RAISE EXCEPTION 'no customer named % in district (%, %)', p_c_last, p_w_id, p_d_id
      USING ERRCODE = 'P0002';
  END IF;
  RETURN v_ids[(cardinality(v_ids) + 1) / 2];
END
$$;

-- Payment (2.5.2). The customer is p_c_id, or when p_by_name the one
-- storbench_customer_by_name picks. The amount arrives in cents. Returns the paid
-- customer's id.
CREATE OR REPLACE FUNCTION storbench_payment(
  p_w_id integer, p_d_id integer, p_c_w_id integer, p_c_d_id integer,
  p_c_id integer, p_by_name boolean, p_c_last text, p_amount_cents bigint,
  OUT customer_id integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_amount   numeric(6,2) := p_amount_cents::numeric / 100;
  v_w_name   text;
  v_w_street_1 text; v_w_street_2 text; v_w_city text; v_w_state text; v_w_zip text;
  v_d_name   text;
  v_d_street_1 text; v_d_street_2 text; v_d_city text; v_d_state text; v_d_zip text;
  v_customer customer%ROWTYPE;
BEGIN
  -- 2.5.2.2: the warehouse and district year-to-date, with their names and addresses.
  UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w_id
  RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip
       INTO STRICT v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip;
  UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
  RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip
       INTO STRICT v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip;

  IF p_by_name THEN
    customer_id := storbench_customer_by_name(p_c_w_id, p_c_d_id, p_c_last);
  ELSE
    customer_id := p_c_id;
  END IF;

  -- 2.5.2.2: balance, year-to-date payment and count; a bad-credit customer's c_data
  -- gets the payment prepended, keeping 500 characters.
  UPDATE customer
     SET c_balance = c_balance - v_amount,
         c_ytd_payment = c_ytd_payment + v_amount,
         c_payment_cnt = c_payment_cnt + 1,
         c_data = CASE WHEN c_credit = 'BC'
                       THEN left(format('%s %s %s %s %s %s|', c_id, c_d_id, c_w_id, p_d_id, p_w_id, v_amount) || c_data, 500)
                       ELSE c_data END
   WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = customer_id
  RETURNING * INTO STRICT v_customer;

  -- 2.5.2.2: the history row; h_data is w_name and d_name separated by 4 spaces.
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  VALUES (customer_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, now() AT TIME ZONE 'UTC', v_amount,
          v_w_name || '    ' || v_d_name);
END
$$;

-- Order-Status (2.6.2), read-only. STABLE: every statement reads the call's one
-- snapshot, so the order and its lines are consistent. The customer is chosen as in
-- Payment. Returns the customer's id, its latest order's id (0 when it has none) and
-- that order's line count.
CREATE OR REPLACE FUNCTION storbench_order_status(
  p_w_id integer, p_d_id integer, p_c_id integer, p_by_name boolean, p_c_last text,
  OUT customer_id integer, OUT order_id integer, OUT lines integer)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_balance   numeric;
  v_first     text;
  v_middle    text;
  v_last      text;
  v_entry_d   timestamp;
  v_carrier   integer;
  v_item_ids  integer[];
  v_supply    integer[];
  v_quantity  integer[];
  v_amount    numeric[];
  v_delivery  timestamp[];
BEGIN
  IF p_by_name THEN
    customer_id := storbench_customer_by_name(p_w_id, p_d_id, p_c_last);
  ELSE
    customer_id := p_c_id;
  END IF;
  SELECT c_balance, c_first, c_middle, c_last INTO STRICT v_balance, v_first, v_middle, v_last
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = customer_id;

  -- 2.6.2.2: the customer's latest order (largest o_id) and its lines.
  SELECT o_id, o_entry_d, o_carrier_id INTO order_id, v_entry_d, v_carrier
    FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = customer_id
   ORDER BY o_id DESC LIMIT 1;
  IF order_id IS NULL THEN
    order_id := 0;
    lines := 0;
    RETURN;
  END IF;
  SELECT count(*), array_agg(ol_i_id), array_agg(ol_supply_w_id), array_agg(ol_quantity),
         array_agg(ol_amount), array_agg(ol_delivery_d)
    INTO lines, v_item_ids, v_supply, v_quantity, v_amount, v_delivery
    FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = order_id;
END
$$;

-- Delivery (2.7.4), the 10 districts of a warehouse in one transaction. Each district's
-- oldest new_order row is deleted; a district without one is skipped (2.7.4.2), and so
-- is a district whose oldest order a concurrent Delivery deleted first (the DELETE then
-- finds no row; Deliveries of one warehouse are serialised so that this does not
-- happen). Returns the number of skipped districts.
CREATE OR REPLACE FUNCTION storbench_delivery(p_w_id integer, p_carrier_id integer)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_delivered integer;
BEGIN
  -- One Delivery per warehouse at a time, to commit: see sql/sqlmode/dl_lock.sql.
  PERFORM pg_advisory_xact_lock(21584, p_w_id);
  WITH oldest AS (
    -- min() per district reads one index entry (new_order's key) instead of grouping
    -- the warehouse's ~9000 rows.
    SELECT d AS d_id,
           (SELECT min(no_o_id) FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d) AS o_id
      FROM generate_series(1, 10) AS d -- DistrictsPerWarehouse
  ), taken AS (
    DELETE FROM new_order n USING oldest
     WHERE n.no_w_id = p_w_id AND n.no_d_id = oldest.d_id AND n.no_o_id = oldest.o_id
    RETURNING n.no_d_id, n.no_o_id
  ), ordered AS (
    -- 2.7.4.2: the order's customer; its carrier is set.
    UPDATE orders o SET o_carrier_id = p_carrier_id
      FROM taken t
     WHERE o.o_w_id = p_w_id AND o.o_d_id = t.no_d_id AND o.o_id = t.no_o_id
    RETURNING o.o_d_id, o.o_c_id
  ), lines AS (
    -- 2.7.4.2: every line is dated now; their amounts are summed per order below.
    UPDATE order_line l SET ol_delivery_d = now() AT TIME ZONE 'UTC'
      FROM taken t
     WHERE l.ol_w_id = p_w_id AND l.ol_d_id = t.no_d_id AND l.ol_o_id = t.no_o_id
    RETURNING l.ol_d_id, l.ol_amount
  ), customers AS (
    -- 2.7.4.2: the customer's balance grows by the sum; one more delivery.
    UPDATE customer c
       SET c_balance = c.c_balance + coalesce(a.amount, 0),
           c_delivery_cnt = c.c_delivery_cnt + 1
      FROM ordered o
      LEFT JOIN (SELECT ol_d_id, sum(ol_amount) AS amount FROM lines GROUP BY ol_d_id) a
        ON a.ol_d_id = o.o_d_id
     WHERE c.c_w_id = p_w_id AND c.c_d_id = o.o_d_id AND c.c_id = o.o_c_id
  )
  SELECT count(*) INTO v_delivered FROM taken;
  RETURN 10 - v_delivered;
END
$$;

-- Stock-Level (2.8.2), read-only (isolation level 1 suffices, 2.8.2.1): the distinct
-- items of the district's last 20 orders whose stock in the warehouse is below the
-- threshold.
CREATE OR REPLACE FUNCTION storbench_stock_level(p_w_id integer, p_d_id integer, p_threshold integer)
RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_next  integer;
  v_count integer;
BEGIN
  SELECT d_next_o_id INTO STRICT v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT count(DISTINCT s.s_i_id) INTO v_count
    FROM order_line ol
    JOIN stock s ON s.s_w_id = p_w_id AND s.s_i_id = ol.ol_i_id
   WHERE ol.ol_w_id = p_w_id AND ol.ol_d_id = p_d_id
     AND ol.ol_o_id >= v_next - 20 AND ol.ol_o_id < v_next
     AND s.s_quantity < p_threshold;
  RETURN v_count;
END
$$;
