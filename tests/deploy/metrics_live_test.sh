#!/usr/bin/env bash
# /metrics of a real wsched-server: `promtool check metrics` accepts it, and
# every metric the alert rules and the dashboard use exists on it.
#   metrics_live_test.sh WSCHED_SERVER WSCHED_AGENT WSCHEDCTL SOURCE_DIR
# Needs the test PostgreSQL on 127.0.0.1:${WSCHED_TEST_PG_PORT:-55433} (the
# ctest "pg" fixture). Before scraping it causes the events that create the
# event-driven families: a node registered by the agent (with a stand-in
# nvidia-smi reporting usage), placements, a pending GPU workspace that makes
# a pool scale up from zero, a node without its driver, a catalog apply over
# gRPC. Families that still have no series are checked against the names the
# server's source registers (tests/deploy/metric_names.py says which).
set -euo pipefail

SERVER=${1:?usage: metrics_live_test.sh WSCHED_SERVER WSCHED_AGENT WSCHEDCTL SOURCE_DIR}
AGENT=${2:?wsched-agent binary required}
CTL=${3:?wschedctl binary required}
SRC=${4:?source dir required}
# shellcheck source=../support/start_server.sh
source "$SRC/tests/support/start_server.sh"
PG=postgresql://postgres@127.0.0.1:${WSCHED_TEST_PG_PORT:-55433}
DB=metrics_live_$$
WORK=$(mktemp -d /tmp/wsched-metrics-test-XXXXXX)
PY=${WSCHED_PYTHON:-python3}
ADMIN=admin-token-0123456789abcdef
CP=control-plane-token-0123456789
AGENT_TOKEN=agent-token-0123456789abcdef
server_pid=

cleanup() {
  local rc=$?
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  wsched_end_test metrics_live_test "$rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in promtool curl psql; do
  command -v "$tool" >/dev/null || { echo "metrics_live_test: $tool not installed (deploy/local/install-deps.sh)" >&2; exit 1; }
done

psql -q -v ON_ERROR_STOP=1 "$PG/postgres" -c "CREATE DATABASE $DB" >/dev/null
cat >"$WORK/tokens.yaml" <<EOF
tokens:
  - {name: test-admin, token: $ADMIN, role: admin}
  - {name: test-cp, token: $CP, role: control-plane}
  - {name: test-join, token: $AGENT_TOKEN, role: agent, pools: [gpu-h100, gpu-a100], bootstrap: true}
EOF
(umask 077; echo "$AGENT_TOKEN" >"$WORK/bootstrap-token")

metrics_port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
wsched_start_server "$WORK" "$SERVER" --metrics_listen="127.0.0.1:$metrics_port" \
  --database_url="$PG/$DB" --auth_tokens_file="$WORK/tokens.yaml" \
  --catalog="$SRC/classes/saas.yaml" --database_connections=4 \
  --scaling_batching_window=100ms
ctl() { WSCHED_TOKEN=$1 "$CTL" --server="$ADDR" "${@:2}" >>"$WORK/ctl.log" 2>&1; }

# --- events -----------------------------------------------------------------------
# nvidia-smi answers for the fake H100 node's GPUs (UUIDs and PCI addresses
# from the agent's own discovery).
cat >"$WORK/csv.py" <<'EOF'
import json, sys
for g in json.load(sys.stdin)["gpus"]:
    # index, uuid, pci.bus_id, name, utilization.gpu, memory.used, memory.total
    print("%d, %s, 0000%s, NVIDIA H100 80GB HBM3, 37, 2048, 81559" % (g["index"], g["uuid"], g["pci_address"]))
EOF
"$AGENT" --root="$SRC/tests/sysfs/h100-8gpu" --once --print --nvidia_smi= 2>/dev/null |
  "$PY" "$WORK/csv.py" >"$WORK/nvidia-smi.csv"
# The node's first run bootstraps it; later runs present its own token.
agent_once() {
  FAKE_NVIDIA_SMI_CSV=$WORK/nvidia-smi.csv "$AGENT" --root="$SRC/tests/sysfs/$1" --server="$ADDR" \
    --bootstrap_token_file="$WORK/bootstrap-token" --state_dir="$WORK/agent-state/$3" \
    --pool="$2" --node_name="$3" --nvidia_smi="$SRC/tests/sysfs/bin/nvidia-smi" \
    --cdi_dir= --once >>"$WORK/agent.log" 2>&1
}
agent_once h100-8gpu gpu-h100 h100-a
ctl "$CP" place ws-gpu-1 --org=o-1 --project=p-1 --user=u-1 --class=gpu-1x
ctl "$CP" place ws-cpu-1 --org=o-1 --project=p-1 --user=u-1 --class=small
# A GPU workspace for the empty A100 pool: pending, and a scale-up from zero.
ctl "$CP" place ws-vm-1 --org=o-1 --project=p-1 --user=u-1 --class=gpu-8x-vm
# Heartbeats while ws-gpu-1 holds a GPU: usage samples and GPU-seconds.
agent_once h100-8gpu gpu-h100 h100-a
agent_once h100-8gpu gpu-h100 h100-a
# A GPU node without its driver (the A100 tree has none loaded).
agent_once no-driver gpu-a100 a100-fresh || true
ctl "$ADMIN" catalog apply "$SRC/classes/saas.yaml"
ctl "$CP" stop ws-cpu-1
# The scale-up from zero is signalled on the scaling leader's next tick: wait
# for it in the scrape rather than for a guessed time.
signalled=0
for _ in $(seq 100); do
  if curl -sf "http://127.0.0.1:$metrics_port/metrics" \
      | grep -qE '^wsched_scaling_signals_total\{[^}]*pool="gpu-a100"'; then
    signalled=1
    break
  fi
  sleep 0.1
done

# --- the scrape -------------------------------------------------------------------
curl -sf "http://127.0.0.1:$metrics_port/metrics" >"$WORK/metrics.txt"
passed=0
failed=0
lint_rc=0
promtool check metrics <"$WORK/metrics.txt" >"$WORK/lint.txt" 2>&1 || lint_rc=$?
# Every finding fails (the GPU usage gauges no longer carry DCGM's
# camelCase label names: they are by pool and class).
grep -v '^$' "$WORK/lint.txt" >"$WORK/lint-other.txt" || true
if [[ $lint_rc -eq 0 || ! -s $WORK/lint-other.txt ]] && [[ $lint_rc -le 3 ]]; then
  passed=$((passed + 1))
  echo "promtool check metrics: ok"
  [[ -s $WORK/lint.txt ]] && sort -u "$WORK/lint.txt" | sed 's/^/    allowed: /'
else
  failed=$((failed + 1))
  echo "FAIL: promtool check metrics (exit $lint_rc):" >&2
  sed 's/^/    | /' "$WORK/lint-other.txt" >&2
fi
for family in wsched_nodes wsched_gpus wsched_placements_total wsched_rpc_requests_total; do
  if grep -q "^$family" "$WORK/metrics.txt"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: the scrape lacks $family" >&2
  fi
done
if [[ $signalled -eq 1 ]]; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  echo "FAIL: no scaling signal for the empty gpu-a100 pool within 10 s" >&2
fi
names_rc=0
"$PY" "$SRC/tests/deploy/metric_names.py" "$SRC" "$WORK/metrics.txt" || names_rc=$?
if [[ $names_rc -eq 0 ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

echo "metrics_live_test: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
