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

-- TG_ARGV[0]: the list (the table's name); the tables share `id`, `account_id` and `tags`.
CREATE FUNCTION nubis_list_tags() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        DELETE FROM list_tags WHERE kind = TG_ARGV[0] AND entity_id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO list_tags (kind, scope_id, tag, entity_id)
        SELECT DISTINCT TG_ARGV[0], NEW.account_id, j, NEW.id FROM jsonb_array_elements_text(NEW.tags::jsonb) j
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER tags_instances AFTER INSERT OR DELETE ON instances FOR EACH ROW EXECUTE FUNCTION nubis_list_tags('instances');
CREATE TRIGGER tags_instances_upd AFTER UPDATE OF tags, account_id ON instances FOR EACH ROW
    WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR OLD.account_id IS DISTINCT FROM NEW.account_id)
    EXECUTE FUNCTION nubis_list_tags('instances');
INSERT INTO list_tags (kind, scope_id, tag, entity_id)
SELECT DISTINCT 'instances', x.account_id, j, x.id FROM instances x, jsonb_array_elements_text(x.tags::jsonb) j ON CONFLICT DO NOTHING;

CREATE TRIGGER tags_firewalls AFTER INSERT OR DELETE ON firewalls FOR EACH ROW EXECUTE FUNCTION nubis_list_tags('firewalls');
CREATE TRIGGER tags_firewalls_upd AFTER UPDATE OF tags, account_id ON firewalls FOR EACH ROW
    WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR OLD.account_id IS DISTINCT FROM NEW.account_id)
    EXECUTE FUNCTION nubis_list_tags('firewalls');
INSERT INTO list_tags (kind, scope_id, tag, entity_id)
SELECT DISTINCT 'firewalls', x.account_id, j, x.id FROM firewalls x, jsonb_array_elements_text(x.tags::jsonb) j ON CONFLICT DO NOTHING;

CREATE TRIGGER tags_nodebalancers AFTER INSERT OR DELETE ON nodebalancers FOR EACH ROW EXECUTE FUNCTION nubis_list_tags('nodebalancers');
CREATE TRIGGER tags_nodebalancers_upd AFTER UPDATE OF tags, account_id ON nodebalancers FOR EACH ROW
    WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR OLD.account_id IS DISTINCT FROM NEW.account_id)
    EXECUTE FUNCTION nubis_list_tags('nodebalancers');
INSERT INTO list_tags (kind, scope_id, tag, entity_id)
SELECT DISTINCT 'nodebalancers', x.account_id, j, x.id FROM nodebalancers x, jsonb_array_elements_text(x.tags::jsonb) j ON CONFLICT DO NOTHING;
