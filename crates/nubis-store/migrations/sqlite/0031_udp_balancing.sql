-- UDP balancing: a balancer's new UDP sessions per second per client address (0: off), and a
-- config's health-check port and idle session timeout (seconds) for protocol `udp`.
ALTER TABLE nodebalancers ADD COLUMN client_udp_sess_throttle BIGINT NOT NULL DEFAULT 0;
ALTER TABLE nodebalancer_configs ADD COLUMN udp_check_port BIGINT NOT NULL DEFAULT 80;
ALTER TABLE nodebalancer_configs ADD COLUMN udp_session_timeout BIGINT NOT NULL DEFAULT 16;
