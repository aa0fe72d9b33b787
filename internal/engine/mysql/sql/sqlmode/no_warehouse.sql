-- New-Order (2.4.2.2): the warehouse's tax, in 1/10000. A plain read: w_tax never
-- changes, and Payment's lock on the row (for w_ytd) does not block it.
SELECT CAST(w_tax * 10000 AS SIGNED) FROM warehouse WHERE w_id = ?
