-- New-Order (2.4.2.2): one line's item, its price in cents. An unused item id finds no
-- row (2.4.2.3).
SELECT CAST(i_price * 100 AS SIGNED), i_name, i_data FROM item WHERE i_id = ?
