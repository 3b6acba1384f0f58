#!/usr/bin/env bash
# Benchmarks wsched on THIS machine against a baseline measured in the same
# run (targets, results and how to read them: docs/performance.md).
#
#   loadtest/bench.sh                 # C="16 64" S=10 ROUNDS=3: about 10 minutes on 2 CPUs
#   C=32 loadtest/bench.sh            # one concurrency
#
# All against one private PostgreSQL 15 (fsync on) under a temp dir, with the
# steps interleaved because a shared machine's disk and CPUs drift:
#   round 1..ROUNDS:
#     a. pgbench, a one-row UPDATE at concurrency C for S seconds: one commit
#        per operation, the baseline. (A last pgbench closes the last round.)
#     b. wsched-loadgen, PlaceWorkspace only at concurrency C for S seconds,
#        on an empty cluster of fake nodes (registered once, emptied by SQL
#        between rounds while the server is down). Latency is cross-checked
#        against the server's /metrics.
#     b'. (step "reads") b again while READERS threads poll one pending
#        workspace (GetWorkspace with view READ_VIEW: its reason and
#        estimate; with full also its proven fixes), each READ_RATE times
#        a second: does polling pending workspaces slow placing? Compared
#        with b of the same round.
#     c. wsched-loadgen with --stop_after_place (place + stop cycles).
#     d. two replicas (two wsched-server processes on the database), the
#        same load split between them (C/2 each), placements summed; one
#        places and the other forwards to it (FORWARD=0: both place).
#     d'. three replicas the same way, the C clients split in three (16:
#        6, 5, 5): one places, two forward.
#     e. after the rounds (step "open"): PlaceWorkspace at a fixed rate, 70%
#        of the median closed-loop placements/s of b, up to 4C calls in
#        flight, each call timed from when it was due (the closed loop hides
#        queueing: a slow answer there also delays the next call).
#   Every wsched run ends with the SQL invariants checked: every GPU hold
#   belongs to a placed workspace, and each node's held CPU and memory equal
#   the sum of the placed workspaces on it.
#   All of it for each concurrency in C (a list), with its own pgbench runs.
#   Each wsched run gets a fresh wsched-server and reports, from PostgreSQL's
#   own counters, commits and WAL fsyncs per placement and deadlocks, and the
#   CPU used per placement by the server, PostgreSQL and the load generator.
#   Ratio of a round = its placements/s / mean of the pgbench runs around it.
#   Then:
#     restart: the store is rewritten to hold RESTART_WORKSPACES placed
#       workspaces (75% "standard" on general nodes, 25% "gpu-1x" on 8-GPU
#       H100 nodes, with their GPU holds) and wsched-server is restarted
#       RESTART_RUNS times, timed from exec to gRPC health SERVING;
#     decide: placement_benchmark, the Decide cases at 100 / 1,000 / 10,000 nodes.
#
# Env: C ("16 64"), S (10), WARMUP (1: seconds of load before each wsched
#      run's S, left out of its numbers, as a fresh server's first calls
#      fill its caches; CPU and commits per placement count them), ROUNDS (3), MIX (gpu-1x=0.5,standard=0.5), NODES (fake
#      nodes; default from the first pgbench), BUILD (build-load),
#      RESTART_WORKSPACES (100000), RESTART_RUNS (3), SKIP (space-separated
#      steps to skip: place reads cycle two three open restart decide), KEEP=1 keeps the temp dir,
#      READERS (2: pending readers of step "reads"), READ_VIEW (basic or
#      full), READ_RATE (25: reads/s per reader; 0 = as fast as answered),
#      SERVER_FLAGS (extra wsched-server flags, e.g. --commit_wait=1ms),
#      FORWARD (1: the two replicas run as placer and front door; 0: both place),
#      WAL_MB (2048: WAL segments made before the load, as a database that
#      has run a while recycles its own; 0: a fresh cluster's),
#      STATEMENTS=1 loads pg_stat_statements and prints the top statements
#      of every wsched run, with the time spent planning them (diagnosis;
#      it costs some throughput),
#      TRACE=1 has every loadgen run write WORK/NAME.trace (when each call began,
#      its latency; with KEEP=1, to find when the slow ones happened),
#      PERF=1 samples the whole machine with perf during each wsched run and
#      prints where the CPU went (by process and library, hottest symbols).
#      Needs wsched-server wschedctl wsched-loadgen placement_benchmark built
#      in BUILD; PostgreSQL 15, pgbench, curl, python3.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-load}
BIN=$BUILD/bin
C_VALUES=${C:-16 64}
C=${C_VALUES%% *}
S=${S:-10}
WARMUP=${WARMUP:-1}
ROUNDS=${ROUNDS:-3}
MIX=${MIX:-gpu-1x=0.5,standard=0.5}
RESTART_WORKSPACES=${RESTART_WORKSPACES:-100000}
RESTART_RUNS=${RESTART_RUNS:-3}
SKIP=${SKIP:-}
WAL_MB=${WAL_MB:-2048}

skipping() { [[ " $SKIP " == *" $1 "* ]]; }
say() { printf "\n=== [%ss] %s\n" "$SECONDS" "$*"; }
die() { echo "bench.sh: $*" >&2; exit 1; }

for tool in wsched-server wschedctl wsched-loadgen placement_benchmark; do
  [ -x "$BIN/$tool" ] || die "$BIN/$tool missing; build it: make -C $BUILD wsched-server wschedctl wsched-loadgen placement_benchmark"
done
for tool in pgbench psql curl python3; do
  command -v "$tool" >/dev/null || die "$tool not found"
done

# shellcheck source=loadtest/lib.sh
. "$ROOT/loadtest/lib.sh"

WORK=$(mktemp -d /tmp/wsched-bench.XXXXXX)
chmod 755 "$WORK"  # PostgreSQL runs as an unprivileged user when we are root.
PGDATA_DIR=$WORK/pgdata
SERVER_PID=
cleanup() {
  set +e
  for pid in "$SERVER_PID" "${SERVER_B_PID:-}" "${SERVER_C_PID:-}"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"; wait "$pid" 2>/dev/null
    fi
  done
  "$ROOT/deploy/local/pg.sh" stop "$PGDATA_DIR" >/dev/null 2>&1
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "machine"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  cpus: $(nproc)  kernel: $(uname -r)"
grep -m1 'model name' /proc/cpuinfo || true
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "C=$C_VALUES S=$S MIX=$MIX"

say "PostgreSQL (fsync on)"
PGPORT=$(free_port)
if [ "${STATEMENTS:-0}" = 1 ]; then
  export PG_EXTRA_OPTS="${PG_EXTRA_OPTS:-} -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on"
fi
# WAL sized for the whole run (WAL_MB): min_wal_size keeps the segments a
# checkpoint recycles, and presize_wal has them made before any load.
[ "$WAL_MB" -gt 0 ] &&
  export PG_EXTRA_OPTS="${PG_EXTRA_OPTS:-} -c min_wal_size=${WAL_MB}MB -c max_wal_size=$((2 * WAL_MB))MB"
"$ROOT/deploy/local/pg.sh" start "$PGDATA_DIR" "$PGPORT" >/dev/null
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres)
# A fresh cluster has one WAL segment; every 16 MB of WAL after it is a new
# file that PostgreSQL fills with zeros while the committing backend waits:
# the group commit's one writer stalled 58-68 ms at each (docs/performance-history.md,
# "WAL segments made during the load"). A database that has run for a while
# recycles its segments instead, so the bench makes them first: a switch to
# a new segment per 16 MB, then checkpoints that recycle them all as future
# segments. WAL_MB=0 skips it, to see a fresh cluster's stalls.
presize_wal() {
  local segments=$((WAL_MB / 16)) t0=$SECONDS
  [ "$segments" -gt 0 ] || return 0
  for _ in $(seq "$segments"); do echo "SELECT txid_current(); SELECT pg_switch_wal();"; done \
    | "${PSQL[@]}" -At >/dev/null
  "${PSQL[@]}" -c CHECKPOINT -c "SELECT pg_switch_wal()" -c CHECKPOINT >/dev/null
  echo "WAL: $(find "$PGDATA_DIR/pg_wal" -maxdepth 1 -type f -name '0*' | wc -l) segments made ahead of the load ($((SECONDS - t0)) s)"
}
presize_wal
"${PSQL[@]}" -At -c "SHOW fsync" | sed 's/^/fsync = /'
"${PSQL[@]}" -At -c "SHOW synchronous_commit" | sed 's/^/synchronous_commit = /'
"${PSQL[@]}" -c "CREATE DATABASE wsched" -c "CREATE DATABASE bench"
[ "${STATEMENTS:-0}" = 1 ] && "${PSQL[@]}" -d wsched -c "CREATE EXTENSION pg_stat_statements"
"${PSQL[@]}" -d bench -c "CREATE TABLE t (id int PRIMARY KEY, v bigint NOT NULL); INSERT INTO t VALUES (1, 0);"
echo 'UPDATE t SET v = v + 1 WHERE id = 1;' >"$WORK/update.sql"
DB_URL="postgresql://postgres@127.0.0.1:$PGPORT/wsched"

# Commits and WAL fsyncs: "xact_commit(wsched) xact_commit(bench) wal_sync
# wal_write wal_records deadlocks(wsched) wal_bytes" (WAL counters are
# cluster-wide).
# Backends publish their counters when they exit, so read this only after
# the clients of a phase have disconnected.
pgstats() {
  sleep 0.5
  "${PSQL[@]}" -d postgres -At -F ' ' -c "SELECT
      (SELECT xact_commit FROM pg_stat_database WHERE datname = 'wsched'),
      (SELECT xact_commit FROM pg_stat_database WHERE datname = 'bench'),
      wal_sync, wal_write, wal_records,
      (SELECT deadlocks FROM pg_stat_database WHERE datname = 'wsched'), wal_bytes FROM pg_stat_wal"
}
# per_op LABEL "STATS0" "STATS1" OPS DB(wsched|bench): commits and fsyncs per op.
per_op() {
  python3 - "$@" <<'EOF'
import sys
label, a, b, ops, db = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), float(sys.argv[4]), sys.argv[5]
d = [float(y) - float(x) for x, y in zip(a, b)]
commits = d[0] if db == "wsched" else d[1]
if ops > 0:
    print("%s: %d ops, %.3f commits/op, %.3f WAL fsyncs/op, %.2f WAL records/op, %.0f WAL bytes/op%s"
          % (label, ops, commits / ops, d[2] / ops, d[4] / ops, d[6] / ops,
             ", %d deadlocks" % d[5] if db == "wsched" else ""))
EOF
}

run_pgbench() {  # run_pgbench NAME: sets TPS
  local s0 s1 c0 c1 t0 t1 pid txns
  s0=$(pgstats)
  pgbench -n -c "$C" -j "$C" -T "$S" -f "$WORK/update.sql" -h 127.0.0.1 -p "$PGPORT" -U postgres bench \
    >"$WORK/pgbench.$1.log" 2>&1 &
  pid=$!
  # PostgreSQL CPU while pgbench's backends are alive (they exit with it).
  sleep 0.5; c0=$(pg_cpu "$PGDATA_DIR"); t0=$(date +%s.%N)
  sleep "$(python3 -c "print(max($S * 0.75 - 0.5, 0.2))")"; c1=$(pg_cpu "$PGDATA_DIR"); t1=$(date +%s.%N)
  local alive=0; kill -0 "$pid" 2>/dev/null && alive=1
  wait "$pid" || { cat "$WORK/pgbench.$1.log" >&2; die "pgbench failed"; }
  s1=$(pgstats)
  TPS=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$WORK/pgbench.$1.log" | tail -1)
  txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/pgbench.$1.log")
  grep -E '^(latency average|tps)' "$WORK/pgbench.$1.log"
  per_op "pgbench $1" "$s0" "$s1" "$txns" bench
  [ "$alive" = 1 ] && python3 -c "print('CPU per UPDATE: postgres %.2f ms (sampled over %.1f s, at the run\'s average tps)' % (($c1 - $c0) / ($TPS * ($t1 - $t0)) * 1e3, $t1 - $t0))"
  return 0
}

# --- wsched-server ---------------------------------------------------------
write_tokens "$WORK/tokens.yaml" bench
GRPC_PORT=$(free_port)
METRICS_PORT=$(free_port)
SERVER=127.0.0.1:$GRPC_PORT
LOADGEN=("$BIN/wsched-loadgen" --server="$SERVER" --token="$CP_TOKEN" --agent_token="$AGENT_TOKEN")

start_server() {  # start_server LOG: starts wsched-server, sets SERVER_PID and T_EXEC
  rm -f "$WORK/port"
  T_EXEC=$(date +%s.%N)
  # Fake nodes never heartbeat: keep them from being marked lost mid-run.
  "$BIN/wsched-server" --listen="$SERVER" --database_url="$DB_URL" \
    --metrics_listen="127.0.0.1:$METRICS_PORT" --catalog="$ROOT/classes/saas.yaml" \
    --auth_tokens_file="$WORK/tokens.yaml" --port_file="$WORK/port" "$SHARED_AGENTS" \
    --node_lost_after=1h ${SERVER_FLAGS:-} ${TWO_FLAGS[@]+"${TWO_FLAGS[@]}"} >"$1" 2>&1 &
  SERVER_PID=$!
}

# wait_serving: prints "PORT_S HEALTH_S", seconds from T_EXEC until the port
# file was written (the gRPC server is up) and until `wschedctl health`
# answered SERVING (includes starting wschedctl, tens of ms).
wait_serving() {
  local deadline=$((SECONDS + 120)) t_port
  until [ -s "$WORK/port" ]; do
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK"/server*.log >&2; die "wsched-server exited"; }
    [ $SECONDS -lt $deadline ] || die "wsched-server did not start in 120 s"
    sleep 0.005
  done
  t_port=$(date +%s.%N)
  until "$BIN/wschedctl" --server="$SERVER" health >/dev/null 2>&1; do
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK"/server*.log >&2; die "wsched-server exited"; }
    [ $SECONDS -lt $deadline ] || die "wsched-server not SERVING after 120 s"
    sleep 0.02
  done
  python3 -c "import sys; t = [float(x) for x in sys.argv[1:]]; print('%.3f %.3f' % (t[1] - t[0], t[2] - t[0]))" \
    "$T_EXEC" "$t_port" "$(date +%s.%N)"
}

stop_server() {
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

# More replicas on the same database, for the two- and three-replica
# phases: B and C (start_server_b LOG, start_server_c LOG).
GRPC_PORT_B=$(free_port)
SERVER_B=127.0.0.1:$GRPC_PORT_B
SERVER_B_PID=
GRPC_PORT_C=$(free_port)
SERVER_C=127.0.0.1:$GRPC_PORT_C
SERVER_C_PID=
start_extra_server() {  # ADDRESS LOG; sets EXTRA_PID
  "$BIN/wsched-server" --listen="$1" --database_url="$DB_URL" --metrics_listen= \
    --catalog="$ROOT/classes/saas.yaml" --auth_tokens_file="$WORK/tokens.yaml" "$SHARED_AGENTS" \
    --node_lost_after=1h ${SERVER_FLAGS:-} ${TWO_FLAGS[@]+"${TWO_FLAGS[@]}"} >"$2" 2>&1 &
  EXTRA_PID=$!
  wait_healthy "$1" "$EXTRA_PID" "$2"
}
start_server_b() { start_extra_server "$SERVER_B" "$1"; SERVER_B_PID=$EXTRA_PID; }
start_server_c() { start_extra_server "$SERVER_C" "$1"; SERVER_C_PID=$EXTRA_PID; }

# The store's invariants after a run (server down): every GPU hold belongs to
# a placed workspace; held capacity equals what the placed workspaces hold.
check_invariants() {
  local bad
  bad=$("${PSQL[@]}" -d wsched -At -c "SELECT
      (SELECT count(*) FROM gpu_holds h JOIN workspaces w ON w.id = h.workspace_id
        WHERE w.state <> 'placed') +
      (SELECT count(*) FROM nodes n LEFT JOIN (SELECT node_name, sum(cpu_millis) AS cpu,
              sum(memory_bytes) AS mem FROM workspaces WHERE state = 'placed' GROUP BY node_name) s
        ON s.node_name = n.name
        WHERE n.held_cpu_millis <> COALESCE(s.cpu, 0) OR n.held_memory_bytes <> COALESCE(s.mem, 0))")
  if [ "$bad" = 0 ]; then echo "SQL invariants: hold"; else echo "SQL INVARIANTS VIOLATED: $bad rows"; INVARIANTS_BROKEN=1; fi
}
INVARIANTS_BROKEN=0

scrape() { curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" >"$1"; }

# Server-side PlaceWorkspace latency for result="placed" between two scrapes:
# count, mean, and the histogram bucket holding p50 / p99.
metrics_delta() {
  python3 - "$1" "$2" <<'EOF'
import re, sys
def load(path):
    buckets, total, count = {}, 0.0, 0.0
    for line in open(path):
        m = re.match(r'wsched_placement_duration_seconds_(bucket|sum|count)\{([^}]*)\} (\S+)', line)
        if not m or 'result="placed"' not in m.group(2):
            continue
        kind, labels, value = m.group(1), m.group(2), float(m.group(3))
        if kind == 'bucket':
            le = re.search(r'le="([^"]+)"', labels).group(1)
            buckets[float('inf') if le == '+Inf' else float(le)] = value
        elif kind == 'sum':
            total = value
        else:
            count = value
    return buckets, total, count
b0, s0, c0 = load(sys.argv[1])
b1, s1, c1 = load(sys.argv[2])
n = c1 - c0
if n <= 0:
    print("metrics: no placements observed"); sys.exit()
def bucket(q):
    for le in sorted(b1):
        if b1[le] - b0.get(le, 0) >= q * n:
            return "<= %g ms" % (le * 1000) if le != float('inf') else "> 10 s"
print("server /metrics wsched_placement_duration_seconds{result=\"placed\"}: count %d, mean %.3f ms, p50 %s, p99 %s"
      % (n, (s1 - s0) / n * 1000, bucket(0.5), bucket(0.99)))
EOF
}

# loadgen_phase NAME ARGS...: fresh server, one loadgen run, server stopped
# (so PostgreSQL has published its counters), commits/fsyncs per placement.
loadgen_phase() {
  local name=$1 s0 s1; shift
  start_server "$WORK/server.$name.log"
  echo "server up / SERVING after $(wait_serving) s"
  scrape "$WORK/metrics.$name.0"
  s0=$(pgstats)
  local srv0 pg0 srv1 pg1 placed
  reset_statements
  srv0=$(proc_cpu "$SERVER_PID"); pg0=$(pg_cpu "$PGDATA_DIR")
  # Workspace ids never repeat across phases: a known id is a restart.
  start_perf "$name"
  local trace=(); [ "${TRACE:-0}" = 1 ] && trace=(--latency_trace="$WORK/$name.trace")
  "${LOADGEN[@]}" --concurrency="$C" --duration="${S}s" --warmup="${WARMUP}s" --mix="$MIX" \
    --run_id="$name-c$C" "$@" "${trace[@]}" \
    | tee "$WORK/$name.out"
  finish_perf "$name"
  srv1=$(proc_cpu "$SERVER_PID"); pg1=$(pg_cpu "$PGDATA_DIR")
  scrape "$WORK/metrics.$name.1"
  stop_server
  s1=$(pgstats)
  metrics_delta "$WORK/metrics.$name.0" "$WORK/metrics.$name.1"
  placed=$(json "$WORK/$name.out" 'd["place"]["placed"]')
  [ "$placed" -gt 0 ] || die "$name placed nothing (every placement went pending: set NODES higher)"
  # CPU and commits are counted around the warm-up too.
  placed=$((placed + $(json "$WORK/$name.out" 'd["warmup"]["placed"]')))
  print_statements
  local unit=placement; [[ "$name" == cycle* ]] && unit="cycle (place + stop)"
  per_op "postgres per $unit" "$s0" "$s1" "$placed" wsched
  check_invariants
  python3 - "$(python3 -c "print($srv1 - $srv0)")" "$(python3 -c "print($pg1 - $pg0)")" \
    "$(json "$WORK/$name.out" 'd["client_cpu_s"]')" "$placed" \
    "$(json "$WORK/$name.out" 'd["seconds"] + d["warmup"]["seconds"]')" "$(nproc)" "$unit" <<'EOF'
import sys
srv, pg, cli, n, secs, cpus = [float(x) for x in sys.argv[1:7]]
print("CPU per %s: wsched-server %.2f ms, postgres %.2f ms, loadgen %.2f ms; "
      "together %.0f%% of %d CPUs x %.1f s"
      % (sys.argv[7], srv / n * 1e3, pg / n * 1e3, cli / n * 1e3,
         100 * (srv + pg + cli) / (cpus * secs), cpus, secs))
EOF
}

# reset_statements / print_statements: with STATEMENTS=1, the statements of
# the run between the two.
reset_statements() {
  [ "${STATEMENTS:-0}" = 1 ] || return 0
  "${PSQL[@]}" -d wsched -c "SELECT pg_stat_statements_reset()" >/dev/null
}
print_statements() {
  [ "${STATEMENTS:-0}" = 1 ] || return 0
  "${PSQL[@]}" -d wsched -c "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms,
      round(total_plan_time::numeric, 1) AS plan_ms,
      round(mean_exec_time::numeric, 3) AS mean_ms, rows,
      shared_blks_hit + shared_blks_read AS buffers,
      left(regexp_replace(query, '\s+', ' ', 'g'), 80) AS statement
    FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
    ORDER BY total_exec_time + total_plan_time DESC LIMIT 16"
}

# start_perf NAME / finish_perf NAME: with PERF=1, samples the whole machine
# (every process) for S seconds while a run goes on, then prints the summary.
PERF_PID=
start_perf() {
  [ "${PERF:-0}" = 1 ] || return 0
  perf record -a -F 1999 -o "$WORK/perf.$1.data" -- sleep "$S" >/dev/null 2>&1 &
  PERF_PID=$!
}
finish_perf() {
  [ -n "$PERF_PID" ] || return 0
  wait "$PERF_PID" || true
  PERF_PID=
  perf_summary "$WORK/perf.$1.data"
}

# perf_summary DATA: CPU samples by process and library, then the hottest
# symbols of the server and of PostgreSQL (PERF=1).
perf_summary() {
  echo "--- perf: samples by process and library"
  perf report -i "$1" --stdio --sort comm,dso --percent-limit 1.5 2>/dev/null | grep -v '^#' | grep -v '^$' | head -25
  echo "--- perf: hottest symbols in wsched-server (all its threads)"
  perf report -i "$1" --stdio --comms wsched-server,grpcpp_sync_ser --sort dso,sym --percent-limit 0.5 \
    2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
  echo "--- perf: hottest symbols in postgres"
  perf report -i "$1" --stdio --comms postgres --sort dso,sym --percent-limit 0.7 2>/dev/null \
    | grep -v '^#' | grep -v '^$' | head -25
}

# empty_cluster: every placed workspace stopped, every node empty (server down).
empty_cluster() {
  "${PSQL[@]}" -d wsched -c "BEGIN; DELETE FROM gpu_holds;
    UPDATE workspaces SET state = 'stopped', stopped_at = now() WHERE stopped_at IS NULL;
    UPDATE nodes SET held_cpu_millis = 0, held_memory_bytes = 0; COMMIT;" \
    -c "VACUUM ANALYZE gpu_holds, workspaces, nodes"
}

# summarize: the summary of the current concurrency's rounds.
summarize() {
  echo "=== summary (C=$C, S=${S}s, $ROUNDS rounds, mix $MIX, $(nproc) CPUs, fsync on)"
  python3 - "$WORK" "${TPS_LIST[*]}" "${PLACE_LIST[*]:-}" "${CYCLE_LIST[*]:-}" "${TWO_LIST[*]:-}" \
    "${THREE_LIST[*]:-}" "${READS_LIST[*]:-}" "$C" <<'EOF'
import json, os, statistics, sys
work, tps, place, cycle, two, three, reads = sys.argv[1], *[[float(x) for x in a.split()] for a in sys.argv[2:8]]
concurrency = sys.argv[8]
print("pgbench one-row UPDATE tps: " + ", ".join("%.1f" % t for t in tps))
def rows(rates, kind, key):
    ratios = []
    for i, rate in enumerate(rates):
        base = (tps[i] + tps[i + 1]) / 2
        ratios.append(rate / base)
        d = json.loads(open("%s/%s%d.out" % (work, kind, i + 1)).read().strip().splitlines()[-1])
        l = d["place"]["latency_ms"]
        errors = sum(d["place"]["errors"].values()) + sum(d.get("stop", {}).get("errors", {}).values())
        print("  round %d: %7.1f %s (pgbench around it %.1f) = %.2fx   place p50 %.2f p90 %.2f p99 %.2f max %.2f ms, errors %d"
              % (i + 1, rate, key, base, rate / base, l["p50"], l.get("p90", 0), l["p99"], l["max"], errors))
    if ratios:
        print("  median ratio %.2fx (min %.2fx, max %.2fx)" % (statistics.median(ratios), min(ratios), max(ratios)))
if place:
    print("wsched PlaceWorkspace only (placements/s):")
    rows(place, "place", "placements/s")
if reads:
    print("wsched PlaceWorkspace beside readers of a pending workspace (placements/s):")
    rows(reads, "reads", "placements/s")
    for i in range(len(reads)):
        d = json.loads(open("%s/reads%d.out" % (work, i + 1)).read().strip().splitlines()[-1])
        r = d["pending_reads"]
        print("  round %d: %d readers (view %s, paced %s/s each) read %.1f/s (p50 %.2f p99 %.2f ms), %d fixes in the answer, errors %d"
              % (i + 1, r["readers"], r["view"], r["paced_per_s"] or "unpaced", r["per_s"],
                 r["latency_ms"]["p50"], r["latency_ms"]["p99"], r["fixes"], r["errors"]))
    if place:
        print("  with readers / without: %.2fx (medians)" % (statistics.median(reads) / statistics.median(place)))
if cycle:
    print("wsched place + stop cycles (requests/s, 2 per cycle):")
    rows(cycle, "cycle", "requests/s")
if two:
    print("wsched two replicas, PlaceWorkspace, load split (placements/s, both together):")
    rows(two, "two", "placements/s")
    if place:
        print("  two replicas / one replica: %.2fx (medians)" % (statistics.median(two) / statistics.median(place)))
if three:
    print("wsched three replicas, PlaceWorkspace, load split (placements/s, all together):")
    rows(three, "three", "placements/s")
    if two:
        print("  three replicas / two replicas: %.2fx (medians)" % (statistics.median(three) / statistics.median(two)))
open_out = "%s/open%s.out" % (work, concurrency)
if os.path.exists(open_out):
    d = json.loads(open(open_out).read().strip().splitlines()[-1])
    l = d["place"]["latency_ms"]
    print("wsched open loop, PlaceWorkspace at a fixed rate (70% of the closed-loop median), each call timed from when it was due:")
    print("  offered %.0f/s, placed %.1f/s   place p50 %.2f p90 %.2f p99 %.2f max %.2f ms, %d sent late, errors %d"
          % (d["rate"], d["placements_per_s"], l["p50"], l["p90"], l["p99"], l["max"], d.get("late_sends", 0),
             sum(d["place"]["errors"].values())))
EOF
}

# replicas_phase NAME N: N (2 or 3) fresh replicas, the C clients split
# between them (16 in three: 6, 5, 5). With FORWARD=1 (the default) they run as one
# placer and front doors (--advertise_host, docs/architecture.md): replica
# A starts first and takes the placement lock, the others forward their
# share to A. FORWARD=0: all place.
replicas_phase() {
  local name=$1 n=$2
  TWO_FLAGS=()
  if [ "${FORWARD:-1}" = 1 ]; then TWO_FLAGS=(--advertise_host=127.0.0.1); fi
  start_server "$WORK/server.$name.a.log"
  wait_serving >/dev/null
  start_server_b "$WORK/server.$name.b.log"
  local pids=("$SERVER_PID" "$SERVER_B_PID") servers=("$SERVER" "$SERVER_B") letters=(a b c)
  if [ "$n" = 3 ]; then
    start_server_c "$WORK/server.$name.c.log"
    pids+=("$SERVER_C_PID"); servers+=("$SERVER_C")
  fi
  local srv0=0 srv1=0 pg0 pg1 i pid
  reset_statements
  for pid in "${pids[@]}"; do srv0=$(python3 -c "print($srv0 + $(proc_cpu "$pid"))"); done
  pg0=$(pg_cpu "$PGDATA_DIR")
  start_perf "$name"
  local loads=()
  for i in "${!servers[@]}"; do
    local share=$(( C / n + (i < C % n ? 1 : 0) ))
    "$BIN/wsched-loadgen" --server="${servers[$i]}" --token="$CP_TOKEN" --concurrency="$share" \
      --duration="${S}s" --warmup="${WARMUP}s" --mix="$MIX" --run_id="${name}${letters[$i]}-c$C" \
      >"$WORK/$name.${letters[$i]}.out" &
    loads+=($!)
  done
  for pid in "${loads[@]}"; do wait "$pid"; done
  finish_perf "$name"
  for pid in "${pids[@]}"; do srv1=$(python3 -c "print($srv1 + $(proc_cpu "$pid"))"); done
  pg1=$(pg_cpu "$PGDATA_DIR")
  for pid in "$SERVER_C_PID" "$SERVER_B_PID"; do
    [ -n "$pid" ] || continue
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  done
  SERVER_B_PID=; SERVER_C_PID=
  stop_server
  TWO_FLAGS=()
  print_statements
  local outs=()
  for i in "${!servers[@]}"; do outs+=("$WORK/$name.${letters[$i]}.out"); done
  python3 - "$(python3 -c "print($srv1 - $srv0)")" "$(python3 -c "print($pg1 - $pg0)")" "${outs[@]}" \
    >"$WORK/$name.out" <<'EOF'
import json, sys
runs = [json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[3:]]
placed = sum(d["place"]["placed"] for d in runs)
costed = placed + sum(d["warmup"]["placed"] for d in runs)  # CPU was counted around the warm-up too.
errors = {}
for d in runs:
    for k, v in d["place"]["errors"].items():
        errors[k] = errors.get(k, 0) + v
names = "ABC"
print(" + ".join("replica %s %.1f" % (names[i], d["placements_per_s"]) for i, d in enumerate(runs))
      + " placements/s; p99 " + ", ".join("%s %.2f ms" % (names[i], d["place"]["latency_ms"]["p99"])
                                          for i, d in enumerate(runs))
      + "; CPU per placement: servers %.2f ms, postgres %.2f ms"
      % (float(sys.argv[1]) / max(costed, 1) * 1e3, float(sys.argv[2]) / max(costed, 1) * 1e3))
worst = max(runs, key=lambda d: d["place"]["latency_ms"]["p99"])
print(json.dumps({"placements_per_s": sum(d["placements_per_s"] for d in runs),
                  "place": {"placed": placed, "pending": sum(d["place"]["pending"] for d in runs),
                            "errors": errors, "latency_ms": worst["place"]["latency_ms"]}}))
EOF
  head -1 "$WORK/$name.out"
  check_invariants
}

SUMMARIES=()
NODES_SET=${NODES:-}
for C in $C_VALUES; do
TPS_LIST=()
PLACE_LIST=()
READS_LIST=()
CYCLE_LIST=()
TWO_LIST=()
THREE_LIST=()
say "C=$C: pgbench 1: one-row UPDATE, -c $C -j $C -T $S"
run_pgbench 1
TPS_LIST+=("$TPS")
if [ -z "${NODES_DONE:-}" ] && { ! skipping place || ! skipping cycle || ! skipping two; }; then
  # Room for 4 x the first pgbench tps (at least 500/s) x (S + WARMUP) placements per
  # round; a CPU node holds 7 "standard", a GPU node 8 "gpu-1x". A round
  # warns if anything went pending.
  BASE=${TPS%.*}; [ "${BASE:-0}" -ge 500 ] || BASE=500
  NODES_SET=${NODES_SET:-$(( (BASE * (S + WARMUP) * 4 + 6) / 7 ))}
  say "wsched-server (catalog classes/saas.yaml): registering $NODES_SET fake nodes"
  start_server "$WORK/server.setup.log"
  echo "up / SERVING after $(wait_serving) s (empty store)"
  "${LOADGEN[@]}" --concurrency="$C" --mix="$MIX" --setup_nodes="$NODES_SET" --setup_only --run_id=n \
    | grep '^setup:'
  stop_server
  NODES_DONE=1
fi
for round in $(seq 1 "$ROUNDS"); do
  if ! skipping place; then
    empty_cluster
    say "C=$C round $round: wsched-loadgen PlaceWorkspace, concurrency $C, ${S}s, mix $MIX"
    loadgen_phase "place$round"
    PLACE_LIST+=("$(json "$WORK/place$round.out" 'd["placements_per_s"]')")
    [ "$(json "$WORK/place$round.out" 'd["place"]["pending"]')" = 0 ] \
      || echo "WARNING: some placements went pending (capacity ran out); set NODES higher"
  fi
  if ! skipping reads; then
    empty_cluster
    say "C=$C round $round: PlaceWorkspace, concurrency $C, ${S}s, beside ${READERS:-2} readers of a pending workspace (view ${READ_VIEW:-basic}, ${READ_RATE:-25}/s each)"
    loadgen_phase "reads$round" --pending_readers="${READERS:-2}" \
      --pending_view="${READ_VIEW:-basic}" --pending_reads_per_s="${READ_RATE:-25}"
    READS_LIST+=("$(json "$WORK/reads$round.out" 'd["placements_per_s"]')")
  fi
  if ! skipping cycle; then
    empty_cluster
    say "C=$C round $round: wsched-loadgen place + stop cycles, concurrency $C, ${S}s, mix $MIX"
    loadgen_phase "cycle$round" --stop_after_place
    CYCLE_LIST+=("$(json "$WORK/cycle$round.out" 'd["requests_per_s"]')")
  fi
  if ! skipping two; then
    empty_cluster
    say "C=$C round $round: two replicas, PlaceWorkspace, concurrency $(( (C + 1) / 2 )) on each, ${S}s"
    replicas_phase "two$round" 2
    TWO_LIST+=("$(json "$WORK/two$round.out" 'd["placements_per_s"]')")
  fi
  if ! skipping three; then
    empty_cluster
    say "C=$C round $round: three replicas, PlaceWorkspace, concurrency $C split in three, ${S}s"
    replicas_phase "three$round" 3
    THREE_LIST+=("$(json "$WORK/three$round.out" 'd["placements_per_s"]')")
  fi
  say "C=$C: pgbench $((round + 1)): one-row UPDATE, -c $C -j $C -T $S"
  run_pgbench $((round + 1))
  TPS_LIST+=("$TPS")
done
if ! skipping open && [ "${#PLACE_LIST[@]}" -gt 0 ]; then
  RATE=$(python3 -c "import statistics, sys; print('%.0f' % (0.7 * statistics.median(float(x) for x in sys.argv[1:])))" \
    "${PLACE_LIST[@]}")
  empty_cluster
  say "C=$C: open loop, PlaceWorkspace at $RATE/s (70% of the closed-loop median), up to $((4 * C)) in flight, ${S}s"
  loadgen_phase "open$C" --rate="$RATE" --concurrency=$((4 * C)) --channels="$C"
fi
SUMMARIES+=("$(summarize)")
done

# --- restart with RESTART_WORKSPACES stored workspaces ------------------------
RESTART_TIMES=()
if ! skipping restart; then
  say "restart with $RESTART_WORKSPACES stored workspaces"
  # Templates: one real node of each kind and one real placed workspace of each
  # class (registered and placed through the API above, or now).
  start_server "$WORK/server.seed.log"
  wait_serving >/dev/null
  "${LOADGEN[@]}" --concurrency=2 --requests=20 --mix=gpu-1x=0.5,standard=0.5 --setup_nodes=4 --gpu_node_share=0.5 \
    --run_id=seed >/dev/null
  stop_server
  CPU_WS=$(( RESTART_WORKSPACES * 3 / 4 ))
  GPU_WS=$(( RESTART_WORKSPACES - CPU_WS ))
  T0=$(date +%s.%N)
  "${PSQL[@]}" -d wsched -v cpu_ws="$CPU_WS" -v gpu_ws="$GPU_WS" <<'EOF'
BEGIN;
CREATE TEMP TABLE tmpl_node ON COMMIT DROP AS
  (SELECT 'cpu' AS kind, * FROM nodes WHERE pool = 'general' ORDER BY name LIMIT 1)
  UNION ALL
  (SELECT 'gpu', * FROM nodes WHERE pool = 'gpu-h100' ORDER BY name LIMIT 1);
CREATE TEMP TABLE tmpl_ws ON COMMIT DROP AS
  (SELECT 'cpu' AS kind, * FROM workspaces WHERE class_id = 'standard' AND state = 'placed' LIMIT 1)
  UNION ALL
  (SELECT 'gpu', * FROM workspaces WHERE class_id = 'gpu-1x' AND state = 'placed' LIMIT 1);
DO $$ BEGIN
  IF (SELECT count(*) FROM tmpl_node) <> 2 OR (SELECT count(*) FROM tmpl_ws) <> 2 THEN
    RAISE EXCEPTION 'no template nodes/workspaces';
  END IF;
END $$;
DELETE FROM gpu_holds;
DELETE FROM workspaces;
DELETE FROM nodes;
-- CPU nodes: 7 "standard" each. GPU nodes: 8 "gpu-1x" each, GPU UUIDs
-- rewritten to be unique ("GPU-<node>-<index>").
INSERT INTO nodes (name, pool, info, state, driver_state, driver_detail, driver_verified_kernel,
                   driver_failed_kernel, alloc_cpu_millis, alloc_memory_bytes)
SELECT 'rs-cpu-' || i, t.pool,
       jsonb_set(jsonb_set(t.info, '{name}', to_jsonb('rs-cpu-' || i)),
                 '{provider_id}', to_jsonb('loadtest:///rs-cpu-' || i)),
       t.state, t.driver_state, t.driver_detail, t.driver_verified_kernel, t.driver_failed_kernel,
       t.alloc_cpu_millis, t.alloc_memory_bytes
FROM tmpl_node t, generate_series(0, (:cpu_ws + 6) / 7 - 1) i WHERE t.kind = 'cpu';
INSERT INTO nodes (name, pool, info, state, driver_state, driver_detail, driver_verified_kernel,
                   driver_failed_kernel, alloc_cpu_millis, alloc_memory_bytes)
SELECT 'rs-gpu-' || i, t.pool,
       jsonb_set(jsonb_set(jsonb_set(t.info, '{name}', to_jsonb('rs-gpu-' || i)),
                           '{provider_id}', to_jsonb('loadtest:///rs-gpu-' || i)),
                 '{gpus}', (SELECT jsonb_agg(jsonb_set(g, '{uuid}',
                              to_jsonb('GPU-rs-gpu-' || i || '-' || COALESCE(g->>'index', '0')))
                              ORDER BY o)
                            FROM jsonb_array_elements(t.info->'gpus') WITH ORDINALITY e(g, o))),
       t.state, t.driver_state, t.driver_detail, t.driver_verified_kernel, t.driver_failed_kernel,
       t.alloc_cpu_millis, t.alloc_memory_bytes
FROM tmpl_node t, generate_series(0, (:gpu_ws + 7) / 8 - 1) i WHERE t.kind = 'gpu';
INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, explanation, state,
                        priority, node_name, pool, cpu_millis, memory_bytes, gpu_count, placement,
                        pending_reason, created_at, placed_at)
SELECT 'rs-c' || w, t.org_id, t.project_id, 'user-' || (w % 5000), t.class_id, t.class_source,
       t.explanation, 'placed', 0, 'rs-cpu-' || (w / 7), t.pool, t.cpu_millis, t.memory_bytes, 0,
       t.placement, '', now() - make_interval(secs => w), now() - make_interval(secs => w)
FROM tmpl_ws t, generate_series(0, :cpu_ws - 1) w WHERE t.kind = 'cpu';
INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, explanation, state,
                        priority, node_name, pool, cpu_millis, memory_bytes, gpu_count, placement,
                        pending_reason, created_at, placed_at)
SELECT 'rs-g' || w, t.org_id, t.project_id, 'user-' || (w % 5000), t.class_id, t.class_source,
       t.explanation, 'placed', 0, 'rs-gpu-' || (w / 8), t.pool, t.cpu_millis, t.memory_bytes, 1,
       t.placement, '', now() - make_interval(secs => w), now() - make_interval(secs => w)
FROM tmpl_ws t, generate_series(0, :gpu_ws - 1) w WHERE t.kind = 'gpu';
INSERT INTO gpu_holds (gpu_uuid, node_name, gpu_index, workspace_id)
SELECT 'GPU-rs-gpu-' || (w / 8) || '-' || (w % 8), 'rs-gpu-' || (w / 8), w % 8, 'rs-g' || w
FROM generate_series(0, :gpu_ws - 1) w;
UPDATE nodes n SET held_cpu_millis = s.cpu, held_memory_bytes = s.mem
FROM (SELECT node_name, sum(cpu_millis) AS cpu, sum(memory_bytes) AS mem
      FROM workspaces GROUP BY node_name) s
WHERE n.name = s.node_name;
COMMIT;
VACUUM ANALYZE nodes, workspaces, gpu_holds;
EOF
  echo "bulk insert took $(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$T0" "$(date +%s.%N)") s"
  "${PSQL[@]}" -d wsched -At -F ' ' -c "SELECT 'stored: workspaces', (SELECT count(*) FROM workspaces),
      'placed', (SELECT count(*) FROM workspaces WHERE state = 'placed'),
      'gpu_holds', (SELECT count(*) FROM gpu_holds), 'nodes', (SELECT count(*) FROM nodes)"
  for run in $(seq 1 "$RESTART_RUNS"); do
    start_server "$WORK/server.restart$run.log"
    read -r t_port t <<<"$(wait_serving)"
    RESTART_TIMES+=("$t")
    echo "restart $run: port file after $t_port s, health SERVING after $t s (wsched-server used $(proc_cpu "$SERVER_PID") CPU s so far)"
    if [ "$run" = 1 ]; then
      scrape "$WORK/metrics.restart"
      grep -E '^wsched_(gpus|nodes)\{' "$WORK/metrics.restart" | grep -E 'status="(held|total)"|state="ready"' || true
      echo "holds that did not fit the snapshot: $(grep -c 'stored hold does not fit' "$WORK/server.restart1.log" || true)"
    fi
    stop_server
  done
fi

# --- placement_benchmark (pure engine) ---------------------------------------
if ! skipping decide; then
  say "placement_benchmark: Decide at 100 / 1,000 / 10,000 nodes"
  "$BIN/placement_benchmark" --benchmark_filter='^BM_Decide(Gpu1|Gpu4|Cpu|Gpu8NotNow)/' \
    --benchmark_format=json --benchmark_out="$WORK/decide.json" --benchmark_out_format=json \
    >/dev/null 2>"$WORK/decide.err" || { cat "$WORK/decide.err" >&2; die "placement_benchmark failed"; }
  python3 - "$WORK/decide.json" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
by = {}
for r in runs:
    name, size = r["name"].split("/")[:2]
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[r["time_unit"]]
    by.setdefault(name, {})[int(size)] = (r["real_time"] * scale, r.get("label", ""))
print("%-22s %12s %12s %12s %10s  %s" % ("case", "100 ns", "1k ns", "10k ns", "10k/100", "decision"))
for name, sizes in by.items():
    t = lambda n: sizes.get(n, (float("nan"), ""))[0]
    print("%-22s %12.0f %12.0f %12.0f %9.2fx  %s" % (name, t(100), t(1000), t(10000), t(10000) / t(100), sizes[100][1]))
EOF
fi

# --- summary -------------------------------------------------------------------
for summary in "${SUMMARIES[@]}"; do
  printf "\n%s\n" "$summary"
done
[ -n "${RESTART_TIMES[*]:-}" ] && echo "restart to SERVING (s): ${RESTART_TIMES[*]}"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$INVARIANTS_BROKEN" = 0 ] || die "SQL invariants were violated (see above)"
