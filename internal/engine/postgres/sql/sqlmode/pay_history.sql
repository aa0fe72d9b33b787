-- Payment (2.5.2.2): the history row, dated now (UTC); h_data is w_name ($7) and
-- d_name ($8) separated by 4 spaces; $6 is the amount in cents.
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES ($1, $2, $3, $4, $5, now() AT TIME ZONE 'UTC', ($6::bigint::numeric / 100)::numeric(6,2),
        $7::text || '    ' || $8::text)
