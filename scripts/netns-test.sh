#!/usr/bin/env bash
# Real instances (the netns driver), as root: installs iproute2, nftables, util-linux and procps
# when missing (apt-get) and the official metadata client `linode-metadata` into target/netns-py
# (pip, through the venv of scripts/clients-test.sh), then runs
#  1. the netns suite (crates/nubis/tests/netns: walkthrough, firewall, VPC/VLAN isolation,
#     metadata, kill -9 and restart), one test at a time (they share the host's networking);
#  2. the whole API suite with every server on the netns driver (NUBIS_RUNTIME_DRIVER=netns):
#     each test server gets its own slice of 198.18.0.0/15 and 192.168.128.0/17 and its own
#     host tag, and the balancer tests' back ends listen inside their instances' namespaces
#     (crates/nubis/tests/api/netns_mode.rs, lb_support.rs).
# Everything `nubis*` is removed from the host before and after (`nubis admin runtime sweep`);
# two runs never overlap on one host (a lock no process the run starts inherits).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
  echo "scripts/netns-test.sh: the netns driver needs root" >&2
  exit 1
fi
need=()
command -v ip >/dev/null || need+=(iproute2)
command -v nft >/dev/null || need+=(nftables)
command -v nsenter >/dev/null && command -v setpriv >/dev/null || need+=(util-linux)
command -v sysctl >/dev/null || need+=(procps)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

VENV=${NUBIS_PYENV:-target/pyenv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PY=$PWD/target/netns-py
if [ ! -d "$PY/linode_metadata" ]; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --target "$PY" -r crates/nubis/tests/netns/requirements.txt
fi

# The lock is held by flock(1) around a second run of this script, with its descriptor closed
# for the script (-o): nothing the run starts (a server, an instance's init left by a failed
# stage) inherits it, so a process left behind never blocks the next run; the sweep removes it.
if [ -z "${NUBIS_NETNS_LOCKED:-}" ]; then
  rc=0
  NUBIS_NETNS_LOCKED=1 flock -n -o -E 75 /run/nubis-netns-test.lock "$PWD/scripts/netns-test.sh" "$@" || rc=$?
  if [ "$rc" = 75 ]; then
    echo "scripts/netns-test.sh: another run is going on this host" >&2
    rc=1
  fi
  exit "$rc"
fi

cargo test --workspace --locked --test netns --test api --no-run
sweep() { target/debug/nubis admin --data-dir "$(mktemp -d)" runtime sweep >/dev/null; }
sweep
trap sweep EXIT

echo "==> netns suite (real instances)"
NUBIS_TEST_PYTHONPATH=$PY scripts/cargo-test.sh --workspace --locked --test netns -- --test-threads=1

echo "==> API suite with the netns driver (every module)"
NUBIS_RUNTIME_DRIVER=netns scripts/cargo-test.sh --workspace --locked --test api -- --test-threads=4
