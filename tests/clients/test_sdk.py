"""The official Python SDK (`linode_api4`) against nubis, with only its base URL changed: the
seed's load balancer walkthrough through the SDK's own methods, then firewalls, addresses,
events and grants."""

from linode_api4 import Firewall, Instance, IPAddress, NodeBalancer
from linode_api4.objects import Event

PASSWORD = "aComplexP@ssword-1"


def wait_status(nubis, instance, status):
    def current():
        instance.invalidate()
        return instance.status == status

    nubis.wait_for(current, f"instance {instance.id} to be {status}")


def test_walkthrough_through_the_sdk(nubis, client):
    # 1. A load balancer.
    nb = client.nodebalancer_create("us-east", label="sdk-balancer", client_conn_throttle=0)
    assert isinstance(nb, NodeBalancer) and nb.ipv4.address
    # 2. A config on port 80 with a connection check.
    config = nb.config_create(port=80, protocol="http", check="connection", check_interval=2, check_timeout=1)
    assert config.port == 80 and config.check == "connection"

    for n in (1, 2):
        # 3. An instance, powered off.
        instance = client.linode.instance_create(
            "g6-nanode-1", "us-east", image="linode/debian12", root_pass=PASSWORD, booted=False, label=f"sdk-{n}"
        )
        assert isinstance(instance, Instance)
        wait_status(nubis, instance, "offline")
        # 4. A private IPv4 address.
        ip = client.networking.ip_allocate(instance, public=False)
        assert ip.address.startswith("192.168.")
        assert ip.linode_id == instance.id
        assert ip.public is False
        # 5. Booted.
        assert instance.boot()
        wait_status(nubis, instance, "running")
        # 6. The instance as a back end.
        node = config.node_create(f"backend-{n}", f"{ip.address}:8080")
        assert node.address == f"{ip.address}:8080"

    config.invalidate()
    assert len(config.nodes) == 2
    # The instances seen through the SDK's list, from the same records the spec's paths answer.
    labels = {i.label for i in client.linode.instances()}
    assert {"sdk-1", "sdk-2"} <= labels
    spec_view = nubis.api("GET", "/compute/instances").json()["data"]
    assert {"sdk-1", "sdk-2"} <= {i["label"] for i in spec_view}


def test_instance_created_through_the_spec_is_seen_by_the_sdk(nubis, client):
    r = nubis.api(
        "POST",
        "/compute/instances",
        {"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": PASSWORD,
         "booted": False, "label": "from-spec"},
    )
    assert r.status_code == 200, r.text
    instance = client.load(Instance, r.json()["id"])
    assert instance.label == "from-spec"
    assert instance.region.id == "us-east"


def test_addresses_and_firewall_devices(nubis, client):
    instance = client.linode.instance_create(
        "g6-nanode-1", "us-east", image="linode/debian12", root_pass=PASSWORD, booted=False, label="sdk-fw"
    )
    wait_status(nubis, instance, "offline")
    # The instance's own addresses, through /linode/instances/{id}/ips, and one through
    # /networking/ips/{address}.
    public = instance.ips.ipv4.public
    assert len(public) == 1 and public[0].linode_id == instance.id
    ip = client.load(IPAddress, public[0].address)
    assert ip.linode_id == instance.id and ip.public is True and ip.linode.id == instance.id

    rules = {"inbound": [], "inbound_policy": "ACCEPT", "outbound": [], "outbound_policy": "ACCEPT"}
    fw = client.networking.firewall_create("sdk-fw", rules)
    assert isinstance(fw, Firewall)
    device = fw.device_create(instance.id)  # type "linode", the SDK's default
    assert device.entity.id == instance.id
    assert device.entity.type == "linode"
    fw.invalidate()
    assert [d.entity.id for d in fw.devices] == [instance.id]
    # The same device through the spec's names.
    spec_devices = nubis.api("GET", f"/networking/firewalls/{fw.id}/devices").json()["data"]
    assert [(d["entity"]["type"], d["entity"]["id"]) for d in spec_devices] == [("instance", instance.id)]
    # And the firewall seen from the instance.
    assert fw.id in [f.id for f in instance.firewalls()]


def test_events_name_instances_linode(nubis, client):
    instance = client.linode.instance_create(
        "g6-nanode-1", "us-east", image="linode/debian12", root_pass=PASSWORD, booted=False, label="sdk-events"
    )
    wait_status(nubis, instance, "offline")
    # The SDK filters on the hosted API's action name; nubis reads it as the spec's.
    events = list(client.account.events(Event.action == "linode_create"))
    assert events and {e.action for e in events} == {"linode_create"}
    create = [e for e in events if e.entity.id == instance.id]
    assert create, [(e.action, e.entity.id) for e in events]
    assert create[0].entity.type == "linode"
    assert create[0].linode.id == instance.id


def test_grants_use_the_key_linode_with_labels(nubis, client):
    instance = client.linode.instance_create(
        "g6-nanode-1", "us-east", image="linode/debian12", root_pass=PASSWORD, booted=False, label="sdk-grant"
    )
    user = client.account.user_create("sdk-user@example.com", "sdkuser", restricted=True)
    grants = user.grants
    entry = [g for g in grants.linode if g.id == instance.id]
    assert entry and entry[0].label == "sdk-grant" and entry[0].permissions is None
    entry[0].permissions = "read_only"
    grants.global_grants.add_linodes = True
    assert grants.save()
    after = nubis.api("GET", "/account/users/sdkuser/grants").json()
    assert after["global"]["add_instances"] is True
    assert [g["permissions"] for g in after["instance"] if g["id"] == instance.id] == ["read_only"]
