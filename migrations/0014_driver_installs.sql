-- Driver installs that agents run themselves (docs/operations.md "Driver
-- installs"): the kernel whose install a node's agent has started, and what
-- the last failed install said (its message and log tail), shown in the
-- node's driver detail and the pending reason until the next attempt.
ALTER TABLE nodes ADD COLUMN driver_installing_kernel text NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN driver_failure text NOT NULL DEFAULT '';

-- Install times by whether the installer found its build in the driver
-- cache: '' for reports that do not say (manual ones, older agents).
ALTER TABLE timing_samples ADD COLUMN cache text NOT NULL DEFAULT ''
  CHECK (cache IN ('', 'hit', 'miss'));
DROP INDEX timing_samples_recent;
CREATE INDEX timing_samples_recent ON timing_samples (kind, pool, kernel, cache, measured_at DESC);
