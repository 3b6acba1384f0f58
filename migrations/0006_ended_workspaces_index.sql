-- Stopped workspaces (and lost ones whose holds were released) are deleted
-- once they are older than --stopped_workspace_retention. The sweep takes
-- them oldest first, in small batches: this index makes each batch read only
-- the rows it deletes. Live rows (stopped_at NULL) are not in it, so placing
-- pays nothing for it; a stop adds one entry.
CREATE INDEX workspaces_ended ON workspaces (stopped_at) WHERE stopped_at IS NOT NULL;
