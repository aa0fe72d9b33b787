-- What storbench created in this database (engine.ObjectsTable): each table and
-- procedure of a build, entered before it is created. Drop removes these and
-- nothing else.
CREATE TABLE storbench_objects (
  kind VARCHAR(16) NOT NULL, -- 'table' or 'routine'
  name VARCHAR(64) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
