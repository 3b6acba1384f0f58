-- Node identity (docs/security.md, "Node identity"): the bearer token each
-- node presents, stored as its SHA-256 only. A pool's bootstrap credential
-- registers a node that does not exist yet together with the hash of the
-- token its agent made; RotateNodeCredential replaces it, and revoking or
-- removing the node deletes it. At most one per node, and no two nodes
-- share one.
CREATE TABLE node_credentials (
  node_name    text        PRIMARY KEY REFERENCES nodes (name) ON DELETE CASCADE,
  token_sha256 bytea       NOT NULL UNIQUE CHECK (octet_length(token_sha256) = 32),
  issued_at    timestamptz NOT NULL DEFAULT now(),
  -- The principal that issued it: the bootstrap entry, or the admin who rotated it.
  issued_by    text        NOT NULL,
  -- From entity_versions, like nodes and workspaces: followers apply changes in order.
  version      bigint      NOT NULL
);
