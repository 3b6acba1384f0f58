#!/usr/bin/env bash
# PostgreSQL failover under load (docs/operations.md "PostgreSQL high
# availability"):
#   pg_failover_test.sh WSCHED_SERVER WSCHEDCTL WSCHED_LOADGEN SOURCE_DIR
#
# A primary with one synchronous standby (synchronous_standby_names =
# standby1, synchronous_commit = on; the standby made by pg_basebackup -R), a
# wsched-server given both in one libpq multi-host URL with
# target_session_attrs=read-write, and 8 clients placing GPU workspaces
# (wschedctl place, a fresh workspace id after each OK, the same id again
# after any error: the retry a caller makes). The primary is killed
# (pg_ctl -m immediate), the standby promoted about 1 s later, and placing
# goes on. Then, on the new primary: every workspace a client got an OK for
# exists in the state the OK reported, and every placed workspace holds
# exactly its class's GPU count with no GPU held twice. Fails on any
# acknowledged placement missing, any INTERNAL answer (or any error other
# than UNAVAILABLE and DEADLINE_EXCEEDED), or a server that does not place
# again (and report SERVING) after the promotion without a restart.
#
# Own clusters on ${WSCHED_HA_PG_PORT:-55481} and the port after it, run by
# the unprivileged user of deploy/local/pg.sh when run as root. fsync is off
# on both (the test kills PostgreSQL, not the machine); what makes an
# acknowledged commit survive here is the synchronous standby.
set -euo pipefail

SERVER=$(realpath "${1:?usage: pg_failover_test.sh WSCHED_SERVER WSCHEDCTL WSCHED_LOADGEN SOURCE_DIR}")
CTL=$(realpath "${2:?wschedctl binary required}")
LOADGEN=$(realpath "${3:?wsched-loadgen binary required}")
SRC=$(cd "${4:?source dir required}" && pwd)
# shellcheck source=../support/start_server.sh
source "$SRC/tests/support/start_server.sh"
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=wsched-pg
P1=${WSCHED_HA_PG_PORT:-55481}
P2=$((P1 + 1))
CLIENTS=${HA_CLIENTS:-8}
BEFORE_KILL_S=${HA_BEFORE_KILL_S:-4}  # placing before the primary dies
OUTAGE_S=${HA_OUTAGE_S:-1}            # no primary: from the kill to the promotion
AFTER_S=${HA_AFTER_S:-4}              # placing after the first OK on the new primary
CP=control-plane-token-0123456789
AGENT_TOKEN=agent-token-0123456789abcdef
WORK=$(mktemp -d /tmp/wsched-pg-failover-XXXXXX)
# The clusters' unprivileged user must reach its data directories inside.
chmod 711 "$WORK"
PRIMARY=$WORK/primary
STANDBY=$WORK/standby
# wsched_end_test drops $DB on $PG: the new primary, where the data is checked.
PG=postgresql://postgres@127.0.0.1:$P2
DB=wsched
server_pid=
client_pids=()

# shellcheck source=../support/pg_sync_pair.sh
source "$SRC/tests/support/pg_sync_pair.sh"

fail() {
  echo "pg_failover_test: FAIL: $*" >&2
  exit 1
}

cleanup() {
  local rc=$?
  trap - EXIT
  set +e
  touch "$WORK/stop"
  for pid in "${client_pids[@]}"; do wait "$pid" 2>/dev/null; done
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  "$SRC/deploy/local/pg.sh" stop "$STANDBY" 2>/dev/null
  "$SRC/deploy/local/pg.sh" stop "$PRIMARY" 2>/dev/null
  if [[ $rc -ne 0 ]]; then
    for f in "$PRIMARY/server.log" "$STANDBY/server.log"; do
      [[ -s $f ]] && { echo "--- last lines of $f:" >&2; tail -n 15 "$f" >&2; }
    done
  fi
  # The clusters go with $WORK: nothing to drop.
  PG=postgresql://postgres@127.0.0.1:1 wsched_end_test pg_failover_test "$rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pg_pair_check_setup WSCHED_HA_PG_PORT

# --- a primary and its synchronous standby ------------------------------------------
pg_pair_start

# --- wsched on the multi-host URL -----------------------------------------------------
cat >"$WORK/tokens.yaml" <<EOF
tokens:
  - {name: test-cp, token: $CP, role: control-plane}
  - {name: test-agent, token: $AGENT_TOKEN, role: agent}
EOF
URL="postgresql://postgres@127.0.0.1:$P1,127.0.0.1:$P2/$DB?target_session_attrs=read-write&connect_timeout=2"
wsched_start_server "$WORK" "$SERVER" --metrics_listen= --database_url="$URL" \
  --auth_tokens_file="$WORK/tokens.yaml" --catalog="$SRC/classes/saas.yaml" \
  --database_connections=4 --node_lost_after=10m --allow_shared_agent_credentials
# 150 fake 8-GPU nodes: more GPUs than the clients place in the run.
"$LOADGEN" --server="$ADDR" --token="$CP" --agent_token="$AGENT_TOKEN" --setup_nodes=150 \
  --gpu_node_share=1 --setup_only --run_id=ha >"$WORK/setup.log" 2>&1 ||
  { cat "$WORK/setup.log" >&2; fail "registering the fake nodes"; }

# --- placing clients --------------------------------------------------------------------
# One line per answer in $WORK/answers.I: START END CODE WORKSPACE STATE
# (times from $EPOCHREALTIME). An OK moves on to a new id; an error retries
# the same id, as a caller retrying UNAVAILABLE does.
client() {
  local i=$1 seq=0 rc t0 t1 code state id
  local out=$WORK/client.$i.out err=$WORK/client.$i.err
  while [[ ! -e $WORK/stop ]]; do
    id=ha-$i-$seq
    t0=$EPOCHREALTIME
    rc=0
    WSCHED_TOKEN=$CP "$CTL" --server="$ADDR" --timeout=15s -o json place "$id" --org=o-ha \
      --project=p-ha --user="u-$i" --class=gpu-1x >"$out" 2>"$err" || rc=$?
    t1=$EPOCHREALTIME
    if [[ $rc -eq 0 ]]; then
      state=$(grep -o '"state": *"[A-Z_]*"' "$out" | head -1 | grep -o '[A-Z_]*"$' | tr -d '"')
      echo "$t0 $t1 OK $id ${state:-?}"
      seq=$((seq + 1))
    else
      code=$(grep -o 'code [0-9]* [A-Z_]*' "$err" | head -1 | awk '{print $3}')
      echo "$t0 $t1 ${code:-EXIT$rc} $id -"
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
sleep "$BEFORE_KILL_S"  # a load phase of fixed length, not a wait for an event
acked_before_kill=$(oks)

# --- the failover ------------------------------------------------------------------------
as_pg "$PG_BIN/pg_ctl" -D "$PRIMARY" -m immediate -w stop >/dev/null
t_kill=$EPOCHREALTIME  # the primary is gone once pg_ctl returns
sleep "$OUTAGE_S"  # the outage itself: no primary for this long
t_promote=$EPOCHREALTIME
as_pg "$PG_BIN/pg_ctl" -D "$STANDBY" -w -t 60 promote >/dev/null
# The first OK for a call started after the kill: served by the new primary.
first_ok_after_kill() {
  cat "$WORK"/answers.* | awk -v k="$t_kill" '$3 == "OK" && $1 >= k' | grep -q .
}
await "a placement on the new primary without a server restart" 60 first_ok_after_kill
sleep "$AFTER_S"  # placing on the new primary for a while
touch "$WORK/stop"
for pid in "${client_pids[@]}"; do wait "$pid"; done
client_pids=()
kill -0 "$server_pid" 2>/dev/null || fail "wsched-server exited during the failover"
healthy() { "$CTL" --server="$ADDR" health | grep -q SERVING; }
await "health SERVING after the promotion (change feed and pool reconnected)" 30 healthy

# --- what the new primary holds ---------------------------------------------------------
cat "$WORK"/answers.* >"$WORK/answers"
awk '$3 == "OK" {sub(/^WORKSPACE_STATE_/, "", $5); print $4 "\t" tolower($5)}' "$WORK/answers" >"$WORK/acked.tsv"
acked=$(wc -l <"$WORK/acked.tsv")
unavailable=$(awk '$3 == "UNAVAILABLE"' "$WORK/answers" | wc -l)
internal=$(awk '$3 == "INTERNAL"' "$WORK/answers" | wc -l)
deadline=$(awk '$3 == "DEADLINE_EXCEEDED"' "$WORK/answers" | wc -l)
# Anything else (a refusal, an answer without a gRPC code) is not a failover's.
other=$(awk '$3 !~ /^(OK|UNAVAILABLE|INTERNAL|DEADLINE_EXCEEDED)$/' "$WORK/answers" | wc -l)
retried_ok=$(awk '$3 == "OK" && $1 >= k' k="$t_kill" "$WORK/answers" | wc -l)
ok_p50=$(awk '$3 == "OK" {print $2 - $1}' "$WORK/answers" | sort -n |
  awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
first_ok=$(awk -v k="$t_kill" '$3 == "OK" && $1 >= k {print $2}' "$WORK/answers" | sort -n | head -1)
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

awk -v kill="$t_kill" -v promote="$t_promote" -v first="$first_ok" \
  -v acked="$acked" -v before="$acked_before_kill" -v after="$retried_ok" \
  -v missing="$missing" -v wrong="$wrong_state" -v unavail="$unavailable" -v internal="$internal" \
  -v other="$other" -v dl="$deadline" -v p50="$ok_p50" -v holds="$bad_holds" -v dbl="$double_held" -v full="$over_full" -v c="$CLIENTS" 'BEGIN {
  printf "pg_failover_test: %d clients, primary killed (immediate), standby promoted %.2f s later\n", c, promote - kill
  printf "  acknowledged placements      %6d  (%d before the kill, %d after)\n", acked, before, after
  printf "  missing on the new primary   %6d  (and %d in another state than acknowledged)\n", missing, wrong
  printf "  UNAVAILABLE answers          %6d\n", unavail
  printf "  INTERNAL answers             %6d\n", internal
  printf "  DEADLINE_EXCEEDED answers    %6d  (retried like UNAVAILABLE)\n", dl
  printf "  other errors                 %6d\n", other
  printf "  promotion to first placement %6.2f s  (a placing call takes %.2f s, median)\n", first - promote, p50
  printf "  GPU holds: %d workspaces off their class count, %d GPUs held twice, %d nodes over 8\n", holds, dbl, full
}'

[[ $missing -eq 0 && $wrong_state -eq 0 ]] || fail "acknowledged placements lost or changed"
[[ $internal -eq 0 ]] || fail "INTERNAL answers: $(awk '$3 == "INTERNAL"' "$WORK/answers" | head -3)"
[[ $other -eq 0 ]] || fail "unexpected answers: $(awk '$3 !~ /^(OK|UNAVAILABLE|DEADLINE_EXCEEDED)$/' "$WORK/answers" | head -3)"
[[ $bad_holds -eq 0 && $double_held -eq 0 && $over_full -eq 0 ]] || fail "GPU holds inconsistent"
[[ $acked_before_kill -gt 0 && $retried_ok -gt 0 ]] || fail "no placements on one side of the failover"
echo "pg_failover_test: PASS"
