-- Payment (2.5.2.2): the district's year-to-date grows by the amount, given in cents.
UPDATE district SET d_ytd = d_ytd + ? / 100 WHERE d_w_id = ? AND d_id = ?
