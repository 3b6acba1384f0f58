#!/usr/bin/env bash
# Soak: the server's memory and placement rate stay flat over many place +
# stop cycles while every node heartbeats (docs/performance-history.md, "Soak").
#
#   loadtest/soak.sh                          # N=500000 workspaces: hours on 2 CPUs
#   N=30000 loadtest/soak.sh                  # a quick check (minutes)
#   LOSE_HALF=1 N=30000 loadtest/soak.sh      # half the nodes go silent midway
#
# One wsched-server on a private PostgreSQL 15 (fsync on) in a temp dir.
# wsched-loadgen registers NODES fake nodes (GPU and CPU, shared as MIX
# says), and two wsched-heartbeat-load processes beat for every one of them
# (one half each), each node every HB_EVERY seconds. Then place + stop
# cycles at concurrency C, WINDOW workspaces per wsched-loadgen run, until N
# workspaces are done. After each window it prints: workspaces done, the
# server's RSS (VmRSS of /proc/<pid>/status), placements/s, p99 (ms),
# errors, the workspaces the server tracks in memory (wsched_tracked_
# workspaces) and the rows of the workspaces table. At the end: the last
# window's RSS and rate over the second window's (the first warms up),
# against the targets: RSS within 15%, rate within 10%.
#
# LOSE_HALF=1: once half of N is done, the heartbeats of one half of the
# nodes stop. When the server has marked them lost (--node_lost_after=
# LOST_AFTER), the cycles go on with what can still land: placements/s and
# p99 of the windows after, against those before (the first window left
# out). Targets: rate after >= 80% of before, p99 after within 1.5x.
#
# Env: N (500000), WINDOW (N/10, at least 1000), C (16), NODES (400),
#      MIX (gpu-1x=0.5,standard=0.5), HB_EVERY (2), LOST_AFTER (10s),
#      LOSE_HALF (0), BUILD (build-load), SERVER_FLAGS (extra wsched-server
#      flags, e.g. --stopped_workspace_retention=10m), KEEP=1 keeps the temp dir.
#      Needs wsched-server wschedctl wsched-loadgen wsched-heartbeat-load in
#      BUILD; PostgreSQL 15, curl, python3.
# Exit status: 0 when every target was met, 1 when one was missed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-load}
BIN=$BUILD/bin
N=${N:-500000}
WINDOW=${WINDOW:-$((N / 10 > 1000 ? N / 10 : 1000))}
C=${C:-16}
NODES=${NODES:-400}
MIX=${MIX:-gpu-1x=0.5,standard=0.5}
HB_EVERY=${HB_EVERY:-2}
LOST_AFTER=${LOST_AFTER:-10s}
LOSE_HALF=${LOSE_HALF:-0}

say() { printf "\n=== [%ss] %s\n" "$SECONDS" "$*"; }
die() { echo "soak.sh: $*" >&2; exit 1; }
for tool in wsched-server wschedctl wsched-loadgen wsched-heartbeat-load; do
  [ -x "$BIN/$tool" ] || die "$BIN/$tool missing; build it: make -C $BUILD wsched-server wschedctl wsched-loadgen wsched-heartbeat-load"
done
for tool in psql curl python3; do command -v "$tool" >/dev/null || die "$tool not found"; done
[ "$N" -ge $((2 * WINDOW)) ] || die "N=$N must be at least two windows (WINDOW=$WINDOW)"

# shellcheck source=loadtest/lib.sh
. "$ROOT/loadtest/lib.sh"

WORK=$(mktemp -d /tmp/wsched-soak.XXXXXX)
chmod 755 "$WORK"  # PostgreSQL runs as an unprivileged user when we are root.
SERVER_PID=
HB_PIDS=()
cleanup() {
  set +e
  for pid in "${HB_PIDS[@]}" "$SERVER_PID"; do
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
  done
  for pid in "${HB_PIDS[@]}" "$SERVER_PID"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null
  done
  "$ROOT/deploy/local/pg.sh" stop "$WORK/pgdata" >/dev/null 2>&1
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rss_mb() { awk '/^VmRSS:/ {printf "%.1f", $2 / 1024}' "/proc/$SERVER_PID/status"; }
metric_sum() {  # metric_sum SELECTOR: sum of the samples whose line starts with it
  curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" |
    awk -v m="$1" 'index($0, m) == 1 {s += $NF} END {printf "%d", s}'
}

say "machine"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  cpus: $(nproc)  kernel: $(uname -r)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "N=$N WINDOW=$WINDOW C=$C NODES=$NODES MIX=$MIX HB_EVERY=${HB_EVERY}s LOST_AFTER=$LOST_AFTER LOSE_HALF=$LOSE_HALF"

say "PostgreSQL (fsync on) and wsched-server"
PGPORT=$(free_port)
"$ROOT/deploy/local/pg.sh" start "$WORK/pgdata" "$PGPORT" >/dev/null
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres)
"${PSQL[@]}" -c "CREATE DATABASE wsched"
write_tokens "$WORK/tokens.yaml" soak
SERVER=127.0.0.1:$(free_port)
METRICS_PORT=$(free_port)
# shellcheck disable=SC2086
"$BIN/wsched-server" --listen="$SERVER" \
  --database_url="postgresql://postgres@127.0.0.1:$PGPORT/wsched" \
  --metrics_listen="127.0.0.1:$METRICS_PORT" --catalog="$ROOT/classes/saas.yaml" \
  --auth_tokens_file="$WORK/tokens.yaml" "$SHARED_AGENTS" --node_lost_after="$LOST_AFTER" \
  ${SERVER_FLAGS:-} >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
wait_healthy "$SERVER" "$SERVER_PID" "$WORK/server.log"
echo "wsched-server pid $SERVER_PID, RSS $(rss_mb) MB"

say "nodes: register $NODES, heartbeat every one"
LOADGEN=("$BIN/wsched-loadgen" --server="$SERVER" --token="$CP_TOKEN" --agent_token="$AGENT_TOKEN")
"${LOADGEN[@]}" --setup_only --setup_nodes="$NODES" --mix="$MIX" --run_id=soak >"$WORK/setup.out" ||
  { cat "$WORK/setup.out" >&2; die "registering the nodes failed"; }
grep '^setup:' "$WORK/setup.out"
GPU_NODES=$(json "$WORK/setup.out" 'd["setup"]["gpu_nodes"]')
HB_RATE=$(python3 -c "print(max($NODES / 2 / $HB_EVERY, 1))")
for shard in 0 1; do
  "$BIN/wsched-heartbeat-load" --server="$SERVER" --token="$AGENT_TOKEN" --run_id=soak \
    --nodes="$NODES" --gpu_nodes="$GPU_NODES" --shard="$shard/2" --rate="$HB_RATE" \
    --threads=2 --duration=24h >"$WORK/heartbeats.$shard.log" 2>&1 &
  HB_PIDS+=($!)
done
echo "heartbeats: 2 x $HB_RATE/s (each node every ${HB_EVERY}s), pids ${HB_PIDS[*]}"

# lose_half: silences shard 1 and waits until the server calls its nodes lost.
LOST_AT=0
lost_nodes() {
  curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" |
    awk '/^wsched_nodes\{/ && /state="lost"/ {s += $NF} END {printf "%d", s}'
}
lose_half() {
  kill -TERM "${HB_PIDS[1]}"; wait "${HB_PIDS[1]}" 2>/dev/null || true
  HB_PIDS=("${HB_PIDS[0]}")
  local want=$((NODES / 2)) deadline=$((SECONDS + 120)) t0=$SECONDS
  # The server's lost-node check runs every LOST_AFTER / 4: nothing to wait on but it.
  until [ "$(lost_nodes)" -ge "$want" ]; do
    [ $SECONDS -lt $deadline ] || die "only $(lost_nodes) of $want silent nodes marked lost after 120 s"
    sleep 0.5
  done
  echo "heartbeats of $want nodes stopped; $(lost_nodes) nodes lost after $((SECONDS - t0)) s"
}

say "place + stop cycles: $N workspaces, $WINDOW per window, C=$C"
printf "%-7s %9s %9s %10s %9s %7s %7s %9s %10s\n" window done rss_mb placed/s p99_ms errors live recently rows
DONE=0
K=0
: >"$WORK/windows"
while [ "$DONE" -lt "$N" ]; do
  K=$((K + 1))
  n=$((N - DONE < WINDOW ? N - DONE : WINDOW))
  if [ "$LOSE_HALF" = 1 ] && [ "$LOST_AT" = 0 ] && [ "$DONE" -ge $((N / 2)) ]; then
    lose_half
    LOST_AT=$K
  fi
  "${LOADGEN[@]}" --concurrency="$C" --stop_after_place --requests="$n" --max_duration=30m \
    --mix="$MIX" --run_id="soak-w$K" >"$WORK/window.$K.out" 2>&1 ||
    { tail -5 "$WORK/window.$K.out" >&2; die "window $K: wsched-loadgen failed"; }
  DONE=$((DONE + n))
  rate=$(json "$WORK/window.$K.out" '"%.1f" % d["placements_per_s"]')
  p99=$(json "$WORK/window.$K.out" '"%.2f" % d["place"]["latency_ms"]["p99"]')
  errors=$(json "$WORK/window.$K.out" 'sum(d["place"]["errors"].values()) + sum(d.get("stop", {}).get("errors", {}).values())')
  rss=$(rss_mb)
  live=$(metric_sum 'wsched_tracked_workspaces{kind="live"}')
  recent=$(metric_sum 'wsched_tracked_workspaces{kind="recently_ended"}')
  rows=$("${PSQL[@]}" -d wsched -At -c "SELECT count(*) FROM workspaces")
  printf "%-7s %9d %9s %10s %9s %7s %7s %9s %10s\n" "$K" "$DONE" "$rss" "$rate" "$p99" "$errors" "$live" "$recent" "$rows"
  echo "$K $DONE $rss $rate $p99 $errors $LOST_AT" >>"$WORK/windows"
done
kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$WORK/server.log" >&2; die "wsched-server exited"; }

say "summary"
python3 - "$WORK/windows" "$LOSE_HALF" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
w = [dict(k=int(r[0]), rss=float(r[2]), rate=float(r[3]), p99=float(r[4]), errors=int(r[5]),
          lost_at=int(r[6])) for r in rows]
ok = True
def check(name, value, target, good):
    global ok
    ok &= good
    print("%-44s %8.3f  target %-10s %s" % (name, value, target, "met" if good else "MISSED"))
errors = sum(x["errors"] for x in w)
print("windows %d, errors %d" % (len(w), errors))
ok &= errors == 0
if sys.argv[2] != "1":
    second, last = w[1], w[-1]
    print("second window: RSS %.1f MB, %.1f placements/s; last (%d): RSS %.1f MB, %.1f placements/s"
          % (second["rss"], second["rate"], last["k"], last["rss"], last["rate"]))
    check("RSS last / second", last["rss"] / second["rss"], "<= 1.15", last["rss"] <= 1.15 * second["rss"])
    check("placements/s last / second", last["rate"] / second["rate"], "0.90-1.10",
          abs(last["rate"] / second["rate"] - 1) <= 0.10)
else:
    lost_at = w[-1]["lost_at"]
    before = [x for x in w if 1 < x["k"] < lost_at]
    after = [x for x in w if x["k"] >= lost_at]
    if not before or not after:
        sys.exit("LOSE_HALF needs at least two windows before the loss and one after: raise N or lower WINDOW")
    mean = lambda xs, key: sum(x[key] for x in xs) / len(xs)
    print("before the loss (windows %d-%d): %.1f placements/s, p99 %.2f ms"
          % (before[0]["k"], before[-1]["k"], mean(before, "rate"), mean(before, "p99")))
    print("after (windows %d-%d), half the nodes lost: %.1f placements/s, p99 %.2f ms"
          % (after[0]["k"], after[-1]["k"], mean(after, "rate"), mean(after, "p99")))
    check("placements/s after / before", mean(after, "rate") / mean(before, "rate"), ">= 0.80",
          mean(after, "rate") >= 0.8 * mean(before, "rate"))
    check("p99 after / before", mean(after, "p99") / mean(before, "p99"), "<= 1.5",
          mean(after, "p99") <= 1.5 * mean(before, "p99"))
print("all targets met" if ok else "some targets MISSED")
sys.exit(0 if ok else 1)
EOF
