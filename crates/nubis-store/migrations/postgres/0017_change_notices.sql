-- Change notices for the read caches of the API replicas (docs/decisions.md, "The read cache on
-- PostgreSQL: change notices"). A statement that writes one of the tables the cache tracks
-- notifies every replica listening on `nubis_changes` when its transaction commits (the table's
-- name is the payload), and records the table in the transaction's `nubis.touched` setting so
-- that the replica that wrote it invalidates its own cache before it answers. The list is the
-- one in nubis-store/src/cache.rs (TABLES).
CREATE OR REPLACE FUNCTION nubis_change_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('nubis.touched', COALESCE(current_setting('nubis.touched', true), '') || ' ' || TG_TABLE_NAME, true);
  PERFORM pg_notify('nubis_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;

DO $$
DECLARE t TEXT;
BEGIN
  FOREACH t IN ARRAY ARRAY['accounts', 'users', 'tokens', 'grants', 'account_billing', 'vpcs', 'vpc_subnets',
                           'instances', 'instance_interfaces', 'ip_addresses', 'ipv6_ranges', 'ip_shares',
                           'nodebalancers', 'nodebalancer_configs', 'nodebalancer_nodes', 'nodebalancer_traffic',
                           'firewalls', 'firewall_devices'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION nubis_change_notice()', t || '_change_notice', t);
  END LOOP;
END
$$;
