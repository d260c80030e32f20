-- Load balancers (NodeBalancers). The load-balancer area owns this file and adds its configs,
-- nodes and counters here; other areas rely only on id, account_id, label and region.
CREATE TABLE nodebalancers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    region TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (account_id, label)
);
CREATE INDEX nodebalancers_account ON nodebalancers(account_id, id);
