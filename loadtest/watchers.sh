#!/usr/bin/env bash
# Many WatchWorkspaces streams on one replica under a placing load, in one
# run: delivery delay, CPU per delivered event, memory per idle watcher,
# and placements/s against the same load without watchers.
#
#   loadtest/watchers.sh                       # 10,000 watchers, D=20: about 2 minutes
#   WATCHERS=500 D=5 loadtest/watchers.sh      # a quick check
#
# One wsched-server on a private PostgreSQL 15 (fsync on) in a temp dir,
# the same fake cluster as soak.sh (wsched-loadgen's NODES nodes, mix MIX).
# For round 1..ROUNDS:
#   a. wsched-loadgen at concurrency C for D seconds (after a WARMUP), no
#      watchers: place + stop cycles as soak.sh runs them (LOAD=cycle, the
#      default: the cluster never fills, so every run meets the same one),
#      or PlaceWorkspace only (LOAD=place: the nodes are registered through
#      the API as the runs need room, which gets slow past a few thousand);
#      placements/s, the server's CPU per placement.
#   b. The server's RSS (VmRSS) just before, then wsched-watch-load opens
#      WATCHERS streams over CHANNELS connections: a fleet's mix by
#      default, MATCHING (3) that see every change, as a control plane's
#      replicas would, AGENTS (every node the load uses) that follow one
#      node each, as node agents would, and the others filtered on a
#      project the load never uses (as most of a fleet's dashboards are
#      idle at any moment). MATCHING=100 AGENTS=0 is the harder run: a
#      hundred streams that each get every change;
#      once all are open and SETTLE seconds have passed, the RSS again:
#      memory per idle watcher = the difference / WATCHERS (round 1's only:
#      later rounds reuse the memory round 1's streams freed).
#   c. The same load with the watchers attached: placements/s; the
#      server's CPU (utime + stime of /proc/PID/stat) over the load and
#      the drain after it; the changes delivered to all the streams (with
#      LOAD=cycle a PLACED and a STOPPED per placement to each stream that
#      sees every change) and the delay of each PLACED change from
#      workspace.placed_at (PostgreSQL's now() in the placing transaction,
#      so it includes that transaction's commit) to its receipt. Then the
#      watchers end.
# and one more a. at the end, so each c has a run without watchers on
# either side (a shared machine drifts; with LOAD=place the cluster fills
# up too): its ratio is against their mean. Then, unless STALLED=0, the
# slow watcher: r. the same load with one stream that sees every change
# and reads; s. the same with a second one that stops reading once open
# (its own connection, small HTTP/2 windows: what it does not read backs
# up into the server's buffer for it); r. again. The placement rate of s
# against the r's around it, the reading stream's delay in s against r,
# and how the server ended the stalled one (expected: RESOURCE_EXHAUSTED,
# WATCH_TOO_SLOW).
#
# CPU per delivered event, two ways: all the server's CPU in c's window /
# the changes delivered, and the marginal cost: (the server's CPU per
# placement in c - in the a's around it) x c's placements / the changes
# delivered. Everything (server, PostgreSQL, load generator, watch tool)
# shares this machine's CPUs: the watch tool's own CPU is printed too.
#
# Targets (the issue's): p99 delivery <= 50 ms, memory per idle watcher <=
# 8 KiB, placements/s with watchers >= 0.9x without.
#
# Env: WATCHERS (10000; N is taken too), MATCHING (3), AGENTS (0..NODES:
#      node-filtered streams; default all of the load's nodes; LOAD=cycle
#      only), STALLED (1: run the slow-watcher phase; 0: skip it), CHANNELS (50),
#      D (20: seconds of each load), WARMUP (1), C (16), ROUNDS (1),
#      MIX (gpu-1x=0.5,standard=0.5), LOAD (cycle or place), NODES (400:
#      LOAD=cycle's nodes), RATE_GUESS (2500, LOAD=place: placements/s the
#      first run's nodes are sized for; later runs are sized from the
#      fastest so far), SETTLE (2: seconds
#      between "all open" and the RSS sample), READY_TIMEOUT (300),
#      BUILD (build), SERVER_FLAGS (extra wsched-server flags, e.g.
#      --watch_buffer=5000), KEEP=1 keeps the temp dir (server log, outputs).
#      Needs wsched-server wschedctl wsched-loadgen wsched-watch-load in
#      BUILD; PostgreSQL 15, python3.
# Exit status: 0 when every target was met, 1 when one was missed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BIN=$BUILD/bin
WATCHERS=${WATCHERS:-${N:-10000}}
MATCHING=${MATCHING:-3}
AGENTS=${AGENTS:-}
STALLED=${STALLED:-1}
CHANNELS=${CHANNELS:-50}
D=${D:-20}
WARMUP=${WARMUP:-1}
C=${C:-16}
ROUNDS=${ROUNDS:-1}
MIX=${MIX:-gpu-1x=0.5,standard=0.5}
LOAD=${LOAD:-cycle}
NODES=${NODES:-400}
RATE_GUESS=${RATE_GUESS:-2500}
SETTLE=${SETTLE:-2}
READY_TIMEOUT=${READY_TIMEOUT:-300}

say() { printf "\n=== [%ss] %s\n" "$SECONDS" "$*"; }
die() { echo "watchers.sh: $*" >&2; exit 1; }
for tool in wsched-server wschedctl wsched-loadgen wsched-watch-load; do
  [ -x "$BIN/$tool" ] || die "$BIN/$tool missing; build it: deploy/local/build.sh wsched-server wschedctl wsched-loadgen wsched-watch-load"
done
for tool in psql python3; do command -v "$tool" >/dev/null || die "$tool not found"; done
[ "$MATCHING" -le "$WATCHERS" ] || MATCHING=$WATCHERS
case "$LOAD" in
  cycle) LOAD_NAME="place + stop cycles" ;;
  place) LOAD_NAME="PlaceWorkspace only" ;;
  *) die "LOAD must be cycle or place" ;;
esac

# Each stream is no file descriptor here (CHANNELS connections carry them
# all), but leave room anyway for the server's and the tool's own.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# shellcheck source=loadtest/lib.sh
. "$ROOT/loadtest/lib.sh"

WORK=$(mktemp -d /tmp/wsched-watchers.XXXXXX)
chmod 755 "$WORK"  # PostgreSQL runs as an unprivileged user when we are root.
SERVER_PID=
WATCH_PID=
cleanup() {
  set +e
  for pid in "$WATCH_PID" "$SERVER_PID"; do
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
  done
  for pid in "$WATCH_PID" "$SERVER_PID"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null
  done
  "$ROOT/deploy/local/pg.sh" stop "$WORK/pgdata" >/dev/null 2>&1
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status"; }
server_alive() {
  kill -0 "$SERVER_PID" 2>/dev/null && return 0
  echo "--- wsched-server exited; the end of its log:" >&2
  tail -40 "$WORK/server.log" >&2
  die "wsched-server exited"
}

say "machine"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  cpus: $(nproc)  kernel: $(uname -r)  fd limit: $(ulimit -n)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "WATCHERS=$WATCHERS MATCHING=$MATCHING AGENTS=${AGENTS:-all} STALLED=$STALLED CHANNELS=$CHANNELS D=${D}s WARMUP=${WARMUP}s C=$C ROUNDS=$ROUNDS LOAD=$LOAD MIX=$MIX"

say "PostgreSQL (fsync on) and wsched-server"
PGPORT=$(free_port)
"$ROOT/deploy/local/pg.sh" start "$WORK/pgdata" "$PGPORT" >/dev/null
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres)
"${PSQL[@]}" -c "CREATE DATABASE wsched"
write_tokens "$WORK/tokens.yaml" watchers
SERVER=127.0.0.1:$(free_port)
METRICS_PORT=$(free_port)
# Fake nodes never heartbeat: keep them from being marked lost mid-run.
# shellcheck disable=SC2086
"$BIN/wsched-server" --listen="$SERVER" \
  --database_url="postgresql://postgres@127.0.0.1:$PGPORT/wsched" \
  --metrics_listen="127.0.0.1:$METRICS_PORT" --catalog="$ROOT/classes/saas.yaml" \
  --auth_tokens_file="$WORK/tokens.yaml" "$SHARED_AGENTS" --node_lost_after=1h \
  ${SERVER_FLAGS:-} >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
wait_healthy "$SERVER" "$SERVER_PID" "$WORK/server.log"
echo "wsched-server pid $SERVER_PID, RSS $(( $(rss_kb) / 1024 )) MB"
LOADGEN=("$BIN/wsched-loadgen" --server="$SERVER" --token="$CP_TOKEN" --agent_token="$AGENT_TOKEN")

# Room: LOAD=cycle registers NODES once. With LOAD=place every placement
# stays, so before each run the
# cluster gets fresh nodes enough for 1.3 x the fastest rate so far (a
# node holds 7 "standard" or 8 "gpu-1x": counted as 7) for the run.
FREE_SLOTS=0
FASTEST=$RATE_GUESS
NODE_BATCH=0
top_up() {
  local want need nodes
  if [ "$LOAD" = cycle ]; then
    [ "$NODE_BATCH" = 0 ] || return 0
    nodes=$NODES
  else
    want=$(python3 -c "print(int($FASTEST * ($D + $WARMUP) * 1.3))")
    need=$((want - FREE_SLOTS))
    [ "$need" -gt 0 ] || return 0
    nodes=$(( (need + 6) / 7 ))
  fi
  NODE_BATCH=$((NODE_BATCH + 1))
  "${LOADGEN[@]}" --setup_only --setup_nodes="$nodes" --mix="$MIX" --concurrency=32 \
    --run_id="nodes$NODE_BATCH" >"$WORK/nodes$NODE_BATCH.out" ||
    { cat "$WORK/nodes$NODE_BATCH.out" >&2; die "registering nodes failed"; }
  sed -n 's/^setup: /nodes: /p' "$WORK/nodes$NODE_BATCH.out"
  FREE_SLOTS=$((FREE_SLOTS + nodes * 7))
}

# load NAME: one wsched-loadgen run; prints its line, records
# NAME.phase (JSON: the loadgen's figures and the server's and
# PostgreSQL's CPU over the run and a one-second drain after it).
load() {
  local name=$1 srv0 pg0 srv1 pg1 extra=()
  [ "$LOAD" = cycle ] && extra=(--stop_after_place)
  server_alive
  srv0=$(proc_cpu "$SERVER_PID"); pg0=$(pg_cpu "$WORK/pgdata")
  "${LOADGEN[@]}" --concurrency="$C" --duration="${D}s" --warmup="${WARMUP}s" --mix="$MIX" \
    --run_id="$name" "${extra[@]}" >"$WORK/$name.out" 2>&1 ||
    { tail -20 "$WORK/$name.out" >&2; server_alive; die "$name: wsched-loadgen failed"; }
  sleep 1  # What the run committed reaches the watchers.
  srv1=$(proc_cpu "$SERVER_PID"); pg1=$(pg_cpu "$WORK/pgdata")
  server_alive
  python3 - "$WORK/$name.out" "$srv0" "$srv1" "$pg0" "$pg1" >"$WORK/$name.phase" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
srv0, srv1, pg0, pg1 = (float(x) for x in sys.argv[2:6])
print(json.dumps({"rate": d["placements_per_s"], "placed": d["place"]["placed"],
                  "costed": d["place"]["placed"] + d["warmup"]["placed"],
                  "pending": d["place"]["pending"], "errors": d["place"]["errors"],
                  "stop_errors": d.get("stop", {}).get("errors", {}),
                  "p50": d["place"]["latency_ms"]["p50"], "p99": d["place"]["latency_ms"]["p99"],
                  "server_cpu": srv1 - srv0, "pg_cpu": pg1 - pg0, "loadgen_cpu": d["client_cpu_s"]}))
EOF
  python3 - "$WORK/$name.phase" "$name" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
errors = sum(p["errors"].values()) + sum(p["stop_errors"].values())
print("%s: %.1f placements/s, place p50 %.2f p99 %.2f ms, errors %d%s; server CPU %.2f ms, "
      "postgres %.2f ms per placement"
      % (sys.argv[2], p["rate"], p["p50"], p["p99"], errors,
         ", %d went PENDING (out of room)" % p["pending"] if p["pending"] else "",
         p["server_cpu"] / max(p["costed"], 1) * 1e3, p["pg_cpu"] / max(p["costed"], 1) * 1e3))
EOF
  FREE_SLOTS=$((FREE_SLOTS - $(json "$WORK/$name.phase" 'd["costed"]')))
  [ "$LOAD" = cycle ] && FREE_SLOTS=$((FREE_SLOTS + $(json "$WORK/$name.phase" 'd["costed"]')))
  FASTEST=$(python3 -c "print(max($FASTEST, $(json "$WORK/$name.phase" 'd["rate"]')))")
}

# watchers_open NAME: starts wsched-watch-load, waits for its "ready" line,
# records the server's RSS before and SETTLE seconds after (NAME.rss).
watchers_open() {
  local name=$1 rss0 rss1 deadline=$((SECONDS + READY_TIMEOUT)) t0=$SECONDS
  server_alive
  rss0=$(rss_kb)
  "$BIN/wsched-watch-load" --server="$SERVER" --token="$CP_TOKEN" --watchers="$WATCHERS" \
    --channels="$CHANNELS" --matching="$MATCHING" --node_filters="$NODE_FILTERS" \
    --duration=0 --run_id="$name" \
    --open_timeout="$((READY_TIMEOUT - 10))s" --progress_every=10s \
    >"$WORK/$name.watch" 2>"$WORK/$name.watch.err" &
  WATCH_PID=$!
  until grep -q '^ready ' "$WORK/$name.watch"; do
    kill -0 "$WATCH_PID" 2>/dev/null ||
      { cat "$WORK/$name.watch" "$WORK/$name.watch.err" >&2; server_alive; die "wsched-watch-load exited"; }
    [ $SECONDS -lt $deadline ] || die "wsched-watch-load not ready after ${READY_TIMEOUT}s"
    sleep 0.1
  done
  grep '^ready ' "$WORK/$name.watch"
  sleep "$SETTLE"
  server_alive
  rss1=$(rss_kb)
  echo "$rss0 $rss1" >"$WORK/$name.rss"
  echo "server RSS $((rss0 / 1024)) MB before, $((rss1 / 1024)) MB with $WATCHERS streams open" \
    "($((SECONDS - t0)) s to open and settle)"
}

# watchers_close NAME: ends wsched-watch-load, which prints its figures.
watchers_close() {
  local name=$1
  kill -TERM "$WATCH_PID" 2>/dev/null || true
  wait "$WATCH_PID" || true
  WATCH_PID=
  grep '^result ' "$WORK/$name.watch" || { cat "$WORK/$name.watch.err" >&2; die "$name: no result from wsched-watch-load"; }
  grep 'streams ended\|clock skew\|still open' "$WORK/$name.watch.err" || true
}

# The node agents' streams: the first AGENTS of the load's nodes.
node_filters() {
  [ "$LOAD" = cycle ] || { NODE_FILTERS=; AGENTS=0; return; }
  NODE_FILTERS=$("${PSQL[@]}" -d wsched -Atc \
    "SELECT string_agg(name, ',' ORDER BY name) FROM (SELECT name FROM nodes ORDER BY name LIMIT ${AGENTS:-100000}) n")
  AGENTS=$(awk -F, '{print NF}' <<<"$NODE_FILTERS")
  [ $((MATCHING + AGENTS)) -le "$WATCHERS" ] || die "MATCHING + AGENTS ($MATCHING + $AGENTS) exceeds WATCHERS"
}

# reader NAME STALLED: one stream that reads and STALLED that stop reading,
# under the load (NAME.phase, NAME.watch).
reader() {
  local name=$1
  "$BIN/wsched-watch-load" --server="$SERVER" --token="$CP_TOKEN" --watchers=1 --matching=1 \
    --stalled="$2" --channels=1 --duration=0 --run_id="$name" --open_timeout="$((READY_TIMEOUT - 10))s" \
    >"$WORK/$name.watch" 2>"$WORK/$name.watch.err" &
  WATCH_PID=$!
  until grep -q '^ready ' "$WORK/$name.watch"; do
    kill -0 "$WATCH_PID" 2>/dev/null ||
      { cat "$WORK/$name.watch" "$WORK/$name.watch.err" >&2; server_alive; die "wsched-watch-load exited"; }
    sleep 0.1
  done
  load "$name"
  watchers_close "$name"
}

for round in $(seq 1 "$ROUNDS"); do
  say "round $round a: $LOAD_NAME without watchers, C=$C, ${D}s"
  top_up
  load "a$round"
  top_up
  [ -n "${NODE_FILTERS+set}" ] || node_filters
  say "round $round b: $WATCHERS watchers ($MATCHING see every change, $AGENTS follow a node each) over $CHANNELS connections"

  watchers_open "w$round"
  say "round $round c: the same load with the watchers attached"
  load "c$round"
  watchers_close "w$round"
done
say "round $((ROUNDS + 1)) a: $LOAD_NAME without watchers (closes round $ROUNDS)"
top_up
load "a$((ROUNDS + 1))"
if [ "$STALLED" = 1 ]; then
  say "slow watcher r: the same load with one stream that reads"
  reader r1 0
  say "slow watcher s: the same load with one stream that reads and one that stops reading"
  reader s 1
  say "slow watcher r: the same load with one stream that reads (closes s)"
  reader r2 0
fi
server_alive

# Whatever the server said about the streams or the load (less its
# start-up warnings about the test tokens, and one line for the commit
# batches it found slow).
SLOW_COMMITS=$(grep -c '"slow commit batch"' "$WORK/server.log" || true)
[ "$SLOW_COMMITS" = 0 ] || echo "server log: $SLOW_COMMITS \"slow commit batch\" warnings"
if grep -iE '"level":"(warning|error)"|too.slow' "$WORK/server.log" |
    grep -vE '"slow commit batch"|tokens file: weak entry|serving plaintext gRPC' >"$WORK/server.warnings"; then
  echo "--- server log, other warnings and errors (last 20 of $(wc -l <"$WORK/server.warnings")):"
  tail -20 "$WORK/server.warnings"
fi

say "summary"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg) (the runs share this machine's $(nproc) CPUs with whatever else runs)"
python3 - "$WORK" "$ROUNDS" "$WATCHERS" "$MATCHING" "$CHANNELS" "$AGENTS" "$STALLED" <<'EOF'
import json, os, statistics, sys
work, rounds, watchers, matching, channels, agents, stalled = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6] or 0), sys.argv[7] == "1"
phase = lambda name: json.load(open("%s/%s.phase" % (work, name)))
def result(name):
    for line in open("%s/%s.watch" % (work, name)):
        if line.startswith("result "):
            return dict(kv.split("=", 1) for kv in line.split()[1:])
    return {}
a = [phase("a%d" % k) for k in range(1, rounds + 2)]
rows = []
for k in range(1, rounds + 1):
    c, w = phase("c%d" % k), result("w%d" % k)
    before, after = a[k - 1], a[k]
    base = (before["rate"] + after["rate"]) / 2
    base_cpu = (before["server_cpu"] + after["server_cpu"]) / max(before["costed"] + after["costed"], 1)
    rss0, rss1 = (int(x) for x in open("%s/w%d.rss" % (work, k)).read().split())
    events = int(w["events_delivered"])
    rows.append(dict(
        k=k, base=base, rate=c["rate"], ratio=c["rate"] / base,
        p50=float(w["delay_p50_ms"]), p99=float(w["delay_p99_ms"]), max=float(w["delay_max_ms"]),
        kib=(rss1 - rss0) / watchers, rss0=rss0, rss1=rss1, events=events,
        placed_events=int(w["placed_events"]), bookmarks=int(w["bookmarks"]),
        cpu_all=c["server_cpu"] / max(events, 1) * 1e6,
        cpu_marginal=(c["server_cpu"] / max(c["costed"], 1) - base_cpu) * c["costed"] / max(events, 1) * 1e6,
        server_cpu=c["server_cpu"], tool_cpu=float(w["client_cpu_s"]), secs=float(w["seconds"]),
        open=int(w["streams_open"]), failed=int(w["streams_failed"]), codes=w["failed_codes"],
        pending=c["pending"] + before["pending"] + after["pending"],
        errors=sum(c["errors"].values()) + sum(c["stop_errors"].values())))
print("watchers %d (%d see every change, %d follow one of the load's nodes, %d filtered to an unused project) over %d connections"
      % (watchers, matching, agents, watchers - matching - agents, channels))
for r in rows:
    print("round %d:" % r["k"])
    print("  placements/s without watchers %.1f (mean of the runs around it), with %.1f: %.3fx"
          % (r["base"], r["rate"], r["ratio"]))
    print("  delivery delay (placed_at to receipt) p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d PLACED changes"
          % (r["p50"], r["p99"], r["max"], r["placed_events"]))
    if r["k"] == 1:
        print("  memory per idle watcher %.2f KiB (server RSS %.1f -> %.1f MB)"
              % (r["kib"], r["rss0"] / 1024, r["rss1"] / 1024))
    else:
        # The allocator keeps what round 1's streams freed and hands it to
        # these: the RSS barely moves, which says nothing per stream.
        print("  memory per idle watcher: round 1's only (server RSS %.1f -> %.1f MB: reuses what round 1's streams freed)"
              % (r["rss0"] / 1024, r["rss1"] / 1024))
    if r["events"]:
        print("  CPU per delivered event: %.2f us (all the server's CPU, %.2f s, / %d changes delivered); "
              "marginal %.2f us (its CPU per placement above the runs without watchers)"
              % (r["cpu_all"], r["server_cpu"], r["events"], r["cpu_marginal"]))
    else:
        print("  CPU per delivered event: n/a (no change delivered); the server's CPU %.2f s" % r["server_cpu"])
    print("  bookmarks %d; streams open at the end %d, failed %d (%s); watch tool CPU %.2f s over %.1f s"
          % (r["bookmarks"], r["open"], r["failed"], r["codes"], r["tool_cpu"], r["secs"]))
    if r["pending"] or r["errors"]:
        print("  WARNING: %d placements went PENDING (out of room), %d load errors" % (r["pending"], r["errors"]))
print("without watchers, every run (placements/s): " + ", ".join("%.1f" % x["rate"] for x in a))
med = lambda key: statistics.median(r[key] for r in rows)
ok = True
def check(name, value, unit, target, good):
    global ok
    ok &= good
    print("%-34s %10.3f %-6s target %-8s %s" % (name, value, unit, target, "met" if good else "MISSED"))
print("--- targets%s" % (" (medians of %d rounds)" % len(rows) if len(rows) > 1 else ""))
if all(r["placed_events"] > 0 for r in rows):
    check("p99 delivery delay", med("p99"), "ms", "<= 50", med("p99") <= 50)
else:
    print("%-34s %10s        (no PLACED change reached a stream: MATCHING=0?)" % ("p99 delivery delay", "n/a"))
    ok = False
check("memory per idle watcher", rows[0]["kib"], "KiB", "<= 8", rows[0]["kib"] <= 8)  # Round 1: a fresh server.
check("placements/s with / without", med("ratio"), "x", ">= 0.9", med("ratio") >= 0.9)
if all(r["events"] > 0 for r in rows):
    print("%-34s %10.3f %-6s (marginal %.3f us)" % ("CPU per delivered event", med("cpu_all"), "us", med("cpu_marginal")))
failed = sum(r["failed"] for r in rows)
print("%-34s %10d" % ("streams failed", failed))
ok &= failed == 0
if stalled:
    # The slow watcher: s against the r's on either side of it; "within
    # noise" = no further below 1 than the runs without it (the a's, the
    # r's) are from each other.
    s, w = phase("s"), result("s")
    r1, r2 = phase("r1"), phase("r2")
    base = (r1["rate"] + r2["rate"]) / 2
    noise = min(min(x["rate"] for x in a) / max(x["rate"] for x in a), min(r1["rate"], r2["rate"]) / max(r1["rate"], r2["rate"]))
    codes = w.get("stalled_codes", "?")
    print("--- slow watcher (one stream that stops reading, beside one that reads)")
    print("placements/s with it %.1f, without it %.1f (the runs with the reading stream only, %.1f and %.1f): %.3fx;"
          " runs without it differ among themselves by up to %.3fx" % (s["rate"], base, r1["rate"], r2["rate"], s["rate"] / base, noise))
    print("the reading stream with it: p50 %s ms, p99 %s ms over %s PLACED changes (without it: p99 %s and %s ms); ended: %s"
          % (w.get("delay_p50_ms"), w.get("delay_p99_ms"), w.get("placed_events"),
             result("r1").get("delay_p99_ms"), result("r2").get("delay_p99_ms"), w.get("failed_codes")))
    print("the stalled stream ended with: %s (expected RESOURCE_EXHAUSTED: WATCH_TOO_SLOW)" % codes)
    check("slow watcher: placements/s ratio", s["rate"] / base, "x", ">= %.3f" % noise, s["rate"] / base >= noise)
    ended = codes.startswith("RESOURCE_EXHAUSTED")
    print("%-34s %10s        %s" % ("slow watcher ended WATCH_TOO_SLOW", codes, "met" if ended else "MISSED"))
    ok &= ended and w.get("failed_codes") == "-"
print("all targets met" if ok else "some targets MISSED")
sys.exit(0 if ok else 1)
EOF
