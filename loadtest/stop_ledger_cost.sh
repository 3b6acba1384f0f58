#!/usr/bin/env bash
# What writing the usage record costs a stop, in PostgreSQL, measured four
# ways in one run (docs/performance-history.md, "The usage record on the stop path"):
#   none         the stop batch's statements without a ledger (the baseline)
#   statement    one INSERT ... SELECT per batch before the stop, as
#                store/write_batch.cc queues it (what wsched does)
#   row_trigger  an AFTER UPDATE row trigger on workspaces
#   set_trigger  an AFTER UPDATE statement trigger over the transition tables
# Each round puts 16 placed GPU workspaces back to placed (the same work for
# every variant, not timed) and stops them like the group commit: [ledger
# write], the stop UPDATE, the hold DELETE; the server's own clock times the
# stop statements. Variants run interleaved, REPS times, each on a fresh
# copy of a database migrated with migrations/*.sql.
#
#   loadtest/stop_ledger_cost.sh PORT        # a PostgreSQL 15 on 127.0.0.1:PORT
#
# Env: ROUNDS (500 rounds of 16 stops), REPS (3), VARIANTS (all four).
set -euo pipefail

PORT=${1:?usage: stop_ledger_cost.sh PORT}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${ROUNDS:-500}
REPS=${REPS:-3}
VARIANTS=${VARIANTS:-none statement row_trigger set_trigger}
PSQL=(psql -h 127.0.0.1 -p "$PORT" -U postgres -q -v ON_ERROR_STOP=1)
TEMPLATE=stop_ledger_template
RUN=stop_ledger_run

# The columns a record takes from a placed workspace row (alias `w`), as
# server/store/usage_repository.cc selects them.
COLUMNS="started_at, workspace_id, ended_at, end_reason, org_id, project_id, user_id, class_id,
  pool, node_name, gpu_count, gpu_models, cpu_millis, memory_bytes"
values_of() {
  echo "$1.placed_at, $1.id, now(), 'stopped', $1.org_id, $1.project_id, $1.user_id, $1.class_id,
  COALESCE($1.pool, ''), COALESCE($1.node_name, ''), $1.gpu_count,
  COALESCE(jsonb_path_query_array($1.placement, '\$.gpus[*].model'), '[]'), $1.cpu_millis,
  $1.memory_bytes"
}

"${PSQL[@]}" -c "DROP DATABASE IF EXISTS $RUN" -c "DROP DATABASE IF EXISTS $TEMPLATE" \
  -c "CREATE DATABASE $TEMPLATE"
for migration in "$ROOT"/migrations/*.sql; do "${PSQL[@]}" -d "$TEMPLATE" -f "$migration"; done
"${PSQL[@]}" -d "$TEMPLATE" <<SQL
INSERT INTO nodes (name, pool, info, state, driver_state, alloc_cpu_millis, alloc_memory_bytes)
VALUES ('n1', 'p', '{}', 'ready', 'ready', 1000000000, 1000000000000000);
INSERT INTO workspaces (id, org_id, project_id, user_id, class_id, class_source, explanation, state,
                        node_name, pool, cpu_millis, memory_bytes, gpu_count, placement, placed_at)
SELECT 'w' || i, 'o-' || (i % 7), 'p-' || (i % 31), 'u', 'gpu-1x', 'request', '', 'placed', 'n1',
       'p', 11000, 85899345920, 1,
       jsonb_build_object('gpus', jsonb_build_array(jsonb_build_object('index', i, 'uuid',
         'GPU-' || i, 'pci_address', '', 'model', 'NVIDIA H100 80GB HBM3'))),
       now() - interval '1 hour'
FROM generate_series(1, 2000) i;
INSERT INTO gpu_holds (gpu_uuid, node_name, gpu_index, workspace_id)
SELECT 'GPU-' || i, 'n1', i, 'w' || i FROM generate_series(1, 2000) i;
ANALYZE;
CREATE FUNCTION usage_on_end() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
  INSERT INTO usage_records ($COLUMNS) SELECT $(values_of "o") FROM (SELECT OLD.*) o
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END \$\$;
CREATE FUNCTION usage_on_end_set() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
  INSERT INTO usage_records ($COLUMNS) SELECT $(values_of "o")
  FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.state = 'placed' AND n.state <> 'placed'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END \$\$;
SQL

for rep in $(seq "$REPS"); do
  for variant in $VARIANTS; do
    "${PSQL[@]}" -c "DROP DATABASE IF EXISTS $RUN" -c "CREATE DATABASE $RUN TEMPLATE $TEMPLATE"
    case $variant in
      row_trigger)
        "${PSQL[@]}" -d "$RUN" -c "CREATE TRIGGER usage_end AFTER UPDATE ON workspaces FOR EACH ROW
          WHEN (OLD.state = 'placed' AND NEW.state <> 'placed') EXECUTE FUNCTION usage_on_end()" ;;
      set_trigger)
        "${PSQL[@]}" -d "$RUN" -c "CREATE TRIGGER usage_end AFTER UPDATE ON workspaces
          REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
          EXECUTE FUNCTION usage_on_end_set()" ;;
    esac
    "${PSQL[@]}" -d "$RUN" 2>&1 <<SQL | sed -n 's/.*NOTICE:  //p'
DO \$\$
DECLARE
  ids text[];
  t0 timestamptz;
  spent interval := '0';
BEGIN
  FOR r IN 1..$ROUNDS LOOP
    ids := ARRAY(SELECT 'w' || (((r * 16 + k) % 2000) + 1) FROM generate_series(0, 15) k);
    UPDATE workspaces SET state = 'placed', stopped_at = NULL,
      placed_at = now() - interval '1 hour' + r * interval '1 millisecond' WHERE id = ANY(ids);
    INSERT INTO gpu_holds (gpu_uuid, node_name, gpu_index, workspace_id)
      SELECT 'GPU-' || substr(i, 2), 'n1', substr(i, 2)::int, i FROM unnest(ids) i
      ON CONFLICT DO NOTHING;
    t0 := clock_timestamp();
    IF '$variant' = 'statement' THEN
      INSERT INTO usage_records ($COLUMNS) SELECT $(values_of "w")
      FROM workspaces w JOIN unnest(ids) AS s(id) ON s.id = w.id
      WHERE w.state = 'placed' AND w.placed_at IS NOT NULL ON CONFLICT DO NOTHING;
    END IF;
    UPDATE workspaces SET state = 'stopped', stopped_at = COALESCE(stopped_at, now()),
      version = nextval('entity_versions') WHERE id = ANY(ids);
    DELETE FROM gpu_holds WHERE workspace_id = ANY(ids);
    spent := spent + (clock_timestamp() - t0);
  END LOOP;
  RAISE NOTICE '% % us per stop (% stops, % records)', rpad('$variant', 12),
    round(extract(epoch FROM spent) * 1e6 / ($ROUNDS * 16), 1), $ROUNDS * 16,
    (SELECT count(*) FROM usage_records);
END \$\$;
SQL
  done
done
"${PSQL[@]}" -c "DROP DATABASE IF EXISTS $RUN" -c "DROP DATABASE IF EXISTS $TEMPLATE"
