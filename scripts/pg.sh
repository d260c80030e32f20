#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on 127.0.0.1 for the tests and prints its URL on stdout.
# Installs the server with apt-get when it is missing and that is possible.
# Usage: eval "$(scripts/pg.sh start)"   ...   scripts/pg.sh stop "$PGBASE"
# (PGROOT=/dev/shm puts the cluster on a tmpfs; PGCONF adds server settings, "-c name=value ...".)
set -euo pipefail

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

case "${1:-start}" in
start)
  PGBIN=$(find_bin || true)
  if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "installing postgresql with apt-get" >&2
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2 || true
      PGBIN=$(find_bin || true)
    fi
  fi
  if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
    echo "PostgreSQL is not available" >&2
    exit 3
  fi
  # PGROOT: where the cluster's directory goes (/tmp unless given; scripts/test.sh gives a
  # tmpfs, where creating and dropping a database's files costs far less than on a disk).
  PGBASE=$(mktemp -d "${PGROOT:-/tmp}/nubis-pg.XXXXXX")
  PGPORT=${PGPORT:-$((20000 + RANDOM % 20000))}
  RUN=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd -r -M postgres
    chown postgres "$PGBASE"
    RUN=(runuser -u postgres --)
  fi
  "${RUN[@]}" "$PGBIN/initdb" -D "$PGBASE/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$PGBASE/initdb.log" 2>&1
  "${RUN[@]}" "$PGBIN/pg_ctl" -D "$PGBASE/data" -l "$PGBASE/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $PGPORT -k $PGBASE -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=500 -c wal_level=minimal -c max_wal_senders=0 -c max_wal_size=96MB ${PGCONF:-}" \
    start >&2
  echo "export PGBASE=$PGBASE PGBIN=$PGBIN TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$PGPORT/postgres"
  ;;
stop)
  PGBASE=${2:?PGBASE}
  PGBIN=$(find_bin)
  RUN=()
  [ "$(id -u)" = 0 ] && RUN=(runuser -u postgres --)
  "${RUN[@]}" "$PGBIN/pg_ctl" -D "$PGBASE/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PGBASE"
  ;;
esac
