CALL storbench_stock_level(?, ?, ?)
