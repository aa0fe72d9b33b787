-- What storbench created in this database (engine.ObjectsTable): each table of a
-- build, entered in the transaction that creates it. Drop removes these and nothing
-- else.
CREATE TABLE storbench_objects (
  kind TEXT NOT NULL, -- 'table'
  name TEXT NOT NULL
);
