"""The account half through the official clients, as a new user would try it: `linode-cli account
view` and `account update` with a US address, a card added with a test number through the SDK, a
5.00 payment, and an invoice after the month closes (the test controls move the clock)."""

import subprocess

import requests
from linode_api4 import LinodeClient

from conftest import nubis_binary

CARD = {"card_number": "4111111111111111", "expiry_month": 12, "expiry_year": 2099, "cvv": "123"}


def cents(x) -> int:
    return round(float(x) * 100)


def operator_token(server) -> str:
    """An operator token made with `nubis admin` on the server's own database."""
    out = subprocess.run(
        [
            str(nubis_binary()), "admin",
            "--data-dir", str(server.dir),
            "--database", f"sqlite://{server.dir / 'nubis.db'}",
            "--config", str(server.dir / "config.toml"),
            "token", "create", "--operator", "--label", "clients-operator",
        ],
        capture_output=True, text=True, timeout=60, env={"NUBIS_LOG": "warn", "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_account_view_update_card_payment_invoice(fresh_nubis):
    from conftest import Cli

    cli = Cli(fresh_nubis)
    view = cli("account", "view")[0]
    assert view["euuid"] and cents(view["balance"]) == 0

    # A US billing address; every field is checked.
    cli.run(
        "account", "update", "--first_name", "Ada", "--last_name", "Lovelace", "--address_1", "123 Main St",
        "--city", "Philadelphia", "--state", "PA", "--zip", "19102", "--country", "US",
    )
    view = cli("account", "view")[0]
    assert (view["city"], view["state"], view["zip"], view["country"]) == ("Philadelphia", "PA", "19102", "US")
    # A zip that is no US zip is refused on its field and changes nothing.
    bad = cli.run("account", "update", "--zip", "ABC-DEFGHIJKL", check=False)
    assert bad.returncode != 0 and "zip" in (bad.stdout + bad.stderr)
    assert cli("account", "view")[0]["zip"] == "19102"

    # A card with a test number, through the SDK's own method; the number is never returned.
    client = LinodeClient(fresh_nubis.token, base_url=fresh_nubis.base_url)
    client.account.add_payment_method(CARD, True, "credit_card")
    methods = fresh_nubis.api("GET", "/account/payment-methods").json()["data"]
    assert len(methods) == 1 and methods[0]["is_default"] and methods[0]["data"]["last_four"] == "1111"
    assert "4111111111111111" not in fresh_nubis.api("GET", "/account/payment-methods").text

    # A 5.00 payment lowers the balance by 5.00.
    cli("account", "payment-create", "--usd", "5.00")
    assert cents(cli("account", "view")[0]["balance"]) == -500
    payments = cli("account", "payments-list")
    assert [cents(p["usd"]) for p in payments] == [500]

    # An instance runs; the month closes when the clock moves past it; the invoice adds up.
    cli("linodes", "create", "--type", "g6-nanode-1", "--region", "us-east", "--label", "billed", "--booted", "false")
    ops = requests.Session()
    ops.trust_env = False
    ops.headers["Authorization"] = f"Bearer {operator_token(fresh_nubis)}"
    r = ops.post(f"http://{fresh_nubis.addr}/nubis/v1/clock/advance", json={"seconds": 40 * 86400}, timeout=120)
    assert r.status_code == 200, r.text
    invoices = cli("account", "invoices-list")
    assert invoices, "the month that ended has its invoice"
    itemized = 0
    for inv in invoices:
        items = cli("account", "invoice-items", str(inv["id"]))
        assert sum(cents(i["total"]) for i in items) == cents(inv["total"]), inv
        itemized += sum(1 for i in items if i["label"] and i["type"])
    assert itemized > 0, "the instance's hours are invoice items"
    total_invoiced = sum(cents(i["total"]) for i in invoices)
    assert total_invoiced > 0
    balance = cents(cli("account", "view")[0]["balance"])
    assert balance == -500 + total_invoiced
