#!/usr/bin/env python3
"""Every list of the API at scale, the rows taken from the served /v4/openapi.json.

What it measures (one engine per run; bench/scale/lists.sh runs both):
  every GET operation of /v4/openapi.json whose answer is a page (`Page_*`), under its spec path
  and, for `/v4/compute/...`, under the hosted name `/v4/linode/...` too, on two databases of the
  same engine: a small account (every list at SMALL records) and a large one (LARGE records of
  each top-level kind, INSTANCES instances, EVENTS events, CHILDREN children of one parent in
  per-parent lists, or the spec's limit where it is lower). For each list, with wrk -t1 -cC -dD
  on 127.0.0.1:
  - `page`: a random page of 100, uniformly over the list's pages that hold 100 rows;
  - `FIELD = value`: the list filtered by each filterable field of the operation (its X-Filter
    properties), the value one that one or two records hold (the fill writes a rare value on
    one or two records; the value is read back through the API where the list filters by id);
    `results` says how many match, so a filter that still matches many says so;
  - `order FIELD`: a random page ordered by each `+order_by` the operation allows;
  - `page, writes going on`: /v4/vpcs and /v4/account/events while bench/scale/writer.py
    creates VPCs (each create also writes an event).
  Goals per row: large/small req/s >= 0.8, p99 < 10 ms at 50 connections. Summary per engine: a
  page of 100 events vs a page of 100 VPCs (req/s of the large account, goal >= 0.5).

How the accounts are filled:
  nubis (release, no data plane) creates one record of each kind through the API (the
  templates: VPCs, instances of both interface generations, a firewall with a device, a load
  balancer with a config and a node, a token, a user, an OAuth client, an SSH key, a rule set,
  a service transfer, a payment method and a payment, IPv6 ranges); nubis is stopped and the
  rows are copied by SQL (`INSERT ... SELECT` from the template, the columns read from the
  schema, varying what must differ: labels, addresses, tokens, `created` rising with the row),
  or inserted directly where no template can be made through the API (child accounts, logins,
  invoices and their items, maintenance windows). The database's triggers keep the row counts.
  A list that could not be filled says so and why in the table.

Usage: lists.py ENGINE DB_BASE   (sqlite: a directory; postgres: a server URL ending in /postgres)
env: NUBIS (the release binary), SMALL (100), LARGE (100000), CHILDREN (10000), EVENTS (1000000),
     INSTANCES (10000), D (2s), C (50), OUT (bench/out/lists), ONLY (path substrings, a,b; PATH$: that path),
     HOSTED_ALL (1: every filter and order under the hosted names too, not only the page),
     WARM (1s: an unmeasured run of each row before its measured one; 0 for none),
     DRY (1: fill and check every row without wrk)
Writes OUT/ENGINE.md (the table) and OUT/ENGINE.json (the numbers); progress goes to stderr.
"""
import datetime, http.client, ipaddress, json, math, os, re, sqlite3, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NUBIS = os.environ.get("NUBIS") or os.path.join(ROOT, "target/release/nubis")
ENGINE, DB_BASE = sys.argv[1], sys.argv[2]
PG = ENGINE == "postgres"
SMALL = int(os.environ.get("SMALL", 100))
LARGE = int(os.environ.get("LARGE", 100000))
CHILDREN = int(os.environ.get("CHILDREN", 10000))
EVENTS = int(os.environ.get("EVENTS", 1000000))
INSTANCES = int(os.environ.get("INSTANCES", 10000))
D, C = os.environ.get("D", "2s"), os.environ.get("C", "50")
OUT = os.environ.get("OUT", os.path.join(ROOT, "bench/out/lists"))
ONLY = [o for o in os.environ.get("ONLY", "").split(",") if o]


def only(path):
    """Whether ONLY lets `path` in: a substring of it, or the path itself when the entry ends in $."""
    return not ONLY or any(path == o[:-1] if o.endswith("$") else o in path for o in ONLY)
WARM = os.environ.get("WARM", "1s")  # an unmeasured run of each row first ("0": none)
DRY = bool(os.environ.get("DRY"))  # fill and check every row, without wrk
HOLD = int(os.environ.get("HOLD", "0"))  # seconds the large account's server stays up after (profiling)
TOKEN = "bench-bootstrap-token-0123456789abcdef"
ADDR = ("127.0.0.1", 18295)
# CACHED_PAGES: pages of lists the server keeps (0, the default here: none, so that both
# accounts' pages are read from the database and a row compares what the lists cost, not a page
# of the small account served from memory with one of the large account read).
CACHED_PAGES = int(os.environ.get("CACHED_PAGES", "0"))
CONFIG = f"""[limits]
rate_limit_requests = 1000000000000
rate_limit_window_secs = 60
cached_pages = {CACHED_PAGES}

[runtime]
provision_ms = 5
boot_ms = 5
shutdown_ms = 5
reboot_ms = 5

[dns]
offline = true
"""
LUA = os.path.join(OUT, "random-page.lua")
NOW = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
PAST = (NOW - datetime.timedelta(days=80)).strftime("%Y-%m-%d %H:%M:%S")  # created: PAST + row seconds
FUTURE = (NOW + datetime.timedelta(days=2)).strftime("%Y-%m-%d %H:%M:%S")  # expiries, maintenance
VPC_V6_SLOTS = 4096  # the /64 ranges of a VPC's /52


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the database, the server, the API

class Db:
    def __init__(self, size):
        if PG:
            name = f"lists_{size}"
            psql(DB_BASE, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            psql(DB_BASE, f"CREATE DATABASE {name}")
            self.url = DB_BASE.rsplit("/", 1)[0] + "/" + name
        else:
            d = os.path.join(DB_BASE, size)
            os.makedirs(d, exist_ok=True)
            self.url = f"sqlite://{d}/nubis.db"
        self.dir = os.path.join(OUT, f"{ENGINE}-{size}")
        os.makedirs(self.dir, exist_ok=True)
        self._cols = {}

    def exec(self, sql):
        if PG:
            return psql(self.url, sql)
        c = sqlite3.connect(self.url[len("sqlite://"):], timeout=60)
        c.executescript(sql)
        c.commit()
        c.close()

    def rows(self, sql):
        if PG:
            out = subprocess.run(["psql", "-qtA", "-F", "\t", "-v", "ON_ERROR_STOP=1", self.url, "-c", sql],
                                 check=True, capture_output=True, text=True).stdout
            return [[None if v == "" else v for v in line.split("\t")] for line in out.splitlines() if line]
        c = sqlite3.connect(self.url[len("sqlite://"):], timeout=60)
        r = [[None if v is None else str(v) for v in row] for row in c.execute(sql)]
        c.close()
        return r

    def one(self, sql):
        r = self.rows(sql)
        return r[0][0] if r and r[0] else None

    def ints(self, sql):
        return [int(r[0]) for r in self.rows(sql)]

    def columns(self, table):
        """[(name, needs a value: NOT NULL without default)] of a table."""
        if table not in self._cols:
            if PG:
                r = self.rows("SELECT column_name, is_nullable = 'NO' AND column_default IS NULL FROM "
                              f"information_schema.columns WHERE table_schema = 'public' AND table_name = '{table}' "
                              "ORDER BY ordinal_position")
                self._cols[table] = [(n, v == "t") for n, v in r]
            else:
                r = self.rows(f"PRAGMA table_info({table})")
                self._cols[table] = [(x[1], x[3] == "1" and x[4] is None and x[5] == "0") for x in r]
        return self._cols[table]


def psql(url, sql):
    try:
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", url], input=sql, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        raise RuntimeError(e.stderr.strip()) from None


class Server:
    def __init__(self, db):
        os.makedirs(os.path.join(db.dir, "data"), exist_ok=True)
        cfg = os.path.join(db.dir, "config.toml")
        with open(cfg, "w") as f:
            f.write(CONFIG)
        try:
            call("GET", "/healthz", auth=False)
            raise SystemExit(f"something already answers on {ADDR[0]}:{ADDR[1]} (a server left by an earlier run?)")
        except OSError:
            pass
        self.p = subprocess.Popen(
            [NUBIS, "serve", "--listen", f"{ADDR[0]}:{ADDR[1]}", "--data-dir", os.path.join(db.dir, "data"),
             "--database", db.url, "--bootstrap-token", TOKEN, "--config", cfg, "--no-dataplane"],
            stdout=open(os.path.join(db.dir, "serve.out"), "a"), stderr=open(os.path.join(db.dir, "serve.log"), "a"))
        for _ in range(3000):
            try:
                if call("GET", "/healthz", auth=False)[0] == 200:
                    return
            except OSError:
                pass
            if self.p.poll() is not None:
                break
            time.sleep(0.02)
        raise SystemExit(f"nubis did not answer (see {db.dir}/serve.log)")

    def stop(self):
        self.p.terminate()
        self.p.wait()


def call(method, path, body=None, headers=None, auth=True):
    assert ADDR[0].startswith("127."), "the benchmark sends traffic only to 127.0.0.0/8"
    c = http.client.HTTPConnection(*ADDR, timeout=300)
    h = {"Content-Type": "application/json"}
    if auth:
        h["Authorization"] = f"Bearer {TOKEN}"
    h.update(headers or {})
    c.request(method, path, None if body is None else json.dumps(body), h)
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    try:
        return r.status, json.loads(text)
    except ValueError:
        return r.status, text


def api(method, path, body=None):
    status, b = call(method, "/v4" + path, body)
    if status != 200:
        raise RuntimeError(f"{method} {path}: {status} {json.dumps(b)[:200]}")
    return b


# ---------------------------------------------------------------- SQL of either engine

def seq(n):
    """A FROM item `n` with column i = 1..n."""
    if n <= 0:
        return "(SELECT 1 AS i WHERE 1 = 0) n"
    if PG:
        return f"generate_series(1, {n}) AS n(i)"
    return f"(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) SELECT i FROM s) n"


def numbered(select, order):
    """A FROM item `n`: the rows of `select` (a SELECT ... FROM ... WHERE, no ORDER) with i = 1.."""
    return f"(SELECT ROW_NUMBER() OVER (ORDER BY {order}) AS i, {select[len('SELECT '):]}) n"


def ts(secs, base=None):
    """The text time `base` (PAST) plus `secs` seconds, as nubis writes it."""
    base = base or PAST
    if PG:
        return f"to_char(TIMESTAMP '{base}' + ({secs}) * INTERVAL '1 second', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
    return f"strftime('%Y-%m-%dT%H:%M:%S', '{base}', '+' || ({secs}) || ' seconds')"


def hexa(x):
    return f"to_hex({x})" if PG else f"printf('%x', {x})"


def pad(x, w):
    return f"lpad(CAST({x} AS TEXT), {w}, '0')" if PG else f"substr('{'0' * w}' || ({x}), -{w}, {w})"


def dotted(x):
    return (f"CAST(({x}) / 16777216 AS TEXT) || '.' || CAST((({x}) / 65536) % 256 AS TEXT) || '.' || "
            f"CAST((({x}) / 256) % 256 AS TEXT) || '.' || CAST(({x}) % 256 AS TEXT)")


def v6(prefix, x):
    """Distinct IPv6 text for x < 100,000,000: PREFIX:(x/10000):(x%10000)::1 (decimal digits are hex digits)."""
    return f"'{prefix}:' || CAST(({x}) / 10000 AS TEXT) || ':' || CAST(({x}) % 10000 AS TEXT) || '::1'"


def q(v):
    return "NULL" if v is None else ("TRUE" if v else "FALSE") if isinstance(v, bool) else \
        str(v) if isinstance(v, int) else "'" + str(v).replace("'", "''") + "'"


I = "CAST(n.i AS TEXT)"


class Fill:
    """The SQL fill of one database: copies of template rows, direct inserts, rare values."""

    def __init__(self, db, t):
        self.db, self.t = db, t
        self.rare = {}  # (list path, field) -> (value, ids of the records in that list, or None)
        self.notes = {}  # list path -> note (a limit the fill kept to)

    def copy(self, table, template, source, vary):
        """INSERT a copy of the first row `template` (a WHERE) for each row of `source` (a FROM
        item `n`), the columns of `vary` (expressions of t.* and n.*) replacing the template's."""
        cols = [c for c, _ in self.db.columns(table) if c != "id" or "id" in vary]
        if not cols:
            raise RuntimeError(f"no table {table}")
        order = "id" if any(c == "id" for c, _ in self.db.columns(table)) else "1"
        if self.db.one(f"SELECT COUNT(*) FROM {table} WHERE {template}") in (None, "0"):
            raise RuntimeError(f"no template row in {table} ({template})")
        self.db.exec(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(vary.get(c, 't.' + c) for c in cols)} "
                     f"FROM (SELECT * FROM {table} WHERE {template} ORDER BY {order} LIMIT 1) t, {source};")

    def insert(self, table, source, values):
        """INSERT one row per row of `source` with `values` (every column that needs one)."""
        missing = [c for c, need in self.db.columns(table) if need and c not in values and c != "id"]
        if missing:
            raise RuntimeError(f"{table}: this script gives no value for {', '.join(missing)}")
        cols = list(values)
        self.db.exec(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(values[c] for c in cols)} FROM {source};")

    def top(self, table, where):
        return int(self.db.one(f"SELECT COALESCE(MAX(id), 0) FROM {table} WHERE {where}") or 0)

    def count(self, table, where):
        return int(self.db.one(f"SELECT COUNT(*) FROM {table} WHERE {where}") or 0)

    def pick(self, table, where, k, n=2):
        """Ids of `n` rows of `where`, the k-th pair of rare rows (near the list's middle, within
        the first 2,000 rows so that per-parent subsets of the copies hold them too)."""
        off = min(self.count(table, where), 2000) // 2 + 2 * k
        ids = [r[0] for r in self.db.rows(f"SELECT id FROM {table} WHERE {where} ORDER BY id LIMIT {n} OFFSET {off}")]
        return ids if table == "oauth_clients" else [int(x) for x in ids]  # its ids are text

    def set_rare(self, table, where, k, col, value, lists, n=2, readback=True):
        """Writes `value` into `col` of n rows of `where`; registers it for the (path, field)s of `lists`."""
        ids = self.pick(table, where, k, n)
        if ids:
            self.db.exec(f"UPDATE {table} SET {col} = {q(value)} WHERE id IN ({', '.join(q(x) for x in ids)});")
            self.register(lists, value, ids if readback else None)
        return ids

    def register(self, lists, value, ids):
        for path, field in lists:
            self.rare[(path, field)] = (value, ids)


# ---------------------------------------------------------------- templates, through the API

def make_templates():
    """One record of each kind through the API. Returns the ids (`t`) and why the ones that
    could not be made are missing (`why`)."""
    t, why = {}, {}

    def attempt(name, f):
        try:
            f()
        except Exception as e:  # noqa: BLE001 - recorded in the table
            why[name] = str(e)[:200]
            log(f"  template {name}: {e}")

    caps = {r["id"]: set(r.get("capabilities", [])) for r in api("GET", "/regions?page_size=500")["data"]}
    linodes = [r for r, c in caps.items() if "Linodes" in c]
    full = [r for r, c in caps.items() if {"Linodes", "VPCs", "NodeBalancers"} <= c]
    R = t["region"] = "us-east" if "us-east" in full else full[0]
    types = api("GET", "/compute/types?page_size=500")["data"]
    t["type"] = "g6-nanode-1" if any(x["id"] == "g6-nanode-1" for x in types) else types[0]["id"]
    t["rare_type"] = next(x["id"] for x in types if x["id"] != t["type"])
    big = max(types, key=lambda x: x["disk"])
    t["big_type"], t["big_disk"] = big["id"], big["disk"]
    images = [i["id"] for i in api("GET", "/images?page_size=500")["data"]]
    t["image"] = "linode/debian12" if "linode/debian12" in images else images[0]
    t["rare_image"] = next(i for i in images if i != t["image"])

    def instance(body):
        i = api("POST", "/compute/instances", dict({"region": R, "type": t["type"], "booted": False}, **body))
        for _ in range(400):
            if api("GET", f"/compute/instances/{i['id']}")["status"] == "offline":
                break
            time.sleep(0.05)
        return i

    def parent_instance():
        # The parent of the per-instance lists: Linode interfaces (history, interface firewalls),
        # no image, so that its plan's storage holds the copied disks.
        i = instance({"type": t["big_type"], "label": "tlin", "interface_generation": "linode", "interfaces": [{"public": {}}]})
        t["instance_id"] = i["id"]
        t["interface_id"] = api("GET", f"/compute/instances/{i['id']}/interfaces")["interfaces"][0]["id"]
        t["private"] = api("POST", "/networking/ips", {"type": "ipv4", "public": False, "instance_id": i["id"]})["address"]
        api("POST", f"/compute/instances/{i['id']}/disks", {"label": "tdisk", "size": 8, "filesystem": "ext4"})
        api("POST", f"/compute/instances/{i['id']}/configs", {"label": "tcfg", "devices": {}})
    attempt("parent instance", parent_instance)

    ranged = []

    def ranges():
        # One range per region (the spec's limit), where the region has an IPv6 range pool.
        for region in linodes:
            own = region == R and "instance_id" in t
            owner = t["instance_id"] if own else instance({"region": region, "label": f"r6-{region}"})["id"]
            s, _ = call("POST", "/v4/networking/ipv6/ranges", {"prefix_length": 64, "instance_id": owner})
            if s == 200:
                ranged.append(region)
            elif not own:
                api("DELETE", f"/compute/instances/{owner}")
    attempt("ipv6 ranges", ranges)
    t["ranges"] = len(ranged)
    # Rare regions: ones no template lives in, so that a filter by them finds the rare records only.
    spare = [r for r in full if r != R and r not in ranged] or [r for r in full if r != R] or [R]
    t["rare_region"], t["rare_region2"] = spare[0], (spare[1:] or spare)[0]

    def pools():
        # The public IPv4 and SLAAC blocks of the rare region, read from an instance made there
        # (then deleted), so that rare-region addresses lie in their region's pools.
        i = instance({"region": t["rare_region"], "label": "trare"})
        t["rare_v4"] = i["ipv4"][0]
        t["rare_v6"] = i["ipv6"].split("/")[0]
        api("DELETE", f"/compute/instances/{i['id']}")
    attempt("rare region", pools)

    def vpcs():
        try:
            v = api("POST", "/vpcs", {"label": "tvpc", "region": R, "ipv6": [{"range": "/52"}], "subnets": [
                {"label": "tsub", "ipv4": "10.0.0.0/12", "ipv6": [{"range": "/52"}]}, {"label": "tsub2", "ipv4": "10.200.0.0/24"}]})
        except RuntimeError as e:
            why["vpc ipv6"] = str(e)[:200]
            v = api("POST", "/vpcs", {"label": "tvpc", "region": R, "subnets": [
                {"label": "tsub", "ipv4": "10.0.0.0/12"}, {"label": "tsub2", "ipv4": "10.200.0.0/24"}]})
        t["vpc_id"], t["subnet"], t["subnet2"] = v["id"], v["subnets"][0]["id"], v["subnets"][1]["id"]
        v2 = api("POST", "/vpcs", {"label": "tvpc2", "region": t["rare_region"], "subnets": [{"label": "t2sub", "ipv4": "10.0.0.0/24"}]})
        t["vpc2_id"], t["subnet_v2"] = v2["id"], v2["subnets"][0]["id"]
    attempt("vpc", vpcs)

    def template_instance():
        # The instance the copies are made of: a profile with a public, a VPC and a VLAN interface.
        vpc_if = {"purpose": "vpc", "subnet_id": t["subnet"]}
        if "vpc ipv6" not in why:
            vpc_if["ipv6"] = {"slaac": [{"range": "auto"}]}
        i = instance({"image": t["image"], "root_pass": "aComplexP@ssword-1", "label": "tinst", "tags": ["tag"],
                      "interfaces": [{"purpose": "public"}, vpc_if, {"purpose": "vlan", "label": "tvlan"}]})
        t["tinst"], t["tinst_v4"], t["tinst_v6"] = i["id"], i["ipv4"][0], i["ipv6"].split("/")[0]
    if "subnet" in t:
        attempt("instance", template_instance)

    def firewall():
        f = api("POST", "/networking/firewalls", {"label": "tfw", "tags": ["tag"], "rules": {
            "inbound": [], "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT"}})
        t["firewall_id"] = f["id"]
        api("POST", f"/networking/firewalls/{f['id']}/devices", {"id": t["instance_id"], "type": "instance"})
    if "instance_id" in t:
        attempt("firewall", firewall)

    def balancer():
        b = api("POST", "/nodebalancers", {"region": R, "label": "tnb", "tags": ["tag"], "configs": [
            {"port": 80, "nodes": [{"label": "tnode", "address": f"{t['private']}:80"}]}]})
        t["nodebalancer_id"] = b["id"]
        t["config_id"] = api("GET", f"/nodebalancers/{b['id']}/configs")["data"][0]["id"]
    if "private" in t:
        attempt("nodebalancer", balancer)

    def transfer():
        t["txfer"] = instance({"label": "txfer"})["id"]
        api("POST", "/account/service-transfers", {"entities": {"instances": [t["txfer"]]}})
    attempt("service transfer", transfer)
    attempt("token", lambda: api("POST", "/profile/tokens", {"label": "ttok"}))
    attempt("user", lambda: api("POST", "/account/users", {"username": "tuser", "email": "tuser@example.com", "restricted": True}))
    attempt("oauth client", lambda: api("POST", "/account/oauth-clients", {"label": "tcli", "redirect_uri": "https://example.com/cb"}))
    attempt("ssh key", lambda: api("POST", "/profile/sshkeys", {"label": "tkey", "ssh_key":
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJ2b3Vu3VhXQ0ZpbkV6cnY0bVp4VnB6Ykx0bEJ1T2Z3 bench"}))
    attempt("rule set", lambda: api("POST", "/networking/firewalls/rulesets", {"label": "tset", "type": "inbound", "rules": [
        {"action": "ACCEPT", "protocol": "TCP", "ports": "22", "addresses": {"ipv4": ["0.0.0.0/0"]}}]}))

    def billing():
        api("POST", "/account/payment-methods", {"type": "credit_card", "is_default": True, "data": {
            "card_number": "4111111111111111", "expiry_month": 12, "expiry_year": NOW.year + 4, "cvv": "123"}})
        api("POST", "/account/payments", {"usd": "10.00"})
    attempt("payment", billing)
    return t, why


# ---------------------------------------------------------------- the fill, by SQL

def fill_child_accounts(f, sz):
    A = f.t["account"]
    n = sz["top"] - f.count("accounts", f"parent_id = {A}")
    f.insert("accounts", seq(n), {
        "euuid": f"'00000000-0000-4000-8000-' || {pad('n.i', 12)}", "parent_id": str(A), "company": f"'company ' || {I}",
        "email": f"'child' || {I} || '@example.com'", "first_name": f"'first' || {I}", "last_name": f"'last' || {I}",
        "created": ts("n.i")})
    # Billed through this month, as accounts that grew with a running server are: otherwise the
    # server's monthly close would catch up on every copied account while the rows are measured.
    month = NOW.strftime("%Y-%m-01T00:00:00")
    f.db.exec(f"INSERT INTO account_billing (account_id, billed_through) SELECT id, '{month}' FROM accounts "
              f"WHERE parent_id = {A} AND id NOT IN (SELECT account_id FROM account_billing);")


def fill_vpcs(f, sz):
    A, t = f.t["account"], f.t
    before = f.top("vpcs", f"account_id = {A}")
    f.copy("vpcs", f"id = {t['vpc_id']}", seq(sz["top"] - f.count("vpcs", f"account_id = {A}")), {
        "label": f"'v' || {I}", "description": "''", "ipv6_range": "NULL", "created": ts("n.i"), "updated": ts("n.i")})
    # Each copy has one subnet, as VPCs usually do (the list shows them).
    f.copy("vpc_subnets", f"id = {t['subnet2']}", numbered(f"SELECT id AS vid FROM vpcs WHERE account_id = {A} AND id > {before}", "id"), {
        "vpc_id": "n.vid", "label": "'main'", "ipv4": "'10.0.0.0/24'", "first_v4": "167772160", "last_v4": "167772415",
        "ipv6_range": "NULL", "created": ts("n.i"), "updated": ts("n.i")})
    new = f"account_id = {A} AND id > {before}"
    f.set_rare("vpcs", new, 0, "region", t["rare_region2"], [("/v4/vpcs", "region")])
    f.set_rare("vpcs", new, 1, "description", "bench rare description", [("/v4/vpcs", "description")])


def fill_subnets(f, sz):
    t = f.t
    base = 168820736  # 10.16.0.0: /29s after the template's 10.0.0.0/12
    f.copy("vpc_subnets", f"id = {t['subnet2']}", seq(sz["children"] - f.count("vpc_subnets", f"vpc_id = {t['vpc_id']}")), {
        "label": f"'s' || {I}", "ipv4": dotted(f"{base} + 8 * n.i") + " || '/29'", "first_v4": f"{base} + 8 * n.i",
        "last_v4": f"{base} + 8 * n.i + 7", "ipv6_range": "NULL", "created": ts("n.i"), "updated": ts("n.i")})


def v4_int(a):
    return int(ipaddress.IPv4Address(a))


def v6_head(a):
    """The /64 of an IPv6 address as text: its first four groups."""
    return ":".join(f"{int(x, 16):x}" for x in ipaddress.IPv6Address(a).exploded.split(":")[:4])


def fill_instances(f, sz):
    """Instances (copies of tinst, each with its profile, public IPv4 and SLAAC address from the
    region's pools, a link-local address, and public, VPC and VLAN interfaces): the instance,
    address, VLAN and VPC address lists."""
    A, t = f.t["account"], f.t
    a, b, c, _ = t["tinst_v4"].split(".")
    cap = (254 - int(c)) * 250  # addresses of the region's /16 after the templates' /24, 250 a /24
    want = sz["instances"]
    if want > cap:
        want = cap
        f.notes["/v4/compute/instances"] = f"limit {cap:,}: the addresses of the region's public pool"
    before = f.top("instances", f"account_id = {A}")
    f.copy("instances", f"id = {t['tinst']}", seq(want - f.count("instances", f"account_id = {A}")), {
        "label": f"'i' || {I}", "tags": f"'[\"tag' || {I} || '\"]'", "status": "'offline'", "target_status": "'offline'",
        "op_event_id": "NULL", "boot_config_id": "NULL", "created": ts("n.i"), "updated": ts("n.i")})
    new = f"account_id = {A} AND id > {before}"
    src = numbered(f"SELECT id AS iid, region FROM instances WHERE {new}", "id")
    f.copy("instance_configs", f"instance_id = {t['tinst']}", src, {"instance_id": "n.iid", "created": ts("n.i"), "updated": ts("n.i")})
    f.db.exec(f"UPDATE instances SET boot_config_id = (SELECT MIN(c.id) FROM instance_configs c WHERE c.instance_id = instances.id) WHERE {new};")
    ip = {"instance_id": "n.iid", "region": "n.region", "rdns": "NULL", "created": ts("n.i")}
    third, fourth = f"({int(c)} + 1 + (n.i - 1) / 250)", "(2 + (n.i - 1) % 250)"
    f.copy("ip_addresses", f"instance_id = {t['tinst']} AND kind = 'ipv4' AND public = TRUE", src, dict(
        ip, address=f"'{a}.{b}.' || CAST({third} AS TEXT) || '.' || CAST({fourth} AS TEXT)",
        v4=f"{v4_int(f'{a}.{b}.0.0')} + {third} * 256 + {fourth}"))
    f.copy("ip_addresses", f"instance_id = {t['tinst']} AND kind = 'slaac'", src, dict(
        ip, address=f"'{v6_head(t['tinst_v6'])}:' || CAST(n.i / 10000 AS TEXT) || ':' || CAST(n.i % 10000 AS TEXT) || ':bbbb:1'"))
    f.copy("ip_addresses", f"instance_id = {t['tinst']} AND kind = 'link_local'", src,
           dict(ip, address=f"'fe80::' || CAST(n.i / 10000 AS TEXT) || ':' || CAST(n.i % 10000 AS TEXT)"))
    src = numbered(f"SELECT i.id AS iid, i.region AS region, c.id AS cid FROM instances i JOIN instance_configs c "
                   f"ON c.instance_id = i.id WHERE i.account_id = {A} AND i.id > {before}", "i.id")
    nic = {"instance_id": "n.iid", "config_id": "n.cid", "region": "n.region", "created": ts("n.i"), "updated": ts("n.i")}
    f.copy("instance_interfaces", f"instance_id = {t['tinst']} AND purpose = 'public'", src, nic)
    f.copy("instance_interfaces", f"instance_id = {t['tinst']} AND purpose = 'vlan'", src, dict(nic, label=f"'vlan' || {I}"))
    vpc = dict(nic, vpc_ipv4=dotted("167772162 + n.i"), vpc_v4="167772162 + n.i", nat_1_1="NULL")
    have6 = f.db.one(f"SELECT vpc_ipv6_range FROM instance_interfaces WHERE instance_id = {t['tinst']} AND purpose = 'vpc'")
    if have6:
        # A /64 of the VPC's /52 each, as long as there are free ones (4,096 in all).
        g = ipaddress.IPv6Network(have6).network_address.exploded.split(":")
        head, g4 = ":".join(f"{int(x, 16):x}" for x in g[:3]), int(g[3], 16) & ~0xfff
        ok = f"n.i < {VPC_V6_SLOTS} AND n.i <> {int(g[3], 16) - g4}"
        net = f"'{head}:' || {hexa(f'{g4} + n.i')}"
        vpc.update(vpc_ipv6_range=f"CASE WHEN {ok} THEN {net} || '::/64' END",
                   vpc_ipv6_address=f"CASE WHEN {ok} THEN {net} || '::1' END")
        if want > VPC_V6_SLOTS:
            for p in ("/v4/vpcs/ipv6s", "/v4/vpcs/{vpc_id}/ipv6s"):
                f.notes[p] = f"limit {VPC_V6_SLOTS:,}: the /64 ranges of the VPC's /52"
    f.copy("instance_interfaces", f"instance_id = {t['tinst']} AND purpose = 'vpc'", src, vpc)
    f.notes["/v4/networking/ips"] = "two per instance: its public IPv4 and SLAAC address (more need an operator's allowance)"
    f.notes["/v4/networking/vlans"] = "one VLAN interface per instance"
    # Rare values, each on two instances (and what goes with them).
    # The rare region may hold the instance of its IPv6 range already: one more then, two in all.
    ids = f.pick("instances", new, 0, max(1, 2 - f.count("instances", f"account_id = {A} AND region = {q(t['rare_region'])}")))
    if ids and "rare_v4" in t:
        inl = ", ".join(map(str, ids))
        rr = q(t["rare_region"])
        ra, rb, _, _ = t["rare_v4"].split(".")
        for j, iid in enumerate(ids):
            f.db.exec(f"UPDATE ip_addresses SET address = '{ra}.{rb}.250.{10 + j}', v4 = {v4_int(f'{ra}.{rb}.250.{10 + j}')} "
                      f"WHERE instance_id = {iid} AND kind = 'ipv4' AND public = TRUE; "
                      f"UPDATE ip_addresses SET address = '{v6_head(t['rare_v6'])}:0:0:bbbb:{j + 1}' WHERE instance_id = {iid} AND kind = 'slaac';")
        f.db.exec(f"UPDATE instances SET region = {rr} WHERE id IN ({inl}); UPDATE ip_addresses SET region = {rr} WHERE instance_id IN ({inl}); "
                  f"UPDATE instance_interfaces SET region = {rr} WHERE instance_id IN ({inl}); "
                  f"UPDATE instance_interfaces SET vpc_id = {t['vpc2_id']}, subnet_id = {t['subnet_v2']}, vpc_ipv4 = '10.0.0.1' || CAST(id % 10 AS TEXT), "
                  f"vpc_v4 = 167772170 + id % 10, vpc_ipv6_range = NULL, vpc_ipv6_address = NULL WHERE instance_id IN ({inl}) AND purpose = 'vpc';")
        f.register([("/v4/compute/instances", "region")], t["rare_region"], ids)
        f.register([("/v4/networking/ips", "region"), ("/v4/networking/vlans", "region"), ("/v4/vpcs/ips", "region")], t["rare_region"], None)
        f.register([("/v4/vpcs/ips", "vpc_id")], t["vpc2_id"], None)
        f.register([("/v4/vpcs/ips", "subnet_id")], t["subnet_v2"], None)
    f.set_rare("instances", new, 1, "type", t["rare_type"], [("/v4/compute/instances", "type")])
    f.set_rare("instances", new, 2, "image", t["rare_image"], [("/v4/compute/instances", "image")])
    ids = f.set_rare("instances", new, 3, "status", "running", [("/v4/compute/instances", "status")])
    if ids:
        f.db.exec(f"UPDATE instances SET target_status = 'running' WHERE id IN ({', '.join(map(str, ids))});")
        f.register([(p, "active") for p in ("/v4/vpcs/ips", "/v4/vpcs/ipv6s", "/v4/vpcs/{vpc_id}/ips", "/v4/vpcs/{vpc_id}/ipv6s")], True, None)
    f.set_rare("instances", new, 4, "grp", "bench-rare-group", [("/v4/compute/instances", "group")])
    ids = f.pick("instances", new, 5)
    if ids:
        f.db.exec(f"UPDATE instance_interfaces SET subnet_id = {t['subnet2']}, vpc_ipv4 = '10.200.0.1' || CAST(id % 10 AS TEXT), "
                  f"vpc_v4 = 180879370 + id % 10, vpc_ipv6_range = NULL, vpc_ipv6_address = NULL "
                  f"WHERE instance_id IN ({', '.join(map(str, ids))}) AND purpose = 'vpc';")
        f.register([("/v4/vpcs/{vpc_id}/ips", "subnet_id")], t["subnet2"], None)
    ids = f.pick("instances", new, 6)
    if ids:
        f.db.exec(f"UPDATE ip_addresses SET rdns = 'bench-rare.example.com' WHERE kind = 'ipv4' AND public = TRUE "
                  f"AND instance_id IN ({', '.join(map(str, ids))});")
        f.register([("/v4/networking/ips", "rdns")], "bench-rare.example.com", None)


def fill_parent_instance(f, sz):
    """The children of the parent instance: configuration profiles, disks, interface history."""
    t, P = f.t, f"instance_id = {f.t['instance_id']}"
    path = "/v4/compute/instances/{instance_id}"
    f.copy("instance_configs", P, seq(sz["children"] - f.count("instance_configs", P)), {
        "label": f"'c' || {I}", "created": ts("n.i"), "updated": ts("n.i")})
    f.set_rare("instance_configs", P, 0, "kernel", "linode/direct-disk", [(path + "/configs", "kernel")])
    fit = (t["big_disk"] - 64) // 8  # 8 MB disks within the plan's storage (rare ones are 16 MB)
    want = min(sz["children"], fit)
    if want < sz["children"]:
        f.notes[path + "/disks"] = f"limit {fit:,}: 8 MB disks within the plan's {t['big_disk']:,} MB"
    f.copy("instance_disks", P, seq(want - f.count("instance_disks", P)), {
        "label": f"'d' || {I}", "created": ts("n.i"), "updated": ts("n.i")})
    f.set_rare("instance_disks", P, 0, "size", 16, [(path + "/disks", "size")])
    f.set_rare("instance_disks", P, 1, "filesystem", "raw", [(path + "/disks", "filesystem")])
    f.copy("instance_interface_history", P, seq(sz["children"] - f.count("instance_interface_history", P)), {
        "version": "1 + n.i", "created": ts("n.i")})
    f.set_rare("instance_interface_history", P, 0, "interface_id", t["interface_id"] + 1000000,
               [(path + "/interfaces/history", "interface_id")])


def fill_firewalls(f, sz):
    """Firewalls; the parent instance's firewalls (one active, the others disabled); devices of
    one firewall on distinct instances; versions of its rules."""
    A, t = f.t["account"], f.t
    fw = t["firewall_id"]
    before = f.top("firewalls", f"account_id = {A}")
    f.copy("firewalls", f"id = {fw}", seq(sz["top"] - f.count("firewalls", f"account_id = {A}")), {
        "label": f"'f' || {I}", "tags": f"'[\"tag' || {I} || '\"]'", "created": ts("n.i"), "updated": ts("n.i")})
    k = sz["children"]
    f.db.exec(f"UPDATE firewalls SET status = 'disabled' WHERE id IN "
              f"(SELECT id FROM firewalls WHERE account_id = {A} AND id > {before} ORDER BY id LIMIT {k});")
    disabled = f"SELECT id AS fid FROM firewalls WHERE account_id = {A} AND status = 'disabled' ORDER BY id"
    dev = f"firewall_id = {fw} AND instance_id = {t['instance_id']}"
    f.copy("firewall_devices", dev, numbered(f"{disabled} LIMIT {k - 1}", "id"), {
        "firewall_id": "n.fid", "active": "FALSE", "created": ts("n.i"), "updated": ts("n.i")})
    n = k - f.count("firewall_devices", f"firewall_id = {fw}")
    free = f"SELECT id AS iid FROM instances WHERE account_id = {A} AND id <> {t['instance_id']} ORDER BY id LIMIT {n}"
    if f.count("instances", f"account_id = {A}") - 1 < n:
        f.notes["/v4/networking/firewalls/{firewall_id}/devices"] = "one device per instance: the instances there are"
    f.copy("firewall_devices", dev, numbered(free, "id"), {"instance_id": "n.iid", "created": ts("n.i"), "updated": ts("n.i")})
    P = f"firewall_id = {fw}"
    f.copy("firewall_rule_versions", P, seq(k - f.count("firewall_rule_versions", P)), {"version": "1 + n.i", "created": ts("n.i")})
    f.db.exec(f"UPDATE firewalls SET rules_version = (SELECT MAX(version) FROM firewall_rule_versions WHERE {P}) WHERE id = {fw};")


def fill_nodebalancers(f, sz):
    """Balancers (the first CHILDREN with a node on the parent instance's private address, and
    on disabled firewalls of the parent balancer); the parent's configs; a config's nodes."""
    A, t = f.t["account"], f.t
    nb, cfg, k = t["nodebalancer_id"], t["config_id"], sz["children"]
    before = f.top("nodebalancers", f"account_id = {A}")
    f.copy("nodebalancers", f"id = {nb}", seq(sz["top"] - f.count("nodebalancers", f"account_id = {A}")), {
        "label": f"'b' || {I}", "tags": f"'[\"tag' || {I} || '\"]'", "v4": "2139095040 + n.i", "ipv4": dotted("2139095040 + n.i"),
        "ipv6": v6("2001:db8:c", "n.i"), "created": ts("n.i"), "updated": ts("n.i")})  # 127.128.0.0 on
    new = f"account_id = {A} AND id > {before}"
    f.set_rare("nodebalancers", new, 0, "region", t["rare_region"],
               [("/v4/nodebalancers", "region"), ("/v4/compute/instances/{instance_id}/nodebalancers", "region")])
    f.copy("nodebalancer_configs", f"id = {cfg}", numbered(f"SELECT id AS bid FROM nodebalancers WHERE {new} ORDER BY id LIMIT {k - 1}", "id"), {
        "nodebalancer_id": "n.bid", "created": ts("n.i"), "updated": ts("n.i")})
    f.copy("nodebalancer_nodes", f"config_id = {cfg}", numbered(
        f"SELECT id AS cid, nodebalancer_id AS bid FROM nodebalancer_configs WHERE account_id = {A} AND nodebalancer_id > {before}", "id"), {
        "config_id": "n.cid", "nodebalancer_id": "n.bid", "created": ts("n.i"), "updated": ts("n.i")})
    f.copy("firewall_devices", f"firewall_id = {t['firewall_id']}", numbered(
        f"SELECT id AS fid FROM firewalls WHERE account_id = {A} AND status = 'disabled' ORDER BY id LIMIT {k}", "id"), {
        "firewall_id": "n.fid", "instance_id": "NULL", "nodebalancer_id": str(nb), "active": "FALSE",
        "created": ts("n.i"), "updated": ts("n.i")})
    ports = 65535 - 1000
    P = f"nodebalancer_id = {nb}"
    f.copy("nodebalancer_configs", f"id = {cfg}", seq(min(k, ports) - f.count("nodebalancer_configs", P)), {
        "port": "1000 + n.i", "created": ts("n.i"), "updated": ts("n.i")})
    path = "/v4/nodebalancers/{nodebalancer_id}/configs"
    for j, (col, field, value) in enumerate([("protocol", "protocol", "tcp"), ("algorithm", "algorithm", "leastconn"),
                                             ("stickiness", "stickiness", "table"), ("check_type", "check", "connection")]):
        f.set_rare("nodebalancer_configs", P, j, col, value, [(path, field)])
    P = f"config_id = {cfg}"
    f.copy("nodebalancer_nodes", f"id = (SELECT MIN(id) FROM nodebalancer_nodes WHERE {P})", seq(min(k, ports) - f.count("nodebalancer_nodes", P)), {
        "label": f"'n' || {I}", "address": f"'{t['private']}:' || CAST(1000 + n.i AS TEXT)", "port": "1000 + n.i",
        "created": ts("n.i"), "updated": ts("n.i")})
    path += "/{config_id}/nodes"
    for j, (col, value) in enumerate([("status", "UP"), ("mode", "drain"), ("weight", 50)]):
        f.set_rare("nodebalancer_nodes", P, j, col, value, [(path, col)])
    if k > ports:
        for p in ("/v4/nodebalancers/{nodebalancer_id}/configs", path):
            f.notes[p] = f"limit {ports:,}: one port each"


def fill_events(f, sz):
    A, U = f.t["account"], f.t["user"]
    mine = f"account_id = {A}"
    f.copy("events", f"id = (SELECT MIN(id) FROM events WHERE {mine})", seq(sz["events"] - f.count("events", mine)), {
        "entity_id": "1000000000 + n.i", "created": ts("n.i"), "completed": ts("n.i")})
    path = "/v4/account/events"
    for j, (col, field, value) in enumerate([("action", "action", "bench_rare_action"), ("entity_type", "entity.type", "bench_rare_type"),
                                             ("username", "username", "bench-rare-user"), ("status", "status", "failed")]):
        f.set_rare("events", mine, j, col, value, [(path, field)])
    ids = f.pick("events", mine, 4)
    f.db.exec(f"INSERT INTO event_reads (user_id, event_id) VALUES {', '.join(f'({U}, {x})' for x in ids)};")
    f.register([(path, "read")], True, ids)
    first = f.db.ints(f"SELECT MIN(id) FROM events WHERE {mine}")
    f.db.exec(f"UPDATE users SET events_seen_upto = {first[0]} WHERE id = {U};")
    f.register([(path, "seen")], True, first)


def fill_tokens(f, sz):
    P = f"user_id = {f.t['user']} AND kind = 'pat'"
    f.copy("tokens", "label = 'ttok'", seq(sz["top"] - f.count("tokens", P)), {
        "label": f"'k' || {I}", "secret_hash": f"t.secret_hash || '-' || {I}", "created": ts("n.i")})
    f.set_rare("tokens", P, 0, "expiry", (NOW + datetime.timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%S"), [("/v4/profile/tokens", "expiry")])


def fill_users(f, sz):
    P = f"account_id = {f.t['account']}"
    f.copy("users", "username = 'tuser'", seq(sz["top"] - f.count("users", P)), {
        "username": f"'u' || {I}", "email": f"'u' || {I} || '@example.com'", "created": ts("n.i")})
    f.set_rare("users", P, 0, "user_type", "proxy", [("/v4/account/users", "user_type")], readback=False)
    f.set_rare("users", P, 1, "restricted", False, [("/v4/account/users", "restricted")], n=1, readback=False)


def fill_oauth_clients(f, sz):
    P = f"account_id = {f.t['account']}"
    f.copy("oauth_clients", "label = 'tcli'", seq(sz["top"] - f.count("oauth_clients", P)), {
        "id": f"t.id || '-' || {I}", "label": f"'c' || {I}", "secret_hash": f"t.secret_hash || '-' || {I}",
        "redirect_uri": f"'https://example.com/cb/' || {I}", "created": ts("n.i"), "seq": "t.seq + n.i"})
    f.set_rare("oauth_clients", P, 0, "public", True, [("/v4/account/oauth-clients", "public")])
    f.set_rare("oauth_clients", P, 1, "status", "suspended", [("/v4/account/oauth-clients", "status")])


def fill_simple(table, template, scope, label):
    def run(f, sz):
        P = scope.format(**f.t)
        vary = {"label": f"'{label}' || {I}", "created": ts("n.i")}
        if any(c == "updated" for c, _ in f.db.columns(table)):
            vary["updated"] = ts("n.i")
        f.copy(table, template, seq(sz["top"] - f.count(table, P)), vary)
    return run


def fill_transfers(f, sz):
    A = f.t["account"]
    P = f"account_id = {A} OR receiver_account_id = {A}"
    tid = int(f.db.one(f"SELECT MIN(id) FROM service_transfers WHERE account_id = {A}"))
    before = f.top("service_transfers", P)
    f.copy("service_transfers", f"id = {tid}", seq(sz["top"] - f.count("service_transfers", P)), {
        "token": f"t.token || '-' || {I}", "created": ts("n.i"), "updated": ts("n.i"), "expiry": ts("n.i", FUTURE)})
    f.copy("service_transfer_instances", f"transfer_id = {tid}", numbered(
        f"SELECT id AS tid FROM service_transfers WHERE account_id = {A} AND id > {before}", "id"), {"transfer_id": "n.tid", "active": "FALSE"})
    lists = ["/v4/account/service-transfers", "/v4/account/entity-transfers"]
    f.set_rare("service_transfers", P, 0, "status", "canceled", [(p, "status") for p in lists], readback=False)
    child = f.db.one(f"SELECT MIN(id) FROM accounts WHERE parent_id = {A}")
    ids = f.pick("service_transfers", P, 1)
    if child and ids:
        f.db.exec(f"UPDATE service_transfers SET account_id = {child}, receiver_account_id = {A}, status = 'accepted', "
                  f"accepted = {q(NOW.strftime('%Y-%m-%dT%H:%M:%S'))} WHERE id IN ({', '.join(map(str, ids))});")
        f.register([(p, "is_sender") for p in lists], False, None)


def fill_logins(f, sz):
    A, U = f.t["account"], f.t["user"]
    P = f"account_id = {A}"
    f.insert("logins", seq(sz["top"] - f.count("logins", P)), {
        "account_id": str(A), "user_id": str(U), "username": "'admin'", "ip": dotted("167772160 + n.i"), "datetime": ts("n.i"),
        "status": "'successful'", "restricted": "FALSE"})
    lists = ["/v4/account/logins", "/v4/profile/logins"]
    for j, (col, value) in enumerate([("username", "bench-rare-user"), ("restricted", True)]):
        f.set_rare("logins", P, j, col, value, [(p, col) for p in lists])


def fill_payment_methods(f, sz):
    A = f.t["account"]
    P = f"account_id = {A} AND active = TRUE"
    limit = 6  # spec 8: active payment methods per account
    f.copy("payment_methods", P, seq(min(sz["top"], limit) - f.count("payment_methods", P)), {
        "is_default": "FALSE", "gateway_ref": f"t.gateway_ref || '-' || {I}", "created": ts("n.i")})
    if sz["top"] > limit:
        f.notes["/v4/account/payment-methods"] = f"spec limit {limit}: active payment methods per account"
    f.register([("/v4/account/payment-methods", "is_default")], True, f.db.ints(f"SELECT id FROM payment_methods WHERE {P} AND is_default = TRUE"))


def fill_payments(f, sz):
    P = f"account_id = {f.t['account']}"
    f.copy("payments", P, seq(sz["top"] - f.count("payments", P)), {
        "date": ts("n.i"), "gateway_ref": f"t.gateway_ref || '-' || {I}", "charge_key": f"t.charge_key || '-' || {I}"})


def fill_invoices(f, sz):
    A = f.t["account"]
    P = f"account_id = {A}"
    f.insert("invoices", seq(sz["top"] - f.count("invoices", P)), {
        "account_id": str(A), "date": ts("n.i"), "label": f"'Invoice ' || {I}", "period_from": ts("n.i"), "period_to": ts("n.i + 1"),
        "subtotal": "n.i", "tax": "0", "total": "n.i"})
    f.t["invoice_id"] = inv = int(f.db.one(f"SELECT MIN(id) FROM invoices WHERE {P}"))
    P = f"invoice_id = {inv}"
    f.insert("invoice_items", seq(sz["children"] - f.count("invoice_items", P)), {
        "invoice_id": str(inv), "label": f"'item ' || {I}", "from_ts": ts("n.i"), "to_ts": ts("n.i + 3600"), "quantity": "1",
        "unit_price": "'0.0075'", "amount": "1", "tax": "0", "total": "1", "region": q(f.t["region"]), "type": "'hourly'"})
    path = "/v4/account/invoices/{invoice_id}/items"
    f.set_rare("invoice_items", P, 0, "type", "misc", [(path, "type")], readback=False)
    f.set_rare("invoice_items", P, 1, "region", f.t["rare_region"], [(path, "region")], readback=False)


def fill_maintenance(f, sz):
    A = f.t["account"]
    P = f"account_id = {A}"
    lo, hi, n = (int(x) for x in f.db.rows(f"SELECT MIN(id), MAX(id), COUNT(*) FROM instances WHERE {P}")[0])
    owner = f"{lo} + n.i % {n}" if hi - lo + 1 == n else str(f.t["instance_id"])
    f.insert("maintenance", seq(sz["top"] - f.count("maintenance", P)), {
        "account_id": str(A), "instance_id": owner, "type": "'reboot'", "reason": "'bench'", "status": "'pending'",
        "when_ts": ts("n.i", FUTURE), "created": ts("n.i")})
    f.set_rare("maintenance", P, 0, "status", "started", [("/v4/account/maintenance", "status")], readback=False)
    f.set_rare("maintenance", P, 1, "type", "cold_migration", [("/v4/account/maintenance", "type")], readback=False)
    f.notes["/v4/account/notifications"] = "one per pending maintenance window"


# (name, what it needs from the templates, function); the lists each fills are in SOURCE below.
STEPS = [
    ("child accounts", [], fill_child_accounts),
    ("vpcs", ["vpc_id"], fill_vpcs),
    ("subnets", ["vpc_id"], fill_subnets),
    ("instances", ["tinst", "vpc2_id"], fill_instances),
    ("parent instance", ["instance_id"], fill_parent_instance),
    ("firewalls", ["firewall_id"], fill_firewalls),
    ("nodebalancers", ["nodebalancer_id", "firewall_id"], fill_nodebalancers),
    ("events", [], fill_events),
    ("tokens", [], fill_tokens),
    ("users", [], fill_users),
    ("oauth clients", [], fill_oauth_clients),
    ("ssh keys", [], fill_simple("ssh_keys", "label = 'tkey'", "user_id = {user}", "k")),
    ("rule sets", [], fill_simple("firewall_rulesets", "label = 'tset'", "account_id = {account}", "r")),
    ("service transfers", ["txfer"], fill_transfers),
    ("logins", [], fill_logins),
    ("payment methods", [], fill_payment_methods),
    ("payments", [], fill_payments),
    ("invoices", [], fill_invoices),
    ("maintenance", [], fill_maintenance),
]


def fill(db, t, sizes):
    """Runs every step; returns (Fill, {step: why it failed}, {step: seconds})."""
    f = Fill(db, t)
    f.notes["/v4/networking/ipv6/ranges"] = f"spec limit: one per account and region ({t.get('ranges', 0)} with an IPv6 range pool)"
    t["account"] = int(db.one("SELECT account_id FROM users WHERE username = 'admin'"))
    t["user"] = int(db.one("SELECT id FROM users WHERE username = 'admin'"))
    why, took = {}, {}
    for name, needs, run in STEPS:
        missing = [k for k in needs if k not in t]
        if missing:
            why[name] = f"its template could not be made through the API ({', '.join(missing)})"
            continue
        t0 = time.time()
        try:
            run(f, sizes)
        except Exception as e:  # noqa: BLE001 - recorded in the table
            why[name] = f"the fill failed: {str(e).strip().splitlines()[-1][:200]}"
        took[name] = time.time() - t0
        log(f"  {name}: {took[name]:.1f} s{' (' + why[name] + ')' if name in why else ''}")
    t0 = time.time()
    db.exec("ANALYZE;" if not PG else "VACUUM ANALYZE;")
    took["analyze"] = time.time() - t0
    return f, why, took


# ---------------------------------------------------------------- the rows, from the spec

# Which fill step fills each list (spec paths; `/v4/linode/...` reads as `/v4/compute/...`).
I_ = "/v4/compute/instances/{instance_id}"
SOURCE = {
    "/v4/account/child-accounts": "child accounts", "/v4/account/entity-transfers": "service transfers",
    "/v4/account/service-transfers": "service transfers", "/v4/account/events": "events",
    "/v4/account/invoices": "invoices", "/v4/account/invoices/{invoice_id}/items": "invoices",
    "/v4/account/logins": "logins", "/v4/profile/logins": "logins", "/v4/account/maintenance": "maintenance",
    "/v4/account/notifications": "maintenance", "/v4/account/oauth-clients": "oauth clients",
    "/v4/account/payment-methods": "payment methods", "/v4/account/payments": "payments", "/v4/account/users": "users",
    "/v4/compute/instances": "instances", I_ + "/configs": "parent instance", I_ + "/disks": "parent instance",
    I_ + "/interfaces/history": "parent instance", I_ + "/firewalls": "firewalls",
    I_ + "/interfaces/{interface_id}/firewalls": "firewalls", I_ + "/nodebalancers": "nodebalancers",
    "/v4/networking/firewalls": "firewalls", "/v4/networking/firewalls/{firewall_id}/devices": "firewalls",
    "/v4/networking/firewalls/{firewall_id}/history": "firewalls", "/v4/networking/firewalls/rulesets": "rule sets",
    "/v4/networking/ips": "instances", "/v4/networking/vlans": "instances", "/v4/nodebalancers": "nodebalancers",
    "/v4/nodebalancers/{nodebalancer_id}/configs": "nodebalancers",
    "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/nodes": "nodebalancers",
    "/v4/nodebalancers/{nodebalancer_id}/firewalls": "nodebalancers", "/v4/profile/sshkeys": "ssh keys",
    "/v4/profile/tokens": "tokens", "/v4/vpcs": "vpcs", "/v4/vpcs/{vpc_id}/subnets": "subnets",
    "/v4/vpcs/ips": "instances", "/v4/vpcs/ipv6s": "instances", "/v4/vpcs/{vpc_id}/ips": "instances",
    "/v4/vpcs/{vpc_id}/ipv6s": "instances", "/v4/networking/ipv6/ranges": "ipv6 ranges",
}
# Filters the model gives no rare value for: why every (or half the) record matches.
_V6 = "the interfaces with IPv6 are on the one dual-stack subnet"
FIELD_NOTES = {
    ("/v4/account/logins", "status"): "only successful sign-ins are listed",
    ("/v4/profile/logins", "status"): "only successful sign-ins are listed",
    ("/v4/networking/ips", "prefix"): "follows the address kind (IPv4 or SLAAC, half the list each)",
    ("/v4/networking/ips", "type"): "follows the address kind (IPv4 or SLAAC, half the list each)",
    ("/v4/networking/ips", "public"): "only public addresses are listed",
    (I_ + "/disks", "status"): "the runtime's (ready)",
    ("/v4/account/payment-methods", "type"): "credit cards only (the simulated gateway)",
    ("/v4/vpcs/{vpc_id}/ips", "region"): "one VPC's interfaces: its region",
    ("/v4/vpcs/{vpc_id}/ips", "vpc_id"): "one VPC's interfaces",
    ("/v4/vpcs/{vpc_id}/ipv6s", "vpc_id"): "one VPC's interfaces",
    ("/v4/vpcs/{vpc_id}/ipv6s", "region"): _V6, ("/v4/vpcs/{vpc_id}/ipv6s", "subnet_id"): _V6,
    ("/v4/vpcs/ipv6s", "region"): _V6, ("/v4/vpcs/ipv6s", "vpc_id"): _V6, ("/v4/vpcs/ipv6s", "subnet_id"): _V6,
}
# Lists no account fill can grow, and why.
FIXED = {
    I_ + "/volumes": "not filled: nubis keeps no volumes (always empty)",
    "/v4/nodebalancers/{nodebalancer_id}/vpcs": "not filled: always empty (nubis places no balancer in a VPC)",
}
CATALOG = "catalog (the configuration's, the same on both accounts)"
for _p in ("/v4/account/availability", "/v4/compute/types", "/v4/images", "/v4/maintenance/policies",
           "/v4/network-transfer/prices", "/v4/networking/firewalls/templates", "/v4/networking/ipv6/pools",
           "/v4/networking/prefixlists", "/v4/nodebalancers/types", "/v4/regions", "/v4/regions/availability",
           "/v4/regions/vpc-availability"):
    FIXED[_p] = CATALOG


def spec_key(path):
    return path.replace("/v4/linode/", "/v4/compute/", 1)


def list_operations(spec):
    """(path, filterable fields, orders) of every GET answering a page; `/v4/compute/...` also
    under the hosted name `/v4/linode/...`."""
    ops = []
    for path, item in sorted(spec["paths"].items()):
        op = item.get("get") or {}
        ref = op.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {}) \
            .get("schema", {}).get("$ref", "")
        if not ref.startswith("#/components/schemas/Page_"):
            continue
        props = {}
        for p in op.get("parameters", []):
            if p.get("name") == "X-Filter":
                props = p.get("content", {}).get("application/json", {}).get("schema", {}).get("properties", {})
        fields = [k for k in props if not k.startswith("+")]
        orders = props.get("+order_by", {}).get("enum", [])
        ops.append((path, fields, orders))
        if path.startswith("/v4/compute/"):
            # The hosted name is the same handler: its random page is measured, and with
            # HOSTED_ALL=1 every filter and order too.
            twin = path.replace("/v4/compute/", "/v4/linode/", 1)
            ops.append((twin, fields, orders) if os.environ.get("HOSTED_ALL") else (twin, [], []))
    return ops


def at(record, path):
    v = record
    for part in path.split("."):
        if not isinstance(v, dict):
            return None
        v = v.get(part)
    if isinstance(v, list):
        v = v[0] if v else None
    return v


def wrk(path, pages, xfilter):
    if DRY:
        return 1.0, 0.0, 0
    env = dict(os.environ, LPATH=path, PAGES=str(max(1, pages)))
    def run(duration):
        cmd = ["wrk", "-t1", f"-c{C}", f"-d{duration}", "--latency", "--timeout", "10s", "-s", LUA,
               "-H", f"Authorization: Bearer {TOKEN}"]
        if xfilter is not None:
            cmd += ["-H", f"X-Filter: {json.dumps(xfilter)}"]
        cmd.append(f"http://{ADDR[0]}:{ADDR[1]}{path}")
        return subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    # A first run warms what the request reads (the first rows after a restart measured the
    # server's warm-up otherwise); only the second is measured.
    if WARM != "0":
        run(WARM)
    text = run(D)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\b", text, re.M)
    p99 = float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)] if m else None
    errs = sum(int(x) for x in re.findall(r"Non-2xx or 3xx responses: (\d+)", text))
    errs += sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
    return rps, p99, errs


def seconds(duration):
    """wrk's duration (`2s`, `1m`, `1h`, or seconds) in seconds."""
    m = re.fullmatch(r"([\d.]+)([smh]?)", duration)
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)] if m else 1.0


def settle():
    """After a run whose requests outlived it: waits (up to a minute) until a read by key answers
    quickly again, so that requests wrk left behind do not slow the next row."""
    fast, end = 0, time.time() + 60
    while fast < 3 and time.time() < end:
        t0 = time.time()
        call("GET", "/v4/profile")
        fast = fast + 1 if time.time() - t0 < 0.02 else 0
        time.sleep(0.05)


def show(v):
    return json.dumps(v) if len(json.dumps(v)) <= 28 else json.dumps(v)[:25] + "…"


def measure(ops, params, rare):
    """{(path, request): row} for one running server; a row is a dict (see the table)."""
    out = {}
    for path, fields, orders in ops:
        if not only(path):
            continue
        key = spec_key(path)
        missing = [p for p in re.findall(r"{(\w+)}", path) if p not in params]
        if missing:
            out[(path, "page")] = {"skip": f"no {', '.join(missing)}: its template could not be made"}
            continue
        url = re.sub(r"{(\w+)}", lambda m: str(params[m.group(1)]), path)
        status, first = call("GET", url + "?page_size=100")
        if status != 200:
            out[(path, "page")] = {"skip": f"GET answered {status}"}
            continue
        results = first["results"]
        # Pages that hold 100 rows: a small account of 102 events has one, not two (a page of
        # 2 rows would halve the cost the large account is compared with).
        pages = max(1, results // 100)
        _, mid = call("GET", f"{url}?page_size=25&page={results // 50 + 1}")
        record = ((mid.get("data") if isinstance(mid, dict) else None) or first["data"] or [None])[0]
        reqs = [("page", "page", None, pages)]
        for fld in fields:
            value, ids = rare.get((key, fld), (None, None))
            if (key, fld) in rare and ids and "id" in fields:
                s, b = call("GET", url + "?page_size=25", headers={"X-Filter": json.dumps({"id": ids[0]})})
                if s == 200 and b.get("data") and at(b["data"][0], fld) is not None:
                    value = at(b["data"][0], fld)  # as the API shows it
            elif (key, fld) not in rare:
                value = at(record, fld) if record else None
            if value is None:
                out[(path, f"{fld} =")] = {"skip": "no record holds a value to filter by"}
                continue
            reqs.append((f"{fld} =", f"{fld} = {show(value)}", {fld: value}, None))
        for o in orders:
            reqs.append((f"order {o}", f"order {o}", {"+order_by": o}, pages))
        for name, shown, xf, npages in reqs:
            h = {"X-Filter": json.dumps(xf)} if xf is not None else {}
            status, body = call("GET", url + "?page_size=100", headers=h)
            if status != 200:
                reason = body["errors"][0]["reason"][:80] if isinstance(body, dict) and body.get("errors") else ""
                out[(path, name)] = {"skip": f"GET answered {status} {reason}".strip(), "shown": shown}
                continue
            n = body["results"]
            rps, p99, errs = wrk(url, npages if npages is not None else math.ceil(n / 100), xf)
            # A run that completed fewer requests than twice its connections left requests
            # behind (each took about as long as the run, or longer): they are waited for.
            if p99 is None or p99 >= 1000 or errs or rps * seconds(D) < 2 * int(C):
                settle()
            out[(path, name)] = {"shown": shown, "results": n, "rps": rps, "p99": p99, "errors": errs}
            log(f"  {path} {shown}: {n} results, {rps:.0f} req/s, p99 {p99 if p99 is None else round(p99, 1)} ms")
    # Reads while VPCs are created through the API (each create also writes an event).
    for path in ("/v4/vpcs", "/v4/account/events"):
        if not only(path):
            continue
        _, first = call("GET", path + "?page_size=100")
        writer = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench/scale/writer.py"), f"{ADDR[0]}:{ADDR[1]}", TOKEN, "20"],
                                  stderr=open(os.path.join(OUT, "writer.log"), "a"))
        time.sleep(0.5)
        rps, p99, errs = wrk(path, first["pages"], None)
        writer.terminate()
        writer.wait()
        out[(path, "page, writes going on")] = {"shown": "page, VPC creates going on (20/s)", "results": first["results"],
                                                "rps": rps, "p99": p99, "errors": errs}
        log(f"  {path} page, writes going on: {rps:.0f} req/s, p99 {p99} ms")
    return out


# ---------------------------------------------------------------- the table

def note_of(path, request, fills):
    """Why a list is not at its full size in the large account, or a filter matches many."""
    key = spec_key(path)
    extra = FIELD_NOTES.get((key, request.split(" =")[0]))
    note = list_note(key, fills)
    return "; ".join(x for x in (note, extra) if x)


def list_note(key, fills):
    if key in FIXED:
        return FIXED[key]
    step = SOURCE.get(key)
    if step is None:
        return "not filled: no fill in bench/scale/lists.py for this list"
    f, why = fills
    if step in why:
        return f"not filled: {why[step]}"
    return f.notes.get(key, "")


def table(results, fills):
    small, large = results["small"], results["large"]
    name = {"sqlite": "SQLite", "postgres": "PostgreSQL"}[ENGINE]
    lines = [f"## {name}", "",
             f"Goals: large / small req/s >= 0.8; p99 of the large account < 10 ms at {C} connections (bold: missed).", "",
             "| list | request | results (small / large) | small: req/s (p99 ms) | large: req/s (p99 ms) | large / small | note |",
             "|---|---|---|---|---|---|---|"]
    missed_ratio = missed_p99 = measured = 0
    for key in list(small) + [k for k in large if k not in small]:
        path, _ = key
        s, l = small.get(key, {"skip": "not measured"}), large.get(key, {"skip": "not measured"})
        note = note_of(path, key[1], fills)
        if "skip" in s or "skip" in l:
            why = l.get("skip") or s.get("skip")
            lines.append(f"| `{path}` | {l.get('shown') or s.get('shown') or key[1]} | — | — | — | — | {why}{'; ' + note if note else ''} |")
            continue
        measured += 1
        ratio = l["rps"] / s["rps"] if s["rps"] else 0.0
        low = ratio < 0.8
        slow = l["p99"] is None or l["p99"] >= 10
        missed_ratio += low
        missed_p99 += slow

        def cell(r, bold=False):
            p = "—" if r["p99"] is None else f"{r['p99']:.1f}"
            p = f"**{p}**" if bold else p
            e = f", {r['errors']:,} errors" if r["errors"] else ""
            return f"{r['rps']:,.0f} ({p}{e})"
        rt = f"**{ratio:.2f}**" if low else f"{ratio:.2f}"
        lines.append(f"| `{path}` | {l['shown']} | {s['results']:,} / {l['results']:,} | {cell(s)} | {cell(l, slow)} | {rt} | {note} |")
    lines += ["", f"{measured} rows measured: {missed_ratio} below 0.8 large / small, {missed_p99} with p99 >= 10 ms."]
    ev, vp = large.get(("/v4/account/events", "page")), large.get(("/v4/vpcs", "page"))
    if ev and vp and "rps" in ev and "rps" in vp:
        r = ev["rps"] / vp["rps"]
        lines.append(f"A page of 100 events ({ev['results']:,}) vs a page of 100 VPCs ({vp['results']:,}), large account: "
                     f"{ev['rps']:,.0f} / {vp['rps']:,.0f} req/s = {'**%.2f**' % r if r < 0.5 else '%.2f' % r} (goal >= 0.5).")
    return "\n".join(lines)


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(LUA, "w") as fh:
        fh.write('-- A random page of 100, uniformly over the list\'s PAGES pages (headers come from -H).\n'
                 'local pages = tonumber(os.getenv("PAGES") or "1")\n'
                 'local path = os.getenv("LPATH")\n'
                 'math.randomseed(os.time() + math.floor(os.clock() * 1000000))\n'
                 'request = function()\n'
                 '  return wrk.format("GET", path .. "?page_size=100&page=" .. math.random(1, pages))\n'
                 'end\n')
    results, fills, timing, spec = {}, {}, {}, None
    for size in ("small", "large"):
        sizes = {"top": SMALL, "children": SMALL, "instances": SMALL, "events": SMALL} if size == "small" else \
            {"top": LARGE, "children": min(LARGE, CHILDREN), "instances": INSTANCES, "events": EVENTS}
        log(f"==> {ENGINE}, {size} account: {sizes}")
        t0 = time.time()
        db = Db(size)
        s = Server(db)
        t, why_t = make_templates()
        spec = spec or call("GET", "/v4/openapi.json", auth=False)[1]
        s.stop()
        took = {"templates": time.time() - t0}
        log(f"  templates: {took['templates']:.1f} s")
        f, why, took_fill = fill(db, t, sizes)
        took.update(took_fill)
        for k, v in why_t.items():
            log(f"  template {k}: {v}")
        fills[size] = (f, why)
        fills[size + " templates"] = why_t
        t0 = time.time()
        s = Server(db)
        took["restart"] = time.time() - t0
        # nubis cuts the order fences of the lists the fill grew (a range past 4 times its
        # scope's chunk: a 64th of the scope's rows, between 256 and 2,048) once it runs;
        # measuring starts when that is done, as on a server that grew with its lists. The
        # statement is nubis's own (`fences_due` in crates/nubis-store/src/fences.rs).
        t0 = time.time()
        share = "CAST(t.total AS BIGINT) / 64"
        due = ("WITH d AS (SELECT DISTINCT kind, scope_id FROM order_fence_counts WHERE n > 128), "
               "r AS (SELECT c.kind, c.scope_id, c.fence, SUM(c.n) AS n FROM order_fence_counts c "
               "JOIN d ON d.kind = c.kind AND d.scope_id = c.scope_id GROUP BY c.kind, c.scope_id, c.fence), "
               "t AS (SELECT kind, scope_id, SUM(n) AS total FROM r GROUP BY kind, scope_id) "
               "SELECT COUNT(*) FROM r JOIN t ON t.kind = r.kind AND t.scope_id = r.scope_id "
               f"WHERE r.n > 4 * (CASE WHEN {share} < 256 THEN 256 WHEN {share} > 2048 THEN 2048 ELSE {share} END)")
        while int(db.one(due) or 0) > 0 and time.time() - t0 < 1800:
            time.sleep(1)
        took["fences"] = time.time() - t0
        call("GET", "/v4/account/events")  # warm up
        params = {k: t[k] for k in ("instance_id", "interface_id", "firewall_id", "nodebalancer_id", "config_id", "vpc_id", "invoice_id") if k in t}
        t0 = time.time()
        results[size] = measure(list_operations(spec), params, f.rare)
        took["measure"] = time.time() - t0
        if HOLD and size == "large":
            log(f"  holding the large account's server on {ADDR[0]}:{ADDR[1]} (pid {s.p.pid}) for {HOLD} s")
            time.sleep(HOLD)
        s.stop()
        timing[size] = took
        log(f"  {size}: " + ", ".join(f"{k} {v:.0f} s" for k, v in took.items()))
    text = table(results, fills["large"])
    if fills["large templates"]:
        text += "\n\nTemplates the API refused: " + "; ".join(f"{k}: {v}" for k, v in fills["large templates"].items())
    text += "\n\nPhases of the large account (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timing["large"].items()) + "."
    with open(os.path.join(OUT, f"{ENGINE}.md"), "w") as fh:
        fh.write(text + "\n")
    with open(os.path.join(OUT, f"{ENGINE}.json"), "w") as fh:
        json.dump({"timing": timing, "results": {k: [[list(key), v] for key, v in r.items()] for k, r in results.items()}}, fh, indent=1)
    print(text)


if __name__ == "__main__":
    main()
