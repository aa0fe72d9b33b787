-- build_schema through the row's JSON: a build recorded before it existed has none,
-- which reads as '' (not recorded) instead of failing.
SELECT warehouses, seed, c_load, built_at, version, coalesce(to_jsonb(b) ->> 'build_schema', '')
FROM storbench_build b
