-- Delivery: one Delivery per warehouse at a time (held to commit). Two concurrent
-- Deliveries would otherwise race for the same oldest orders and the loser would skip
-- districts that still have undelivered orders; serialised, the second delivers the
-- next oldest ones, as a serial execution would (2.7.4.2). New-Order and Payment never
-- take this lock. 21584 (0x5450, "TP") namespaces storbench's advisory locks; the same
-- key is in functions.sql.
SELECT pg_advisory_xact_lock(21584, $1)
