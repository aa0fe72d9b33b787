-- New-Order (2.4.2.2): the warehouse's tax, in 1/10000.
SELECT w_tax FROM warehouse WHERE w_id = ?
