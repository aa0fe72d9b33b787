-- What storbench created in this database (engine.ObjectsTable): each table and
-- routine of a build, entered in the transaction that creates it. Drop removes these
-- and nothing else.
CREATE TABLE storbench_objects (
  kind text NOT NULL, -- 'table' or 'routine'
  name text NOT NULL  -- a routine's as DROP ROUTINE takes it: name(argument types)
);
