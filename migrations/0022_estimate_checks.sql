-- Estimates that are checked (docs/placement.md "Estimates that are
-- checked"): the time-to-GPU estimate a workspace was given when it was
-- queued (p50 and p90, when the server gave it, by the server's clock), and
-- once the queue placed it, how long that took and when it was checked.
-- Written apart from the group commit, by two small updates of the row:
-- one after the workspace is queued, one after the queue placed it.
ALTER TABLE workspaces
  ADD COLUMN estimate_given_at timestamptz,
  ADD COLUMN estimate_p50_seconds double precision CHECK (estimate_p50_seconds >= 0),
  ADD COLUMN estimate_p90_seconds double precision CHECK (estimate_p90_seconds >= 0),
  ADD COLUMN estimate_took_seconds double precision CHECK (estimate_took_seconds >= 0),
  ADD COLUMN estimate_checked_at timestamptz;
-- The accuracy metric reads the placements checked in its window.
CREATE INDEX workspaces_estimate_checked ON workspaces (estimate_checked_at)
  WHERE estimate_checked_at IS NOT NULL;
