-- Pools carry a version, as classes do, so a catalog apply can be guarded
-- against a pool that changed since the caller read it
-- (ApplyCatalogRequest.expected_pool_versions). An apply that leaves a
-- pool's spec as it is keeps its version.
ALTER TABLE pools ADD COLUMN version bigint NOT NULL DEFAULT 1 CHECK (version > 0);
