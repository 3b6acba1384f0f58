#!/usr/bin/env python3
"""Checks the alert rules and the Grafana dashboard without a server.

    observability_test.py SOURCE_DIR

- `promtool check rules` on deploy/helm/wsched/observability/alerts.yaml
  (the chart's PrometheusRule is made from it: tests/deploy/chart_test.py)
  and `promtool test rules` on alerts_test.yaml beside it, whose unit cases
  must include, for every alert, one where it fires and one where it stays
  quiet;
- every alert has a severity label and summary, description and runbook
  annotations, and its runbook points at a section of docs/observability.md;
- the dashboard parses, its panel ids are unique, every panel has a title,
  a description, a grid position and queries, every panel title is described
  in docs/observability.md, and every query is valid PromQL: the queries,
  with Grafana's variables replaced, are given to `promtool check rules` as
  recording rules.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
OBS = os.path.join(SRC, "deploy/helm/wsched/observability")
failures, passes = [], 0


def check(ok, what):
    global passes
    if ok:
        passes += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def promtool(*args, cwd=OBS):
    r = subprocess.run(["promtool", *args], cwd=cwd, capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    print(f"promtool {' '.join(args)}: exit {r.returncode}")
    if r.returncode:
        print("    | " + out.replace("\n", "\n    | "), file=sys.stderr)
    return r.returncode == 0


def anchors(markdown):
    """GitHub-style anchors of the markdown's headings."""
    out = set()
    for title in re.findall(r"^#+\s+(.*)$", markdown, re.M):
        a = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        out.add(a)
    return out


def main():
    check(promtool("check", "rules", "alerts.yaml"), "promtool check rules alerts.yaml")
    check(promtool("test", "rules", "alerts_test.yaml"), "promtool test rules alerts_test.yaml")

    with open(os.path.join(SRC, "docs/observability.md")) as f:
        doc = f.read()
    doc_anchors = anchors(doc)
    with open(os.path.join(OBS, "alerts.yaml")) as f:
        rules = yaml.safe_load(f)
    names = []
    for group in rules["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert")
            if not name:
                continue
            names.append(name)
            check(rule.get("labels", {}).get("severity") in ("critical", "warning", "info"),
                  f"{name}: severity label")
            ann = rule.get("annotations", {})
            for key in ("summary", "description", "runbook"):
                check(bool(ann.get(key)), f"{name}: annotation {key}")
            runbook = ann.get("runbook", "")
            page, _, anchor = runbook.partition("#")
            check(page == "docs/observability.md" and anchor in doc_anchors,
                  f"{name}: runbook {runbook!r} is no section of docs/observability.md")
    check(len(names) == len(set(names)), "alert names are unique")
    # Every alert has a unit case where it fires and one where it stays
    # quiet (promtool checks both; an empty exp_alerts is a quiet case).
    with open(os.path.join(OBS, "alerts_test.yaml")) as f:
        cases = [t for case in yaml.safe_load(f)["tests"] for t in case.get("alert_rule_test", [])]
    fires = {t["alertname"] for t in cases if t.get("exp_alerts")}
    quiet = {t["alertname"] for t in cases if not t.get("exp_alerts")}
    tested = fires | quiet
    check(tested <= set(names), f"unit cases of unknown alerts {sorted(tested - set(names))}")
    check(set(names) <= fires, f"alerts without a unit case that fires: {sorted(set(names) - fires)}")
    check(set(names) <= quiet, f"alerts without a unit case that stays quiet: {sorted(set(names) - quiet)}")

    with open(os.path.join(OBS, "dashboard.json")) as f:
        dash = json.load(f)
    ids = [p["id"] for p in dash["panels"]]
    check(len(ids) == len(set(ids)), "dashboard panel ids are unique")
    exprs = []
    for p in dash["panels"]:
        if p["type"] == "row":
            continue
        title = p.get("title", "")
        check(bool(title) and bool(p.get("description")), f"panel {p['id']}: title and description")
        check(all(k in p.get("gridPos", {}) for k in ("h", "w", "x", "y")), f"panel {title}: gridPos")
        check(bool(p.get("targets")), f"panel {title}: no queries")
        check(f"**{title}**" in doc, f"panel {title!r} is not described in docs/observability.md")
        for t in p.get("targets", []):
            check(bool(t.get("expr")) and bool(t.get("refId")), f"panel {title}: target without expr")
            exprs.append((title, t.get("expr", "")))
    # Grafana's variables, replaced by what they stand for at query time.
    subst = {"$__rate_interval": "5m", "$__range": "6h", "$__interval": "1m", "$pool": ".*", "$class": ".*"}
    records = []
    for i, (title, expr) in enumerate(exprs):
        for k, v in subst.items():
            expr = expr.replace(k, v)
        check("$" not in expr, f"panel {title}: unknown variable in {expr}")
        records.append({"record": f"dashboard:query_{i}", "expr": expr})
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": records}]}, f)
        path = f.name
    try:
        check(promtool("check", "rules", path), "dashboard queries are valid PromQL")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
    print(f"observability_test: {passes} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
