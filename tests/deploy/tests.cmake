# Deployment and observability files (docs/deploy.md, docs/observability.md):
# the Helm chart and plain manifests, the container recipe, the alert rules
# and dashboard (promtool), a live server's /metrics, the API and flag
# references, and docs/getting-started.md followed step by step. Included at
# the end of tests/CMakeLists.txt, which defines TEST_PG_PORT and the pg
# fixture.

# Debian's python3, where python3-yaml (deploy/local/install-deps.sh) lives,
# even when another python3 comes first on PATH.
find_program(WSCHED_DEPLOY_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT WSCHED_DEPLOY_PYTHON)
  find_program(WSCHED_DEPLOY_PYTHON NAMES python3 REQUIRED)
endif()
set(WSCHED_DEPLOY_TESTS ${CMAKE_CURRENT_LIST_DIR})

# Renders the chart with real Helm (helm template, helm lint --strict, helm
# package; helm v3.17 from deploy/local/install-deps.sh, found on PATH or as
# $WSCHED_HELM; the test fails without it) with several value sets and
# validates every document and the values schema; the catalog it ships is
# validated by wschedctl.
add_test(NAME chart_render COMMAND ${WSCHED_DEPLOY_PYTHON} ${WSCHED_DEPLOY_TESTS}/chart_test.py
  ${PROJECT_SOURCE_DIR} $<TARGET_FILE:wschedctl>)
# No container engine here: the recipe is linted, and the runtime stage's
# packages are checked against the libraries the built binaries load.
add_test(NAME dockerfile_lint COMMAND ${WSCHED_DEPLOY_PYTHON} ${WSCHED_DEPLOY_TESTS}/dockerfile_lint.py
  ${PROJECT_SOURCE_DIR} $<TARGET_FILE_DIR:wsched-server>)
# promtool check/test rules on deploy/helm/wsched/observability (every alert
# fires in one unit case and stays quiet in another) and the dashboard.
add_test(NAME observability_rules COMMAND ${WSCHED_DEPLOY_PYTHON}
  ${WSCHED_DEPLOY_TESTS}/observability_test.py ${PROJECT_SOURCE_DIR})
# The references against the sources, read at test time: every RPC of the
# protos has its section in docs/api.md (roles as in the access table, an
# example), and every server and agent flag is in its table.
add_test(NAME api_docs COMMAND ${WSCHED_DEPLOY_PYTHON} ${WSCHED_DEPLOY_TESTS}/api_docs_test.py
  ${PROJECT_SOURCE_DIR})
add_test(NAME flags_docs COMMAND ${WSCHED_DEPLOY_PYTHON} ${WSCHED_DEPLOY_TESTS}/flags_docs_test.py
  ${PROJECT_SOURCE_DIR})
# The cluster face's example (deploy/actuators/driver-install-kubernetes-job.sh):
# its Job for sample environments through `kubectl create --dry-run=client`
# (kubectl v1.30 from deploy/local/install-deps.sh; discovery from a stub
# API server on 127.0.0.1, --validate=false), every field checked; and runs
# with a stand-in kubectl playing a Job that completes, fails or hangs.
add_test(NAME driver_install_job COMMAND ${WSCHED_DEPLOY_PYTHON}
  ${WSCHED_DEPLOY_TESTS}/driver_install_job_test.py ${PROJECT_SOURCE_DIR})
set_tests_properties(chart_render dockerfile_lint observability_rules api_docs flags_docs
  driver_install_job PROPERTIES LABELS deploy)

add_test(NAME metrics_live COMMAND ${CMAKE_COMMAND} -E env
  WSCHED_TEST_PG_PORT=${TEST_PG_PORT} WSCHED_PYTHON=${WSCHED_DEPLOY_PYTHON}
  bash ${WSCHED_DEPLOY_TESTS}/metrics_live_test.sh
  $<TARGET_FILE:wsched-server> $<TARGET_FILE:wsched-agent> $<TARGET_FILE:wschedctl>
  ${PROJECT_SOURCE_DIR})
set_tests_properties(metrics_live PROPERTIES FIXTURES_REQUIRED pg LABELS "deploy;integration"
  TIMEOUT 180)

# docs/getting-started.md followed step by step (its marked shell blocks, in
# order) with its own PostgreSQL on port 55471, local processes instead of
# systemd, and the fake 8-GPU node tree; ends with a GPU workspace placed.
add_test(NAME getting_started COMMAND ${CMAKE_COMMAND} -E env
  WSCHED_GS_PG_PORT=55471 WSCHED_PYTHON=${WSCHED_DEPLOY_PYTHON}
  bash ${WSCHED_DEPLOY_TESTS}/getting_started_test.sh
  $<TARGET_FILE:wsched-server> $<TARGET_FILE:wsched-agent> $<TARGET_FILE:wschedctl>
  ${PROJECT_SOURCE_DIR})
set_tests_properties(getting_started PROPERTIES LABELS "deploy;integration" TIMEOUT 180)

# The systemd units as systemd reads them (systemd-analyze verify, the
# hardening's exposure score held) and no secret on their command lines.
add_test(NAME systemd_units COMMAND bash ${WSCHED_DEPLOY_TESTS}/systemd_units_test.sh
  ${PROJECT_SOURCE_DIR} $<TARGET_FILE:wsched-server> $<TARGET_FILE:wsched-agent>)
set_tests_properties(systemd_units PROPERTIES LABELS deploy TIMEOUT 60)

# PostgreSQL failover under load (docs/operations.md "PostgreSQL high
# availability"): a primary and its synchronous standby on ports 55481 and
# 55482 (their own clusters), wsched on a multi-host URL, the primary killed
# and the standby promoted while 8 clients place; no acknowledged placement
# may be missing on the new primary, no answer INTERNAL.
add_test(NAME pg_failover COMMAND ${CMAKE_COMMAND} -E env WSCHED_HA_PG_PORT=55481
  bash ${WSCHED_DEPLOY_TESTS}/pg_failover_test.sh
  $<TARGET_FILE:wsched-server> $<TARGET_FILE:wschedctl> $<TARGET_FILE:wsched-loadgen>
  ${PROJECT_SOURCE_DIR})
set_tests_properties(pg_failover PROPERTIES LABELS "deploy;integration" TIMEOUT 180)

# A PostgreSQL primary that hangs under load (docs/operations.md "Bounded
# waits", docs/architecture.md "Leases"): the same pair on ports 55491 and
# 55492, two replicas, the primary frozen with SIGSTOP and the standby
# promoted; every call answers UNAVAILABLE with DATABASE_UNAVAILABLE and
# RetryInfo, placements resume within 10 s of the promotion, health goes
# NOT_SERVING and back, the leader and the placer step down, never two at once.
add_test(NAME pg_hang COMMAND ${CMAKE_COMMAND} -E env WSCHED_HANG_PG_PORT=55491
  bash ${WSCHED_DEPLOY_TESTS}/pg_hang_test.sh
  $<TARGET_FILE:wsched-server> $<TARGET_FILE:wschedctl> $<TARGET_FILE:wsched-loadgen>
  ${PROJECT_SOURCE_DIR})
# Serial, both: they time the recovery against a bound (first placement
# within 10 s of the promotion), which another failover test sharing the
# machine's two CPUs pushed past it (10.5 s, once in three suite runs).
set_tests_properties(pg_hang PROPERTIES LABELS "deploy;integration" TIMEOUT 180 RUN_SERIAL TRUE)
# The same with the primary cut off (iptables drops its port's packets);
# skipped where iptables cannot change the rules.
add_test(NAME pg_hang_drop COMMAND ${CMAKE_COMMAND} -E env WSCHED_HANG_PG_PORT=55493 HANG_MODE=drop
  bash ${WSCHED_DEPLOY_TESTS}/pg_hang_test.sh
  $<TARGET_FILE:wsched-server> $<TARGET_FILE:wschedctl> $<TARGET_FILE:wsched-loadgen>
  ${PROJECT_SOURCE_DIR})
set_tests_properties(pg_hang_drop PROPERTIES LABELS "deploy;integration" TIMEOUT 180
  SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
