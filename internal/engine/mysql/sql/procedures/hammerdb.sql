-- HammerDB's MariaDB and MySQL builds (mariaoltp.tcl, mysqloltp.tcl) leave five
-- procedures, NEWORD, DELIVERY, PAYMENT, OSTAT and SLEV, in the database of their
-- tables: their names, none unless all five are there.
WITH r AS (
  SELECT routine_name FROM information_schema.routines
  WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE'
    AND upper(routine_name) IN ('NEWORD', 'DELIVERY', 'PAYMENT', 'OSTAT', 'SLEV')
)
SELECT routine_name FROM r WHERE (SELECT count(*) FROM r) = 5 ORDER BY routine_name
