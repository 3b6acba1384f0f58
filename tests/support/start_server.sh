# Sourced by the shell tests: start a wsched-server for one test, and end the test.
#
# wsched_start_server WORK SERVER [FLAGS...]
#   Starts SERVER in the background on 127.0.0.1 with a port it picks itself
#   (--listen=127.0.0.1:0 --port_file=WORK/port) and FLAGS, its log in
#   WORK/server.log; waits until the port file is complete (it ends in a
#   newline once the server serves); sets server_pid and ADDR (host:port).
#   Exits the test when the server dies at start or serves no port in 30 s.
wsched_start_server() {
  local work=$1 server=$2
  shift 2
  "$server" --listen=127.0.0.1:0 --port_file="$work/port" "$@" >"$work/server.log" 2>&1 &
  server_pid=$!
  local port=
  for _ in $(seq 300); do
    if [[ -s $work/port ]] && [[ $(tail -c1 "$work/port" | od -An -c | tr -d ' ') == '\n' ]]; then
      port=$(tr -d '\n' <"$work/port")
      break
    fi
    kill -0 "$server_pid" 2>/dev/null || { echo "wsched-server exited at start" >&2; exit 1; }
    sleep 0.1
  done
  [[ -n $port ]] || { echo "wsched-server wrote no port file in 30s" >&2; exit 1; }
  ADDR=127.0.0.1:$port
}

# wsched_end_test NAME RC
#   The common end of a shell test (call it from its EXIT trap, after
#   stopping what it started): drops the test's database ($DB on $PG) and
#   removes $WORK when the test passed or was skipped (RC 0 or 77); else
#   keeps $WORK for a look and shows the end of its server log.
wsched_end_test() {
  local name=$1 rc=$2
  psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  if [[ $rc -eq 0 || $rc -eq 77 ]]; then
    rm -rf "$WORK"
  else
    echo "$name: logs kept in $WORK" >&2
    [[ -f $WORK/server.log ]] && tail -30 "$WORK/server.log" >&2
  fi
}
