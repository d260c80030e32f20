"""The web console in a real headless Chromium: sign-in through nubis' OAuth pages, a VPC with a
subnet, two instances, the load-balancer walkthrough by clicking (both nodes up, traffic through
the balancer's address), a certificate upload and HTTPS served, events, escaping, CSRF, and a
restricted user. The tests run in file order and build on each other."""

import http.server
import re
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By

from conftest import DIRECT

PASSWORD = "Console-Walk-42"
STATE = {}


def sign_in(ui, username, password):
    ui.go("/")
    ui.wait(lambda: "/oauth/authorize" in ui.d.current_url, "the authorization page")
    assert "nubis console" in ui.text()
    if ui.d.find_elements(By.NAME, "username"):
        ui.fill({"username": username, "password": password})
    ui.click("Allow")
    ui.wait(lambda: ui.d.find_elements(By.ID, "whoami"), "the console after sign-in")


def test_sign_in_through_the_oauth_pages(nubis, ui):
    # The first run printed a one-time link that sets the password of admin.
    ui.d.get(nubis.password_link)
    ui.fill({"password": PASSWORD, "confirm": PASSWORD})
    ui.click("Set password")
    ui.wait_text("Password set")
    # The console sends the browser to the authorization server and back (PKCE).
    sign_in(ui, "admin", PASSWORD)
    assert ui.el("#whoami").text == "admin"
    assert ui.d.current_url.rstrip("/") == ui.base
    cookies = {c["name"]: c for c in ui.d.get_cookies()}
    assert cookies["nubis_console"]["httpOnly"] is True
    assert cookies["nubis_console"]["sameSite"] == "Lax"


def test_security_headers(nubis):
    with DIRECT.open(nubis.url + "/signin", timeout=10) as r:
        pass  # redirected to the sign-in page, which carries its own headers
    req = urllib.request.Request(nubis.url + "/assets/console.css")
    with DIRECT.open(req, timeout=10) as r:
        csp = r.headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp
        assert r.headers["X-Frame-Options"] == "DENY"


def test_vpc_with_a_subnet(ui):
    ui.go("/vpcs")
    # The API's own field errors show next to the fields.
    ui.fill({"label": "bad--label", "subnets[0].ipv4": "8.8.8.0/24"})
    ui.click("Create VPC")
    assert "two dashes in a row" in ui.el("#label-err").text
    assert "private address space" in ui.d.find_element(By.ID, "subnets[0].ipv4-err").text
    ui.fill({"label": "walk-net", "subnets[0].label": "backends", "subnets[0].ipv4": "10.0.0.0/24"})
    ui.click("Create VPC")
    ui.wait_text("VPC walk-net")
    assert "10.0.0.0/24" in ui.el("#subnets").text
    # Add and remove a subnet.
    ui.fill({"label": "extra", "ipv4": "10.0.1.0/24"})
    ui.click("Add subnet")
    ui.wait(lambda: "10.0.1.0/24" in ui.el("#subnets").text, "the second subnet")
    ui.click("Remove subnet extra")
    ui.wait(lambda: "10.0.1.0/24" not in ui.el("#subnets").text, "the subnet removed")
    ui.shot("vpc")


def create_instance(ui, label):
    ui.go("/instances/new")
    ui.fill({"label": label, "root_pass": "aComplexP@ssword"})
    assert ui.el("#private_ip").is_selected() and ui.el("#booted").is_selected()
    ui.click("Create")
    ui.wait_text(f"Instance {label}")
    # The status badge polls (htmx) until the instance has booted.
    ui.wait(lambda: ui.el("[data-status]").get_attribute("data-status") == "running", f"{label} running")
    private = [c.text for c in ui.d.find_elements(By.CSS_SELECTOR, "#addresses code") if c.text.startswith("192.168.")]
    assert private, "a private address is shown"
    return private[0]


def test_two_instances(ui):
    ui.go("/instances/new")
    ui.fill({"label": "x", "root_pass": "short"})
    ui.click("Create")
    assert ui.d.find_elements(By.ID, "label-err") and ui.d.find_elements(By.ID, "root_pass-err")
    STATE["private"] = [create_instance(ui, "web-1"), create_instance(ui, "web-2")]
    # One more on the VPC's subnet: its VPC address shows.
    ui.go("/instances/new")
    subnet = next(o.get_attribute("value") for o in ui.d.find_elements(By.CSS_SELECTOR, "#_subnet option")
                  if "walk-net / backends" in o.text)
    ui.fill({"label": "vpc-box", "root_pass": "aComplexP@ssword", "_subnet": subnet})
    ui.el("#private_ip").click()
    ui.click("Create")
    ui.wait_text("Instance vpc-box")
    assert "VPC" in ui.el("#addresses").text and "10.0.0." in ui.el("#addresses").text
    ui.shot("instance")
    ui.go("/instances")
    assert "web-1" in ui.text() and "web-2" in ui.text()
    ui.shot("instances")


class Backend(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def serve_backend(address: str, n: int):
    d = Path(tempfile.mkdtemp(prefix=f"backend-{n}-"))
    (d / "index.html").write_text(f"backend {n}\n")
    handler = lambda *a, **k: Backend(*a, directory=str(d), **k)  # noqa: E731
    srv = http.server.ThreadingHTTPServer((address, 8080), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_walkthrough_by_clicking(ui):
    ui.go("/walkthrough")
    assert "done" in ui.el("#step-vpc").get_attribute("class")
    assert "done" in ui.el("#step-instances").get_attribute("class")
    assert "todo" in ui.el("#step-balancer").get_attribute("class")
    # A web server "inside" each instance, at the address the page shows.
    local = [c.text.split("--bind ")[1] for c in ui.d.find_elements(By.CSS_SELECTOR, "#step-instances code") if "--bind" in c.text]
    assert len(local) == 2
    STATE["local"] = local
    STATE["backends"] = [serve_backend(a, n) for n, a in enumerate(local, 1)]
    # The balancer.
    ui.d.find_element(By.LINK_TEXT, "Create a load balancer").click()
    ui.fill({"label": "my-balancer", "region": "us-east"})
    ui.click("Create load balancer")
    ui.wait_text("Load balancer my-balancer")
    STATE["nb_ip"] = ui.el("#nb-ipv4").text
    STATE["nb_url"] = ui.d.current_url
    # A config on port 80 with a connection check every 2 s (the form's defaults).
    ui.fill({"label": "web"})
    ui.click("Add config")
    ui.wait_text("Port 80 · http")
    # Both instances as nodes.
    for n, addr in enumerate(STATE["private"], 1):
        summary = ui.d.find_element(By.XPATH, "//summary[text()='Add a node']")
        if summary.find_element(By.XPATH, "..").get_attribute("open") is None:
            summary.click()
        ui.fill({f"#{ui.el('input[name=address]').get_attribute('id')}": f"{addr}:8080",
                 f"#{ui.el('input[name=label][id^=node-label]').get_attribute('id')}": f"backend-{n}"})
        ui.click("Add node")
        ui.wait_text(f"backend-{n}")
    # nodes_status is refreshed live by the page.
    ui.wait(lambda: ui.el("[data-up]").get_attribute("data-up") == "2", "both nodes up", timeout=30)
    ui.go("/walkthrough")
    assert "done" in ui.el("#step-up").get_attribute("class")
    ui.shot("walkthrough")
    # The balancer answers at the address the console shows, from both back ends.
    seen = set()
    for _ in range(8):
        with DIRECT.open(f"http://{STATE['nb_ip']}/", timeout=10) as r:
            seen.add(r.read().decode().strip())
    assert seen == {"backend 1", "backend 2"}
    # The traffic shows in the balancer's charts (drawn on the server from its stats).
    ui.d.get(STATE["nb_url"])

    def drawn():
        ui.d.refresh()
        line = ui.el("svg.chart polyline").get_attribute("points")
        return any(float(p.split(",")[1]) < 159 for p in line.split())

    ui.wait(drawn, "connections in the chart", timeout=20)


def test_dashboard_shows_balancer_health(ui):
    ui.go("/")
    row = ui.d.find_element(By.XPATH, "//tr[td/a[text()='my-balancer']]")
    assert "2" in row.find_elements(By.TAG_NAME, "td")[2].text
    ui.shot("dashboard")


def test_certificate_upload_and_https(ui, tmp_path):
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", tmp_path / "key.pem",
         "-out", tmp_path / "cert.pem", "-subj", "/C=US/ST=Pennsylvania/L=Philadelphia/O=Example/CN=www.example.com"],
        check=True, capture_output=True,
    )
    cert, key = (tmp_path / "cert.pem").read_text(), (tmp_path / "key.pem").read_text()
    ui.d.get(STATE["nb_url"])
    ui.d.find_element(By.XPATH, "//summary[text()='Serve HTTPS with a certificate']").click()
    cert_box = ui.el("textarea[name=ssl_cert]")
    key_box = ui.el("textarea[name=ssl_key]")
    # A certificate without its key: the API's field error shows next to the key's field.
    ui.fill({f"#{cert_box.get_attribute('id')}": cert})
    ui.click("Upload and serve HTTPS")
    assert ui.d.find_elements(By.CSS_SELECTOR, ".ferr"), "the refusal is shown"
    assert "BEGIN PRIVATE KEY" not in ui.d.page_source
    ui.fill({f"#{ui.el('textarea[name=ssl_cert]').get_attribute('id')}": cert,
             f"#{ui.el('textarea[name=ssl_key]').get_attribute('id')}": key})
    ui.click("Upload and serve HTTPS")
    ui.wait_text("Port 443 · https")
    assert ui.el(".commonname").text == "www.example.com"
    # The key is never shown again.
    assert "PRIVATE KEY" not in ui.d.page_source
    ui.wait(lambda: ui.el("[data-up]").get_attribute("data-up") == "2", "both nodes up on 443", timeout=30)
    ui.shot("balancer")
    ctx = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))

    def fetch():
        with socket.create_connection((STATE["nb_ip"], 443), timeout=5) as s:
            with ctx.wrap_socket(s, server_hostname="www.example.com") as t:
                t.sendall(b"GET / HTTP/1.1\r\nHost: www.example.com\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := t.recv(4096):
                    data += chunk
                return data.decode()

    body = ui.wait(lambda: fetch(), "HTTPS through the balancer", timeout=20)
    assert "200" in body.split("\r\n")[0] and re.search(r"backend [12]", body)


def test_a_node_going_down_shows_without_reloading(ui):
    ui.d.get(STATE["nb_url"])
    marker = ui.el("h1")  # the same document throughout: only htmx swaps the nodes
    STATE["backends"][1].shutdown()
    STATE["backends"][1].server_close()
    ui.wait(lambda: ui.el("[data-down]").get_attribute("data-down") == "1", "one node down", timeout=30)
    assert not __import__("conftest").gone(marker)
    assert "DOWN" in ui.el("table.nodes").text
    STATE["backends"][1] = serve_backend(STATE["local"][1], 2)
    ui.wait(lambda: ui.el("[data-up]").get_attribute("data-up") == "2", "both up again", timeout=30)


def test_firewall_rule_editor_and_devices(ui):
    ui.go("/firewalls")
    ui.fill({"label": "web-fw"})
    ui.click("Create firewall")
    ui.wait_text("Firewall web-fw")
    # A new inbound rule with a bad port range: the API's error shows next to that input.
    ui.fill({"inbound[0].action": "ACCEPT", "inbound[0].label": "http-in", "inbound[0].ports": "80-70"})
    ui.click("Save rules")
    errors = ui.d.find_elements(By.XPATH, "//input[@name='inbound[0].ports']/following-sibling::p[@class='ferr']")
    assert errors, ui.text()[:2000]
    ui.fill({"inbound[0].ports": "80, 443"})
    ui.click("Save rules")
    assert ui.d.find_element(By.NAME, "inbound[0].ports").get_attribute("value") == "80, 443"
    assert ui.d.find_element(By.NAME, "inbound[0].label").get_attribute("value") == "http-in"
    ui.fill({"device": next(o.get_attribute("value") for o in ui.d.find_elements(By.CSS_SELECTOR, "#device option")
                            if o.text == "Instance web-1")})
    ui.click("Add device")
    assert "instance web-1" in ui.el("#devices").text
    ui.shot("firewall")


def test_events_newest_first(nubis, ui):
    ui.go("/events")
    rows = ui.d.find_elements(By.CSS_SELECTOR, "#events tbody tr")
    actions = [r.find_elements(By.TAG_NAME, "code")[0].text for r in rows]
    assert actions[0] == "firewall_device_add", actions[:5]
    assert "instance_create" in actions and "vpc_create" in actions
    assert actions.index("nodebalancer_create") < actions.index("instance_create")
    ui.shot("events")
    marker = ui.el("h1")
    nubis.api("POST", "/vpcs", {"label": "live-net", "region": "us-east"})
    ui.wait(lambda: "live-net" in ui.el("#events").text, "the new event, without reloading", timeout=15)
    assert not __import__("conftest").gone(marker)
    ui.go("/events")  # "Mark all seen" marks what the page was loaded with
    ui.click("Mark all seen")
    ui.wait(lambda: not ui.d.find_elements(By.CSS_SELECTOR, "#events tr.unseen"), "all seen")


def test_markup_in_a_label_is_shown_as_text(ui):
    evil = "<script>alert(1)</script>"
    ui.go("/vpcs")
    ui.fill({"label": "evil-net", "description": evil, "subnets[0].ipv4": "10.1.0.0/24"})
    ui.click("Create VPC")
    ui.wait_text("VPC evil-net")
    assert evil in ui.text()
    ui.go("/vpcs")
    assert evil in ui.el("#vpcs").text
    # A refused label comes back in its input, as text.
    ui.fill({"label": evil})
    ui.click("Create VPC")
    assert ui.el("#label").get_attribute("value") == evil
    with pytest.raises(NoAlertPresentException):
        ui.d.switch_to.alert.text
    assert "<script>alert(1)</script>" not in ui.d.page_source.replace("&lt;", "<").split("<main", 1)[0]


def test_a_post_without_the_csrf_token_is_refused(nubis, ui):
    cookie = next(c["value"] for c in ui.d.get_cookies() if c["name"] == "nubis_console")
    before = len(nubis.api("GET", "/vpcs")["data"])
    for body in (b"label=csrf-net&region=us-east", b"csrf=" + b"0" * 64 + b"&label=csrf-net&region=us-east"):
        req = urllib.request.Request(nubis.url + "/vpcs", data=body, method="POST",
                                     headers={"Cookie": f"nubis_console={cookie}"})
        with pytest.raises(urllib.error.HTTPError) as e:
            DIRECT.open(req, timeout=10)
        assert e.value.code == 403
    assert len(nubis.api("GET", "/vpcs")["data"]) == before


def test_tokens_and_oauth_apps_show_their_secret_once(nubis, ui):
    ui.go("/tokens")
    ui.fill({"label": "ci-events", "scopes": "events:read_only"})
    ui.click("Create token")
    secret = ui.el("#new-secret").text.strip()
    assert len(secret) == 64
    req = urllib.request.Request(nubis.url + "/v4/account/events", headers={"Authorization": f"Bearer {secret}"})
    with DIRECT.open(req, timeout=10) as r:
        assert r.status == 200
    ui.go("/tokens")
    assert "ci-events" in ui.el("#tokens").text and secret not in ui.d.page_source
    ui.go("/oauth-clients")
    ui.fill({"label": "Backup tool", "redirect_uri": "https://backup.example/callback"})
    ui.click("Register")
    client_secret = ui.el("#new-secret").text.strip()
    assert len(client_secret) == 64
    ui.go("/oauth-clients")
    assert "Backup tool" in ui.el("#clients").text and client_secret not in ui.d.page_source
    # The console's own client is a system client: no account lists (or can change) it.
    assert "nubis-console" not in ui.el("#clients").text


def test_account_and_billing(nubis, ui):
    ui.go("/account")
    ui.fill({"first_name": "Ada", "last_name": "Lovelace", "address_1": "123 Main Street", "city": "Philadelphia",
             "state": "PA", "zip": "not-a-zip", "country": "US", "phone": "215-555-1212"})
    ui.click("Save")
    assert ui.d.find_elements(By.ID, "zip-err"), ui.text()[:1500]
    ui.fill({"zip": "19102-1234"})
    ui.click("Save")
    assert ui.el("#zip").get_attribute("value") == "19102-1234"
    assert nubis.api("GET", "/account")["city"] == "Philadelphia"
    ui.d.find_element(By.XPATH, "//summary[text()='Add a card']").click()
    ui.fill({"data.card_number": "4111111111111111", "data.expiry_month": "12", "data.expiry_year": "2030",
             "data.cvv": "123"})
    ui.click("Add card")
    assert "ending in 1111" in ui.el("#methods").text
    assert "value=\"4111111111111111\"" not in ui.d.page_source and ui.d.find_element(By.NAME, "data.card_number").get_attribute("value") == ""
    ui.d.find_element(By.XPATH, "//summary[text()='Make a payment']").click()
    ui.fill({"usd": "5.00"})
    ui.click("Pay")
    assert ui.el("#balance").text == "-5.00"
    assert "5.00" in ui.el("#payments").text
    ui.shot("account")


def test_users_and_grants(nubis, ui):
    ui.go("/users")
    ui.fill({"username": "viewer", "email": "viewer@example.com"})
    assert ui.el("#restricted").is_selected()
    ui.click("Add user")
    assert "a single-use link" in ui.text()
    ui.d.find_element(By.LINK_TEXT, "viewer").click()
    ui.wait_text("User viewer")
    # read_only on web-1, nothing on the rest.
    row = ui.d.find_element(By.XPATH, "//table[@id='grants-instance']//tr[td/label[text()='web-1']]")
    from selenium.webdriver.support.ui import Select
    Select(row.find_element(By.TAG_NAME, "select")).select_by_value("read_only")
    ui.click("Save grants")
    grants = nubis.api("GET", "/account/users/viewer/grants")
    assert [(g["label"], g["permissions"]) for g in grants["instance"] if g["permissions"]] == [("web-1", "read_only")]
    ui.shot("user-grants")


def test_service_transfer_offer_and_cancel(nubis, ui):
    nubis.api("POST", "/compute/instances", {"region": "us-east", "type": "g6-nanode-1", "label": "spare-1"})

    def offer(label):
        ui.go("/transfers")
        box = ui.d.find_element(By.XPATH, f"//label[text()='{label}']").get_attribute("for")
        ui.d.find_element(By.ID, box).click()
        ui.click("Create transfer")

    # The API's refusal, shown on the page: a balancer's back end cannot be transferred.
    offer("web-2")
    assert "is a back-end node of load balancer 'my-balancer'" in ui.text()
    offer("spare-1")
    assert "pending" in ui.el("#transfers").text and "offered by you" in ui.el("#transfers").text
    ui.click("Cancel")
    assert "canceled" in ui.el("#transfers").text


def test_rename_and_a_private_address(nubis, ui):
    spare = next(i for i in nubis.api("GET", "/compute/instances")["data"] if i["label"] == "spare-1")
    ui.go(f"/instances/{spare['id']}")
    assert not [c for c in ui.d.find_elements(By.CSS_SELECTOR, "#addresses code") if c.text.startswith("192.168.")]
    ui.click("Add a private IPv4 address")
    assert [c for c in ui.d.find_elements(By.CSS_SELECTOR, "#addresses code") if c.text.startswith("192.168.")]
    ui.fill({"label": "web-1"})
    ui.click("Rename")
    assert "unique" in ui.el("#label-err").text.lower() or ui.el("#label-err").text
    ui.fill({"label": "spare-renamed"})
    ui.click("Rename")
    assert ui.el("#title").text == "spare-renamed"


PAGES = ["/", "/instances", "/instances/new", "/vpcs", "/firewalls", "/balancers", "/events", "/walkthrough",
         "/account", "/users", "/users/viewer", "/tokens", "/oauth-clients", "/transfers", "/child-accounts"]


def test_no_page_breaks_the_content_security_policy_and_every_input_has_a_label(ui):
    ui.d.get_log("browser")  # forget what came before
    details = [a.get_attribute("href") for p in ("/vpcs", "/firewalls", "/balancers", "/instances")
               for a in (ui.go(p), ui.d.find_elements(By.CSS_SELECTOR, "main table a"))[1][:1]]
    assert len(details) == 4, details
    for url in [ui.base + p for p in PAGES] + details:
        ui.d.get(url)
        unlabeled = ui.d.execute_script("""
            return [...document.querySelectorAll('main input:not([type=hidden]), main select, main textarea')]
              .filter(e => !e.labels || e.labels.length === 0).map(e => e.name);""")
        assert unlabeled == [], (url, unlabeled)
        dupes = ui.d.execute_script("""
            const ids = [...document.querySelectorAll('[id]')].map(e => e.id);
            return ids.filter((x, i) => ids.indexOf(x) !== i);""")
        assert dupes == [], (url, dupes)
        time.sleep(0.2)
    problems = [e["message"] for e in ui.d.get_log("browser")
                if "Content Security Policy" in e["message"]
                or (e["level"] == "SEVERE" and "Failed to load resource" not in e["message"])]
    assert problems == []


def test_a_restricted_user_sees_only_what_the_api_allows(nubis, ui):
    web1 = next(i for i in nubis.api("GET", "/compute/instances")["data"] if i["label"] == "web-1")
    link = nubis.outbox_link("viewer")
    ui.click("Sign out")
    ui.wait_text("You are signed out.")
    # Signing out ended the authorization server's session too: the password is asked again.
    ui.go("/")
    ui.wait(lambda: "/oauth/authorize" in ui.d.current_url, "the authorization page")
    assert ui.d.find_elements(By.NAME, "password") and "Signed in as" not in ui.text()
    ui.d.get(link)
    ui.fill({"password": "Reader-Pass-77", "confirm": "Reader-Pass-77"})
    ui.click("Set password")
    ui.wait_text("Password set")
    sign_in(ui, "viewer", "Reader-Pass-77")
    assert "viewer (restricted)" in ui.el("#whoami").text
    ui.go("/instances")
    assert "web-1" in ui.text() and "web-2" not in ui.text()
    ui.go("/balancers")
    assert "my-balancer" not in ui.text()
    ui.go("/vpcs")
    assert "walk-net" not in ui.text()
    # read_only on web-1: shutting it down is refused, and it keeps running.
    ui.go(f"/instances/{web1['id']}")
    ui.click("Shut down")
    assert "Not allowed" in ui.text()
    assert nubis.api("GET", f"/compute/instances/{web1['id']}")["status"] == "running"
    # Another user's instance is not there at all.
    web2 = next(i for i in nubis.api("GET", "/compute/instances")["data"] if i["label"] == "web-2")
    ui.go(f"/instances/{web2['id']}")
    assert "Not found" in ui.text()
    ui.go("/account")
    assert "Not allowed" in ui.text()
    # Phone width stays readable.
    ui.d.set_window_size(390, 844)
    ui.go("/instances")
    ui.shot("phone-instances")
    ui.d.set_window_size(1280, 900)


def test_the_session_ends_with_its_token(nubis, ui):
    ui.go("/instances")
    assert ui.d.find_elements(By.ID, "whoami")
    # Three hours later the access token (2 hours) has expired: the console asks to sign in again.
    nubis.control("POST", "/clock/advance", {"seconds": 3 * 3600})
    try:
        ui.go("/instances")
        ui.wait(lambda: "/oauth/authorize" in ui.d.current_url, "the sign-in page")
    finally:
        nubis.control("POST", "/clock/reset")


def test_the_console_can_live_under_a_path():
    from conftest import Nubis

    n = Nubis('\n[console]\nbase_path = "/console"\n')
    try:
        assert n.url.endswith("/console")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())
        with pytest.raises(urllib.error.HTTPError) as e:
            opener.open(n.url + "/instances", timeout=10)
        assert e.value.code == 303 and e.value.headers["Location"] == "/console/signin"
        with pytest.raises(urllib.error.HTTPError) as e:
            opener.open(n.url + "/signin", timeout=10)
        assert "redirect_uri=" + urllib.parse.quote(n.url + "/callback", safe="") in e.value.headers["Location"]
        assert "Path=/console;" in e.value.headers["Set-Cookie"]
        # The site's root is the API's again: an unknown path there is its JSON 404.
        root = n.url.removesuffix("/console")
        with pytest.raises(urllib.error.HTTPError) as e:
            opener.open(root + "/instances", timeout=10)
        assert e.value.code == 404 and b"errors" in e.value.read()
    finally:
        n.stop()


def test_the_console_can_be_turned_off():
    from conftest import Nubis

    n = Nubis('\n[console]\nenabled = false\n')
    try:
        assert n.url is None
        root = f"http://{n.addr}"
        with pytest.raises(urllib.error.HTTPError) as e:
            DIRECT.open(root + "/", timeout=10)
        assert e.value.code == 404 and b"errors" in e.value.read()
    finally:
        n.stop()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None
