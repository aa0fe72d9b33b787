INSERT INTO storbench_build (warehouses, seed, c_load, built_at, version) VALUES ($1, $2, $3, $4, $5)
