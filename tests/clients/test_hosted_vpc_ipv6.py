"""The official SDK and CLI on VPC IPv6: a VPC with an IPv6 range and a subnet with one inside
it, created and read back, and the VPC default ranges."""

import ipaddress


def _inside(inner: str, outer: str) -> bool:
    return ipaddress.ip_network(inner).subnet_of(ipaddress.ip_network(outer))


def test_sdk_creates_a_vpc_and_a_subnet_with_ipv6(client):
    vpc = client.vpcs.create("sdk-vpc-ipv6", "us-east", ipv6=[{"range": "auto"}])
    vrange = vpc.ipv6[0].range
    assert vrange.startswith("2001:db8:") and vrange.endswith("/52")
    subnet = vpc.subnet_create("sdk-six", ipv4="10.0.0.0/24", ipv6=[{"range": "/60"}])
    assert subnet.ipv6[0].range.endswith("/60") and _inside(subnet.ipv6[0].range, vrange)
    again = client.load(type(vpc), vpc.id)
    assert again.ipv6[0].range == vrange
    assert [s.ipv6[0].range for s in again.subnets] == [subnet.ipv6[0].range]
    ranges = client.vpcs.default_ranges()
    assert "10.0.0.0/8" in ranges.default_ipv4_ranges
    vpc.delete()


def test_cli_creates_a_vpc_and_a_subnet_with_ipv6(cli):
    vpc = cli("vpcs", "create", "--label", "cli-vpc-ipv6", "--region", "us-east",
              "--ipv6", '[{"range": "/52"}]')[0]
    vrange = vpc["ipv6"][0]["range"]
    assert vrange.endswith("/52")
    subnet = cli("vpcs", "subnet-create", str(vpc["id"]), "--label", "cli-six", "--ipv4", "10.0.0.0/24",
                 "--ipv6", '[{"range": "auto"}]')[0]
    assert subnet["ipv6"][0]["range"].endswith("/56") and _inside(subnet["ipv6"][0]["range"], vrange)
    viewed = cli("vpcs", "view", str(vpc["id"]))[0]
    assert viewed["ipv6"] == [{"range": vrange}]
    assert cli("vpcs", "subnets-list", str(vpc["id"]))[0]["ipv6"] == subnet["ipv6"]
    ranges = cli("vpcs", "default-ranges-all-list")[0]
    assert ranges["forbidden_ipv4_ranges"] == ["192.168.128.0/17"]
