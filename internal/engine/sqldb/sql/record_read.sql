SELECT kind, name FROM storbench_objects
