#!/usr/bin/env python3
"""Checks that every wsched metric the alert rules and the dashboard use exists.

    metric_names.py SOURCE_DIR SCRAPE_FILE

A name passes when its family is in the scrape of a live server. prometheus-cpp
prints no family that has no series yet, so a family that only appears after
an event the test did not cause passes only if the server's source registers
it (a .Name("...") or Family("...") in server/, outside tests), and the test
says so. Label names used in selectors (name{label=...}) must exist on the
family's series in the scrape.
"""
import glob
import json
import os
import re
import sys

import yaml

SRC, SCRAPE = sys.argv[1], sys.argv[2]
NAME = re.compile(r"\b(wsched_[a-z0-9_]+)")
SELECTOR = re.compile(r"\b(wsched_[a-z0-9_]+)\{([^}]*)\}")


def used_exprs():
    with open(os.path.join(SRC, "deploy/helm/wsched/observability/alerts.yaml")) as f:
        rules = yaml.safe_load(f)
    for g in rules["groups"]:
        for r in g["rules"]:
            yield f"alert {r.get('alert') or r.get('record')}", r["expr"]
    with open(os.path.join(SRC, "deploy/helm/wsched/observability/dashboard.json")) as f:
        dash = json.load(f)
    for p in dash["panels"]:
        for t in p.get("targets", []):
            yield f"panel \"{p['title']}\"", t["expr"]
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            yield f"variable ${v['name']}", q["query"]


def scrape_families(path):
    """{family: set of label names} from the text exposition."""
    types, labels = {}, {}
    with open(path) as f:
        for line in f:
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split()
                types[name] = kind
                labels.setdefault(name, set())
            elif line.strip() and not line.startswith("#"):
                m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*?)\})?\s", line)
                if not m:
                    continue
                name = m.group(1)
                for suffix in ("_bucket", "_sum", "_count"):
                    base = name[: -len(suffix)]
                    if name.endswith(suffix) and types.get(base) in ("histogram", "summary"):
                        name = base
                keys = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""))
                labels.setdefault(name, set()).update(keys - {"le", "quantile"})
    return types, labels


def registered_in_source():
    """{name: (file, type)} of the families the server registers."""
    names = {}
    for path in glob.glob(os.path.join(SRC, "server/**/*.cc"), recursive=True):
        if path.endswith("_test.cc"):
            continue
        with open(path) as f:
            text = f.read()
        rel = os.path.relpath(path, SRC)
        for kind, n in re.findall(r'Build(\w+)\(\)\s*\.Name\(\s*"(wsched_[a-z0-9_]+)"', text):
            names[n] = (rel, kind.lower())
        for n, kind in re.findall(r'Family\(\s*"(wsched_[a-z0-9_]+)",[^;]*?MetricType::(\w+)', text, re.S):
            names[n] = (rel, kind.lower())
    return names


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) in ("histogram", "summary"):
            return name[: -len(suffix)]
    return name


def main():
    types, labels = scrape_families(SCRAPE)
    source = registered_in_source()
    passed = failed = fallback = 0
    all_types = {n: kind for n, (_, kind) in source.items()}
    all_types.update(types)
    seen = {}
    for where, expr in used_exprs():
        for name in NAME.findall(expr):
            seen.setdefault(family_of(name, all_types), []).append(where)
        for name, sel in SELECTOR.findall(expr):
            fam = family_of(name, all_types)
            if fam not in labels:
                continue
            for key in re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", sel):
                if key in labels[fam] or not labels[fam] and fam in types:
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL: {where}: {fam} has no label {key!r} (has {sorted(labels[fam])})")
    for fam, wheres in sorted(seen.items()):
        if fam in types or fam in labels:
            passed += 1
        elif fam in source:
            passed += 1
            fallback += 1
            print(f"note: {fam} has no series yet on this server; registered in {source[fam][0]}"
                  f" (used by {wheres[0]})")
        else:
            failed += 1
            print(f"FAIL: {fam} (used by {', '.join(sorted(set(wheres)))}) is neither in the scrape "
                  "nor registered in server/")
    print(f"metric_names: {len(seen)} metrics used; {len(seen) - fallback} in the scrape, "
          f"{fallback} only in the source")
    print(f"metric_names: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
