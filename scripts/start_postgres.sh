#!/usr/bin/env bash
# Start (or stop) a throwaway PostgreSQL on 127.0.0.1 from the Debian binaries, for tests.
#
#   export REFGATE_TEST_POSTGRES_URL="$(scripts/start_postgres.sh)"   # start; prints the URL
#   scripts/start_postgres.sh --stop           # stop it and delete its data folder
#   scripts/start_postgres.sh --install        # apt-get installs postgresql first if missing
#
# stdout carries only the URL (postgresql://postgres@127.0.0.1:PORT/refgate); progress goes to
# stderr. Running it again while the server runs prints the same URL. As root the server runs as the
# `postgres` user (initdb refuses root) through runuser. Authentication is `trust`, on loopback
# only: never use this for real data.
#
# Environment: REFGATE_PG_DIR (data and socket folder, default /tmp/refgate-pg),
# REFGATE_PG_PORT (default: a free port), REFGATE_PG_DB (default refgate).
set -euo pipefail

PGROOT="$(realpath -m "${REFGATE_PG_DIR:-/tmp/refgate-pg}")"
DB="${REFGATE_PG_DB:-refgate}"
ACTION="start"
INSTALL=0
for arg in "$@"; do
  case "$arg" in
    stop|--stop) ACTION="stop" ;;
    start|--start) ACTION="start" ;;
    --install) INSTALL=1 ;;
    *) echo "usage: $0 [--start|--stop] [--install]" >&2; exit 2 ;;
  esac
done

log() { echo "start_postgres: $*" >&2; }
# The server user may not be able to enter the caller's folder (e.g. /root): work from /.
cd /

find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  return 1
}

BINDIR="$(find_bindir || true)"
if [ -z "$BINDIR" ] && [ "$INSTALL" = 1 ] && [ "$ACTION" = start ]; then
  if [ "$(id -u)" != 0 ]; then log "--install needs root"; exit 1; fi
  log "installing postgresql from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >&2
  BINDIR="$(find_bindir || true)"
fi
if [ -z "$BINDIR" ]; then
  log "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql, or pass --install)"
  exit 1
fi

DATA="$PGROOT/data"
SOCK="$PGROOT/sock"
LOGFILE="$PGROOT/server.log"

if [ "$(id -u)" = 0 ]; then
  RUNAS="postgres"
  id "$RUNAS" >/dev/null 2>&1 || { log "user 'postgres' not found (the Debian package creates it)"; exit 1; }
  as_pg() { runuser -u "$RUNAS" -- "$@"; }
else
  RUNAS="$(id -un)"
  as_pg() { "$@"; }
fi

if [ "$ACTION" = stop ]; then
  if [ -f "$DATA/postmaster.pid" ]; then
    as_pg "$BINDIR/pg_ctl" -D "$DATA" -m fast -w stop >&2 || true
  fi
  rm -rf "$PGROOT"
  log "stopped and removed $PGROOT"
  exit 0
fi

if [ -f "$DATA/postmaster.pid" ] && as_pg "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
  PORT="$(sed -n 4p "$DATA/postmaster.pid")"
  log "already running on port $PORT"
else
  PORT="${REFGATE_PG_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
  rm -rf "$PGROOT"
  mkdir -p "$DATA" "$SOCK"
  if [ "$(id -u)" = 0 ]; then chown -R "$RUNAS" "$PGROOT"; fi
  chmod 700 "$DATA"
  log "initdb in $DATA ($BINDIR)"
  as_pg "$BINDIR/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --no-locale >/dev/null
  log "starting on 127.0.0.1:$PORT"
  as_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$LOGFILE" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $SOCK -c fsync=off -c max_connections=200" start >&2
  as_pg "$BINDIR/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qAt \
    -c "CREATE DATABASE $DB" >&2
fi

echo "postgresql://postgres@127.0.0.1:$PORT/$DB"
