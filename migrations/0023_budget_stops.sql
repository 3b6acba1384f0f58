-- Spending limits act on running workspaces (docs/billing.md "Spending
-- limits"). The scaling leader writes on a placed workspace's record what
-- a limit told it (a new version and a change-log entry, so the watchers
-- of every replica see it):
--   {"kind": "warning" | "threshold", "scope": "org:o-1", "placed_at": µs,
--    "stops_at": µs, "percent": 80, "spent": µGPU-s, "limit": µGPU-s,
--    "period_end": µs}
-- placed_at names the placement it was written for: a restart places the
-- workspace again (a later placed_at) and the old mark no longer counts.
ALTER TABLE workspaces ADD COLUMN budget_mark jsonb;

-- A workspace stopped by a block_and_stop limit ends its placement with
-- end reason "budget".
ALTER TABLE usage_records DROP CONSTRAINT usage_records_end_reason_check;
ALTER TABLE usage_records ADD CONSTRAINT usage_records_end_reason_check
  CHECK (end_reason IN ('stopped', 'lost', 'node_removed', 'idle', 'budget'));

-- The thresholds told per scope: percent `percent` of scope's limit is
-- told again only once the period it was told in has ended (period_end:
-- a calendar month's end; for a rolling window, when what was counted
-- then has left it). The insert that claims a row is the one that tells.
CREATE TABLE budget_thresholds_told (
  scope      text        NOT NULL,
  percent    integer     NOT NULL CHECK (percent BETWEEN 1 AND 1000),
  told_at    timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  PRIMARY KEY (scope, percent)
);
