"""Live objects against the hosted document: a server with one of each kind of record nubis serves
(instances with profiles, disks, interfaces of both generations, an IPv6 range, a VPC and subnet,
a firewall with a device, a balancer with a config and a node, a user, a token, an OAuth client, an
SSH key, a card, a payment, a service transfer, an invoice), then every GET operation of the served
document whose path can be filled, each answer checked against the hosted document's response
schema for that operation (reference_diff.py, the spec's names): every key returned is in the
hosted schema, every key of the hosted schema is returned, types match, and every string of an enum
field is one of the hosted enum's values. Each difference is a line `GET PATH FIELD: kind`; those
docs/decisions.md does not list with a reason fail the test."""

import datetime
import os
import re
from pathlib import Path

import requests

import reference_diff as rd

PASSWORD = "aComplexP@ssword-3"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB live-key"
CARD = {"card_number": "4111111111111111", "expiry_month": 12, "expiry_year": 2099, "cvv": "123"}


def ok(r):
    assert r.status_code == 200, f"{r.request.method} {r.request.url}: {r.status_code} {r.text}"
    return r.json()


def records(server):
    """Creates one record of each kind; returns the values that fill the served paths' parameters
    (`instance_id` etc.), with `lin_instance_id`/`lin_interface_id` for the instance with Linode
    interfaces."""
    post = lambda path, body: ok(server.api("POST", path, body))  # noqa: E731
    get = lambda path: ok(server.api("GET", path))  # noqa: E731
    v = {}
    vpc = post("/vpcs", {"label": "live-vpc", "region": "us-east", "subnets": [{"label": "web", "ipv4": "10.40.0.0/24"}]})
    v["vpc_id"], v["vpc_subnet_id"] = vpc["id"], vpc["subnets"][0]["id"]
    fw = post("/networking/firewalls", {
        "label": "live-fw",
        "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT", "inbound": [
            {"action": "ACCEPT", "protocol": "TCP", "ports": "22", "label": "ssh", "description": "ssh in",
             "addresses": {"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]}}]},
    })
    v["firewall_id"], v["version"], v["slug"] = fw["id"], 1, "public"
    # An instance from an image (disks, a profile), with a private address for a balancer node.
    inst = post("/compute/instances", {
        "type": "g6-nanode-1", "region": "us-east", "image": "linode/debian12", "root_pass": PASSWORD,
        "label": "live-instance", "private_ip": True, "booted": False, "tags": ["live"],
    })
    v["instance_id"] = inst["id"]
    server.wait_for(lambda: get(f"/compute/instances/{inst['id']}")["status"] == "offline", "the instance to be offline")
    disks = get(f"/compute/instances/{inst['id']}/disks")["data"]
    v["disk_id"] = disks[0]["id"]
    # A profile with a public, a VPC and a VLAN interface.
    config = post(f"/compute/instances/{inst['id']}/configs", {
        "label": "live-profile", "devices": {"sda": {"disk_id": disks[0]["id"]}, "sdb": {"disk_id": disks[1]["id"]}},
        "interfaces": [
            {"purpose": "public"},
            {"purpose": "vpc", "subnet_id": v["vpc_subnet_id"], "ipv4": {"nat_1_1": "any"}},
            {"purpose": "vlan", "label": "live-vlan", "ipam_address": "10.50.0.1/24"},
        ],
    })
    v["instance_config_id"], v["interface_id"] = config["id"], config["interfaces"][1]["id"]
    ips = get(f"/compute/instances/{inst['id']}/ips")
    v["address"] = ips["ipv4"]["public"][0]["address"]
    private = ips["ipv4"]["private"][0]["address"]
    rng = post("/networking/ipv6/ranges", {"prefix_length": 64, "instance_id": inst["id"]})
    v["range"] = rng["range"].split("/")[0]
    post(f"/networking/firewalls/{fw['id']}/devices", {"id": inst["id"], "type": "instance"})
    v["device_id"] = get(f"/networking/firewalls/{fw['id']}/devices")["data"][0]["id"]
    # An instance with Linode interfaces.
    lin = post("/compute/instances", {
        "type": "g6-nanode-1", "region": "us-east", "label": "live-linode-ifaces", "booted": False,
        "interface_generation": "linode",
    })
    v["lin_instance_id"] = lin["id"]
    server.wait_for(lambda: get(f"/compute/instances/{lin['id']}")["status"] == "offline", "the instance to be offline")
    v["lin_interface_id"] = get(f"/compute/instances/{lin['id']}/interfaces")["interfaces"][0]["id"]
    # A balancer with a config and a node on the first instance's private address.
    nb = post("/nodebalancers", {"region": "us-east", "label": "live-nb"})
    nbc = post(f"/nodebalancers/{nb['id']}/configs", {"port": 80, "protocol": "http", "check": "connection"})
    node = post(f"/nodebalancers/{nb['id']}/configs/{nbc['id']}/nodes", {"address": f"{private}:80", "label": "live-node"})
    v["nodebalancer_id"], v["config_id"], v["node_id"] = nb["id"], nbc["id"], node["id"]
    # The account's records.
    user = post("/account/users", {"username": "liveuser", "email": "live@example.com", "restricted": True})
    v["username"] = user["username"]
    v["token_id"] = post("/profile/tokens", {"label": "live-token", "scopes": "*"})["id"]
    v["client_id"] = post("/account/oauth-clients", {"label": "live-app", "redirect_uri": "https://example.com/cb"})["id"]
    v["ssh_key_id"] = post("/profile/sshkeys", {"label": "live-key", "ssh_key": KEY})["id"]
    v["payment_method_id"] = post("/account/payment-methods", {"type": "credit_card", "is_default": True, "data": CARD})["id"]
    v["payment_id"] = post("/account/payments", {"usd": "5.00"})["id"]
    v["token"] = post("/account/service-transfers", {"entities": {"instances": [lin["id"]]}})["token"]
    # A month closes: an invoice (the test controls move the clock).
    ops = requests.Session()
    ops.trust_env = False
    ops.headers["Authorization"] = f"Bearer {server.operator_token}"
    r = ops.post(f"http://{server.addr}/nubis/v1/clock/advance", json={"seconds": 40 * 86400}, timeout=120)
    assert r.status_code == 200, r.text
    # Records the server made: the first of each list.
    for key, path, field in (
        ("invoice_id", "/account/invoices", "id"), ("event_id", "/account/events", "id"),
        ("login_id", "/profile/logins", "id"), ("euuid", "/account/child-accounts", "euuid"),
    ):
        data = get(path)["data"]
        if data:
            v[key] = data[0][field]
    now = datetime.datetime.now(datetime.timezone.utc)
    v["year"], v["month"] = now.year, now.month
    v["region_id"], v["type_id"], v["image_id"] = "us-east", "g6-nanode-1", "linode/debian12"
    return v


def fill(path, values):
    """The served path with its parameters filled, or None when one cannot be."""
    if path.startswith("/v4/compute/instances/{instance_id}/interfaces"):
        values = {**values, "instance_id": values["lin_instance_id"], "interface_id": values["lin_interface_id"]}
    out = path
    for name in re.findall(r"\{([^}]+)\}", path):
        if name not in values:
            return None
        out = out.replace("{" + name + "}", str(values[name]))
    return out


def test_every_served_object_matches_the_hosted_document(fresh_nubis):
    server = fresh_nubis
    values = records(server)
    served = server.api("GET", "/openapi.json").json()
    reference = rd.load_reference()
    ref_ops = rd.operations(reference, "/v4", rename=True)
    diffs, checked, skipped = [], [], []
    for path, item in sorted(served["paths"].items()):
        if "get" not in item or path.endswith(("/openapi.json", "/thumbnail")):
            continue
        key = ("GET", rd.template(path))
        if key not in ref_ops:
            continue  # not in the hosted document (its newer operations)
        url = fill(path, values)
        if url is None:
            skipped.append(path)
            continue
        r = server.api("GET", url.removeprefix("/v4"))
        if r.status_code == 204:  # `/profile/grants` of an unrestricted user, as in the hosted API
            continue
        assert r.status_code == 200, f"GET {url}: {r.status_code} {r.text}"
        checked.append(path)
        diffs += rd.live_differences("GET", rd.template(path), r.json(), rd.response_fields(reference, ref_ops[key]))
    # The comparison saw the records: most served GET operations, the records' own among them.
    assert len(checked) >= 80, (len(checked), skipped)
    for must in ("/v4/compute/instances/{instance_id}/configs/{instance_config_id}/interfaces/{interface_id}",
                 "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/nodes/{node_id}",
                 "/v4/networking/firewalls/{firewall_id}/devices/{device_id}", "/v4/account/invoices/{invoice_id}",
                 "/v4/account/service-transfers/{token}", "/v4/vpcs/{vpc_id}/subnets/{vpc_subnet_id}"):
        assert must in checked, (must, skipped)
    diffs = sorted(set(diffs))
    if os.environ.get("NUBIS_REFERENCE_DUMP"):  # every difference, listed or not, for whoever lists them
        Path(os.environ["NUBIS_REFERENCE_DUMP"]).write_text("".join(d + "\n" for d in diffs))
    unlisted = rd.unlisted(diffs)
    assert not unlisted, (
        f"{len(unlisted)} differences of live objects from the hosted document not listed in docs/decisions.md:\n"
        + "\n".join(unlisted)
    )
    # And the list stays true: every entry explains a difference of the document or of a live
    # answer (an entry left after its difference was fixed fails here, to be removed).
    every = diffs + rd.differences(reference, served)
    stale = [e for e in rd.listed_differences() if not rd.is_listed_any(e, every)]
    assert not stale, "entries of docs/decisions.md that match no difference any more:\n" + "\n".join(stale)

