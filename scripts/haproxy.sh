#!/usr/bin/env bash
# Makes sure HAProxy is installed for the data plane's differential framing test
# (crates/nubis-dataplane/tests/http_differential.rs), which starts and stops its own HAProxy on
# 127.0.0.1. Installs the Debian package with apt-get when it is missing and that is possible
# (root), without letting the package start its service. Never starts HAProxy itself.
set -euo pipefail
command -v haproxy >/dev/null 2>&1 && exit 0
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "installing haproxy with apt-get" >&2
  # Debian's maintainer scripts ask policy-rc.d before starting a service: 101 = not now.
  POLICY=/usr/sbin/policy-rc.d
  OWN_POLICY=
  if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$POLICY" && chmod +x "$POLICY" && OWN_POLICY=1
  fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy) >&2 || true
  [ -n "$OWN_POLICY" ] && rm -f "$POLICY"
fi
command -v haproxy >/dev/null 2>&1 || { echo "HAProxy is not available" >&2; exit 3; }
