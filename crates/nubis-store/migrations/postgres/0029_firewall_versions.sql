-- Firewall rule versions (the hosted API's `rules.version` and `/history`): the firewall's current
-- version, and every version of its rules with the firewall's status when it was made. Existing
-- firewalls start at version 1 with their current rules.
ALTER TABLE firewalls ADD COLUMN rules_version BIGINT NOT NULL DEFAULT 1;
CREATE TABLE firewall_rule_versions (
    firewall_id BIGINT NOT NULL,
    version BIGINT NOT NULL,
    rules TEXT NOT NULL,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (firewall_id, version)
);
INSERT INTO firewall_rule_versions (firewall_id, version, rules, status, created)
    SELECT id, 1, rules, status, updated FROM firewalls;

-- Each account's default firewalls (`/networking/firewalls/settings`); null: none.
CREATE TABLE firewall_settings (
    account_id BIGINT PRIMARY KEY,
    linode BIGINT,
    nodebalancer BIGINT,
    public_interface BIGINT,
    vpc_interface BIGINT
);
