-- MIG re-layouts under way (docs/placement.md "Layouts by demand"): the
-- scaling leader's orders to cut one GPU of a by_demand pool anew, at most
-- one per node. Every replica reads them each second, to keep placement off
-- the GPU and to hand the order to the node's agent with its answers; the
-- leader replaces the whole set when it changes (a handful of rows).
CREATE TABLE mig_relayouts (
  node text PRIMARY KEY,
  pool text NOT NULL,
  gpu_index integer NOT NULL CHECK (gpu_index >= 0),
  -- [{"profile": "3g.71gb", "start": 4}, ...], by start.
  layout jsonb NOT NULL,
  for_profile text NOT NULL,
  ordered_at timestamptz NOT NULL,
  leader text NOT NULL
);
