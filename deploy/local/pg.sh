#!/usr/bin/env bash
# A private PostgreSQL 15 for development, demos and tests.
#   pg.sh start DATA_DIR PORT   init (first time) and start; prints the admin URL
#   pg.sh stop  DATA_DIR
# PostgreSQL refuses to run as root, so as root it runs as the unprivileged
# system user "wsched-pg" (created on first use). Trust auth on 127.0.0.1 only.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=wsched-pg

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$PG_USER" -- "$@"
  else
    "$@"
  fi
}

ensure_user() {
  [ "$(id -u)" -eq 0 ] || return 0
  id "$PG_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
}

cmd=${1:?usage: pg.sh start|stop DATA_DIR [PORT]}
data=${2:?data dir required}
mkdir -p "$data"
data=$(cd "$data" && pwd)

case "$cmd" in
  start)
    port=${3:?port required}
    ensure_user
    [ "$(id -u)" -eq 0 ] && chown "$PG_USER" "$data"
    chmod 700 "$data"
    if [ ! -f "$data/PG_VERSION" ]; then
      as_pg "$PG_BIN/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-locale >"$data.initdb.log" 2>&1 \
        || { cat "$data.initdb.log" >&2; exit 1; }
    fi
    if ! as_pg "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      # The server outlives this script: it must not inherit a caller's open
      # files, such as the lock of `flock LOCK ctest ...`, or that lock is
      # held until the server stops. (Bash reads this script on fd 255.)
      for fd in /proc/$$/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ] && [ "$fd" -lt 255 ]; then eval "exec $fd>&-"; fi
      done
      # fsync stays on unless PG_EXTRA_OPTS turns it off (the throwaway test
      # cluster does): benchmark numbers are measured with it on.
      as_pg "$PG_BIN/pg_ctl" -D "$data" -w -t 60 -l "$data/server.log" \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c max_connections=200 ${PG_EXTRA_OPTS:-}" start >/dev/null \
        || { cat "$data/server.log" >&2; exit 1; }
    fi
    echo "postgresql://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    if [ -f "$data/postmaster.pid" ]; then
      as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null || true
    fi
    ;;
  *)
    echo "usage: pg.sh start|stop DATA_DIR [PORT]" >&2
    exit 2
    ;;
esac
