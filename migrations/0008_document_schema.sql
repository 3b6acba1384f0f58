-- The schema version of each row's document (server/store/documents/
-- documents.h): the JSON that classes, pools, driver_policy, nodes,
-- workspaces and scaling_signals keep beside their columns is the store's
-- own schema, no longer the API's messages. Every row written so far is
-- version 1, which is what the default records; wsched writes the version
-- explicitly and refuses a row of a version newer than it reads. A constant
-- default adds the column without rewriting the table.
ALTER TABLE classes ADD COLUMN spec_schema smallint NOT NULL DEFAULT 1;
ALTER TABLE pools ADD COLUMN spec_schema smallint NOT NULL DEFAULT 1;
ALTER TABLE driver_policy ADD COLUMN spec_schema smallint NOT NULL DEFAULT 1;
ALTER TABLE nodes ADD COLUMN info_schema smallint NOT NULL DEFAULT 1;
ALTER TABLE workspaces ADD COLUMN placement_schema smallint NOT NULL DEFAULT 1;
ALTER TABLE scaling_signals ADD COLUMN signal_schema smallint NOT NULL DEFAULT 1;
