-- Payment (2.5.2.2): the warehouse's year-to-date grows by the amount ($2, in cents).
UPDATE warehouse SET w_ytd = w_ytd + ($2::bigint::numeric / 100)::numeric(6,2)
 WHERE w_id = $1
RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip
