-- What the server's sessions are doing at this moment, counted by kind, state and wait
-- event (waits.go maps them to classes). Left out: the sampler's own session, idle
-- client sessions, and the clients of other databases than the benchmark's ($1).
SELECT backend_type, coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), count(*)
FROM pg_stat_activity
WHERE pid <> pg_backend_pid()
  AND state IS DISTINCT FROM 'idle'
  AND (backend_type NOT IN ('client backend', 'parallel worker') OR datname = $1)
GROUP BY 1, 2, 3, 4
