-- Balancer ownership across data-plane processes (docs/dataplane-ownership.md).
-- A data-plane process is a member while its heartbeat is fresh; it serves exactly the balancers
-- whose lease it holds. Times are milliseconds since the epoch on the database's clock, so the
-- processes' own clocks (and the test controls' offset clock) never decide who owns what.
-- No foreign key to nodebalancers: a balancer's delete never waits on a lease; leases of
-- balancers that are gone are swept by the heartbeat.
CREATE TABLE dataplane_members (
    owner TEXT PRIMARY KEY,
    expires BIGINT NOT NULL
);

CREATE TABLE dataplane_leases (
    balancer_id BIGINT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires BIGINT NOT NULL
);

CREATE INDEX dataplane_leases_owner ON dataplane_leases (owner);
