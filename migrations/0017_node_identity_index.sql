-- RegisterNode's identity check (docs/security.md "Node identity"): the
-- node that already claims a provider id or one of the GPU UUIDs is found
-- by index. Read from every node's info document, each registration cost
-- a pass over the fleet: 12,000 registrations took minutes instead of
-- seconds.
ALTER TABLE nodes ADD COLUMN gpu_uuids jsonb
  GENERATED ALWAYS AS (jsonb_path_query_array(info, '$.gpus[*].uuid')) STORED;
CREATE INDEX nodes_gpu_uuids ON nodes USING gin (gpu_uuids);
CREATE INDEX nodes_provider_id ON nodes ((info->>'provider_id'));
