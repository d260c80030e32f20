"""An example suite: code under test that uses the official SDK, against a private nubis
whose clock, faults and state the tests control. Run with `pytest examples/pytest`."""

from datetime import datetime, timedelta

import pytest
from linode_api4 import LinodeClient, ServiceTransfer
from linode_api4.errors import ApiError


def sdk(token, client):
    """Another SDK client of the same nubis, never through a proxy."""
    c = LinodeClient(token, base_url=client.base_url, retry=False)
    c.session.trust_env = False
    return c


def create_network(client, label):
    """The 'code under test': creates a VPC with one subnet."""
    return client.vpcs.create(label=label, region="us-east", subnets=[{"label": "app", "ipv4": "10.0.0.0/24"}])


def test_a_vpc_is_created(client):
    vpc = create_network(client, "first")
    assert vpc.label == "first"
    assert [v.label for v in client.vpcs()] == ["first"]


def test_every_test_starts_from_the_clean_snapshot(client):
    # The VPC of the test above is gone: the `client` fixture restored the snapshot "clean".
    assert len(client.vpcs()) == 0
    create_network(client, "second")
    assert [v.label for v in client.vpcs()] == ["second"]


def test_the_sdk_retries_a_429(client, controls):
    create_network(client, "net")
    controls.fault(route="GET /v4/vpcs", status=429, retry_after=1, count=2)
    # The SDK retries 429 (honouring Retry-After): the call succeeds on the third attempt.
    assert [v.label for v in client.vpcs()] == ["net"]
    assert controls.faults() == [], "both injected 429s were used"


def test_a_503_reaches_the_caller_with_the_error_envelope(client, controls):
    controls.fault(route="POST /v4/vpcs", status=503, count=1)
    with pytest.raises(ApiError) as e:
        create_network(client, "unlucky")
    assert e.value.status == 503
    assert create_network(client, "lucky").label == "lucky"


def test_reset_returns_to_the_first_run_state(client, controls):
    create_network(client, "temporary")
    controls.reset()
    assert len(client.vpcs()) == 0
    assert client.profile().username == "admin", "the same bootstrap token still works"
    controls.snapshot("clean")  # keep the session's clean state identical after a reset


def test_an_expired_token_after_advancing_the_clock(client, controls):
    now = datetime.fromisoformat(controls.call("GET", "/clock")["now"])
    in_an_hour = (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    token = client.profile.token_create(label="short", expiry=in_an_hour)
    short = sdk(token.token, client)
    assert short.profile().username == "admin"
    controls.advance(2 * 3600)
    with pytest.raises(ApiError) as e:
        short.profile()
    assert e.value.status == 401


def test_a_declined_card(client, controls):
    client.account.add_payment_method(
        {"card_number": "4111111111111111", "expiry_month": 12, "expiry_year": 2099, "cvv": "123"},
        True,
        "credit_card",
    )
    controls.fault(kind="payment_declined", count=1)
    with pytest.raises(ApiError) as e:
        client.post("/account/payments", data={"usd": "10.00"})
    assert e.value.status == 400
    client.post("/account/payments", data={"usd": "10.00"})


def test_an_expired_transfer(client, controls):
    inst = client.linode.instance_create("g6-nanode-1", "us-east", label="moving", booted=False)
    # The SDK's `account.service_transfer_create` discards the answer, so post it directly to
    # keep the token.
    made = client.post("/account/service-transfers", data={"entities": {"linodes": [inst.id]}})
    assert made["status"] == "pending"
    controls.advance(25 * 3600)
    transfer = client.load(ServiceTransfer, made["token"])
    assert transfer.status == "stale"  # the reference's name for an expired transfer
