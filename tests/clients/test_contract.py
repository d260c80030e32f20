"""The served OpenAPI document is a contract: schemathesis generates requests for every
operation from it, in its examples, coverage, fuzzing and stateful (links) phases, with every
check it has: any 5xx, any response that violates its documented schema or content type, any
undocumented status code, any operation that ignores authentication, any schema-violating request
accepted and any schema-valid request refused (except where the listed operations' rules go beyond
JSON Schema) fail the test. The test controls' document is tested the same way.

The run must really exercise the operations: it fails when an operation answered only 401/403
(schemathesis' `missing_auth` warning), which is what a run whose token stopped working looks
like. Two operations legitimately end the test token: revoking a token (the generated id may be
the caller's own) and cancelling the account (every token of its users is deleted). They run on
their own after every other operation: the revocation on the same server, the cancellation on a
server of its own."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import Nubis

# Every check of schemathesis runs (none is named on the command line: a check named there would
# override the per-operation exclusions below).

# Operations whose valid requests depend on more than their JSON Schema can say, so that a
# schema-valid generated request is rightly refused: `positive_data_acceptance` is left out for
# them only, every other check runs. The reasons are also in docs/decisions.md ("Exact request
# schemas").
NOT_SCHEMA_ONLY = {
    # Existence of referenced records (an instance, a balancer, a firewall, a region, type or
    # image of the catalog, an address of the account), answered 400 on the field that names
    # them; an instance create also needs root_pass with an image, of three character classes.
    "references": [
        "entity_transfer_create", "service_transfer_create", "firewall_device_create", "ip_allocate",
        "ip_share", "ipv4_share", "ipv6_range_create", "nodebalancer_create",
        "vpc_create", "nodebalancer_config_node_create", "nodebalancer_node_create", "instance_create",
        "ip_assign", "ipv4_assign", "nodebalancer_node_update", "firewall_settings_update",
        "nodebalancer_firewalls_update", "instance_firewalls_update",
    ],
    # A thumbnail is a PNG or JPEG file (its signature), which a binary body's schema cannot state.
    "image": ["oauth_client_thumbnail_update"],
    # A subnet's range: a canonical network inside RFC 1918 space, outside 192.168.128.0/17, not
    # overlapping the VPC's other subnets.
    "subnet range": ["subnet_create"],
    # State: the owner cannot be deleted nor restricted, a user's own grants are read through
    # /profile, grants only for restricted users, usernames and labels unique, the default payment
    # method cannot be deleted, promo codes must exist, a public address only once operators
    # allowed more for the instance and a private one only for an instance without one.
    "state": [
        "user_delete", "user_grants_get", "user_grants_update", "user_create", "user_update",
        "payment_method_delete", "promo_code_add", "firewall_update", "vpc_update", "subnet_update",
        "nodebalancer_update", "instance_ip_allocate",
    ],
    # Instances as the hosted API serves them: what an instance is made of and what state it is
    # in (its disks, profiles, subnets, firewalls and interfaces named must exist; disks fit the
    # plan; most changes need it off, or not busy; profile or Linode interfaces by its
    # generation; a month not to come; a plan with a successor), a root password's strength and
    # an SSH key's format; a snapshot needs the Backup service, a restore a target that fits.
    "instance state": [
        "instance_boot", "instance_reboot", "instance_config_create", "instance_config_update",
        "instance_config_delete", "instance_config_interface_create", "instance_config_interface_update",
        "instance_config_interface_delete", "instance_config_interfaces_order", "instance_disk_create",
        "instance_disk_delete", "instance_disk_clone", "instance_disk_resize", "instance_disk_password_reset",
        "instance_rebuild", "instance_resize", "instance_mutate", "instance_migrate", "instance_clone",
        "instance_password_reset", "instance_rescue", "instance_transfer_month", "instance_stats_month",
        "instance_interface_list", "instance_interface_create", "instance_interface_get",
        "instance_interface_update", "instance_interface_delete", "instance_interface_settings_get",
        "instance_interface_settings_update", "instance_interface_firewalls_list", "instance_interfaces_upgrade",
        "ssh_key_create",
        "instance_snapshot_create", "instance_backup_restore",
    ],
    # Cross-field and computed rules: a config's check_timeout below check_interval, https with a
    # matching certificate and key, ports only for TCP/UDP and ranges ascending (firewall and
    # rule-set rules alike), CPU alerts up to
    # 100 per vCPU of the instance's type, a card's Luhn digit and expiry in the future (the
    # clock), dollar amounts, country-dependent state and ZIP codes, read-only settings that may
    # be sent unchanged, token expiry in the future.
    "cross-field": [
        "nodebalancer_config_create", "nodebalancer_config_update", "nodebalancer_config_rebuild",
        "firewall_rules_update", "firewall_create", "firewall_ruleset_create", "firewall_ruleset_update",
        "instance_update", "credit_card_add", "payment_method_create", "payment_create", "paypal_stage",
        "paypal_execute", "token_create", "account_update",
        "account_settings_update",
    ],
}

# Operations (operation ids) after which the test token may no longer work.
TOKEN_ENDING = ["token_delete", "account_cancel"]

# The stateful phase follows the document's links (create -> get/update/delete) in scenarios of at
# most this many steps.
STATEFUL = """
[phases.stateful]
max-steps = 20
"""

CONFIG = STATEFUL + """\
[warnings]
fail-on = ["missing_auth"]
""" + "".join(
    "\n[[operations]]\n"
    f"include-operation-id = {json.dumps(ops)}\n"
    "checks.positive_data_acceptance.enabled = false\n"
    for ops in NOT_SCHEMA_ONLY.values()
)


# The test controls' operations whose valid requests depend on more than their schema: the clock
# is set to a time not before the system time; a fault's fields depend on its kind and name an
# existing route, account, instance or node; a fixture file's resources name each other by label.
CONTROLS_CONFIG = STATEFUL + """
[warnings]
fail-on = ["missing_auth"]

[[operations]]
include-operation-id = ["clock_set", "fault_create", "fixtures_load"]
checks.positive_data_acceptance.enabled = false
"""


def schemathesis(server, tmp_path, name, selection, document="/v4/openapi.json", token=None, config=CONFIG,
                 phases="examples,coverage,fuzzing,stateful"):
    exe = Path(sys.executable).with_name("schemathesis")
    examples = os.environ.get("NUBIS_CONTRACT_EXAMPLES", "10")
    seed = os.environ.get("NUBIS_CONTRACT_SEED", "1")
    config_file = tmp_path / f"{name}.toml"
    config_file.write_text(config)
    reports = tmp_path / name
    cmd = [
        str(exe), "--config-file", str(config_file), "run", f"http://{server.addr}{document}",
        "--url", f"http://{server.addr}",
        "-H", f"Authorization: Bearer {token or server.token}",
        "--phases", phases,
        "--max-examples", examples, "--seed", seed,
        # One worker: with two, a run (seed 2) once failed inside hypothesis on Python 3.11 ("AST
        # constructor recursion depth mismatch" while parsing a filter's source); one is as fast here.
        "--workers", "1", "--no-color",
        "--report", "junit", "--report-dir", str(reports),
        *selection,
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-20000:]
    assert "Tested: " in out and "passed" in out, out[-5000:]
    return out


def test_schemathesis_finds_no_failure(fresh_nubis, tmp_path):
    excluded = [a for op in TOKEN_ENDING for a in ("--exclude-operation-id", op)]
    out = schemathesis(fresh_nubis, tmp_path, "operations", excluded)
    assert "Authentication failed" not in out, out[-20000:]
    # The token still works: no operation of the run above ended it.
    assert fresh_nubis.api("GET", "/account").status_code == 200
    # Revoking tokens, on the records the run above made.
    # One operation each: no links to follow, so no stateful phase.
    single = "examples,coverage,fuzzing"
    schemathesis(fresh_nubis, tmp_path, "token-delete", ["--include-operation-id", "token_delete"], phases=single)
    # Cancelling an account, on a server of its own.
    server = Nubis()
    try:
        schemathesis(server, tmp_path, "account-cancel", ["--include-operation-id", "account_cancel"], phases=single)
        # The cancellation did run: the account is cancelled, its token refused.
        assert server.api("GET", "/account").status_code == 401
    finally:
        server.stop()


def test_schemathesis_finds_no_failure_in_the_test_controls(fresh_nubis, tmp_path):
    """The test controls' own document (`/nubis/v1/openapi.json`), with an operator token, on a
    server of its own (the controls reset and restore its whole state)."""
    out = schemathesis(
        fresh_nubis, tmp_path, "controls", [],
        document="/nubis/v1/openapi.json", token=fresh_nubis.operator_token, config=CONTROLS_CONFIG,
    )
    assert "Authentication failed" not in out, out[-20000:]
