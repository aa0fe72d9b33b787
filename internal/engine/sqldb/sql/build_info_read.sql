-- Every column in table order (DB.readBuildInfo): a build recorded before
-- build_schema existed has one column fewer.
SELECT * FROM storbench_build
