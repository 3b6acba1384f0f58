-- A new node's start in two phases, for the time-to-GPU estimate
-- (docs/placement.md "Estimates that are checked"): cloud_start, from the
-- scale-up signal to the actuator's first RUNNING report for its
-- generation, and node_boot, from that report to the node registering.
-- node_start (asked for -> ready) stays, for pools whose actuator does not
-- report RUNNING.
ALTER TABLE timing_samples DROP CONSTRAINT timing_samples_kind_check;
ALTER TABLE timing_samples ADD CONSTRAINT timing_samples_kind_check
  CHECK (kind IN ('node_start', 'driver_install', 'cloud_start', 'node_boot'));
