SELECT customer_id, order_id, lines FROM storbench_order_status($1, $2, $3, $4, $5)
