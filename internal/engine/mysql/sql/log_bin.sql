-- Whether the server writes a binary log, which a build fills with its rows again.
SELECT @@log_bin
