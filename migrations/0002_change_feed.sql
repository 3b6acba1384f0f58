-- Replica synchronisation (docs/architecture.md, "Following the database"):
-- a gapless, commit-ordered change log that replicas apply as deltas,
-- versions that every transition is guarded by, and node liveness kept
-- apart from the node rows so a heartbeat that changes nothing rewrites none.

-- The log's head. Every publishing transaction increments it as its last
-- statement; the row lock, held until COMMIT, orders the entries by commit
-- and a rolled-back transaction gives its number back: a follower that sees
-- seq N+2 after N has missed N+1 for certain (pruned), never "not yet".
CREATE TABLE feed_head (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  seq        bigint  NOT NULL CHECK (seq >= 0)
);
INSERT INTO feed_head VALUES (true, 0);

-- One entry per publishing transaction: which entities it changed, and the
-- version each has after it. Old entries are pruned; a replica that falls
-- behind the oldest one reloads everything.
CREATE TABLE change_log (
  seq        bigint PRIMARY KEY,
  replica    text        NOT NULL,
  entities   text[]      NOT NULL,
  ids        text[]      NOT NULL,
  versions   bigint[]    NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now(),
  CHECK (cardinality(entities) = cardinality(ids) AND cardinality(ids) = cardinality(versions))
);
CREATE INDEX change_log_by_time ON change_log (written_at);

-- Versions of nodes and workspaces come from one sequence, so they never
-- repeat, not even for a node removed and registered again under its name.
CREATE SEQUENCE entity_versions;
ALTER TABLE workspaces ADD COLUMN version bigint NOT NULL DEFAULT nextval('entity_versions');
ALTER TABLE nodes ADD COLUMN version bigint NOT NULL DEFAULT nextval('entity_versions');

-- Liveness: written in batches (one UPDATE for every node heard from in the
-- last interval), read by lost-node detection on the database clock.
CREATE TABLE node_liveness (
  name            text PRIMARY KEY REFERENCES nodes (name) ON DELETE CASCADE,
  last_heartbeat  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO node_liveness (name, last_heartbeat) SELECT name, last_heartbeat FROM nodes;
ALTER TABLE nodes DROP COLUMN last_heartbeat;
