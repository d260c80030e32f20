"""The official SDK and CLI on the hosted API's operations around the spec's resources: the
catalog (images the clients' docs use, balancer types, transfer prices), firewall rule versions,
maintenance policies and the account's choice, event times."""


def test_sdk_reads_a_firewalls_rule_history(client):
    fw = client.networking.firewall_create("sdk-history", rules={"inbound_policy": "DROP", "outbound_policy": "ACCEPT"})
    rules = {
        "inbound": [{"ports": "22", "protocol": "TCP", "addresses": {"ipv4": ["198.51.100.0/24"]},
                     "action": "ACCEPT", "label": "ssh"}],
        "inbound_policy": "DROP",
        "outbound_policy": "ACCEPT",
    }
    fw.update_rules(rules)
    history = fw.rule_versions
    assert [v["rules"]["version"] for v in history["data"]] == [1, 2]
    v2 = fw.get_rule_version(2)
    assert v2["version"] == 2 and len(v2["fingerprint"]) == 8
    assert v2["inbound"][0]["label"] == "ssh"
    assert fw.get_rule_version(1)["inbound"] == []


def test_cli_lists_and_views_a_firewalls_rule_versions(cli):
    fw = cli("firewalls", "create", "--label", "cli-history", "--rules.inbound_policy", "DROP",
             "--rules.outbound_policy", "ACCEPT")[0]
    cli("firewalls", "rules-update", str(fw["id"]), "--inbound",
        '[{"ports": "22", "protocol": "TCP", "addresses": {"ipv4": ["198.51.100.0/24"]}, "action": "ACCEPT", "label": "ssh"}]')
    versions = cli("firewalls", "versions-list", str(fw["id"]))
    assert [v["rules"]["version"] for v in versions] == [1, 2]
    one = cli("firewalls", "version-view", str(fw["id"]), "2")[0]
    assert one["version"] == 2 and one["inbound"][0]["label"] == "ssh"


def test_sdk_catalog_prices_and_images(client):
    debian11 = client.load(__import__("linode_api4").Image, "linode/debian11")
    assert debian11.label == "Debian 11"
    nb_types = client.nodebalancers.types()
    assert nb_types[0].id == "nodebalancer"
    assert {p.id for p in nb_types[0].region_prices} == {"id-cgk", "br-gru"}
    prices = client.networking.transfer_prices()
    assert {p.id for p in prices} == {"distributed_network_transfer", "network_transfer"}
    nano = [t for t in client.linode.types() if t.id == "g6-nanode-1"][0]
    assert {p.id for p in nano.region_prices} == {"id-cgk", "br-gru"}


def test_sdk_maintenance_policies_and_the_account_setting(client):
    slugs = [p.slug for p in client.maintenance.maintenance_policies()]
    assert slugs == ["linode/migrate", "linode/power_off_on"]
    settings = client.account.settings()
    assert settings.maintenance_policy == "linode/migrate"
    settings.maintenance_policy = "linode/power_off_on"
    settings.save()
    assert client.account.settings().maintenance_policy == "linode/power_off_on"
    settings.maintenance_policy = "linode/migrate"
    settings.save()


def test_cli_nodebalancer_types_and_maintenance_policies(cli):
    types = cli("nodebalancers", "types")
    assert types[0]["id"] == "nodebalancer"
    policies = cli("maintenance", "policies-list")
    assert {p["slug"] for p in policies} == {"linode/migrate", "linode/power_off_on"}


def test_sdk_events_carry_their_times_and_source(client):
    client.networking.firewall_create("sdk-event", rules={"inbound_policy": "DROP", "outbound_policy": "ACCEPT"})
    ev = [e for e in client.account.events() if e.action == "firewall_create"][0]
    assert ev.source == "user"
    assert ev.start_time is not None and ev.complete_time is not None
    assert ev.description is None and ev.not_before is None
