-- Configuration profiles and disks of instances (the hosted API's `configs` and `disks`).
-- A profile's device map and boot helpers are JSON objects; its interfaces are the rows of
-- `instance_interfaces` that name it. Interfaces without a profile are Linode interfaces (the
-- newer generation, on the instance itself). `position` stays unique per instance: the order of
-- a profile's interfaces (eth0, eth1, eth2) is the order of their positions.
CREATE TABLE instance_configs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id BIGINT NOT NULL REFERENCES instances(id),
    label TEXT NOT NULL,
    kernel TEXT NOT NULL,
    comments TEXT,
    memory_limit BIGINT NOT NULL DEFAULT 0,
    root_device TEXT NOT NULL,
    run_level TEXT NOT NULL,
    virt_mode TEXT NOT NULL,
    helpers TEXT NOT NULL,
    devices TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX instance_configs_instance ON instance_configs(instance_id, id);

CREATE TABLE instance_disks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id BIGINT NOT NULL REFERENCES instances(id),
    label TEXT NOT NULL,
    size BIGINT NOT NULL,
    filesystem TEXT NOT NULL,
    status TEXT NOT NULL,
    -- The image deployed to the disk, its root password (argon2 hash) and the public keys
    -- installed for root (JSON array), for the runtime.
    image TEXT,
    root_pass_hash TEXT,
    authorized_keys TEXT NOT NULL DEFAULT '[]',
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX instance_disks_instance ON instance_disks(instance_id, id);

ALTER TABLE instance_interfaces ADD COLUMN config_id BIGINT REFERENCES instance_configs(id);
ALTER TABLE instance_interfaces ADD COLUMN default_ipv4 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE instance_interfaces ADD COLUMN default_ipv6 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE instance_interfaces ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE instance_interfaces ADD COLUMN updated TEXT;
CREATE INDEX instance_interfaces_config ON instance_interfaces(config_id, position);

-- The profile the instance was last booted with (its interfaces are the active ones), the
-- generation of its interfaces, and its Network Helper setting.
ALTER TABLE instances ADD COLUMN boot_config_id BIGINT;
ALTER TABLE instances ADD COLUMN interface_generation TEXT NOT NULL DEFAULT 'legacy_config';
ALTER TABLE instances ADD COLUMN network_helper INTEGER NOT NULL DEFAULT 1;

-- Every instance made before profiles existed gets one, holding its interfaces, booted with it.
INSERT INTO instance_configs (instance_id, label, kernel, comments, memory_limit, root_device, run_level, virt_mode,
                              helpers, devices, created, updated)
SELECT id, 'My Disk Profile', 'linode/grub2', NULL, 0, '/dev/sda', 'default', 'paravirt',
       '{"devtmpfs_automount":false,"distro":true,"modules_dep":true,"network":true,"updatedb_disabled":true}',
       '{}', created, updated
FROM instances;
UPDATE instance_interfaces
SET config_id = (SELECT c.id FROM instance_configs c WHERE c.instance_id = instance_interfaces.instance_id);
UPDATE instances SET boot_config_id = (SELECT c.id FROM instance_configs c WHERE c.instance_id = instances.id);
