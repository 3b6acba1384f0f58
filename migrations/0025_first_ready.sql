-- A workspace's first ready (docs/placement.md "Estimates that are
-- checked"): the control plane reports when a placed workspace first
-- became ready (ReportWorkspaceReady). The row keeps that time, so the
-- first report of a placement wins on every replica and across restarts
-- (a restart of the workspace clears it), and the pool learns a sample of
-- kind first_ready: from the placement to that report.
ALTER TABLE workspaces ADD COLUMN ready_at timestamptz;
ALTER TABLE timing_samples DROP CONSTRAINT timing_samples_kind_check;
ALTER TABLE timing_samples ADD CONSTRAINT timing_samples_kind_check
  CHECK (kind IN ('node_start', 'driver_install', 'cloud_start', 'node_boot', 'first_ready'));
