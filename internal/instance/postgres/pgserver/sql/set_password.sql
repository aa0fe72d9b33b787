-- The superuser's password, given as its SCRAM verifier, which the server stores as
-- it is. Read by a standalone backend (postgres --single), which takes each line as a
-- statement, without parameters: VERIFIER is replaced by the verifier, which holds no
-- quote (base64, $ and :).
ALTER ROLE postgres PASSWORD 'VERIFIER'
