# shellcheck shell=bash
# A PostgreSQL primary and its synchronous standby for the failover tests
# (tests/deploy/pg_failover_test.sh, pg_hang_test.sh). Sourced; the caller
# sets PG_BIN, PG_USER, SRC, WORK, PRIMARY, STANDBY, P1, P2 and DB, and
# defines fail MESSAGE.

# as_pg COMMAND...: as the clusters' unprivileged user when run as root.
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u "$PG_USER" -- "$@"; else "$@"; fi
}

# psql_at PORT SQL [DB]: one value, from the postgres database by default.
psql_at() { psql -X -qtA -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$1/${3:-postgres}" -c "$2"; }

# await WHAT SECONDS COMMAND...: until COMMAND succeeds (polled every 50 ms).
await() {
  local what=$1 limit=$2 deadline=$((SECONDS + $2))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [[ $SECONDS -lt $deadline ]] || fail "$what: not within $limit s"
    sleep 0.05
  done
}

# pg_pair_check_setup PORT_VARIABLE TOOL...: the tools are installed and
# nothing serves P1 or P2 yet (PORT_VARIABLE names the setting that moves them).
pg_pair_check_setup() {
  local port_variable=$1 tool port
  shift
  for tool in psql "$PG_BIN/pg_basebackup" "$PG_BIN/pg_ctl" "$@"; do
    command -v "$tool" >/dev/null || fail "setup: $tool is not installed (deploy/local/install-deps.sh)"
  done
  for port in "$P1" "$P2"; do
    if "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port"; then
      fail "setup: something already serves PostgreSQL on port $port (set $port_variable)"
    fi
  done
}

pg_pair_standby_streaming() {
  [[ $(psql_at "$P1" "SELECT count(*) FROM pg_stat_replication
    WHERE application_name = 'standby1' AND state = 'streaming' AND sync_state = 'sync'") == 1 ]]
}

# pg_pair_start: the primary on P1, its synchronous standby standby1 on P2,
# streaming, and database DB. Until the standby streams, a commit on the
# primary waits for it: nothing is written to the primary before that.
pg_pair_start() {
  PG_EXTRA_OPTS="-c fsync=off -c wal_level=replica -c max_wal_senders=4 \
-c synchronous_standby_names=standby1 -c synchronous_commit=on" \
    "$SRC/deploy/local/pg.sh" start "$PRIMARY" "$P1" >/dev/null
  mkdir -p "$STANDBY"
  [[ $(id -u) -eq 0 ]] && chown "$PG_USER" "$STANDBY"
  chmod 700 "$STANDBY"
  as_pg "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$P1" -U postgres -D "$STANDBY" -R -X stream \
    >"$WORK/basebackup.log" 2>&1 || { cat "$WORK/basebackup.log" >&2; fail "pg_basebackup"; }
  # -R wrote a primary_conninfo without a name; the later line wins, and the
  # name is what synchronous_standby_names waits for.
  echo "primary_conninfo = 'host=127.0.0.1 port=$P1 user=postgres application_name=standby1'" |
    as_pg tee -a "$STANDBY/postgresql.auto.conf" >/dev/null
  PG_EXTRA_OPTS="-c fsync=off" "$SRC/deploy/local/pg.sh" start "$STANDBY" "$P2" >/dev/null
  await "standby1 streaming as the synchronous standby" 60 pg_pair_standby_streaming
  psql_at "$P1" "CREATE DATABASE $DB" >/dev/null
}
