#!/usr/bin/env python3
"""The cluster face's example command, deploy/actuators/driver-install-kubernetes-job.sh.

    driver_install_job_test.py SOURCE_DIR

Rendering (--render) for sample installer-contract environments, each Job
put through the kubectl the project installs (v1.30, deploy/local/install-deps.sh;
$WSCHED_KUBECTL names another) with `kubectl create --dry-run=client -o yaml -f -`.
Client dry run needs no cluster but does need API discovery to map the
kind (with no server, kubectl stops at "unable to recognize"): the test
answers it from a stub API server on 127.0.0.1 that serves only the
discovery documents for batch/v1 Jobs and records every request, so the
test can check kubectl sent nothing but discovery GETs. The stub serves no
OpenAPI schema, so kubectl runs with --validate=false: its own schema check
does not run. What kubectl prints back is checked field by field (node
pinning, tolerations, privilege, host network, env, mounts, deadline, TTL,
backoff) and against the field names the Kubernetes API has at each level
used (a misspelt field, which kubectl without its schema would let
through, fails here).

Running: the script with a stand-in kubectl on PATH that plays a Job that
completes or fails, checking the exit status, the log passed through with
its cache line repeated last, the Job deleted before and after, the dry run
calling no kubectl, and refusals of a missing or bad environment.
"""
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import yaml

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
SCRIPT = os.path.join(SRC, "deploy/actuators/driver-install-kubernetes-job.sh")
INSTALL = "deploy/local/install-deps.sh"
KUBECTL_MINOR = "v1.30."
sys.dont_write_bytecode = True

failures, passes = [], 0


def check(ok, what):
    global passes
    if ok:
        passes += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def find_kubectl():
    for cand in (os.environ.get("WSCHED_KUBECTL"), "/usr/local/bin/kubectl", shutil.which("kubectl")):
        if cand and os.access(cand, os.X_OK):
            r = subprocess.run([cand, "version", "--client"], capture_output=True, text=True)
            if f"Client Version: {KUBECTL_MINOR}" in r.stdout:
                return cand
    return None


# --- the stub API server: discovery of batch/v1 Jobs, nothing else ------------------------

DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": "batch", "versions": [{"groupVersion": "batch/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": "batch/v1", "version": "v1"}}]},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": []},
    "/apis/batch/v1": {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "batch/v1",
                       "resources": [{"name": "jobs", "singularName": "job", "namespaced": True,
                                      "kind": "Job",
                                      "verbs": ["create", "delete", "get", "list", "patch", "update",
                                                "watch"]}]},
}
REQUESTS = []


class Stub(http.server.BaseHTTPRequestHandler):
    def answer(self):
        path = self.path.split("?")[0]
        REQUESTS.append((self.command, path))
        body = DISCOVERY.get(path) if self.command == "GET" else None
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer

    def log_message(self, *args):
        pass


# --- the Kubernetes field names at each level the Job uses --------------------------------

FIELDS = {
    "Job": {"apiVersion", "kind", "metadata", "spec", "status"},
    "ObjectMeta": {"name", "namespace", "labels", "annotations", "creationTimestamp", "generateName"},
    "JobSpec": {"activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished", "template",
                "completions", "parallelism", "selector", "manualSelector", "suspend",
                "podFailurePolicy", "completionMode", "backoffLimitPerIndex", "maxFailedIndexes",
                "podReplacementPolicy"},
    "PodTemplateSpec": {"metadata", "spec"},
    "PodSpec": {"restartPolicy", "affinity", "tolerations", "hostNetwork", "hostPID", "hostIPC",
                "dnsPolicy", "automountServiceAccountToken", "enableServiceLinks",
                "priorityClassName", "imagePullSecrets", "containers", "initContainers", "volumes",
                "nodeName", "nodeSelector", "serviceAccountName", "securityContext",
                "terminationGracePeriodSeconds", "resources"},
    "Affinity": {"nodeAffinity", "podAffinity", "podAntiAffinity"},
    "NodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution",
                     "preferredDuringSchedulingIgnoredDuringExecution"},
    "NodeSelector": {"nodeSelectorTerms"},
    "NodeSelectorTerm": {"matchExpressions", "matchFields"},
    "NodeSelectorRequirement": {"key", "operator", "values"},
    "Toleration": {"key", "operator", "value", "effect", "tolerationSeconds"},
    "Container": {"name", "image", "imagePullPolicy", "securityContext", "env", "volumeMounts",
                  "command", "args", "resources", "workingDir"},
    "SecurityContext": {"privileged", "allowPrivilegeEscalation", "capabilities", "runAsUser",
                        "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem", "seccompProfile"},
    "EnvVar": {"name", "value", "valueFrom"},
    "VolumeMount": {"name", "mountPath", "readOnly", "subPath", "mountPropagation"},
    "Volume": {"name", "hostPath", "persistentVolumeClaim", "emptyDir", "secret", "configMap"},
    "HostPathVolumeSource": {"path", "type"},
    "PersistentVolumeClaimVolumeSource": {"claimName", "readOnly"},
    "LocalObjectReference": {"name"},
}
HOST_PATH_TYPES = {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice",
                   "BlockDevice"}


def known_fields(job):
    """Every key of the Job is a field of the Kubernetes type at that place."""
    bad = []

    def keys(obj, kind, where):
        if not isinstance(obj, dict):
            bad.append(f"{where}: not an object")
            return
        for k in obj:
            if k not in FIELDS[kind]:
                bad.append(f"{where}.{k} is no field of {kind}")

    keys(job, "Job", "")
    keys(job.get("metadata", {}), "ObjectMeta", ".metadata")
    spec = job.get("spec", {})
    keys(spec, "JobSpec", ".spec")
    tpl = spec.get("template", {})
    keys(tpl, "PodTemplateSpec", ".spec.template")
    keys(tpl.get("metadata", {}), "ObjectMeta", ".spec.template.metadata")
    pod = tpl.get("spec", {})
    keys(pod, "PodSpec", ".spec.template.spec")
    aff = pod.get("affinity", {})
    keys(aff, "Affinity", ".affinity")
    keys(aff.get("nodeAffinity", {}), "NodeAffinity", ".affinity.nodeAffinity")
    req = aff.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
    keys(req, "NodeSelector", ".affinity.nodeAffinity.required...")
    for t in req.get("nodeSelectorTerms", []):
        keys(t, "NodeSelectorTerm", ".nodeSelectorTerms[]")
        for r in t.get("matchFields", []) + t.get("matchExpressions", []):
            keys(r, "NodeSelectorRequirement", ".nodeSelectorTerms[].match*[]")
    for t in pod.get("tolerations", []):
        keys(t, "Toleration", ".tolerations[]")
    for s in pod.get("imagePullSecrets", []):
        keys(s, "LocalObjectReference", ".imagePullSecrets[]")
    for c in pod.get("containers", []):
        keys(c, "Container", ".containers[]")
        keys(c.get("securityContext", {}), "SecurityContext", ".containers[].securityContext")
        for e in c.get("env", []):
            keys(e, "EnvVar", ".containers[].env[]")
            if not isinstance(e.get("value", ""), str):
                bad.append(f"env {e.get('name')}: value is not a string")
        for m in c.get("volumeMounts", []):
            keys(m, "VolumeMount", ".containers[].volumeMounts[]")
    for v in pod.get("volumes", []):
        keys(v, "Volume", ".volumes[]")
        if "hostPath" in v:
            keys(v["hostPath"], "HostPathVolumeSource", ".volumes[].hostPath")
            if v["hostPath"].get("type", "") not in HOST_PATH_TYPES:
                bad.append(f"volume {v.get('name')}: hostPath type {v['hostPath'].get('type')}")
        if "persistentVolumeClaim" in v:
            keys(v["persistentVolumeClaim"], "PersistentVolumeClaimVolumeSource", ".volumes[].pvc")
    return bad


# --- rendering -----------------------------------------------------------------------------

CONTRACT = {
    "WSCHED_NODE": "gpu-l4-7.europe-west4-a.c.example.internal",
    "WSCHED_KERNEL": "6.1.0-18-amd64",
    "WSCHED_OS": "debian12",
    "WSCHED_OS_ID": "debian",
    "WSCHED_OS_VERSION": "12",
    "WSCHED_DRIVER_VERSION": "550.54.15",
    "WSCHED_IMAGE": "registry.example.com/nvidia/driver:550-6.1.0-18-amd64-debian12",
    "WSCHED_DRIVER_CACHE": "/var/cache/wsched/driver",
    "WSCHED_TIMEOUT_SECONDS": "1800",
}


def script_env(extra, base=CONTRACT, path=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WSCHED_")}
    env.update(base)
    env.update(extra)
    env = {k: v for k, v in env.items() if v is not None}
    if path:
        env["PATH"] = path + ":" + env.get("PATH", "/usr/bin:/bin")
    return env


def render(extra):
    r = subprocess.run(["bash", SCRIPT, "--render"], capture_output=True, text=True, env=script_env(extra))
    return r.returncode, r.stdout, r.stderr


def dry_run_create(kubectl, kubeconfig, home, text):
    before = len(REQUESTS)
    r = subprocess.run([kubectl, "create", "--dry-run=client", "--validate=false", "-o", "yaml", "-f", "-"],
                       input=text, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, KUBECONFIG=kubeconfig, HOME=home))
    return r.returncode, r.stdout, r.stderr, REQUESTS[before:]


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def mounts_of(pod):
    """mountPath -> volume source ({hostPath: ...} or {persistentVolumeClaim: ...})."""
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    (c,) = pod["containers"]
    out = {}
    for m in c.get("volumeMounts", []):
        v = dict(vols.get(m["name"], {}))
        v.pop("name", None)
        out[m["mountPath"]] = v
    return out


def check_job(label, job, extra):
    env_in = dict(CONTRACT, **extra)
    node = env_in["WSCHED_NODE"]
    timeout = int(env_in.get("WSCHED_TIMEOUT_SECONDS") or 1800)
    deadline = timeout - min(60, timeout // 4)
    where = f"[{label}]"
    bad = known_fields(job)
    check(not bad, f"{where} fields the Kubernetes API does not have: {bad}")
    check(job.get("apiVersion") == "batch/v1" and job.get("kind") == "Job", f"{where} a batch/v1 Job")
    name = job["metadata"]["name"]
    check(len(name) <= 63 and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name) is not None,
          f"{where} the Job's name {name!r} is a DNS label (the job-name label holds it)")
    check(job["metadata"]["namespace"] == env_in.get("WSCHED_K8S_NAMESPACE", "wsched"), f"{where} namespace")
    check(job["metadata"]["annotations"].get("wsched.io/node") == node, f"{where} node annotation")
    spec = job["spec"]
    check(spec.get("backoffLimit") == 0, f"{where} backoffLimit 0 (wsched retries)")
    check(spec.get("activeDeadlineSeconds") == deadline,
          f"{where} activeDeadlineSeconds {spec.get('activeDeadlineSeconds')}, want {deadline} (timeout {timeout})")
    check(spec.get("ttlSecondsAfterFinished") == int(env_in.get("WSCHED_K8S_TTL_SECONDS", 3600)),
          f"{where} ttlSecondsAfterFinished")
    pod = spec["template"]["spec"]
    check(pod.get("restartPolicy") == "Never", f"{where} restartPolicy Never")
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    check(terms == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}],
          f"{where} pinned to exactly node {node}: {terms}")
    check({"operator": "Exists"} in pod.get("tolerations", []), f"{where} tolerates the GPU node's taints")
    check(pod.get("hostNetwork") is True and pod.get("dnsPolicy") == "ClusterFirstWithHostNet",
          f"{where} on the host's network")
    check(not pod.get("hostPID") and not pod.get("hostIPC"), f"{where} no host PID or IPC namespace")
    check(pod.get("automountServiceAccountToken") is False, f"{where} no service account token")
    check(len(pod["containers"]) == 1, f"{where} one container")
    c = pod["containers"][0]
    check(c.get("image") == env_in["WSCHED_IMAGE"], f"{where} image")
    check(c.get("securityContext") == {"privileged": True}, f"{where} privileged")
    env = env_of(c)
    cache = env_in.get("WSCHED_DRIVER_CACHE", "")
    pvc = env_in.get("WSCHED_K8S_CACHE_PVC")
    want_cache = cache if "://" in cache else ("/var/cache/wsched-driver" if (cache or pvc) else "")
    for var in ("WSCHED_NODE", "WSCHED_KERNEL", "WSCHED_OS", "WSCHED_OS_ID", "WSCHED_OS_VERSION",
                "WSCHED_DRIVER_VERSION", "WSCHED_IMAGE"):
        check(env.get(var) == env_in[var], f"{where} env {var}={env.get(var)!r}, want {env_in[var]!r}")
    check(env.get("WSCHED_DRIVER_CACHE") == want_cache,
          f"{where} env WSCHED_DRIVER_CACHE={env.get('WSCHED_DRIVER_CACHE')!r}, want {want_cache!r}")
    check(env.get("WSCHED_TIMEOUT_SECONDS") == str(deadline), f"{where} the installer's own timeout")
    for var, value in env_in.items():
        if var.startswith("WSCHED_NVIDIA_"):
            check(env.get(var) == value, f"{where} {var} passed on")
    check(not [v for v in env if v.startswith("WSCHED_K8S_")], f"{where} the script's own settings leak")
    mounts = mounts_of(pod)
    check(mounts.get("/lib/modules") == {"hostPath": {"path": "/lib/modules", "type": "Directory"}},
          f"{where} the host's /lib/modules: {mounts.get('/lib/modules')}")
    check(mounts.get("/usr/src") == {"hostPath": {"path": "/usr/src", "type": "Directory"}},
          f"{where} the host's /usr/src: {mounts.get('/usr/src')}")
    if want_cache == "/var/cache/wsched-driver":
        want = ({"persistentVolumeClaim": {"claimName": pvc}} if pvc else
                {"hostPath": {"path": cache, "type": "DirectoryOrCreate"}})
        check(mounts.get(want_cache) == want, f"{where} the cache: {mounts.get(want_cache)}, want {want}")
    else:
        check("/var/cache/wsched-driver" not in mounts, f"{where} a cache mount without a cache directory")
    extra_paths = [p for p in env_in.get("WSCHED_K8S_HOST_PATHS", "/lib/firmware,/usr/local/nvidia").split(",") if p]
    for p in extra_paths:
        check(mounts.get(p) == {"hostPath": {"path": p, "type": "DirectoryOrCreate"}}, f"{where} host path {p}")
    check(set(mounts) == {"/lib/modules", "/usr/src", *extra_paths} | ({want_cache} if want_cache.startswith("/") else set()),
          f"{where} mounts {sorted(mounts)}")
    check(not any(m.get("readOnly") for m in c.get("volumeMounts", [])), f"{where} every mount read-write")
    if env_in.get("WSCHED_K8S_PRIORITY_CLASS"):
        check(pod.get("priorityClassName") == env_in["WSCHED_K8S_PRIORITY_CLASS"], f"{where} priorityClassName")
    if env_in.get("WSCHED_K8S_PULL_SECRET"):
        check(pod.get("imagePullSecrets") == [{"name": env_in["WSCHED_K8S_PULL_SECRET"]}], f"{where} pull secret")
    return name


CASES = [
    ("host-cache", {"WSCHED_NVIDIA_INSTALLER_URL": "https://mirror.example.com/nvidia/{version}/NVIDIA-Linux-x86_64-{version}.run",
                    "WSCHED_NVIDIA_INSTALLER_SHA256": "ab" * 32}),
    ("pvc-cache", {"WSCHED_K8S_CACHE_PVC": "driver-cache", "WSCHED_K8S_NAMESPACE": "gpu-drivers",
                   "WSCHED_K8S_PRIORITY_CLASS": "system-node-critical", "WSCHED_K8S_PULL_SECRET": "regcred",
                   "WSCHED_K8S_TTL_SECONDS": "600"}),
    ("s3-cache", {"WSCHED_DRIVER_CACHE": "s3://drivers/wsched", "WSCHED_TIMEOUT_SECONDS": "120",
                  "WSCHED_K8S_HOST_PATHS": ""}),
    ("no-cache", {"WSCHED_DRIVER_CACHE": "", "WSCHED_TIMEOUT_SECONDS": "40",
                  "WSCHED_K8S_HOST_PATHS": "/opt/nvidia"}),
    ("long-node", {"WSCHED_NODE": "ip-10-20-30-40.eu-central-1.compute.internal-" + "x" * 80 + ".Example"}),
    ("quoting", {"WSCHED_NODE": "node-q", "WSCHED_NVIDIA_INSTALLER_ARGS": 'a "quoted" \\ value: {x}, [y] #z'}),
]


def check_rendering(kubectl, kubeconfig, home):
    names = {}
    for label, extra in CASES:
        rc, out, err = render(extra)
        check(rc == 0, f"[{label}] --render: exit {rc}: {err}")
        if rc:
            continue
        rc, printed, err, requests = dry_run_create(kubectl, kubeconfig, home, out)
        check(rc == 0, f"[{label}] kubectl create --dry-run=client: exit {rc}: {err}")
        check(all(m == "GET" and p in DISCOVERY for m, p in requests) and requests,
              f"[{label}] kubectl sent more than discovery GETs: {requests}")
        if rc:
            continue
        job = yaml.safe_load(printed)
        names[label] = check_job(label, job, extra)
        # The rendering and kubectl's reading of it agree (nothing dropped).
        check(yaml.safe_load(out)["spec"] == job["spec"], f"[{label}] kubectl read another spec than rendered")
        print(f"driver_install_job_test: [{label}] Job {names[label]} checked")
    check(names.get("host-cache") != names.get("long-node"), "two nodes share one Job name")
    # The same node always gets the same Job (a leftover is replaced).
    rc, again, _ = render(CASES[0][1])
    check(rc == 0 and yaml.safe_load(again)["metadata"]["name"] == names.get("host-cache"), "Job name is stable")
    for label, extra, message in (
            ("no-node", {"WSCHED_NODE": None}, "WSCHED_NODE is not set"),
            ("no-image", {"WSCHED_IMAGE": ""}, "WSCHED_IMAGE is not set"),
            ("bad-timeout", {"WSCHED_TIMEOUT_SECONDS": "30m"}, "is not a number of seconds"),
            ("relative-cache", {"WSCHED_DRIVER_CACHE": "cache"}, "neither an absolute path nor a URL"),
            ("newline", {"WSCHED_KERNEL": "6.1\nevil: true"}, "WSCHED_KERNEL holds a control character"),
    ):
        rc, out, err = render(extra)
        check(rc != 0 and message in err and "kind: Job" not in out,
              f"[{label}] must be refused with {message!r}: exit {rc}, {err.strip()}")


# --- running, with a stand-in kubectl ------------------------------------------------------

FAKE_KUBECTL = r"""#!/bin/bash
# Plays a Job: FAKE_OUTCOME=complete|failed|hang. Records each call.
echo "$*" >>"$FAKE_DIR/calls"
# The condition is met: end only once both waits have started, as a real
# Job's condition takes longer than starting two kubectl processes (else the
# script may stop the other wait before it has recorded its call).
settle_and_exit() {
  for _ in $(seq 50); do
    [[ $(grep -c ' wait job/' "$FAKE_DIR/calls") -ge 2 ]] && exit 0
    sleep 0.1
  done
  exit 0
}
args=("$@")
[[ ${args[0]} == --namespace ]] && args=("${args[@]:2}")
case "${args[0]}" in
  delete) rm -f "$FAKE_DIR/job.yaml"; exit 0 ;;
  create) cat >"$FAKE_DIR/job.yaml"; echo "job.batch/x created"; exit 0 ;;
  wait)
    for a in "${args[@]}"; do
      case $a in
        --for=condition=complete) [[ $FAKE_OUTCOME == complete ]] && settle_and_exit ;;
        --for=condition=failed) [[ $FAKE_OUTCOME == failed ]] && settle_and_exit ;;
        --timeout=*) t=${a#--timeout=}; t=${t%s} ;;
      esac
    done
    # Killed by the script once the other wait ends: the sleep goes too.
    trap 'kill $! 2>/dev/null; exit 143' TERM
    sleep "$t" & wait $!
    echo "error: timed out waiting for the condition" >&2; exit 1 ;;
  get)
    if [[ ${args[1]} == job ]]; then
      [[ $FAKE_OUTCOME == complete ]] && printf 'Complete\t\t\n'
      [[ $FAKE_OUTCOME == failed ]] && printf 'Failed\tDeadlineExceeded\tJob was active longer than specified deadline\n'
      exit 0
    fi
    echo "pod x-abcde: Failed  Error"; exit 0 ;;
  logs)
    echo "wsched-driver-install: node n: driver 550.54.15"
    echo "wsched-driver-cache: hit"
    for i in $(seq 1 200); do echo "install line $i"; done
    [[ $FAKE_OUTCOME == failed ]] && echo "wsched-driver-install: error: modprobe nvidia failed"
    exit 0 ;;
esac
exit 3
"""


def run_script(work, outcome, extra=None, timeout=60):
    calls = os.path.join(work, "calls")
    if os.path.exists(calls):
        os.remove(calls)
    env = script_env(dict({"FAKE_DIR": work, "FAKE_OUTCOME": outcome, "WSCHED_K8S_NAMESPACE": "wsched"},
                          **(extra or {})), path=os.path.join(work, "bin"))
    r = subprocess.run(["bash", SCRIPT], capture_output=True, text=True, env=env, timeout=timeout)
    lines = open(calls).read().splitlines() if os.path.exists(calls) else []
    return r, lines


def check_running(work):
    os.makedirs(os.path.join(work, "bin"))
    path = os.path.join(work, "bin", "kubectl")
    with open(path, "w") as f:
        f.write(FAKE_KUBECTL)
    os.chmod(path, 0o755)
    _, out, _ = render({"WSCHED_K8S_NAMESPACE": "wsched"})
    job = yaml.safe_load(out)["metadata"]["name"]

    r, calls = run_script(work, "complete")
    out = r.stdout
    check(r.returncode == 0, f"[complete] exit {r.returncode}: {r.stderr}")
    check("install line 200" in out and "wsched-driver-install: node n: driver 550.54.15" in out,
          "[complete] the Job's log is printed")
    check(out.rstrip().splitlines()[-1] == "wsched-driver-cache: hit",
          f"[complete] the cache line is repeated last: {out.rstrip().splitlines()[-1:]}")
    verbs = [c.split()[2] for c in calls]
    check(verbs[:2] == ["delete", "create"] and verbs[-1] == "delete" and "logs" in verbs,
          f"[complete] delete, create, wait, logs, delete: {verbs}")
    check(all(c.startswith("--namespace wsched ") for c in calls), f"[complete] namespace on every call: {calls}")
    check(any(f"wait job/{job} --for=condition=complete --timeout=1770s" in c for c in calls) and
          any(f"wait job/{job} --for=condition=failed --timeout=1770s" in c for c in calls),
          f"[complete] waits for complete or failed: {calls}")
    check(f"delete job {job} --ignore-not-found --wait=false" in calls[-1], f"[complete] Job deleted: {calls[-1]}")
    check(f"Job {job} succeeded on node {CONTRACT['WSCHED_NODE']}" in out, "[complete] says it succeeded")

    r, calls = run_script(work, "failed")
    check(r.returncode == 1, f"[failed] exit {r.returncode}, want 1")
    check("failed on node" in r.stdout and "DeadlineExceeded" in r.stdout and
          "modprobe nvidia failed" in r.stdout, f"[failed] says why: {r.stdout[-400:]}")
    check("pod x-abcde: Failed" in r.stdout, "[failed] the pod's state is shown")
    check(r.stdout.rstrip().splitlines()[-1] == "wsched-driver-cache: hit", "[failed] cache line last")
    check(calls[-1].split()[2] == "delete", "[failed] Job deleted")

    r, calls = run_script(work, "complete", {"WSCHED_K8S_KEEP_JOB": "1"})
    check(r.returncode == 0 and [c.split()[2] for c in calls].count("delete") == 1,
          f"[keep] WSCHED_K8S_KEEP_JOB=1 leaves the finished Job: {calls}")

    # The wait gives up (the script's own bound): a failure saying so.
    r, calls = run_script(work, "hang", {"WSCHED_TIMEOUT_SECONDS": "8"})
    check(r.returncode == 1 and "did not finish within" in r.stdout, f"[hang] exit {r.returncode}: {r.stdout[-300:]}")

    r, calls = run_script(work, "complete", {"WSCHED_DRY_RUN": "1"})
    check(r.returncode == 0 and not calls, f"[dry-run] kubectl called: {calls}")
    check(f"kubectl --namespace wsched create -f -" in r.stdout and
          f"kubectl --namespace wsched wait job/{job} --for=condition=complete --timeout=1770s" in r.stdout,
          f"[dry-run] prints the commands: {r.stdout}")

    r, calls = run_script(work, "complete", {"WSCHED_DRIVER_VERSION": None})
    check(r.returncode == 2 and not calls and "WSCHED_DRIVER_VERSION is not set" in r.stderr,
          f"[no-env] refused without calling kubectl: {r.returncode} {r.stderr}")


def main():
    kubectl = find_kubectl()
    check(kubectl is not None, f"no kubectl {KUBECTL_MINOR}x ($WSCHED_KUBECTL, /usr/local/bin/kubectl, PATH): "
                               f"run {INSTALL}")
    check(subprocess.run(["bash", "-n", SCRIPT]).returncode == 0 and os.access(SCRIPT, os.X_OK),
          "the script is executable bash")
    if shutil.which("shellcheck"):
        r = subprocess.run(["shellcheck", SCRIPT], capture_output=True, text=True)
        check(r.returncode == 0, f"shellcheck: {r.stdout}")
    work = tempfile.mkdtemp(prefix="driver_install_job_test.")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        kubeconfig = os.path.join(work, "kubeconfig")
        with open(kubeconfig, "w") as f:
            yaml.safe_dump({"apiVersion": "v1", "kind": "Config",
                            "clusters": [{"name": "stub", "cluster": {
                                "server": f"http://127.0.0.1:{server.server_address[1]}"}}],
                            "users": [{"name": "stub", "user": {"token": "none"}}],
                            "contexts": [{"name": "stub", "context": {"cluster": "stub", "user": "stub"}}],
                            "current-context": "stub"}, f)
        if kubectl:
            check_rendering(kubectl, kubeconfig, work)
        check_running(os.path.join(work, "run"))
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passes} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
