-- Tags as rows (docs/decisions.md, "Pages located by kept block counts"): each tag of an
-- instance, firewall or load balancer, kept by triggers from the record's `tags` (a JSON array),
-- so that filtering a list on one tag is a lookup in an index instead of a scan of the account's
-- records.
CREATE TABLE list_tags (
    kind TEXT NOT NULL,
    scope_id BIGINT NOT NULL,
    tag TEXT NOT NULL,
    entity_id BIGINT NOT NULL,
    PRIMARY KEY (kind, scope_id, tag, entity_id)
);
CREATE INDEX list_tags_entity ON list_tags(kind, entity_id);
CREATE INDEX list_tags_tag ON list_tags(kind, tag, entity_id);

CREATE TRIGGER tags_instances_ins AFTER INSERT ON instances BEGIN
    INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'instances', NEW.account_id, j.value, NEW.id
    FROM json_each(NEW.tags) j WHERE TRUE ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER tags_instances_del AFTER DELETE ON instances BEGIN
    DELETE FROM list_tags WHERE kind = 'instances' AND entity_id = OLD.id;
END;
CREATE TRIGGER tags_instances_upd AFTER UPDATE OF tags, account_id ON instances
WHEN OLD.tags IS NOT NEW.tags OR OLD.account_id IS NOT NEW.account_id BEGIN
    DELETE FROM list_tags WHERE kind = 'instances' AND entity_id = OLD.id;
    INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'instances', NEW.account_id, j.value, NEW.id
    FROM json_each(NEW.tags) j WHERE TRUE ON CONFLICT DO NOTHING;
END;
INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'instances', x.account_id, j.value, x.id
FROM instances x, json_each(x.tags) j WHERE TRUE ON CONFLICT DO NOTHING;

CREATE TRIGGER tags_firewalls_ins AFTER INSERT ON firewalls BEGIN
    INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'firewalls', NEW.account_id, j.value, NEW.id
    FROM json_each(NEW.tags) j WHERE TRUE ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER tags_firewalls_del AFTER DELETE ON firewalls BEGIN
    DELETE FROM list_tags WHERE kind = 'firewalls' AND entity_id = OLD.id;
END;
CREATE TRIGGER tags_firewalls_upd AFTER UPDATE OF tags, account_id ON firewalls
WHEN OLD.tags IS NOT NEW.tags OR OLD.account_id IS NOT NEW.account_id BEGIN
    DELETE FROM list_tags WHERE kind = 'firewalls' AND entity_id = OLD.id;
    INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'firewalls', NEW.account_id, j.value, NEW.id
    FROM json_each(NEW.tags) j WHERE TRUE ON CONFLICT DO NOTHING;
END;
INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'firewalls', x.account_id, j.value, x.id
FROM firewalls x, json_each(x.tags) j WHERE TRUE ON CONFLICT DO NOTHING;

CREATE TRIGGER tags_nodebalancers_ins AFTER INSERT ON nodebalancers BEGIN
    INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'nodebalancers', NEW.account_id, j.value, NEW.id
    FROM json_each(NEW.tags) j WHERE TRUE ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER tags_nodebalancers_del AFTER DELETE ON nodebalancers BEGIN
    DELETE FROM list_tags WHERE kind = 'nodebalancers' AND entity_id = OLD.id;
END;
CREATE TRIGGER tags_nodebalancers_upd AFTER UPDATE OF tags, account_id ON nodebalancers
WHEN OLD.tags IS NOT NEW.tags OR OLD.account_id IS NOT NEW.account_id BEGIN
    DELETE FROM list_tags WHERE kind = 'nodebalancers' AND entity_id = OLD.id;
    INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'nodebalancers', NEW.account_id, j.value, NEW.id
    FROM json_each(NEW.tags) j WHERE TRUE ON CONFLICT DO NOTHING;
END;
INSERT INTO list_tags (kind, scope_id, tag, entity_id) SELECT DISTINCT 'nodebalancers', x.account_id, j.value, x.id
FROM nodebalancers x, json_each(x.tags) j WHERE TRUE ON CONFLICT DO NOTHING;
