-- New-Order (2.4.2.2): the warehouse's tax, in 1/10000.
SELECT (w_tax * 10000)::integer FROM warehouse WHERE w_id = $1
