-- An object a build creates, entered in its record (record.sql) before it is created.
INSERT INTO storbench_objects (kind, name) VALUES (?, ?)
