"""The harness of the console's browser tests: a freshly started `nubis serve` on 127.0.0.1 and a
headless Debian Chromium driven through /usr/bin/chromedriver (nothing is downloaded).

Fixtures (one of each per test session; the tests build on each other in file order):
- `nubis`: the server (`url`, `token`, `api(method, path, body)`, `password_link`, `outbox_link(user)`).
- `browser`: the Selenium driver, plus helpers in `ui` (`go`, `fill`, `submit`, `wait_text`, `shot`).

Network safety: the browser runs with `--proxy-server=http://127.0.0.1:9` (a dead local port) and
no background services, Python's own requests go through a handler with no proxy to 127.0.0.1 only,
so nothing beyond 127.0.0.0/8 is ever contacted.
"""

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "console"
os.environ["SE_OFFLINE"] = "true"
for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
    os.environ[k] = "http://127.0.0.1:9"
os.environ["no_proxy"] = os.environ["NO_PROXY"] = "127.0.0.1,localhost"

# Only loopback, never through a proxy.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def config() -> str:
    """Fast timings, and address pools of this server's own (balancers in 127.160-219.x.x, private
    addresses in a random /26 of 192.168/16) so that servers running at once do not collide."""
    n = secrets.randbelow(59 * 256)
    a, b = 160 + n // 256, n % 256
    if a >= 168:
        a += 1  # 127.168.0.0/16 is where private addresses are reached
    x, q = secrets.randbelow(256), secrets.randbelow(4)
    caps = '"Linodes", "NodeBalancers", "VPCs", "Cloud Firewall", "Vlans"'
    return f"""
[limits]
rate_limit_requests = 1000000
rate_limit_window_secs = 60

[runtime]
provision_ms = 300
boot_ms = 300
shutdown_ms = 300
reboot_ms = 300

[dns]
offline = true

[dataplane]
reconcile_interval_ms = 200

[network]
private_ipv4 = "192.168.{x}.{q * 64}/26"

[[regions]]
id = "us-east"
label = "Newark, NJ"
country = "us"
capabilities = [{caps}]
public_ipv4 = "127.{a}.{b}.0/26"
public_prefix = 26
ipv6_pool = "2001:db8:10::/64"
ipv6_ranges = "2001:db8:1000::/40"
"""


OPERATOR = "console-operator-" + secrets.token_hex(8)


class Nubis:
    def __init__(self, extra_config: str = ""):
        binary = Path(os.environ.get("NUBIS_BIN", ROOT / "target" / "debug" / "nubis"))
        if not binary.exists():
            pytest.exit(f"nubis binary not found at {binary}: run `cargo build -p nubis`", 2)
        self.dir = Path(tempfile.mkdtemp(prefix="nubis-console-"))
        (self.dir / "config.toml").write_text(config() + extra_config)
        self.token = "console-" + secrets.token_hex(16)
        self.log = open(self.dir / "server.log", "w")
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(self.dir),
             "--bootstrap-token", self.token, "--operator-token", OPERATOR, "--config", str(self.dir / "config.toml")]
            # NUBIS_CONSOLE_DATABASE: run on PostgreSQL (a fresh database; see scripts/pg.sh).
            + (["--database", os.environ["NUBIS_CONSOLE_DATABASE"]] if os.environ.get("NUBIS_CONSOLE_DATABASE") else []),
            stdout=subprocess.PIPE, stderr=self.log, text=True, env={**os.environ, "NUBIS_LOG": "warn"},
        )
        self.url = self.password_link = None
        self.addr = ""
        for line in self.proc.stdout:
            if "password of 'admin'" in line:
                self.password_link = line.strip().rsplit(" ", 1)[-1]
            if line.startswith("nubis: console at "):
                self.url = line.strip().removeprefix("nubis: console at ").rstrip("/")
            if line.startswith("nubis: listening on "):
                self.addr = line.strip().removeprefix("nubis: listening on http://").removesuffix("/v4")
                break
        if not self.addr.startswith("127.") or (self.url and not self.url.startswith("http://127.")):
            self.stop()
            raise RuntimeError("nubis did not start: " + (self.dir / "server.log").read_text())
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def api(self, method: str, path: str, body=None):
        req = urllib.request.Request(
            f"{self.url}/v4{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with DIRECT.open(req, timeout=30) as r:
            return json.loads(r.read() or b"{}")

    def control(self, method: str, path: str, body=None):
        """A call to the test controls (`/nubis/v1`) with the operator token."""
        req = urllib.request.Request(
            f"{self.url}/nubis/v1{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {OPERATOR}", "Content-Type": "application/json"},
        )
        with DIRECT.open(req, timeout=30) as r:
            return json.loads(r.read() or b"{}")

    def outbox_link(self, username: str) -> str:
        """The set-password link mailed to a new user (the outbox's .eml files)."""
        deadline = time.time() + 20
        while time.time() < deadline:
            for f in sorted((self.dir / "outbox").glob("*.eml")) if (self.dir / "outbox").exists() else []:
                text = re.sub(r"=\r?\n", "", f.read_text()).replace("=3D", "=")
                if f"Hello {username}" in text:
                    m = re.search(r"http://127\.[0-9.:]+/oauth/password\?token=[0-9a-f]{64}", text)
                    if m:
                        return m.group(0)
            time.sleep(0.2)
        raise AssertionError(f"no set-password mail for {username}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def nubis():
    n = Nubis()
    yield n
    n.stop()


def gone(element) -> bool:
    """The element's document was replaced (stale, or caught while being swapped out)."""
    try:
        element.is_enabled()
        return False
    except WebDriverException:
        return True


class Ui:
    def __init__(self, driver, base: str):
        self.d = driver
        self.base = base

    def go(self, path: str):
        self.d.get(self.base + path)

    def el(self, css: str):
        return self.d.find_element(By.CSS_SELECTOR, css)

    def fill(self, fields: dict):
        for name, value in fields.items():
            e = self.d.find_element(By.NAME, name) if not name.startswith("#") else self.el(name)
            if e.tag_name == "select":
                from selenium.webdriver.support.ui import Select
                Select(e).select_by_value(value)
            elif e.tag_name == "textarea" and len(value) > 200:
                # Long PEM text: set at once rather than typed key by key.
                self.d.execute_script("arguments[0].value = arguments[1];", e, value)
            else:
                e.clear()
                e.send_keys(value)

    def click(self, text: str):
        """Clicks the button with this text (keyboard-reachable `<button>`s only) and waits for
        the page its form leads to."""
        old = self.d.find_element(By.TAG_NAME, "html")
        self.d.find_element(By.XPATH, f"//button[normalize-space()='{text}']").click()
        WebDriverWait(self.d, 15).until(lambda _: gone(old))

    def text(self) -> str:
        return self.d.find_element(By.TAG_NAME, "body").text

    def wait(self, fn, what: str, timeout: float = 20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                v = fn()
                if v:
                    return v
            except Exception:  # the page may be between two renders
                pass
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; page:\n{self.text()[:3000]}")

    def wait_text(self, needle: str, timeout: float = 20):
        return self.wait(lambda: needle in self.text(), f"text {needle!r}", timeout)

    def shot(self, name: str):
        """A screenshot of the whole page (at most 2400 pixels tall) into docs/console/."""
        SHOTS.mkdir(parents=True, exist_ok=True)
        size = self.d.get_window_size()
        height = self.d.execute_script("return document.documentElement.scrollHeight")
        self.d.set_window_size(size["width"], min(max(height + 120, 600), 2400))
        time.sleep(0.2)
        self.d.save_screenshot(str(SHOTS / f"{name}.png"))
        self.d.set_window_size(size["width"], size["height"])


@pytest.fixture(scope="session")
def ui(nubis):
    profile = tempfile.mkdtemp(prefix="nubis-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-default-apps", "--disable-extensions", "--proxy-server=http://127.0.0.1:9",
              f"--user-data-dir={profile}", "--window-size=1280,900"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path="/usr/bin/chromedriver"))
    driver.set_page_load_timeout(30)
    yield Ui(driver, nubis.url)
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
