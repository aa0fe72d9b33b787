-- Payment (2.5.2.2): the district's year-to-date grows by the amount, in cents.
UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?
