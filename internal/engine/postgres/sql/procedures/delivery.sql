SELECT storbench_delivery($1, $2)
