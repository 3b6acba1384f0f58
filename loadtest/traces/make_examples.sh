#!/usr/bin/env bash
# Regenerates the example trace, the simulator's results on it and the chart
# in docs/scaling.md ("Choosing a warm buffer"); with --check, changes
# nothing and fails when any of them differs from what is committed (ctest
# simulate_examples), so the docs show what this code computes.
#
#   loadtest/traces/make_examples.sh [--check] [BUILD]     (BUILD: default build)
set -euo pipefail
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
ctl="$build/bin/wschedctl"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# A synthetic week (server/simulate/synthetic.h): 2,000 workspaces, seed 1.
"$ctl" simulate trace --workspaces=2000 --days=7 --seed=1 > "$out/week-2000.csv"
# classes/saas.yaml as shipped (H100 warm buffer 2 on weekdays 08:00-18:00
# Europe/Berlin, no scale-down then) against a warm buffer of 0, 1 and 4;
# nodes take 5 minutes to start. The chart shows the catalog and wb0.
"$ctl" simulate --catalog="$root/classes/saas.yaml" --trace="$out/week-2000.csv" --node-start=5m \
  --variant=wb0:pool.gpu-h100.warm_buffer=0 --chart="$out/simulate-saas.svg" > /dev/null
"$ctl" simulate --catalog="$root/classes/saas.yaml" --trace="$out/week-2000.csv" --node-start=5m \
  --variant=wb0:pool.gpu-h100.warm_buffer=0 --variant=wb1:pool.gpu-h100.warm_buffer=1 \
  --variant=wb4:pool.gpu-h100.warm_buffer=4 \
  --variant=wb2-anytime:pool.gpu-h100.warm_buffer=2,pool.gpu-h100.scale_down.schedule=none \
  > "$out/saas-results.txt"

# MIG slices (docs/scaling.md "Fixed or by-demand MIG layouts"): a week of
# 2,000 slice workspaces, three in four a 1g, on loadtest/traces/mig.yaml's
# H200 pool cut [3g, 2g, 1g, 1g] against seven 1g, and by demand from each.
"$ctl" simulate trace --workspaces=2000 --days=7 --seed=1 --mix=gpu-1g=0.75,gpu-3g=0.25 \
  --burst-class=gpu-1g > "$out/mig-week-2000.csv"
seven_1g=1g.18gb/1g.18gb/1g.18gb/1g.18gb/1g.18gb/1g.18gb/1g.18gb
"$ctl" simulate --catalog="$here/mig.yaml" --trace="$out/mig-week-2000.csv" --node-start=5m \
  --variant="fixed-7x1g:pool.gpu-h200.mig.profiles=$seven_1g" \
  --variant=by-demand:pool.gpu-h200.mig.layout=by_demand \
  --variant=by-demand-7x1g:pool.gpu-h200.mig.layout=by_demand,pool.gpu-h200.mig.profiles= \
  > "$out/mig-results.txt"

# A spending limit (docs/scaling.md "Replaying a spending limit"): the
# week's busiest org, org-00, at 100 GPU-hours a month, blocking new work
# or also stopping, and at 40 GPU-hours a Berlin month.
"$ctl" simulate --catalog="$root/classes/saas.yaml" --trace="$out/week-2000.csv" --node-start=5m \
  --set=org.org-00.gpu_hours_limit=100 --variant=stop:org.org-00.limit_action=block_and_stop \
  --variant=berlin-40:org.org-00.limit_period=month:Europe/Berlin,org.org-00.gpu_hours_limit=40 \
  > "$out/limits-results.txt"

status=0
for pair in "week-2000.csv:$here/week-2000.csv" "saas-results.txt:$here/saas-results.txt" \
            "simulate-saas.svg:$root/docs/simulate-saas.svg" \
            "mig-week-2000.csv:$here/mig-week-2000.csv" "mig-results.txt:$here/mig-results.txt" \
            "limits-results.txt:$here/limits-results.txt"; do
  made="$out/${pair%%:*}" committed="${pair#*:}"
  if [ "$check" = 1 ]; then
    if ! cmp -s "$made" "$committed"; then
      echo "$committed differs from what $0 makes now; run it without --check and commit" >&2
      status=1
    fi
  else
    cp "$made" "$committed"
    echo "wrote $committed"
  fi
done
exit $status
