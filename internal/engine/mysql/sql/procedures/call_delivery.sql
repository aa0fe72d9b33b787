CALL storbench_delivery(?, ?)
