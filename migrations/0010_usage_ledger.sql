-- The usage ledger (docs/billing.md): one row per ended placement, written
-- in the transaction that ends it (a stop in the group commit, a node
-- marked lost, a node removed; server/store/usage_repository.h), so a
-- placement that ended has exactly one record and one that did not has
-- none. started_at is the workspace's placed_at, ended_at that
-- transaction's now(): both by the database's clock, so whichever replica
-- ended it writes the same row. The primary key is the placement itself
-- (a restarted workspace is placed again at a later placed_at) and the
-- listing order (range queries by start walk it; an org or project filter
-- is checked on those rows: an index per filter would cost every stop
-- more than it saves an export). Rows are not the workspaces' rows: the
-- workspaces retention sweep leaves them alone; --usage_retention deletes
-- them, oldest ended first, in small batches (the index on ended_at).
CREATE TABLE usage_records (
  started_at   timestamptz NOT NULL,
  workspace_id text        NOT NULL,
  ended_at     timestamptz NOT NULL,
  end_reason   text        NOT NULL
               CHECK (end_reason IN ('stopped', 'lost', 'node_removed', 'idle')),
  org_id       text        NOT NULL,
  project_id   text        NOT NULL,
  user_id      text        NOT NULL,
  class_id     text        NOT NULL,
  pool         text        NOT NULL,
  node_name    text        NOT NULL,
  gpu_count    integer     NOT NULL CHECK (gpu_count >= 0),
  -- A JSON array of one model name per GPU, in index order, as the
  -- placement handed them out: jsonb_path_query_array of the placement
  -- document (documents/hand_off_document.cc, schema 1: "gpus": [{"model":
  -- ...}]), one builtin call per row on the stop path.
  gpu_models   jsonb       NOT NULL DEFAULT '[]',
  cpu_millis   bigint      NOT NULL CHECK (cpu_millis >= 0),
  memory_bytes bigint      NOT NULL CHECK (memory_bytes >= 0),
  PRIMARY KEY (started_at, workspace_id),
  CHECK (ended_at >= started_at)
);
CREATE INDEX usage_records_ended ON usage_records (ended_at);

-- Ended placements and the open ones (placed now, counted up to the
-- reader's now()): what ListUsage and SummarizeUsage read. An open row has
-- no ended_at and no end_reason.
CREATE VIEW usage_intervals AS
  SELECT started_at, workspace_id, ended_at, end_reason, org_id, project_id, user_id,
         class_id, pool, node_name, gpu_count, gpu_models, cpu_millis, memory_bytes
    FROM usage_records
  UNION ALL
  SELECT w.placed_at, w.id, NULL, NULL, w.org_id, w.project_id, w.user_id, w.class_id,
         COALESCE(w.pool, ''), COALESCE(w.node_name, ''), w.gpu_count,
         COALESCE(jsonb_path_query_array(w.placement, '$.gpus[*].model'), '[]'),
         w.cpu_millis, w.memory_bytes
    FROM workspaces w
   WHERE w.state = 'placed' AND w.placed_at IS NOT NULL;
