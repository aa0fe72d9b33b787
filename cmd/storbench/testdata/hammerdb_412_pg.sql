-- Turns a storbench build made with --schema hammerdb into a database as HammerDB 4.12
-- leaves one on PostgreSQL after a few runs (facts from its pgoltp.tcl): no storbench
-- build record or functions; HammerDB's column types; its five transaction procedures
-- and DBMS_RANDOM (stand-ins here: only their names and arguments matter to storbench);
-- and committed unused-item New-Orders, whose last line names item 100001 with a NULL
-- amount and distribution info.
DROP TABLE storbench_build, storbench_objects;
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE n.nspname = current_schema() AND p.proname LIKE 'storbench\_%' LOOP
    EXECUTE 'DROP FUNCTION ' || f;
  END LOOP;
END $$;

ALTER TABLE customer ALTER c_since TYPE timestamptz, ALTER c_payment_cnt TYPE smallint,
  ALTER c_delivery_cnt TYPE smallint;
ALTER TABLE warehouse ALTER w_ytd TYPE numeric(16,2);
ALTER TABLE history ALTER h_date TYPE timestamptz;
ALTER TABLE orders ALTER o_entry_d TYPE timestamptz;
ALTER TABLE order_line ALTER ol_delivery_d TYPE timestamptz;
ALTER TABLE stock ALTER s_order_cnt TYPE smallint, ALTER s_remote_cnt TYPE smallint;

CREATE FUNCTION dbms_random(integer, integer) RETURNS integer
  LANGUAGE sql AS 'SELECT $1 + floor(random() * ($2 - $1 + 1))::integer';
CREATE PROCEDURE neword(integer, integer, integer, integer, integer, INOUT numeric,
  INOUT varchar, INOUT varchar, INOUT numeric, INOUT numeric, INOUT integer, timestamp)
  LANGUAGE plpgsql AS 'BEGIN END';
CREATE PROCEDURE delivery(integer, integer, timestamp) LANGUAGE plpgsql AS 'BEGIN END';
CREATE PROCEDURE payment(integer, integer, integer, integer, integer, integer, numeric,
  varchar, INOUT varchar, timestamp) LANGUAGE plpgsql AS 'BEGIN END';
CREATE PROCEDURE ostat(integer, integer, integer, integer, INOUT varchar)
  LANGUAGE plpgsql AS 'BEGIN END';
CREATE PROCEDURE slev(integer, integer, integer, INOUT integer) LANGUAGE plpgsql AS 'BEGIN END';

-- HammerDB commits the 1% of New-Orders with an unused item: here every third order,
-- so that a short run's Order-Status and Delivery meet such lines.
UPDATE order_line SET ol_i_id = 100001, ol_amount = NULL, ol_dist_info = NULL
 WHERE ol_o_id % 3 = 0
   AND ol_number = (SELECT o_ol_cnt FROM orders WHERE o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id);
ANALYZE;
