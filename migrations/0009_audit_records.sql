-- Who changed what: one row per state-changing admin or project-owner call
-- (server/grpc/audit_trail.h), written after the call in a transaction of its
-- own, so a refused or failed call is recorded too. `object` is the main
-- thing the call named ("node/n-1", "class/gpu-1x", "project/p-42",
-- "catalog"); `fields` the request's key fields. Rows older than
-- --audit_retention are deleted in small batches, oldest first (the
-- index on at).
CREATE TABLE audit_records (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  principal text NOT NULL,
  credential text NOT NULL,
  method text NOT NULL,
  object text NOT NULL,
  fields jsonb NOT NULL DEFAULT '{}',
  code text NOT NULL,
  message text NOT NULL DEFAULT ''
);
CREATE INDEX audit_records_at ON audit_records (at);
CREATE INDEX audit_records_principal ON audit_records (principal, id);
CREATE INDEX audit_records_object ON audit_records (object, id);
