SELECT order_id, total_cents, brands FROM storbench_new_order($1, $2, $3, $4, $5, $6)
