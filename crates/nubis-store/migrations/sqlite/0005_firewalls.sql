-- Firewalls and their devices (assignments to instances and load balancers).
--
-- The rules are kept as one JSON document (validated before they are written). A device row
-- points at exactly one service through a real foreign key. `active` mirrors the firewall's
-- status (enabled) on each of its devices, so that "a service has at most one active firewall"
-- and "at most one load balancer per firewall" are unique indexes, not read-then-write checks.
CREATE TABLE firewalls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    status TEXT NOT NULL,
    rules TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (account_id, label)
);
CREATE INDEX firewalls_account ON firewalls(account_id, id);

CREATE TABLE firewall_devices (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    firewall_id BIGINT NOT NULL REFERENCES firewalls(id),
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    instance_id BIGINT REFERENCES instances(id) ON DELETE CASCADE,
    nodebalancer_id BIGINT REFERENCES nodebalancers(id) ON DELETE CASCADE,
    active INTEGER NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    CHECK ((instance_id IS NULL) <> (nodebalancer_id IS NULL)),
    UNIQUE (firewall_id, instance_id),
    UNIQUE (firewall_id, nodebalancer_id)
);
CREATE INDEX firewall_devices_account ON firewall_devices(account_id, id);
CREATE INDEX firewall_devices_firewall ON firewall_devices(firewall_id, id);
CREATE INDEX firewall_devices_instance ON firewall_devices(instance_id);
CREATE INDEX firewall_devices_nodebalancer ON firewall_devices(nodebalancer_id);
CREATE UNIQUE INDEX firewall_devices_one_balancer ON firewall_devices(firewall_id) WHERE nodebalancer_id IS NOT NULL;
CREATE UNIQUE INDEX firewall_devices_active_instance ON firewall_devices(instance_id) WHERE active = 1;
CREATE UNIQUE INDEX firewall_devices_active_nodebalancer ON firewall_devices(nodebalancer_id) WHERE active = 1;
