-- Measured durations that the time-to-GPU estimate learns from: how long a
-- pool's nodes took from being asked for to ready (node_start), and how long
-- a driver install took on a kernel (driver_install: from the node needing
-- the driver to the successful report). Every replica reads the recent ones,
-- so the estimate is the same whichever replica answers.
CREATE TABLE timing_samples (
  id          bigserial PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('node_start', 'driver_install')),
  pool        text NOT NULL,
  kernel      text NOT NULL DEFAULT '',
  seconds     double precision NOT NULL CHECK (seconds >= 0),
  measured_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX timing_samples_recent ON timing_samples (kind, pool, kernel, measured_at DESC);
