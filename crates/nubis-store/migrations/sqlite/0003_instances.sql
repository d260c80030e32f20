-- Compute instances, their interfaces (public, VLAN, VPC), IP addresses, IPv6 ranges and
-- shared addresses. IPv4 addresses are also kept as integers for range queries; every
-- address is unique by a constraint, never by a read-then-write check.
CREATE TABLE instances (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    region TEXT NOT NULL,
    type TEXT NOT NULL,
    image TEXT,
    status TEXT NOT NULL,
    -- Where the running transition ends; the runtime completes it (also after a restart).
    target_status TEXT NOT NULL,
    -- Bumped by every power operation, so a stale completion changes nothing.
    op_seq BIGINT NOT NULL DEFAULT 0,
    -- The "started" event the running transition finishes, and who started it.
    op_event_id BIGINT,
    op_username TEXT,
    root_pass_hash TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    grp TEXT NOT NULL DEFAULT '',
    alerts TEXT NOT NULL,
    watchdog_enabled INTEGER NOT NULL DEFAULT 1,
    backups_enabled INTEGER NOT NULL DEFAULT 0,
    has_user_data INTEGER NOT NULL DEFAULT 0,
    host_uuid TEXT NOT NULL,
    -- Operators' flags (`nubis admin instance ...`).
    extra_ipv4_allowed INTEGER NOT NULL DEFAULT 0,
    live_migration INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (account_id, label)
);
CREATE INDEX instances_account ON instances(account_id, id);
CREATE INDEX instances_status ON instances(status);

CREATE TABLE instance_interfaces (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id BIGINT NOT NULL REFERENCES instances(id),
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    region TEXT NOT NULL,
    position BIGINT NOT NULL,
    purpose TEXT NOT NULL,
    is_primary INTEGER NOT NULL DEFAULT 0,
    label TEXT,
    ipam_address TEXT,
    vpc_id BIGINT REFERENCES vpcs(id),
    subnet_id BIGINT REFERENCES vpc_subnets(id),
    vpc_ipv4 TEXT,
    vpc_v4 BIGINT,
    nat_1_1 TEXT,
    created TEXT NOT NULL,
    UNIQUE (instance_id, position),
    UNIQUE (subnet_id, vpc_v4)
);
CREATE INDEX instance_interfaces_subnet ON instance_interfaces(subnet_id);
CREATE INDEX instance_interfaces_account ON instance_interfaces(account_id, id);
CREATE INDEX instance_interfaces_vlan ON instance_interfaces(account_id, region, label);

CREATE TABLE ip_addresses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL UNIQUE,
    v4 BIGINT UNIQUE,
    kind TEXT NOT NULL,
    public INTEGER NOT NULL,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    region TEXT NOT NULL,
    instance_id BIGINT NOT NULL REFERENCES instances(id),
    rdns TEXT,
    created TEXT NOT NULL
);
CREATE INDEX ip_addresses_instance ON ip_addresses(instance_id);
CREATE INDEX ip_addresses_account ON ip_addresses(account_id, id);

CREATE TABLE ipv6_ranges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    range_start TEXT NOT NULL UNIQUE,
    prefix BIGINT NOT NULL,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    region TEXT NOT NULL,
    instance_id BIGINT NOT NULL REFERENCES instances(id),
    route_target TEXT NOT NULL,
    created TEXT NOT NULL,
    UNIQUE (account_id, region),
    UNIQUE (instance_id)
);
CREATE INDEX ipv6_ranges_region ON ipv6_ranges(region);

-- Addresses (IPv4, or an IPv6 range's first address) shared with an instance that does not
-- own them (IP failover).
CREATE TABLE ip_shares (
    instance_id BIGINT NOT NULL REFERENCES instances(id),
    address TEXT NOT NULL,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    PRIMARY KEY (instance_id, address)
);
CREATE INDEX ip_shares_address ON ip_shares(address);
CREATE INDEX ip_shares_account ON ip_shares(account_id);
