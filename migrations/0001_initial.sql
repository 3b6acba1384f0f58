-- wsched schema v1: catalog, settings, inventory, workspaces, GPU holds.
-- Objects the admin edits keep their whole spec as JSON (the API message in
-- proto3 JSON form) next to the columns we query or constrain on.

CREATE TABLE classes (
  id          text PRIMARY KEY,
  spec        jsonb       NOT NULL,
  is_default  boolean     NOT NULL DEFAULT false,
  deprecated  boolean     NOT NULL DEFAULT false,
  version     bigint      NOT NULL CHECK (version > 0),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
-- Exactly one default class: at most one here, at least one by validation.
CREATE UNIQUE INDEX classes_one_default ON classes (is_default) WHERE is_default;

CREATE TABLE pools (
  id          text PRIMARY KEY,
  spec        jsonb       NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE driver_policy (
  position    integer PRIMARY KEY,
  spec        jsonb   NOT NULL
);

-- Bumped on every catalog apply; lets replicas notice a new catalog cheaply.
CREATE TABLE catalog_generation (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  generation  bigint  NOT NULL
);
INSERT INTO catalog_generation VALUES (true, 0);

CREATE TABLE org_settings (
  org_id          text PRIMARY KEY,
  default_class   text   NOT NULL DEFAULT '',
  allowed_classes jsonb  NOT NULL DEFAULT '[]',
  gpu_quota       bigint NOT NULL DEFAULT -1 CHECK (gpu_quota >= -1),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE project_settings (
  project_id      text PRIMARY KEY,
  org_id          text  NOT NULL,
  default_class   text  NOT NULL DEFAULT '',
  denied_classes  jsonb NOT NULL DEFAULT '[]',
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE nodes (
  name               text PRIMARY KEY,
  pool               text        NOT NULL,
  info               jsonb       NOT NULL,
  state              text        NOT NULL,
  driver_state       text        NOT NULL,
  driver_detail      text        NOT NULL DEFAULT '',
  -- Kernel the driver is known good for, and kernel whose install failed
  -- (core/driver_readiness.h): a kernel change leaves them behind.
  driver_verified_kernel text    NOT NULL DEFAULT '',
  driver_failed_kernel   text    NOT NULL DEFAULT '',
  alloc_cpu_millis   bigint      NOT NULL CHECK (alloc_cpu_millis >= 0),
  alloc_memory_bytes bigint      NOT NULL CHECK (alloc_memory_bytes >= 0),
  held_cpu_millis    bigint      NOT NULL DEFAULT 0,
  held_memory_bytes  bigint      NOT NULL DEFAULT 0,
  registered_at      timestamptz NOT NULL DEFAULT now(),
  last_heartbeat     timestamptz NOT NULL DEFAULT now(),
  -- Guarded capacity: the database refuses an overcommitted node.
  CHECK (held_cpu_millis >= 0 AND held_cpu_millis <= alloc_cpu_millis),
  CHECK (held_memory_bytes >= 0 AND held_memory_bytes <= alloc_memory_bytes)
);
CREATE INDEX nodes_by_pool ON nodes (pool);

CREATE TABLE workspaces (
  id             text PRIMARY KEY,
  org_id         text        NOT NULL,
  project_id     text        NOT NULL,
  user_id        text        NOT NULL,
  class_id       text        NOT NULL,
  class_source   text        NOT NULL,
  explanation    text        NOT NULL,
  state          text        NOT NULL,
  priority       integer     NOT NULL DEFAULT 0,
  node_name      text,
  pool           text,
  cpu_millis     bigint      NOT NULL DEFAULT 0,
  memory_bytes   bigint      NOT NULL DEFAULT 0,
  gpu_count      integer     NOT NULL DEFAULT 0,
  placement      jsonb,
  pending_reason text        NOT NULL DEFAULT '',
  created_at     timestamptz NOT NULL DEFAULT now(),
  placed_at      timestamptz,
  stopped_at     timestamptz
);
CREATE INDEX workspaces_active ON workspaces (state) WHERE state IN ('pending', 'placed', 'lost');
CREATE INDEX workspaces_by_node ON workspaces (node_name) WHERE node_name IS NOT NULL;

-- One row per held GPU: the primary key makes a second holder impossible,
-- whatever a replica's snapshot believes.
CREATE TABLE gpu_holds (
  gpu_uuid      text PRIMARY KEY,
  node_name     text NOT NULL,
  gpu_index     integer NOT NULL,
  workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  held_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (node_name, gpu_index)
);
CREATE INDEX gpu_holds_by_workspace ON gpu_holds (workspace_id);

-- The leader's latest signal per pool, so every replica can serve it and a
-- new leader continues the generations.
CREATE TABLE scaling_signals (
  pool        text PRIMARY KEY,
  generation  bigint      NOT NULL,
  signal      jsonb       NOT NULL,
  leader      text        NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Actuator feedback, consumed by whichever replica leads.
CREATE TABLE actuator_reports (
  id          bigserial PRIMARY KEY,
  pool        text        NOT NULL,
  generation  bigint      NOT NULL,
  state       text        NOT NULL,
  instances   integer     NOT NULL,
  detail      text        NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now()
);
