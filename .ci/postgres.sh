#!/usr/bin/env bash
# Sourced by .ci/run: installs PostgreSQL from Debian if it is missing, starts
# a throw-away server on 127.0.0.1:55432 or a free port (loopback only, trust auth, data in a
# temporary directory) and exports PAYGATE_TEST_POSTGRES_DSN for the pgstore
# tests. The server is stopped when the calling shell exits.

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

if [ -z "$(pg_bin)" ]; then
  echo "installing PostgreSQL (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi
PGBIN=$(pg_bin)
# 55432 unless something already listens there (a developer's own server).
PGPORT=$(python3 -c 'import socket
s = socket.socket()
try:
    s.bind(("127.0.0.1", 55432))
except OSError:
    s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
PGDATA_DIR=$(mktemp -d /tmp/paygate-pg.XXXXXX)
chown postgres:postgres "$PGDATA_DIR"
chmod 700 "$PGDATA_DIR"
su postgres -s /bin/sh -c "'$PGBIN/initdb' -D '$PGDATA_DIR/data' -U postgres --auth=trust -E UTF8 >/dev/null"
su postgres -s /bin/sh -c "'$PGBIN/pg_ctl' -D '$PGDATA_DIR/data' -l '$PGDATA_DIR/log' -w \
  -o \"-c listen_addresses=127.0.0.1 -p $PGPORT -k '$PGDATA_DIR'\" start >/dev/null"
stop_postgres() {
  su postgres -s /bin/sh -c "'$PGBIN/pg_ctl' -D '$PGDATA_DIR/data' -m fast stop >/dev/null" || true
  rm -rf "$PGDATA_DIR"
}
trap stop_postgres EXIT
export PAYGATE_TEST_PG_BIN="$PGBIN" # the tests that run a server of their own (internal/pgtest)
export PAYGATE_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:$PGPORT/postgres?sslmode=disable"
echo "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PGPORT"
