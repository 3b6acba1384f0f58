#!/usr/bin/env bash
# The README's run command: install, build, start a private PostgreSQL and
# wsched-server on 127.0.0.1, show it working. Ctrl-C stops everything.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# Only what runs here: the server, wschedctl (this script and demo.sh) and the
# agent (demo-actuator.sh starts one per node). test.sh builds everything.
"$root/deploy/local/build.sh" wsched-server wschedctl wsched-agent

state="$root/.local"
mkdir -p "$state"
chmod 755 "$state"
PG_PORT=${WSCHED_PG_PORT:-55432}
GRPC_PORT=${WSCHED_GRPC_PORT:-50051}
METRICS_PORT=${WSCHED_METRICS_PORT:-9464}
bin="$root/build/bin"

admin_url=$("$root/deploy/local/pg.sh" start "$state/pgdata" "$PG_PORT")
db_url="postgresql://postgres@127.0.0.1:$PG_PORT/wsched"

catalog="${WSCHED_CATALOG:-$root/classes/demo.yaml}"
# Demo tokens, one per role (see docs/operations.md for real deployments).
# The agents' is a bootstrap token for the catalog's pools: it registers each
# new node once, and the node's agent then presents a token of its own, kept
# in its state directory (docs/agent.md, "Node identity").
pools=$(python3 -c 'import sys, yaml
print(", ".join(p["id"] for p in (yaml.safe_load(open(sys.argv[1])) or {}).get("pools", [])))' "$catalog")
tokens="$state/tokens.yaml"
cat >"$tokens" <<TOKENS
tokens:
  - {name: demo-admin, token: demo-admin-token-000000, role: admin}
  - {name: demo-control-plane, token: demo-cp-token-000000000, role: control-plane}
  - {name: demo-join, token: demo-bootstrap-token-000, role: agent, pools: [$pools], bootstrap: true}
  - {name: demo-actuator, token: demo-actuator-token-000, role: actuator}
TOKENS

# The demo's exec actuator starts fake node agents (deploy/local/demo-actuator.sh).
export WSCHED_DEMO_STATE="$state/demo"
export WSCHED_DEMO_SERVER="127.0.0.1:$GRPC_PORT"
export WSCHED_DEMO_ADMIN_TOKEN=demo-admin-token-000000
export WSCHED_DEMO_CP_TOKEN=demo-cp-token-000000000
rm -rf "$WSCHED_DEMO_STATE"
mkdir -p "$WSCHED_DEMO_STATE"
export WSCHED_DEMO_BOOTSTRAP_TOKEN_FILE="$WSCHED_DEMO_STATE/bootstrap-token"
(umask 077; echo demo-bootstrap-token-000 >"$WSCHED_DEMO_BOOTSTRAP_TOKEN_FILE")

server_pid=""
cleanup() {
  trap - INT TERM EXIT
  for pid in "$WSCHED_DEMO_STATE"/nodes/*.pid; do
    [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
  done
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" && wait "$server_pid" || true
  fi
  "$root/deploy/local/pg.sh" stop "$state/pgdata"
  echo "stopped wsched-server and PostgreSQL"
}
trap cleanup INT TERM EXIT

# A fresh database each run, so the demo starts from an empty cluster.
psql "$admin_url" -qc "DROP DATABASE IF EXISTS wsched WITH (FORCE)" -c "CREATE DATABASE wsched"
"$bin/wsched-server" --listen="127.0.0.1:$GRPC_PORT" --metrics_listen="127.0.0.1:$METRICS_PORT" \
  --database_url="$db_url" --auth_tokens_file="$tokens" \
  --catalog="$catalog" \
  --actuator_command="bash,$root/deploy/local/demo-actuator.sh" --actuator_timeout=30s \
  --scaling_batching_window=1s --default_node_start_time=20s 2>"$state/server.log" &
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
WSCHED_SERVER="127.0.0.1:$GRPC_PORT" "$root/deploy/local/demo.sh"
echo "== metrics sample"
curl -s "127.0.0.1:$METRICS_PORT/metrics" | grep -E '^wsched_(placements_total|gpus|nodes|pool_size_nodes|scaling_signals_total)' | sed -n '1,12p' 
echo "== running; Ctrl-C stops everything"
wait "$server_pid"
