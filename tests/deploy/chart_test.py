#!/usr/bin/env python3
"""Renders deploy/helm/wsched with real Helm and validates the result.

    chart_test.py SOURCE_DIR [WSCHEDCTL] [--update]

Needs helm v3.17 (deploy/local/install-deps.sh installs it); $WSCHED_HELM
names another binary. Without one the test fails. --update rewrites
deploy/kubernetes/wsched.yaml (`helm template` of the chart with its
defaults) instead of failing when it differs.

Helm itself: `helm lint --strict` with the defaults and the full values;
`helm template` with several value sets (a values file, --set, --set-string,
--set-json), the values each rendering used as Helm computed them; the
--set cases that a home-made renderer once mis-parsed
(`--set server.replicas=3,server.grpcPort=1`, `--set agent.pools[0].pool=x`);
values.schema.json covers exactly the keys of values.yaml and makes Helm
refuse wrong types, unknown keys, bad enums and missing keys; the
PrometheusRule (only with monitoring.coreos.com/v1) and the dashboard
ConfigMap carry observability/alerts.yaml and dashboard.json unchanged
(promtool accepts the rule's groups), also from the packaged chart.

Checked for every rendering: each document parses and has apiVersion, kind
and metadata.name (and a namespace when namespaced); workload selectors
match their pod labels, and so do those of Services, the PDB, topology
spread, NetworkPolicies and the ServiceMonitor; containers have the chart's
image; server probes are native gRPC probes on the gRPC container port;
container ports equal the Dockerfile's EXPOSE and the --listen and
--metrics_listen flags; every flag exists in server/main.cc or
server/agent/agent_main.cc; the agent mounts exactly the host paths discovery
reads (server/agent/*.cc), all read-only under --root, none of a type that
creates it, and as its one writable hostPath the CDI directory at exactly
--cdi_dir (beside /etc/cdi, read-only), running as uid 0 only then and
never with a capability, but for pools with agent.driverInstall: privileged
and hostPID there alone, with the driver flags from the values and
--driver_install_runtime the ConfigMap's files/host-podman.sh (itself run
with a stand-in nsenter); the cluster driver installs' flag, Role and
RoleBinding with clusterDriverInstall alone; every referenced volume, Secret
key, ConfigMap and ServiceAccount exists. Also: values.yaml keys are all in
docs/deploy.md, NOTES.txt renders, the catalog in the ConfigMap validates
with wschedctl, and missing required values fail the rendering with a clear
message.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else ".")
CTL = next((a for a in sys.argv[2:] if not a.startswith("--")), "")
UPDATE = "--update" in sys.argv
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

CHART = os.path.join(SRC, "deploy/helm/wsched")
PLAIN = os.path.join(SRC, "deploy/kubernetes/wsched.yaml")
OBS = os.path.join(CHART, "observability")
INSTALL = "deploy/local/install-deps.sh"
HELM_MINOR = "v3.17."
MONITORING_API = "monitoring.coreos.com/v1"

API = {
    "Deployment": "apps/v1", "DaemonSet": "apps/v1", "Service": "v1", "ConfigMap": "v1",
    "Secret": "v1", "ServiceAccount": "v1", "PodDisruptionBudget": "policy/v1",
    "NetworkPolicy": "networking.k8s.io/v1", "Ingress": "networking.k8s.io/v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "Role": "rbac.authorization.k8s.io/v1", "RoleBinding": "rbac.authorization.k8s.io/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1", "PrometheusRule": "monitoring.coreos.com/v1",
    "Namespace": "v1",
}
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "Namespace"}
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?")
# absl's own flags, which every binary has.
ABSL_BUILTIN = {"fromenv", "tryfromenv", "flagfile", "undefok"}
# The agent's driver installs in the chart (agent.driverInstall): the node's
# podman through files/host-podman.sh, mounted from this ConfigMap.
HOST_PODMAN = "/etc/wsched/driver-install/host-podman"
# Paths discovery reads that no mount needs to cover, and why.
UNMOUNTED_OK = {
    "/lib64": "merged-/usr hosts link it to /usr/lib64, which the /usr mount covers; elsewhere it "
              "holds the dynamic linker and no NVIDIA files, and arm64 hosts have none, where a "
              "hostPath would make the runtime create it in the host's /",
    "/bin": "merged-/usr hosts link it to /usr/bin, which the /usr mount covers; neither NVIDIA's "
            "packages nor its installer put utilities in a separate /bin",
    "/tmp/nvidia-mps": "the host's /tmp is not mounted (other users' files and sockets), and a "
                       "hostPath of the pipe directory would be created, owned by root, on nodes "
                       "without MPS, breaking an MPS daemon started later as another user: the "
                       "agent's spec carries no MPS pipes on Kubernetes",
}
# hostPath types that create the path when it is missing: only for what the
# agent writes.
# Where the init container puts wsched-cdi-hook on the host (with CDI only).
CDI_HOOK_DIR = "/opt/wsched/bin"
CREATING_TYPES = {"DirectoryOrCreate", "FileOrCreate"}

failures, passes = [], 0
quiet = False  # while rendering a case that is meant to be flagged


def check(ok, what):
    global passes
    if ok:
        passes += 1
    else:
        failures.append(what)
        if not quiet:
            print(f"FAIL: {what}", file=sys.stderr)


def read(path):
    with open(os.path.join(SRC, path)) as f:
        return f.read()


def flags_of(path):
    return set(re.findall(r"ABSL_FLAG\([^,]+,\s*(\w+),", read(path))) | ABSL_BUILTIN


def dockerfile_exposed():
    text = read("deploy/container/Dockerfile")
    last = text[text.rindex("\nFROM "):]
    return {int(p) for line in re.findall(r"^EXPOSE (.*)$", last, re.M) for p in line.split()}


def discovery_paths():
    """Absolute paths the agent's discovery code reads, below --root: every
    string literal that is a path in a top-level directory (/sys, /proc,
    /dev, /etc, /usr, /lib, /lib64, /bin, /sbin, /run, /tmp, /var, /opt),
    "/dev/nvidia" of "/dev/nvidiaN" included; not the tails of paths built
    with StrCat ("/information")."""
    paths = set()
    # core/builtin_devices.cc: the extra devices node_cdi.cc looks for.
    for name in ("agent/discovery.cc", "agent/host_facts.cc", "agent/nvidia_proc.cc", "agent/pci.cc",
                 "agent/driver_files.cc", "agent/node_cdi.cc", "core/builtin_devices.cc"):
        for lit in re.findall(r'"(/(?:sys|proc|dev|etc|usr|lib|lib64|s?bin|run|tmp|var|opt)(?:/[\w.-]*)*)"',
                              read(f"server/{name}")):
            paths.add(lit.rstrip("/"))
    for must in ("/usr/lib", "/usr/bin", "/lib/firmware/nvidia", "/etc/ld.so.conf.d",
                 "/run/nvidia-persistenced/socket", "/run/nvidia-fabricmanager/socket", "/dev/fuse"):
        check(must in paths, f"discovery_paths() no longer finds {must} in the agent's sources")
    return paths


def arg_flags(args):
    out = {}
    for a in args:
        m = re.match(r"--(\w+)(?:=(.*))?$", a)
        check(m is not None, f"argument {a!r} is not --flag[=value]")
        if m:
            out[m.group(1)] = m.group(2)
    return out


def subset(small, big):
    return bool(small) and all(big.get(k) == v for k, v in small.items())


def pod_of(doc):
    return doc["spec"]["template"]


def check_doc_basics(doc, src, namespace):
    kind = doc.get("kind")
    meta = doc.get("metadata") or {}
    name = meta.get("name", "")
    where = f"{src} {kind}/{name}"
    check(kind in API, f"{where}: unknown kind")
    check(doc.get("apiVersion") == API.get(kind), f"{where}: apiVersion {doc.get('apiVersion')}")
    check(bool(DNS_SUBDOMAIN.fullmatch(name)), f"{where}: bad metadata.name")
    if kind in ("Service", "DaemonSet", "Deployment"):
        check(len(name) <= 63 and bool(DNS_LABEL.fullmatch(name)), f"{where}: name is not a DNS label")
    if kind in CLUSTER_SCOPED:
        check("namespace" not in meta, f"{where}: cluster-scoped object with a namespace")
    else:
        check(meta.get("namespace") == namespace, f"{where}: namespace {meta.get('namespace')}")
    for k, v in (meta.get("labels") or {}).items():
        check(isinstance(v, str) and bool(LABEL_VALUE.fullmatch(v)), f"{where}: label {k}={v!r}")
    return where


def check_pod(where, pod, image, volumes_needed_readonly=False, writable=(), uid0=False,
              privileged=False):
    """writable: mount paths exempt from volumes_needed_readonly. uid0: the pod
    runs as uid 0 (the agent writing the host's CDI or state directory),
    still with a group other than 0 and, as every container, no capability.
    privileged: the agent running the node's podman for driver installs
    (agent.driverInstall): a privileged container with a read-only root
    filesystem, and the host's PID namespace; only then."""
    spec = pod["spec"]
    check(spec.get("hostPID", False) is privileged, f"{where}: hostPID {spec.get('hostPID')}, want {privileged}")
    check(not spec.get("hostNetwork") and not spec.get("hostIPC"), f"{where}: host network or IPC")
    sc = spec.get("securityContext", {})
    if uid0:
        check(sc.get("runAsUser") == 0 and sc.get("runAsNonRoot") is not True
              and sc.get("runAsGroup", 0) != 0 and sc.get("fsGroup", 0) != 0,
              f"{where}: must run as uid 0 (to write --cdi_dir, --state_dir) with a group other than 0: {sc}")
    else:
        check(sc.get("runAsNonRoot") is True and sc.get("runAsUser", 0) != 0, f"{where}: runs as root")
    check(sc.get("seccompProfile") == {"type": "RuntimeDefault"}, f"{where}: seccompProfile")
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    used = set()
    for c in spec["containers"]:
        cw = f"{where} container {c.get('name')}"
        check(bool(c.get("name")) and c.get("image") == image, f"{cw}: image {c.get('image')}, want {image}")
        check(c.get("imagePullPolicy") in ("Always", "IfNotPresent", "Never"), f"{cw}: imagePullPolicy")
        csc = c.get("securityContext", {})
        if privileged:
            check(csc == {"privileged": True, "readOnlyRootFilesystem": True},
                  f"{cw}: securityContext {csc}, want privileged with a read-only root filesystem")
        else:
            check(csc.get("allowPrivilegeEscalation") is False and csc.get("readOnlyRootFilesystem") is True
                  and csc.get("capabilities", {}).get("drop") == ["ALL"]
                  and not csc.get("capabilities", {}).get("add") and not csc.get("privileged")
                  and "runAsUser" not in csc and "runAsNonRoot" not in csc, f"{cw}: securityContext")
        for m in c.get("volumeMounts", []):
            used.add(m["name"])
            check(m["name"] in vols, f"{cw}: mount of unknown volume {m['name']}")
            if volumes_needed_readonly and m["mountPath"] not in writable:
                check(m.get("readOnly") is True, f"{cw}: mount {m['mountPath']} is not readOnly")
    check(used == set(vols), f"{where}: unused volumes {sorted(set(vols) - used)}")
    return vols


def check_hook_installer(where, pod, image, vols, cdi_enabled):
    """With CDI, one init container puts wsched-cdi-hook on the host's
    /opt/wsched/bin (the spec's hooks run by host path), renamed into place,
    under the same container rules; the agent sees that directory read-only
    below --root. Without CDI, no init container."""
    inits = pod["spec"].get("initContainers", [])
    if not cdi_enabled:
        check(not inits, f"{where}: init containers without CDI")
        return
    check(len(inits) == 1, f"{where}: one init container, got {len(inits)}")
    if len(inits) != 1:
        return
    (ic,) = inits
    iw = f"{where} init container {ic.get('name')}"
    check(ic.get("image") == image, f"{iw}: image")
    csc = ic.get("securityContext", {})
    check(csc.get("allowPrivilegeEscalation") is False and csc.get("readOnlyRootFilesystem") is True
          and csc.get("capabilities", {}).get("drop") == ["ALL"], f"{iw}: securityContext")
    mounts = ic.get("volumeMounts", [])
    check(len(mounts) == 1 and mounts[0]["mountPath"] == "/opt/wsched/bin" and not mounts[0].get("readOnly")
          and vols.get(mounts[0]["name"], {}).get("hostPath") == {"path": "/opt/wsched/bin"},
          f"{iw}: writes anything but the host's /opt/wsched/bin: {mounts}")
    script = " ".join(ic.get("command", []))
    check("/usr/local/bin/wsched-cdi-hook" in script and "mv -f" in script
          and script.rstrip().endswith("/opt/wsched/bin/wsched-cdi-hook"),
          f"{iw}: does not rename the image's hook into place: {script}")


def check_driver_install(where, container, af, vols, di, install, by_kind, fullname):
    """agent.driverInstall: the agent's driver flags from the values, and
    --driver_install_runtime the ConfigMap's host-podman (files/host-podman.sh
    unchanged), mounted read-only and executable; none of it without."""
    driver_flags = {"driver_install_runtime", "driver_cache", "driver_install_timeout",
                    "driver_install_retry", "driver_install_volumes"}
    if not install:
        check(not driver_flags & set(af), f"{where}: driver install flags without agent.driverInstall: "
                                          f"{sorted(driver_flags & set(af))}")
        return
    check(af.get("driver_install_runtime") == HOST_PODMAN, f"{where}: --driver_install_runtime")
    check(af.get("driver_cache") == di["cache"], f"{where}: --driver_cache={af.get('driver_cache')}")
    check(af.get("driver_install_timeout") == di["timeout"] and af.get("driver_install_retry") == di["retry"],
          f"{where}: --driver_install_timeout, --driver_install_retry")
    want = ",".join(f"{h}:{h}" for h in di["hostPaths"]) or None
    check(af.get("driver_install_volumes") == want, f"{where}: --driver_install_volumes={af.get('driver_install_volumes')}")
    d = os.path.dirname(HOST_PODMAN)
    m = next((m for m in container["volumeMounts"] if m["mountPath"] == d), {})
    v = vols.get(m.get("name"), {})
    cm_name = v.get("configMap", {}).get("name")
    check(m.get("readOnly") is True and v.get("configMap", {}).get("defaultMode") == 0o555,
          f"{where}: {d} is not a read-only, executable ConfigMap: {m} {v}")
    cms = [c for _, c in by_kind.get("ConfigMap", []) if c["metadata"]["name"] == cm_name]
    check(cm_name == f"{fullname}-agent-driver-install" and len(cms) == 1 and
          cms[0]["data"].get(os.path.basename(HOST_PODMAN)) == read("deploy/helm/wsched/files/host-podman.sh"),
          f"{where}: ConfigMap {cm_name} does not hold files/host-podman.sh")


def check_host_podman():
    """files/host-podman.sh, with nsenter a stand-in that prints its
    arguments: the agent's /host paths in -v arguments are the host's again,
    the host directories of -v are made, podman runs in pid 1's namespaces,
    and everything else is passed on as it is."""
    script = os.path.join(CHART, "files/host-podman.sh")
    with tempfile.TemporaryDirectory() as d:
        fake = os.path.join(d, "nsenter")
        with open(fake, "w") as f:
            f.write('#!/bin/bash\nprintf "%s|" "$@"; echo\n')
        os.chmod(fake, 0o755)
        args = ["run", "--rm", "--replace", "--name", "wsched-driver-install", "--privileged",
                "--network", "host", "--timeout=1800", "-v", "/host/lib/modules:/lib/modules",
                "-v", "/host/usr/src:/usr/src", "-v", "/var/cache/wsched/driver:/var/cache/wsched-driver",
                "-v", "/lib/firmware:/lib/firmware", "-e", "WSCHED_X=/host/keep", "img:1"]
        r = subprocess.run(["bash", script, *args], capture_output=True, text=True,
                           env=dict(os.environ, WSCHED_NSENTER=fake))
    enter = "--target|1|--mount|--uts|--ipc|--net|--pid|--|"
    lines = r.stdout.splitlines()
    want = [f"{enter}mkdir|-p|--|{p}|" for p in ("/lib/modules", "/usr/src", "/var/cache/wsched/driver",
                                                   "/lib/firmware")]
    mapped = [a.replace("/host/lib/modules", "/lib/modules").replace("/host/usr/src", "/usr/src") for a in args]
    want.append(enter + "podman|" + "|".join(mapped) + "|")
    check(r.returncode == 0 and lines == want, f"files/host-podman.sh: {r.returncode} {r.stderr}\n"
                                              f"  got  {lines}\n  want {want}")
    if shutil.which("shellcheck"):
        r = subprocess.run(["shellcheck", script], capture_output=True, text=True)
        check(r.returncode == 0, f"files/host-podman.sh: shellcheck: {r.stdout}")


def secret_items(vol):
    return {i["key"]: i["path"] for i in vol["secret"].get("items", [])} if "secret" in vol else {}


def validate(docs, values, namespace, label, apis=()):
    by_kind = {}
    for src, doc in docs:
        where = check_doc_basics(doc, f"[{label}] {src}", namespace)
        by_kind.setdefault(doc["kind"], []).append((where, doc))
    names = {(d["kind"], d["metadata"]["name"]) for _, d in docs}
    image = f"{values['image']['repository']}:{values['image']['tag'] or read_chart()['appVersion']}"
    fullname = values["fullnameOverride"] or "wsched"
    secret_name = values["secret"]["name"] or fullname
    exposed = dockerfile_exposed()
    s = values["server"]

    # --- the server Deployment ---
    deps = by_kind.get("Deployment", [])
    check(len(deps) == 1, f"[{label}] one Deployment, got {len(deps)}")
    where, dep = deps[0]
    pod = pod_of(dep)
    server_labels = pod["metadata"]["labels"]
    check(subset(dep["spec"]["selector"]["matchLabels"], server_labels), f"{where}: selector vs labels")
    check(dep["spec"]["replicas"] == s["replicas"], f"{where}: replicas {dep['spec']['replicas']}")
    if label == "default":
        check(s["replicas"] >= 2, f"{where}: the default must run 2+ replicas")
    vols = check_pod(where, pod, image)
    (c,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check(set(ports.values()) == exposed, f"{where}: container ports {ports}, Dockerfile EXPOSE {exposed}")
    check(set(ports) == {"grpc", "metrics"}, f"{where}: port names {sorted(ports)}")
    tls = values["serverTls"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        p = c.get(probe, {})
        handlers = {"grpc", "httpGet", "tcpSocket", "exec"} & set(p)
        if tls["enabled"]:
            # The kubelet's gRPC probe cannot speak TLS.
            check(handlers == {"tcpSocket"} and p["tcpSocket"].get("port") == ports.get("grpc"),
                  f"{where}: with server TLS, {probe} must be a tcpSocket probe on the gRPC port: {p}")
        else:
            # Readiness follows the database ("" goes NOT_SERVING without
            # it); liveness must not, or an outage restarts every replica.
            service = "liveness" if probe == "livenessProbe" else ""
            check(handlers == {"grpc"} and p["grpc"].get("port") == ports.get("grpc")
                  and p["grpc"].get("service", "") == service,
                  f"{where}: {probe} must be a grpc probe on port {ports.get('grpc')}"
                  f" for service {service!r}: {p}")
    flags = arg_flags(c["args"])
    known = flags_of("server/main.cc")
    check(set(flags) <= known, f"{where}: unknown server flags {sorted(set(flags) - known)}")
    check(flags.get("listen", "").rsplit(":", 1)[-1] == str(ports.get("grpc")), f"{where}: --listen port")
    check(flags.get("metrics_listen", "").rsplit(":", 1)[-1] == str(ports.get("metrics")),
          f"{where}: --metrics_listen port")
    check("allow_unauthenticated" not in flags, f"{where}: --allow_unauthenticated")
    env = {e["name"]: e for e in c.get("env", [])}
    for f in (flags.get("fromenv") or "").split(","):
        if f:
            check(f in known and f"FLAGS_{f}" in env, f"{where}: --fromenv={f} without FLAGS_{f}")
    check("database_url" in flags or "database_url" in (flags.get("fromenv") or ""),
          f"{where}: no database URL")
    ref = env.get("FLAGS_database_url", {}).get("valueFrom", {}).get("secretKeyRef", {})
    check(ref == {"name": secret_name, "key": "database-url"}, f"{where}: database URL secretKeyRef {ref}")
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}

    def file_source(path):
        """The volume and key that provide the file at path."""
        d, base = os.path.split(path)
        m = mounts.get(d)
        if not m:
            return None, None
        v = vols[m["name"]]
        if "secret" in v:
            items = secret_items(v)
            key = next((k for k, p in items.items() if p == base), None) if items else base
            return v, key
        if "configMap" in v:
            return v, base
        return v, None

    v, key = file_source(flags.get("auth_tokens_file", ""))
    check(v is not None and v.get("secret", {}).get("secretName") == secret_name and key == "tokens.yaml",
          f"{where}: --auth_tokens_file is not the Secret's tokens.yaml")
    check(("allow_shared_agent_credentials" in flags) == bool(values["server"]["allowSharedAgentCredentials"]),
          f"{where}: --allow_shared_agent_credentials iff server.allowSharedAgentCredentials")
    if tls["enabled"]:
        for flag, want in (("tls_cert", "tls.crt"), ("tls_key", "tls.key")):
            v, key = file_source(flags.get(flag, ""))
            check(v is not None and v.get("secret", {}).get("secretName") == tls["secretName"] and key == want,
                  f"{where}: --{flag} is not {want} of Secret {tls['secretName']}")
        if tls["clientCaSecret"]:
            v, key = file_source(flags.get("tls_client_ca", ""))
            check(v is not None and v.get("secret", {}).get("secretName") == tls["clientCaSecret"]
                  and key == "ca.crt", f"{where}: --tls_client_ca")
        else:
            check("tls_client_ca" not in flags, f"{where}: --tls_client_ca without a Secret")
        check(("tls_require_client_cert" in flags) == bool(tls["requireClientCert"]),
              f"{where}: --tls_require_client_cert")
    else:
        check(not {"tls_cert", "tls_key", "tls_client_ca"} & set(flags), f"{where}: TLS flags without serverTls")
    if values["catalog"]:
        v, key = file_source(flags.get("catalog", ""))
        cm = v.get("configMap", {}).get("name") if v else None
        check(("ConfigMap", cm) in names and key == "catalog.yaml", f"{where}: --catalog not from the ConfigMap")
        ann = pod["metadata"].get("annotations", {})
        check(ann.get("checksum/catalog") == hashlib.sha256(values["catalog"].encode()).hexdigest(),
              f"{where}: checksum/catalog")
    else:
        check("catalog" not in flags and ("ConfigMap", f"{fullname}-catalog") not in names,
              f"{where}: catalog without values")
    sa = pod["spec"].get("serviceAccountName")
    check(("ServiceAccount", sa) in names, f"{where}: ServiceAccount {sa} missing")
    sav = values["serviceAccount"]
    for sw, sad in by_kind.get("ServiceAccount", []):
        if sad["metadata"]["name"] == sa:
            check((sad["metadata"].get("annotations") or {}) == sav["annotations"],
                  f"{sw}: annotations {sad['metadata'].get('annotations')}, want {sav['annotations']}")
            check(all(sad["metadata"]["labels"].get(k) == v for k, v in sav["labels"].items()),
                  f"{sw}: labels {sad['metadata']['labels']} lack {sav['labels']}")
            check(sad.get("automountServiceAccountToken") is False, f"{sw}: automountServiceAccountToken")
    for tsc in pod["spec"].get("topologySpreadConstraints", []):
        check(subset(tsc["labelSelector"]["matchLabels"], server_labels), f"{where}: topology spread selector")
    cluster_install = values["clusterDriverInstall"]
    kube_api = bool(values["actuator"]["clusterAutoscaler"]["enabled"] or cluster_install["enabled"])
    check(pod["spec"].get("automountServiceAccountToken") is kube_api,
          f"{where}: automountServiceAccountToken {pod['spec'].get('automountServiceAccountToken')}, "
          f"want {kube_api} (only kubectl of an actuator or the driver install Jobs needs it)")
    check((env.get("HOME", {}).get("value") == "/tmp") == kube_api, f"{where}: HOME for kubectl's cache")
    roles = {d["metadata"]["name"]: d for _, d in by_kind.get("Role", [])}
    bindings = [d for _, d in by_kind.get("RoleBinding", [])]
    if cluster_install["enabled"]:
        cmd = flags.get("driver_install_command", "")
        check(cmd == cluster_install["command"], f"{where}: --driver_install_command={cmd}")
        check(flags.get("driver_install_timeout") == cluster_install["timeout"] and
              flags.get("driver_install_cache") == cluster_install["cache"],
              f"{where}: --driver_install_timeout, --driver_install_cache from clusterDriverInstall")
        if cmd.startswith("/usr/local/lib/wsched/actuators/"):
            check(os.path.exists(os.path.join(SRC, "deploy/actuators", os.path.basename(cmd))),
                  f"{where}: {cmd} is not a script of deploy/actuators")
        check(env.get("WSCHED_K8S_NAMESPACE", {}).get("value") == namespace,
              f"{where}: the Jobs' namespace is not the release's")
        for e in cluster_install["env"]:
            check(env.get(e["name"]) == e, f"{where}: clusterDriverInstall.env {e['name']} missing")
        role = roles.get(f"{fullname}-driver-install")
        rules = role["rules"] if role else []

        def allows(group, resource, verbs):
            return any(group in r["apiGroups"] and resource in r["resources"] and set(verbs) <= set(r["verbs"])
                       for r in rules)
        check(allows("batch", "jobs", ["create", "get", "watch", "delete"]) and allows("", "pods", ["get", "list"])
              and allows("", "pods/log", ["get"]),
              f"[{label}] the driver install Role lacks jobs create/get/watch/delete, pods get/list, pods/log get: {rules}")
        check(all(r["resources"] in (["jobs"], ["pods"], ["pods/log"]) for r in rules),
              f"[{label}] the driver install Role grants more than Jobs and pods: {rules}")
        check(len(bindings) == 1 and bindings[0]["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{fullname}-driver-install"}
              and bindings[0]["subjects"] == [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
              f"[{label}] RoleBinding of the driver install Role to the server's ServiceAccount")
    else:
        check(not {"driver_install_command", "driver_install_timeout", "driver_install_cache"} & set(flags)
              and not roles and not bindings,
              f"{where}: cluster driver installs are off")
    if values["actuator"]["clusterAutoscaler"]["enabled"]:
        cmd = flags.get("actuator_command", "")
        check(cmd.startswith("/usr/local/lib/wsched/actuators/") and os.path.exists(
            os.path.join(SRC, "deploy/actuators", os.path.basename(cmd))), f"{where}: actuator {cmd}")
        crb = [d for _, d in by_kind.get("ClusterRoleBinding", [])]
        check(len(crb) == 1 and {"kind": "ServiceAccount", "name": sa, "namespace": namespace}
              in crb[0]["subjects"] and ("ClusterRole", crb[0]["roleRef"]["name"]) in names,
              f"[{label}] ClusterRoleBinding of the actuator")
        rules = [r for _, d in by_kind.get("ClusterRole", []) for r in d["rules"]]
        check(any("nodes" in r["resources"] and {"get", "list", "patch"} <= set(r["verbs"]) for r in rules),
              f"[{label}] ClusterRole lacks nodes get/list/patch")
    else:
        check("actuator_command" not in flags and "ClusterRole" not in by_kind, f"{where}: actuator is off")
    if values["databaseTls"]["enabled"]:
        for var in ("PGSSLMODE", "PGSSLROOTCERT"):
            check(var in env, f"{where}: {var} missing")
        for var in ("PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY"):
            if var in env:
                v, _ = file_source(env[var]["value"])
                check(v is not None and v.get("secret", {}).get("secretName") == values["databaseTls"]["secretName"],
                      f"{where}: {var} is not in the database TLS Secret")

    # --- Services, PDB, NetworkPolicy, ServiceMonitor, Ingress ---
    services = {d["metadata"]["name"]: d for _, d in by_kind.get("Service", [])}
    check(fullname in services, f"[{label}] Service {fullname} missing")
    for name, svc in services.items():
        check(subset(svc["spec"]["selector"], server_labels), f"[{label}] Service {name} selects no server pod")
        for p in svc["spec"]["ports"]:
            check(p["targetPort"] in ports and p["port"] == ports[p["targetPort"]],
                  f"[{label}] Service {name} port {p}")
    for where, pdb in by_kind.get("PodDisruptionBudget", []):
        check(subset(pdb["spec"]["selector"]["matchLabels"], server_labels), f"{where}: selector")
        check(("minAvailable" in pdb["spec"]) != ("maxUnavailable" in pdb["spec"]), f"{where}: one of min/max")
    check(len(by_kind.get("PodDisruptionBudget", [])) == 1, f"[{label}] one PodDisruptionBudget")
    agent_pods = [pod_of(d) for _, d in by_kind.get("DaemonSet", [])]
    for where, np in by_kind.get("NetworkPolicy", []):
        sel = np["spec"]["podSelector"]["matchLabels"]
        targets = [p for p in [pod] + agent_pods if subset(sel, p["metadata"]["labels"])]
        check(bool(targets), f"{where}: selects no pod")
        for rule in np["spec"].get("ingress", []):
            for p in rule.get("ports", []):
                check(p["port"] in ports, f"{where}: port {p['port']} is no server port")
    for where, sm in by_kind.get("ServiceMonitor", []):
        matched = [svc for svc in services.values() if subset(sm["spec"]["selector"]["matchLabels"],
                                                             svc["metadata"].get("labels", {}))]
        with_port = [svc for svc in matched if any(p["name"] == "metrics" for p in svc["spec"]["ports"])]
        check(len(with_port) == 1 and sm["spec"]["endpoints"][0]["port"] == "metrics",
              f"{where}: must select exactly one Service with a metrics port")
    for where, ing in by_kind.get("Ingress", []):
        backend = ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
        check(backend["name"] in services and backend["port"] == {"name": "grpc"}, f"{where}: backend")
        check(bool(ing["spec"]["tls"][0]["secretName"]), f"{where}: TLS secret")

    # --- Secret created by the chart ---
    for where, sec in by_kind.get("Secret", []):
        data = sec.get("stringData", {})
        check(sec["metadata"]["name"] == secret_name, f"{where}: name")
        for key, value in (("agent-bootstrap-token", "agentBootstrapToken"), ("agent-token", "agentToken")):
            check(data.get(key, "") == values["secret"][value], f"{where}: {key} is not secret.{value}")
        check(data.get("database-url", "").startswith("postgresql://"), f"{where}: database-url")
        tokens = yaml.safe_load(data.get("tokens.yaml", "")) or {}
        check(isinstance(tokens.get("tokens"), list), f"{where}: tokens.yaml has no tokens list")
    check(("Secret" in by_kind) == bool(values["secret"]["create"]), f"[{label}] Secret iff secret.create")

    # --- agent DaemonSets ---
    a = values["agent"]
    catalog_shapes = {p["id"]: p.get("node", {})
                      for p in (yaml.safe_load(values["catalog"] or "{}") or {}).get("pools", [])}
    catalog_pools = set(catalog_shapes)
    reads = discovery_paths()
    agent_flags = flags_of("server/agent/agent_main.cc")
    check(len(by_kind.get("DaemonSet", [])) == (len(a["pools"]) if a["enabled"] else 0),
          f"[{label}] one DaemonSet per agent pool")
    for (where, ds), entry in zip(by_kind.get("DaemonSet", []), a["pools"]):
        pool = entry["pool"]
        apod = pod_of(ds)
        check(subset(ds["spec"]["selector"]["matchLabels"], apod["metadata"]["labels"]), f"{where}: selector")
        check(apod["spec"]["nodeSelector"] == {a["poolLabel"]: pool}, f"{where}: nodeSelector")
        if catalog_pools:
            check(pool in catalog_pools, f"{where}: pool {pool} is not in the catalog")
        (ac,) = apod["spec"]["containers"]
        af = arg_flags(ac["args"])
        cdi_dir = af.get("cdi_dir", "/var/run/cdi")
        # Bootstrap: the node token lives in --state_dir, a writable hostPath.
        bootstrap = a["credential"] == "bootstrap"
        state_dir = af.get("state_dir") if bootstrap else None
        install = bool(entry.get("driverInstall", a["driverInstall"]["enabled"]))
        avols = check_pod(where, apod, image, volumes_needed_readonly=True,
                          writable={d for d in (cdi_dir, state_dir) if d},
                          uid0=bool(cdi_dir) or bootstrap or install, privileged=install)
        check_driver_install(where, ac, af, avols, a["driverInstall"], install, by_kind, fullname)
        check(ac.get("command") == ["/usr/local/bin/wsched-agent"], f"{where}: command")
        check_hook_installer(where, apod, image, avols, a["cdi"]["enabled"])
        check(set(af) <= agent_flags, f"{where}: unknown agent flags {sorted(set(af) - agent_flags)}")
        check(af.get("pool") == pool, f"{where}: --pool")
        root = af.get("root", "/")
        check(root == "/host", f"{where}: --root={root}")
        if not a["server"]:
            check(af.get("server") == f"{fullname}.{namespace}.svc:{ports['grpc']}", f"{where}: --server")
        if values["serverTls"]["enabled"]:
            check("tls" in af, f"{where}: the server speaks TLS, the agent does not")
        if "tls_ca_file" in af:
            mount = next((m for m in ac["volumeMounts"]
                          if af["tls_ca_file"].startswith(m["mountPath"] + "/")), None)
            check(mount is not None and avols[mount["name"]].get("secret", {}).get("secretName")
                  == a["tls"]["caSecret"], f"{where}: --tls_ca_file is not from agent.tls.caSecret")
        envs = {e["name"]: e for e in ac.get("env", [])}
        check(af.get("node_name") == "$(NODE_NAME)" and envs.get("NODE_NAME", {}).get("valueFrom") ==
              {"fieldRef": {"fieldPath": "spec.nodeName"}}, f"{where}: --node_name from spec.nodeName")
        tflag, want_key = ("bootstrap_token_file", "agent-bootstrap-token") if bootstrap else \
            ("token_file", "agent-token")
        check(("token_file" in af) != bootstrap and ("bootstrap_token_file" in af) == bootstrap
              and ("state_dir" in af) == bootstrap,
              f"{where}: agent.credential={a['credential']} with flags {sorted(af)}")
        tv, tkey = None, None
        for m in ac["volumeMounts"]:
            if af.get(tflag, "").startswith(m["mountPath"] + "/"):
                tv = avols[m["name"]]
                items = secret_items(tv)
                tkey = next((k for k, p in items.items() if p == os.path.basename(af[tflag])), None)
        check(tv is not None and tv["secret"]["secretName"] == secret_name and tkey == want_key,
              f"{where}: --{tflag} is not the Secret's {want_key}")
        if bootstrap:
            # The node's own token outlives the pod: the host's agent.stateDir,
            # read-write, at the agent's own path (not below --root).
            sm = next((m for m in ac["volumeMounts"] if m["mountPath"] == state_dir), None)
            shp = avols[sm["name"]].get("hostPath") if sm else None
            check(bool(state_dir) and not state_dir.startswith(af.get("root", "/") + "/") and
                  shp == {"path": a["stateDir"], "type": "DirectoryOrCreate"} and not sm.get("readOnly"),
                  f"{where}: --state_dir={state_dir} is not the host's agent.stateDir, writable: {shp}")
        # The CDI directories: --cdi_dir, the one writable hostPath, and
        # NVIDIA's spec directories, read-only; both at the agent's own
        # paths, not below --root.
        check(("cdi_dir" in af) and (bool(af["cdi_dir"]) == bool(a["cdi"]["enabled"])),
              f"{where}: --cdi_dir={af.get('cdi_dir')} with agent.cdi.enabled={a['cdi']['enabled']}")
        spec_dirs = [d for d in (af.get("cdi_nvidia_spec_dirs") or "").split(",") if d] if cdi_dir else []
        if cdi_dir:
            check(cdi_dir.startswith("/") and not cdi_dir.startswith(root + "/"), f"{where}: --cdi_dir={cdi_dir}")
            check("cdi_nvidia_spec_dirs" in af and "/etc/cdi" in spec_dirs and cdi_dir in spec_dirs,
                  f"{where}: --cdi_nvidia_spec_dirs={af.get('cdi_nvidia_spec_dirs')}")
            # Paths in the spec are the host's: those below --root as they are.
            check(af.get("cdi_host_root", "/") == "/", f"{where}: --cdi_host_root")
        rro = a["recursiveReadOnly"]
        host, cdi_mounts = {}, {}
        for m in ac["volumeMounts"]:
            v = avols[m["name"]]
            if "hostPath" not in v:
                continue
            hp = v["hostPath"]
            if m.get("readOnly"):
                check(hp.get("type", "") not in CREATING_TYPES, f"{where}: read-only hostPath {hp} creates itself")
                check(m.get("recursiveReadOnly") == (rro or None), f"{where}: {m['mountPath']} recursiveReadOnly")
            else:
                check("recursiveReadOnly" not in m, f"{where}: {m['mountPath']} recursiveReadOnly")
            if m["mountPath"].startswith(root + "/"):
                check(m["mountPath"] == root + hp["path"], f"{where}: {m['mountPath']} not at --root")
                host[hp["path"]] = m
            elif m["mountPath"] == state_dir:
                continue  # Checked above.
            else:
                cdi_mounts[m["mountPath"]] = (hp, m)
        writable = [p for p, (_, m) in cdi_mounts.items() if not m.get("readOnly")]
        check(writable == ([cdi_dir] if cdi_dir else []), f"{where}: writable hostPaths {writable}, --cdi_dir={cdi_dir}")
        if cdi_dir:
            hp, _ = cdi_mounts.get(cdi_dir, ({}, None))
            check(hp == {"path": a["cdi"]["dir"], "type": "DirectoryOrCreate"},
                  f"{where}: --cdi_dir is not the host's agent.cdi.dir: {hp}")
        for d in spec_dirs:
            if d != cdi_dir:
                hp, m = cdi_mounts.get(d, ({}, {}))
                check(hp.get("path") == d and m.get("readOnly") is True,
                      f"{where}: NVIDIA spec directory {d} is not the host's, read-only")
        check(set(cdi_mounts) == set(spec_dirs) | ({cdi_dir} if cdi_dir else set()),
              f"{where}: hostPaths outside --root: {sorted(cdi_mounts)}")
        for p in reads:
            covered = any(p == h or p.startswith(h + "/") for h in host)
            # wsched-cdi-hook is looked for only to write a CDI spec.
            if p == CDI_HOOK_DIR and not cdi_dir:
                check(not covered, f"{where}: {p} is mounted without CDI")
                continue
            check(covered or p in UNMOUNTED_OK, f"{where}: discovery reads {p}, which no hostPath mounts")
            if p in UNMOUNTED_OK:
                check(not covered, f"{where}: {p} is mounted; drop it from UNMOUNTED_OK")
        for p in UNMOUNTED_OK:
            check(p in reads, f"{where}: UNMOUNTED_OK lists {p}, which discovery no longer reads")
        for h in host:
            check(any(p == h or p.startswith(h + "/") for p in reads), f"{where}: hostPath {h} is never read")
        shape = catalog_shapes.get(pool, {})
        if catalog_shapes and not shape.get("gpus"):
            check("runtimeClassName" not in apod["spec"], f"{where}: NVIDIA runtime on a CPU pool")
        if af.get("nvidia_smi", "nvidia-smi"):
            check(bool(apod["spec"].get("runtimeClassName")), f"{where}: nvidia-smi without the NVIDIA runtime")

    # --- the PrometheusRule and the dashboard ConfigMap ---
    rules = by_kind.get("PrometheusRule", [])
    want_rule = bool(values["prometheusRule"]["enabled"]) and MONITORING_API in apis
    check(len(rules) == int(want_rule), f"[{label}] {len(rules)} PrometheusRules with "
          f"prometheusRule.enabled={values['prometheusRule']['enabled']}, API versions {list(apis)}")
    for where, pr in rules:
        check(pr["spec"]["groups"] == alerts()["groups"],
              f"{where}: spec.groups differ from observability/alerts.yaml")
        check(all(pr["metadata"]["labels"].get(k) == v for k, v in values["prometheusRule"]["labels"].items()),
              f"{where}: labels lack prometheusRule.labels")
        check(promtool_rules(pr["spec"]), f"{where}: promtool check rules refuses its spec")
    dash_name = f"{fullname}-dashboard"
    dashes = [(w, d) for w, d in by_kind.get("ConfigMap", []) if d["metadata"]["name"] == dash_name]
    g = values["grafanaDashboard"]
    check(len(dashes) == int(bool(g["enabled"])), f"[{label}] {len(dashes)} dashboard ConfigMaps")
    for where, cm in dashes:
        lab = cm["metadata"]["labels"]
        check(lab.get("grafana_dashboard") == "1" and all(lab.get(k) == v for k, v in g["labels"].items()),
              f"{where}: labels {lab}")
        check((cm["metadata"].get("annotations") or {}) == g["annotations"], f"{where}: annotations")
        check(list(cm["data"]) == ["wsched.json"] and json.loads(cm["data"]["wsched.json"]) == dashboard(),
              f"{where}: wsched.json differs from observability/dashboard.json")

    # --- the catalog validates ---
    if values["catalog"] and CTL and os.path.exists(CTL):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            cm = next(d for _, d in by_kind["ConfigMap"] if d["metadata"]["name"] == f"{fullname}-catalog")
            f.write(cm["data"]["catalog.yaml"])
            f.flush()
            r = subprocess.run([CTL, "catalog", "validate", f.name], capture_output=True, text=True)
            check(r.returncode == 0, f"[{label}] catalog in the ConfigMap: {r.stdout}{r.stderr}")


_chart_meta = None


def read_chart():
    global _chart_meta
    if _chart_meta is None:
        with open(os.path.join(CHART, "Chart.yaml")) as f:
            _chart_meta = yaml.safe_load(f)
    return _chart_meta


def alerts():
    with open(os.path.join(OBS, "alerts.yaml")) as f:
        return yaml.safe_load(f)


def dashboard():
    with open(os.path.join(OBS, "dashboard.json")) as f:
        return json.load(f)


def promtool_rules(spec):
    """promtool check rules on a PrometheusRule's spec (its groups)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        yaml.safe_dump({"groups": spec["groups"]}, f)
        f.flush()
        try:
            r = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True)
        except FileNotFoundError:
            print(f"chart_test: no promtool (Debian's prometheus, {INSTALL})", file=sys.stderr)
            return False
    if r.returncode:
        print(r.stdout + r.stderr, file=sys.stderr)
    return r.returncode == 0


# --- Helm ---------------------------------------------------------------------

WORK = tempfile.mkdtemp(prefix="chart_test.")
HELM_ENV = dict(os.environ, HELM_CACHE_HOME=os.path.join(WORK, "cache"),
                HELM_CONFIG_HOME=os.path.join(WORK, "config"), HELM_DATA_HOME=os.path.join(WORK, "data"))
HELM_ENV.pop("KUBECONFIG", None)


def find_helm():
    for cand in (os.environ.get("WSCHED_HELM"), shutil.which("helm"), "/usr/local/bin/helm"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


HELM = find_helm()


def helm(*args):
    r = subprocess.run([HELM, *args], capture_output=True, text=True, env=HELM_ENV)
    return r.returncode, r.stdout, r.stderr.strip()


def probe_chart():
    """A copy of the chart with one more template that shows the values Helm
    computed (defaults, -f files, --set*) and NOTES.txt rendered; helm
    template prints neither. The chart itself renders the manifests."""
    copy = os.path.join(WORK, "probe", "wsched")
    shutil.copytree(CHART, copy)
    with open(os.path.join(CHART, "templates/NOTES.txt")) as f:
        notes = f.read()
    with open(os.path.join(copy, "templates/_chart_test.tpl"), "w") as f:
        f.write('{{- define "chart-test.notes" -}}\n' + notes + '{{- end -}}\n')
    with open(os.path.join(copy, "templates/zz-chart-test.yaml"), "w") as f:
        f.write('values: {{ toJson .Values }}\nnotes: {{ include "chart-test.notes" . | toJson }}\n')
    return copy


PROBE = None


def split_docs(text, label):
    """(source, document) of each non-empty document of helm's output."""
    out = []
    for part in re.split(r"^---\s*$", text, flags=re.M):
        m = re.search(r"^# Source: (\S+)", part, re.M)
        try:
            doc = yaml.safe_load(part)
        except yaml.YAMLError as e:
            check(False, f"[{label}] {m.group(1) if m else '?'}: {e}")
            continue
        if doc is not None:
            out.append((m.group(1) if m else "?", doc))
    return out


def values_file(values, name):
    path = os.path.join(WORK, f"{name}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(values, f)
    return path


def render_set(args, label, namespace="wsched", apis=(), chart=None, validate_docs=True):
    """helm template of the chart with args; validates the documents against
    the values Helm computed. Returns (stdout, documents, values)."""
    api_args = [a for api in apis for a in ("--api-versions", api)]
    rc, out, err = helm("template", "wsched", chart or CHART, "-n", namespace, *api_args, *args)
    check(rc == 0, f"[{label}] helm template {' '.join(args)}: {err}")
    if rc:
        return "", [], {}
    rc, probe, err = helm("template", "wsched", PROBE, "-n", namespace, *api_args, *args,
                          "--show-only", "templates/zz-chart-test.yaml")
    check(rc == 0, f"[{label}] helm template (values probe): {err}")
    shown = yaml.safe_load(probe) if rc == 0 else {"values": {}, "notes": ""}
    values, notes = shown["values"], shown["notes"]
    docs = split_docs(out, label)
    if validate_docs:
        validate(docs, values, namespace, label, apis)
        check(f"-n {namespace} rollout status deploy/wsched" in notes, f"[{label}] NOTES.txt: {notes}")
    print(f"chart_test: [{label}] {len(docs)} documents")
    return out, docs, values


FULL = {
    "secret": {"create": True, "databaseUrl": "postgresql://wsched:pw@db.internal:5432/wsched",
               "agentBootstrapToken": "b" * 32,
               "tokens": "tokens: [{name: ops, token: " + "a" * 32 + ", role: admin}]\n"},
    "databaseTls": {"enabled": True, "clientCert": True},
    "ingress": {"enabled": True, "className": "nginx", "host": "wsched.example.org",
                "tlsSecretName": "wsched-tls",
                "annotations": {"nginx.ingress.kubernetes.io/backend-protocol": "GRPCS"}},
    "actuator": {"clusterAutoscaler": {"enabled": True}},
    "clusterDriverInstall": {"enabled": True, "timeout": "20m", "cache": "s3://drivers/wsched", "env": [
        {"name": "WSCHED_NVIDIA_INSTALLER_URL",
         "value": "https://mirror.example.com/nvidia/{version}/NVIDIA-Linux-x86_64-{version}.run"},
        {"name": "WSCHED_K8S_PRIORITY_CLASS", "value": "system-node-critical"}]},
    "serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}},
    "networkPolicy": {"egress": {"enabled": True, "databaseTo": [{"ipBlock": {"cidr": "10.20.0.0/24"}}]}},
    "agent": {"tls": {"enabled": True, "caSecret": "wsched-ca"}, "server": "wsched.example.org:443",
              "gpuUsage": {"enabled": True}, "cdi": {"dir": "/run/cdi"}, "recursiveReadOnly": "Enabled",
              "driverInstall": {"enabled": True, "cache": "/srv/nfs/wsched-driver", "timeout": "45m",
                                "retry": "2m", "hostPaths": ["/lib/firmware", "/opt/nvidia"]},
              "pools": [{"pool": "cpu", "tolerations": [], "gpuUsage": False, "driverInstall": False},
                        {"pool": "gpu-l4"}]},
    "server": {"podDisruptionBudget": {"minAvailable": 2}, "extraArgs": ["--actuator_timeout=2m"],
               "podAnnotations": {"team": "gpu"}, "requireHashedTokens": True},
    "serverTls": {"enabled": True, "clientCaSecret": "wsched-client-ca"},
    "prometheusRule": {"enabled": True, "labels": {"release": "prometheus"}},
    "grafanaDashboard": {"enabled": True, "annotations": {"grafana_folder": "wsched"}},
}
# On top of the file: plain --set (escaped dots in keys), --set-string.
FULL_SETS = ["--set", "image.tag=1.2.3,server.replicas=3",
             "--set", r"serviceAccount.annotations.eks\.amazonaws\.com/role-arn=arn:aws:iam::123456789012:role/wsched",
             "--set-string", r"server.podLabels.azure\.workload\.identity/use=true",
             "--set-string", "serviceAccount.labels.team=gpu"]
# No CDI spec files and a static token: the agent back at user 10001, every
# hostPath read-only; and no recursiveReadOnly (clusters before 1.30).
NO_CDI = ["--set", "agent.cdi.enabled=false", "--set", "agent.recursiveReadOnly=",
          "--set", "agent.credential=token,server.allowSharedAgentCredentials=true,secret.create=true,"
          "secret.databaseUrl=postgresql://x@y/z,secret.tokens=tokens: [],secret.agentToken=" + "t" * 32]
# No CDI spec files, bootstrap: uid 0 for the state directory alone.
NO_CDI_BOOTSTRAP = ["--set", "agent.cdi.enabled=false,agent.stateDir=/srv/wsched-agent"]
# Both faces of driver installs: the agents of gpu-l4 run the node's podman
# (on by pool, off by default), an object-store cache and no extra host
# paths; the server runs the Job command for cluster pools.
DRIVER_INSTALL = ["--set", "clusterDriverInstall.enabled=true,agent.driverInstall.cache=s3://drivers/wsched",
                  "--set-json", 'agent.driverInstall.hostPaths=[]',
                  "--set-json", 'agent.pools=[{"pool":"cpu","gpuUsage":false},{"pool":"gpu-l4","driverInstall":true}]',
                  "--set-json", 'clusterDriverInstall.env=[{"name":"WSCHED_K8S_CACHE_PVC","value":"driver-cache"}]']
# agent.driverInstall on, a token credential and no CDI: uid 0 for podman alone.
DRIVER_INSTALL_TOKEN = NO_CDI + ["--set", "agent.driverInstall.enabled=true"]
# Mutual TLS required of every caller: only without the chart's agents.
MTLS = ["--set", "serverTls.enabled=true,serverTls.clientCaSecret=wsched-client-ca,"
        "serverTls.requireClientCert=true,agent.enabled=false"]
MINIMAL = ["--set", "catalog=,agent.enabled=false,networkPolicy.enabled=false,service.headless=false",
           "--set-json", "server.topologySpreadConstraints=[]"]
# The rules and the dashboard, where the cluster has the Operator's API and
# where it has not (no PrometheusRule then).
MONITORING = ["--set", "prometheusRule.enabled=true,grafanaDashboard.enabled=true,serviceMonitor.enabled=true",
              "--set-string", "prometheusRule.labels.release=prometheus,grafanaDashboard.labels.team=gpu"]
MUST_FAIL = [
    (["secret.create=true"], "secret.databaseUrl is required"),
    (["secret.create=true,secret.databaseUrl=postgresql://x@y/z"], "secret.tokens is required"),
    (["ingress.enabled=true"], "ingress.host is required"),
    (["networkPolicy.egress.enabled=true"], "networkPolicy.egress.databaseTo is required"),
    (["serverTls.enabled=true"], "the agents must connect with TLS too"),
    (["serverTls.enabled=true,serverTls.requireClientCert=true,agent.enabled=false"],
     "serverTls.requireClientCert needs serverTls.clientCaSecret"),
    (["serverTls.enabled=true,serverTls.clientCaSecret=ca,serverTls.requireClientCert=true,"
      "agent.tls.enabled=true"], "wsched-agent has no client certificate"),
]
# Values that values.schema.json makes Helm refuse, before any template runs.
SCHEMA_FAIL = [
    (["--set", "server.replicas=two"], "server.replicas: Invalid type. Expected: integer, given: string"),
    (["--set-string", "server.grpcPort=50051"], "server.grpcPort: Invalid type. Expected: integer, given: string"),
    (["--set", "server.heartbeatInterval=10"], "server.heartbeatInterval: Invalid type. Expected: string"),
    (["--set", "agent.cdi.enabled=yes"], "agent.cdi.enabled: Invalid type. Expected: boolean"),
    (["--set", "serviceAccount.annotations.team=true"],
     "serviceAccount.annotations.team: Invalid type. Expected: string, given: boolean"),
    (["--set", "server.replica=3"], "Additional property replica is not allowed"),
    (["--set", "service.type=Public"], "service.type must be one of the following"),
    (["--set", "agent.recursiveReadOnly=Always"], "agent.recursiveReadOnly must be one of the following"),
    (["--set", "agent.credential=shared"], "agent.credential must be one of the following"),
    (["--set", "agent.stateDir=var/lib/wsched-agent"], "agent.stateDir: Does not match pattern"),
    (["--set-json", 'agent.driverInstall.hostPaths=["lib/firmware"]'],
     "agent.driverInstall.hostPaths.0: Does not match pattern"),
    (["--set", "agent.driverInstall.cache=cache"], "agent.driverInstall.cache: Does not match pattern"),
    (["--set", "agent.pools[0].pool=gpu-l4,agent.pools[0].driverInstall=yes"],
     "agent.pools.0.driverInstall: Invalid type. Expected: boolean"),
    (["--set", "clusterDriverInstall.command=driver-install.sh"],
     "clusterDriverInstall.command: Does not match pattern"),
    (["--set", "agent.pools[0].pool=GPU_L4"], "agent.pools.0.pool: Does not match pattern"),
    (["--set", "server.grpcPort=null"], "grpcPort is required"),
    (["--set", "server.grpcPort=70000"], "server.grpcPort: Must be less than or equal to 65535"),
]


def helm_fails(args, message, label):
    rc, _, err = helm("template", "wsched", CHART, "-n", "wsched", *args)
    check(rc != 0 and message in err, f"[{label}] helm template {' '.join(args)} must fail with "
                                      f"{message!r}; exit {rc}: {err}")


def schema_covers_values():
    """values.schema.json has a property for every key of values.yaml and no
    other (but Helm's global and the optional keys of agent.pools[])."""
    with open(os.path.join(CHART, "values.yaml")) as f:
        values = yaml.safe_load(f)
    with open(os.path.join(CHART, "values.schema.json")) as f:
        schema = json.load(f)

    def walk(v, node, path):
        if "$ref" in node:
            return  # a Kubernetes shape (resources, tolerations, peers, ...)
        props = node.get("properties")
        if isinstance(v, dict) and props is not None:
            extra = set(props) - set(v) - ({"global"} if not path else set())
            check(not extra, f"values.schema.json: {path or '.'} has keys not in values.yaml: {sorted(extra)}")
            check(node.get("additionalProperties") is False, f"values.schema.json: {path or '.'} is open")
            for k, sub in v.items():
                check(k in props, f"values.yaml key {path + k} is not in values.schema.json")
                check(k in node.get("required", []), f"values.schema.json: {path + k} is not required")
                if k in props:
                    walk(sub, props[k], f"{path}{k}.")
        elif isinstance(v, list) and path == "agent.pools.":
            for x in v:
                check(set(x) <= set(node["items"]["properties"]), f"values.schema.json: agent.pools[] {x}")
        else:
            check(bool(node.get("type") or node.get("enum") or node.get("oneOf")),
                  f"values.schema.json: {path} has no type")
    walk(values, schema, "")
    pool = schema["properties"]["agent"]["properties"]["pools"]["items"]
    check(pool["required"] == ["pool"], "values.schema.json: agent.pools[] requires exactly pool")


def check_regressions():
    """--set forms that deploy/helm/render.py, the renderer before Helm, got wrong."""
    out, docs, values = render_set(["--set", "server.replicas=3,server.grpcPort=1"], "set-two-keys",
                                   validate_docs=False)
    check(values.get("server", {}).get("replicas") == 3 and values["server"].get("grpcPort") == 1,
          f"[set-two-keys] values: replicas {values.get('server', {}).get('replicas')!r}, "
          f"grpcPort {values.get('server', {}).get('grpcPort')!r}")
    check("3,server" not in out, "[set-two-keys] the second --set key leaked into a value")
    dep = next((d for _, d in docs if d["kind"] == "Deployment"), None)
    if dep:
        c = pod_of(dep)["spec"]["containers"][0]
        check(dep["spec"]["replicas"] == 3, f"[set-two-keys] replicas: {dep['spec']['replicas']!r}")
        check({p["name"]: p["containerPort"] for p in c["ports"]}.get("grpc") == 1 and
              "--listen=0.0.0.0:1" in c["args"], f"[set-two-keys] gRPC port: {c['ports']}, {c['args'][:1]}")
    svc = next((d for _, d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "wsched"), None)
    check(svc is not None and svc["spec"]["ports"][0]["port"] == 1, "[set-two-keys] Service port")
    check(all(f"--server=wsched.wsched.svc:1" in pod_of(d)["spec"]["containers"][0]["args"]
              for _, d in docs if d["kind"] == "DaemonSet"), "[set-two-keys] agents' --server port")

    out, docs, values = render_set(["--set", "agent.pools[0].pool=x"], "set-list-index", validate_docs=False)
    pools = values.get("agent", {}).get("pools")
    # Helm replaces the list: its first element is {pool: x}, nothing else.
    check(pools == [{"pool": "x"}] and "pools[0]" not in values.get("agent", {}),
          f"[set-list-index] agent.pools {pools!r}")
    ds = [d["metadata"]["name"] for _, d in docs if d["kind"] == "DaemonSet"]
    check(ds == ["wsched-agent-x"], f"[set-list-index] DaemonSets {ds}")
    check("pools[0]" not in out, "[set-list-index] a key named pools[0] was rendered")


def check_packaged():
    """helm package keeps the observability files the templates read (and
    leaves the unit cases out); its rendering equals the directory's."""
    rc, out, err = helm("package", CHART, "-d", os.path.join(WORK, "pkg"))
    check(rc == 0, f"helm package: {err}")
    if rc:
        return
    tgz = os.path.join(WORK, "pkg", f"wsched-{read_chart()['version']}.tgz")
    r = subprocess.run(["tar", "tzf", tgz], capture_output=True, text=True)
    members = set(r.stdout.split())
    check({"wsched/observability/alerts.yaml", "wsched/observability/dashboard.json",
           "wsched/values.schema.json"} <= members, f"packaged chart lacks files: {sorted(members)}")
    check("wsched/observability/alerts_test.yaml" not in members, "the unit cases are packaged (.helmignore)")
    packaged, _, _ = render_set(MONITORING, "packaged", apis=[MONITORING_API], chart=tgz)
    directory, _, _ = render_set(MONITORING, "directory", apis=[MONITORING_API], validate_docs=False)
    check(packaged == directory and "kind: PrometheusRule" in packaged,
          "the packaged chart renders other than its directory")


def values_documented():
    with open(os.path.join(CHART, "values.yaml")) as f:
        values = yaml.safe_load(f)
    doc = read("docs/deploy.md")
    leaves = []

    def walk(v, path):
        if isinstance(v, dict) and v and path not in ("server.resources", "agent.resources",
                                                      "ingress.annotations"):
            for k, sub in v.items():
                walk(sub, f"{path}.{k}" if path else k)
        else:
            leaves.append(path)
    walk(values, "")
    for leaf in leaves:
        check(f"`{leaf}`" in doc, f"values.yaml key {leaf} is not described in docs/deploy.md")


def main():
    global PROBE, quiet
    rc, version, err = helm("version", "--template", "{{.Version}}")
    check(rc == 0 and version.startswith(HELM_MINOR),
          f"helm {HELM} is {version or err}, want {HELM_MINOR}x (run {INSTALL})")
    if rc:
        return
    PROBE = probe_chart()
    full_file = values_file(FULL, "full")
    for label, args in (("default", []), ("full", ["-f", full_file, *FULL_SETS]),
                        ("driver-install", DRIVER_INSTALL)):
        rc, out, err = helm("lint", "--strict", CHART, *args)
        check(rc == 0 and "0 chart(s) failed" in out, f"[{label}] helm lint --strict: {out}{err}")

    default_out, _, _ = render_set([], "default")
    render_set(["-f", full_file, *FULL_SETS], "full", apis=[MONITORING_API])
    render_set(MINIMAL, "minimal")
    render_set(MTLS, "mutual-tls")
    render_set(NO_CDI, "no-cdi")
    render_set(NO_CDI_BOOTSTRAP, "no-cdi-bootstrap")
    render_set(DRIVER_INSTALL, "driver-install")
    render_set(DRIVER_INSTALL_TOKEN, "driver-install-token")
    check_host_podman()
    render_set([], "other-namespace", namespace="gpu-scheduler")
    render_set(MONITORING, "monitoring", apis=[MONITORING_API])
    render_set(MONITORING, "monitoring-without-operator")
    render_set(MINIMAL + MONITORING, "minimal-monitoring", apis=[MONITORING_API])
    check_regressions()
    check_packaged()

    # Renders; the validation must then flag nvidia-smi without a runtime.
    before, quiet = len(failures), True
    render_set(["--set", "agent.pools[0].pool=gpu-l4,agent.pools[0].gpuUsage=true,"
                "agent.gpuUsage.runtimeClassName="], "negative")
    quiet = False
    flagged = any("nvidia-smi without the NVIDIA runtime" in f for f in failures[before:])
    del failures[before:]
    check(flagged, "nvidia-smi without runtimeClassName is caught")
    for sets, message in MUST_FAIL:
        helm_fails([a for s in sets for a in ("--set", s)], message, "must-fail")
    for args, message in SCHEMA_FAIL:
        helm_fails(args, message, "schema")
    schema_covers_values()

    header = ("# wsched for kubectl: deploy/helm/wsched rendered with its defaults (release\n"
              "# \"wsched\", namespace \"wsched\") by helm template. Do not edit; change\n"
              "# the chart and run: tests/deploy/chart_test.py . --update\n")
    want = header + default_out
    have = open(PLAIN).read() if os.path.exists(PLAIN) else ""
    if UPDATE and have != want:
        with open(PLAIN, "w") as f:
            f.write(want)
        print(f"chart_test: wrote {PLAIN}")
    else:
        check(have == want, "deploy/kubernetes/wsched.yaml differs from the chart's rendering "
                            "(run tests/deploy/chart_test.py . --update)")
    ns = yaml.safe_load(read("deploy/kubernetes/namespace.yaml"))
    check(ns["kind"] == "Namespace" and ns["metadata"]["name"] == "wsched" and
          ns["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "privileged",
          "deploy/kubernetes/namespace.yaml: namespace wsched allowing the agent's hostPath mounts")
    values_documented()


if __name__ == "__main__":
    if HELM is None:
        print(f"FAIL: no helm on PATH (nor $WSCHED_HELM, /usr/local/bin/helm): run {INSTALL}, "
              f"which installs helm {HELM_MINOR}1", file=sys.stderr)
        sys.exit(1)
    try:
        main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    print(f"chart_test: {passes} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
