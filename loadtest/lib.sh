# Shared by the load scripts (source it): ports, tokens, waiting for a
# server, CPU readings. Expects $BIN (the binaries) and die().

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The load generator's fake nodes all share one agent token (AGENT_TOKEN
# below), an entry for every node, which a server takes only with
# --allow_shared_agent_credentials: every server the scripts start gets
# "$SHARED_AGENTS". Real agents bootstrap instead (docs/agent.md).
# shellcheck disable=SC2034  # Used by the scripts that source this file.
SHARED_AGENTS=--allow_shared_agent_credentials

# write_tokens FILE PREFIX: a control-plane and an agent token, random;
# sets CP_TOKEN and AGENT_TOKEN.
write_tokens() {
  CP_TOKEN=cp-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  AGENT_TOKEN=agent-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  cat >"$1" <<TOKENS
tokens:
  - {name: $2-cp, token: $CP_TOKEN, role: control-plane}
  - {name: $2-agent, token: $AGENT_TOKEN, role: agent}
TOKENS
}

# wait_healthy ADDR PID LOG: until `wschedctl health` answers SERVING; dies
# with the server's log if it exits or takes more than two minutes.
wait_healthy() {
  local deadline=$((SECONDS + 120))
  until "$BIN/wschedctl" --server="$1" health >/dev/null 2>&1; do
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; die "wsched-server at $1 exited"; }
    [ $SECONDS -lt $deadline ] || die "wsched-server at $1 not SERVING after 120 s"
    sleep 0.02
  done
}

# CPU seconds (user + system) of a process, and of a PostgreSQL cluster
# (its postmaster and the children alive at the time: pg_cpu DATA_DIR).
proc_cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
pg_cpu() {
  local pm
  pm=$(head -1 "$1/postmaster.pid")
  # shellcheck disable=SC2046
  # A backend may exit between pgrep and cat: not an error.
  { cat "/proc/$pm/stat" $(pgrep -P "$pm" | sed 's|.*|/proc/&/stat|') 2>/dev/null || true; } |
    awk -v hz="$(getconf CLK_TCK)" '{s += $14 + $15} END {print s / hz}'
}

json() {  # json FILE EXPR: evaluates EXPR on the last JSON line of FILE (as d).
  python3 -c 'import json, sys; d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(eval(sys.argv[2]))' "$1" "$2"
}
