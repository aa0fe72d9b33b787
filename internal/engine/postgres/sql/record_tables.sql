-- The tables CreateTables creates ($1), entered in its transaction.
INSERT INTO storbench_objects (kind, name) SELECT 'table', unnest($1::text[])
