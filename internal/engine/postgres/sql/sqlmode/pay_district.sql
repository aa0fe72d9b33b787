-- Payment (2.5.2.2): the district's year-to-date grows by the amount ($3, in cents).
UPDATE district SET d_ytd = d_ytd + ($3::bigint::numeric / 100)::numeric(6,2)
 WHERE d_w_id = $1 AND d_id = $2
RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip
