#!/usr/bin/env bash
# End-to-end test of wschedctl against a real wsched-server and PostgreSQL.
#   cli_test.sh WSCHEDCTL WSCHED_SERVER SOURCE_DIR
# Needs the test PostgreSQL on 127.0.0.1:55433 (the ctest "pg" fixture). When
# wsched-agent was built next to wschedctl, it registers a fake 8-GPU H100
# node (tests/sysfs/h100-8gpu) so a GPU workspace really gets placed;
# without it the GPU workspace stays pending and the node checks are skipped.
# When wsched-loadgen was built there too, it registers and places more than
# one page (1000) of nodes and workspaces, to check the lists page through.
set -euo pipefail

CTL=${1:?usage: cli_test.sh WSCHEDCTL WSCHED_SERVER SOURCE_DIR}
SERVER=${2:?wsched-server binary required}
SRC=${3:?source dir required}
# shellcheck source=support/start_server.sh
source "$SRC/tests/support/start_server.sh"
AGENT=$(dirname "$CTL")/wsched-agent
LOADGEN=$(dirname "$CTL")/wsched-loadgen
PG=postgresql://postgres@127.0.0.1:${WSCHED_TEST_PG_PORT:-55433}
DB=cli_test_$$
WORK=$(mktemp -d /tmp/wsched-cli-test-XXXXXX)

ADMIN=admin-token-0123456789abcdef
CP=control-plane-token-0123456789
OWNER=owner-p42-token-0123456789
AGENT_TOKEN=agent-token-0123456789abcdef

passed=0
failed=0
server_pid=
watch_pid=
watch_all_pid=

cleanup() {
  local rc=$?
  [[ -n $watch_pid ]] && kill "$watch_pid" 2>/dev/null || true
  [[ -n $watch_all_pid ]] && kill "$watch_all_pid" 2>/dev/null || true
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  wsched_end_test cli_test "$rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "FAIL: $1" >&2
  [[ -f $WORK/out ]] && sed 's/^/    | /' "$WORK/out" >&2
  failed=$((failed + 1))
}

# check NAME WANT_RC WANT_TEXT TOKEN ARGS...: runs wschedctl with TOKEN
# (empty = none), checks the exit code and that stdout+stderr contain
# WANT_TEXT (skipped when empty). The output stays in $WORK/out.
check() {
  local name=$1 want_rc=$2 want_text=$3 token=$4
  shift 4
  local rc=0
  WSCHED_TOKEN=$token "$CTL" --server="$ADDR" "$@" >"$WORK/out" 2>&1 || rc=$?
  if [[ $rc -ne $want_rc ]]; then
    fail "$name: exit $rc, want $want_rc (wschedctl $*)"
    return 0
  fi
  if [[ -n $want_text ]] && ! grep -qF -- "$want_text" "$WORK/out"; then
    fail "$name: output lacks \"$want_text\" (wschedctl $*)"
    return 0
  fi
  passed=$((passed + 1))
}

# also NAME TEXT: the last command's output also contains TEXT.
also() {
  if grep -qF -- "$2" "$WORK/out"; then
    passed=$((passed + 1))
  else
    fail "$1: output lacks \"$2\""
  fi
}

# --- database, tokens, server -------------------------------------------------
psql -q -v ON_ERROR_STOP=1 "$PG/postgres" -c "CREATE DATABASE $DB" >/dev/null

cat >"$WORK/tokens.yaml" <<EOF
tokens:
  - {name: test-admin, token: $ADMIN, role: admin}
  - {name: test-cp, token: $CP, role: control-plane}
  - {name: owner-p42, token: $OWNER, role: project-owner, orgs: [o-1], projects: [p-42]}
  - {name: test-agent, token: $AGENT_TOKEN, role: agent}
  - {name: test-actuator, token: actuator-token-0123456789, role: actuator}
EOF

# test-agent speaks for every node (the load generator's fake nodes share it):
# --allow_shared_agent_credentials.
wsched_start_server "$WORK" "$SERVER" --metrics_listen= \
  --database_url="$PG/$DB" --auth_tokens_file="$WORK/tokens.yaml" \
  --catalog="$SRC/classes/saas.yaml" --database_connections=4 --allow_shared_agent_credentials

# --- usage and auth errors ------------------------------------------------------
# Asking for help is not a usage error: the usage goes to stdout, exit 0.
for help in --help -h help; do
  rc=0
  "$CTL" "$help" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [[ $rc -eq 0 ]] && grep -q "^Exit status:" "$WORK/out" && [[ ! -s $WORK/err ]]; then
    passed=$((passed + 1))
  else
    cat "$WORK/err" >>"$WORK/out"
    fail "wschedctl $help prints the usage to stdout and exits 0 (exit $rc)"
  fi
done
check "no command prints the usage and exits 2" 2 "Exit status:" "$ADMIN"
check "unknown command exits 2" 2 "unknown command" "$ADMIN" frobnicate
check "unknown flag exits 2" 2 "unknown flag" "$ADMIN" pools --no_such_flag=1
check "bad --output exits 2" 2 "--output" "$ADMIN" pools --output=xml
check "missing -o value exits 2" 2 "needs a value" "$ADMIN" get pools -o
check "place without --org exits 2" 2 "--org" "$CP" place ws-x --project=p-42 --user=u-1
check "driver-report bad result exits 2" 2 "usage" "$ADMIN" driver-report n1 5.15 maybe
check "no token exits 1 UNAUTHENTICATED" 1 "UNAUTHENTICATED" "" pools
check "wrong role exits 1 PERMISSION_DENIED" 1 "PERMISSION_DENIED" "$CP" driver-work
check "unknown workspace exits 1 NOT_FOUND" 1 "NOT_FOUND" "$CP" workspace get no-such-ws
check "workspace ready --at that is no time exits 2" 2 "RFC 3339" "$CP" workspace ready ws-x \
  --at=yesterday
check "clear-gpu-health without arguments exits 2" 2 "usage: wschedctl clear-gpu-health" \
  "$ADMIN" clear-gpu-health
check "clear-gpu-health with one argument exits 2" 2 "NODE GPU_UUID" "$ADMIN" clear-gpu-health n1
check "clear-gpu-health unknown node exits 1 NOT_FOUND" 1 "NOT_FOUND" "$ADMIN" clear-gpu-health \
  no-such-node GPU-00000000-0000-0000-0000-000000000000
also "clear-gpu-health names the node" "no-such-node"
also "a refusal prints its reason" "reason: NODE_NOT_FOUND (node=no-such-node)"
also "and the resource it looked for" "resource: node no-such-node"
check "clear-gpu-health is admin only" 1 "PERMISSION_DENIED" "$CP" clear-gpu-health \
  no-such-node GPU-00000000-0000-0000-0000-000000000000
also "a missing role is its own reason" "reason: TOKEN_LACKS_ROLE"
also "naming the role it needs" "required_roles=admin"

# help COMMAND and COMMAND --help: that command's usage, on stdout, exit 0.
check "help get" 0 "wschedctl get RESOURCE [NAME]" "" help get
also "help get lists resources" "workspaces"
check "describe --help" 0 "wschedctl describe RESOURCE NAME" "" describe --help
check "place -h names its flags" 0 "--priority=N" "" place -h
check "help simulate gives the real defaults" 0 "node start time (5m, the server's default)" "" \
  help simulate
also "help simulate: no driver install by default" "(0: the node image has the driver)"
check "help unknown command exits 2" 2 "unknown command" "" help frobnicate
# completion: a script bash accepts, naming the commands.
rc=0
"$CTL" completion bash >"$WORK/completion.bash" 2>"$WORK/out" || rc=$?
if [[ $rc -eq 0 ]] && bash -n "$WORK/completion.bash" 2>>"$WORK/out" &&
   grep -q "describe" "$WORK/completion.bash" && grep -q -- "--dry-run" "$WORK/completion.bash"; then
  passed=$((passed + 1))
else
  fail "completion bash prints a valid bash script naming describe and --dry-run (exit $rc)"
fi
check "completion zsh" 0 "#compdef wschedctl" "" completion zsh
check "completion fish exits 2" 2 "bash or zsh" "" completion fish
check "version" 0 "client: wschedctl " "" version
also "version server" "server: version not exposed"
check "version json" 0 '"commit"' "" version -o json

# --- catalog and pools -------------------------------------------------------------
check "health" 0 "SERVING" "" health
check "classes" 0 "gpu-1x" "$ADMIN" classes
check "classes json" 0 '"id": "gpu-1x"' "$ADMIN" classes --output=json
check "pools" 0 "gpu-h100" "$ADMIN" pools
also "pools size range" "0..8"
also "pools gpu model" "H100"
check "pools json" 0 '"gpus_per_node": 8' "$CP" pools --output=json
check "get pools -o json" 0 '"gpus_per_node": 8' "$CP" get pools -o json
check "get pool -ojson" 0 '"id": "gpu-h100"' "$CP" get pool gpu-h100 -ojson
check "get pools -o yaml" 0 "gpus_per_node: 8" "$CP" get pools -o yaml
also "yaml keeps the JSON keys" "- id: gpu-h100"
check "get classes --no-headers" 0 "gpu-1x" "$ADMIN" get classes --no-headers
if grep -q "^CLASS" "$WORK/out"; then fail "get classes --no-headers prints no header"; else passed=$((passed + 1)); fi
check "get cl names one class" 0 "gpu-1x" "$ADMIN" get cl gpu-1x
check "describe class" 0 "id: gpu-1x" "$ADMIN" describe class gpu-1x
check "get unknown pool exits 1 NOT_FOUND" 1 "NOT_FOUND" "$ADMIN" get pool no-such-pool
check "get unknown resource exits 2" 2 "unknown resource" "$ADMIN" get gizmos
check "get projects without NAME exits 2" 2 "needs a NAME" "$ADMIN" get projects
check "delete class exits 2" 2 "only nodes" "$ADMIN" delete class gpu-1x
check "apply --dry-run" 0 "dry run" "$ADMIN" apply -f "$SRC/classes/saas.yaml" --dry-run
check "catalog apply --dry_run (old spelling)" 0 "dry run" "$ADMIN" catalog apply \
  "$SRC/classes/saas.yaml" --dry_run
check "apply without -f exits 2" 2 "apply -f FILE" "$ADMIN" apply

# WSCHED_SERVER: the address without --server; --server still wins.
rc=0
WSCHED_SERVER=$ADDR WSCHED_TOKEN=$ADMIN "$CTL" get pools >"$WORK/out" 2>&1 || rc=$?
if [[ $rc -eq 0 ]] && grep -q gpu-h100 "$WORK/out"; then
  passed=$((passed + 1))
else
  fail "WSCHED_SERVER is the address without --server (exit $rc)"
fi
rc=0
WSCHED_SERVER=127.0.0.1:1 WSCHED_TOKEN=$ADMIN "$CTL" --server="$ADDR" get pools >"$WORK/out" 2>&1 || rc=$?
if [[ $rc -eq 0 ]]; then passed=$((passed + 1)); else fail "--server beats WSCHED_SERVER (exit $rc)"; fi
# WSCHED_TOKEN_FILE and --token-file; the token itself never shows.
printf '%s\n' "$ADMIN" >"$WORK/admin.token"
rc=0
env -u WSCHED_TOKEN WSCHED_TOKEN_FILE="$WORK/admin.token" "$CTL" --server="$ADDR" get pools \
  >"$WORK/out" 2>&1 || rc=$?
if [[ $rc -eq 0 ]] && grep -q gpu-h100 "$WORK/out"; then
  passed=$((passed + 1))
else
  fail "WSCHED_TOKEN_FILE authenticates (exit $rc)"
fi
check "--token-file authenticates" 0 "gpu-h100" "" get pools --token-file="$WORK/admin.token"
check "--token beats WSCHED_TOKEN" 1 "UNAUTHENTICATED" "$ADMIN" get pools --token=not-a-known-token-0123456789
: >"$WORK/empty.token"
check "empty token file exits 2" 2 "is empty" "" get pools --token-file "$WORK/empty.token"
printf 'Bearer-secret-in-a-file-0123456789\n' >"$WORK/wrong.token"
check "wrong token file exits 1" 1 "UNAUTHENTICATED" "" get pools --token-file "$WORK/wrong.token"
if grep -q "secret-in-a-file" "$WORK/out"; then fail "a refused token is not printed"; else passed=$((passed + 1)); fi
# --timeout is each call's deadline: a nanosecond runs out before the server answers.
check "--timeout tiny exits 1 DEADLINE_EXCEEDED" 1 "DEADLINE_EXCEEDED" "$ADMIN" get nodes --timeout=1ns
check "--timeout bad exits 2" 2 "--timeout" "$ADMIN" get nodes --timeout=soon

# --- a node from the real agent -----------------------------------------------------
have_node=false
if [[ -x $AGENT ]]; then
  if "$AGENT" --root="$SRC/tests/sysfs/h100-8gpu" --server="$ADDR" --token="$AGENT_TOKEN" \
      --pool=gpu-h100 --node_name=h100-a --nvidia_smi= --cdi_dir= --once >"$WORK/agent.log" 2>&1; then
    have_node=true
    passed=$((passed + 1))
  else
    cp "$WORK/agent.log" "$WORK/out"
    fail "wsched-agent --once registers h100-a"
  fi
else
  echo "cli_test: $AGENT not built; GPU placement stays pending, node checks skipped"
fi

if $have_node; then
  check "nodes" 0 "h100-a" "$ADMIN" nodes --pool=gpu-h100
  also "nodes state" "ready"
  also "nodes gpus" "0/8"
  check "node get" 0 "0000:" "$ADMIN" node get h100-a
  also "node get uuid" "GPU-"
  also "node get kernel" "5.15.0-91-generic"
  also "node get passthrough" "safe"
  check "get nodes" 0 "h100-a" "$ADMIN" get nodes
  also "get nodes state" "ready"
  check "get no NAME -o wide" 0 "5.15.0-91-generic" "$ADMIN" get no h100-a -o wide
  also "wide header" "KERNEL"
  check "get node -o yaml" 0 "name: h100-a" "$ADMIN" get node h100-a -o yaml
  check "describe node" 0 "0000:" "$ADMIN" describe node h100-a
  also "describe node passthrough" "safe"
  check "node get json" 0 '"pci_address"' "$ADMIN" node get h100-a --output=json
  gpu_uuid=$(grep -o '"uuid": "GPU-[^"]*"' "$WORK/out" | head -1 | cut -d'"' -f4) || gpu_uuid=
  check "pools count node" 0 "ready=1" "$ADMIN" pools
  check "driver-work" 0 "" "$ADMIN" driver-work
  # clear-gpu-health on a GPU that is in service changes nothing and succeeds.
  if [[ -n $gpu_uuid ]]; then
    check "clear-gpu-health healthy GPU" 0 "is in service" "$ADMIN" clear-gpu-health h100-a \
      "$gpu_uuid"
  else
    fail "node get json lists a GPU uuid"
  fi
  check "clear-gpu-health unknown GPU exits 1 NOT_FOUND" 1 "has no GPU" "$ADMIN" \
    clear-gpu-health h100-a GPU-00000000-0000-0000-0000-000000000000
  check "node cordon" 0 "cordoned" "$ADMIN" node cordon h100-a
  check "node uncordon" 0 "ready" "$ADMIN" node uncordon h100-a
fi
check "nodes other pool empty" 0 "no nodes in pool general" "$ADMIN" nodes --pool=general
# get nodes --watch: the listing as a table once SYNCED; Ctrl-C exits 0 and
# names the version to resume from. timeout passes the SIGINT on (a
# background job ignores SIGINT of its own).
WSCHED_TOKEN=$ADMIN timeout -s INT --preserve-status 60 "$CTL" --server="$ADDR" get nodes \
  --watch >"$WORK/watch_nodes" 2>&1 &
watch_pid=$!
for _ in $(seq 100); do grep -q "^CHANGE" "$WORK/watch_nodes" && break; sleep 0.1; done
kill -INT "$watch_pid" 2>/dev/null || true
watch_rc=0
wait "$watch_pid" || watch_rc=$?
watch_pid=
if [[ $watch_rc -eq 0 ]] && grep -q "^CHANGE  *NAME  *POOL  *STATE" "$WORK/watch_nodes" &&
   grep -q "resume with: wschedctl get nodes --watch --resume-version=" "$WORK/watch_nodes"; then
  passed=$((passed + 1))
else
  fail "get nodes --watch lists as a table, and Ctrl-C exits 0 naming the resume version (exit $watch_rc)"
fi

# --- placement ------------------------------------------------------------------------
# get workspaces --watch follows what this section does to ws-gpu-1: the
# listing, SYNCED, then each change, as one JSON line per message. timeout
# passes on the SIGINT (Ctrl-C) that ends it, with exit 0.
WSCHED_TOKEN=$CP timeout -s INT --preserve-status 60 "$CTL" --server="$ADDR" get workspaces \
  --watch -o json >"$WORK/watch_all" 2>&1 &
watch_all_pid=$!
for _ in $(seq 100); do grep -q KIND_SYNCED "$WORK/watch_all" && break; sleep 0.1; done
if $have_node; then
  # A dry run quotes the node and places nothing.
  check "place --dry-run" 0 "CREDITS/MIN" "$CP" place ws-gpu-1 --org=o-1 --project=p-42 \
    --user=u-1 --class=gpu-1x --dry-run
  also "place --dry-run quotes the node" "h100-a"
  also "place --dry-run prints the token" "--quote-token="
  check "a dry run places nothing" 1 "NOT_FOUND" "$CP" workspace get ws-gpu-1
  check "place gpu-1x" 0 "PLACED" "$CP" place ws-gpu-1 --org=o-1 --project=p-42 --user=u-1 \
    --class=gpu-1x
  also "place node" "h100-a"
  also "place CDI name" "nvidia.com/gpu="
  also "place CDI spec" "cdiVersion"
  check "workspace get json" 0 '"WORKSPACE_STATE_PLACED"' "$CP" workspace get ws-gpu-1 --output=json
  check "workspaces placed" 0 "ws-gpu-1" "$ADMIN" workspaces --state=placed
  check "get ws --state" 0 "ws-gpu-1" "$ADMIN" get ws --state placed
  check "describe workspace" 0 "nvidia.com/gpu=" "$CP" describe workspace ws-gpu-1
  check "get workspace -o yaml" 0 "state: WORKSPACE_STATE_PLACED" "$CP" get workspace ws-gpu-1 -o yaml
  check "nodes gpu held" 0 "1/8" "$ADMIN" nodes
  check "workspace ready" 0 "ready at " "$CP" workspace ready ws-gpu-1
  check "workspace ready --at in the future exits 1 naming the field" 1 "ready_time" "$CP" \
    workspace ready ws-gpu-1 --at=2099-01-01T00:00:00Z
  check "describe shows the first ready" 0 "ready:" "$CP" describe workspace ws-gpu-1

  # watch: the current state first, then the stop, then the stream ends.
  WSCHED_TOKEN=$CP timeout 20 "$CTL" --server="$ADDR" watch ws-gpu-1 >"$WORK/watch" 2>&1 &
  watch_pid=$!
  for _ in $(seq 100); do grep -q PLACED "$WORK/watch" && break; sleep 0.1; done
  check "stop" 0 "STOPPED" "$CP" stop ws-gpu-1
  watch_rc=0
  wait "$watch_pid" || watch_rc=$?
  watch_pid=
  cp "$WORK/watch" "$WORK/out"
  if [[ $watch_rc -eq 0 ]] && grep -q PLACED "$WORK/out" && grep -q STOPPED "$WORK/out"; then
    passed=$((passed + 1))
  else
    fail "watch shows PLACED then STOPPED and ends (exit $watch_rc)"
  fi
  check "nodes gpu freed" 0 "0/8" "$ADMIN" nodes
else
  check "place gpu-1x pends without nodes" 0 "PENDING" "$CP" place ws-gpu-1 --org=o-1 \
    --project=p-42 --user=u-1 --class=gpu-1x
  check "workspace get lists the estimate's phases" 0 "node_boot" "$CP" workspace get ws-gpu-1
  check "workspace ready of a queued workspace exits 1" 1 "WORKSPACE_NOT_PLACED" "$CP" \
    workspace ready ws-gpu-1
  check "stop" 0 "STOPPED" "$CP" stop ws-gpu-1
fi
check "stop is idempotent" 0 "STOPPED" "$CP" stop ws-gpu-1
check "workspaces stopped" 0 "ws-gpu-1" "$CP" workspaces --state=stopped
check "workspaces bad state exits 2" 2 "--state" "$CP" workspaces --state=sleeping

for _ in $(seq 100); do grep -q WHAT_STOPPED "$WORK/watch_all" && break; sleep 0.1; done
kill -INT "$watch_all_pid" 2>/dev/null || true
watch_rc=0
wait "$watch_all_pid" || watch_rc=$?
watch_all_pid=
cp "$WORK/watch_all" "$WORK/out"
if [[ $watch_rc -eq 0 ]] && grep -q '"kind":"KIND_SYNCED"' "$WORK/out" &&
   grep -q '"what":"WHAT_STOPPED".*"id":"ws-gpu-1"' "$WORK/out"; then
  passed=$((passed + 1))
else
  fail "get workspaces --watch lists, syncs, shows ws-gpu-1 stopped, and Ctrl-C exits 0 (exit $watch_rc)"
fi
also "an interrupted watch says how to resume" "resume with: wschedctl get workspaces --watch --resume-version="
# Resuming from SYNCED's version replays the changes after it, without a listing.
synced=$(grep -o '"kind":"KIND_SYNCED","version":"[0-9]*"' "$WORK/watch_all" | grep -o '[0-9]*' | tail -1) || synced=
rc=0
WSCHED_TOKEN=$CP timeout -s INT --preserve-status 3 "$CTL" --server="$ADDR" get ws -w \
  --resume-version="${synced:-0}" >"$WORK/out" 2>&1 || rc=$?
if [[ -n $synced && $rc -eq 0 ]] && grep -q "^STOPPED  *ws-gpu-1" "$WORK/out" &&
   ! grep -q "^EXISTING" "$WORK/out"; then
  passed=$((passed + 1))
else
  fail "get ws -w --resume-version=SYNCED prints the changes after it as rows, no listing (exit $rc)"
fi
check "--resume-version without --watch exits 2" 2 "--resume-version needs --watch" "$CP" \
  get workspaces --resume-version=5
check "get pools --watch exits 2" 2 "get workspaces and get nodes only" "$ADMIN" get pools --watch
check "get node NAME --watch exits 2" 2 "--node=NAME" "$ADMIN" get node h100-a --watch

# --- usage (the ledger, docs/billing.md) --------------------------------------------
if $have_node; then
  check "usage list" 0 "ws-gpu-1" "$ADMIN" usage list
  also "usage list end reason" "stopped"
  check "usage list csv" 0 "workspace_id,org_id,project_id,user_id,class_id" "$ADMIN" usage list -o csv
  also "usage list csv row" "ws-gpu-1,o-1,p-42,u-1,gpu-1x,gpu-h100,h100-a,1,"
  check "usage list for the project's owner" 0 "ws-gpu-1" "$OWNER" usage list
  check "usage summary csv" 0 ",p-42,gpu-1x,1," "$ADMIN" usage summary --since=1h --until=now \
    --group-by=project,class -o csv
  check "usage summary by day in Berlin" 0 "+0" "$CP" usage summary --since=48h --until=now \
    --bucket=day --time-zone=Europe/Berlin
fi
check "usage summary needs a range" 2 "--since and --until" "$ADMIN" usage summary
check "usage bad bucket exits 2" 2 "--bucket" "$ADMIN" usage summary --since=1h --until=now \
  --bucket=week
check "usage bad time exits 2" 2 "--until must be" "$ADMIN" usage list --until=tomorrow
check "usage refuses a zone abbreviation" 2 "an Area/Location name" "$ADMIN" usage summary \
  --since=1h --until=now --time-zone=CET
check "usage refuses EST too" 2 "--time-zone: \"EST\" is an abbreviation" "$ADMIN" usage \
  summary --since=1h --until=now --time-zone=EST
check "csv is only for usage" 2 "only wschedctl usage" "$ADMIN" get pools -o csv
check "usage is not for agents" 1 "PERMISSION_DENIED" "$AGENT_TOKEN" usage list
# Spending limits (docs/billing.md "Spending limits"): read-only here.
check "usage limits" 0 "org" "$ADMIN" usage limits --org=o-1
check "usage forecast" 0 "spent GPU-hours" "$ADMIN" usage forecast --org=o-1
also "usage forecast without a limit" "none"
check "usage forecast for the owner's project" 0 "project p-42" "$OWNER" usage forecast \
  --org=o-1 --project=p-42
check "usage forecast needs --org" 2 "--org is required" "$ADMIN" usage forecast

# --- class settings and resolution --------------------------------------------------
check "resolve installation default" 0 "installation default" "$ADMIN" resolve --org=o-1 \
  --project=p-42
also "resolve explanation" "why:"
check "project set-default by owner" 0 "default class:  gpu-1x" "$OWNER" project set-default \
  p-42 --org=o-1 gpu-1x
check "project get" 0 "gpu-1x" "$OWNER" project get p-42
check "owner may not touch other projects" 1 "PERMISSION_DENIED" "$OWNER" project set-default \
  p-99 --org=o-1 small
check "resolve project default" 0 "project default" "$CP" resolve --org=o-1 --project=p-42
also "resolve names the project" "p-42"
check "org set allow-list" 0 "small,standard" "$ADMIN" org set o-1 --allow=small,standard \
  --gpu_quota=4
also "org set quota" "4 GPUs"
check "org get keeps quota" 0 "4 GPUs" "$ADMIN" org get o-1
also "org get allow-list" "small,standard"
check "resolve skips forbidden default" 0 "skipped:" "$ADMIN" resolve --org=o-1 --project=p-42
also "resolve skipped names gpu-1x" "gpu-1x"
check "resolve json" 0 '"explanation"' "$ADMIN" resolve --org=o-1 --project=p-42 --output=json
check "org set nothing exits 2" 2 "nothing to change" "$ADMIN" org set o-1
check "org set clears allow-list" 0 "allowed classes: all" "$ADMIN" org set o-1 --allow=
also "org set keeps quota" "4 GPUs"
# Versions: a write against a version that moved changes nothing and says to
# retry (versions never repeat, so 999999999 is not the stored one).
check "org get shows the version" 0 "version:" "$ADMIN" org get o-1
check "org set against a stale version exits 1" 1 "ABORTED" "$ADMIN" org set o-1 \
  --gpu-quota=9 --expected-version=999999999
also "stale version: retry hint" "Run the command again"
check "stale version changed nothing" 0 "4 GPUs" "$ADMIN" org get o-1
check "org set --force overwrites" 0 "9 GPUs" "$ADMIN" org set o-1 --gpu-quota=9 --force
check "--force with --expected-version exits 2" 2 "contradict" "$ADMIN" org set o-1 \
  --gpu-quota=4 --force --expected-version=3
check "project set-default against a stale version exits 1" 1 "ABORTED" "$OWNER" \
  project set-default p-42 --org=o-1 small --expected-version=999999999
check "node get takes no --expected-version" 2 "cordon, drain and uncordon" "$ADMIN" node get \
  x --expected-version=3
check "resolve unknown class fails" 1 "NOT_FOUND" "$ADMIN" resolve --org=o-1 \
  --project=p-42 --class=no-such-class

# --- scaling (may be UNIMPLEMENTED while being built) ---------------------------------
rc=0
WSCHED_TOKEN=$ADMIN "$CTL" --server="$ADDR" scaling >"$WORK/out" 2>&1 || rc=$?
if { [[ $rc -eq 0 ]] && grep -q "leader:" "$WORK/out"; } ||
   { [[ $rc -eq 1 ]] && grep -q "UNIMPLEMENTED" "$WORK/out"; }; then
  passed=$((passed + 1))
else
  fail "scaling prints the state or a clear UNIMPLEMENTED (exit $rc)"
fi
# Lost nodes that still hold workspaces count in the target: a column of their own.
if [[ $rc -eq 0 ]]; then also "scaling lost nodes column" "LOST"; fi

# --- lists longer than one page ----------------------------------------------------
# wschedctl asks for pages of 1000 (server/cli/all_pages.h); 1001 of each needs
# a second page. The loadgen registers the nodes (in pool general) and places
# one workspace per request, all named after the run id.
if [[ -x $LOADGEN ]]; then
  many=1001
  if "$LOADGEN" --server="$ADDR" --token="$CP" --agent_token="$AGENT_TOKEN" --run_id=paging \
      --setup_nodes=$many --mix=standard=1 --requests=$many --concurrency=8 \
      >"$WORK/out" 2>&1; then
    passed=$((passed + 1))
    check "nodes lists every page" 0 "paging-cpu-$((many - 1))" "$ADMIN" nodes --pool=general
    got=$(grep -c "^paging-cpu-" "$WORK/out" || true)
    if [[ $got -eq $many ]]; then passed=$((passed + 1)); else fail "nodes lists $got of $many nodes"; fi
    check "workspaces lists every page" 0 "paging-w" "$CP" workspaces
    got=$(grep -c "^paging-w" "$WORK/out" || true)
    if [[ $got -eq $many ]]; then
      passed=$((passed + 1))
    else
      fail "workspaces lists $got of $many workspaces"
    fi
  else
    fail "wsched-loadgen registers $many nodes and places $many workspaces"
  fi
else
  echo "cli_test: $LOADGEN not built; the checks of lists longer than one page are skipped"
fi

if $have_node; then
  check "delete node" 0 "removed" "$ADMIN" delete node h100-a
  check "node get after delete" 1 "NOT_FOUND" "$ADMIN" node get h100-a
  check "node remove is the old spelling" 1 "NOT_FOUND" "$ADMIN" node remove h100-a
fi

# --- tokens (local, no server) ------------------------------------------------------
# token create: the token on line 1, its entry on line 2; the entry holds the
# token's SHA-256 as sha256sum prints it; token hash gives the same entry.
created=$("$CTL" token create --role=agent --pools=gpu-h100 --bootstrap --name=h100 2>/dev/null) ||
  created=
token=$(sed -n 1p <<<"$created")
entry=$(sed -n 2p <<<"$created")
want=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
if [[ ${#token} -eq 43 &&
      $entry == "  - {name: h100, sha256: $want, role: agent, pools: [gpu-h100], bootstrap: true}" ]]; then
  passed=$((passed + 1))
else
  fail "token create prints a 43-character token and its sha256 entry (got: $created)"
fi
if [[ $(printf '%s\n' "$token" | "$CTL" token hash --role=agent --pools=gpu-h100 --bootstrap --name=h100) == \
      "$entry" ]]; then
  passed=$((passed + 1))
else
  fail "token hash of the created token prints the same entry"
fi
check "token create needs a known role" 2 "unknown role" "" token create --role=root
check "token create checks scopes like the server" 2 "a project-owner needs orgs or projects" "" \
  token create --role=project-owner
rc=0
printf 'short\n' | "$CTL" token hash --role=admin >"$WORK/out" 2>&1 || rc=$?
if [[ $rc -eq 2 ]] && grep -q "fewer than 22" "$WORK/out"; then
  passed=$((passed + 1))
else
  fail "token hash refuses a short token (exit $rc)"
fi

echo "cli_test: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
