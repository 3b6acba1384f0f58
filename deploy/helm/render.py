#!/usr/bin/env python3
"""Render the wsched Helm chart without helm (which Debian does not ship).

    render.py [CHART] [-f values.yaml]... [--set a.b=VALUE]... [--set-string a.b=TEXT]...
              [--set-file a=PATH]...
              [--release NAME] [--namespace NS] [-o OUT]

Prints the manifests like `helm template`: documents ordered by kind as helm
installs them, each under a "# Source:" line. --set values are parsed as
YAML ("true", "3", "[a, b]"); --set-string and --set-file put text (a file's,
for --set-file) in a value as it is.

It implements the part of Go templates and of Helm's functions that the
chart uses, and fails on anything else, so the chart stays within what both
this renderer and helm render alike. Differences from helm, all stricter:
printing a missing value is an error (helm prints nothing), and printing a
map or list without toYaml is an error.
"""
import argparse
import hashlib
import json
import os
import re
import sys

import yaml


class TemplateError(Exception):
    pass


class _Missing:
    """A map key that is not there: false in conditions, an error when printed."""

    def __init__(self, path):
        self.path = path

    def __bool__(self):
        return False


# --- lexing -------------------------------------------------------------------

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)


def _lex(text, name):
    """Text and action pieces, with {{- and -}} whitespace trimming applied."""
    pieces, pos, trim_next = [], 0, False
    for m in _ACTION.finditer(text):
        chunk = text[pos:m.start()]
        if trim_next:
            chunk = chunk.lstrip(" \t\r\n")
        if m.group(1):
            chunk = chunk.rstrip(" \t\r\n")
        if chunk:
            pieces.append(("text", chunk))
        body = m.group(2).strip()
        line = text.count("\n", 0, m.start()) + 1
        if not (body.startswith("/*") and body.endswith("*/")):
            pieces.append(("action", body, f"{name}:{line}"))
        trim_next = bool(m.group(3))
        pos = m.end()
    chunk = text[pos:]
    if trim_next:
        chunk = chunk.lstrip(" \t\r\n")
    if chunk:
        pieces.append(("text", chunk))
    return pieces


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<raw>`[^`]*`)
  | (?P<num>-?\d+(?:\.\d+)?)
  | (?P<decl>:=)
  | (?P<assign>=)
  | (?P<pipe>\|)
  | (?P<lp>\()
  | (?P<rp>\))
  | (?P<comma>,)
  | (?P<var>\$[A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<field>(?:\.[A-Za-z_][A-Za-z0-9_]*)+|\.)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
""", re.X)


def _tokens(src, where):
    out, pos = [], 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            raise TemplateError(f"{where}: cannot read {src[pos:]!r}")
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group()))
        pos = m.end()
    return out


# --- parsing --------------------------------------------------------------------

def _parse_pipeline(toks, where):
    """A pipeline: [decl] cmd | cmd ... ; a cmd is a list of operands."""
    decl = None
    if len(toks) >= 2 and toks[0][0] == "var" and toks[1][0] in ("decl", "assign"):
        decl = (toks[1][0], toks[0][1])
        toks = toks[2:]
    cmds, cur, depth, i = [], [], 0, 0
    while i < len(toks):
        kind, val = toks[i]
        if kind == "pipe":
            cmds.append(_parse_cmd(cur, where))
            cur = []
        else:
            cur.append(toks[i])
        i += 1
    cmds.append(_parse_cmd(cur, where))
    return {"decl": decl, "cmds": cmds}


def _parse_cmd(toks, where):
    operands, i = [], 0
    while i < len(toks):
        kind, val = toks[i]
        if kind == "lp":
            depth, j = 1, i + 1
            while j < len(toks) and depth:
                depth += {"lp": 1, "rp": -1}.get(toks[j][0], 0)
                j += 1
            if depth:
                raise TemplateError(f"{where}: unbalanced parentheses")
            operands.append(("pipe", _parse_pipeline(toks[i + 1:j - 1], where)))
            i = j
            continue
        if kind in ("rp", "comma", "decl", "assign"):
            raise TemplateError(f"{where}: unexpected {val!r}")
        operands.append((kind, val))
        i += 1
    if not operands:
        raise TemplateError(f"{where}: empty command")
    return operands


def _parse(pieces):
    """Nested nodes; returns (body, defines)."""
    defines = {}
    root = []
    stack = [("root", root, None)]
    for piece in pieces:
        body = stack[-1][1]
        if piece[0] == "text":
            body.append(("text", piece[1]))
            continue
        src, where = piece[1], piece[2]
        word = src.split(None, 1)[0] if src else ""
        rest = src[len(word):].strip()
        if word in ("if", "with", "range"):
            node = {"kind": word, "where": where, "branches": [], "else": None}
            if word == "range":
                toks = _tokens(rest, where)
                names = []
                while len(toks) >= 2 and toks[0][0] == "var" and toks[1][0] in ("comma", "decl"):
                    names.append(toks[0][1])
                    toks = toks[2:]
                node["vars"] = names
                cond = _parse_pipeline(toks, where)
            else:
                cond = _parse_pipeline(_tokens(rest, where), where)
            node["branches"].append((cond, []))
            body.append(node)
            stack.append((word, node["branches"][0][1], node))
        elif word == "else":
            kind, _, node = stack.pop()
            if node is None:
                raise TemplateError(f"{where}: else outside if/with/range")
            if rest.startswith("if "):
                if kind != "if":
                    raise TemplateError(f"{where}: else if inside {kind}")
                cond = _parse_pipeline(_tokens(rest[3:], where), where)
                node["branches"].append((cond, []))
                stack.append((kind, node["branches"][-1][1], node))
            elif rest:
                raise TemplateError(f"{where}: unsupported else {rest!r}")
            else:
                node["else"] = []
                stack.append((kind + "-else", node["else"], node))
        elif word == "end":
            if len(stack) == 1:
                raise TemplateError(f"{where}: end without a block")
            kind, _, node = stack.pop()
            if kind == "define":
                defines[node["name"]] = node["body"]
        elif word == "define":
            m = re.fullmatch(r'"([^"]+)"', rest)
            if not m:
                raise TemplateError(f"{where}: define needs a quoted name")
            node = {"name": m.group(1), "body": []}
            stack.append(("define", node["body"], node))
        elif word in ("template", "block", "break", "continue"):
            raise TemplateError(f"{where}: {word} is not supported; use include")
        else:
            body.append(("action", _parse_pipeline(_tokens(src, where), where), where))
    if len(stack) != 1:
        raise TemplateError(f"unclosed {stack[-1][0]} block")
    return root, defines


# --- values and functions ---------------------------------------------------------

def _truth(v):
    if isinstance(v, _Missing) or v is None:
        return False
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v != 0
    if isinstance(v, (str, list, dict)):
        return len(v) > 0
    return True


def _format(v, where):
    if isinstance(v, _Missing):
        raise TemplateError(f"{where}: {v.path} is not set")
    if v is None:
        raise TemplateError(f"{where}: printing nil")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (int, float, str)):
        return str(v)
    raise TemplateError(f"{where}: printing a {type(v).__name__}; use toYaml")


def _to_yaml(v):
    if isinstance(v, _Missing) or v is None:
        return "null"
    text = yaml.safe_dump(v, default_flow_style=False, sort_keys=True, width=1 << 20,
                          allow_unicode=True)
    if text.endswith("\n...\n"):  # a bare scalar
        text = text[:-4]
    return text.rstrip("\n")


def _indent(n, s):
    pad = " " * int(n)
    return pad + s.replace("\n", "\n" + pad)


def _printf(where, fmt, *args):
    out, args, i = [], list(args), 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        verb = fmt[i + 1] if i + 1 < len(fmt) else ""
        i += 2
        if verb == "%":
            out.append("%")
            continue
        if not args:
            raise TemplateError(f"{where}: printf: too few arguments")
        a = args.pop(0)
        if verb in ("s", "v", "d"):
            out.append(_format(a, where))
        elif verb == "q":
            out.append(json.dumps(_format(a, where)))
        else:
            raise TemplateError(f"{where}: printf verb %{verb} is not supported")
    return "".join(out)


def _required(where, msg, v):
    if v is None or isinstance(v, _Missing) or v == "":
        raise TemplateError(f"{where}: {msg}")
    return v


def _fail(where, msg):
    raise TemplateError(f"{where}: {msg}")


def _and(*a):
    for v in a:
        if not _truth(v):
            return v
    return a[-1]


def _or(*a):
    for v in a:
        if _truth(v):
            return v
    return a[-1]


FUNCS = {
    "quote": lambda w, *a: " ".join(json.dumps(_format(v, w)) for v in a),
    "default": lambda w, d, v=None: v if _truth(v) else d,
    "toYaml": lambda w, v: _to_yaml(v),
    "nindent": lambda w, n, s: "\n" + _indent(n, s),
    "indent": lambda w, n, s: _indent(n, s),
    "printf": _printf,
    "sha256sum": lambda w, s: hashlib.sha256(_format(s, w).encode()).hexdigest(),
    "required": _required,
    "fail": _fail,
    "hasKey": lambda w, d, k: isinstance(d, dict) and k in d,
    "and": lambda w, *a: _and(*a),
    "or": lambda w, *a: _or(*a),
    "not": lambda w, v: not _truth(v),
    "eq": lambda w, a, b: a == b,
    "ne": lambda w, a, b: a != b,
    "trunc": lambda w, n, s: s[:int(n)],
    "trimSuffix": lambda w, suf, s: s[:-len(suf)] if suf and s.endswith(suf) else s,
}


# --- evaluation ---------------------------------------------------------------------

class Renderer:
    def __init__(self, defines):
        self.defines = defines

    def run(self, body, dot):
        out = []
        self._exec(body, dot, [{"$": dot}], out)
        return "".join(out)

    def _lookup_var(self, name, scopes, where):
        for scope in reversed(scopes):
            if name in scope:
                return scope
        raise TemplateError(f"{where}: undefined variable {name}")

    def _field(self, base, path, where, label):
        v = base
        for part in path:
            if isinstance(v, _Missing) or v is None:
                raise TemplateError(f"{where}: nil pointer evaluating {label}")
            if not isinstance(v, dict):
                raise TemplateError(f"{where}: {label}: not a map")
            v = v.get(part, _Missing(label))
            label = label  # the full path names the missing key
        return v

    def _operand(self, op, dot, scopes, where):
        kind, val = op
        if kind == "str":
            return json.loads(val)
        if kind == "raw":
            return val[1:-1]
        if kind == "num":
            return float(val) if "." in val else int(val)
        if kind == "field":
            if val == ".":
                return dot
            return self._field(dot, val[1:].split("."), where, val)
        if kind == "var":
            name, *path = val.split(".")
            base = self._lookup_var(name, scopes, where)[name]
            return self._field(base, path, where, val) if path else base
        if kind == "pipe":
            return self._pipeline(val, dot, scopes, where)
        if kind == "ident":
            if val in ("true", "false"):
                return val == "true"
            if val == "nil":
                return None
            return self._call(val, [], dot, scopes, where)
        raise TemplateError(f"{where}: unexpected {val!r}")

    def _call(self, name, args, dot, scopes, where, piped=None):
        vals = [self._operand(a, dot, scopes, where) for a in args]
        if piped is not None:
            vals.append(piped[0])
        if name == "include":
            if len(vals) != 2 or vals[0] not in self.defines:
                raise TemplateError(f"{where}: include of unknown template {vals[:1]}")
            return Renderer(self.defines).run(self.defines[vals[0]], vals[1])
        if name not in FUNCS:
            raise TemplateError(f"{where}: function {name} is not supported")
        try:
            return FUNCS[name](where, *vals)
        except TypeError as e:
            raise TemplateError(f"{where}: {name}: {e}") from None

    def _pipeline(self, pipe, dot, scopes, where):
        result = None
        for idx, cmd in enumerate(pipe["cmds"]):
            piped = (result,) if idx > 0 else None
            head = cmd[0]
            if head[0] == "ident" and head[1] not in ("true", "false", "nil"):
                result = self._call(head[1], cmd[1:], dot, scopes, where, piped)
            else:
                if len(cmd) != 1 or piped is not None:
                    raise TemplateError(f"{where}: cannot call a value")
                result = self._operand(head, dot, scopes, where)
        if pipe["decl"]:
            kind, name = pipe["decl"]
            if kind == "decl":
                scopes[-1][name] = result
            else:
                self._lookup_var(name, scopes, where)[name] = result
            return None
        return result

    def _exec(self, body, dot, scopes, out):
        for node in body:
            if isinstance(node, dict):
                self._block(node, dot, scopes, out)
            elif node[0] == "text":
                out.append(node[1])
            elif node[0] == "action":
                v = self._pipeline(node[1], dot, scopes, node[2])
                if node[1]["decl"] is None:
                    out.append(_format(v, node[2]))

    def _block(self, node, dot, scopes, out):
        where = node["where"]
        if node["kind"] == "if":
            for cond, body in node["branches"]:
                if _truth(self._pipeline(cond, dot, scopes + [{}], where)):
                    return self._exec(body, dot, scopes + [{}], out)
            if node["else"] is not None:
                self._exec(node["else"], dot, scopes + [{}], out)
            return
        cond, body = node["branches"][0]
        inner = scopes + [{}]
        v = self._pipeline(cond, dot, inner, where)
        if node["kind"] == "with":
            if _truth(v):
                self._exec(body, v, inner, out)
            elif node["else"] is not None:
                self._exec(node["else"], dot, inner, out)
            return
        # range
        if isinstance(v, dict):
            items = [(k, v[k]) for k in sorted(v)]
        elif isinstance(v, list):
            items = list(enumerate(v))
        elif not _truth(v):
            items = []
        else:
            raise TemplateError(f"{where}: range over a {type(v).__name__}")
        if not items and node["else"] is not None:
            return self._exec(node["else"], dot, inner, out)
        names = node["vars"]
        for key, item in items:
            scope = {}
            if len(names) == 1:
                scope[names[0]] = item
            elif len(names) == 2:
                scope[names[0]], scope[names[1]] = key, item
            self._exec(body, item, inner + [scope], out)


# --- the chart ------------------------------------------------------------------------

# helm's install order (pkg/releaseutil/kind_sorter.go); other kinds last.
INSTALL_ORDER = [
    "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
    "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap",
    "StorageClass", "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition",
    "ClusterRole", "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role",
    "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod",
    "ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler",
    "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
]


def _merge(base, over):
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _merge(base[k], v)
        else:
            base[k] = v
    return base


def _set_path(values, dotted, value):
    parts = dotted.split(".")
    cur = values
    for p in parts[:-1]:
        if not isinstance(cur.get(p), dict):
            cur[p] = {}
        cur = cur[p]
    cur[parts[-1]] = value


def load_values(chart, files=(), sets=(), set_files=(), set_strings=()):
    with open(os.path.join(chart, "values.yaml")) as f:
        values = yaml.safe_load(f) or {}
    for path in files:
        with open(path) as f:
            _merge(values, yaml.safe_load(f) or {})
    for item in sets:
        key, _, raw = item.partition("=")
        _set_path(values, key, yaml.safe_load(raw) if raw != "" else "")
    for item in set_strings:
        key, _, raw = item.partition("=")
        _set_path(values, key, raw)
    for item in set_files:
        key, _, path = item.partition("=")
        with open(path) as f:
            _set_path(values, key, f.read())
    return values


def _render_files(chart, values, release, namespace, wanted=None):
    """{template file: rendered text}; every file is parsed, wanted ones run."""
    with open(os.path.join(chart, "Chart.yaml")) as f:
        meta = yaml.safe_load(f)
    tdir = os.path.join(chart, "templates")
    names = sorted(os.listdir(tdir))
    defines, bodies = {}, {}
    for name in names:
        with open(os.path.join(tdir, name)) as f:
            body, defs = _parse(_lex(f.read(), name))
        defines.update(defs)
        bodies[name] = body
    dot = {
        "Values": values,
        "Release": {"Name": release, "Namespace": namespace, "Service": "Helm",
                    "IsInstall": True, "IsUpgrade": False},
        "Chart": {"Name": meta["name"], "Version": meta["version"],
                  "AppVersion": meta.get("appVersion", "")},
    }
    if wanted is None:
        wanted = [n for n in names if not n.startswith("_") and n.endswith((".yaml", ".yml"))]
    return {name: Renderer(defines).run(bodies[name], dot) for name in wanted}


def render(chart, values, release="wsched", namespace="wsched"):
    """[(source, text)] of every non-empty document, in install order."""
    with open(os.path.join(chart, "Chart.yaml")) as f:
        chart_name = yaml.safe_load(f)["name"]
    docs = []
    for name, text in sorted(_render_files(chart, values, release, namespace).items()):
        for i, doc in enumerate(re.split(r"(?m)^---[ \t]*$", text)):
            if not doc.strip():
                continue
            try:
                parsed = yaml.safe_load(doc)
            except yaml.YAMLError as e:
                raise TemplateError(f"{name}: rendered document {i} is not YAML: {e}") from None
            if parsed is None:
                continue  # comments only
            kind = parsed.get("kind", "") if isinstance(parsed, dict) else ""
            order = INSTALL_ORDER.index(kind) if kind in INSTALL_ORDER else len(INSTALL_ORDER)
            docs.append((order, name, i, f"{chart_name}/templates/{name}", doc.strip("\n")))
    docs.sort(key=lambda d: d[:3])
    return [(d[3], d[4]) for d in docs]


def render_notes(chart, values, release="wsched", namespace="wsched"):
    """templates/NOTES.txt rendered, as helm prints it after an install."""
    return _render_files(chart, values, release, namespace, ["NOTES.txt"])["NOTES.txt"]


def to_text(docs):
    return "".join(f"---\n# Source: {src}\n{text}\n" for src, text in docs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wsched")
    ap.add_argument("chart", nargs="?", default=here)
    ap.add_argument("-f", "--values", action="append", default=[])
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--set-string", action="append", default=[])
    ap.add_argument("--set-file", action="append", default=[])
    ap.add_argument("--release", default="wsched")
    ap.add_argument("--namespace", default="wsched")
    ap.add_argument("-o", "--output")
    args = ap.parse_args(argv)
    try:
        values = load_values(args.chart, args.values, args.set, args.set_file, args.set_string)
        text = to_text(render(args.chart, values, args.release, args.namespace))
    except TemplateError as e:
        print(f"render.py: {e}", file=sys.stderr)
        return 1
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
