-- sum(d_next_o_id) grows by one per committed New-Order: the database's NOPM.
SELECT coalesce(sum(d_next_o_id), 0) FROM district
