-- Indexes for reads by key: a user's latest sign-in, and the interface that uses an address as
-- its 1:1 NAT, and whether an account has instances in a region.
CREATE INDEX logins_user ON logins(user_id, id);
CREATE INDEX instance_interfaces_nat ON instance_interfaces(nat_1_1);
CREATE INDEX instances_region ON instances(account_id, region);
