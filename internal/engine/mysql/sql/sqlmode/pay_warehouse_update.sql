-- Payment (2.5.2.2): the warehouse's year-to-date grows by the amount, given in cents.
UPDATE warehouse SET w_ytd = w_ytd + ? / 100 WHERE w_id = ?
