-- VPC IPv6: a VPC's /52 is carved from its region's IPv6 range block (the same block the
-- /56 and /64 ranges come from; VPC /52s are all aligned, so equal means overlapping and the
-- unique index keeps two VPCs off one range); a subnet's range lies inside its VPC's; a VPC
-- interface gets a /64 SLAAC range of its subnet (unique in the subnet), its SLAAC address in
-- it, and optionally further routed ranges of the subnet (space-separated CIDRs).
ALTER TABLE vpcs ADD COLUMN ipv6_range TEXT;
CREATE UNIQUE INDEX vpcs_ipv6_range ON vpcs(ipv6_range);
CREATE INDEX vpcs_region ON vpcs(region, id);
ALTER TABLE vpc_subnets ADD COLUMN ipv6_range TEXT;
ALTER TABLE instance_interfaces ADD COLUMN vpc_ipv6_range TEXT;
ALTER TABLE instance_interfaces ADD COLUMN vpc_ipv6_address TEXT;
ALTER TABLE instance_interfaces ADD COLUMN vpc_ipv6_ranges TEXT NOT NULL DEFAULT '';
ALTER TABLE instance_interfaces ADD COLUMN vpc_ipv6_public BOOLEAN NOT NULL DEFAULT FALSE;
CREATE UNIQUE INDEX instance_interfaces_vpc_ipv6 ON instance_interfaces(subnet_id, vpc_ipv6_range);
