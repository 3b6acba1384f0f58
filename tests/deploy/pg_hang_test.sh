#!/usr/bin/env bash
# A PostgreSQL primary that hangs under load (docs/operations.md "Bounded
# waits", docs/architecture.md "Leases"):
#   pg_hang_test.sh WSCHED_SERVER WSCHEDCTL WSCHED_LOADGEN SOURCE_DIR
#
# The primary and synchronous standby of pg_failover_test.sh; two
# wsched-server replicas (placer election: --advertise_host) on one libpq
# multi-host URL with target_session_attrs=read-write, at their default
# bounds; 8 clients placing GPU workspaces, half through each replica. The
# primary is frozen with SIGSTOP (the postmaster, then every backend: their
# sockets stay open and their kernel keeps acknowledging, so keepalives and
# tcp_user_timeout never fire), and the standby promoted HANG_S later, as a
# failover manager would once it declared the primary dead. All along the
# test reads both replicas' /metrics (wsched_health_serving,
# wsched_scaling_leader, wsched_placer; a sample every 100 ms plus the time
# of the two scrapes, about 4 a second here).
#
# Fails on: an acknowledged placement missing on the new primary, or in
# another state; GPU holds inconsistent; an error answer other than
# UNAVAILABLE with a reason and RetryInfo (DATABASE_UNAVAILABLE, or
# PLACER_UNREACHABLE from a front door whose placer is failing over), a
# DEADLINE_EXCEEDED (the clients' deadline, 20 s, is longer than any chain
# of the bounds); the first placement of a call started after the promotion
# coming later than RESUME_BOUND_S (10) after it; a replica whose health does
# not go NOT_SERVING during the hang and SERVING again; a scaling leader or
# placer that does not step down, nobody leading or placing afterwards; and
# any moment, in the samples or the replicas' logs, when both replicas lead
# scaling or both place.
#
# HANG_MODE=drop (ctest pg_hang_drop) cuts the primary off instead: iptables
# rules drop every packet to or from its port (the test's own), so its
# kernel acknowledges nothing either; skipped (77) where iptables cannot
# change the rules (no root, no CAP_NET_ADMIN). The rules carry a comment
# naming this run and go at the end, whatever happens.
#
# Own clusters on ${WSCHED_HANG_PG_PORT:-55491} and the port after it, run by
# the unprivileged user of deploy/local/pg.sh when run as root.
set -euo pipefail

SERVER=$(realpath "${1:?usage: pg_hang_test.sh WSCHED_SERVER WSCHEDCTL WSCHED_LOADGEN SOURCE_DIR}")
CTL=$(realpath "${2:?wschedctl binary required}")
LOADGEN=$(realpath "${3:?wsched-loadgen binary required}")
SRC=$(cd "${4:?source dir required}" && pwd)
# shellcheck source=../support/start_server.sh
source "$SRC/tests/support/start_server.sh"
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=wsched-pg
P1=${WSCHED_HANG_PG_PORT:-55491}
P2=$((P1 + 1))
CLIENTS=${HANG_CLIENTS:-8}
BEFORE_S=${HANG_BEFORE_S:-4}       # placing before the primary hangs
HANG_S=${HANG_S:-4}                # frozen primary, no promotion yet
AFTER_S=${HANG_AFTER_S:-5}         # placing after the first OK on the new primary
RESUME_BOUND_S=${HANG_RESUME_BOUND_S:-10}
MODE=${HANG_MODE:-stop}  # stop: SIGSTOP the primary; drop: drop its packets
CP=control-plane-token-0123456789
AGENT_TOKEN=agent-token-0123456789abcdef
WORK=$(mktemp -d /tmp/wsched-pg-hang-XXXXXX)
chmod 711 "$WORK"
PRIMARY=$WORK/primary
STANDBY=$WORK/standby
PG=postgresql://postgres@127.0.0.1:$P2
DB=wsched
pids=()       # the servers
client_pids=()
sampler_pid=
frozen=()
dropping=0
TAG="wsched-pg-hang-$$"
# drop_rules -I|-D: the two rules that cut the primary's port off.
drop_rules() {
  iptables -w "$1" INPUT -p tcp --dport "$P1" -m comment --comment "$TAG" -j DROP &&
    iptables -w "$1" INPUT -p tcp --sport "$P1" -m comment --comment "$TAG" -j DROP
}

# shellcheck source=../support/pg_sync_pair.sh
source "$SRC/tests/support/pg_sync_pair.sh"

fail() {
  echo "pg_hang_test: FAIL: $*" >&2
  exit 1
}

cleanup() {
  local rc=$?
  trap - EXIT
  set +e
  touch "$WORK/stop"
  for pid in "${client_pids[@]}" $sampler_pid; do wait "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  # The frozen primary runs again only to be stopped: the servers are gone.
  for pid in "${frozen[@]}"; do kill -CONT "$pid" 2>/dev/null; done
  [[ $dropping -eq 1 ]] && drop_rules -D 2>/dev/null
  "$SRC/deploy/local/pg.sh" stop "$STANDBY" 2>/dev/null
  as_pg "$PG_BIN/pg_ctl" -D "$PRIMARY" -m immediate -w stop >/dev/null 2>&1
  if [[ $rc -ne 0 ]]; then
    for f in "$WORK"/a/server.log "$WORK"/b/server.log; do
      [[ -s $f ]] && { echo "--- last lines of $f:" >&2; tail -n 25 "$f" >&2; }
    done
  fi
  PG=postgresql://postgres@127.0.0.1:1 wsched_end_test pg_hang_test "$rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

case $MODE in
  stop) ;;
  drop)
    if ! command -v iptables >/dev/null || ! iptables -w -L INPUT -n >/dev/null 2>&1; then
      echo "pg_hang_test: SKIP: HANG_MODE=drop needs iptables with root and CAP_NET_ADMIN"
      exit 77
    fi
    ;;
  *) fail "setup: HANG_MODE must be stop or drop, not $MODE" ;;
esac
pg_pair_check_setup WSCHED_HANG_PG_PORT curl

# --- a primary and its synchronous standby ------------------------------------------
pg_pair_start

# --- two replicas on the multi-host URL, at their default bounds -----------------------
cat >"$WORK/tokens.yaml" <<EOF
tokens:
  - {name: test-cp, token: $CP, role: control-plane}
  - {name: test-agent, token: $AGENT_TOKEN, role: agent}
EOF
URL="postgresql://postgres@127.0.0.1:$P1,127.0.0.1:$P2/$DB?target_session_attrs=read-write"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
declare -A addr metrics
for r in a b; do
  mkdir -p "$WORK/$r"
  metrics[$r]=127.0.0.1:$(free_port)
  wsched_start_server "$WORK/$r" "$SERVER" --metrics_listen="${metrics[$r]}" --database_url="$URL" \
    --auth_tokens_file="$WORK/tokens.yaml" --catalog="$SRC/classes/saas.yaml" \
    --database_connections=4 --node_lost_after=10m --allow_shared_agent_credentials \
    --advertise_host=127.0.0.1
  pids+=("$server_pid")
  addr[$r]=$ADDR
done
"$LOADGEN" --server="${addr[a]}" --token="$CP" --agent_token="$AGENT_TOKEN" --setup_nodes=150 \
  --gpu_node_share=1 --setup_only --run_id=hang >"$WORK/setup.log" 2>&1 ||
  { cat "$WORK/setup.log" >&2; fail "registering the fake nodes"; }

# --- both replicas' gauges, all along ------------------------------------------------
# One line per sample: TIME then, per replica a and b, serving leader placer
# (- when the scrape failed).
gauge() { awk -v n="$1" '$1 == n {print $2 + 0; found = 1} END {if (!found) print "-"}' "$2"; }
sampler() {
  local r f
  while [[ ! -e $WORK/stop ]]; do
    local line=$EPOCHREALTIME
    for r in a b; do
      f=$WORK/$r/scrape
      if curl -s -m 1 "http://${metrics[$r]}/metrics" >"$f" 2>/dev/null; then
        line+=" $(gauge wsched_health_serving "$f") $(gauge wsched_scaling_leader "$f") $(gauge wsched_placer "$f")"
      else
        line+=" - - -"
      fi
    done
    echo "$line"
    sleep 0.1
  done >"$WORK/samples"
}
sampler &
sampler_pid=$!

# --- placing clients, half through each replica ----------------------------------------
# One line per answer in $WORK/answers.I: START END CODE WORKSPACE STATE REASON RETRY
client() {
  local i=$1 seq=0 rc t0 t1 code state id reason retry server
  local out=$WORK/client.$i.out err=$WORK/client.$i.err
  server=${addr[a]}
  [[ $((i % 2)) -eq 0 ]] && server=${addr[b]}
  while [[ ! -e $WORK/stop ]]; do
    id=hang-$i-$seq
    t0=$EPOCHREALTIME
    rc=0
    WSCHED_TOKEN=$CP "$CTL" --server="$server" --timeout=20s -o json place "$id" --org=o-hang \
      --project=p-hang --user="u-$i" --class=gpu-1x >"$out" 2>"$err" || rc=$?
    t1=$EPOCHREALTIME
    if [[ $rc -eq 0 ]]; then
      state=$(grep -o '"state": *"[A-Z_]*"' "$out" | head -1 | grep -o '[A-Z_]*"$' | tr -d '"')
      echo "$t0 $t1 OK $id ${state:-?} - -"
      seq=$((seq + 1))
    else
      code=$(grep -o 'code [0-9]* [A-Z_]*' "$err" | head -1 | awk '{print $3}')
      reason=$(grep -o 'reason: [A-Z_]*' "$err" | head -1 | awk '{print $2}')
      retry=$(grep -q 'retry after:' "$err" && echo retry || echo -)
      echo "$t0 $t1 ${code:-EXIT$rc} $id - ${reason:--} $retry"
      [[ -n $code ]] || cp "$err" "$WORK/client.$i.odd-error"
    fi
  done >"$WORK/answers.$i"
}
for i in $(seq "$CLIENTS"); do
  client "$i" &
  client_pids+=($!)
done
oks() { cat "$WORK"/answers.* 2>/dev/null | grep -c ' OK ' || true; }
placing() { [[ $(oks) -gt 0 ]]; }
await "first placements" 30 placing
sleep "$BEFORE_S"  # a load phase of fixed length, not a wait for an event
acked_before=$(oks)

# --- the hang --------------------------------------------------------------------------
if [[ $MODE == stop ]]; then
  postmaster=$(head -1 "$PRIMARY/postmaster.pid")
  kill -STOP "$postmaster"
  frozen=("$postmaster")
  for child in $(ps -o pid= --ppid "$postmaster"); do
    kill -STOP "$child" 2>/dev/null && frozen+=("$child")
  done
else
  dropping=1
  drop_rules -I || fail "iptables refused the rules"
fi
t_freeze=$EPOCHREALTIME
sleep "$HANG_S"  # the failover manager's detection time: the primary hangs this long
t_promote=$EPOCHREALTIME
as_pg "$PG_BIN/pg_ctl" -D "$STANDBY" -w -t 60 promote >/dev/null
first_ok_after_promotion() {
  cat "$WORK"/answers.* | awk -v p="$t_promote" '$3 == "OK" && $1 >= p' | grep -q .
}
await "a placement on the new primary" 60 first_ok_after_promotion
sleep "$AFTER_S"
# Both replicas serve again, a replica leads scaling and one places.
sample_now() { tail -1 "$WORK/samples"; }
recovered() {
  sample_now | awk '{exit !($2 == 1 && $5 == 1 && $3 + $6 == 1 && $4 + $7 == 1)}'
}
await "both replicas SERVING, one scaling leader, one placer" 30 recovered
touch "$WORK/stop"
for pid in "${client_pids[@]}" $sampler_pid; do wait "$pid"; done
client_pids=()
sampler_pid=
for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a wsched-server exited during the hang"; done

# --- what the answers and the samples say ---------------------------------------------
cat "$WORK"/answers.* >"$WORK/answers"
awk '$3 == "OK" {sub(/^WORKSPACE_STATE_/, "", $5); print $4 "\t" tolower($5)}' "$WORK/answers" >"$WORK/acked.tsv"
acked=$(wc -l <"$WORK/acked.tsv")
count() { awk "$1" "$WORK/answers" | wc -l; }
db_unavailable=$(count '$3 == "UNAVAILABLE" && $6 == "DATABASE_UNAVAILABLE" && $7 == "retry"')
placer_unreachable=$(count '$3 == "UNAVAILABLE" && $6 == "PLACER_UNREACHABLE" && $7 == "retry"')
bare_unavailable=$(count '$3 == "UNAVAILABLE" && !($6 ~ /^(DATABASE_UNAVAILABLE|PLACER_UNREACHABLE)$/ && $7 == "retry")')
deadline=$(count '$3 == "DEADLINE_EXCEEDED"')
other=$(count '$3 !~ /^(OK|UNAVAILABLE|DEADLINE_EXCEEDED)$/')
longest_error=$(awk '$3 != "OK" {d = $2 - $1; if (d > m) m = d} END {printf "%.2f", m}' "$WORK/answers")
first_ok=$(awk -v p="$t_promote" '$3 == "OK" && $1 >= p {print $2}' "$WORK/answers" | sort -n | head -1)
resume=$(awk -v f="$first_ok" -v p="$t_promote" 'BEGIN {printf "%.2f", f - p}')
# Samples after the freeze: did each replica go NOT_SERVING, did the
# leader and the placer of the freeze step down?
read -r a_down b_down leader_at_freeze placer_at_freeze leader_down placer_down < <(
  awk -v t="$t_freeze" '
    $1 < t {lead = ($3 == 1 ? "a" : $6 == 1 ? "b" : "-"); place = ($4 == 1 ? "a" : $7 == 1 ? "b" : "-")}
    $1 >= t {
      if ($2 == 0) ad = 1
      if ($5 == 0) bd = 1
      if ((lead == "a" && $3 == 0) || (lead == "b" && $6 == 0)) ld = 1
      if ((place == "a" && $4 == 0) || (place == "b" && $7 == 0)) pd = 1
    }
    END {print ad + 0, bd + 0, lead, place, ld + 0, pd + 0}' "$WORK/samples")
both_lead=$(awk '$3 == 1 && $6 == 1' "$WORK/samples" | wc -l)
both_place=$(awk '$4 == 1 && $7 == 1' "$WORK/samples" | wc -l)
samples=$(wc -l <"$WORK/samples")
# The logs: each replica's intervals of leading (placing), from the line
# that says it acquired to the one that says it stopped (or the end); no
# interval of one may overlap one of the other.
intervals() {  # LOG ACQUIRED_MESSAGE LOST_MESSAGE -> "start end" per line (epoch ms)
  python3 - "$@" <<'PY'
import json, sys, datetime
log, on, off = sys.argv[1:4]
start = None
for line in open(log):
    try:
        rec = json.loads(line)
    except ValueError:
        continue
    ms = datetime.datetime.strptime(rec.get("ts", ""), "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000 if rec.get("ts") else None
    msg = rec.get("msg", rec.get("message", ""))
    if msg.startswith(on) and start is None:
        start = ms
    elif msg.startswith(off) and start is not None:
        print(int(start), int(ms)); start = None
if start is not None:
    print(int(start), 10**15)
PY
}
overlaps() {  # ON OFF: intervals of a that overlap intervals of b
  intervals "$WORK/a/server.log" "$1" "$2" >"$WORK/a.iv"
  intervals "$WORK/b/server.log" "$1" "$2" >"$WORK/b.iv"
  awk 'NR == FNR {s[NR] = $1; e[NR] = $2; n = NR; next}
       {for (i = 1; i <= n; i++) if ($1 < e[i] && s[i] < $2) c++} END {print c + 0}' "$WORK/a.iv" "$WORK/b.iv"
}
leader_overlaps=$(overlaps "scaling leadership acquired" "lost scaling leadership")
placer_overlaps=$(overlaps "placement lock acquired" "placement lock given up")
read -r missing wrong_state bad_holds double_held over_full < <(psql -X -qtA -F ' ' \
  -v ON_ERROR_STOP=1 "$PG/$DB" <<SQL
CREATE TEMP TABLE acked (id text PRIMARY KEY, state text);
\copy acked FROM '$WORK/acked.tsv'
SELECT
  (SELECT count(*) FROM acked a LEFT JOIN workspaces w USING (id) WHERE w.id IS NULL),
  (SELECT count(*) FROM acked a JOIN workspaces w USING (id) WHERE w.state <> a.state),
  (SELECT count(*) FROM (SELECT w.id FROM workspaces w LEFT JOIN gpu_holds h ON h.workspace_id = w.id
     WHERE w.state = 'placed' GROUP BY w.id, w.gpu_count
     HAVING count(h.gpu_uuid) <> w.gpu_count) x),
  (SELECT count(*) FROM (SELECT node_name, gpu_index FROM gpu_holds GROUP BY 1, 2
     HAVING count(*) > 1) x),
  (SELECT count(*) FROM (SELECT node_name FROM gpu_holds GROUP BY 1 HAVING count(*) > 8) x);
SQL
)

cat <<EOF
pg_hang_test: $CLIENTS clients on 2 replicas, primary $([[ $MODE == stop ]] && echo "frozen (SIGSTOP)" || echo "cut off (packets dropped)"), standby promoted $(awk -v a="$t_freeze" -v b="$t_promote" 'BEGIN {printf "%.2f", b - a}') s later
  acknowledged placements          $acked ($acked_before before the hang)
  missing / in another state       $missing / $wrong_state
  UNAVAILABLE DATABASE_UNAVAILABLE $db_unavailable (with RetryInfo)
  UNAVAILABLE PLACER_UNREACHABLE   $placer_unreachable (with RetryInfo)
  UNAVAILABLE without them         $bare_unavailable
  DEADLINE_EXCEEDED                $deadline
  other errors                     $other
  longest failed call              $longest_error s
  promotion to first placement     $resume s (bound $RESUME_BOUND_S s)
  NOT_SERVING during the hang      a: $a_down, b: $b_down
  scaling leader at the freeze     $leader_at_freeze, stepped down: $leader_down
  placer at the freeze             $placer_at_freeze, stepped down: $placer_down
  both leading / both placing      $both_lead / $both_place of $samples samples; log overlaps $leader_overlaps / $placer_overlaps
  GPU holds: $bad_holds workspaces off their class count, $double_held GPUs held twice, $over_full nodes over 8
EOF

[[ $missing -eq 0 && $wrong_state -eq 0 ]] || fail "acknowledged placements lost or changed"
[[ $bad_holds -eq 0 && $double_held -eq 0 && $over_full -eq 0 ]] || fail "GPU holds inconsistent"
[[ $bare_unavailable -eq 0 ]] ||
  fail "UNAVAILABLE without the reason or RetryInfo: $(awk '$3 == "UNAVAILABLE" && !($6 ~ /^(DATABASE_UNAVAILABLE|PLACER_UNREACHABLE)$/ && $7 == "retry")' "$WORK/answers" | head -3)"
[[ $deadline -eq 0 && $other -eq 0 ]] ||
  fail "answers other than OK and UNAVAILABLE: $(awk '$3 !~ /^(OK|UNAVAILABLE)$/' "$WORK/answers" | head -3)"
awk -v r="$resume" -v b="$RESUME_BOUND_S" 'BEGIN {exit !(r <= b)}' ||
  fail "placements resumed $resume s after the promotion (bound $RESUME_BOUND_S s)"
[[ $a_down -eq 1 && $b_down -eq 1 ]] || fail "health did not go NOT_SERVING on both replicas during the hang"
[[ $leader_at_freeze != - && $leader_down -eq 1 ]] || fail "the scaling leader did not step down"
[[ $placer_at_freeze != - && $placer_down -eq 1 ]] || fail "the placer did not step down"
[[ $both_lead -eq 0 && $leader_overlaps -eq 0 ]] || fail "both replicas led scaling at once"
[[ $both_place -eq 0 && $placer_overlaps -eq 0 ]] || fail "both replicas placed at once"
[[ $acked_before -gt 0 ]] || fail "no placements before the hang"
echo "pg_hang_test: PASS"
