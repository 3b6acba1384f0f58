#!/usr/bin/env bash
# The systemd units (deploy/systemd) as systemd itself reads them:
#   systemd_units_test.sh SOURCE_DIR SERVER_BINARY AGENT_BINARY
# `systemd-analyze verify` (syntax, directives, the ExecStart binary runs:
# /usr/local/bin is pointed at the built binaries), the hardening's exposure
# score (`systemd-analyze security --offline`) held at or below today's, and
# no secret on a command line: the database URL and the agent's bootstrap
# token come from LoadCredential= files, and the agent keeps its node token
# in its own StateDirectory=.
set -euo pipefail
src=${1:?source dir}
server=${2:?wsched-server binary}
agent=${3:?wsched-agent binary}
command -v systemd-analyze >/dev/null || {
  echo "systemd-analyze is missing: run deploy/local/install-deps.sh (package systemd)" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }

for unit in wsched-server wsched-agent; do
  sed -e "s#/usr/local/bin/wsched-server#$server#g" -e "s#/usr/local/bin/wsched-agent#$agent#g" \
    "$src/deploy/systemd/$unit.service" >"$work/$unit.service"
done
out=$(systemd-analyze verify "$work/wsched-server.service" "$work/wsched-agent.service" 2>&1) ||
  fail "systemd-analyze verify: $out"
# The agent with its drop-ins (wsched-agent.service.d beside it is read too).
mkdir -p "$work/with-dropins/wsched-agent.service.d"
cp "$work/wsched-agent.service" "$work/with-dropins/"
for conf in "$src"/deploy/systemd/wsched-agent.service.d/*.conf; do
  sed -e "s#/usr/local/bin/wsched-agent#$agent#g" "$conf" \
    >"$work/with-dropins/wsched-agent.service.d/$(basename "$conf")"
done
dropin_out=$(systemd-analyze verify "$work/with-dropins/wsched-agent.service" 2>&1) ||
  fail "systemd-analyze verify with the drop-ins: $dropin_out"
out+=$'\n'$dropin_out
# verify exits 0 on some warnings; any line about our units is one to fix.
if grep -q "wsched-" <<<"$out"; then fail "systemd-analyze verify warns: $out"; fi

# Exposure 0 (locked down) .. 10 (unprotected); the limits are today's
# scores rounded up, so a dropped option fails here.
check_exposure() {
  local unit=$1 limit=$2 score
  score=$(systemd-analyze security --offline=true "$work/$unit.service" 2>/dev/null |
    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p') || true
  [ -n "$score" ] || { fail "$unit: no exposure score"; return; }
  echo "$unit: exposure $score (limit $limit)"
  awk -v s="$score" -v l="$limit" 'BEGIN { exit !(s <= l) }' || fail "$unit: exposure $score > $limit"
}
check_exposure wsched-server 1.5
check_exposure wsched-agent 3.0

exec_start() { sed -n '/^ExecStart=/,/[^\\]$/p' "$src/deploy/systemd/$1.service"; }
if exec_start wsched-server | grep -q -- '--database_url='; then
  fail "wsched-server.service passes --database_url on the command line"
fi
exec_start wsched-server | grep -q -- '--database_url_file=${CREDENTIALS_DIRECTORY}/database-url' ||
  fail "wsched-server.service does not read the URL from its credential"
grep -q '^LoadCredential=database-url:' "$src/deploy/systemd/wsched-server.service" ||
  fail "wsched-server.service has no LoadCredential=database-url:"
if exec_start wsched-agent | grep -q -- '--token='; then fail "wsched-agent.service passes --token"; fi
grep -q '^LoadCredential=bootstrap-token:' "$src/deploy/systemd/wsched-agent.service" ||
  fail "wsched-agent.service has no LoadCredential=bootstrap-token:"
exec_start wsched-agent | grep -q -- '--bootstrap_token_file=${CREDENTIALS_DIRECTORY}/bootstrap-token' ||
  fail "wsched-agent.service does not read the bootstrap token from its credential"
# The node token outlives restarts, readable by the agent alone.
grep -q '^StateDirectory=wsched-agent$' "$src/deploy/systemd/wsched-agent.service" &&
  grep -q '^StateDirectoryMode=0700$' "$src/deploy/systemd/wsched-agent.service" ||
  fail "wsched-agent.service has no StateDirectory=wsched-agent with StateDirectoryMode=0700"
exec_start wsched-agent | grep -q -- '--state_dir=${STATE_DIRECTORY}' ||
  fail "wsched-agent.service does not keep its state in its StateDirectory"
for unit in wsched-server wsched-agent; do
  for option in ProtectSystem=strict ProtectHome=yes NoNewPrivileges=yes PrivateTmp=yes \
                SystemCallFilter=@system-service RestrictAddressFamilies= CapabilityBoundingSet=; do
    grep -q "^$option" "$src/deploy/systemd/$unit.service" || fail "$unit.service: no $option"
  done
done
exit $failed
