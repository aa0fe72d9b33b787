SELECT count(*) FROM warehouse
