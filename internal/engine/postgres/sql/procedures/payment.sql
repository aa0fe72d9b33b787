SELECT customer_id FROM storbench_payment($1, $2, $3, $4, $5, $6, $7, $8)
