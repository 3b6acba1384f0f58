#!/usr/bin/env bash
# What unchanged heartbeats through one replica cost ANOTHER replica
# (docs/performance-history.md, "Heartbeats and the other replica").
#
#   loadtest/replica_heartbeats.sh        # NODES=10000 RATE=1000 S=15: about 3 minutes
#
# Two wsched-server replicas (A, B) on one private PostgreSQL 15 (fsync on).
# NODES fake CPU nodes are registered through A and WORKSPACES workspaces
# placed through B; then, S seconds each:
#   1. idle:        nothing runs; B's CPU.
#   2. heartbeats:  RATE unchanged heartbeats/s through A; B's, A's and
#                   PostgreSQL's CPU.
#   3. place:       wsched-loadgen places and stops through B at concurrency
#                   PLACE_C; B's placement p50/p99.
#   4. place + hb:  3 and 2 at once.
# Targets: B's CPU in 2 minus 1 below 5% of one core; B's p99 in 4 within
# 1.5x of 3.
# Env: NODES (10000), RATE (1000), S (15), WORKSPACES (6000), PLACE_C (2),
#      BUILD (build), KEEP=1 keeps the temp dir.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BUILD:-$ROOT/build}/bin
NODES=${NODES:-10000}
RATE=${RATE:-1000}
S=${S:-15}
WORKSPACES=${WORKSPACES:-6000}
PLACE_C=${PLACE_C:-2}

die() { echo "replica_heartbeats.sh: $*" >&2; exit 1; }
say() { printf "\n=== [%ss] %s\n" "$SECONDS" "$*"; }
for tool in wsched-server wschedctl wsched-loadgen wsched-heartbeat-load; do
  [ -x "$BIN/$tool" ] || die "$BIN/$tool missing; build it first (deploy/local/build.sh)"
done
for tool in psql curl python3; do command -v "$tool" >/dev/null || die "$tool not found"; done

# shellcheck source=loadtest/lib.sh
. "$ROOT/loadtest/lib.sh"

WORK=$(mktemp -d /tmp/wsched-hb.XXXXXX)
chmod 755 "$WORK"
PIDS=()
cleanup() {
  set +e
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
  "$ROOT/deploy/local/pg.sh" stop "$WORK/pgdata" >/dev/null 2>&1
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "machine"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  cpus: $(nproc)  kernel: $(uname -r)"
echo "NODES=$NODES RATE=$RATE/s S=$S WORKSPACES=$WORKSPACES PLACE_C=$PLACE_C"

PGPORT=$(free_port)
"$ROOT/deploy/local/pg.sh" start "$WORK/pgdata" "$PGPORT" >/dev/null
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres)
"${PSQL[@]}" -c "CREATE DATABASE wsched"
echo "fsync = $("${PSQL[@]}" -At -c 'SHOW fsync')"
DB_URL="postgresql://postgres@127.0.0.1:$PGPORT/wsched"

write_tokens "$WORK/tokens.yaml" hb

start_replica() {  # start_replica NAME: sets <NAME>_PID, <NAME>_ADDR, <NAME>_METRICS
  local name=$1 port metrics
  port=$(free_port); metrics=$(free_port)
  # The fake nodes heartbeat only in some phases: never mark them lost.
  "$BIN/wsched-server" --listen="127.0.0.1:$port" --database_url="$DB_URL" \
    --metrics_listen="127.0.0.1:$metrics" --catalog="$ROOT/classes/saas.yaml" \
    --auth_tokens_file="$WORK/tokens.yaml" "$SHARED_AGENTS" --node_lost_after=1h \
    >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  printf -v "${name}_PID" %s "$!"
  printf -v "${name}_ADDR" %s "127.0.0.1:$port"
  printf -v "${name}_METRICS" %s "$metrics"
  wait_healthy "127.0.0.1:$port" "$!" "$WORK/$name.log"
}

metric() {  # metric PORT NAME{LABELS}: the sample's value (0 when absent)
  curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m {print $2; found=1} END {if (!found) print 0}'
}
cores() { python3 -c "print('%.3f' % (($2 - $1) / $3))" "$1" "$2" "$3"; }

say "two replicas"
start_replica A
start_replica B
echo "A=$A_ADDR (pid $A_PID)  B=$B_ADDR (pid $B_PID)"

say "registering $NODES nodes through A, placing $WORKSPACES workspaces through B"
"$BIN/wsched-loadgen" --server="$A_ADDR" --token="$CP_TOKEN" --agent_token="$AGENT_TOKEN" \
  --setup_only --setup_nodes="$NODES" --run_id=hb --mix=standard=1 --concurrency=8 | head -1
"$BIN/wsched-loadgen" --server="$B_ADDR" --token="$CP_TOKEN" --mix=standard=1 --concurrency=8 \
  --requests="$WORKSPACES" --run_id=fill >"$WORK/fill.log" || { cat "$WORK/fill.log" >&2; die "fill failed"; }
grep -E '^PlaceWorkspace calls' "$WORK/fill.log"
# Let B apply the last of A's registrations and settle.
sleep 2

# window NAME: measures B, A and PostgreSQL CPU over S seconds while the
# phase's load (started by the caller) runs.
window() {
  local b0 a0 p0 b1 a1 p1
  b0=$(proc_cpu "$B_PID"); a0=$(proc_cpu "$A_PID"); p0=$(pg_cpu "$WORK/pgdata")
  sleep "$S"
  b1=$(proc_cpu "$B_PID"); a1=$(proc_cpu "$A_PID"); p1=$(pg_cpu "$WORK/pgdata")
  printf "%-12s B %s cores   A %s cores   PostgreSQL %s cores\n" "$1" \
    "$(cores "$b0" "$b1" "$S")" "$(cores "$a0" "$a1" "$S")" "$(cores "$p0" "$p1" "$S")"
  eval "CPU_B_$2=$(cores "$b0" "$b1" "$S")"
}
heartbeats() {  # heartbeats LOG SECONDS: unchanged heartbeats through A, in the background
  "$BIN/wsched-heartbeat-load" --server="$A_ADDR" --token="$AGENT_TOKEN" --run_id=hb \
    --nodes="$NODES" --rate="$RATE" --duration="${2}s" >"$WORK/$1.log" &
  HB_PID=$!
}
place() {  # place LOG: place + stop cycles through B for S seconds
  "$BIN/wsched-loadgen" --server="$B_ADDR" --token="$CP_TOKEN" --mix=standard=1 \
    --concurrency="$PLACE_C" --stop_after_place --duration="${S}s" --run_id="$1" >"$WORK/$1.log"
}
placement_latency() {  # placement_latency LOG: "p50 p99"
  python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); l=d["place"]["latency_ms"]; print("%.3f %.3f %d" % (l["p50"], l["p99"], d["place"]["errors"] and sum(d["place"]["errors"].values()) or 0))' "$1"
}

say "phase 1: idle"
window idle IDLE

say "phase 2: $RATE heartbeats/s through A"
written0=$(metric "$A_METRICS" 'wsched_heartbeats_total{result="written"}')
skipped0=$(metric "$A_METRICS" 'wsched_heartbeats_total{result="skipped"}')
heartbeats hb-only $((S + 2)); sleep 1
window heartbeats HB
wait "$HB_PID" || die "heartbeats failed: $(cat "$WORK/hb-only.log")"
grep -E '^(heartbeats|latency)' "$WORK/hb-only.log"
echo "A's heartbeats: written $(python3 -c "print(int($(metric "$A_METRICS" 'wsched_heartbeats_total{result="written"}') - $written0))"), skipped (liveness only) $(python3 -c "print(int($(metric "$A_METRICS" 'wsched_heartbeats_total{result="skipped"}') - $skipped0))")"

say "phase 3: placements through B (C=$PLACE_C, place + stop)"
place place-idle
read -r P50_IDLE P99_IDLE ERR_IDLE <<<"$(placement_latency "$WORK/place-idle.log")"
echo "placement p50 $P50_IDLE ms  p99 $P99_IDLE ms  errors $ERR_IDLE"

say "phase 4: placements through B while $RATE heartbeats/s go through A"
heartbeats hb-place $((S + 3)); sleep 1
place place-hb
wait "$HB_PID" || die "heartbeats failed: $(cat "$WORK/hb-place.log")"
grep -E '^(heartbeats|latency)' "$WORK/hb-place.log"
read -r P50_HB P99_HB ERR_HB <<<"$(placement_latency "$WORK/place-hb.log")"
echo "placement p50 $P50_HB ms  p99 $P99_HB ms  errors $ERR_HB"

say "B's change feed"
for m in 'wsched_feed_full_reloads_total{reason="start"}' 'wsched_feed_full_reloads_total{reason="gap"}' \
         'wsched_feed_deltas_applied_total{entity="node"}' 'wsched_feed_deltas_applied_total{entity="workspace"}' \
         wsched_feed_lag_entries; do
  printf "%-58s %s\n" "$m" "$(metric "$B_METRICS" "$m")"
done

say "summary"
python3 - "$CPU_B_IDLE" "$CPU_B_HB" "$P99_IDLE" "$P99_HB" "$P50_IDLE" "$P50_HB" "$ERR_IDLE" "$ERR_HB" <<'PY'
import sys
idle, hb, p99_idle, p99_hb, p50_idle, p50_hb, e1, e2 = map(float, sys.argv[1:])
extra = hb - idle
print("B CPU: idle %.3f cores, with heartbeats through A %.3f cores: %+.1f%% of one core (target < 5%%): %s"
      % (idle, hb, extra * 100, "met" if extra < 0.05 else "MISSED"))
ratio = p99_hb / p99_idle if p99_idle > 0 else float("inf")
print("B placement p50 %.3f -> %.3f ms, p99 %.3f -> %.3f ms: %.2fx (target <= 1.5x): %s"
      % (p50_idle, p50_hb, p99_idle, p99_hb, ratio, "met" if ratio <= 1.5 else "MISSED"))
print("placement errors: %d idle, %d with heartbeats" % (e1, e2))
PY
