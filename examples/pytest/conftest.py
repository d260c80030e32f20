"""pytest fixtures that run a private nubis for the test session.

- `nubis` (session): starts `nubis serve` on a free port of 127.0.0.1 with a throw-away
  in-memory database, a known bootstrap token and an operator token for the test controls,
  then saves the empty state as the snapshot "clean".
- `client` (each test): restores "clean", removes every fault and resets the clock, then
  yields the official SDK's client pointed at this nubis (never at the hosted service).
- `controls` (each test): a small client of the test-control API (`/nubis/v1`).

The nubis binary is `$NUBIS_BIN`, else `nubis` on the PATH, else the workspace's
`target/debug/nubis`.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests
from linode_api4 import LinodeClient

BOOTSTRAP_TOKEN = "example-bootstrap-token-0000000001"
OPERATOR_TOKEN = "example-operator-token-00000000001"


def nubis_binary():
    if os.environ.get("NUBIS_BIN"):
        return os.environ["NUBIS_BIN"]
    found = shutil.which("nubis")
    if found:
        return found
    return str(Path(__file__).resolve().parents[2] / "target" / "debug" / "nubis")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Controls:
    """The test-control API of one nubis, with the operator token."""

    def __init__(self, base):
        self.base = base
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {OPERATOR_TOKEN}"
        self.http.trust_env = False  # never through a proxy: nubis is on 127.0.0.1

    def call(self, method, path, body=None):
        r = self.http.request(method, self.base + path, json=body, timeout=30)
        assert r.status_code == 200, f"{method} {path}: {r.status_code} {r.text}"
        return r.json()

    def fault(self, **fault):
        return self.call("POST", "/faults", fault)

    def faults(self):
        return self.call("GET", "/faults")["data"]

    def advance(self, seconds):
        return self.call("POST", "/clock/advance", {"seconds": seconds})

    def snapshot(self, name):
        return self.call("POST", "/snapshots", {"name": name})

    def restore(self, name):
        return self.call("POST", f"/snapshots/{name}/restore")

    def reset(self):
        return self.call("POST", "/reset")

    def routes(self):
        """Method and path template of every route of the public API."""
        doc = self.http.get(self.base.replace("/nubis/v1", "/v4/openapi.json"), timeout=30).json()
        return {f"{m.upper()} {p}" for p, item in doc["paths"].items() for m in item}


@pytest.fixture(scope="session")
def nubis():
    data_dir = tempfile.mkdtemp(prefix="nubis-pytest-")
    port = free_port()
    proc = subprocess.Popen(
        [
            nubis_binary(), "serve",
            "--listen", f"127.0.0.1:{port}",
            "--database", "sqlite::memory:",
            "--data-dir", data_dir,
            "--bootstrap-token", BOOTSTRAP_TOKEN,
            "--operator-token", OPERATOR_TOKEN,
            "--no-dataplane",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "NUBIS_LOG": "warn"},
    )
    deadline = time.monotonic() + 30
    for line in proc.stdout:
        if line.startswith("nubis: listening on"):
            break
        if time.monotonic() > deadline:
            break
    else:
        raise RuntimeError("nubis did not start")
    controls = Controls(f"http://127.0.0.1:{port}/nubis/v1")
    controls.snapshot("clean")
    yield {"port": port, "controls": controls}
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def controls(nubis):
    return nubis["controls"]


@pytest.fixture
def client(nubis, controls):
    controls.restore("clean")
    for f in controls.faults():
        controls.call("DELETE", f"/faults/{f['id']}")
    controls.call("POST", "/clock/reset")
    # base_url is required: the SDK's default is the hosted service.
    c = LinodeClient(
        BOOTSTRAP_TOKEN,
        base_url=f"http://127.0.0.1:{nubis['port']}/v4",
        retry_rate_limit_interval=0.1,
    )
    c.session.trust_env = False
    yield c
