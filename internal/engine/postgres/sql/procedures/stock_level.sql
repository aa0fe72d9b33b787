SELECT storbench_stock_level($1, $2, $3)
