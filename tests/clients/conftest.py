"""The harness of the client suite: a freshly started `nubis serve` on 127.0.0.1, and the
official clients of the hosted API pointed at it before their first call.

Fixtures:
- `nubis`: the running server (`base_url`, `token`, `operator_token`, `addr`, `api(method, path, json=None)` for
  raw HTTP, `wait_for(fn)`), one per test session.
- `client`: a `linode_api4.LinodeClient` with `base_url` set to the server.
- `cli`: a runner of `linode-cli` (`cli("linodes", "list")` returns the parsed `--json` output;
  `cli.run(...)` returns the CompletedProcess), configured only for the server.

Nothing here sends traffic beyond 127.0.0.0/8: every proxy variable points at a dead local port
with `NO_PROXY` naming loopback only, so a client that tried to reach anything else would fail.
"""

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
DEAD_PROXY = "http://127.0.0.1:9"
LOOPBACK_ONLY = {
    "http_proxy": DEAD_PROXY,
    "https_proxy": DEAD_PROXY,
    "HTTP_PROXY": DEAD_PROXY,
    "HTTPS_PROXY": DEAD_PROXY,
    "all_proxy": DEAD_PROXY,
    "ALL_PROXY": DEAD_PROXY,
    "no_proxy": "127.0.0.1,localhost",
    "NO_PROXY": "127.0.0.1,localhost",
}
# Set for this process before any client exists (the SDK uses requests, which reads them).
os.environ.update(LOOPBACK_ONLY)

BASE_CONFIG = """
[limits]
rate_limit_requests = 1000000
rate_limit_window_secs = 60

[runtime]
provision_ms = 100
boot_ms = 100
shutdown_ms = 100
reboot_ms = 100

[dns]
offline = true

[dataplane]
reconcile_interval_ms = 200
"""


def private_config() -> str:
    """The configuration with address pools of this server's own (balancer addresses in
    127.160-219.x.x, private addresses in a random /26 of 192.168/16), so that listeners and back
    ends of servers running at once do not collide."""
    n = secrets.randbelow(59 * 256)
    a, b = 160 + n // 256, n % 256
    if a >= 168:
        a += 1  # 127.168.0.0/16 is where private addresses are reached; no public pool may overlap it
    x, q = secrets.randbelow(256), secrets.randbelow(4)
    caps = '"Linodes", "NodeBalancers", "VPCs", "Cloud Firewall", "Vlans"'
    regions = "".join(
        f'[[regions]]\nid = "{rid}"\nlabel = "{rid}"\ncountry = "us"\ncapabilities = [{caps}]\n'
        f'public_ipv4 = "127.{a}.{b}.{quarter * 64}/26"\npublic_prefix = 26\n'
        f'ipv6_pool = "2001:db8:{v6:x}::/64"\nipv6_ranges = "2001:db8:{v6:x}00::/40"\n\n'
        for rid, quarter, v6 in (("us-east", 0, 0x10), ("us-west", 1, 0x11))
    )
    return f'{BASE_CONFIG}\n[network]\nprivate_ipv4 = "192.168.{x}.{q * 64}/26"\n\n{regions}'


def nubis_binary() -> Path:
    path = Path(os.environ.get("NUBIS_BIN", ROOT / "target" / "debug" / "nubis"))
    if not path.exists():
        pytest.exit(f"nubis binary not found at {path}: run `cargo build -p nubis` or set NUBIS_BIN", 2)
    return path


class Nubis:
    """A `nubis serve` process on an ephemeral port of 127.0.0.1 with a fresh database."""

    def __init__(self, config: str | None = None):
        config = config or private_config()
        self.dir = Path(tempfile.mkdtemp(prefix="nubis-clients-"))
        (self.dir / "config.toml").write_text(config)
        self.token = "clients-" + secrets.token_hex(16)
        # A token of the test controls (`/nubis/v1`); it reaches nothing of `/v4`.
        self.operator_token = "operator-" + secrets.token_hex(16)
        self.log = open(self.dir / "server.log", "w")
        database = os.environ.get("NUBIS_CLIENTS_DATABASE") or f"sqlite://{self.dir / 'nubis.db'}"
        self.proc = subprocess.Popen(
            [
                str(nubis_binary()), "serve",
                "--listen", "127.0.0.1:0",
                "--data-dir", str(self.dir),
                "--database", database,
                "--bootstrap-token", self.token,
                "--operator-token", self.operator_token,
                "--config", str(self.dir / "config.toml"),
            ],
            stdout=subprocess.PIPE,
            stderr=self.log,
            env={**os.environ, "NUBIS_LOG": "warn"},
            text=True,
        )
        self.addr = None
        deadline = time.time() + 60
        for line in self.proc.stdout:
            if line.startswith("nubis: listening on http://"):
                self.addr = line.strip().removeprefix("nubis: listening on http://").removesuffix("/v4")
                break
            if time.time() > deadline:
                break
        if self.addr is None or not self.addr.startswith("127."):
            log = self.server_log()
            self.stop()
            raise RuntimeError(f"nubis did not start on 127.0.0.1:\n{log}")
        # Keep draining stdout so the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()
        self.base_url = f"http://{self.addr}/v4"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {self.token}"

    def api(self, method: str, path: str, json_body=None, headers=None) -> requests.Response:
        """A raw request to the API (`path` starts after `/v4`)."""
        return self.session.request(method, self.base_url + path, json=json_body, headers=headers or {}, timeout=30)

    def wait_for(self, fn, what: str, timeout: float = 20.0, interval: float = 0.1):
        """Calls `fn` until it returns a true value; fails after `timeout` seconds."""
        deadline = time.time() + timeout
        while True:
            value = fn()
            if value:
                return value
            if time.time() > deadline:
                pytest.fail(f"timed out waiting for {what}")
            time.sleep(interval)

    def server_log(self) -> str:
        try:
            return (self.dir / "server.log").read_text()
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Cli:
    """Runs `linode-cli` against one nubis server, configured before its first call."""

    def __init__(self, server: Nubis):
        self.server = server
        exe = Path(sys.executable).with_name("linode-cli")
        self.exe = str(exe) if exe.exists() else shutil.which("linode-cli")
        if self.exe is None:
            pytest.exit("linode-cli is not installed in this environment", 2)
        scheme, host = server.base_url.split("://", 1)
        self.env = {
            **os.environ,
            **LOOPBACK_ONLY,
            "LINODE_CLI_API_SCHEME": scheme,
            "LINODE_CLI_API_HOST": host.removesuffix("/v4"),
            "LINODE_CLI_API_VERSION": "v4",
            "LINODE_CLI_TOKEN": server.token,
            "LINODE_CLI_CONFIG": str(server.dir / "linode-cli" / "config"),
            "LINODE_CLI_SUPPRESS_VERSION_WARNING": "1",
            "HOME": str(server.dir),
            "XDG_CONFIG_HOME": str(server.dir / "xdg"),
        }

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        # --suppress-warnings: no version check against the package index.
        cmd = [self.exe, "--suppress-warnings", "--no-defaults", *args]
        p = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} exited {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}")
        return p

    def __call__(self, *args: str):
        """Runs a command with `--json` and returns its parsed output (a list of records)."""
        p = self.run(*args, "--json")
        return json.loads(p.stdout) if p.stdout.strip() else []


@pytest.fixture(scope="session")
def nubis():
    server = Nubis()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def client(nubis):
    from linode_api4 import LinodeClient

    return LinodeClient(nubis.token, base_url=nubis.base_url)


@pytest.fixture(scope="session")
def cli(nubis):
    return Cli(nubis)


@pytest.fixture()
def fresh_nubis():
    """A server of its own for one test (for tests that may change or delete any record)."""
    server = Nubis()
    try:
        yield server
    finally:
        server.stop()
