-- Driver rollouts (docs/operations.md "Driver rollouts"): the driver a
-- pool's rollout released a node to install while its older one still
-- works, and when (its drain deadline counts from then).
ALTER TABLE nodes ADD COLUMN driver_released text NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN driver_released_at timestamptz;

-- One row per pool whose rollout is under way: its canary, and whether it
-- is paused (by an admin, or by the canary's failure) and why. The scaling
-- leader writes it; any replica reads it for `wschedctl driver rollout`.
CREATE TABLE driver_rollouts (
  pool text PRIMARY KEY,
  canary text NOT NULL DEFAULT '',
  paused boolean NOT NULL DEFAULT false,
  reason text NOT NULL DEFAULT '',
  canary_failure_seen boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
