SELECT warehouses, seed, c_load, built_at, version FROM storbench_build
