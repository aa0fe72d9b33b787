-- LOAD DATA LOCAL turns bad values into warnings (as IGNORE does): the first one, if any.
SHOW WARNINGS LIMIT 1
