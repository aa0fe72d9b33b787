-- Delivery (2.7.4.2): the order's customer. A locking (current) read: the order may be
-- newer than the transaction's snapshot when the new_order queue runs short.
SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? FOR UPDATE
