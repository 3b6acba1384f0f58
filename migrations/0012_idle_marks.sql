-- The idle-GPU policy (docs/catalog.md "Idle GPUs"). The replica that
-- receives a node's heartbeats judges its GPU samples; when a placed
-- workspace's GPUs have been idle long enough it marks the workspace's
-- record (a new version and a change-log entry, like any write), so the
-- watchers on every replica see the IDLE event, and clears the mark when a
-- GPU is used again. idle_since is the first idle sample, idle_stops_at the
-- time a class with action stop stops it (NULL for notify). A restart
-- places the workspace without a mark.
ALTER TABLE workspaces
  ADD COLUMN idle_since timestamptz,
  ADD COLUMN idle_stops_at timestamptz,
  ADD CONSTRAINT workspaces_idle_stop_after_since
    CHECK (idle_stops_at IS NULL OR (idle_since IS NOT NULL AND idle_stops_at >= idle_since));
