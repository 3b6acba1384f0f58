# Sourced by the shell tests: start a wsched-server for one test.
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
