"""The official CLI (`linode-cli`) against nubis, configured only with the API's address and a
token: instances, balancers, VPCs, firewalls, addresses and events, all with `--json`."""

PASSWORD = "aComplexP@ssword-2"


def create_linode(cli, label):
    out = cli(
        "linodes", "create", "--type", "g6-nanode-1", "--region", "us-east", "--image", "linode/debian12",
        "--root_pass", PASSWORD, "--booted", "false", "--label", label,
    )
    assert len(out) == 1 and out[0]["label"] == label
    return out[0]


def wait_status(nubis, cli, linode_id, status):
    nubis.wait_for(lambda: cli("linodes", "view", str(linode_id))[0]["status"] == status,
                   f"linode {linode_id} to be {status}")


def test_linodes_create_list_view_boot(nubis, cli):
    made = create_linode(cli, "cli-one")
    assert made["status"] in ("provisioning", "offline")
    listed = cli("linodes", "list")
    assert made["id"] in [l["id"] for l in listed]
    wait_status(nubis, cli, made["id"], "offline")
    view = cli("linodes", "view", str(made["id"]))
    assert view[0]["label"] == "cli-one" and view[0]["region"] == "us-east"
    cli.run("linodes", "boot", str(made["id"]))
    wait_status(nubis, cli, made["id"], "running")
    # The same record through the spec's names.
    spec = nubis.api("GET", f"/compute/instances/{made['id']}").json()
    assert spec["status"] == "running" and spec["label"] == "cli-one"


def test_networking_ip_add_and_list(nubis, cli):
    made = create_linode(cli, "cli-net")
    wait_status(nubis, cli, made["id"], "offline")
    ip = cli("networking", "ip-add", "--type", "ipv4", "--public", "false", "--linode_id", str(made["id"]))
    assert ip[0]["address"].startswith("192.168.") and ip[0]["linode_id"] == made["id"]
    listed = cli("networking", "ips-list")
    mine = [a for a in listed if a["linode_id"] == made["id"]]
    assert {a["type"] for a in mine} == {"ipv4", "ipv6"}
    assert all(a["public"] for a in mine), "the list leaves private addresses out"
    view = cli("networking", "ip-view", ip[0]["address"])
    assert view[0]["linode_id"] == made["id"] and view[0]["public"] is False


def test_nodebalancers_configs_and_nodes(nubis, cli):
    nb = cli("nodebalancers", "create", "--region", "us-east", "--label", "cli-balancer")[0]
    cfg = cli("nodebalancers", "config-create", str(nb["id"]), "--port", "80", "--protocol", "http",
              "--check", "connection", "--check_interval", "2", "--check_timeout", "1")[0]
    assert cfg["port"] == 80
    made = create_linode(cli, "cli-backend")
    wait_status(nubis, cli, made["id"], "offline")
    private = cli("networking", "ip-add", "--type", "ipv4", "--public", "false", "--linode_id", str(made["id"]))
    address = f"{private[0]['address']}:8080"
    node = cli("nodebalancers", "node-create", str(nb["id"]), str(cfg["id"]), "--label", "backend-1",
               "--address", address)[0]
    assert node["address"] == address
    nodes = cli("nodebalancers", "nodes-list", str(nb["id"]), str(cfg["id"]))
    assert [n["label"] for n in nodes] == ["backend-1"]
    assert cli("nodebalancers", "view", str(nb["id"]))[0]["label"] == "cli-balancer"
    assert nb["id"] in [b["id"] for b in cli("nodebalancers", "list")]


def test_vpcs(nubis, cli):
    vpc = cli("vpcs", "create", "--label", "cli-vpc", "--region", "us-east",
              "--subnets.label", "web", "--subnets.ipv4", "10.0.0.0/24")[0]
    assert [s["label"] for s in vpc["subnets"]] == ["web"]
    assert vpc["id"] in [v["id"] for v in cli("vpcs", "list")]
    subnets = cli("vpcs", "subnets-list", str(vpc["id"]))
    assert subnets[0]["ipv4"] == "10.0.0.0/24" and subnets[0]["linodes"] == []


def test_firewalls_and_devices(nubis, cli):
    made = create_linode(cli, "cli-fw")
    fw = cli("firewalls", "create", "--label", "cli-firewall",
             "--rules.inbound_policy", "ACCEPT", "--rules.outbound_policy", "DROP")[0]
    assert fw["status"] == "enabled" and fw["rules"]["outbound_policy"] == "DROP"
    dev = cli("firewalls", "device-create", str(fw["id"]), "--id", str(made["id"]), "--type", "linode")[0]
    assert dev["entity"]["type"] == "linode" and dev["entity"]["id"] == made["id"]
    devices = cli("firewalls", "devices-list", str(fw["id"]))
    assert [(d["entity"]["type"], d["entity"]["id"]) for d in devices] == [("linode", made["id"])]
    assert fw["id"] in [f["id"] for f in cli("firewalls", "list")]
    assert fw["id"] in [f["id"] for f in cli("linodes", "firewalls-list", str(made["id"]))]


def test_events_list(nubis, cli):
    made = create_linode(cli, "cli-events")
    events = cli("events", "list")
    create = [e for e in events if e["action"] == "linode_create" and e["entity"]["id"] == made["id"]]
    assert create and create[0]["entity"]["type"] == "linode"
    assert create[0]["entity"]["url"] == f"/v4/linode/instances/{made['id']}"
