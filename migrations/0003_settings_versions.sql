-- Settings carry a version, so a replica that decided with cached settings
-- can have the group commit confirm they are still current.
ALTER TABLE project_settings ADD COLUMN version bigint NOT NULL DEFAULT nextval('entity_versions');
ALTER TABLE org_settings ADD COLUMN version bigint NOT NULL DEFAULT nextval('entity_versions');
