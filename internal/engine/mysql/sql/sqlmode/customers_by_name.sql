-- Payment and Order-Status by last name (2.5.2.2, 2.6.2.2): the district's customers
-- of that name, ordered by c_first; the client takes position ceil(n/2). c_id breaks
-- ties so that every run picks the same row. A plain (snapshot) read: names never
-- change.
SELECT c_id FROM customer
 WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?
 ORDER BY c_first, c_id
