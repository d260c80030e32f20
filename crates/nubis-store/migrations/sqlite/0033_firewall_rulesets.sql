-- Firewall rule sets (the hosted API's `/networking/firewalls/rulesets`): a named, ordered list of
-- rules for one direction that firewalls reference by id in their `inbound` or `outbound`.
-- The rules are one JSON document, as a firewall's. Labels are unique per account.
CREATE TABLE firewall_rulesets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    label TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    rules TEXT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (account_id, label)
);
CREATE INDEX firewall_rulesets_account ON firewall_rulesets(account_id, id);

-- Which firewalls reference which rule sets (kept with the firewall's rules in the same
-- transaction): a referenced rule set cannot be deleted (the foreign key backs the check), and a
-- change of a set finds the firewalls, and through their devices the services, to republish.
CREATE TABLE firewall_ruleset_refs (
    firewall_id BIGINT NOT NULL REFERENCES firewalls(id) ON DELETE CASCADE,
    ruleset_id BIGINT NOT NULL REFERENCES firewall_rulesets(id),
    PRIMARY KEY (firewall_id, ruleset_id)
);
CREATE INDEX firewall_ruleset_refs_ruleset ON firewall_ruleset_refs(ruleset_id);
