-- Load balancers (NodeBalancers). The load-balancer area owns this file and adds its configs,
-- nodes and counters here; other areas rely only on id, account_id, label and region.
-- The balancer's IPv4 address is also kept as an integer (v4) so that allocation reads what is
-- taken in a pool with one range query, together with the instances' addresses.
CREATE TABLE nodebalancers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    region TEXT NOT NULL,
    ipv4 TEXT NOT NULL UNIQUE,
    v4 BIGINT NOT NULL UNIQUE,
    ipv6 TEXT UNIQUE,
    client_conn_throttle BIGINT NOT NULL DEFAULT 0,
    tags TEXT NOT NULL DEFAULT '[]',
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (account_id, label)
);
CREATE INDEX nodebalancers_account ON nodebalancers(account_id, id);

-- One listening port of a balancer. `check_type` is the API's `check` (a reserved word in SQL).
-- `ssl_key` is kept for the data plane and never returned.
CREATE TABLE nodebalancer_configs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    nodebalancer_id BIGINT NOT NULL REFERENCES nodebalancers(id),
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT,
    port BIGINT NOT NULL,
    protocol TEXT NOT NULL,
    algorithm TEXT NOT NULL,
    stickiness TEXT NOT NULL,
    check_type TEXT NOT NULL,
    check_interval BIGINT NOT NULL,
    check_timeout BIGINT NOT NULL,
    check_attempts BIGINT NOT NULL,
    check_path TEXT NOT NULL,
    check_body TEXT NOT NULL,
    check_passive INTEGER NOT NULL,
    proxy_protocol TEXT NOT NULL,
    cipher_suite TEXT NOT NULL,
    ssl_cert TEXT,
    ssl_key TEXT,
    ssl_commonname TEXT NOT NULL DEFAULT '',
    ssl_fingerprint TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (nodebalancer_id, port)
);
CREATE INDEX nodebalancer_configs_account ON nodebalancer_configs(account_id, id);

-- A back end of a config: `address` as the API shows it, its IPv4 also as an integer (v4) to
-- join with the instances' private addresses. `status` is written from the data plane's health
-- checks (UP, DOWN, unknown), so every replica sees it.
CREATE TABLE nodebalancer_nodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    config_id BIGINT NOT NULL REFERENCES nodebalancer_configs(id),
    nodebalancer_id BIGINT NOT NULL REFERENCES nodebalancers(id),
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    address TEXT NOT NULL,
    v4 BIGINT NOT NULL,
    port BIGINT NOT NULL,
    weight BIGINT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'unknown',
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (config_id, label)
);
CREATE INDEX nodebalancer_nodes_account ON nodebalancer_nodes(account_id, id);
CREATE INDEX nodebalancer_nodes_v4 ON nodebalancer_nodes(v4);

-- Traffic of a balancer per 5-minute period (bucket = unix seconds of its start), summed from
-- the data plane's samples; feeds `transfer` and the stats series.
CREATE TABLE nodebalancer_traffic (
    nodebalancer_id BIGINT NOT NULL,
    bucket BIGINT NOT NULL,
    connections BIGINT NOT NULL DEFAULT 0,
    bytes_in BIGINT NOT NULL DEFAULT 0,
    bytes_out BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (nodebalancer_id, bucket)
);
