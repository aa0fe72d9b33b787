-- Delivery (2.7.4.2): the order's lines are dated now (UTC); their amounts, in cents,
-- are summed by the client. A line without an amount adds nothing, as in SUM: HammerDB
-- commits its unused-item New-Orders with a NULL amount on the unused item's line.
UPDATE order_line SET ol_delivery_d = now() AT TIME ZONE 'UTC'
 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3
RETURNING coalesce((ol_amount * 100)::bigint, 0)
