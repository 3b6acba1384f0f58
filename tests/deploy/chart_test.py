#!/usr/bin/env python3
"""Renders deploy/helm/wsched with several value sets and validates the result.

    chart_test.py SOURCE_DIR [WSCHEDCTL] [--update]

--update rewrites deploy/kubernetes/wsched.yaml (the chart rendered with its
defaults) instead of failing when it differs.

Checked for every rendering: each document parses and has apiVersion, kind
and metadata.name (and a namespace when namespaced); workload selectors
match their pod labels, and so do those of Services, the PDB, topology
spread, NetworkPolicies and the ServiceMonitor; containers have the chart's
image; server probes are native gRPC probes on the gRPC container port;
container ports equal the Dockerfile's EXPOSE and the --listen and
--metrics_listen flags; every flag exists in server/main.cc or
server/agent/main.cc; the agent mounts exactly the host paths discovery
reads (server/agent/*.cc), all read-only under --root, none of a type that
creates it, and as its one writable hostPath the CDI directory at exactly
--cdi_dir (beside /etc/cdi, read-only), running as uid 0 only then and
never with a capability; every referenced volume, Secret
key, ConfigMap and ServiceAccount exists. Also: values.yaml keys are all in
docs/deploy.md, NOTES.txt renders, the catalog in the ConfigMap validates
with wschedctl, and missing required values fail the rendering with a clear
message.
"""
import glob
import hashlib
import os
import re
import subprocess
import sys
import tempfile

import yaml

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else ".")
CTL = next((a for a in sys.argv[2:] if not a.startswith("--")), "")
UPDATE = "--update" in sys.argv
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(SRC, "deploy/helm"))
import render  # noqa: E402

CHART = os.path.join(SRC, "deploy/helm/wsched")
PLAIN = os.path.join(SRC, "deploy/kubernetes/wsched.yaml")

API = {
    "Deployment": "apps/v1", "DaemonSet": "apps/v1", "Service": "v1", "ConfigMap": "v1",
    "Secret": "v1", "ServiceAccount": "v1", "PodDisruptionBudget": "policy/v1",
    "NetworkPolicy": "networking.k8s.io/v1", "Ingress": "networking.k8s.io/v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1", "Namespace": "v1",
}
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "Namespace"}
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?")
# absl's own flags, which every binary has.
ABSL_BUILTIN = {"fromenv", "tryfromenv", "flagfile", "undefok"}
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
    for name in ("discovery.cc", "host_facts.cc", "nvidia_proc.cc", "pci.cc", "driver_files.cc",
                 "node_cdi.cc"):
        for lit in re.findall(r'"(/(?:sys|proc|dev|etc|usr|lib|lib64|s?bin|run|tmp|var|opt)(?:/[\w.-]*)*)"',
                              read(f"server/agent/{name}")):
            paths.add(lit.rstrip("/"))
    for must in ("/usr/lib", "/usr/bin", "/lib/firmware/nvidia", "/etc/ld.so.conf.d",
                 "/run/nvidia-persistenced/socket", "/run/nvidia-fabricmanager/socket", "/dev/fuse"):
        check(must in paths, f"discovery_paths() no longer finds {must} in server/agent/*.cc")
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


def check_pod(where, pod, image, volumes_needed_readonly=False, writable=(), uid0=False):
    """writable: mount paths exempt from volumes_needed_readonly. uid0: the pod
    runs as uid 0 (the agent writing the host's CDI directory), still with
    a group other than 0 and, as every container, no capability."""
    spec = pod["spec"]
    sc = spec.get("securityContext", {})
    if uid0:
        check(sc.get("runAsUser") == 0 and sc.get("runAsNonRoot") is not True
              and sc.get("runAsGroup", 0) != 0 and sc.get("fsGroup", 0) != 0,
              f"{where}: must run as uid 0 (to write --cdi_dir) with a group other than 0: {sc}")
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


def secret_items(vol):
    return {i["key"]: i["path"] for i in vol["secret"].get("items", [])} if "secret" in vol else {}


def validate(docs, values, namespace, label):
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
            check(handlers == {"grpc"} and p["grpc"].get("port") == ports.get("grpc")
                  and p["grpc"].get("service", "") == "",
                  f"{where}: {probe} must be a grpc probe on port {ports.get('grpc')}: {p}")
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
        check("catalog" not in flags and "ConfigMap" not in by_kind, f"{where}: catalog without values")
    sa = pod["spec"].get("serviceAccountName")
    check(("ServiceAccount", sa) in names, f"{where}: ServiceAccount {sa} missing")
    for tsc in pod["spec"].get("topologySpreadConstraints", []):
        check(subset(tsc["labelSelector"]["matchLabels"], server_labels), f"{where}: topology spread selector")
    if values["actuator"]["clusterAutoscaler"]["enabled"]:
        cmd = flags.get("actuator_command", "")
        check(cmd.startswith("/usr/local/lib/wsched/actuators/") and os.path.exists(
            os.path.join(SRC, "deploy/actuators", os.path.basename(cmd))), f"{where}: actuator {cmd}")
        check(pod["spec"].get("automountServiceAccountToken") is True, f"{where}: actuator needs the token")
        crb = [d for _, d in by_kind.get("ClusterRoleBinding", [])]
        check(len(crb) == 1 and {"kind": "ServiceAccount", "name": sa, "namespace": namespace}
              in crb[0]["subjects"] and ("ClusterRole", crb[0]["roleRef"]["name"]) in names,
              f"[{label}] ClusterRoleBinding of the actuator")
        rules = [r for _, d in by_kind.get("ClusterRole", []) for r in d["rules"]]
        check(any("nodes" in r["resources"] and {"get", "list", "patch"} <= set(r["verbs"]) for r in rules),
              f"[{label}] ClusterRole lacks nodes get/list/patch")
    else:
        check(pod["spec"].get("automountServiceAccountToken") is False, f"{where}: token mounted")
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
    agent_flags = flags_of("server/agent/main.cc")
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
        avols = check_pod(where, apod, image, volumes_needed_readonly=True,
                          writable={cdi_dir} if cdi_dir else set(), uid0=bool(cdi_dir))
        check(ac.get("command") == ["/usr/local/bin/wsched-agent"], f"{where}: command")
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
        tv, tkey = None, None
        for m in ac["volumeMounts"]:
            if af.get("token_file", "").startswith(m["mountPath"] + "/"):
                tv = avols[m["name"]]
                items = secret_items(tv)
                tkey = next((k for k, p in items.items() if p == os.path.basename(af["token_file"])), None)
        check(tv is not None and tv["secret"]["secretName"] == secret_name and tkey == "agent-token",
              f"{where}: --token_file is not the Secret's agent-token")
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

    # --- the catalog validates ---
    if values["catalog"] and CTL and os.path.exists(CTL):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            cm = next(d for _, d in by_kind["ConfigMap"])
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


def render_set(sets, label, namespace="wsched", strings=()):
    values = render.load_values(CHART, sets=sets, set_strings=strings)
    docs = render.render(CHART, values, "wsched", namespace)
    parsed = []
    for src, text in docs:
        try:
            parsed.append((src, yaml.safe_load(text)))
        except yaml.YAMLError as e:
            check(False, f"[{label}] {src}: {e}")
    validate(parsed, values, namespace, label)
    notes = render.render_notes(CHART, values, "wsched", namespace)
    check(f"-n {namespace} rollout status deploy/wsched" in notes, f"[{label}] NOTES.txt")
    print(f"chart_test: [{label}] {len(parsed)} documents")
    return docs


FULL = [
    "image.tag=1.2.3", "secret.create=true",
    "secret.databaseUrl=postgresql://wsched:pw@db.internal:5432/wsched",
    "secret.agentToken=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    "databaseTls.enabled=true", "databaseTls.clientCert=true",
    "ingress.enabled=true", "ingress.className=nginx", "ingress.host=wsched.example.org",
    "ingress.tlsSecretName=wsched-tls", "actuator.clusterAutoscaler.enabled=true",
    "serviceMonitor.enabled=true", "serviceMonitor.labels={release: prometheus}",
    "networkPolicy.egress.enabled=true", "networkPolicy.egress.databaseTo=[{ipBlock: {cidr: 10.20.0.0/24}}]",
    "agent.tls.enabled=true", "agent.tls.caSecret=wsched-ca", "agent.server=wsched.example.org:443",
    "agent.gpuUsage.enabled=true", "server.replicas=3", "server.podDisruptionBudget.minAvailable=2",
    "server.extraArgs=[--actuator_timeout=2m]", "server.podAnnotations={team: gpu}",
    "serverTls.enabled=true", "serverTls.clientCaSecret=wsched-client-ca",
    "server.requireHashedTokens=true",
    "ingress.annotations={nginx.ingress.kubernetes.io/backend-protocol: GRPCS}",
    "agent.cdi.dir=/run/cdi", "agent.recursiveReadOnly=Enabled",
]
# No CDI spec files: the agent back at user 10001, every hostPath read-only;
# and no recursiveReadOnly (clusters before 1.30).
NO_CDI = ["agent.cdi.enabled=false", "agent.recursiveReadOnly="]
# Mutual TLS required of every caller: only without the chart's agents.
MTLS = ["serverTls.enabled=true", "serverTls.clientCaSecret=wsched-client-ca",
        "serverTls.requireClientCert=true", "agent.enabled=false"]
MINIMAL = ["catalog=", "agent.enabled=false", "networkPolicy.enabled=false", "service.headless=false",
           "server.topologySpreadConstraints=[]"]
MUST_FAIL = [
    (["secret.create=true"], "secret.databaseUrl is required"),
    (["secret.create=true", "secret.databaseUrl=postgresql://x@y/z"], "secret.tokens is required"),
    (["ingress.enabled=true"], "ingress.host is required"),
    (["networkPolicy.egress.enabled=true"], "networkPolicy.egress.databaseTo is required"),
    (["serverTls.enabled=true"], "the agents must connect with TLS too"),
    (["serverTls.enabled=true", "serverTls.requireClientCert=true", "agent.enabled=false"],
     "serverTls.requireClientCert needs serverTls.clientCaSecret"),
    (["serverTls.enabled=true", "serverTls.clientCaSecret=ca", "serverTls.requireClientCert=true",
      "agent.tls.enabled=true"], "wsched-agent has no client certificate"),
    (["agent.pools=[{pool: gpu-l4, gpuUsage: true}]", "agent.gpuUsage.runtimeClassName="],
     None),  # renders; the validation below must then flag nvidia-smi without a runtime
]


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
    default_docs = render_set([], "default")
    render_set(FULL, "full", strings=[
        "secret.tokens=tokens: [{name: ops, token: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, role: admin}]"])
    render_set(MINIMAL, "minimal")
    render_set(MTLS, "mutual-tls")
    render_set(NO_CDI, "no-cdi")
    render_set([], "other-namespace", namespace="gpu-scheduler")
    for sets, message in MUST_FAIL:
        if message is None:
            global quiet
            before, quiet = len(failures), True
            render_set(sets, "negative")
            quiet = False
            flagged = any("nvidia-smi without the NVIDIA runtime" in f for f in failures[before:])
            del failures[before:]
            check(flagged, "nvidia-smi without runtimeClassName is caught")
            continue
        try:
            render.render(CHART, render.load_values(CHART, sets=sets))
            check(False, f"rendering with {sets} must fail with {message!r}")
        except render.TemplateError as e:
            check(message in str(e), f"rendering with {sets}: {e}, want {message!r}")

    text = render.to_text(default_docs)
    header = ("# wsched for kubectl: deploy/helm/wsched rendered with its defaults (release\n"
              "# \"wsched\", namespace \"wsched\") by deploy/helm/render.py. Do not edit; change\n"
              "# the chart and run: tests/deploy/chart_test.py . --update\n")
    want = header + text
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
    try:
        main()
    except render.TemplateError as e:
        check(False, f"render: {e}")
    print(f"chart_test: {passes} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
