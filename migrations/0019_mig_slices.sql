-- MIG slices (docs/catalog.md "Slices of a GPU"; docs/billing.md "Slices").
--
-- A slice is held as a whole GPU is: one gpu_holds row, keyed by the
-- slice's own UUID ("MIG-..."), so the primary key makes a second holder
-- impossible whatever a replica's snapshot believes. gpu_index is the
-- parent GPU's, gpu_instance the slice's GPU instance on it (-1 for a GPU
-- held whole), compute_slices its share of the GPU in sevenths (7 for a
-- whole GPU): what the org GPU quota counts. A whole hold and a slice of
-- the same GPU never meet: a GPU in MIG mode is never handed out whole and
-- one out of it has no slices (docs/placement.md "Slices").
ALTER TABLE gpu_holds ADD COLUMN gpu_instance integer NOT NULL DEFAULT -1;
ALTER TABLE gpu_holds ADD COLUMN compute_slices smallint NOT NULL DEFAULT 7
  CHECK (compute_slices BETWEEN 1 AND 7);
ALTER TABLE gpu_holds DROP CONSTRAINT gpu_holds_node_name_gpu_index_key;
ALTER TABLE gpu_holds ADD CONSTRAINT gpu_holds_node_gpu_instance_key
  UNIQUE (node_name, gpu_index, gpu_instance);

-- A slice's usage: the profile it held and its share of the GPU's compute
-- (mig_compute_slices / 7); gpu_count stays the GPUs held whole (0 for a
-- slice). Read from the placement document (documents/hand_off_document.cc:
-- "slice": {"profile", "compute_slices"}).
ALTER TABLE usage_records ADD COLUMN mig_profile text NOT NULL DEFAULT '';
ALTER TABLE usage_records ADD COLUMN mig_compute_slices smallint NOT NULL DEFAULT 0
  CHECK (mig_compute_slices BETWEEN 0 AND 7);

CREATE OR REPLACE VIEW usage_intervals AS
  SELECT started_at, workspace_id, ended_at, end_reason, org_id, project_id, user_id,
         class_id, pool, node_name, gpu_count, gpu_models, cpu_millis, memory_bytes,
         mig_profile, mig_compute_slices
    FROM usage_records
  UNION ALL
  SELECT w.placed_at, w.id, NULL, NULL, w.org_id, w.project_id, w.user_id, w.class_id,
         COALESCE(w.pool, ''), COALESCE(w.node_name, ''), w.gpu_count,
         COALESCE(jsonb_path_query_array(w.placement, '$.gpus[*].model'), '[]'),
         w.cpu_millis, w.memory_bytes,
         COALESCE(w.placement->'slice'->>'profile', ''),
         COALESCE((w.placement->'slice'->>'compute_slices')::smallint, 0)
    FROM workspaces w
   WHERE w.state = 'placed' AND w.placed_at IS NOT NULL;
