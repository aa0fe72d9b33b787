INSERT INTO storbench_build (warehouses, seed, c_load, built_at, version, build_schema) VALUES (?, ?, ?, ?, ?, ?)
