#!/usr/bin/env bash
# Follows docs/getting-started.md step by step, on this machine, with local
# processes instead of systemd:
#   getting_started_test.sh WSCHED_SERVER WSCHED_AGENT WSCHEDCTL SOURCE_DIR
#
# The commands are not copied here: they are read from the guide. Every ```sh
# block there carries a marker comment just before it, and this script runs
# the blocks in order in one shell, as a reader would type them:
#   <!-- test: run -->                  run it; a failing command fails the test
#   <!-- test: run, output NAME -->     run it and keep its stdout as NAME
#   <!-- test: retry SECONDS -->        run it until it succeeds, for at most SECONDS
#   <!-- test: skip (REASON) -->        shown to the reader, not run (root, apt, systemd, a GPU)
#   <!-- test: variables (REASON) -->   the reader's settings: not run, but every
#                                       variable it exports must be set by this script
#   <!-- test: same as PATH -->         (any language) must equal the file PATH of the tree
# A ```sh block without a marker fails the test, so nothing is skipped
# silently. The guide's settings (directories, ports) get this run's values:
# its own PostgreSQL cluster (deploy/local/pg.sh, as an unprivileged user when
# run as root) on ${WSCHED_GS_PG_PORT:-55471}, free ports for the server, and
# HOME and the configuration directory inside a temporary directory. The built
# binaries come first on PATH in place of /usr/local/bin.
#
# At the end the workspace the guide placed must have been PLACED on the fake
# node h100-node-1 (tests/sysfs/h100-8gpu) through the agent, with a GPU and
# its CDI spec, and the guide's own stop step must have ended the server and
# the agent.
set -euo pipefail

SERVER_BIN=$(realpath "${1:?usage: getting_started_test.sh WSCHED_SERVER WSCHED_AGENT WSCHEDCTL SOURCE_DIR}")
AGENT_BIN=$(realpath "${2:?wsched-agent binary required}")
CTL_BIN=$(realpath "${3:?wschedctl binary required}")
SRC=$(cd "${4:?source dir required}" && pwd)
GUIDE=$SRC/docs/getting-started.md
PY=${WSCHED_PYTHON:-python3}
GS_PG_PORT=${WSCHED_GS_PG_PORT:-55471}

fail() {
  echo "getting_started_test: FAIL: $*" >&2
  exit 1
}

for tool in psql openssl "$PY"; do
  command -v "$tool" >/dev/null || fail "setup: $tool is not installed (deploy/local/install-deps.sh)"
done
[[ -f $GUIDE ]] || fail "setup: $GUIDE does not exist"

GS_WORK=$(mktemp -d /tmp/wsched-getting-started-XXXXXX)
# The cluster's unprivileged user must reach its data directory inside.
chmod 711 "$GS_WORK"
mkdir -p "$GS_WORK/blocks" "$GS_WORK/logs" "$GS_WORK/out" "$GS_WORK/bin" "$GS_WORK/home"
gs_pids=()
gs_step="setup"
gs_step_log=""
gs_pg_started=0

gs_cleanup() {
  local rc=$?
  trap - EXIT
  set +e
  # Only this shell's own unreaped background jobs: the ones the guide
  # started and did not stop itself.
  local pid left
  left=$(jobs -p)
  for pid in $left; do
    kill -TERM "$pid" 2>/dev/null
  done
  for pid in $left; do
    for _ in $(seq 50); do [[ -n $(jobs -pr | grep -x "$pid") ]] || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  [[ $gs_pg_started -eq 1 ]] && "$SRC/deploy/local/pg.sh" stop "$GS_WORK/pg"
  if [[ $rc -eq 0 ]]; then
    rm -rf "$GS_WORK"
  else
    echo "getting_started_test: FAIL in $gs_step" >&2
    if [[ -n $gs_step_log && -s $gs_step_log ]]; then
      echo "--- output of that step:" >&2
      tail -n 60 "$gs_step_log" >&2
    fi
    local f
    for f in "$GS_WORK/home/wsched-server.log" "$GS_WORK/home/wsched-agent.log"; do
      if [[ -s $f ]]; then
        echo "--- last lines of ${f##*/}:" >&2
        tail -n 20 "$f" >&2
      fi
    done
    echo "getting_started_test: files kept in $GS_WORK" >&2
  fi
  exit "$rc"
}
trap gs_cleanup EXIT
trap 'exit 130' INT TERM

# --- read the guide ---------------------------------------------------------------
"$PY" - "$GUIDE" "$SRC" "$GS_WORK/blocks" <<'PY' || fail "the guide's markers or fixed parts (see above)"
import re, shlex, sys, pathlib

guide, src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
lines = guide.read_text().split("\n")
errors = []
marker_re = re.compile(r"^\s*<!--\s*test:\s*(.*?)\s*-->\s*$")
fence_re = re.compile(r"^(\s*)(```+|~~~+)\s*([\w-]*)\s*$")
blocks = []  # (line, marker, lang, text)
pending = None
i = 0
while i < len(lines):
    line = lines[i]
    m = marker_re.match(line)
    f = fence_re.match(line)
    if m:
        if pending:
            errors.append(f"line {pending[0]}: marker not followed by a code block")
        pending = (i + 1, m.group(1))
    elif f:
        indent, fence, lang = f.group(1), f.group(2), f.group(3)
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^\s*" + re.escape(fence) + r"\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        if i == len(lines):
            errors.append(f"line {len(lines)}: unclosed code block")
        start = (pending[0] if pending else None)
        if lang in ("sh", "bash", "shell", "console") and not pending:
            errors.append(f"line {i - len(body)}: ```{lang} block without a <!-- test: ... --> marker")
        if pending:
            blocks.append((start, pending[1], lang, "\n".join(body) + "\n"))
        pending = None
    elif pending and line.strip():
        errors.append(f"line {pending[0]}: marker not followed by a code block")
        pending = None
    i += 1
if pending:
    errors.append(f"line {pending[0]}: marker not followed by a code block")

index = []  # fields joined by the unit separator: empty fields stay fields
SEP = "\x1f"
variables = []
server_blocks = []
outputs = set()
for n, (line, marker, lang, text) in enumerate(blocks, 1):
    mode, arg = None, ""
    if m := re.fullmatch(r"run", marker):
        mode = "run"
    elif m := re.fullmatch(r"run,\s*output\s+([\w.-]+)", marker):
        mode, arg = "output", m.group(1)
        outputs.add(arg)
    elif m := re.fullmatch(r"retry\s+(\d+)", marker):
        mode, arg = "retry", m.group(1)
    elif m := re.fullmatch(r"skip\s*\((.+)\)", marker):
        mode, arg = "skip", m.group(1)
    elif m := re.fullmatch(r"variables(\s*\(.*\))?", marker):
        mode = "variables"
        for t in text.splitlines():
            t = t.strip()
            if not t or t.startswith("#"):
                continue
            vm = re.match(r"export\s+([A-Za-z_][A-Za-z0-9_]*)=", t)
            if not vm:
                errors.append(f"line {line}: the variables block may only export variables: {t!r}")
            else:
                variables.append(vm.group(1))
    elif m := re.fullmatch(r"same as\s+(\S+)", marker):
        mode, arg = "same", m.group(1)
        path = src / arg
        if not path.is_file():
            errors.append(f"line {line}: {arg} does not exist")
        elif path.read_text().rstrip("\n") != text.rstrip("\n"):
            errors.append(f"line {line}: the block differs from {arg}; copy the file into the guide again")
    else:
        errors.append(f"line {line}: unknown marker <!-- test: {marker} -->")
        continue
    if mode in ("run", "output", "retry", "skip", "variables") and lang not in ("sh", "bash", "shell"):
        errors.append(f"line {line}: <!-- test: {marker} --> must precede a ```sh block")
    if mode in ("run", "output", "retry"):
        (out / f"{n:03d}.sh").write_text(text)
        index.append(SEP.join((f"{n:03d}", mode, arg, str(line))))
        if re.search(r"^\s*wsched-server\s", text, re.M):
            server_blocks.append((line, text))
    elif mode in ("skip", "variables", "same"):
        index.append(SEP.join((f"{n:03d}", mode, arg, str(line))))

if "workspace.json" not in outputs:
    errors.append("no block is marked <!-- test: run, output workspace.json --> (the placed workspace)")

# The server started by hand must take the systemd unit's flags, no more, no less.
def flags(command):
    command = command.replace("\\\n", " ")
    for cmd_line in command.splitlines():
        words = shlex.split(cmd_line, comments=True, posix=True) if cmd_line.strip() else []
        for k, w in enumerate(words):
            if w.endswith("wsched-server"):
                return sorted({x.split("=", 1)[0] for x in words[k + 1:] if x.startswith("--")})
    return None

unit = (src / "deploy/systemd/wsched-server.service").read_text()
exec_start = re.search(r"^ExecStart=((?:.*\\\n)*.*)", unit, re.M)
unit_flags = flags(exec_start.group(1)) if exec_start else None
if len(server_blocks) != 1:
    errors.append(f"expected one run block that starts wsched-server, found {len(server_blocks)}")
elif unit_flags is None:
    errors.append("deploy/systemd/wsched-server.service: no ExecStart with wsched-server")
else:
    guide_flags = flags(server_blocks[0][1])
    if guide_flags != unit_flags:
        errors.append(f"line {server_blocks[0][0]}: wsched-server is started with {guide_flags}, "
                      f"the systemd unit with {unit_flags}")

(out / "index.tsv").write_text("\n".join(index) + "\n")
(out / "variables.txt").write_text("\n".join(variables) + "\n")
for e in errors:
    print(f"docs/getting-started.md: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# --- this run's values for the guide's settings -----------------------------------
free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
ln -s "$SERVER_BIN" "$GS_WORK/bin/wsched-server"
ln -s "$AGENT_BIN" "$GS_WORK/bin/wsched-agent"
ln -s "$CTL_BIN" "$GS_WORK/bin/wschedctl"
export PATH="$GS_WORK/bin:$PATH"
export HOME=$GS_WORK/home
export WSCHED_ETC=$GS_WORK/etc/wsched
export PGPORT=$GS_PG_PORT
# The guide's cluster answers on its Unix socket; this one on 127.0.0.1.
export PGHOST=127.0.0.1
WSCHED_PORT=$(free_port)
WSCHED_METRICS_PORT=$(free_port)
export WSCHED_PORT WSCHED_METRICS_PORT
export WSCHED_SERVER=127.0.0.1:$WSCHED_PORT
unset WSCHED_TOKEN
while read -r name; do
  [[ -z $name ]] && continue
  [[ -n ${!name:-} ]] || fail "setup: the guide's settings export $name, which this test does not set"
done <"$GS_WORK/blocks/variables.txt"

# The guide runs psql as the cluster's superuser: `runuser -u postgres -- psql`.
# As root that works as written (TCP to this cluster, role postgres = the
# system user's name); otherwise the same command runs as this user with the
# role name given to libpq.
if [[ $(id -u) -eq 0 ]]; then
  id postgres >/dev/null 2>&1 || fail "setup: no postgres system user (package postgresql-15)"
else
  runuser() {
    if [[ ${1:-} == -u ]]; then
      local user=$2
      shift 2
      [[ ${1:-} == -- ]] && shift
      PGUSER=$user "$@"
    else
      command runuser "$@"
    fi
  }
fi

# --- PostgreSQL ---------------------------------------------------------------------
if (exec 3<>"/dev/tcp/127.0.0.1/$GS_PG_PORT") 2>/dev/null; then
  fail "setup: port $GS_PG_PORT is in use; set WSCHED_GS_PG_PORT to a free port"
fi
gs_pg_started=1
PG_EXTRA_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
  "$SRC/deploy/local/pg.sh" start "$GS_WORK/pg" "$GS_PG_PORT" >/dev/null ||
  fail "setup: PostgreSQL did not start on port $GS_PG_PORT"

# --- the guide, block by block ------------------------------------------------------
# Background processes the guide starts (server, agent) are tracked so that the
# exit trap stops whatever the guide's own stop step did not.
gs_track_jobs() {
  local pid known
  for pid in $(jobs -p); do
    known=0
    for p in "${gs_pids[@]}"; do [[ $p == "$pid" ]] && known=1; done
    [[ $known -eq 1 ]] || gs_pids+=("$pid")
  done
}
gs_check_alive() {
  local pid running
  running=$(jobs -pr)
  for pid in "${gs_pids[@]}"; do
    grep -qx "$pid" <<<"$running" ||
      fail "$gs_step: a process the guide started in the background (pid $pid) exited"
  done
}

cd "$SRC"
gs_ran=0
# fd 9: the guide's commands keep this shell's stdin.
while IFS=$'\x1f' read -r -u 9 gs_n gs_mode gs_arg gs_line; do
  [[ -z $gs_n ]] && continue
  gs_step="step $gs_n (docs/getting-started.md line $gs_line, $gs_mode)"
  gs_step_log=$GS_WORK/logs/$gs_n.log
  case "$gs_mode" in
    skip)
      echo "step $gs_n (line $gs_line): skipped: $gs_arg"
      continue
      ;;
    variables)
      echo "step $gs_n (line $gs_line): settings: $(tr '\n' ' ' <"$GS_WORK/blocks/variables.txt")"
      continue
      ;;
    same)
      echo "step $gs_n (line $gs_line): shows $gs_arg as it is"
      continue
      ;;
  esac
  gs_code=$(<"$GS_WORK/blocks/$gs_n.sh")
  case "$gs_mode" in
    run)
      eval "$gs_code" >"$gs_step_log" 2>&1
      ;;
    output)
      eval "$gs_code" >"$GS_WORK/out/$gs_arg" 2>"$gs_step_log"
      ;;
    retry)
      gs_deadline=$((SECONDS + gs_arg))
      while :; do
        set +e
        (set -e; eval "$gs_code") >"$gs_step_log" 2>&1
        gs_rc=$?
        set -e
        [[ $gs_rc -eq 0 ]] && break
        gs_check_alive
        [[ $SECONDS -lt $gs_deadline ]] || fail "$gs_step: still failing after ${gs_arg}s"
        sleep 0.2
      done
      ;;
  esac
  gs_track_jobs
  gs_ran=$((gs_ran + 1))
  echo "step $gs_n (line $gs_line): ok"
done 9<"$GS_WORK/blocks/index.tsv"
gs_step="the checks after the guide"
gs_step_log=""

# --- what the guide must have achieved ------------------------------------------------
[[ -s $GS_WORK/out/workspace.json ]] || fail "the guide's workspace get printed nothing"
"$AGENT_BIN" --root="$SRC/tests/sysfs/h100-8gpu" --nvidia_smi= --once --print >"$GS_WORK/node.json" 2>/dev/null ||
  fail "wsched-agent --once --print on tests/sysfs/h100-8gpu failed"
"$PY" - "$GS_WORK/out/workspace.json" "$GS_WORK/node.json" "$HOME/wsched-cdi/wsched-gpu.json" \
  <<'PY' || fail "the placed workspace (see above)"
import json, sys
ws = json.load(open(sys.argv[1]))
node = json.load(open(sys.argv[2]))
gpus = {g["uuid"]: g for g in node["gpus"]}
errors = []
def check(ok, what):
    if not ok:
        errors.append(what)
check(ws.get("state") == "WORKSPACE_STATE_PLACED", f"state is {ws.get('state')}, not WORKSPACE_STATE_PLACED "
      f"(pending reason: {ws.get('pending_reason')!r})")
check(ws.get("node_name") == node["name"] == "h100-node-1", f"node is {ws.get('node_name')!r}, not h100-node-1")
check(ws.get("pool") == "gpu-h100", f"pool is {ws.get('pool')!r}, not gpu-h100")
assigned = ws.get("gpus", [])
check(len(assigned) == 1, f"{len(assigned)} GPUs assigned, not 1")
cdi = ws.get("device_spec", {}).get("cdi")
check(cdi is not None, "no CDI device spec")
if len(assigned) == 1 and cdi is not None:
    uuid = assigned[0]["uuid"]
    check(uuid in gpus, f"GPU {uuid} is not one of the fake node's GPUs")
    check(cdi.get("mode") == "CDI_MODE_WSCHED", f"CDI mode {cdi.get('mode')!r}: the agent wrote no spec")
    check(cdi.get("device_names") == [f"wsched.io/gpu={uuid}", "wsched.io/device=fuse"],
          f"CDI device names {cdi.get('device_names')}")
    check(cdi.get("env") == [f"NVIDIA_VISIBLE_DEVICES={uuid}"], f"env {cdi.get('env')}")
    check(cdi.get("podman_args", [])[:2] == ["--device", f"wsched.io/gpu={uuid}"],
          f"podman args {cdi.get('podman_args')}")
    k8s = cdi.get("kubernetes", {})
    check(k8s.get("node_name") == "h100-node-1", f"Kubernetes node name {k8s.get('node_name')!r}")
    check(k8s.get("annotations", {}).get("cdi.k8s.io/wsched_workspace") == ",".join(cdi.get("device_names", [])),
          f"Kubernetes annotations {k8s.get('annotations')}")
    # The node's spec, as the agent wrote it where the guide said.
    try:
        spec = json.load(open(sys.argv[3]))
    except (OSError, ValueError) as e:
        spec = {}
        errors.append(f"the node's CDI spec {sys.argv[3]}: {e}")
    check(spec.get("kind") == "wsched.io/gpu", f"CDI kind {spec.get('kind')!r}")
    check(bool(spec.get("cdiVersion")), "CDI spec without cdiVersion")
    devices = {d.get("name"): d for d in spec.get("devices", [])}
    check(uuid in devices, f"the node's spec has no device {uuid}")
    if uuid in devices and uuid in gpus:
        paths = [n.get("path") for n in devices[uuid].get("containerEdits", {}).get("deviceNodes", [])]
        want = gpus[uuid]["device"]["path"]
        check(want in paths, f"CDI device nodes {paths} lack {want}")
for e in errors:
    print(f"workspace ws-gpu-1: {e}", file=sys.stderr)
if not errors:
    print(f"ws-gpu-1: PLACED on {ws['node_name']} with {assigned[0]['uuid']} ({cdi['device_names'][0]})")
sys.exit(1 if errors else 0)
PY
[[ -z $(jobs -pr) ]] || fail "processes the guide started still run after its stop step: $(jobs -pr | tr '\n' ' ')"
[[ ${#gs_pids[@]} -ge 2 ]] || fail "the guide started ${#gs_pids[@]} background processes, expected the server and the agent"
echo "getting_started_test: $gs_ran steps of docs/getting-started.md ran; ok"
