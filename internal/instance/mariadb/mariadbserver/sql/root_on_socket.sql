-- mariadb-install-db also makes root@127.0.0.1, root@::1 and root@HOSTNAME without a
-- password: root is kept to the socket, which only the server's user and root reach.
DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost';
DELETE FROM mysql.proxies_priv WHERE User = 'root' AND Host <> 'localhost';
