"""A client generated from the served OpenAPI document (openapi-python-client) imports and runs
the seed's load balancer walkthrough: nothing but the document describes the API to it."""

import importlib
import subprocess
import sys
import time
from pathlib import Path

import pytest

PASSWORD = "aComplexP@ssword-3"


@pytest.fixture()
def generated(nubis, tmp_path):
    (tmp_path / "openapi.json").write_text(nubis.api("GET", "/openapi.json").text)
    exe = Path(sys.executable).with_name("openapi-python-client")
    p = subprocess.run(
        [str(exe), "generate", "--path", "openapi.json", "--meta", "none", "--output-path", "nubis_client"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        for name in [m for m in sys.modules if m == "nubis_client" or m.startswith("nubis_client.")]:
            del sys.modules[name]
        yield importlib.import_module("nubis_client")
    finally:
        sys.path.remove(str(tmp_path))


def test_the_generated_client_runs_the_walkthrough(nubis, generated):
    from nubis_client import AuthenticatedClient
    from nubis_client.api.instances import instance_boot, instance_create, instance_get
    from nubis_client.api.networking import ip_allocate
    from nubis_client.api.nodebalancers import (
        nodebalancer_config_create,
        nodebalancer_config_get,
        nodebalancer_create,
        nodebalancer_node_create,
    )
    from nubis_client.models import (
        CheckKind,
        ConfigRequest,
        ErrorEnvelope,
        InstanceCreate,
        IpAllocate,
        IpAllocateType,
        NodeBalancerCreate,
        NodeRequest,
        Protocol,
    )

    client = AuthenticatedClient(base_url=f"http://{nubis.addr}", token=nubis.token, raise_on_unexpected_status=True)

    def ok(value):
        assert value is not None and not isinstance(value, ErrorEnvelope), value
        return value

    nb = ok(nodebalancer_create.sync(client=client, body=NodeBalancerCreate(region="us-east", label="gen-balancer")))
    cfg = ok(nodebalancer_config_create.sync(
        nb.id, client=client,
        body=ConfigRequest(port=80, protocol=Protocol.HTTP, check=CheckKind.CONNECTION, check_interval=2, check_timeout=1),
    ))
    for n in (1, 2):
        inst = ok(instance_create.sync(client=client, body=InstanceCreate(
            region="us-east", type_="g6-nanode-1", image="linode/debian12", root_pass=PASSWORD,
            booted=False, label=f"gen-{n}",
        )))
        deadline = time.time() + 20
        while ok(instance_get.sync(inst.id, client=client)).status.value != "offline":
            assert time.time() < deadline, "instance never became offline"
            time.sleep(0.1)
        ip = ok(ip_allocate.sync(client=client, body=IpAllocate(type_=IpAllocateType.IPV4, public=False, instance_id=inst.id)))
        assert ip.address.startswith("192.168.") and ip.instance_id == inst.id
        assert instance_boot.sync_detailed(inst.id, client=client).status_code == 200
        node = ok(nodebalancer_node_create.sync(
            nb.id, cfg.id, client=client, body=NodeRequest(label=f"backend-{n}", address=f"{ip.address}:8080"),
        ))
        assert node.address == f"{ip.address}:8080"
    # Both nodes get checked and counted (down: no server listens behind them here).
    def counted():
        got = ok(nodebalancer_config_get.sync(nb.id, cfg.id, client=client))
        return got.port == 80 and got.nodes_status.up + got.nodes_status.down == 2

    nubis.wait_for(counted, "both nodes to be counted in nodes_status", timeout=10)
