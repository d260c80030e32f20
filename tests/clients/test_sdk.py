"""The official Python SDK (`linode_api4`) against nubis, with only its base URL changed: the
seed's load balancer walkthrough through the SDK's own methods, then firewalls, addresses,
events and grants."""

import http.client
import http.server
import random
import threading

from linode_api4 import Firewall, Instance, IPAddress, NodeBalancer
from linode_api4.objects import Event

PASSWORD = "aComplexP@ssword-1"


def wait_status(nubis, instance, status):
    def current():
        instance.invalidate()
        return instance.status == status

    nubis.wait_for(current, f"instance {instance.id} to be {status}")


def backend(private: str, name: str):
    """An HTTP server "inside the instance": on 127.168.X.Y for the private 192.168.X.Y, on a
    free port; answers its name."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = name.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.168." + private.split(".", 2)[2], 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def get(host, port):
    conn = http.client.HTTPConnection(host, port, timeout=5)  # direct: no proxy
    try:
        conn.request("GET", "/")
        return conn.getresponse().read().decode()
    finally:
        conn.close()


def test_walkthrough_through_the_sdk(nubis, client):
    # 1. A load balancer.
    nb = client.nodebalancer_create("us-east", label="sdk-balancer", client_conn_throttle=0)
    assert isinstance(nb, NodeBalancer) and nb.ipv4.address
    # 2. A config with a connection check (a high port: no privileges needed).
    port = random.randint(20000, 40000)
    config = nb.config_create(port=port, protocol="http", check="connection", check_interval=2, check_timeout=1)
    assert config.port == port and config.check == "connection"
    servers = []

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
        # 6. The instance as a back end, and a web server "inside" it.
        servers.append(backend(ip.address, f"backend {n}"))
        address = f"{ip.address}:{servers[-1].server_address[1]}"
        node = config.node_create(f"backend-{n}", address)
        assert node.address == address

    config.invalidate()
    assert len(config.nodes) == 2
    # 7. Health: both nodes up (checked as soon as they are added), and requests alternate.
    def both_up():
        config.invalidate()
        return config.nodes_status.up == 2

    nubis.wait_for(both_up, "nodes_status to show both nodes up", timeout=10)

    def serving():
        try:
            return get(nb.ipv4.address, port).startswith("backend")
        except OSError:
            return False

    nubis.wait_for(serving, "the balancer to serve")
    answers = [get(nb.ipv4.address, port) for _ in range(6)]
    assert all(a != b for a, b in zip(answers, answers[1:])), answers
    assert set(answers) == {"backend 1", "backend 2"}
    for s in servers:
        s.shutdown()
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
