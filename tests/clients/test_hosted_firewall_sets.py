"""The official SDK and CLI on the hosted API's firewall rule sets, the expanded rules, prefix
lists, and an instance's firewalls replaced and applied again (the SDK has no objects for the
newer operations yet: it calls them through its generic requests)."""


def test_sdk_creates_a_rule_set_uses_it_in_a_firewall_and_reads_the_expansion(client):
    rule = {"action": "ACCEPT", "protocol": "TCP", "ports": "443",
            "addresses": {"ipv4": ["pl:system:private:ipv4", "198.51.100.0/24"]}}
    s = client.post("/networking/firewalls/rulesets",
                    data={"label": "sdk-set", "description": "https", "type": "inbound", "rules": [rule]})
    assert s["version"] == 1 and s["is_service_defined"] is False and s["deleted"] is None
    fw = client.networking.firewall_create("sdk-uses-set", rules={"inbound_policy": "DROP", "outbound_policy": "ACCEPT"})
    fw.update_rules({"inbound": [{"ruleset": s["id"]}], "inbound_policy": "DROP", "outbound_policy": "ACCEPT"})
    assert fw.get_rules()["inbound"] == [{"ruleset": s["id"]}]
    e = client.get(f"/networking/firewalls/{fw.id}/rules/expansion")
    assert [r["ports"] for r in e["inbound"]] == ["443"]
    private = client.get("/networking/prefixlists", filters={"name": "pl:system:private:ipv4"})["data"][0]
    assert e["inbound"][0]["addresses"]["ipv4"] == private["ipv4"] + ["198.51.100.0/24"]
    assert client.get(f"/networking/prefixlists/{private['id']}")["name"] == "pl:system:private:ipv4"
    s2 = client.put(f"/networking/firewalls/rulesets/{s['id']}", data={"rules": [dict(rule, ports="8443")]})
    assert s2["version"] == 2
    assert client.get(f"/networking/firewalls/{fw.id}/rules/expansion")["inbound"][0]["ports"] == "8443"


def test_cli_creates_a_rule_set_uses_it_and_reads_the_expansion_and_a_prefix_list(cli):
    s = cli("firewalls", "ruleset-create", "--label", "cli-set", "--description", "ssh", "--type", "inbound",
            "--rules", '[{"action": "ACCEPT", "protocol": "TCP", "ports": "22", "addresses": {"ipv4": ["192.0.2.0/24"]}}]')[0]
    assert s["type"] == "inbound" and s["version"] == 1
    assert cli("firewalls", "ruleset-view", str(s["id"]))[0]["label"] == "cli-set"
    assert "cli-set" in [x["label"] for x in cli("firewalls", "rulesets-list")]
    fw = cli("firewalls", "create", "--label", "cli-uses-set", "--rules.inbound_policy", "DROP",
             "--rules.outbound_policy", "ACCEPT")[0]
    cli("firewalls", "rules-update", str(fw["id"]), "--inbound", f'[{{"ruleset": {s["id"]}}}]')
    expanded = cli("firewalls", "expansion-view", str(fw["id"]))[0]
    assert expanded["inbound"][0]["ports"] == "22"
    lists = cli("prefixlists", "prefixlists-list")
    assert "pl:system:private:ipv4" in [x["name"] for x in lists]
    one = cli("prefixlists", "prefixlist-view", str(lists[0]["id"]))[0]
    assert one["name"] == lists[0]["name"]
    # A referenced set is not deleted.
    p = cli.run("firewalls", "ruleset-delete", str(s["id"]), check=False)
    assert p.returncode != 0 and "referenced by firewall" in p.stderr


def test_cli_replaces_and_applies_an_instances_firewalls(cli):
    inst = cli("linodes", "create", "--region", "us-east", "--type", "g6-nanode-1", "--label", "cli-fw-put",
               "--booted", "false")[0]
    fw = cli("firewalls", "create", "--label", "cli-put-fw", "--rules.inbound_policy", "DROP",
             "--rules.outbound_policy", "ACCEPT")[0]
    out = cli("linodes", "firewalls-update", str(inst["id"]), "--firewall_ids", str(fw["id"]))
    assert [f["id"] for f in out] == [fw["id"]]
    assert [f["id"] for f in cli("linodes", "firewalls-list", str(inst["id"]))] == [fw["id"]]
    assert cli.run("linodes", "post-apply-firewalls", str(inst["id"])).returncode == 0
