"""The official SDK and CLI on UDP balancers: a balancer's UDP session throttle, a config with
`protocol: udp` and its check port, and datagrams really proxied to a back end "inside" an
instance (on 127.168.X.Y for its private 192.168.X.Y, loopback only)."""

import random
import socket
import socketserver
import threading

from linode_api4 import NodeBalancer

from test_sdk import PASSWORD, wait_status


def udp_echo(private: str, name: str):
    """A UDP server on the loopback twin of a private address: answers `<name>:<datagram>`."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            data, sock = self.request
            sock.sendto(f"{name}:".encode() + data, self.client_address)

    server = socketserver.ThreadingUDPServer(("127." + private.split(".", 1)[1], 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def tcp_check(private: str):
    """A TCP listener for the `connection` check on the node's `udp_check_port`."""
    server = socketserver.ThreadingTCPServer(("127." + private.split(".", 1)[1], 0), socketserver.BaseRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def ask(address: str, port: int, message: str) -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(0.5)
        s.sendto(message.encode(), (address, port))
        try:
            return s.recvfrom(2048)[0].decode()
        except OSError:
            return None


def test_sdk_udp_balancer_proxies_datagrams(nubis, client):
    nb = client.nodebalancer_create("us-east", label="sdk-udp", client_conn_throttle=0)
    assert isinstance(nb, NodeBalancer)
    nb.client_udp_sess_throttle = 5
    nb.save()
    nb.invalidate()
    assert nb.client_udp_sess_throttle == 5

    instance = client.linode.instance_create(
        "g6-nanode-1", "us-east", image="linode/debian12", root_pass=PASSWORD, booted=False, label="sdk-udp-1"
    )
    wait_status(nubis, instance, "offline")
    ip = client.networking.ip_allocate(instance, public=False)
    assert instance.boot()
    wait_status(nubis, instance, "running")
    echo = udp_echo(ip.address, "udp-backend")
    check = tcp_check(ip.address)
    port = random.randint(20000, 40000)
    config = nb.config_create(
        port=port, protocol="udp", check="connection", check_interval=2, check_timeout=1,
        udp_check_port=check.server_address[1],
    )
    assert config.protocol == "udp"
    assert config.udp_check_port == check.server_address[1]
    assert config.udp_session_timeout == 16
    node = config.node_create("udp-1", f"{ip.address}:{echo.server_address[1]}")
    assert node.address.endswith(f":{echo.server_address[1]}")

    def up():
        config.invalidate()
        return config.nodes_status.up == 1

    nubis.wait_for(up, "the UDP node to be up (checked on its udp_check_port)", timeout=10)
    nubis.wait_for(lambda: ask(nb.ipv4.address, port, "hello") == "udp-backend:hello",
                   "a datagram through the UDP balancer")
    echo.shutdown()
    check.shutdown()


def test_cli_adds_and_views_a_udp_config(cli):
    nb = cli("nodebalancers", "create", "--region", "us-east", "--label", "cli-udp")[0]
    cfg = cli("nodebalancers", "config-create", str(nb["id"]), "--port", "5353", "--protocol", "udp")[0]
    assert cfg["protocol"] == "udp"
    view = cli("nodebalancers", "config-view", str(nb["id"]), str(cfg["id"]))[0]
    assert view["protocol"] == "udp" and view["port"] == 5353
