-- A page of instances shows each instance's public and private IPv4 addresses and its SLAAC
-- address: read by instance from this index alone (an index-only scan), in (instance, id)
-- order, with no sort (docs/decisions.md, "An instance page's addresses from one covering
-- index"). It replaces the index on instance_id alone, which it serves too.
DROP INDEX ip_addresses_instance;
CREATE INDEX ip_addresses_instance ON ip_addresses(instance_id, id) INCLUDE (kind, public, address);
