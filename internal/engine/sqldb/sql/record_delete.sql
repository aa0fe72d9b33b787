-- An object dropped leaves the record.
DELETE FROM storbench_objects WHERE kind = ? AND name = ?
