#!/usr/bin/env bash
# The README's run command: install, build, start a private PostgreSQL and
# wsched-server on 127.0.0.1, show it working. Ctrl-C stops everything.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/deploy/local/build.sh"

state="$root/.local"
mkdir -p "$state"
chmod 755 "$state"
PG_PORT=${WSCHED_PG_PORT:-55432}
GRPC_PORT=${WSCHED_GRPC_PORT:-50051}
METRICS_PORT=${WSCHED_METRICS_PORT:-9464}
bin="$root/build/bin"

admin_url=$("$root/deploy/local/pg.sh" start "$state/pgdata" "$PG_PORT")
db_url="postgresql://postgres@127.0.0.1:$PG_PORT/wsched"
psql "$admin_url" -tAc "SELECT 1 FROM pg_database WHERE datname = 'wsched'" | grep -q 1 \
  || psql "$admin_url" -qc "CREATE DATABASE wsched"

# Demo tokens, one per role (see docs/operations.md for real deployments).
tokens="$state/tokens.yaml"
cat >"$tokens" <<TOKENS
tokens:
  - {name: demo-admin, token: demo-admin-token-000000, role: admin}
  - {name: demo-control-plane, token: demo-cp-token-000000000, role: control-plane}
  - {name: demo-agent, token: demo-agent-token-0000000, role: agent}
  - {name: demo-actuator, token: demo-actuator-token-000, role: actuator}
TOKENS

server_pid=""
cleanup() {
  trap - INT TERM EXIT
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" && wait "$server_pid" || true
  fi
  "$root/deploy/local/pg.sh" stop "$state/pgdata"
  echo "stopped wsched-server and PostgreSQL"
}
trap cleanup INT TERM EXIT

"$bin/wsched-server" --listen="127.0.0.1:$GRPC_PORT" --metrics_listen="127.0.0.1:$METRICS_PORT" \
  --database_url="$db_url" --auth_tokens_file="$tokens" \
  ${WSCHED_CATALOG:+--catalog="$WSCHED_CATALOG"} 2>"$state/server.log" &
server_pid=$!

ctl() { "$bin/wschedctl" --server="127.0.0.1:$GRPC_PORT" "$@"; }
for _ in $(seq 100); do
  ctl health >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$state/server.log"; exit 1; }
  sleep 0.1
done

echo "== wsched-server on 127.0.0.1:$GRPC_PORT (metrics :$METRICS_PORT, log $state/server.log)"
ctl health
echo "== RPCs (server reflection)"
ctl rpcs
if [ -x "$root/deploy/local/demo.sh" ]; then
  WSCHED_SERVER="127.0.0.1:$GRPC_PORT" "$root/deploy/local/demo.sh"
fi
echo "== metrics sample"
curl -s "127.0.0.1:$METRICS_PORT/metrics" | grep '^wsched_' | head -n 8
echo "== running; Ctrl-C stops everything"
wait "$server_pid"
